import { RateLimitStore, type StorePorts } from "@convene/core"
import { expect, layer } from "@effect/vitest"
import { Effect, Fiber, type Layer } from "effect"

const minute = 60_000
/** A window far from the others' (keys are fresh per test anyway). */
const window = (n: number) => ({ start: 1_900_000_000_000 + n * minute, length: minute })
const freshKey = () => `credential:${crypto.randomUUID()}`

export const suite = (name: string, storeLayer: Layer.Layer<StorePorts, unknown>) => {
  layer(storeLayer)(`RateLimitStore (${name})`, (it) => {
    it.effect("counts the hits of a key in a window, one by one", () =>
      Effect.gen(function*() {
        const store = yield* RateLimitStore
        const key = freshKey()
        expect(yield* store.hit(key, window(0))).toBe(1)
        expect(yield* store.hit(key, window(0))).toBe(2)
        expect(yield* store.hit(key, window(0))).toBe(3)
      }))

    it.effect("keeps keys apart", () =>
      Effect.gen(function*() {
        const store = yield* RateLimitStore
        const [one, two] = [freshKey(), freshKey()]
        expect(yield* store.hit(one, window(0))).toBe(1)
        expect(yield* store.hit(one, window(0))).toBe(2)
        expect(yield* store.hit(two, window(0))).toBe(1)
        expect(yield* store.hit(one, window(0))).toBe(3)
      }))

    it.effect("starts every window at one", () =>
      Effect.gen(function*() {
        const store = yield* RateLimitStore
        const key = freshKey()
        expect(yield* store.hit(key, window(1))).toBe(1)
        expect(yield* store.hit(key, window(1))).toBe(2)
        expect(yield* store.hit(key, window(2))).toBe(1)
        expect(yield* store.hit(key, window(2))).toBe(2)
      }))

    it.effect("gives racing hits on one key distinct counts", () =>
      Effect.gen(function*() {
        const store = yield* RateLimitStore
        const key = freshKey()
        const counts = yield* Effect.all(Array.from({ length: 25 }, () => store.hit(key, window(3))), { concurrency: "unbounded" })
        expect([...counts].sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1))
      }))

    it.effect("answers racing hits whose requests were interrupted meanwhile, and counts on after them", () =>
      Effect.gen(function*() {
        const store = yield* RateLimitStore
        const key = freshKey()
        const fibers = yield* Effect.forEach(Array.from({ length: 30 }), () => Effect.fork(store.hit(key, window(4))))
        yield* Effect.forEach(fibers.filter((_, i) => i % 3 === 0), Fiber.interrupt)
        const kept = yield* Effect.forEach(fibers.filter((_, i) => i % 3 !== 0), Fiber.join)
        expect(new Set(kept).size).toBe(20)
        const next = yield* store.hit(key, window(4))
        expect(next).toBeGreaterThan(Math.max(...kept))
        expect(next).toBeLessThanOrEqual(31)
      }))
  })
}
