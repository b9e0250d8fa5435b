/**
 * The outbox's metrics (DeliveryWorker.ts, `deliveryMetrics`), on the test clock: each delivery's turn counted by
 * outcome once it is written, endpoints the worker disables, and the gauges `observe` samples from the store.
 * Metrics are the process's: each test reads differences.
 */
import { CreateMeeting, deliveryMetrics, DeliveryWorker, Meetings, Scopes, Webhooks } from "@convene/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Metric, TestClock } from "effect"
import { principalFor } from "../fixtures.js"
import { always, answerWith, verifiedEndpoint, WebhooksLive, type WebhooksServices } from "./fixtures.js"

const test = <E>(name: string, body: () => Effect.Effect<void, E, WebhooksServices>) =>
  it.effect(name, () => Effect.provide(body(), WebhooksLive))

const owner = principalFor({ plan: "PRO", role: "OWNER", scopes: Scopes, kind: "personal_access_token" })
const runOnce = Effect.flatMap(DeliveryWorker, (worker) => worker.runOnce({ limit: 1000 }))
const observe = Effect.flatMap(DeliveryWorker, (worker) => worker.observe())
const meeting = (principal: Effect.Effect.Success<typeof owner>["principal"]) =>
  Effect.flatMap(Meetings, (meetings) => meetings.create(principal, CreateMeeting.make({ title: "Counted" })))

/** The counts of every outcome and of disabled endpoints, now. */
const counts = Effect.all({
  delivered: Metric.value(deliveryMetrics.attempts.delivered),
  retry_scheduled: Metric.value(deliveryMetrics.attempts.retry_scheduled),
  exhausted: Metric.value(deliveryMetrics.attempts.exhausted),
  not_sent: Metric.value(deliveryMetrics.attempts.not_sent),
  disabled: Metric.value(deliveryMetrics.endpointsDisabled)
}).pipe(Effect.map((states) => Object.fromEntries(Object.entries(states).map(([key, state]) => [key, state.count]))))

const since = (before: Record<string, number>) =>
  Effect.map(counts, (after) => Object.fromEntries(Object.entries(after).map(([key, count]) => [key, count - before[key]!])))

describe("webhook delivery metrics", () => {
  test("count each turn by outcome: delivered, retry_scheduled, exhausted, and the endpoint disabled by the third", () =>
    Effect.gen(function*() {
      const { principal } = yield* owner
      yield* verifiedEndpoint(principal, ["meeting.created"])
      const before = yield* counts
      yield* answerWith(always(200))
      yield* meeting(principal)
      yield* runOnce
      expect(yield* since(before)).toEqual({ delivered: 1, retry_scheduled: 0, exhausted: 0, not_sent: 0, disabled: 0 })

      yield* answerWith(always(500))
      for (let i = 0; i < 3; i++) {
        yield* meeting(principal)
        yield* runOnce
        yield* TestClock.adjust("1 minute")
        yield* runOnce
        yield* TestClock.adjust("4 minutes")
        yield* runOnce
      }
      // Three deliveries, each failed twice with a retry to come and a third time for good; the third disabled it.
      expect(yield* since(before)).toEqual({ delivered: 1, retry_scheduled: 6, exhausted: 3, not_sent: 0, disabled: 1 })
    }))

  test("count a delivery whose endpoint was deleted before its turn as not_sent", () =>
    Effect.gen(function*() {
      const { principal } = yield* owner
      const { webhook } = yield* verifiedEndpoint(principal, ["meeting.created"])
      const before = yield* counts
      yield* meeting(principal)
      yield* (yield* Webhooks).delete(principal, webhook.id)
      yield* runOnce
      expect(yield* since(before)).toEqual({ delivered: 0, retry_scheduled: 0, exhausted: 0, not_sent: 1, disabled: 0 })
    }))

  test("observe samples the pending deliveries and how long the one due longest has waited", () =>
    Effect.gen(function*() {
      const { principal } = yield* owner
      yield* verifiedEndpoint(principal, ["meeting.created"])
      const sampled = Effect.zipRight(
        observe,
        Effect.all([Metric.value(deliveryMetrics.outboxPending), Metric.value(deliveryMetrics.outboxLagSeconds)])
      ).pipe(Effect.map(([pending, lag]) => ({ pending: pending.value, lag: lag.value })))
      expect(yield* sampled).toEqual({ pending: 0, lag: 0 })
      yield* meeting(principal)
      yield* TestClock.adjust("90 seconds")
      yield* meeting(principal)
      // Two due, the first for 90 s: no worker ran.
      expect(yield* sampled).toEqual({ pending: 2, lag: 90 })
      // Both fail once: pending again, due in a minute, so nothing is late.
      yield* answerWith(always(500))
      yield* runOnce
      expect(yield* sampled).toEqual({ pending: 2, lag: 0 })
      yield* TestClock.adjust("70 seconds")
      expect(yield* sampled).toEqual({ pending: 2, lag: 10 })
      yield* answerWith(always(200))
      yield* runOnce
      expect(yield* sampled).toEqual({ pending: 0, lag: 0 })
    }))
})
