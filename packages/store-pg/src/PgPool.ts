/**
 * The connection pool under `clientPg`: a `pg.Pool` opened with a connection check (as @effect/sql-pg's own
 * `PgClient.layer` does), ended when its scope closes, and observed. Its occupancy is published as Effect
 * gauges, sampled every second while the pool lives (not per query: the request path pays nothing), so an exporter
 * (Prometheus through @effect/opentelemetry in the HTTP host) reads it like any other metric:
 *
 * - `convene_store_pool_connections{state="in_use"|"idle"}`: open connections, lent out or waiting for work;
 * - `convene_store_pool_waiting`: queries queued for a connection (the pool is exhausted while it is above 0);
 * - `convene_store_pool_max`: the pool's size.
 */
import { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect, Metric, Redacted, Schedule, type Scope } from "effect"
import Pg from "pg"

export interface PoolOptions {
  readonly url: Redacted.Redacted
  readonly maxConnections: number
  readonly applicationName: string
  /** How long opening the pool's first connection may take (default 5 s, as @effect/sql-pg). */
  readonly connectTimeout?: Duration.DurationInput | undefined
}

const connections = Metric.gauge("convene_store_pool_connections", {
  description: "Open connections of the PostgreSQL pool, by state (in_use, idle)"
})
const inUse = Metric.tagged(connections, "state", "in_use")
const idle = Metric.tagged(connections, "state", "idle")
const waiting = Metric.gauge("convene_store_pool_waiting", {
  description: "Queries waiting for a connection of the PostgreSQL pool"
})
const size = Metric.gauge("convene_store_pool_max", {
  description: "The PostgreSQL pool's size (the most connections it opens)"
})

const sample = (pool: Pg.Pool) => {
  inUse.unsafeUpdate(pool.totalCount - pool.idleCount, [])
  idle.unsafeUpdate(pool.idleCount, [])
  waiting.unsafeUpdate(pool.waitingCount, [])
}

/** An open, observed pool; ended (at most 1 s of waiting for its connections) when the scope closes. */
export const make = (options: PoolOptions): Effect.Effect<Pg.Pool, SqlError, Scope.Scope> =>
  Effect.gen(function*() {
    const pool = new Pg.Pool({
      connectionString: Redacted.value(options.url),
      max: options.maxConnections,
      application_name: options.applicationName
    })
    // Errors of idle connections (the server restarted, say) reach the next query that uses the pool; without a
    // listener node would end the process on them.
    pool.on("error", () => {})
    const timeout = options.connectTimeout ?? Duration.seconds(5)
    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => pool.query("SELECT 1"),
        catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
      }),
      () => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000))
    ).pipe(
      Effect.timeoutFail({
        duration: timeout,
        onTimeout: () => new SqlError({ cause: new Error("Connection timed out"), message: "PgClient: Connection timed out" })
      })
    )
    size.unsafeUpdate(options.maxConnections, [])
    yield* Effect.sync(() => sample(pool)).pipe(Effect.repeat(Schedule.spaced("1 second")), Effect.forkScoped)
    return pool
  })
