/** UserStore on PostgreSQL: the `users` table, e-mail unique (core keeps addresses normalised). */
import { User, UserId, UserStore, WorkspaceId } from "@convene/core"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { type Context, Effect, Layer, Schema } from "effect"
import { countsOf, orDie, page, recordTable, rowOf, uniqueWrite } from "./internal/sql.js"

/** A `users` row, decoded to (and encoded from) a `User`. */
export const UserRecord = rowOf(User, {})

const userColumns = ["id", "workspace_id", "email", "name", "role", "password_hash", "created_at", "updated_at"]
const joinedPrefix = "joined_user_"

/**
 * A row of another table read with its user in one statement (`LEFT JOIN users <alias>`): `columns` selects
 * the user's columns under a prefix no other table's column has, and `split` takes them off the row again
 * (the user is null when the join found none).
 */
export const joinedUser = {
  columns: (alias: string): string => userColumns.map((column) => `${alias}.${column} AS ${joinedPrefix}${column}`).join(", "),
  split: (row: Readonly<Record<string, unknown>>): { readonly row: Record<string, unknown>; readonly user: Record<string, unknown> | null } => {
    const rest: Record<string, unknown> = {}
    const user: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(row)) {
      if (key.startsWith(joinedPrefix)) user[key.slice(joinedPrefix.length)] = value
      else rest[key] = value
    }
    return { row: rest, user: user.id === null || user.id === undefined ? null : user }
  }
}

export const make: Effect.Effect<Context.Tag.Service<typeof UserStore>, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const users = recordTable(sql, { table: "users", row: UserRecord, key: ["id"] })
  const insertRow = SqlSchema.void({
    Request: UserRecord,
    execute: (row) => sql`INSERT INTO users ${sql.insert(row)}`
  })
  const updateRow = SqlSchema.void({
    Request: UserRecord,
    execute: (row) => sql`UPDATE users SET ${sql.update(row, ["id"])} WHERE id = ${row.id}`
  })
  const findMany = SqlSchema.findAll({
    Request: Schema.Struct({ workspaceId: WorkspaceId, ids: Schema.Array(UserId) }),
    Result: UserRecord,
    execute: ({ ids, workspaceId }) => sql`SELECT * FROM users WHERE workspace_id = ${workspaceId} AND id = ANY(${ids}::uuid[])`
  })

  return UserStore.of({
    // The e-mail index may refuse the row: that is DuplicateKey, not a defect.
    insert: (user) => uniqueWrite(sql, insertRow(user)),
    update: (user) => uniqueWrite(sql, updateRow(user)),
    get: (id) => users.find({ id }),
    getMany: (workspaceId, ids) => ids.length === 0 ? Effect.succeed([]) : orDie(findMany({ workspaceId, ids })),
    findByEmail: (email) => users.find({ email }),
    list: (filter, request) =>
      orDie(page(sql, {
        row: UserRecord,
        columns: sql`u.*`,
        from: sql`FROM users u WHERE ${
          sql.and([
            filter.workspaceId === undefined ? sql`true` : sql`u.workspace_id = ${filter.workspaceId}`,
            filter.role === undefined ? sql`true` : sql`u.role = ${filter.role}`
          ])
        }`,
        order: sql.literal("u.created_at DESC, u.id DESC"),
        page: request
      })),
    countByWorkspace: (workspaceIds) =>
      countsOf(sql`
        SELECT workspace_id, count(*)::int AS count FROM users
        WHERE workspace_id = ANY(${workspaceIds}::uuid[])
        GROUP BY workspace_id`),
    delete: Effect.fnUntraced(function*(id) {
      const rows = yield* orDie(sql`DELETE FROM users WHERE id = ${id} RETURNING id`)
      return rows.length > 0
    }),
    deleteByWorkspace: (workspaceId) =>
      orDie(sql`DELETE FROM users WHERE workspace_id = ${workspaceId}`).pipe(Effect.asVoid)
  })
})

export const layer: Layer.Layer<UserStore, never, SqlClient.SqlClient> = Layer.effect(UserStore, make)
