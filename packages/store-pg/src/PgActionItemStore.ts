/** ActionItemStore on PostgreSQL: the `action_items` table (due_date a `date`, read back as YYYY-MM-DD). */
import { ActionItem, ActionItemStore } from "@convene/core"
import * as SqlClient from "@effect/sql/SqlClient"
import { type Context, Effect, Layer } from "effect"
import { orDie, page, recordTable, rowOf } from "./internal/sql.js"

/** An `action_items` row, decoded to (and encoded from) an `ActionItem`. */
export const ActionItemRecord = rowOf(ActionItem, {})

/** Columns of `action_items`; the drivers would read a `date` as a local-midnight `Date`, so it comes as text. */
const columns = "id, workspace_id, meeting_id, agenda_item_id, assigned_to_user_id, title, description, " +
  "to_char(due_date, 'YYYY-MM-DD') AS due_date, status, is_completed, completed_at, created_at, updated_at"

export const make: Effect.Effect<Context.Tag.Service<typeof ActionItemStore>, never, SqlClient.SqlClient> = Effect.gen(
  function*() {
    const sql = yield* SqlClient.SqlClient

    const items = recordTable(sql, {
      table: "action_items",
      row: ActionItemRecord,
      key: ["workspace_id", "id"],
      columns
    })

    return ActionItemStore.of({
      insert: items.insert,
      update: items.update,
      get: (workspaceId, id) => items.find({ workspace_id: workspaceId, id }),
      delete: Effect.fnUntraced(function*(workspaceId, id) {
        const rows = yield* orDie(
          sql`DELETE FROM action_items WHERE workspace_id = ${workspaceId} AND id = ${id} RETURNING id`
        )
        return rows.length > 0
      }),
      deleteByMeeting: (workspaceId, meetingId) =>
        orDie(sql`DELETE FROM action_items WHERE workspace_id = ${workspaceId} AND meeting_id = ${meetingId}`).pipe(
          Effect.asVoid
        ),
      deleteByWorkspace: (workspaceId) =>
        orDie(sql`DELETE FROM action_items WHERE workspace_id = ${workspaceId}`).pipe(Effect.asVoid),
      unassignUser: (workspaceId, userId) =>
        orDie(sql`
          UPDATE action_items SET assigned_to_user_id = NULL
          WHERE workspace_id = ${workspaceId} AND assigned_to_user_id = ${userId}`).pipe(Effect.asVoid),
      detachAgendaItem: (workspaceId, agendaItemId) =>
        orDie(sql`
          UPDATE action_items SET agenda_item_id = NULL
          WHERE workspace_id = ${workspaceId} AND agenda_item_id = ${agendaItemId}`).pipe(Effect.asVoid),
      list: (workspaceId, filter, request) => {
        const conditions = [
          sql`i.workspace_id = ${workspaceId}`,
          ...(filter.meetingIds === undefined ? [] : [sql`i.meeting_id = ANY(${filter.meetingIds}::uuid[])`]),
          ...(filter.status === undefined ? [] : [sql`i.status = ${filter.status}`])
        ]
        return orDie(page(sql, {
          row: ActionItemRecord,
          columns: sql.literal(columns),
          from: sql`FROM action_items i WHERE ${sql.and(conditions)}`,
          order: sql.literal("i.created_at DESC, i.id DESC"),
          page: request
        }))
      }
    })
  }
)

export const layer: Layer.Layer<ActionItemStore, never, SqlClient.SqlClient> = Layer.effect(ActionItemStore, make)
