/**
 * The outbox's worker: sends due deliveries and due verification challenges. It does no I/O of its own (the
 * Outbound and Mailer ports do) and keeps no state between runs: the host calls `runOnce` and `runChallenges` in a
 * loop, in as many server processes as it likes; the store's claims (leases) give each delivery and each challenge
 * to one process at a time, and a lease left by a process that died expires and the work is taken up again.
 *
 * A delivery is tried at most 3 times: after the n-th failed attempt the next is due n² minutes later (1, then 4);
 * after the third it is `failed`. A 2xx answer delivers it. What follows for the addressee is its kind's rule: for a
 * workspace endpoint, a delivery resets its failure count, and the third exhausted delivery in a row disables it
 * and e-mails its creator (a mail that cannot be sent is logged, never fails the run). The kinds other rooms own
 * (partner apps and their automations' actions) bring their rules (DeliveryAddressees): where to send, how to sign.
 *
 * Writes per round, kept few because they are what limits deliveries per second: each addressee is read once (where
 * to send, the secret that signs); a success is one write (the delivery with its attempt), and each addressee's
 * latest success (`last_success_at`) one write at the round's end. A success that must reset a count of failures,
 * and every exhausted delivery, is written with its addressee's change in one unit of work. So a process that dies
 * within a round loses at most a `last_success_at` that was only about to move; and of two outcomes in one round,
 * a success and an exhausted delivery of the same endpoint, the later one decides whether the count starts again.
 *
 * Decisions where the documents are silent: a delivery whose endpoint was deleted or is no longer verified
 * (disabled) when its turn comes is not sent: it is `failed` with one attempt that names why and carries no status;
 * it does not count as a failure of the endpoint. A redirect (3xx) is an answer that is not 2xx: a failure.
 *
 * Metrics (`deliveryMetrics`, Effect metrics the host exports): each turn of a delivery counted by outcome once it is
 * written, the endpoints disabled, and the outbox's pending deliveries and lag, sampled from the store by `observe`.
 */
import { Clock, Context, DateTime, Duration, Effect, Either, Layer, Metric, Option } from "effect"
import { UserStore } from "../identity/IdentityStore.js"
import { SecretBox } from "../oauth/Signing.js"
import { Crypto } from "../ports/Crypto.js"
import { Mailer } from "../ports/Mailer.js"
import { Outbound } from "../ports/Outbound.js"
import { Transactor } from "../ports/Transactor.js"
import { now, plus } from "../shared/Time.js"
import { trusted } from "../shared/Trusted.js"
import { challengeLease, sendChallenge } from "./Challenge.js"
import { changeEndpoint } from "./Endpoints.js"
import * as States from "./EndpointStates.js"
import { openSigningSecret } from "./Secrets.js"
import { workspaceHeaders } from "./Signer.js"
import { type AddresseeKind, Delivery, DeliveryAttempt, type WebhookEndpoint, WebhookEndpointId } from "./Webhook.js"
import { WebhookStore } from "./WebhookStore.js"
import { fn } from "../shared/Span.js"

/** Attempts a delivery gets in all (the first and two retries). */
export const maxAttempts = 3

/** The wait after the n-th failed attempt: n² minutes. */
export const backoff = (attempts: number): Duration.Duration => Duration.minutes(attempts * attempts)

/** How long a claimed delivery is the claimer's: well beyond the outbound adapter's time limit per call. */
export const deliveryLease = Duration.minutes(5)

/** How long finished deliveries stay in the delivery log (as the events they carry stay in the event log). */
export const deliveryRetention = Duration.days(7)

export interface RunOptions {
  /** How many deliveries (or challenges) one run claims at most (default 50). */
  readonly limit?: number | undefined
  /** How many of them are sent at once (default 8). */
  readonly concurrency?: number | undefined
}

/**
 * What became of a delivery's turn: `delivered` (answered 2xx), `retry_scheduled` (failed, tried again later),
 * `exhausted` (failed its last attempt), `not_sent` (its endpoint was deleted or is no longer verified).
 */
export type AttemptOutcome = "delivered" | "retry_scheduled" | "exhausted" | "not_sent"

