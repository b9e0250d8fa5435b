/** CredentialStore on PostgreSQL: the `credentials` table, token_hash unique. */
import { Credential, type CredentialFilter, CredentialId, CredentialStore, UserId } from "@convene/core"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import type * as SqlError from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import { type Context, DateTime, Effect, Layer, Option, Schema } from "effect"
import { countsOf, orDie, page, recordTable, rowOf, uniqueWrite } from "./internal/sql.js"
import { joinedUser, UserRecord } from "./PgUserStore.js"

/** A `credentials` row, decoded to (and encoded from) a `Credential`. */
export const CredentialRecord = rowOf(Credential, {})

const DeletedIds = Schema.Array(Schema.Struct({ id: CredentialId }))

export const make: Effect.Effect<Context.Tag.Service<typeof CredentialStore>, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insertRow = SqlSchema.void({
    Request: CredentialRecord,
    execute: (row) => sql`INSERT INTO credentials ${sql.insert(row)}`
  })
  // The credential and its owner in one round trip.
  const decodeWithOwner = Schema.decodeUnknown(
    Schema.Struct({ credential: CredentialRecord, owner: Schema.OptionFromNullOr(UserRecord) })
  )
  const findWithOwner = (tokenHash: string) =>
    Effect.gen(function*() {
      const rows = yield* sql<Record<string, unknown>>`
        SELECT c.*, ${sql.literal(joinedUser.columns("u"))}
        FROM credentials c LEFT JOIN users u ON u.id = c.user_id
        WHERE c.token_hash = ${tokenHash}`
      if (rows[0] === undefined) return Option.none()
      const { row, user } = joinedUser.split(rows[0])
      return Option.some(yield* decodeWithOwner({ credential: row, owner: user }))
    })
  const credentials = recordTable(sql, { table: "credentials", row: CredentialRecord, key: ["id"] })
  const findByUser = SqlSchema.findAll({
    Request: UserId,
    Result: CredentialRecord,
    execute: (userId) => sql`SELECT * FROM credentials WHERE user_id = ${userId} ORDER BY created_at DESC, id DESC`
  })

  /** Live at `at`, as core's `isLive` says: not revoked, no expiry or one after `at`. */
  const liveAt = (at: DateTime.Utc): Statement.Fragment =>
    sql`c.revoked_at IS NULL AND (c.expires_at IS NULL OR c.expires_at > ${DateTime.toDateUtc(at)})`

  const conditions = (filter: CredentialFilter) => [
    sql`c.workspace_id = ${filter.workspaceId}`,
    ...(filter.userId === undefined ? [] : [sql`c.user_id = ${filter.userId}`]),
    ...(filter.kinds === undefined ? [] : [sql`c.kind = ANY(${filter.kinds}::text[])`]),
    liveAt(filter.liveAt)
  ]

  const deleted = (statement: Effect.Effect<ReadonlyArray<unknown>, SqlError.SqlError>) =>
    orDie(Effect.flatMap(statement, Schema.decodeUnknown(DeletedIds))).pipe(
      Effect.map((rows) => rows.map((row) => row.id))
    )

  return CredentialStore.of({
    insert: (credential) => uniqueWrite(sql, insertRow(credential)),
    findByHashWithOwner: (tokenHash) => orDie(findWithOwner(tokenHash)),
    get: (workspaceId, id) => credentials.find({ workspace_id: workspaceId, id }),
    listByUser: (userId) => orDie(findByUser(userId)),
    list: (filter, request) =>
      orDie(page(sql, {
        row: CredentialRecord,
        columns: sql`c.*`,
        from: sql`FROM credentials c WHERE ${sql.and(conditions(filter))}`,
        order: sql.literal("c.created_at DESC, c.id DESC"),
        page: request
      })),
    countLive: ({ kinds, liveAt: at, workspaceIds }) =>
      countsOf(sql`
        SELECT c.workspace_id, count(*)::int AS count FROM credentials c
        WHERE c.workspace_id = ANY(${workspaceIds}::uuid[]) AND c.kind = ANY(${kinds}::text[]) AND ${liveAt(at)}
        GROUP BY c.workspace_id`),
    revoke: Effect.fnUntraced(function*(id, at) {
      const rows = yield* orDie(sql`
        UPDATE credentials SET revoked_at = ${DateTime.toDateUtc(at)}
        WHERE id = ${id} AND revoked_at IS NULL
        RETURNING id`)
      return rows.length > 0
    }),
    deleteByUser: (userId) => deleted(sql`DELETE FROM credentials WHERE user_id = ${userId} RETURNING id`),
    deleteByWorkspace: (workspaceId) =>
      deleted(sql`DELETE FROM credentials WHERE workspace_id = ${workspaceId} RETURNING id`)
  })
})

export const layer: Layer.Layer<CredentialStore, never, SqlClient.SqlClient> = Layer.effect(CredentialStore, make)
