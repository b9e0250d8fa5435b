/**
 * The partner API's budgets per client address in core (RateLimits, partner-api.md "Limits"): each part in fixed
 * windows of its own length aligned to the clock, apart from each other and from the first-party budgets, the
 * policy's budgets or the document's, the refusal's words; and the in-process counters keeping a five-minute window
 * while one-minute windows come and go.
 */
import {
  defaultPartnerBudgets,
  defaultPolicy,
  type PartnerScope,
  RateLimits,
  RateLimitStore,
  RateLimitStores,
  refusal
} from "@convene/core"
import { expect, it, layer } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { CoreLive } from "./fixtures.js"

const minute = 60_000
const fiveMinutes = 5 * minute
/** A five-minute boundary well after the epoch. */
const T = 6_000_000 * fiveMinutes

const partner = (scope: PartnerScope, address = "203.0.113.7") => ({ _tag: "PartnerAddress", scope, address }) as const

layer(RateLimits.layer.pipe(Layer.provideMerge(CoreLive)))("RateLimits for the partner API", (it) => {
  it.effect("counts /oauth2's 100 requests per 5 minutes per address, refusing the 101st until the window ends", () =>
    Effect.gen(function*() {
      const limits = yield* RateLimits
      yield* TestClock.setTime(T + 2 * minute)
      const take = limits.take(partner("oauth"))
      const states = yield* Effect.all(Array.from({ length: 101 }, () => take))
      expect(states[0]).toEqual({ limit: 100, remaining: 99, reset: (T + fiveMinutes) / 1000, retryAfterSeconds: 180, exceeded: false })
      expect(states[99]).toMatchObject({ remaining: 0, exceeded: false })
      expect(states[100]).toMatchObject({ remaining: 0, exceeded: true })
      yield* TestClock.setTime(T + fiveMinutes - 1)
      expect(yield* take).toMatchObject({ exceeded: true, retryAfterSeconds: 1 })
      yield* TestClock.setTime(T + fiveMinutes)
      expect(yield* take).toMatchObject({ remaining: 99, exceeded: false, retryAfterSeconds: 300 })
    }))

  it.effect("gives each part partner-api.md's budget and window, and keeps parts, addresses and first-party budgets apart", () =>
    Effect.gen(function*() {
      const limits = yield* RateLimits
      yield* TestClock.setTime(T + fiveMinutes + 30_000)
      const expected = [
        ["partner_user", 1000, (T + 2 * fiveMinutes) / 1000],
        ["partner_admin", 500, (T + 2 * fiveMinutes) / 1000],
        ["oauth", 100, (T + 2 * fiveMinutes) / 1000],
        ["sso_info", 30, (T + fiveMinutes + minute) / 1000]
      ] as const
      for (const [scope, limit, reset] of expected) {
        expect(yield* limits.take(partner(scope, "198.51.100.1"))).toMatchObject({ limit, remaining: limit - 1, reset })
      }
      expect(yield* limits.take(partner("oauth", "198.51.100.1"))).toMatchObject({ remaining: 98 })
      expect(yield* limits.take(partner("oauth", "198.51.100.2"))).toMatchObject({ remaining: 99 })
      expect(yield* limits.take({ _tag: "Address", address: "198.51.100.1" })).toMatchObject({ limit: 300, remaining: 299 })
    }))

  it.effect("words a refusal with the window's length", () =>
    Effect.sync(() => {
      const state = { limit: 100, remaining: 0, reset: 1, retryAfterSeconds: 12, exceeded: true }
      expect(refusal(state, fiveMinutes).message).toBe("rate limit of 100 requests per 5 minutes exceeded; retry after 12 seconds")
      expect(refusal(state, minute).message).toBe("rate limit of 100 requests a minute exceeded; retry after 12 seconds")
      expect(refusal(state).message).toBe("rate limit of 100 requests a minute exceeded; retry after 12 seconds")
    }))
})

const custom = { ...defaultPartnerBudgets, sso_info: { limit: 2, windowMs: 10_000 } }

layer(RateLimits.layerWith({ ...defaultPolicy, partner: custom }).pipe(Layer.provideMerge(CoreLive)))("RateLimits with other partner budgets", (it) => {
  it.effect("counts in the policy's budgets and windows", () =>
    Effect.gen(function*() {
      const limits = yield* RateLimits
      yield* TestClock.setTime(T + 4_000)
      const take = limits.take(partner("sso_info"))
      expect((yield* Effect.all([take, take, take])).map((state) => [state.exceeded, state.retryAfterSeconds])).toEqual([
        [false, 6],
        [false, 6],
        [true, 6]
      ])
      yield* TestClock.setTime(T + 10_000)
      expect(yield* take).toMatchObject({ limit: 2, remaining: 1, exceeded: false })
    }))
})

const { partner: _, ...withoutPartner } = defaultPolicy

layer(RateLimits.layerWith(withoutPartner).pipe(Layer.provideMerge(CoreLive)))("RateLimits with a policy that names no partner budgets", (it) => {
  it.effect("counts with partner-api.md's", () =>
    Effect.gen(function*() {
      const limits = yield* RateLimits
      yield* TestClock.setTime(T)
      expect(yield* limits.take(partner("partner_admin"))).toMatchObject({ limit: 500, remaining: 499, retryAfterSeconds: 300 })
    }))
})

it.effect("the in-process counters keep a five-minute window while the one-minute windows of many other keys end", () =>
  Effect.gen(function*() {
    const store = yield* RateLimitStore
    const long = { start: T, length: fiveMinutes }
    expect(yield* store.hit("oauth:203.0.113.9", long)).toBe(1)
    // More keys than the store keeps before it drops the counters of windows that ended.
    for (let i = 0; i < 10_000; i++) yield* store.hit(`address:${i}`, { start: T + minute, length: minute })
    expect(yield* store.hit("address:new", { start: T + 2 * minute, length: minute })).toBe(1)
    expect(yield* store.hit("oauth:203.0.113.9", long)).toBe(2)
  }).pipe(Effect.provide(RateLimitStores.inProcess)))
