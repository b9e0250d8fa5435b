/**
 * RateLimitStore on PostgreSQL: `rate_limit_counters`, one row per (key, window) with the window's end. Hits are
 * counted by an upsert that answers the count, so servers sharing the database count one budget together. The first
 * hit of a window also drops the rows of the windows that ended before it started (by the index on window_end;
 * budgets have windows of different lengths, so a five-minute window outlives one-minute windows that start after
 * it), so the table holds about one row per active key.
 *
 * Concurrent hits of one key in this process share an upsert: while one is running, the hits that arrive wait,
 * and the next upsert adds all of them at once and gives each the count it would have had had they been counted one
 * by one (the last gets the total). Fifty requests of one credential at once cost two or three statements on its
 * counter's row instead of fifty that queue on the row's lock (docs/benchmarks.md); a lone hit is one upsert, as
 * before. Nothing is counted late: every count a hit answers is in the database when it answers. The counters are
 * shared by every server on the database, so RateLimits takes units in blocks (`shared`), which makes most requests
 * need no statement here at all.
 */
import { RateLimitStore, type RateLimitWindow, Span } from "@convene/core"
import * as SqlClient from "@effect/sql/SqlClient"
import { Deferred, Effect, Exit, Layer } from "effect"
import { orDie } from "./internal/sql.js"

/** What a waiting hit is told: its count, or that it leads the next upsert of its key. */
type Turn = { readonly _tag: "Counted"; readonly count: number } | { readonly _tag: "Lead" }

/** A hit waiting for its turn: how many units it adds. */
interface Waiting {
  readonly turn: Deferred.Deferred<Turn>
  readonly units: number
}

/** The hits of one key and window waiting for the upsert after the one running. */
interface Lane {
  waiting: Array<Waiting>
}

const lead: Turn = { _tag: "Lead" }

export const layer: Layer.Layer<RateLimitStore, never, SqlClient.SqlClient> = Layer.effect(
  RateLimitStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Adds `hits` to the key's count in the window and answers the new count. */
    const add = (key: string, window: RateLimitWindow, hits: number) =>
      Effect.gen(function*() {
        const [row] = yield* sql<{ readonly hits: number }>`
          INSERT INTO rate_limit_counters (key, window_start, window_end, hits)
          VALUES (${key}, ${window.start}, ${window.start + window.length}, ${hits})
          ON CONFLICT (key, window_start) DO UPDATE SET hits = rate_limit_counters.hits + ${hits}
          RETURNING hits`
        const total = row?.hits ?? hits
        if (total === hits) yield* sql`DELETE FROM rate_limit_counters WHERE window_end <= ${window.start}`
        return total
      }).pipe(orDie, Span.withSpan("PgRateLimitStore.hit"))

    // A lane exists while an upsert of its key runs; hits arriving meanwhile join its `waiting`.
    const lanes = new Map<string, Lane>()

    /**
     * Counts `batch` in one upsert, answers each of its hits, and hands the lead to the first hit that arrived
     * meanwhile (or closes the lane when none did).
     */
    const run = (id: string, key: string, window: RateLimitWindow, batch: ReadonlyArray<Waiting>) => {
      const units = batch.reduce((sum, hit) => sum + hit.units, 0)
      return Effect.flatMap(Effect.exit(add(key, window, units)), (exit) =>
        Effect.suspend(() => {
          const lane = lanes.get(id)!
          const [leader, ...rest] = lane.waiting
          lane.waiting = rest
          if (leader === undefined) lanes.delete(id)
          else Deferred.unsafeDone(leader.turn, Exit.succeed(lead))
          // Each hit of the batch gets the count it would have had alone: the total less the units of those after it.
          let after = units
          for (const hit of batch) {
            after -= hit.units
            const owed = after
            Deferred.unsafeDone(hit.turn, Exit.map(exit, (total): Turn => ({ _tag: "Counted", count: total - owed })))
          }
          return Effect.void
        }))
    }

    /** The count a waiting hit is given (the turn it is told, once its batch was counted). */
    const countOf = (turn: Turn) => (turn._tag === "Counted" ? turn.count : 0)

    const hit = (key: string, window: RateLimitWindow, units = 1): Effect.Effect<number> =>
      Effect.withFiberRuntime<number>((fiber) => {
        const id = `${window.start}:${key}`
        const mine: Waiting = { turn: Deferred.unsafeMake<Turn>(fiber.id()), units }
        const lane = lanes.get(id)
        if (lane === undefined) {
          lanes.set(id, { waiting: [] })
          return Effect.zipRight(run(id, key, window, [mine]), Effect.map(Deferred.await(mine.turn), countOf))
        }
        lane.waiting.push(mine)
        return Effect.flatMap(Deferred.await(mine.turn), (turn) => {
          if (turn._tag === "Counted") return Effect.succeed(turn.count)
          // The lead (`mine` is spent on telling us so): count us and everyone waiting behind us.
          const counted: Waiting = { turn: Deferred.unsafeMake<Turn>(fiber.id()), units }
          const batch = [counted, ...lane.waiting]
          lane.waiting = []
          return Effect.zipRight(run(id, key, window, batch), Effect.map(Deferred.await(counted.turn), countOf))
        })
      }).pipe(
        // A hit that leads must finish its upsert and hand on the lead even if its request is interrupted.
        Effect.uninterruptible
      )

    return RateLimitStore.of({ shared: true, hit })
  })
)
