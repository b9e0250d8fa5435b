import { Context, type DateTime, type Effect, type Option } from "effect"
import type { MeetingId, ParticipantId, UserId, WorkspaceId } from "../shared/Ids.js"
import type { Page, Slice } from "../shared/Pagination.js"
import type { Meeting, MeetingStatus, ParticipantRow, TranscriptSegment } from "./Meeting.js"

/** Which meetings a list reads. Every field narrows; absent fields do not filter. */
export interface MeetingFilter {
  /** Only meetings that have this user as a participant. */
  readonly visibleTo?: UserId | undefined
  /** Case-insensitive substring of the title. */
  readonly titleContains?: string | undefined
  readonly statuses?: ReadonlyArray<MeetingStatus> | undefined
  /** start_time >= this (meetings without a start time are excluded when set). */
  readonly startFrom?: DateTime.Utc | undefined
  /** start_time < this (meetings without a start time are excluded when set). */
  readonly startBefore?: DateTime.Utc | undefined
  /**
   * Meetings not over at this instant: with an end time, end_time >= it; without one, in progress or
   * starting at or after it. Meetings without a start time are excluded.
   */
  readonly notOverAt?: DateTime.Utc | undefined
}

/**
 * - `created_desc`: newest first (created_at desc, id desc)
 * - `start_asc`: soonest first (start_time asc, created_at asc, id asc)
 */
export type MeetingOrder = "created_desc" | "start_asc"

/**
 * Port: meetings with their participants and transcript (one aggregate). Every read and write is scoped
 * by workspace. Deleting a meeting deletes everything that hangs off it: participants, transcript,
 * agenda items (with their talking points) and action items.
 */
export class MeetingStore extends Context.Tag("@convene/core/MeetingStore")<MeetingStore, {
  readonly insert: (meeting: Meeting) => Effect.Effect<void>
  readonly update: (meeting: Meeting) => Effect.Effect<void>
  readonly get: (workspaceId: WorkspaceId, id: MeetingId) => Effect.Effect<Option.Option<Meeting>>
  readonly delete: (workspaceId: WorkspaceId, id: MeetingId) => Effect.Effect<boolean>
  readonly list: (
    workspaceId: WorkspaceId,
    filter: MeetingFilter,
    order: MeetingOrder,
    page: Page
  ) => Effect.Effect<Slice<Meeting>>

  /**
   * Adds participants, atomically and idempotently: a row whose person is already on the meeting (same
   * user_id, or same guest e-mail compared case-insensitively) is not added. Answers, for each given row
   * in order, the row that is stored for that person afterwards (the new one or the one already there).
   */
  readonly addParticipants: (rows: ReadonlyArray<ParticipantRow>) => Effect.Effect<ReadonlyArray<ParticipantRow>>
  /** All participants of the meeting, oldest first (created_at asc, id asc). */
  readonly listParticipants: (workspaceId: WorkspaceId, meetingId: MeetingId) => Effect.Effect<ReadonlyArray<ParticipantRow>>
  readonly findParticipant: (
    workspaceId: WorkspaceId,
    meetingId: MeetingId,
    userId: UserId
  ) => Effect.Effect<Option.Option<ParticipantRow>>
  readonly updateParticipant: (row: ParticipantRow) => Effect.Effect<void>
  readonly removeParticipant: (workspaceId: WorkspaceId, id: ParticipantId) => Effect.Effect<boolean>

  readonly appendTranscript: (workspaceId: WorkspaceId, segments: ReadonlyArray<TranscriptSegment>) => Effect.Effect<void>
  /** The transcript in order of offset_ms (then insertion order). */
  readonly transcript: (workspaceId: WorkspaceId, meetingId: MeetingId) => Effect.Effect<ReadonlyArray<TranscriptSegment>>
}>() {}
