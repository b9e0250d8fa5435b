/** WorkspaceStore on PostgreSQL: the `workspaces` table and the `workspace_usage` counters. */
import { Workspace, WorkspaceId, WorkspaceStore } from "@convene/core"
import { SqlClient, SqlSchema } from "@effect/sql"
import { type Context, Effect, Layer, Schema } from "effect"
import { alreadyDecoded, DbTimestamp, orDie } from "./internal/sql.js"

/** A `workspaces` row, decoded to (and encoded from) a `Workspace`. */
export const WorkspaceRecord = Schema.transform(
  Schema.Struct({ ...Workspace.fields, created_at: DbTimestamp, updated_at: DbTimestamp }),
  Schema.typeSchema(Workspace),
  { strict: true, decode: (row) => new Workspace(row, alreadyDecoded), encode: (workspace) => ({ ...workspace }) }
)

export const make: Effect.Effect<Context.Tag.Service<typeof WorkspaceStore>, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insertRow = SqlSchema.void({
    Request: WorkspaceRecord,
    execute: (row) => sql`INSERT INTO workspaces ${sql.insert(row)}`
  })
  const updateRow = SqlSchema.void({
    Request: WorkspaceRecord,
    execute: (row) => sql`UPDATE workspaces SET ${sql.update(row, ["id"])} WHERE id = ${row.id}`
  })
  const findById = SqlSchema.findOne({
    Request: WorkspaceId,
    Result: WorkspaceRecord,
    execute: (id) => sql`SELECT * FROM workspaces WHERE id = ${id}`
  })

  return WorkspaceStore.of({
    insert: (workspace) => orDie(insertRow(workspace)),
    update: (workspace) => orDie(updateRow(workspace)),
    get: (id) => orDie(findById(id)),
    // One statement: the row lock of the upsert serialises racing callers, and the conditional update (or the
    // guarded insert, for a limit below one) never takes a unit past `limit`.
    consume: Effect.fnUntraced(function*({ counter, limit, period, workspaceId }) {
      const rows = yield* orDie(sql`
        INSERT INTO workspace_usage (workspace_id, counter, period, used)
        SELECT ${workspaceId}::uuid, ${counter}::text, ${period}::text, 1
        WHERE ${limit}::numeric >= 1
        ON CONFLICT (workspace_id, counter, period)
        DO UPDATE SET used = workspace_usage.used + 1
        WHERE workspace_usage.used < ${limit}::numeric
        RETURNING used`)
      return rows.length > 0
    })
  })
})

export const layer: Layer.Layer<WorkspaceStore, never, SqlClient.SqlClient> = Layer.effect(WorkspaceStore, make)
