/**
 * AgendaItemStore on PostgreSQL: `agenda_items` and the private `talking_points` (per item and subject).
 * `sequence` is a `numeric` column, so lists order by its value; it is answered in normalised form.
 */
import { AgendaItemId, AgendaItemRow, AgendaItemStore, MeetingId, normalizeSequence, Sequence, WorkspaceId } from "@convene/core"
import { SqlClient, SqlSchema } from "@effect/sql"
import { type Context, Effect, Layer, Option, Schema } from "effect"
import { alreadyDecoded, DbTimestamp, orDie, page } from "./internal/sql.js"

/** A `numeric` column holding a sequence: read as text, answered normalised ("2.50" is "2.5"). */
const DbSequence = Schema.transform(Schema.String, Sequence, {
  strict: true,
  decode: (text) => normalizeSequence(text),
  encode: (sequence) => sequence
})

/** An `agenda_items` row, decoded to (and encoded from) an `AgendaItemRow`. */
export const AgendaItemRecord = Schema.transform(
  Schema.Struct({ ...AgendaItemRow.fields, sequence: DbSequence, created_at: DbTimestamp, updated_at: DbTimestamp }),
  Schema.typeSchema(AgendaItemRow),
  { strict: true, decode: (row) => new AgendaItemRow(row, alreadyDecoded), encode: (item) => ({ ...item }) }
)

/** Columns of `agenda_items a`, with the sequence as text for both drivers. */
const columns = "a.id, a.workspace_id, a.meeting_id, a.title, a.description, a.item_type, a.sequence::text AS sequence, " +
  "a.presenters, a.created_at, a.updated_at"

export const make: Effect.Effect<Context.Tag.Service<typeof AgendaItemStore>, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insertRow = SqlSchema.void({
    Request: AgendaItemRecord,
    execute: (row) => sql`INSERT INTO agenda_items ${sql.insert(row)}`
  })
  const updateRow = SqlSchema.void({
    Request: AgendaItemRecord,
    execute: (row) =>
      sql`UPDATE agenda_items SET ${sql.update(row, ["id", "workspace_id"])}
          WHERE workspace_id = ${row.workspace_id} AND id = ${row.id}`
  })
  const findById = SqlSchema.findOne({
    Request: Schema.Struct({ workspaceId: WorkspaceId, id: AgendaItemId }),
    Result: AgendaItemRecord,
    execute: ({ id, workspaceId }) =>
      sql`SELECT ${sql.literal(columns)} FROM agenda_items a WHERE a.workspace_id = ${workspaceId} AND a.id = ${id}`
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
    insert: (row) => orDie(insertRow(row)),
    update: (row) => orDie(updateRow(row)),
    get: (workspaceId, id) => orDie(findById({ workspaceId, id })),
    // Talking points go with the item (ON DELETE CASCADE); action items keep existing with agenda_item_id
    // null (ON DELETE SET NULL).
    delete: Effect.fnUntraced(function*(workspaceId, id) {
      const rows = yield* orDie(sql`DELETE FROM agenda_items WHERE workspace_id = ${workspaceId} AND id = ${id} RETURNING id`)
      return rows.length > 0
    }),
    list: (workspaceId, filter, request) => {
      const conditions = [
        sql`a.workspace_id = ${workspaceId}`,
        ...(filter.meetingId === undefined ? [] : [sql`a.meeting_id = ${filter.meetingId}`]),
        ...(filter.visibleTo === undefined ? [] : [
          sql`EXISTS (SELECT 1 FROM participants p WHERE p.meeting_id = a.meeting_id AND p.user_id = ${filter.visibleTo})`
        ])
      ]
      return orDie(page(sql, {
        row: AgendaItemRecord,
        columns: sql.literal(columns),
        from: sql`FROM agenda_items a WHERE ${sql.and(conditions)}`,
        order: sql.literal("a.sequence ASC, a.created_at ASC, a.id ASC"),
        page: request
      }))
    },
    lastSequence: (workspaceId, meetingId) =>
      orDie(findLastSequence({ workspaceId, meetingId })).pipe(
        Effect.map(Option.map(({ sequence }) => sequence))
      )
    ,
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
