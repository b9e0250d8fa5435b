/**
 * A model of one workspace webhook endpoint's life (the document's States table, with decisions.md's answers),
 * checked against the real services on the memory store with fast-check's model-based testing: any sequence of
 * worker challenge runs (answered with or without an echo), clock moves, resend-verification, deliveries that
 * succeed or exhaust their attempts, re-enable, secret rotation and delete.
 *
 * After every command the endpoint as the API shows it must be exactly what the model says: status,
 * verification_state, the challenge counter, the last challenge, the window, the failure count, and the mails its
 * creator got; once deleted it is gone (404) for good.
 */
import {
  CreateMeeting,
  DeliveryWorker,
  Meetings,
  Scopes,
  type Principal,
  type WebhookEndpointId,
  Webhooks
} from "@convene/core"
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Duration, Effect, Exit, FastCheck, Layer, ManagedRuntime, TestClock, TestContext } from "effect"
import { principalFor } from "../fixtures.js"
import { always, answerWith, createEndpoint, echoing, mails, WebhooksLive } from "./fixtures.js"

/** What the endpoint should be; times in minutes since the run started. */
interface Model {
  now: number
  deleted: boolean
  state: "verifying" | "failed" | "verified" | "disabled"
  attempts: number
  lastSent: number | null
  retryUntil: number
  failures: number
  mails: number
}

interface Real {
  readonly run: <A, E>(effect: Effect.Effect<A, E, ManagedRuntime.ManagedRuntime.Context<ReturnType<typeof makeRuntime>>>) => Promise<A>
  readonly principal: Principal
  readonly id: WebhookEndpointId
  readonly start: number
}

const makeRuntime = () => ManagedRuntime.make(WebhooksLive.pipe(Layer.provideMerge(TestContext.TestContext)))

const day = 24 * 60

const statusOf = (model: Model) => (model.state === "verified" || model.state === "disabled" ? "verified" : "pending")

/** The invariant: the endpoint is what the model says. */
const check = async (model: Model, real: Real, after: string) => {
  const shown = await real.run(Effect.exit(Effect.flatMap(Webhooks, (webhooks) => webhooks.get(real.principal, real.id))))
  if (model.deleted) {
    expect(Exit.isFailure(shown), after).toBe(true)
    const listed = await real.run(Effect.flatMap(Webhooks, (webhooks) => webhooks.list(real.principal, {})))
    expect(listed.total, after).toBe(0)
  } else {
    expect(Exit.isSuccess(shown), after).toBe(true)
    if (Exit.isSuccess(shown)) {
      const minutesOf = (at: DateTime.Utc) => (DateTime.toEpochMillis(at) - real.start) / 60_000
      expect({
        status: shown.value.status,
        state: shown.value.verification_state,
        attempts: shown.value.verification_attempt_count,
        lastSent: shown.value.verification_last_sent_at === null ? null : minutesOf(shown.value.verification_last_sent_at),
        retryUntil: minutesOf(shown.value.verification_retry_until),
        failures: shown.value.consecutive_failure_count
      }, after).toEqual({
        status: statusOf(model),
        state: model.state,
        attempts: model.attempts,
        lastSent: model.lastSent,
        retryUntil: model.retryUntil,
        failures: model.failures
      })
    }
  }
  expect((await real.run(mails)).length, after).toBe(model.mails)
}

type Command = FastCheck.AsyncCommand<Model, Real>

/** The worker's challenge run, the receiver echoing the token or not. */
class Challenge implements Command {
  constructor(readonly echo: boolean) {}
  check = () => true
  async run(model: Model, real: Real) {
    await real.run(Effect.zipRight(
      answerWith(this.echo ? echoing() : always(200)),
      Effect.flatMap(DeliveryWorker, (worker) => worker.runChallenges())
    ))
    if (!model.deleted && model.state === "verifying") {
      if (model.now >= model.retryUntil) {
        model.state = "failed"
      } else if (model.lastSent === null || model.now - model.lastSent >= 5) {
        model.attempts += 1
        model.lastSent = model.now
        if (this.echo) model.state = "verified"
      }
    }
    await check(model, real, this.toString())
  }
  toString = () => `Challenge(echo: ${this.echo})`
}

class Advance implements Command {
  constructor(readonly minutes: number) {}
  check = () => true
  async run(model: Model, real: Real) {
    await real.run(TestClock.adjust(Duration.minutes(this.minutes)))
    model.now += this.minutes
    await check(model, real, this.toString())
  }
  toString = () => `Advance(${this.minutes} min)`
}

class Resend implements Command {
  constructor(readonly echo: boolean) {}
  check = () => true
  async run(model: Model, real: Real) {
    const exit = await real.run(Effect.exit(Effect.zipRight(
      answerWith(this.echo ? echoing({ form: "json" }) : always(200)),
      Effect.flatMap(Webhooks, (webhooks) => webhooks.resendVerification(real.principal, real.id))
    )))
    if (model.deleted) {
      expect(exit, this.toString()).toMatchObject({ _tag: "Failure", cause: { error: { _tag: "NotFound" } } })
    } else if (model.state === "verified" || model.state === "disabled") {
      expect(exit, this.toString()).toMatchObject({ _tag: "Failure", cause: { error: { _tag: "EndpointNotPending", verification_state: model.state } } })
    } else {
      expect(Exit.isSuccess(exit), this.toString()).toBe(true)
      model.attempts = 1
      model.lastSent = model.now
      model.retryUntil = model.now + day
      model.state = this.echo ? "verified" : "verifying"
    }
    await check(model, real, this.toString())
  }
  toString = () => `Resend(echo: ${this.echo})`
}

