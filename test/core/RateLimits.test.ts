/**
 * Request budgets in core (RateLimits): fixed windows of one clock minute, the plan's budget per credential, the
 * anonymous budget per address, where the budget stands after each request, and how long a plan is remembered; on
 * a counter shared by several processes, units taken in blocks.
 */
import {
  blockOf,
  RateLimits,
  type RateLimitState,
  RateLimitStore,
  RateLimitStores,
  refusal,
  UpdateWorkspace,
  Workspaces
} from "@convene/core"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, TestClock } from "effect"
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

/**
 * A counter shared by several processes (as the PostgreSQL store's is): the in-process store's counting, declared
 * shared, with its calls counted.
 */
class StoreCalls extends Context.Tag("test/StoreCalls")<StoreCalls, { count: number }>() {}

const SharedStore = Layer.effectContext(Effect.gen(function*() {
  const inner = yield* RateLimitStore
  const calls = { count: 0 }
  const shared = RateLimitStore.of({
    shared: true,
    hit: (key, window, units) => Effect.suspend(() => {
      calls.count++
      return inner.hit(key, window, units)
    })
  })
  return Context.make(RateLimitStore, shared).pipe(Context.add(StoreCalls, calls))
})).pipe(Layer.provide(RateLimitStores.inProcess))

/** Two server processes on one shared counter: each has its own RateLimits. */
class Other extends Context.Tag("test/OtherProcess")<Other, RateLimits["Type"]>() {}

const SharedLive = Layer.mergeAll(RateLimits.layer, Layer.effect(Other, Effect.provide(RateLimits, RateLimits.layer))).pipe(
  Layer.provideMerge(SharedStore),
  Layer.provideMerge(CoreLive)
)

layer(SharedLive)("RateLimits on a counter shared by several processes", (it) => {
  it.effect("takes units in blocks of 1% of the budget: 24 requests of an ENTERPRISE credential cost two store calls", () =>
    Effect.gen(function*() {
      const limits = yield* RateLimits
      const calls = yield* StoreCalls
      const { principal } = yield* principalFor({ plan: "ENTERPRISE", kind: "personal_access_token" })
      yield* at(T + 10 * minute)
      const before = calls.count
      const states = yield* takeTimes(limits.take({ _tag: "Credential", principal }), 24)
      expect(calls.count - before).toBe(2)
      expect(blockOf(1200)).toBe(12)
      expect(states.map((state) => state.remaining)).toEqual(Array.from({ length: 24 }, (_, i) => 1200 - i - 1))
    }))

  it.effect("reserves one block at a time for requests that arrive together", () =>
    Effect.gen(function*() {
      const limits = yield* RateLimits
      const calls = yield* StoreCalls
      const { principal } = yield* principalFor({ plan: "ENTERPRISE", kind: "personal_access_token" })
      yield* at(T + 11 * minute)
      const before = calls.count
      const states = yield* Effect.all(
        Array.from({ length: 30 }, () => limits.take({ _tag: "Credential", principal })),
        { concurrency: "unbounded" }
      )
      // 30 units in blocks of 12: three reservations, each unit given once.
      expect(calls.count - before).toBe(3)
      expect(states.map((state) => state.remaining).sort((a, b) => b - a)).toEqual(Array.from({ length: 30 }, (_, i) => 1199 - i))
    }))

  it.effect("never lets two processes together past the budget, and refuses at most a block per process early", () =>
    Effect.gen(function*() {
      const [one, two] = [yield* RateLimits, yield* Other]
      const { principal } = yield* principalFor({ plan: "PRO", kind: "personal_access_token" })
      yield* at(T + 12 * minute)
      // PRO: 300 a minute, blocks of 3. The two processes take turns.
      const subject = { _tag: "Credential", principal } as const
      let accepted = 0
      for (let i = 0; i < 200; i++) {
        for (const limits of [one, two]) if (!(yield* limits.take(subject)).exceeded) accepted++
      }
      expect(accepted).toBeLessThanOrEqual(300)
      expect(accepted).toBeGreaterThanOrEqual(300 - 2 * blockOf(300))
    }))

  it.effect("asks the store nothing more once a window's budget is spent, and counts again in the next window", () =>
    Effect.gen(function*() {
      const limits = yield* RateLimits
      const calls = yield* StoreCalls
      const { principal } = yield* principalFor({ plan: "FREE" })
      yield* at(T + 13 * minute)
      const take = limits.take({ _tag: "Credential", principal })
      const states = yield* takeTimes(take, 61)
      expect(states[60]).toMatchObject({ exceeded: true, remaining: 0 })
      const before = calls.count
      expect(yield* takeTimes(take, 20)).toSatisfy((more: ReadonlyArray<RateLimitState>) => more.every((state) => state.exceeded))
      expect(calls.count).toBe(before)
      yield* at(T + 14 * minute)
      expect(yield* take).toMatchObject({ remaining: 59, exceeded: false })
    }))
})
