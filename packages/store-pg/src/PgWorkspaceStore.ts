/** WorkspaceStore on PostgreSQL: the `workspaces` table and the `workspace_usage` counters. */
import { Workspace, WorkspaceStore } from "@convene/core"
import * as SqlClient from "@effect/sql/SqlClient"
import { type Context, Effect, Layer } from "effect"
import { orDie, page, recordTable, rowOf } from "./internal/sql.js"

/** A `workspaces` row, decoded to (and encoded from) a `Workspace`. */
export const WorkspaceRecord = rowOf(Workspace, {})

export const make: Effect.Effect<Context.Tag.Service<typeof WorkspaceStore>, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const workspaces = recordTable(sql, { table: "workspaces", row: WorkspaceRecord, key: ["id"] })

  return WorkspaceStore.of({
    insert: workspaces.insert,
    update: workspaces.update,
    get: (id) => workspaces.find({ id }),
    // The row lock lasts until the transaction ends (and is released at once outside one).
    lock: (id) => orDie(sql`SELECT 1 FROM workspaces WHERE id = ${id} FOR UPDATE`).pipe(Effect.asVoid),
    // FOR KEY SHARE conflicts with FOR UPDATE (and with the DELETE) only: inserts into one workspace do not wait
    // for one another, and one that waited for a deletion finds no row.
    share: (id) =>
      orDie(sql`SELECT 1 FROM workspaces WHERE id = ${id} FOR KEY SHARE`).pipe(Effect.map((rows) => rows.length > 0)),
    list: (request) =>
      orDie(page(sql, {
        row: WorkspaceRecord,
        columns: sql`w.*`,
        from: sql`FROM workspaces w`,
        order: sql.literal("w.created_at DESC, w.id DESC"),
        page: request
      })),
    // The usage counters are the workspace's own rows: they go with it.
    delete: Effect.fnUntraced(function*(id) {
      const rows = yield* orDie(sql`
        WITH usage AS (DELETE FROM workspace_usage WHERE workspace_id = ${id})
        DELETE FROM workspaces WHERE id = ${id} RETURNING id`)
      return rows.length > 0
    }),
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
