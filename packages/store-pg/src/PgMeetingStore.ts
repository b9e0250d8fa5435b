/**
 * MeetingStore on PostgreSQL: `meetings` with `participants` and `transcript_segments` (the meeting's own
 * aggregate, which go with it through ON DELETE CASCADE). What other ports keep on a meeting is deleted by
 * core first; the foreign keys refuse a meeting delete that would leave any of it behind.
 */
import {
  foldCase,
  Meeting,
  type MeetingFilter,
  MeetingId,
  type MeetingOrder,
  MeetingStore,
  ParticipantRow,
  TranscriptSegment,
  UserId,
  WorkspaceId
} from "@convene/core"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import type * as Statement from "@effect/sql/Statement"
import { type Context, DateTime, Effect, Layer, Schema } from "effect"
import { countsOf, orDie, page, recordTable, rowOf } from "./internal/sql.js"

/** A `meetings` row, decoded to (and encoded from) a `Meeting`. */
export const MeetingRecord = rowOf(Meeting, {})

/** A `participants` row, decoded to (and encoded from) a `ParticipantRow`. */
export const ParticipantRecord = rowOf(ParticipantRow, {})

/** A `transcript_segments` row (without its insertion number), offset_ms read as text (bigint). */
export const TranscriptSegmentRecord = rowOf(TranscriptSegment, {
  offset_ms: Schema.compose(Schema.NumberFromString, Schema.NonNegativeInt)
})

// The start_id orders read meetings_workspace_start_idx (workspace_id, start_time, created_at, id) forwards or
// backwards over the start_time range; equal start times are then put in id order (an incremental sort).
const orders: Record<MeetingOrder, string> = {
  created_desc: "m.created_at DESC, m.id DESC",
  start_asc: "m.start_time ASC NULLS LAST, m.created_at ASC, m.id ASC",
  start_id_asc: "m.start_time ASC NULLS LAST, m.id ASC",
  start_id_desc: "m.start_time DESC NULLS FIRST, m.id DESC"
}

const ScopedId = <A, I>(id: Schema.Schema<A, I>) => Schema.Struct({ workspaceId: WorkspaceId, id })

/** A MeetingFilter as a condition on `meetings m`: one SQL form per node, with MeetingFilter.matches' meaning. */
const condition = (sql: SqlClient.SqlClient, filter: MeetingFilter): Statement.Fragment => {
  const column = (field: "start_time" | "end_time") => sql(`m.${field}`)
  switch (filter._tag) {
    case "All":
      return sql`TRUE`
    case "And":
      return filter.filters.length === 0 ? sql`TRUE` : sql`(${sql.and(filter.filters.map((f) => condition(sql, f)))})`
    case "Or":
      return filter.filters.length === 0 ? sql`FALSE` : sql`(${sql.or(filter.filters.map((f) => condition(sql, f)))})`
    case "StatusIn":
      return sql`m.status = ANY(${filter.statuses}::text[])`
    case "HasParticipant":
      return sql`EXISTS (SELECT 1 FROM participants p WHERE p.meeting_id = m.id AND p.user_id = ${filter.userId})`
    case "TitleContains":
      return sql`strpos(m.title_folded, ${foldCase(filter.text)}) > 0`
    case "IsSet":
      return sql`${column(filter.field)} IS NOT NULL`
    case "IsUnset":
      return sql`${column(filter.field)} IS NULL`
    case "AtOrAfter":
      return sql`${column(filter.field)} >= ${DateTime.toDateUtc(filter.at)}`
    case "Before":
      return sql`${column(filter.field)} < ${DateTime.toDateUtc(filter.at)}`
  }
}

export /** The most transcript rows one INSERT carries (6 parameters a row, far under PostgreSQL's 65,535). */
const transcriptBatch = 1000

