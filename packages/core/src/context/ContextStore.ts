import { Context, type Effect, type Option } from "effect"
import type { MeetingId, WorkspaceId } from "../shared/Ids.js"
import type { Page, Slice } from "../shared/Pagination.js"
import type { ContextItemId, ContextItemRow } from "./ContextItem.js"

/**
 * Port: meeting context items with their text (already normalised and scrubbed by core: the store never sees an
 * upload). Every read and write is scoped by workspace. Lists are oldest first (created_at asc, id asc). The text
 * is read by `text` alone, and only ContextForPrompt calls it: nothing else in core reads context text.
 */
export class ContextStore extends Context.Tag("@convene/core/ContextStore")<ContextStore, {
  /** Stores the item with its text. */
  readonly insert: (row: ContextItemRow, text: string) => Effect.Effect<void>
  readonly get: (workspaceId: WorkspaceId, id: ContextItemId) => Effect.Effect<Option.Option<ContextItemRow>>
  /** The item's stored text (none when the item does not exist). */
  readonly text: (workspaceId: WorkspaceId, id: ContextItemId) => Effect.Effect<Option.Option<string>>
  /** A page of the meeting's items, oldest first. */
  readonly list: (workspaceId: WorkspaceId, meetingId: MeetingId, page: Page) => Effect.Effect<Slice<ContextItemRow>>
  /** Deletes the item with its text; answers whether it existed. */
  readonly delete: (workspaceId: WorkspaceId, id: ContextItemId) => Effect.Effect<boolean>
  /** Deletes every item of the meeting. */
  readonly deleteByMeeting: (workspaceId: WorkspaceId, meetingId: MeetingId) => Effect.Effect<void>
  /** Deletes every item of the workspace. */
  readonly deleteByWorkspace: (workspaceId: WorkspaceId) => Effect.Effect<void>
}>() {}
