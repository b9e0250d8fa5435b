import { Context, type Effect, type Option } from "effect"
import type { AgendaItemId, MeetingId, UserId, WorkspaceId } from "../shared/Ids.js"
import type { Page, Slice } from "../shared/Pagination.js"
import type { AgendaItemRow, Sequence } from "./AgendaItem.js"

export interface AgendaItemFilter {
  /** Only items of these meetings (none: of every meeting of the workspace). */
  readonly meetingIds?: ReadonlyArray<MeetingId> | undefined
}

/**
 * Port: agenda items and their private talking points. Lists are ordered by the numeric value of
 * `sequence`, then created_at, then id. Talking points are keyed by (item, subject) where the subject is
 * the user id of the caller (or the credential id of a workspace API key); they belong to their item and go
 * with it. What other ports keep on an item (action items point at one) is theirs: core detaches it first.
 */
export class AgendaItemStore extends Context.Tag("@convene/core/AgendaItemStore")<AgendaItemStore, {
  readonly insert: (row: AgendaItemRow) => Effect.Effect<void>
  readonly update: (row: AgendaItemRow) => Effect.Effect<void>
  readonly get: (workspaceId: WorkspaceId, id: AgendaItemId) => Effect.Effect<Option.Option<AgendaItemRow>>
  /** Deletes the item and every talking point on it; answers whether it existed. */
  readonly delete: (workspaceId: WorkspaceId, id: AgendaItemId) => Effect.Effect<boolean>
  /** Deletes every item of the meeting with their talking points. */
  readonly deleteByMeeting: (workspaceId: WorkspaceId, meetingId: MeetingId) => Effect.Effect<void>
  /** Deletes every item of the workspace with their talking points. */
  readonly deleteByWorkspace: (workspaceId: WorkspaceId) => Effect.Effect<void>
  /**
   * Takes the user out of the presenters of every item of the workspace, keeping the others in their order
   * (nothing else changes, updated_at included).
   */
  readonly removePresenter: (workspaceId: WorkspaceId, userId: UserId) => Effect.Effect<void>
  /** Deletes the subject's talking points on every item of the workspace. */
  readonly deleteTalkingPointsOf: (workspaceId: WorkspaceId, subject: string) => Effect.Effect<void>
  readonly list: (workspaceId: WorkspaceId, filter: AgendaItemFilter, page: Page) => Effect.Effect<Slice<AgendaItemRow>>
  /** Every item of the meeting, in list order. */
  readonly listByMeeting: (workspaceId: WorkspaceId, meetingId: MeetingId) => Effect.Effect<ReadonlyArray<AgendaItemRow>>
  /** The highest sequence on the meeting, by numeric value. */
  readonly lastSequence: (workspaceId: WorkspaceId, meetingId: MeetingId) => Effect.Effect<Option.Option<Sequence>>
  /** The subject's talking points on each of the given items that has any. */
  readonly talkingPoints: (
    itemIds: ReadonlyArray<AgendaItemId>,
    subject: string
  ) => Effect.Effect<ReadonlyMap<AgendaItemId, ReadonlyArray<string>>>
  /** Replaces the subject's talking points on the item (an empty array removes them). */
  readonly setTalkingPoints: (
    itemId: AgendaItemId,
    subject: string,
    points: ReadonlyArray<string>
  ) => Effect.Effect<void>
}>() {}
