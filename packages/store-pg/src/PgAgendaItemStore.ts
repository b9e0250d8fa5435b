/**
 * AgendaItemStore on PostgreSQL: `agenda_items` and the private `talking_points` (per item and subject, which
 * go with their item through ON DELETE CASCADE). `sequence` is a `numeric` column, so lists order by its
 * value; it is answered in normalised form.
 */
import { AgendaItemId, AgendaItemRow, AgendaItemStore, MeetingId, normalizeSequence, Sequence, WorkspaceId } from "@convene/core"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { type Context, Effect, Layer, Option, Schema } from "effect"
import { orDie, page, recordTable, rowOf } from "./internal/sql.js"

/** A `numeric` column holding a sequence: read as text, answered normalised ("2.50" is "2.5"). */
const DbSequence = Schema.transform(Schema.String, Sequence, {
  strict: true,
  decode: (text) => normalizeSequence(text),
  encode: (sequence) => sequence
})

/** An `agenda_items` row, decoded to (and encoded from) an `AgendaItemRow`. */
export const AgendaItemRecord = rowOf(AgendaItemRow, { sequence: DbSequence })

/** Columns of `agenda_items`, with the sequence as text for both drivers. */
const columns = "id, workspace_id, meeting_id, title, description, item_type, sequence::text AS sequence, " +
  "presenters, created_at, updated_at"

export const make: Effect.Effect<Context.Tag.Service<typeof AgendaItemStore>, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const items = recordTable(sql, {
    table: "agenda_items",
    row: AgendaItemRecord,
    key: ["workspace_id", "id"],
    columns
  })
  const findByMeeting = SqlSchema.findAll({
    Request: Schema.Struct({ workspaceId: WorkspaceId, meetingId: MeetingId }),
    Result: AgendaItemRecord,
    execute: ({ meetingId, workspaceId }) =>
      sql`SELECT ${sql.literal(columns)} FROM agenda_items a
          WHERE a.workspace_id = ${workspaceId} AND a.meeting_id = ${meetingId}
          ORDER BY a.sequence ASC, a.created_at ASC, a.id ASC`
  })
  const findLastSequence = SqlSchema.findOne({
    Request: Schema.Struct({ workspaceId: WorkspaceId, meetingId: MeetingId }),
    Result: Schema.Struct({ sequence: DbSequence }),
    execute: ({ meetingId, workspaceId }) =>
      sql`SELECT a.sequence::text AS sequence FROM agenda_items a
          WHERE a.workspace_id = ${workspaceId} AND a.meeting_id = ${meetingId}
          ORDER BY a.sequence DESC LIMIT 1`
  })
  const findTalkingPoints = SqlSchema.findAll({
    Request: Schema.Struct({ itemIds: Schema.Array(AgendaItemId), subject: Schema.String }),
    Result: Schema.Struct({ agenda_item_id: AgendaItemId, points: Schema.Array(Schema.String) }),
    execute: ({ itemIds, subject }) =>
      sql`SELECT agenda_item_id, points FROM talking_points
          WHERE agenda_item_id = ANY(${itemIds}::uuid[]) AND subject = ${subject}`
  })

  return AgendaItemStore.of({
    insert: items.insert,
    update: items.update,
    get: (workspaceId, id) => items.find({ workspace_id: workspaceId, id }),
    delete: Effect.fnUntraced(function*(workspaceId, id) {
      const rows = yield* orDie(sql`DELETE FROM agenda_items WHERE workspace_id = ${workspaceId} AND id = ${id} RETURNING id`)
      return rows.length > 0
    }),
    deleteByMeeting: (workspaceId, meetingId) =>
      orDie(sql`DELETE FROM agenda_items WHERE workspace_id = ${workspaceId} AND meeting_id = ${meetingId}`).pipe(
        Effect.asVoid
      ),
    // Talking points go with their items (ON DELETE CASCADE).
    deleteByWorkspace: (workspaceId) =>
      orDie(sql`DELETE FROM agenda_items WHERE workspace_id = ${workspaceId}`).pipe(Effect.asVoid),
    removePresenter: (workspaceId, userId) =>
      orDie(sql`
        UPDATE agenda_items SET presenters = array_remove(presenters, ${userId}::text)
        WHERE workspace_id = ${workspaceId} AND ${userId}::text = ANY(presenters)`).pipe(Effect.asVoid),
    deleteTalkingPointsOf: (workspaceId, subject) =>
      orDie(sql`
        DELETE FROM talking_points t USING agenda_items a
        WHERE a.id = t.agenda_item_id AND a.workspace_id = ${workspaceId} AND t.subject = ${subject}`).pipe(Effect.asVoid),
    list: (workspaceId, filter, request) => {
      const conditions = [
        sql`a.workspace_id = ${workspaceId}`,
        ...(filter.meetingIds === undefined ? [] : [sql`a.meeting_id = ANY(${filter.meetingIds}::uuid[])`])
      ]
      return orDie(page(sql, {
        row: AgendaItemRecord,
        columns: sql.literal(columns),
        from: sql`FROM agenda_items a WHERE ${sql.and(conditions)}`,
        order: sql.literal("a.sequence ASC, a.created_at ASC, a.id ASC"),
        page: request
      }))
    },
    listByMeeting: (workspaceId, meetingId) => orDie(findByMeeting({ workspaceId, meetingId })),
    lastSequence: (workspaceId, meetingId) =>
      orDie(findLastSequence({ workspaceId, meetingId })).pipe(Effect.map(Option.map(({ sequence }) => sequence))),
    talkingPoints: Effect.fnUntraced(function*(itemIds, subject) {
      if (itemIds.length === 0) return new Map()
      const rows = yield* orDie(findTalkingPoints({ itemIds, subject }))
      return new Map(rows.filter(({ points }) => points.length > 0).map(({ agenda_item_id, points }) => [agenda_item_id, points]))
    }),
    setTalkingPoints: (itemId, subject, points) =>
      orDie(
        points.length === 0
          ? sql`DELETE FROM talking_points WHERE agenda_item_id = ${itemId} AND subject = ${subject}`
          : sql`INSERT INTO talking_points (agenda_item_id, subject, points)
                VALUES (${itemId}, ${subject}, ${points}::text[])
                ON CONFLICT (agenda_item_id, subject) DO UPDATE SET points = EXCLUDED.points`
      ).pipe(Effect.asVoid)
  })
})

export const layer: Layer.Layer<AgendaItemStore, never, SqlClient.SqlClient> = Layer.effect(AgendaItemStore, make)
