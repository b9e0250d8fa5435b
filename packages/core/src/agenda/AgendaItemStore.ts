import { Context, type Effect, type Option } from "effect"
import type { AgendaItemId, MeetingId, UserId, WorkspaceId } from "../shared/Ids.js"
import type { Page, Slice } from "../shared/Pagination.js"
import type { AgendaItemRow } from "./AgendaItem.js"

export interface AgendaItemFilter {
  readonly meetingId?: MeetingId | undefined
  /** Only items of meetings that have this user as a participant. */
  readonly visibleTo?: UserId | undefined
}

/**
 * Port: agenda items and their private talking points. Lists are ordered by the numeric value of
 * `sequence`, then created_at, then id. Talking points are keyed by (item, subject) where the subject is
 * the user id of the caller (or the credential id of a workspace API key).
 */
export class AgendaItemStore extends Context.Tag("@convene/core/AgendaItemStore")<AgendaItemStore, {
  readonly insert: (row: AgendaItemRow) => Effect.Effect<void>
  readonly update: (row: AgendaItemRow) => Effect.Effect<void>
  readonly get: (workspaceId: WorkspaceId, id: AgendaItemId) => Effect.Effect<Option.Option<AgendaItemRow>>
  /** Deletes the item and every talking point on it; action items that pointed at it keep existing with agenda_item_id null. */
  readonly delete: (workspaceId: WorkspaceId, id: AgendaItemId) => Effect.Effect<boolean>
  readonly list: (workspaceId: WorkspaceId, filter: AgendaItemFilter, page: Page) => Effect.Effect<Slice<AgendaItemRow>>
  /** The highest sequence on the meeting, by numeric value. */
  readonly lastSequence: (workspaceId: WorkspaceId, meetingId: MeetingId) => Effect.Effect<Option.Option<string>>
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
