import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { DeliveryWorker, Webhooks } from "@convene/core"
import { type Duration, Effect, Fiber, Layer, Ref, Schedule } from "effect"
import { Api } from "@convene/api/Api"
import { asCaller } from "./Security.js"

export const WebhooksLive = HttpApiBuilder.group(Api, "webhooks", (handlers) =>
  Effect.gen(function*() {
    const webhooks = yield* Webhooks
    return handlers
      .handle("list", asCaller((principal, { urlParams }) => webhooks.list(principal, urlParams)))
      .handle("create", asCaller((principal, { payload }) => webhooks.create(principal, payload)))
      .handle("delete", asCaller((principal, { path }) => webhooks.delete(principal, path.id)))
      .handle("reEnable", asCaller((principal, { path }) => webhooks.reEnable(principal, path.id)))
      .handle("rotateSecret", asCaller((principal, { path }) => webhooks.rotateSecret(principal, path.id)))
      .handle("resendVerification", asCaller((principal, { path }) => webhooks.resendVerification(principal, path.id)))
      .handle("deliveries", asCaller((principal, { path, urlParams }) => webhooks.deliveries(principal, path.id, urlParams)))
      .handle("redeliver", asCaller((principal, { path }) => webhooks.redeliver(principal, path.id, path.deliveryId)))
  }))

export interface WorkerSettings {
  /** How long the worker waits when it found nothing due (a full batch is followed at once by the next). */
  readonly interval: Duration.Duration
  /** On shutdown, how long the deliveries in flight may take to finish. */
  readonly stopTimeout: Duration.Duration
}

/** Deliveries (or challenges) one round claims at most, and how many of them it sends at once. */
const batch = 50
const concurrency = 8

/**
 * Delivery rounds running side by side: a round waits for its slowest delivery (a receiver that takes its full
 * time limit), so more than one keeps the others' deliveries moving meanwhile. They share the work as processes do.
 */
const lanes = 4

/**
 * How often the outbox's gauges are sampled (one read of the pending deliveries): well within a scraper's usual
 * interval, without a query per round.
 */
const outboxSampling = "5 seconds"

/**
 * The outbox's worker, in the server process: every `interval` it sends the deliveries that are due and the
 * challenges that are due, claiming them from the store (several processes, and the lanes of one, share the work;
 * none is sent twice while its lease holds). A round that failed is logged and the next one tries again. On
 * shutdown no new round starts and the ones in flight finish within `stopTimeout`; what is left of them is
 * interrupted, and their claims lapse with their lease (the next process to run sends them). Meanwhile the
 * outbox's gauges (DeliveryWorker.observe) are sampled every few seconds, the first time at once.
 */
export const worker = (settings: WorkerSettings) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const deliveries = yield* DeliveryWorker
    const stopping = yield* Ref.make(false)
    const loop = (round: Effect.Effect<number>): Effect.Effect<void> =>
      Effect.gen(function*() {
        while (!(yield* Ref.get(stopping))) {
          const claimed = yield* round.pipe(
            Effect.catchAllCause((cause) =>
              Effect.as(Effect.logWarning("a webhook delivery round failed; the next one tries again", cause), 0))
          )
          // A full round is followed at once by the next; otherwise nothing more was due.
          if (claimed < batch) yield* Effect.sleep(settings.interval)
        }
      })
    const fibers = yield* Effect.forEach(
      [
        ...Array.from({ length: lanes }, () => deliveries.runOnce({ limit: batch, concurrency })),
        deliveries.runChallenges({ limit: batch, concurrency })
      ],
      (round) => Effect.forkDaemon(loop(round))
    )
    yield* deliveries.observe().pipe(
      // A store that fails is already reported by the rounds; the next sample tries again.
      Effect.catchAllCause((cause) => Effect.logDebug("sampling the webhook outbox failed", cause)),
      Effect.repeat(Schedule.spaced(outboxSampling)),
      Effect.forkScoped
    )
    // Finalizers run uninterruptibly: the wait runs in a fiber of its own, made interruptible, so its timeout works.
    const stop = Effect.gen(function*() {
      yield* Ref.set(stopping, true)
      yield* Fiber.joinAll(fibers).pipe(Effect.timeout(settings.stopTimeout), Effect.ignore)
      yield* Fiber.interruptAll(fibers)
    })
    yield* Effect.addFinalizer(() => Effect.flatMap(Effect.forkDaemon(Effect.interruptible(stop)), Fiber.join))
  }))
