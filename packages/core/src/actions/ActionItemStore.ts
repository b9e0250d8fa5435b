import { Context, type Effect, type Option } from "effect"
import type { ActionItemId, AgendaItemId, MeetingId, UserId, WorkspaceId } from "../shared/Ids.js"
import type { Page, Slice } from "../shared/Pagination.js"
import type { ActionItem, ActionItemStatus } from "./ActionItem.js"

export interface ActionItemFilter {
  /** Only items of these meetings (none: of every meeting of the workspace). */
  readonly meetingIds?: ReadonlyArray<MeetingId> | undefined
  readonly status?: ActionItemStatus | undefined
}

/** Port: action items. Lists are newest first (created_at desc, id desc). */
export class ActionItemStore extends Context.Tag("@convene/core/ActionItemStore")<ActionItemStore, {
  readonly insert: (item: ActionItem) => Effect.Effect<void>
  readonly update: (item: ActionItem) => Effect.Effect<void>
  readonly get: (workspaceId: WorkspaceId, id: ActionItemId) => Effect.Effect<Option.Option<ActionItem>>
  /** Deletes the item; answers whether it existed. */
  readonly delete: (workspaceId: WorkspaceId, id: ActionItemId) => Effect.Effect<boolean>
  /** Deletes every action item of the meeting. */
  readonly deleteByMeeting: (workspaceId: WorkspaceId, meetingId: MeetingId) => Effect.Effect<void>
  /** Deletes every action item of the workspace. */
  readonly deleteByWorkspace: (workspaceId: WorkspaceId) => Effect.Effect<void>
  /** Sets `assigned_to_user_id` to null on every item of the workspace assigned to the user (nothing else changes). */
  readonly unassignUser: (workspaceId: WorkspaceId, userId: UserId) => Effect.Effect<void>
  /** Sets `agenda_item_id` to null on every item that points at the agenda item (nothing else changes). */
  readonly detachAgendaItem: (workspaceId: WorkspaceId, agendaItemId: AgendaItemId) => Effect.Effect<void>
  readonly list: (workspaceId: WorkspaceId, filter: ActionItemFilter, page: Page) => Effect.Effect<Slice<ActionItem>>
}>() {}
