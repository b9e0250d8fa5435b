/** ActionItemStore on PostgreSQL: the `action_items` table (due_date a `date`, read back as YYYY-MM-DD). */
import { ActionItem, ActionItemId, ActionItemStore, WorkspaceId } from "@convene/core"
import { SqlClient, SqlSchema } from "@effect/sql"
import { type Context, Effect, Layer, Schema } from "effect"
import { alreadyDecoded, DbTimestamp, DbTimestampOrNull, orDie, page } from "./internal/sql.js"

/** An `action_items` row, decoded to (and encoded from) an `ActionItem`. */
export const ActionItemRecord = Schema.transform(
  Schema.Struct({
    ...ActionItem.fields,
    completed_at: DbTimestampOrNull,
    created_at: DbTimestamp,
    updated_at: DbTimestamp
  }),
  Schema.typeSchema(ActionItem),
  { strict: true, decode: (row) => new ActionItem(row, alreadyDecoded), encode: (item) => ({ ...item }) }
)

/** Columns of `action_items i`; the drivers would read a `date` as a local-midnight `Date`, so it comes as text. */
const columns = "i.id, i.workspace_id, i.meeting_id, i.agenda_item_id, i.assigned_to_user_id, i.title, i.description, " +
  "to_char(i.due_date, 'YYYY-MM-DD') AS due_date, i.status, i.is_completed, i.completed_at, i.created_at, i.updated_at"

export const make: Effect.Effect<Context.Tag.Service<typeof ActionItemStore>, never, SqlClient.SqlClient> = Effect.gen(
  function*() {
    const sql = yield* SqlClient.SqlClient

    const insertRow = SqlSchema.void({
      Request: ActionItemRecord,
      execute: (row) => sql`INSERT INTO action_items ${sql.insert(row)}`
    })
    const updateRow = SqlSchema.void({
      Request: ActionItemRecord,
      execute: (row) =>
        sql`UPDATE action_items SET ${sql.update(row, ["id", "workspace_id"])}
            WHERE workspace_id = ${row.workspace_id} AND id = ${row.id}`
    })
    const findById = SqlSchema.findOne({
      Request: Schema.Struct({ workspaceId: WorkspaceId, id: ActionItemId }),
      Result: ActionItemRecord,
      execute: ({ id, workspaceId }) =>
        sql`SELECT ${sql.literal(columns)} FROM action_items i WHERE i.workspace_id = ${workspaceId} AND i.id = ${id}`
    })

    return ActionItemStore.of({
      insert: (item) => orDie(insertRow(item)),
      update: (item) => orDie(updateRow(item)),
      get: (workspaceId, id) => orDie(findById({ workspaceId, id })),
      delete: Effect.fnUntraced(function*(workspaceId, id) {
        const rows = yield* orDie(
          sql`DELETE FROM action_items WHERE workspace_id = ${workspaceId} AND id = ${id} RETURNING id`
        )
        return rows.length > 0
      }),
      list: (workspaceId, filter, request) => {
        const conditions = [
          sql`i.workspace_id = ${workspaceId}`,
          ...(filter.meetingId === undefined ? [] : [sql`i.meeting_id = ${filter.meetingId}`]),
          ...(filter.status === undefined ? [] : [sql`i.status = ${filter.status}`]),
          ...(filter.visibleTo === undefined ? [] : [
            sql`EXISTS (SELECT 1 FROM participants p WHERE p.meeting_id = i.meeting_id AND p.user_id = ${filter.visibleTo})`
          ])
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
