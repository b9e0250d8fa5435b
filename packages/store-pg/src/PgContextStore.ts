/**
 * ContextStore on PostgreSQL: `context_items`, each row with its scrubbed text in the `text` column. Lists
 * select every column but the text; the text is read alone (ContextStore.text).
 */
import { ContextItemId, ContextItemRow, ContextStore, WorkspaceId } from "@convene/core"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { type Context, Effect, Layer, Option, Schema } from "effect"
import { orDie, page, recordTable, rowOf } from "./internal/sql.js"

/** A `context_items` row without its text, decoded to (and encoded from) a `ContextItemRow`. */
export const ContextItemRecord = rowOf(ContextItemRow, {})

const columns = "id, workspace_id, meeting_id, kind, file_name, content_type, size, created_at"

export const make: Effect.Effect<Context.Tag.Service<typeof ContextStore>, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const items = recordTable(sql, { table: "context_items", row: ContextItemRecord, key: ["workspace_id", "id"], columns })
  const insert = SqlSchema.void({
    Request: Schema.Struct({ row: ContextItemRecord, text: Schema.String }),
    execute: ({ row, text }) => sql`INSERT INTO context_items ${sql.insert({ ...row, text })}`
  })
  const findText = SqlSchema.findOne({
    Request: Schema.Struct({ workspaceId: WorkspaceId, id: ContextItemId }),
    Result: Schema.Struct({ text: Schema.String }),
    execute: ({ id, workspaceId }) => sql`SELECT text FROM context_items WHERE workspace_id = ${workspaceId} AND id = ${id}`
  })

  return ContextStore.of({
    insert: (row, text) => orDie(insert({ row, text })),
    get: (workspaceId, id) => items.find({ workspace_id: workspaceId, id }),
    text: (workspaceId, id) => orDie(findText({ workspaceId, id })).pipe(Effect.map(Option.map(({ text }) => text))),
    list: (workspaceId, meetingId, request) =>
      orDie(page(sql, {
        row: ContextItemRecord,
        columns: sql.literal(columns),
        from: sql`FROM context_items WHERE workspace_id = ${workspaceId} AND meeting_id = ${meetingId}`,
        order: sql.literal("created_at ASC, id ASC"),
        page: request
      })),
    delete: Effect.fnUntraced(function*(workspaceId, id) {
      const rows = yield* orDie(sql`DELETE FROM context_items WHERE workspace_id = ${workspaceId} AND id = ${id} RETURNING id`)
      return rows.length > 0
    }),
    deleteByMeeting: (workspaceId, meetingId) =>
      orDie(sql`DELETE FROM context_items WHERE workspace_id = ${workspaceId} AND meeting_id = ${meetingId}`).pipe(
        Effect.asVoid
      ),
    deleteByWorkspace: (workspaceId) => orDie(sql`DELETE FROM context_items WHERE workspace_id = ${workspaceId}`).pipe(Effect.asVoid)
  })
})

export const layer: Layer.Layer<ContextStore, never, SqlClient.SqlClient> = Layer.effect(ContextStore, make)
