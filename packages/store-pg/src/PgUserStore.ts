/** UserStore on PostgreSQL: the `users` table, e-mail unique case-insensitively (index on lower(email)). */
import { User, UserId, UserStore, WorkspaceId } from "@convene/core"
import { SqlClient, SqlSchema } from "@effect/sql"
import { type Context, Effect, Layer, Schema } from "effect"
import { alreadyDecoded, DbTimestamp, orDie, uniqueWrite } from "./internal/sql.js"

/** A `users` row, decoded to (and encoded from) a `User`. */
export const UserRecord = Schema.transform(
  Schema.Struct({ ...User.fields, created_at: DbTimestamp, updated_at: DbTimestamp }),
  Schema.typeSchema(User),
  { strict: true, decode: (row) => new User(row, alreadyDecoded), encode: (user) => ({ ...user }) }
)

export const make: Effect.Effect<Context.Tag.Service<typeof UserStore>, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insertRow = SqlSchema.void({
    Request: UserRecord,
    execute: (row) => sql`INSERT INTO users ${sql.insert(row)}`
  })
  const findById = SqlSchema.findOne({
    Request: UserId,
    Result: UserRecord,
    execute: (id) => sql`SELECT * FROM users WHERE id = ${id}`
  })
  const findMany = SqlSchema.findAll({
    Request: Schema.Struct({ workspaceId: WorkspaceId, ids: Schema.Array(UserId) }),
    Result: UserRecord,
    execute: ({ ids, workspaceId }) => sql`SELECT * FROM users WHERE workspace_id = ${workspaceId} AND id = ANY(${ids}::uuid[])`
  })
  const findByEmail = SqlSchema.findOne({
    Request: Schema.String,
    Result: UserRecord,
    execute: (email) => sql`SELECT * FROM users WHERE lower(email) = lower(${email})`
  })

  return UserStore.of({
    insert: (user) => uniqueWrite(sql, insertRow(user)),
    get: (id) => orDie(findById(id)),
    getMany: (workspaceId, ids) =>
      ids.length === 0 ? Effect.succeed([]) : orDie(findMany({ workspaceId, ids }))
    ,
    findByEmail: (email) => orDie(findByEmail(email.trim()))
  })
})

export const layer: Layer.Layer<UserStore, never, SqlClient.SqlClient> = Layer.effect(UserStore, make)
