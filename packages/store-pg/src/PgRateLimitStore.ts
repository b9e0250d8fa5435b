/**
 * RateLimitStore on PostgreSQL: `rate_limit_counters`, one row per (key, window). A hit is one upsert that answers
 * the count, so servers sharing the database count one budget together. The first hit of a window also drops the
 * rows of the windows that ended (by the index on window_start), so the table holds about one row per active key.
 */
import { RateLimitStore } from "@convene/core"
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { orDie } from "./internal/sql.js"

export const layer: Layer.Layer<RateLimitStore, never, SqlClient.SqlClient> = Layer.effect(
  RateLimitStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return RateLimitStore.of({
      hit: (key, window) =>
        Effect.gen(function*() {
          const [row] = yield* sql<{ readonly hits: number }>`
            INSERT INTO rate_limit_counters (key, window_start, hits) VALUES (${key}, ${window.start}, 1)
            ON CONFLICT (key, window_start) DO UPDATE SET hits = rate_limit_counters.hits + 1
            RETURNING hits`
          const hits = row?.hits ?? 1
          if (hits === 1) yield* sql`DELETE FROM rate_limit_counters WHERE window_start < ${window.start}`
          return hits
        }).pipe(orDie, Effect.withSpan("PgRateLimitStore.hit"))
    })
  })
)
