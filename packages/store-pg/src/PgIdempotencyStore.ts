/**
 * IdempotencyStore on PostgreSQL: `idempotency_records`, primary key (scope, key). A claim is one atomic
 * upsert that only takes over an expired record, so of two racing claims exactly one is Started.
 */
import { IdempotencyRecord, IdempotencyStore, StoredResponse, trusted } from "@convene/core"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { type Context, DateTime, Effect, Layer, Schema } from "effect"
import { DbTimestamp, orDie } from "./internal/sql.js"

/** An `idempotency_records` row (the response in two nullable columns), decoded to an `IdempotencyRecord`. */
export const IdempotencyRecordRow = Schema.transform(
  Schema.Struct({
    scope: Schema.String,
    key: Schema.String,
    fingerprint: Schema.String,
    response_status: Schema.NullOr(Schema.Int),
    response_body: Schema.NullOr(Schema.String),
    created_at: DbTimestamp,
    expires_at: DbTimestamp
  }),
  Schema.typeSchema(IdempotencyRecord),
  {
    strict: true,
    decode: ({ response_body, response_status, ...row }) =>
      new IdempotencyRecord({
        ...row,
        response: response_status === null || response_body === null
          ? null
          : new StoredResponse({ status: response_status, body: response_body }, trusted)
      }, trusted),
    encode: ({ response, ...record }) => ({
      ...record,
      response_status: response?.status ?? null,
      response_body: response?.body ?? null
    })
  }
)

/** How often `begin` retries when the live record it collided with was released before it could read it. */
const maxAttempts = 10

export const make: Effect.Effect<Context.Tag.Service<typeof IdempotencyStore>, never, SqlClient.SqlClient> = Effect.gen(
  function*() {
    const sql = yield* SqlClient.SqlClient
    const date = DateTime.toDateUtc

    const claim = SqlSchema.findAll({
      Request: Schema.Struct({ pending: IdempotencyRecordRow, now: DbTimestamp }),
      Result: Schema.Struct({ scope: Schema.String }),
      execute: ({ now, pending }) =>
        sql`INSERT INTO idempotency_records ${sql.insert(pending)}
            ON CONFLICT (scope, key) DO UPDATE SET
              fingerprint = EXCLUDED.fingerprint,
              response_status = EXCLUDED.response_status,
              response_body = EXCLUDED.response_body,
              created_at = EXCLUDED.created_at,
              expires_at = EXCLUDED.expires_at
            WHERE idempotency_records.expires_at <= ${now}
            RETURNING scope`
    })
    const findLive = SqlSchema.findOne({
      Request: Schema.Struct({ scope: Schema.String, key: Schema.String, now: DbTimestamp }),
      Result: IdempotencyRecordRow,
      execute: ({ key, now, scope }) =>
        sql`SELECT * FROM idempotency_records WHERE scope = ${scope} AND key = ${key} AND expires_at > ${now}`
    })

    const begin = Effect.fnUntraced(function*(pending: IdempotencyRecord, now: DateTime.Utc) {
      for (let attempt = 0; attempt < maxAttempts; attempt++) {
        const claimed = yield* orDie(claim({ pending, now }))
        if (claimed.length > 0) return { _tag: "Started" } as const
        const live = yield* orDie(findLive({ scope: pending.scope, key: pending.key, now }))
        if (live._tag === "Some") return { _tag: "Found", record: live.value } as const
        // The live record went away (released, or expired) between the two statements: claim again.
      }
      return yield* Effect.dieMessage(`PgIdempotencyStore.begin: no stable outcome after ${maxAttempts} attempts`)
    })

    return IdempotencyStore.of({
      begin,
      complete: (pending, response, expiresAt) =>
        orDie(sql`
          UPDATE idempotency_records
          SET response_status = ${response.status}, response_body = ${response.body}, expires_at = ${date(expiresAt)}
          WHERE scope = ${pending.scope} AND key = ${pending.key} AND created_at = ${date(pending.created_at)}
            AND response_status IS NULL`).pipe(Effect.asVoid)
      ,
      release: (pending) =>
        orDie(sql`
          DELETE FROM idempotency_records
          WHERE scope = ${pending.scope} AND key = ${pending.key} AND created_at = ${date(pending.created_at)}
            AND response_status IS NULL`).pipe(Effect.asVoid)
      ,
      deleteByScopes: (scopes) =>
        orDie(sql`DELETE FROM idempotency_records WHERE scope = ANY(${scopes}::text[])`).pipe(Effect.asVoid),
      purgeExpired: Effect.fnUntraced(function*(now) {
        const rows = yield* orDie(sql<{ readonly purged: number }>`
          WITH purged AS (DELETE FROM idempotency_records WHERE expires_at <= ${date(now)} RETURNING 1)
          SELECT count(*)::int AS purged FROM purged`)
        return rows[0]?.purged ?? 0
      })
    })
  }
)

export const layer: Layer.Layer<IdempotencyStore, never, SqlClient.SqlClient> = Layer.effect(IdempotencyStore, make)