const make: Effect.Effect<Context.Tag.Service<typeof MeetingStore>, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const meetings = recordTable(sql, {
    table: "meetings",
    row: MeetingRecord,
    key: ["workspace_id", "id"],
    derived: (meeting) => ({ title_folded: foldCase(meeting.title) })
  })
  const participants = recordTable(sql, { table: "participants", row: ParticipantRecord, key: ["workspace_id", "id"] })

  const encodeParticipants = Schema.encode(Schema.Array(ParticipantRecord))
  const decodeParticipants = Schema.decodeUnknown(Schema.Array(ParticipantRecord))
  const findParticipants = SqlSchema.findAll({
    Request: ScopedId(MeetingId),
    Result: ParticipantRecord,
    execute: ({ id, workspaceId }) =>
      sql`SELECT * FROM participants WHERE workspace_id = ${workspaceId} AND meeting_id = ${id}
          ORDER BY created_at, id`
  })
  const findMeetingIds = SqlSchema.findAll({
    Request: Schema.Struct({ workspaceId: WorkspaceId, userId: UserId }),
    Result: Schema.Struct({ meeting_id: MeetingId }),
    execute: ({ userId, workspaceId }) =>
      sql`SELECT meeting_id FROM participants WHERE workspace_id = ${workspaceId} AND user_id = ${userId}`
  })

  const encodeSegments = Schema.encode(Schema.Array(TranscriptSegmentRecord))
  const findTranscript = SqlSchema.findAll({
    Request: ScopedId(MeetingId),
    Result: TranscriptSegmentRecord,
    execute: ({ id, workspaceId }) =>
      sql`SELECT meeting_id, offset_ms::text AS offset_ms, speaker, text, created_at FROM transcript_segments
          WHERE workspace_id = ${workspaceId} AND meeting_id = ${id}
          ORDER BY transcript_segments.offset_ms, seq`
  })

  return MeetingStore.of({
    insert: meetings.insert,
    update: meetings.update,
    get: (workspaceId, id) => meetings.find({ workspace_id: workspaceId, id }),
    delete: Effect.fnUntraced(function*(workspaceId, id) {
      const rows = yield* orDie(sql`DELETE FROM meetings WHERE workspace_id = ${workspaceId} AND id = ${id} RETURNING id`)
      return rows.length > 0
    }),
    // Participants and transcript segments go with their meetings (ON DELETE CASCADE).
    deleteByWorkspace: (workspaceId) =>
      orDie(sql`DELETE FROM meetings WHERE workspace_id = ${workspaceId}`).pipe(Effect.asVoid),
    countByWorkspace: (workspaceIds) =>
      countsOf(sql`
        SELECT workspace_id, count(*)::int AS count FROM meetings
        WHERE workspace_id = ANY(${workspaceIds}::uuid[])
        GROUP BY workspace_id`),
    detachOwner: (workspaceId, userId) =>
      orDie(sql`UPDATE meetings SET owner_user_id = NULL WHERE workspace_id = ${workspaceId} AND owner_user_id = ${userId}`)
        .pipe(Effect.asVoid),

    list: (workspaceId, filter, order, request) =>
      orDie(page(sql, {
        row: MeetingRecord,
        columns: sql`m.*`,
        from: sql`FROM meetings m WHERE m.workspace_id = ${workspaceId} AND ${condition(sql, filter)}`,
        order: sql.literal(orders[order]),
        page: request
      })),

    meetingIdsOf: (workspaceId, userId) =>
      orDie(findMeetingIds({ workspaceId, userId })).pipe(Effect.map((rows) => rows.map((row) => row.meeting_id))),

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
              AND (p.id = g.id OR p.user_id = g.user_id OR p.guest_email = g.guest_email)
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
    listParticipants: (workspaceId, meetingId) => orDie(findParticipants({ workspaceId, id: meetingId })),
    findParticipant: (workspaceId, meetingId, userId) =>
      participants.find({ workspace_id: workspaceId, meeting_id: meetingId, user_id: userId }),
    updateParticipant: participants.update,
    removeParticipant: Effect.fnUntraced(function*(workspaceId, id) {
      const rows = yield* orDie(sql`DELETE FROM participants WHERE workspace_id = ${workspaceId} AND id = ${id} RETURNING id`)
      return rows.length > 0
    }),
    removeUserParticipants: (workspaceId, userId) =>
      orDie(sql`DELETE FROM participants WHERE workspace_id = ${workspaceId} AND user_id = ${userId}`).pipe(Effect.asVoid),

    appendTranscript: Effect.fnUntraced(function*(workspaceId, segments) {
      if (segments.length === 0) return
      const encoded = yield* orDie(encodeSegments(segments))
      const rows = encoded.map((segment) => ({ workspace_id: workspaceId, ...segment }))
      // Multi-row INSERTs of at most `transcriptBatch` rows (a statement takes 65,535 parameters), in order and in one
      // transaction: atomic, and the identity column numbers the rows in the order given.
      const batches = Array.from({ length: Math.ceil(rows.length / transcriptBatch) }, (_, i) =>
        rows.slice(i * transcriptBatch, (i + 1) * transcriptBatch))
      yield* orDie(sql.withTransaction(
        Effect.forEach(batches, (batch) => sql`INSERT INTO transcript_segments ${sql.insert(batch)}`, { discard: true })
      ))
    }),
    transcript: (workspaceId, meetingId) => orDie(findTranscript({ workspaceId, id: meetingId }))
  })
})

export const layer: Layer.Layer<MeetingStore, never, SqlClient.SqlClient> = Layer.effect(MeetingStore, make)
