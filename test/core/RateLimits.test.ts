/**
 * Request budgets in core (RateLimits): fixed windows of one clock minute, the plan's budget per credential, the
 * anonymous budget per address, where the budget stands after each request, and how long a plan is remembered.
 */
import { RateLimits, type RateLimitState, refusal, UpdateWorkspace, Workspaces } from "@convene/core"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { CoreLive, principalFor } from "./fixtures.js"

const Live = RateLimits.layer.pipe(Layer.provideMerge(CoreLive))

/** Moves the test clock to `ms` after the epoch. */
const at = (ms: number) => TestClock.setTime(ms)
const minute = 60_000
/** A minute boundary well after the epoch. */
const T = 29_000_000 * minute

const takeTimes = (take: Effect.Effect<RateLimitState>, n: number) => Effect.all(Array.from({ length: n }, () => take))

layer(Live)("RateLimits", (it) => {
  it.effect("counts a FREE credential's 60 requests a minute and refuses the 61st until the window ends", () =>
    Effect.gen(function*() {
      const limits = yield* RateLimits
      const { principal } = yield* principalFor({ plan: "FREE" })
      yield* at(T + 15_000)
      const take = limits.take({ _tag: "Credential", principal })
      const states = yield* takeTimes(take, 61)
      expect(states[0]).toEqual({ limit: 60, remaining: 59, reset: (T + minute) / 1000, retryAfterSeconds: 45, exceeded: false })
      expect(states[59]).toMatchObject({ remaining: 0, exceeded: false })
      expect(states[60]).toMatchObject({ remaining: 0, exceeded: true })
      // Still refused at the window's last millisecond, with at least a second to wait.
      yield* at(T + minute - 1)
      expect(yield* take).toMatchObject({ exceeded: true, retryAfterSeconds: 1 })
      // The next window starts whole.
      yield* at(T + minute)
      expect(yield* take).toEqual({ limit: 60, remaining: 59, reset: (T + 2 * minute) / 1000, retryAfterSeconds: 60, exceeded: false })
    }))

  it.effect("gives each plan its budget, and each credential its own", () =>
    Effect.gen(function*() {
      const limits = yield* RateLimits
      yield* at(T)
      for (const [plan, budget] of [["PRO", 300], ["ELITE", 600], ["ENTERPRISE", 1200]] as const) {
        const { principal, workspace } = yield* principalFor({ plan, kind: "personal_access_token" })
        const other = yield* principalFor({ workspaceId: workspace.id })
        yield* takeTimes(limits.take({ _tag: "Credential", principal }), 3)
        expect(yield* limits.take({ _tag: "Credential", principal })).toMatchObject({ limit: budget, remaining: budget - 4 })
        expect(yield* limits.take({ _tag: "Credential", principal: other.principal })).toMatchObject({ remaining: budget - 1 })
      }
    }))

  it.effect("counts requests without a credential per address with the anonymous budget", () =>
    Effect.gen(function*() {
      const limits = yield* RateLimits
      yield* at(T + 2 * minute)
      const states = yield* takeTimes(limits.take({ _tag: "Address", address: "203.0.113.7" }), 301)
      expect(states[0]).toMatchObject({ limit: 300, remaining: 299 })
      expect(states[300]).toMatchObject({ exceeded: true })
      expect(yield* limits.take({ _tag: "Address", address: "203.0.113.8" })).toMatchObject({ remaining: 299, exceeded: false })
    }))

  it.effect("remembers a workspace's plan for five seconds", () =>
    Effect.gen(function*() {
      const limits = yield* RateLimits
      const { principal, workspace } = yield* principalFor({ plan: "PRO" })
      yield* at(T + 3 * minute)
      expect((yield* limits.take({ _tag: "Credential", principal })).limit).toBe(300)
      yield* (yield* Workspaces).update(workspace.id, new UpdateWorkspace({ plan: "ELITE" })).pipe(Effect.orDie)
      yield* at(T + 3 * minute + 4_999)
      expect((yield* limits.take({ _tag: "Credential", principal })).limit).toBe(300)
      yield* at(T + 3 * minute + 5_000)
      expect((yield* limits.take({ _tag: "Credential", principal })).limit).toBe(600)
    }))

  it.effect("words the refusal with the budget and the wait", () =>
    Effect.sync(() => {
      const error = refusal({ limit: 60, remaining: 0, reset: 1, retryAfterSeconds: 12, exceeded: true })
      expect(error).toMatchObject({ _tag: "RateLimited", limit: 60, retry_after_seconds: 12 })
      expect(error.message).toBe("rate limit of 60 requests a minute exceeded; retry after 12 seconds")
    }))
})
