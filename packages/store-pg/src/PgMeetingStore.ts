/**
 * MeetingStore on PostgreSQL: `meetings` with `participants` and `transcript_segments`. Deleting a meeting
 * deletes its participants, transcript, agenda items (with their talking points) and action items through
 * the foreign keys' ON DELETE CASCADE.
 */
import {
  Meeting,
  MeetingId,
  type MeetingOrder,
  MeetingStore,
  ParticipantRow,
  TranscriptSegment,
  UserId,
  WorkspaceId
} from "@convene/core"
import { SqlClient, SqlSchema } from "@effect/sql"
import { type Context, DateTime, Effect, Layer, Schema } from "effect"
import { alreadyDecoded, DbTimestamp, DbTimestampOrNull, orDie, page } from "./internal/sql.js"

/** A `meetings` row, decoded to (and encoded from) a `Meeting`. */
export const MeetingRecord = Schema.transform(
  Schema.Struct({
    ...Meeting.fields,
    start_time: DbTimestampOrNull,
    end_time: DbTimestampOrNull,
    created_at: DbTimestamp,
    updated_at: DbTimestamp
  }),
  Schema.typeSchema(Meeting),
  { strict: true, decode: (row) => new Meeting(row, alreadyDecoded), encode: (meeting) => ({ ...meeting }) }
)

/** A `participants` row, decoded to (and encoded from) a `ParticipantRow`. */
export const ParticipantRecord = Schema.transform(
  Schema.Struct({ ...ParticipantRow.fields, created_at: DbTimestamp, updated_at: DbTimestamp }),
  Schema.typeSchema(ParticipantRow),
  { strict: true, decode: (row) => new ParticipantRow(row, alreadyDecoded), encode: (participant) => ({ ...participant }) }
)

/** A `transcript_segments` row (without its insertion number), offset_ms read as text (bigint). */
export const TranscriptSegmentRecord = Schema.transform(
  Schema.Struct({
    ...TranscriptSegment.fields,
    offset_ms: Schema.compose(Schema.NumberFromString, Schema.NonNegativeInt),
    created_at: DbTimestamp
  }),
  Schema.typeSchema(TranscriptSegment),
  { strict: true, decode: (row) => new TranscriptSegment(row, alreadyDecoded), encode: (segment) => ({ ...segment }) }
)

const orders: Record<MeetingOrder, string> = {
  created_desc: "m.created_at DESC, m.id DESC",
  start_asc: "m.start_time ASC NULLS LAST, m.created_at ASC, m.id ASC"
}

const ScopedId = <A, I>(id: Schema.Schema<A, I>) => Schema.Struct({ workspaceId: WorkspaceId, id })

