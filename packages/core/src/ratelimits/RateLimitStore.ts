import { Context, Effect, Layer } from "effect"

/** One counting window of one key: `start` and `length` in milliseconds since the epoch. */
export interface RateLimitWindow {
  readonly start: number
  readonly length: number
}

/**
 * Port: request counters, one per (key, window). Only the rules' bookkeeping: the RateLimits service decides the
 * keys, the windows and the budgets. Counters are not part of any transaction and may be lost (a restart of an
 * in-process store forgets them, which only ever gives a caller more room, never less).
 */
export class RateLimitStore extends Context.Tag("@convene/core/RateLimitStore")<RateLimitStore, {
  /**
   * Whether other processes count in the same counters (servers sharing one PostgreSQL): RateLimits then takes units
   * in blocks, so that most requests need no round trip to the store.
   */
  readonly shared: boolean
  /**
   * Atomically adds `units` (one by default) to the counter of (key, window) and answers the count after the
   * addition. Callers racing on one key each get a distinct count. A key is always counted in windows of one
   * length, but keys have windows of different lengths (a minute, five minutes): a counter may be dropped once its
   * own window has ended (it is never read again), never before.
   */
  readonly hit: (key: string, window: RateLimitWindow, units?: number) => Effect.Effect<number>
}>() {}

/** Above this many keys the in-process store drops the counters of windows that have ended. */
const pruneAbove = 10_000

/**
 * The in-process RateLimitStore: the counters in a Map of this process (one entry per key, holding the current
 * window's count). It is right for the stores whose data belongs to one process (the in-memory store and the
 * embedded PGlite); servers that share one PostgreSQL count in PostgreSQL (@convene/store-pg) so that they
 * enforce one budget together. Memory stays bounded by the keys active in the current window.
 */
export const inProcess: Layer.Layer<RateLimitStore> = Layer.sync(RateLimitStore, () => {
  const counters = new Map<string, { start: number; end: number; count: number }>()
  return RateLimitStore.of({
    shared: false,
    hit: (key, window, units = 1) =>
      Effect.sync(() => {
        const counter = counters.get(key)
        if (counter !== undefined && counter.start === window.start) return counter.count += units
        if (counters.size >= pruneAbove) {
          for (const [other, { end }] of counters) if (end <= window.start) counters.delete(other)
        }
        counters.set(key, { start: window.start, end: window.start + window.length, count: units })
        return units
      })
  })
})
