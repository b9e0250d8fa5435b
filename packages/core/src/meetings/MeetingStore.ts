import { Context, type Effect, type Option } from "effect"
import type { MeetingId, ParticipantId, UserId, WorkspaceId } from "../shared/Ids.js"
import type { Page, Slice } from "../shared/Pagination.js"
import type { Meeting, ParticipantRow, TranscriptSegment } from "./Meeting.js"
import type { MeetingFilter } from "./MeetingFilter.js"

/**
 * - `created_desc`: newest first (created_at desc, id desc)
 * - `start_asc`: soonest first (start_time asc, created_at asc, id asc)
 * - `start_id_asc`: soonest first, ties by id (start_time asc, id asc): the calendar's order
 * - `start_id_desc`: latest first, ties by id descending (start_time desc, id desc): the calendar's other order
 *
 * Core asks for the orders on start_time only of meetings that have one; where the others would sort is not
 * part of the contract.
 */
export type MeetingOrder = "created_desc" | "start_asc" | "start_id_asc" | "start_id_desc"

/**
 * Port: meetings with their participants and transcript (one aggregate). Every read and write is scoped
 * by workspace. What other ports keep on a meeting (agenda items, action items) is theirs: core deletes it
 * before it deletes the meeting (see MeetingContents).
 */
export class MeetingStore extends Context.Tag("@convene/core/MeetingStore")<MeetingStore, {
  readonly insert: (meeting: Meeting) => Effect.Effect<void>
  readonly update: (meeting: Meeting) => Effect.Effect<void>
  readonly get: (workspaceId: WorkspaceId, id: MeetingId) => Effect.Effect<Option.Option<Meeting>>
  /** Deletes the meeting with its participants and transcript; answers whether it existed. */
  readonly delete: (workspaceId: WorkspaceId, id: MeetingId) => Effect.Effect<boolean>
  /** Deletes every meeting of the workspace with their participants and transcripts. */
  readonly deleteByWorkspace: (workspaceId: WorkspaceId) => Effect.Effect<void>
  /** How many meetings each of the given workspaces has (a workspace without any may be absent). */
  readonly countByWorkspace: (workspaceIds: ReadonlyArray<WorkspaceId>) => Effect.Effect<ReadonlyMap<WorkspaceId, number>>
  /** Sets `owner_user_id` to null on every meeting of the workspace the user owns (nothing else changes). */
  readonly detachOwner: (workspaceId: WorkspaceId, userId: UserId) => Effect.Effect<void>
  /** A page of the meetings that pass `filter` (see MeetingFilter for what each node means), in `order`. */
  readonly list: (
    workspaceId: WorkspaceId,
    filter: MeetingFilter,
    order: MeetingOrder,
    page: Page
  ) => Effect.Effect<Slice<Meeting>>

  /**
   * Adds participants, atomically and idempotently: a row whose person is already on the meeting (same
   * user_id, or same guest e-mail, which core keeps normalised) is not added. Answers, for each given row
   * in order, the row that is stored for that person afterwards (the new one or the one already there).
   */
  readonly addParticipants: (rows: ReadonlyArray<ParticipantRow>) => Effect.Effect<ReadonlyArray<ParticipantRow>>
  /** The ids of the meetings the user takes part in. */
  readonly meetingIdsOf: (workspaceId: WorkspaceId, userId: UserId) => Effect.Effect<ReadonlyArray<MeetingId>>
  /** All participants of the meeting, oldest first (created_at asc, id asc). */
  readonly listParticipants: (workspaceId: WorkspaceId, meetingId: MeetingId) => Effect.Effect<ReadonlyArray<ParticipantRow>>
  readonly findParticipant: (
    workspaceId: WorkspaceId,
    meetingId: MeetingId,
    userId: UserId
  ) => Effect.Effect<Option.Option<ParticipantRow>>
  readonly updateParticipant: (row: ParticipantRow) => Effect.Effect<void>
  readonly removeParticipant: (workspaceId: WorkspaceId, id: ParticipantId) => Effect.Effect<boolean>
  /** Removes the user's participant row from every meeting of the workspace. */
  readonly removeUserParticipants: (workspaceId: WorkspaceId, userId: UserId) => Effect.Effect<void>

  readonly appendTranscript: (workspaceId: WorkspaceId, segments: ReadonlyArray<TranscriptSegment>) => Effect.Effect<void>
  /** The transcript in order of offset_ms (then insertion order). */
  readonly transcript: (workspaceId: WorkspaceId, meetingId: MeetingId) => Effect.Effect<ReadonlyArray<TranscriptSegment>>
}>() {}