export const make: Effect.Effect<Context.Tag.Service<typeof MeetingStore>, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insertRow = SqlSchema.void({
    Request: MeetingRecord,
    execute: (row) => sql`INSERT INTO meetings ${sql.insert(row)}`
  })
  const updateRow = SqlSchema.void({
    Request: MeetingRecord,
    execute: (row) =>
      sql`UPDATE meetings SET ${sql.update(row, ["id", "workspace_id"])}
          WHERE workspace_id = ${row.workspace_id} AND id = ${row.id}`
  })
  const findById = SqlSchema.findOne({
    Request: ScopedId(MeetingId),
    Result: MeetingRecord,
    execute: ({ id, workspaceId }) => sql`SELECT * FROM meetings WHERE workspace_id = ${workspaceId} AND id = ${id}`
  })

  const encodeParticipants = Schema.encode(Schema.Array(ParticipantRecord))
  const decodeParticipants = Schema.decodeUnknown(Schema.Array(ParticipantRecord))
  const findParticipants = SqlSchema.findAll({
    Request: ScopedId(MeetingId),
    Result: ParticipantRecord,
    execute: ({ id, workspaceId }) =>
      sql`SELECT * FROM participants WHERE workspace_id = ${workspaceId} AND meeting_id = ${id}
          ORDER BY created_at, id`
  })
  const findParticipant = SqlSchema.findOne({
    Request: Schema.Struct({ workspaceId: WorkspaceId, meetingId: MeetingId, userId: UserId }),
    Result: ParticipantRecord,
    execute: ({ meetingId, userId, workspaceId }) =>
      sql`SELECT * FROM participants
          WHERE workspace_id = ${workspaceId} AND meeting_id = ${meetingId} AND user_id = ${userId}`
  })
  const updateParticipant = SqlSchema.void({
    Request: ParticipantRecord,
    execute: (row) =>
      sql`UPDATE participants SET ${sql.update(row, ["id", "workspace_id"])}
          WHERE workspace_id = ${row.workspace_id} AND id = ${row.id}`
  })

  const encodeSegments = Schema.encode(Schema.Array(TranscriptSegmentRecord))
  const findTranscript = SqlSchema.findAll({
    Request: ScopedId(MeetingId),
    Result: TranscriptSegmentRecord,
    execute: ({ id, workspaceId }) =>
      sql`SELECT meeting_id, offset_ms::text AS offset_ms, speaker, text, created_at FROM transcript_segments
          WHERE workspace_id = ${workspaceId} AND meeting_id = ${id}
          ORDER BY offset_ms, seq`
  })

  return MeetingStore.of({
    insert: (meeting) => orDie(insertRow(meeting)),
    update: (meeting) => orDie(updateRow(meeting)),
    get: (workspaceId, id) => orDie(findById({ workspaceId, id })),
    delete: Effect.fnUntraced(function*(workspaceId, id) {
      const rows = yield* orDie(sql`DELETE FROM meetings WHERE workspace_id = ${workspaceId} AND id = ${id} RETURNING id`)
      return rows.length > 0
    }),

    list: (workspaceId, filter, order, request) => {
      const at = (instant: DateTime.Utc) => DateTime.toDateUtc(instant)
      const conditions = [
        sql`m.workspace_id = ${workspaceId}`,
        ...(filter.visibleTo === undefined ? [] : [
          sql`EXISTS (SELECT 1 FROM participants p WHERE p.meeting_id = m.id AND p.user_id = ${filter.visibleTo})`
        ]),
        ...(filter.titleContains === undefined ? [] : [
          sql`strpos(lower(m.title), lower(${filter.titleContains})) > 0`
        ]),
        ...(filter.statuses === undefined ? [] : [sql`m.status = ANY(${filter.statuses}::text[])`]),
        ...(filter.startFrom === undefined ? [] : [sql`m.start_time >= ${at(filter.startFrom)}`]),
        ...(filter.startBefore === undefined ? [] : [sql`m.start_time < ${at(filter.startBefore)}`]),
        ...(filter.notOverAt === undefined ? [] : [
          sql`m.start_time IS NOT NULL AND (m.end_time >= ${at(filter.notOverAt)} OR (m.end_time IS NULL AND (m.status = 'in_progress' OR m.start_time >= ${at(filter.notOverAt)})))`
        ])
      ]
      return orDie(page(sql, {
        row: MeetingRecord,
        columns: sql`m.*`,
        from: sql`FROM meetings m WHERE ${sql.and(conditions)}`,
        order: sql.literal(orders[order]),
        page: request
      }))
    },

    // ON CONFLICT DO NOTHING skips a person already on the meeting (the unique indexes on (meeting, user_id)
    // and (meeting, lower(guest_email))), also when a racing transaction just added them; the stored row of
    // each given person is then read back in one statement, in the order given.
    addParticipants: Effect.fnUntraced(function*(rows) {
      if (rows.length === 0) return []
      const encoded = yield* orDie(encodeParticipants(rows))
      const people = JSON.stringify(rows.map((row) => ({
        id: row.id,
        workspace_id: row.workspace_id,
        meeting_id: row.meeting_id,
        user_id: row.user_id,
        guest_email: row.guest_email
      })))
      const stored = yield* orDie(sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO participants ${sql.insert(encoded)} ON CONFLICT DO NOTHING`
        return yield* sql`
          SELECT p.* FROM ROWS FROM (
            jsonb_to_recordset(${people}::jsonb)
              AS (id uuid, workspace_id uuid, meeting_id uuid, user_id uuid, guest_email text)
          ) WITH ORDINALITY AS g(id, workspace_id, meeting_id, user_id, guest_email, ord)
          LEFT JOIN LATERAL (
            SELECT * FROM participants p
            WHERE p.workspace_id = g.workspace_id AND p.meeting_id = g.meeting_id
              AND (p.id = g.id OR p.user_id = g.user_id OR lower(p.guest_email) = lower(g.guest_email))
            ORDER BY (p.id = g.id) DESC, ((p.user_id = g.user_id) IS TRUE) DESC, p.created_at, p.id
            LIMIT 1
          ) p ON true
          ORDER BY g.ord`
      })))
      if (stored.some((row) => row.id === null)) {
        return yield* Effect.dieMessage("PgMeetingStore.addParticipants: a participant was neither added nor found")
      }
      return yield* orDie(decodeParticipants(stored))
    }),
    listParticipants: (workspaceId, meetingId) =>
      orDie(findParticipants({ workspaceId, id: meetingId }))
    ,
    findParticipant: (workspaceId, meetingId, userId) =>
      orDie(findParticipant({ workspaceId, meetingId, userId }))
    ,
    updateParticipant: (row) => orDie(updateParticipant(row)),
    removeParticipant: Effect.fnUntraced(function*(workspaceId, id) {
      const rows = yield* orDie(sql`DELETE FROM participants WHERE workspace_id = ${workspaceId} AND id = ${id} RETURNING id`)
      return rows.length > 0
    }),

    appendTranscript: Effect.fnUntraced(function*(workspaceId, segments) {
      if (segments.length === 0) return
      const encoded = yield* orDie(encodeSegments(segments))
      // One multi-row INSERT: atomic, and the identity column numbers the rows in the order given.
      yield* orDie(sql`INSERT INTO transcript_segments ${
        sql.insert(encoded.map((segment) => ({ workspace_id: workspaceId, ...segment })))
      }`)
    }),
    transcript: (workspaceId, meetingId) =>
      orDie(findTranscript({ workspaceId, id: meetingId }))
    
  })
})

export const layer: Layer.Layer<MeetingStore, never, SqlClient.SqlClient> = Layer.effect(MeetingStore, make)
