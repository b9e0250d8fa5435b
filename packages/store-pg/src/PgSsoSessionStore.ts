/**
 * SsoSessionStore on PostgreSQL: `partner_sso_sessions` (migration 0019), one row per session, the signed-in user as
 * JSON. Finishing and consuming are one conditional UPDATE each, so of racing processes exactly one changes the row.
 */
import { SsoSession, SsoSessionStore, SsoUser } from "@convene/core"
import * as SqlClient from "@effect/sql/SqlClient"
import { type Context, DateTime, Effect, Layer, Option, Schema } from "effect"
import { orDie, recordTable, rowOf } from "./internal/sql.js"

/** A `partner_sso_sessions` row, decoded to (and encoded from) an `SsoSession`. */
const SsoSessionRecord = rowOf(SsoSession, { result: Schema.NullOr(Schema.parseJson(SsoUser)) })

export const make: Effect.Effect<Context.Tag.Service<typeof SsoSessionStore>, never, SqlClient.SqlClient> = Effect.gen(
  function*() {
    const sql = yield* SqlClient.SqlClient
    const date = DateTime.toDateUtc
    const sessions = recordTable(sql, { table: "partner_sso_sessions", row: SsoSessionRecord, key: ["id"] })
    const encodeResult = Schema.encodeSync(Schema.NullOr(Schema.parseJson(SsoUser)))
    const decodeRows = Schema.decodeUnknown(Schema.Array(SsoSessionRecord))

    return SsoSessionStore.of({
      insert: sessions.insert,
      get: (id) => sessions.find({ id }),
      getByStateHash: (stateHash) => sessions.find({ state_hash: stateHash }),
      finish: (id, outcome, at, expiresAt) =>
        Effect.map(
          orDie(sql`
            UPDATE partner_sso_sessions SET
              state = ${outcome.state},
              expires_at = ${date(expiresAt)},
              finished_at = ${date(at)},
              result = ${outcome.state === "completed" ? encodeResult(outcome.result) : null},
              error = ${outcome.state === "failed" ? outcome.error : null},
              error_description = ${outcome.state === "failed" ? outcome.error_description : null}
            WHERE id = ${id} AND state = 'pending' AND expires_at > ${date(at)}
            RETURNING id`),
          (rows) => rows.length > 0
        ),
      consume: (id, at) =>
        orDie(Effect.flatMap(
          sql`
            UPDATE partner_sso_sessions SET consumed_at = ${date(at)}
            WHERE id = ${id} AND state <> 'pending' AND consumed_at IS NULL AND expires_at > ${date(at)}
            RETURNING *`,
          decodeRows
        )).pipe(Effect.map((rows) => Option.fromNullable(rows[0]))),
      purge: (before) => orDie(sql`DELETE FROM partner_sso_sessions WHERE expires_at < ${date(before)}`).pipe(Effect.asVoid)
    })
  }
)

export const layer: Layer.Layer<SsoSessionStore, never, SqlClient.SqlClient> = Layer.effect(SsoSessionStore, make)
