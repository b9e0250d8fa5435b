/**
 * Transactor on PostgreSQL: `sql.withTransaction`. Every store statement run inside joins the transaction
 * (the connection travels in the fiber's context); a nested call is a savepoint of the outer transaction.
 *
 * PostgreSQL may end a transaction for the sake of another: a deadlock victim (SQLSTATE 40P01, say a workspace's
 * deletion and a write in that workspace taking their locks in opposite orders) or a serialization failure (40001).
 * Nothing of it was kept, and running it again is what PostgreSQL asks for: the outermost transaction runs again, up
 * to `attempts` times in all, after a short random pause. (A savepoint cannot: its transaction is aborted with it.)
 */
import { Span, Transactor } from "@convene/core"
import * as SqlClient from "@effect/sql/SqlClient"
import { Cause, type Context, Effect, Layer, Option, Random } from "effect"
import { isSqlError } from "./internal/sql.js"

/** How many times in all a transaction runs when PostgreSQL keeps choosing it as the one to end. */
export const attempts = 4

const retryable = new Set(["40P01", "40001"])

/** Whether the transaction ended because PostgreSQL chose it to end (as a failure or as a defect of a store). */
const endedByServer = (cause: Cause.Cause<unknown>): boolean =>
  [...Cause.failures(cause), ...Cause.defects(cause)].some((error) =>
    isSqlError(error) && typeof error.cause === "object" && error.cause !== null &&
    retryable.has(String((error.cause as { code?: unknown }).code))
  )

export const make: Effect.Effect<Context.Tag.Service<typeof Transactor>, never, SqlClient.SqlClient> = Effect.gen(
  function*() {
    const sql = yield* SqlClient.SqlClient
    const run = <A, E, R>(effect: Effect.Effect<A, E, R>, attempt: number): Effect.Effect<A, E, R> =>
      sql.withTransaction(effect).pipe(
        // BEGIN failing (or the connection failing) is infrastructure: a defect, like every other SqlError.
        Effect.catchIf(isSqlError, Effect.die),
        Effect.catchAllCause((cause) =>
          attempt < attempts && endedByServer(cause)
            ? Effect.flatMap(Random.nextIntBetween(5, 25 * attempt), (ms) => Effect.sleep(ms)).pipe(
              Effect.zipRight(run(effect, attempt + 1))
            )
            : Effect.failCause(cause)
        )
      )
    return Transactor.of({
      withTransaction: (effect) =>
        Effect.serviceOption(SqlClient.TransactionConnection).pipe(
          Effect.flatMap((outer) =>
            Option.isSome(outer) ? sql.withTransaction(effect).pipe(Effect.catchIf(isSqlError, Effect.die)) : run(effect, 1)
          ),
          Span.withSpan("PgTransactor.withTransaction")
        )
    })
  }
)

export const layer: Layer.Layer<Transactor, never, SqlClient.SqlClient> = Layer.effect(Transactor, make)
