import { Context, type Effect, type Option } from "effect"
import type { ActionItemId, MeetingId, UserId, WorkspaceId } from "../shared/Ids.js"
import type { Page, Slice } from "../shared/Pagination.js"
import type { ActionItem, ActionItemStatus } from "./ActionItem.js"

export interface ActionItemFilter {
  readonly meetingId?: MeetingId | undefined
  readonly status?: ActionItemStatus | undefined
  /** Only items of meetings that have this user as a participant. */
  readonly visibleTo?: UserId | undefined
}

/** Port: action items. Lists are newest first (created_at desc, id desc). */
export class ActionItemStore extends Context.Tag("@convene/core/ActionItemStore")<ActionItemStore, {
  readonly insert: (item: ActionItem) => Effect.Effect<void>
  readonly update: (item: ActionItem) => Effect.Effect<void>
  readonly get: (workspaceId: WorkspaceId, id: ActionItemId) => Effect.Effect<Option.Option<ActionItem>>
  readonly delete: (workspaceId: WorkspaceId, id: ActionItemId) => Effect.Effect<boolean>
  readonly list: (workspaceId: WorkspaceId, filter: ActionItemFilter, page: Page) => Effect.Effect<Slice<ActionItem>>
}>() {}