// Effect metrics are pure values; the host exports the process's metrics (Prometheus, in the HTTP server). Each is
// counted once its outcome is written, so a round that breaks before its write counts nothing.
const attempts = Metric.counter("convene_webhook_delivery_attempts", {
  description: "Webhook deliveries' turns by outcome: delivered, retry_scheduled, exhausted, not_sent",
  incremental: true
})
const attemptsBy: Record<AttemptOutcome, Metric.Metric.Counter<number>> = {
  delivered: Metric.tagged(attempts, "outcome", "delivered"),
  retry_scheduled: Metric.tagged(attempts, "outcome", "retry_scheduled"),
  exhausted: Metric.tagged(attempts, "outcome", "exhausted"),
  not_sent: Metric.tagged(attempts, "outcome", "not_sent")
}
const disabled = Metric.counter("convene_webhook_endpoints_disabled", {
  description: "Webhook endpoints disabled after deliveries in a row exhausted their attempts",
  incremental: true
})
const pendingGauge = Metric.gauge("convene_webhook_outbox_pending", {
  description: "Webhook deliveries pending: due, in flight, or waiting for a retry"
})
const lagGauge = Metric.gauge("convene_webhook_outbox_lag_seconds", {
  description: "How long the delivery that has been due longest has waited, in seconds (0 when none is due)"
})

/** The outbox's metrics, for a host or a test that reads them (`Metric.value`) rather than export them. */
export const deliveryMetrics = {
  attempts: attemptsBy,
  endpointsDisabled: disabled,
  outboxPending: pendingGauge,
  outboxLagSeconds: lagGauge
} as const

const counted = (outcome: AttemptOutcome) => Metric.increment(attemptsBy[outcome])

/** What a round knows of one addressee: where its deliveries go and how they are headed. */
export interface Target {
  readonly url: string
  readonly headers: (delivery: Delivery, attempt: number) => Effect.Effect<Record<string, string>>
  /**
   * Whether a success must be written together with its attempt (it resets a count of failures); when not, the
   * round writes the addressee's latest success once, at its end.
   */
  readonly successResets: boolean
}

/** What the worker needs to know of each kind of addressee. */
export interface AddresseeRules {
  /** Where to send the addressee's deliveries, or why they are no longer sent (read once per round). */
  readonly target: (delivery: Delivery) => Effect.Effect<Either.Either<Target, string>>
  /** The delivery was answered 2xx at `at` (runs in the unit of work that records it). */
  readonly delivered: (delivery: Delivery, at: DateTime.Utc) => Effect.Effect<void>
  /**
   * At the end of a round: the addressee of `delivery` had successes, the latest at `latest`; `failedSince` when a
   * delivery to it exhausted its attempts after that.
   */
  readonly succeeded: (delivery: Delivery, latest: DateTime.Utc, failedSince: boolean) => Effect.Effect<void>
  /**
   * The delivery failed its last attempt at `at` (runs in the unit of work that records it); answers what to do once
   * that unit committed (a mail to send).
   */
  readonly exhausted: (delivery: Delivery, at: DateTime.Utc) => Effect.Effect<Effect.Effect<void>>
  /**
   * The delivery was given up without a call at `at` (its target said why not); runs in the unit of work that
   * records it. None: nothing follows for the addressee.
   */
  readonly notSent?: (delivery: Delivery, at: DateTime.Utc, why: string) => Effect.Effect<void>
}

/** The kinds of addressee other rooms own: their rules are theirs (partner/PartnerDeliveries.ts). */
export type ForeignAddresseeKind = Exclude<AddresseeKind, "workspace_endpoint">

/**
 * The rules of the kinds of addressee that other rooms own (partner apps and their automations' actions), which the
 * worker applies as it applies a workspace endpoint's: one queue, one worker, whatever the addressee.
 */
export class DeliveryAddressees extends Context.Tag("@convene/core/DeliveryAddressees")<
  DeliveryAddressees,
  Readonly<Record<ForeignAddresseeKind, AddresseeRules>>
>() {}

/** The addressee of a delivery, as a key. */
const addresseeKey = (delivery: Delivery) => `${delivery.addressee_kind}:${delivery.addressee_id}`

/** What one round saw of an addressee's outcomes, for the writes it leaves to its end. */
interface Outcomes {
  readonly sample: Delivery
  latestSuccess: DateTime.Utc | null
  latestExhausted: DateTime.Utc | null
}

