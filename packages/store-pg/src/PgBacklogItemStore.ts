/**
 * BacklogItemStore on PostgreSQL: `backlog_items` (open and closed items in one table) and the private
 * `backlog_talking_points` (per item and subject, which go with their item through ON DELETE CASCADE). An update
 * is one statement guarded by `status = 'open'`: of two transactions racing on one item, the second waits for the
 * first's row lock, then finds the item closed and changes nothing.
 */
import { BacklogItemId, BacklogItemRow, BacklogItemStore } from "@convene/core"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { type Context, Effect, Layer, Schema } from "effect"
import { orDie, page, recordTable, rowOf } from "./internal/sql.js"

/** A `backlog_items` row, decoded to (and encoded from) a `BacklogItemRow`. */
export const BacklogItemRecord = rowOf(BacklogItemRow, {})

const columns = "id, workspace_id, title, description, presenters, status, created_at, updated_at, assigned_at, " +
  "destination_meeting_id, deleted_at"

export const make: Effect.Effect<Context.Tag.Service<typeof BacklogItemStore>, never, SqlClient.SqlClient> = Effect.gen(
  function*() {
    const sql = yield* SqlClient.SqlClient

    const items = recordTable(sql, {
      table: "backlog_items",
      row: BacklogItemRecord,
      key: ["workspace_id", "id"],
      columns
    })
    const updateOpen = SqlSchema.findAll({
      Request: BacklogItemRecord,
      Result: Schema.Struct({ id: BacklogItemId }),
      execute: (row) =>
        sql`UPDATE backlog_items SET ${sql.update(row, ["workspace_id", "id"])}
            WHERE workspace_id = ${row.workspace_id} AND id = ${row.id} AND status = 'open'
            RETURNING id`
    })
    const findTalkingPoints = SqlSchema.findAll({
      Request: Schema.Struct({ itemIds: Schema.Array(BacklogItemId), subject: Schema.String }),
      Result: Schema.Struct({ backlog_item_id: BacklogItemId, points: Schema.Array(Schema.String) }),
      execute: ({ itemIds, subject }) =>
        sql`SELECT backlog_item_id, points FROM backlog_talking_points
            WHERE backlog_item_id = ANY(${itemIds}::uuid[]) AND subject = ${subject}`
    })
    const findEveryonesPoints = SqlSchema.findAll({
      Request: BacklogItemId,
      Result: Schema.Struct({ subject: Schema.String, points: Schema.Array(Schema.String) }),
      execute: (itemId) =>
        sql`SELECT subject, points FROM backlog_talking_points WHERE backlog_item_id = ${itemId} ORDER BY subject`
    })

    return BacklogItemStore.of({
      insert: items.insert,
      update: (row) => Effect.map(orDie(updateOpen(row)), (rows) => rows.length > 0),
      get: (workspaceId, id) => items.find({ workspace_id: workspaceId, id }),
      listOpen: (workspaceId, request) =>
        orDie(page(sql, {
          row: BacklogItemRecord,
          columns: sql.literal(columns),
          from: sql`FROM backlog_items WHERE workspace_id = ${workspaceId} AND status = 'open'`,
          order: sql.literal("created_at ASC, id ASC"),
          page: request
        })),
      listClosed: (workspaceId, request) =>
        orDie(page(sql, {
          row: BacklogItemRecord,
          columns: sql.literal(columns),
          from: sql`FROM backlog_items WHERE workspace_id = ${workspaceId} AND status <> 'open'`,
          order: sql.literal("coalesce(assigned_at, deleted_at) DESC, id DESC"),
          page: request
        })),
      // Talking points go with their items (ON DELETE CASCADE).
      deleteByWorkspace: (workspaceId) =>
        orDie(sql`DELETE FROM backlog_items WHERE workspace_id = ${workspaceId}`).pipe(Effect.asVoid),
      removePresenter: (workspaceId, userId) =>
        orDie(sql`
          UPDATE backlog_items SET presenters = array_remove(presenters, ${userId}::text)
          WHERE workspace_id = ${workspaceId} AND ${userId}::text = ANY(presenters)`).pipe(Effect.asVoid),
      talkingPoints: Effect.fnUntraced(function*(itemIds, subject) {
        if (itemIds.length === 0) return new Map()
        const rows = yield* orDie(findTalkingPoints({ itemIds, subject }))
        return new Map(rows.filter(({ points }) => points.length > 0).map(({ backlog_item_id, points }) => [backlog_item_id, points]))
      }),
      talkingPointsOfEveryone: Effect.fnUntraced(function*(itemId) {
        const rows = yield* orDie(findEveryonesPoints(itemId))
        return new Map(rows.filter(({ points }) => points.length > 0).map(({ points, subject }) => [subject, points]))
      }),
      setTalkingPoints: (itemId, subject, points) =>
        orDie(
          points.length === 0
            ? sql`DELETE FROM backlog_talking_points WHERE backlog_item_id = ${itemId} AND subject = ${subject}`
            : sql`INSERT INTO backlog_talking_points (backlog_item_id, subject, points)
                  VALUES (${itemId}, ${subject}, ${points}::text[])
                  ON CONFLICT (backlog_item_id, subject) DO UPDATE SET points = EXCLUDED.points`
        ).pipe(Effect.asVoid),
      deleteTalkingPointsOf: (workspaceId, subject) =>
        orDie(sql`
          DELETE FROM backlog_talking_points t USING backlog_items b
          WHERE b.id = t.backlog_item_id AND b.workspace_id = ${workspaceId} AND t.subject = ${subject}`).pipe(
            Effect.asVoid
          )
    })
  }
)

export const layer: Layer.Layer<BacklogItemStore, never, SqlClient.SqlClient> = Layer.effect(BacklogItemStore, make)
