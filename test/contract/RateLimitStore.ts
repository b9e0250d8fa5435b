import { RateLimitStore, type StorePorts } from "@convene/core"
import { expect, layer } from "@effect/vitest"
import { Effect, Fiber, type Layer } from "effect"

const minute = 60_000
/** A window far from the others' (keys are fresh per test anyway). */
const window = (n: number) => ({ start: 1_900_000_000_000 + n * minute, length: minute })
const freshKey = () => `credential:${crypto.randomUUID()}`

/** `shared`: whether the store's counters are the other server processes' too (a PostgreSQL server's). */
export const suite = (name: string, storeLayer: Layer.Layer<StorePorts, unknown>, shared = false) => {
  layer(storeLayer)(`RateLimitStore (${name})`, (it) => {
    it.effect(`says its counters are ${shared ? "" : "not "}shared with other processes`, () =>
      Effect.map(RateLimitStore, (store) => expect(store.shared).toBe(shared)))

    it.effect("adds blocks of units, and answers the count after each", () =>
      Effect.gen(function*() {
        const store = yield* RateLimitStore
        const key = freshKey()
        expect(yield* store.hit(key, window(5), 12)).toBe(12)
        expect(yield* store.hit(key, window(5))).toBe(13)
        expect(yield* store.hit(key, window(5), 100)).toBe(113)
        expect(yield* store.hit(key, window(6), 7)).toBe(7)
      }))

    it.effect("gives racing blocks on one key ranges that do not overlap", () =>
      Effect.gen(function*() {
        const store = yield* RateLimitStore
        const key = freshKey()
        const tops = yield* Effect.all(
          Array.from({ length: 20 }, (_, i) => store.hit(key, window(7), 1 + (i % 4))),
          { concurrency: "unbounded" }
        )
        // Each block is (top - units, top]; together they tile 1..total.
        const blocks = tops.map((top, i) => [top - (1 + (i % 4)), top] as const).sort((a, b) => a[0] - b[0])
        blocks.forEach(([from], i) => expect(from).toBe(i === 0 ? 0 : blocks[i - 1]![1]))
        expect(blocks.at(-1)![1]).toBe(Array.from({ length: 20 }, (_, i) => 1 + (i % 4)).reduce((a, b) => a + b, 0))
      }))

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

    it.effect("keeps counting a longer window when a shorter window of another key starts after it", () =>
      Effect.gen(function*() {
        const store = yield* RateLimitStore
        const [long, short] = [freshKey(), freshKey()]
        const fiveMinutes = { start: window(20).start, length: 5 * minute }
        expect(yield* store.hit(long, fiveMinutes)).toBe(1)
        expect(yield* store.hit(long, fiveMinutes)).toBe(2)
        // The first hits of one-minute windows that start while the five-minute window runs drop nothing of it.
        for (const n of [21, 22, 24]) expect(yield* store.hit(short, window(n))).toBe(1)
        expect(yield* store.hit(long, fiveMinutes)).toBe(3)
        // Once it has ended, a new window of the key starts at one.
        expect(yield* store.hit(long, { start: window(25).start, length: 5 * minute })).toBe(1)
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