const make = Effect.gen(function*() {
  const store = yield* WebhookStore
  const users = yield* UserStore
  const outbound = yield* Outbound
  const mailer = yield* Mailer
  const transactor = yield* Transactor
  const foreign = yield* DeliveryAddressees
  const ports = Context.make(Crypto, yield* Crypto).pipe(
    Context.add(SecretBox, yield* SecretBox),
    Context.add(Outbound, outbound),
    Context.add(WebhookStore, store)
  )

  /** Tells the creator of a just-disabled endpoint; a creator gone, or a mail that fails, is only logged. */
  const notifyCreator = (endpoint: WebhookEndpoint) =>
    Effect.gen(function*() {
      if (endpoint.created_by === null) {
        return yield* Effect.logInfo(`webhook endpoint ${endpoint.id} was disabled; it has no creator to tell`)
      }
      const creator = yield* users.get(endpoint.created_by)
      if (Option.isNone(creator)) return
      yield* mailer.send({
        to: creator.value.email,
        subject: `Webhook endpoint disabled: ${endpoint.url}`,
        text: [
          `Your webhook endpoint ${endpoint.url} (id ${endpoint.id}) in workspace ${endpoint.workspace_id} was disabled:`,
          `${States.disableAfter} deliveries in a row failed all of their ${maxAttempts} attempts.`,
          "",
          "No events are delivered to it until it is re-enabled. Once the receiver answers 2xx again, re-enable it with",
          `POST /v1/workspace/webhooks/${endpoint.id}/re-enable.`
        ].join("\n")
      }).pipe(
        Effect.catchTag("MailFailed", (failure) =>
          Effect.logWarning(`could not tell ${creator.value.email} that webhook endpoint ${endpoint.id} was disabled: ${failure.message}`))
      )
    })

  const endpointOf = (delivery: Delivery) =>
    delivery.workspace_id === null
      ? Effect.succeed(Option.none<WebhookEndpoint>())
      : store.getEndpoint(delivery.workspace_id, WebhookEndpointId.make(delivery.addressee_id))

  const changeEndpointOf = (
    delivery: Delivery,
    apply: (endpoint: WebhookEndpoint) => Option.Option<WebhookEndpoint>
  ) =>
    delivery.workspace_id === null
      ? Effect.succeed(Option.none())
      : Effect.provide(
        changeEndpoint(delivery.workspace_id, WebhookEndpointId.make(delivery.addressee_id), (endpoint) =>
          Effect.succeed(apply(endpoint))),
        ports
      )

  const addressees: Record<AddresseeKind, AddresseeRules> = {
    workspace_endpoint: {
      target: (delivery) =>
        Effect.gen(function*() {
          const found = yield* endpointOf(delivery)
          if (Option.isNone(found) || found.value.deleted_at !== null) return Either.left("not sent: the endpoint was deleted")
          const endpoint = found.value
          if (endpoint.verification_state !== "verified") {
            return Either.left(`not sent: the endpoint is ${endpoint.verification_state}`)
          }
          // Opened when the round starts: a secret rotated since the delivery was enqueued signs it.
          const secret = yield* Effect.provide(openSigningSecret(endpoint), ports)
          return Either.right({
            url: endpoint.url,
            successResets: endpoint.consecutive_failure_count > 0,
            headers: (delivery: Delivery, attempt: number) =>
              Effect.provide(
                workspaceHeaders({
                  secret,
                  body: delivery.body,
                  eventType: delivery.event_type,
                  eventId: delivery.event_id,
                  occurredAt: delivery.occurred_at,
                  idempotencyKey: delivery.idempotency_key,
                  deliveryId: delivery.id,
                  attempt
                }),
                ports
              )
          })
        }),
      delivered: (delivery, at) => Effect.asVoid(changeEndpointOf(delivery, (endpoint) => States.delivered(endpoint, at))),
      succeeded: (delivery, latest, failedSince) =>
        Effect.asVoid(changeEndpointOf(delivery, (endpoint) =>
          failedSince ? States.succeededEarlier(endpoint, latest) : States.delivered(endpoint, latest))),
      exhausted: (delivery, at) =>
        Effect.map(
          changeEndpointOf(delivery, (endpoint) => States.deliveryExhausted(endpoint, at)),
          Option.match({
            onNone: () => Effect.void,
            onSome: ([before, after]) =>
              States.justDisabled(before, after) ? Effect.zipRight(Metric.increment(disabled), notifyCreator(after)) : Effect.void
          })
        )
    },
    ...foreign
  }

  /**
   * One attempt of a claimed delivery (or giving it up when its addressee takes no more), recorded with its outcome.
   * A success that changes no more than the addressee's `last_success_at` is recorded on its own (one write), and
   * noted in `outcomes` for the round's end; every other outcome is recorded together with its addressee's change.
   */
  const attempt = (delivery: Delivery, target: Either.Either<Target, string>, outcomes: Outcomes) =>
    Effect.gen(function*() {
      const rules = addressees[delivery.addressee_kind]
      const at = yield* now
      const number = delivery.attempt_count + 1
      if (Either.isLeft(target)) {
        const givenUp = new Delivery({
          ...delivery,
          state: "failed",
          attempt_count: number,
          next_attempt_at: null,
          claimed_until: null,
          updated_at: at
        }, trusted)
        const why = new DeliveryAttempt({
          delivery_id: delivery.id,
          number,
          at,
          status_code: null,
          latency_ms: 0,
          error: target.left
        }, trusted)
        const notSent = rules.notSent
        yield* notSent === undefined
          ? store.recordAttempt(givenUp, Option.some(why))
          : transactor.withTransaction(Effect.zipRight(store.recordAttempt(givenUp, Option.some(why)), notSent(delivery, at, target.left)))
        return yield* counted("not_sent")
      }
      const headers = yield* target.right.headers(delivery, number)
      const started = yield* Clock.currentTimeMillis
      const answer = yield* Effect.either(outbound.post({ url: target.right.url, headers, body: delivery.body }))
      const done = yield* now
      const ok = Either.isRight(answer) && answer.right.status >= 200 && answer.right.status <= 299
      const record = new DeliveryAttempt({
        delivery_id: delivery.id,
        number,
        at,
        status_code: Either.isRight(answer) ? answer.right.status : null,
        latency_ms: Either.isRight(answer)
          ? Math.max(0, Math.round(answer.right.latencyMs))
          : Math.max(0, DateTime.toEpochMillis(done) - started),
        error: Either.isLeft(answer) ? `${answer.left.reason}: ${answer.left.message}` : null
      }, trusted)
      const state = ok ? "delivered" : number >= maxAttempts ? "failed" : "pending"
      const next = new Delivery({
        ...delivery,
        state,
        attempt_count: number,
        next_attempt_at: state === "pending" ? plus(at, backoff(number)) : null,
        claimed_until: null,
        updated_at: done
      }, trusted)
      if (state === "delivered" && !target.right.successResets) {
        yield* store.recordAttempt(next, Option.some(record))
        outcomes.latestSuccess = outcomes.latestSuccess === null ? done : DateTime.max(outcomes.latestSuccess, done)
        return yield* counted("delivered")
      }
      const afterwards = yield* transactor.withTransaction(Effect.gen(function*() {
        yield* store.recordAttempt(next, Option.some(record))
        if (state === "delivered") yield* rules.delivered(delivery, done)
        return state === "failed" ? yield* rules.exhausted(delivery, done) : Effect.void
      }))
      if (state === "failed") outcomes.latestExhausted = done
      yield* counted(state === "delivered" ? "delivered" : state === "failed" ? "exhausted" : "retry_scheduled")
      yield* afterwards
    }).pipe(
      // One delivery that breaks (a defect: the store, a secret that does not open) does not stop the others; its
      // lease expires and a later run takes it up again.
      Effect.catchAllDefect((defect) => Effect.logError(`webhook delivery ${delivery.id} broke`, defect))
    )

  /** Where each addressee of the claimed deliveries is, read once; an addressee that breaks is left out (logged). */
  const targetsOf = (claimed: ReadonlyArray<Delivery>, concurrency: number) => {
    const firsts = new Map<string, Delivery>()
    for (const delivery of claimed) if (!firsts.has(addresseeKey(delivery))) firsts.set(addresseeKey(delivery), delivery)
    return Effect.map(
      Effect.forEach(firsts, ([key, delivery]) =>
        addressees[delivery.addressee_kind].target(delivery).pipe(
          Effect.map((target) => [[key, target] as const]),
          Effect.catchAllDefect((defect) =>
            Effect.as(Effect.logError(`webhook addressee ${key} broke; its deliveries wait for their lease`, defect), []))
        ), { concurrency }),
      (pairs) => new Map(pairs.flat())
    )
  }

  /** The round's end: each addressee's latest success (left out of the attempts' writes) written once. */
  const settle = (outcomes: ReadonlyMap<string, Outcomes>) =>
    Effect.forEach(outcomes.values(), ({ latestExhausted, latestSuccess, sample }) => {
      if (latestSuccess === null) return Effect.void
      const failedSince = latestExhausted !== null && DateTime.greaterThan(latestExhausted, latestSuccess)
      return addressees[sample.addressee_kind].succeeded(sample, latestSuccess, failedSince).pipe(
        Effect.catchAllDefect((defect) =>
          Effect.logError(`the latest success of webhook addressee ${addresseeKey(sample)} could not be written`, defect))
      )
    }, { discard: true })

  /**
   * Claims the due deliveries (at most `limit`) and attempts each, `concurrency` at once; answers how many it claimed.
   * Each addressee is read once per round, and its latest success written once at the round's end.
   */
  const runOnce = fn("DeliveryWorker.runOnce")(function*(options: RunOptions = {}) {
    const at = yield* now
    const concurrency = options.concurrency ?? 8
    const claimed = yield* store.claimDue({ now: at, leaseUntil: plus(at, deliveryLease), limit: options.limit ?? 50 })
    if (claimed.length === 0) return 0
    const targets = yield* targetsOf(claimed, concurrency)
    const outcomes = new Map<string, Outcomes>()
    yield* Effect.forEach(claimed, (delivery) => {
      const key = addresseeKey(delivery)
      const target = targets.get(key)
      if (target === undefined) return Effect.void
      let seen = outcomes.get(key)
      if (seen === undefined) {
        seen = { sample: delivery, latestSuccess: null, latestExhausted: null }
        outcomes.set(key, seen)
      }
      return attempt(delivery, target, seen)
    }, { concurrency, discard: true })
    yield* settle(outcomes)
    return claimed.length
  })

  /** One claimed challenge: failed when its window closed, else sent and its answer written down. */
  const challenge = (endpoint: WebhookEndpoint, at: DateTime.Utc) =>
    Effect.gen(function*() {
      const write = (apply: (current: WebhookEndpoint) => Option.Option<WebhookEndpoint>) =>
        changeEndpoint(endpoint.workspace_id, endpoint.id, (current) => Effect.succeed(apply(current)))
      if (States.windowClosed(endpoint, at)) return yield* write((current) => States.verificationFailed(current, at))
      if (!States.challengeDue(endpoint, at)) return yield* write((current) => States.challengeReleased(current, at))
      const sent = yield* sendChallenge(endpoint)
      return yield* write((current) => States.challengeAnswered(current, sent.at, sent.echoed))
    }).pipe(
      Effect.provide(ports),
      Effect.asVoid,
      Effect.catchAllDefect((defect) => Effect.logError(`webhook challenge to endpoint ${endpoint.id} broke`, defect))
    )

  /**
   * Claims the endpoints due for a challenge (at most `limit`): sends each its challenge, or moves it to `failed` when
   * its 24 hours are over; answers how many it claimed.
   */
  const runChallenges = fn("DeliveryWorker.runChallenges")(function*(options: RunOptions = {}) {
    const at = yield* now
    const claimed = yield* store.claimChallenges({
      now: at,
      sentBefore: States.challengesSentBefore(at),
      leaseUntil: plus(at, challengeLease),
      limit: options.limit ?? 50
    })
    yield* Effect.forEach(claimed, (endpoint) => challenge(endpoint, at), { concurrency: options.concurrency ?? 8, discard: true })
    return claimed.length
  })

  /** Deletes the finished deliveries older than the retention. */
  const purge = fn("DeliveryWorker.purge")(function*() {
    yield* store.purgeDeliveries(DateTime.subtractDuration(yield* now, deliveryRetention))
  })

  /**
   * Samples the outbox into the gauges `convene_webhook_outbox_pending` and `convene_webhook_outbox_lag_seconds`
   * (one read of the store); the host repeats it while its worker runs.
   */
  const observe = fn("DeliveryWorker.observe")(function*() {
    const at = yield* now
    const outbox = yield* store.outbox(at)
    const lag = Option.match(outbox.oldestDue, {
      onNone: () => 0,
      onSome: (due) => Math.max(0, DateTime.distance(due, at) / 1000)
    })
    yield* Metric.set(pendingGauge, outbox.pending)
    yield* Metric.set(lagGauge, lag)
  })

  return { runOnce, runChallenges, purge, observe } as const
})

export class DeliveryWorker extends Context.Tag("@convene/core/DeliveryWorker")<
  DeliveryWorker,
  Effect.Effect.Success<typeof make>
>() {
  static readonly layer: Layer.Layer<
    DeliveryWorker,
    never,
    WebhookStore | UserStore | Transactor | Outbound | Mailer | Crypto | SecretBox | DeliveryAddressees
  > = Layer.effect(DeliveryWorker, make)
}