/**
 * `times` meetings are created one after another (an event the endpoint subscribes to), and for each the worker
 * runs until its delivery is done: answered 2xx at once, or failed after its three attempts (5 minutes).
 */
class Deliver implements Command {
  constructor(readonly ok: boolean, readonly times: number) {}
  check = () => true
  async run(model: Model, real: Real) {
    const runOnce = Effect.flatMap(DeliveryWorker, (worker) => worker.runOnce())
    const ok = this.ok
    for (let i = 0; i < this.times; i++) {
      await real.run(Effect.gen(function*() {
        yield* answerWith(always(ok ? 200 : 500))
        yield* (yield* Meetings).create(real.principal, CreateMeeting.make({ title: "Something happened" }))
        yield* runOnce
        if (!ok) {
          yield* TestClock.adjust("1 minute")
          yield* runOnce
          yield* TestClock.adjust("4 minutes")
          yield* runOnce
        }
      }))
      if (!ok) model.now += 5
      if (!model.deleted && model.state === "verified") {
        if (ok) {
          model.failures = 0
        } else {
          model.failures += 1
          if (model.failures >= 3) {
            model.state = "disabled"
            model.mails += 1
          }
        }
      }
      await check(model, real, `${this.toString()}, delivery ${i + 1}`)
    }
  }
  toString = () => `Deliver(ok: ${this.ok}, times: ${this.times})`
}

class ReEnable implements Command {
  check = () => true
  async run(model: Model, real: Real) {
    const exit = await real.run(Effect.exit(Effect.flatMap(Webhooks, (webhooks) => webhooks.reEnable(real.principal, real.id))))
    if (model.deleted) {
      expect(exit, this.toString()).toMatchObject({ _tag: "Failure", cause: { error: { _tag: "NotFound" } } })
    } else if (model.state !== "disabled") {
      expect(exit, this.toString()).toMatchObject({ _tag: "Failure", cause: { error: { _tag: "Conflict" } } })
    } else {
      expect(Exit.isSuccess(exit), this.toString()).toBe(true)
      model.state = "verified"
      model.failures = 0
    }
    await check(model, real, this.toString())
  }
  toString = () => "ReEnable"
}

class Rotate implements Command {
  check = () => true
  async run(model: Model, real: Real) {
    const exit = await real.run(Effect.exit(Effect.flatMap(Webhooks, (webhooks) => webhooks.rotateSecret(real.principal, real.id))))
    expect(Exit.isSuccess(exit), this.toString()).toBe(!model.deleted)
    await check(model, real, this.toString())
  }
  toString = () => "Rotate"
}

class Delete implements Command {
  check = () => true
  async run(model: Model, real: Real) {
    await real.run(Effect.flatMap(Webhooks, (webhooks) => webhooks.delete(real.principal, real.id)))
    model.deleted = true
    await check(model, real, this.toString())
  }
  toString = () => "Delete"
}

// Weighted so that runs reach every state: a disable needs a verified endpoint and three failed deliveries in a
// row; a delete ends the interesting part of a run, so it is rare.
const commands = [
  FastCheck.oneof(
    { arbitrary: FastCheck.boolean().map((echo) => new Challenge(echo)), weight: 4 },
    { arbitrary: FastCheck.boolean().map((echo) => new Resend(echo)), weight: 2 },
    {
      arbitrary: FastCheck.tuple(FastCheck.boolean(), FastCheck.integer({ min: 1, max: 3 }))
        .map(([ok, times]) => new Deliver(ok, times)),
      weight: 5
    },
    {
      arbitrary: FastCheck.oneof(
        // Around the 5-minute interval, and across the 24-hour window.
        { arbitrary: FastCheck.integer({ min: 1, max: 6 }), weight: 4 },
        { arbitrary: FastCheck.integer({ min: 60, max: 8 * 60 }), weight: 1 },
        { arbitrary: FastCheck.constantFrom(day - 1, day, day + 1), weight: 1 }
      ).map((minutes) => new Advance(minutes)),
      weight: 3
    },
    { arbitrary: FastCheck.constant(new ReEnable()), weight: 2 },
    { arbitrary: FastCheck.constant(new Rotate()), weight: 1 },
    { arbitrary: FastCheck.constant(new Delete()), weight: 1 }
  )
]

describe("a webhook endpoint's life (model-based)", () => {
  it("matches the States table under any sequence of challenges, clock moves, resends, deliveries, re-enables and deletes", async () => {
    await FastCheck.assert(
      FastCheck.asyncProperty(
        FastCheck.commands(commands, { maxCommands: 30, size: "max" }),
        async (sequence) => {
          const runtime = makeRuntime()
          try {
            const run: Real["run"] = (effect) => runtime.runPromise(effect)
            const { principal } = await run(principalFor({ plan: "ENTERPRISE", role: "OWNER", scopes: Scopes, kind: "personal_access_token" }))
            const created = await run(createEndpoint(principal, ["meeting.created"]))
            const start = DateTime.toEpochMillis(created.webhook.created_at)
            const model: Model = {
              now: 0,
              deleted: false,
              state: "verifying",
              attempts: 0,
              lastSent: null,
              retryUntil: day,
              failures: 0,
              mails: 0
            }
            const real: Real = { run, principal, id: created.webhook.id, start }
            await check(model, real, "create")
            await FastCheck.asyncModelRun(() => ({ model, real }), sequence)
          } finally {
            await runtime.dispose()
          }
        }
      ),
      { numRuns: 60 }
    )
  }, 120_000)
})
