/** AttachmentStore on PostgreSQL: `attachments` (the bytes are in a BlobStore). */
import { AttachmentRow, AttachmentStore } from "@convene/core"
import * as SqlClient from "@effect/sql/SqlClient"
import { type Context, Effect, Layer } from "effect"
import { orDie, page, recordTable, rowOf } from "./internal/sql.js"

/** An `attachments` row, decoded to (and encoded from) an `AttachmentRow`. */
export const AttachmentRecord = rowOf(AttachmentRow, {})

const columns = "id, workspace_id, meeting_id, file_name, content_type, size, sha256, created_at"

export const make: Effect.Effect<Context.Tag.Service<typeof AttachmentStore>, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = recordTable(sql, { table: "attachments", row: AttachmentRecord, key: ["workspace_id", "id"], columns })

  return AttachmentStore.of({
    insert: rows.insert,
    get: (workspaceId, id) => rows.find({ workspace_id: workspaceId, id }),
    list: (workspaceId, meetingId, request) =>
      orDie(page(sql, {
        row: AttachmentRecord,
        columns: sql.literal(columns),
        from: sql`FROM attachments WHERE workspace_id = ${workspaceId} AND meeting_id = ${meetingId}`,
        order: sql.literal("created_at ASC, id ASC"),
        page: request
      })),
    delete: Effect.fnUntraced(function*(workspaceId, id) {
      const deleted = yield* orDie(sql`DELETE FROM attachments WHERE workspace_id = ${workspaceId} AND id = ${id} RETURNING id`)
      return deleted.length > 0
    }),
    deleteByMeeting: (workspaceId, meetingId) =>
      orDie(sql`DELETE FROM attachments WHERE workspace_id = ${workspaceId} AND meeting_id = ${meetingId}`).pipe(Effect.asVoid),
    deleteByWorkspace: (workspaceId) => orDie(sql`DELETE FROM attachments WHERE workspace_id = ${workspaceId}`).pipe(Effect.asVoid),
    existing: Effect.fnUntraced(function*(ids) {
      if (ids.length === 0) return new Set()
      const found = yield* orDie(sql<{ readonly id: string }>`SELECT id::text AS id FROM attachments WHERE id IN ${sql.in(ids)}`)
      const wanted = new Map(ids.map((id) => [id, id] as const))
      return new Set(found.flatMap(({ id }) => {
        const known = wanted.get(id as typeof ids[number])
        return known === undefined ? [] : [known]
      }))
    })
  })
})

export const layer: Layer.Layer<AttachmentStore, never, SqlClient.SqlClient> = Layer.effect(AttachmentStore, make)
