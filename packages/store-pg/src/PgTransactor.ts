/**
 * Transactor on PostgreSQL: `sql.withTransaction`. Every store statement run inside joins the transaction
 * (the connection travels in the fiber's context); a nested call is a savepoint of the outer transaction.
 */
import { Transactor } from "@convene/core"
import { SqlClient } from "@effect/sql"
import { type Context, Effect, Layer } from "effect"
import { isSqlError } from "./internal/sql.js"

export const make: Effect.Effect<Context.Tag.Service<typeof Transactor>, never, SqlClient.SqlClient> = Effect.gen(
  function*() {
    const sql = yield* SqlClient.SqlClient
    return Transactor.of({
      // BEGIN failing (or the connection failing) is infrastructure: a defect, like every other SqlError.
      withTransaction: (effect) =>
        sql.withTransaction(effect).pipe(
          Effect.catchIf(isSqlError, Effect.die),
          Effect.withSpan("PgTransactor.withTransaction")
        )
    })
  }
)

export const layer: Layer.Layer<Transactor, never, SqlClient.SqlClient> = Layer.effect(Transactor, make)
