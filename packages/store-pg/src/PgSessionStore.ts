/**
 * SessionStore on PostgreSQL: `sessions` (token_hash unique) and `sign_in_failures`, one row per counted
 * sign-in attempt and key (with the attempt's id since 0012), counted by key and time.
 *
 * An attempt is counted under transaction-scoped advisory locks on its keys, taken in a fixed order: a second
 * attempt on the same account or address waits for the first to commit, then counts it. (Counting and inserting
 * in one statement would not do: under READ COMMITTED, statements running at the same time do not see each
 * other's rows, so each would find room under the limit.)
 */
import { Session, SessionStore, Span } from "@convene/core"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { type Context, DateTime, Effect, Layer, Option, Schema } from "effect"
import { orDie, rowOf, uniqueWrite } from "./internal/sql.js"
import { joinedUser, UserRecord } from "./PgUserStore.js"

/** A `sessions` row, decoded to (and encoded from) a `Session`. */
export const SessionRecord = rowOf(Session, {})

const FailureCounts = Schema.Array(Schema.Struct({ key: Schema.String, count: Schema.Int }))

/** The advisory lock space of sign-in attempts (the second key is the attempt key's hash). */
const lockSpace = 0x636e7369 // "cnsi"

export const make: Effect.Effect<Context.Tag.Service<typeof SessionStore>, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const date = DateTime.toDateUtc

  const insertRow = SqlSchema.void({
    Request: SessionRecord,
    execute: (row) => sql`INSERT INTO sessions ${sql.insert(row)}`
  })
  // The session and its user in one round trip.
  const decodeWithUser = Schema.decodeUnknown(
    Schema.Struct({ session: SessionRecord, user: Schema.OptionFromNullOr(UserRecord) })
  )
  const findWithUser = (tokenHash: string) =>
    Effect.gen(function*() {
      const rows = yield* sql<Record<string, unknown>>`
        SELECT s.*, ${sql.literal(joinedUser.columns("u"))}
        FROM sessions s LEFT JOIN users u ON u.id = s.user_id
        WHERE s.token_hash = ${tokenHash}`
      if (rows[0] === undefined) return Option.none()
      const { row, user } = joinedUser.split(rows[0])
      return Option.some(yield* decodeWithUser({ session: row, user }))
    })
  const countFailures = (keys: ReadonlyArray<string>, since: DateTime.Utc) =>
    Effect.flatMap(
      sql`
        SELECT key, count(*)::int AS count FROM sign_in_failures
        WHERE key = ANY(${keys}::text[]) AND at >= ${date(since)}
        GROUP BY key`,
      Schema.decodeUnknown(FailureCounts)
    )

  return SessionStore.of({
    insert: (session) => uniqueWrite(sql, insertRow(session)),
    findByHash: (tokenHash) => orDie(findWithUser(tokenHash)),
    revoke: (id, at) =>
      orDie(sql`UPDATE sessions SET revoked_at = ${date(at)} WHERE id = ${id} AND revoked_at IS NULL`).pipe(Effect.asVoid),
    purge: (before) =>
      orDie(sql`DELETE FROM sessions WHERE expires_at < ${date(before)} OR revoked_at < ${date(before)}`).pipe(
        Effect.asVoid
      ),
    deleteByUser: (userId) => orDie(sql`DELETE FROM sessions WHERE user_id = ${userId}`).pipe(Effect.asVoid),
    deleteByWorkspace: (workspaceId) =>
      orDie(sql`DELETE FROM sessions WHERE workspace_id = ${workspaceId}`).pipe(Effect.asVoid),

    recordAttempt: ({ at, id, limits, since }) =>
      sql.withTransaction(Effect.gen(function*() {
        const keys = [...new Set(limits.map(({ key }) => key))].sort()
        if (keys.length === 0) return true
        for (const key of keys) yield* sql`SELECT pg_advisory_xact_lock(${lockSpace}, hashtext(${key}))`
        const counts = new Map((yield* countFailures(keys, since)).map((row) => [row.key, row.count]))
        if (limits.some(({ key, limit }) => (counts.get(key) ?? 0) >= limit)) return false
        yield* sql`
          INSERT INTO sign_in_failures (key, at, attempt)
          SELECT key, ${date(at)}::timestamptz, ${id}::uuid FROM unnest(${keys}::text[]) AS key`
        return true
      })).pipe(orDie, Span.withSpan("PgSessionStore.recordAttempt")),
    forgetAttempt: (id) => orDie(sql`DELETE FROM sign_in_failures WHERE attempt = ${id}::uuid`).pipe(Effect.asVoid),
    failuresSince: (keys, since) =>
      keys.length === 0
        ? Effect.succeed(new Map())
        : orDie(countFailures(keys, since)).pipe(Effect.map((rows) => new Map(rows.map((row) => [row.key, row.count])))),
    clearFailures: (key) => orDie(sql`DELETE FROM sign_in_failures WHERE key = ${key}`).pipe(Effect.asVoid),
    purgeFailures: (before) => orDie(sql`DELETE FROM sign_in_failures WHERE at < ${date(before)}`).pipe(Effect.asVoid)
  })
})

export const layer: Layer.Layer<SessionStore, never, SqlClient.SqlClient> = Layer.effect(SessionStore, make)
