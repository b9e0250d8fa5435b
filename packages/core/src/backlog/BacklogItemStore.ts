import { Context, type Effect, type Option } from "effect"
import type { UserId, WorkspaceId } from "../shared/Ids.js"
import type { Page, Slice } from "../shared/Pagination.js"
import type { BacklogItemId, BacklogItemRow } from "./BacklogItem.js"

/**
 * Port: backlog items, open and closed, and their private talking points. Talking points are keyed by (item,
 * subject) where the subject is the user id of the writer (or the credential id of a workspace API key); they
 * belong to their item and go with it. Closing an item (assigned, deleted) is an `update` that the store makes
 * only while the stored item is still open, so that of two writers racing on one item only one closes it.
 */
export class BacklogItemStore extends Context.Tag("@convene/core/BacklogItemStore")<BacklogItemStore, {
  readonly insert: (row: BacklogItemRow) => Effect.Effect<void>
  /**
   * Replaces the stored item (found by workspace and id) with `row`, open or closed, only if the stored one is
   * still `open`: atomically, a compare-and-set on the status. Answers whether it replaced it.
   */
  readonly update: (row: BacklogItemRow) => Effect.Effect<boolean>
  /** The item, whatever its status. */
  readonly get: (workspaceId: WorkspaceId, id: BacklogItemId) => Effect.Effect<Option.Option<BacklogItemRow>>
  /** The open items, oldest first: created_at ascending, then id ascending. */
  readonly listOpen: (workspaceId: WorkspaceId, page: Page) => Effect.Effect<Slice<BacklogItemRow>>
  /**
   * The closed items (assigned or deleted), most recently closed first: by the instant they were closed
   * (`assigned_at`, else `deleted_at`) descending, then id descending.
   */
  readonly listClosed: (workspaceId: WorkspaceId, page: Page) => Effect.Effect<Slice<BacklogItemRow>>
  /** Deletes every item of the workspace, open and closed, with their talking points. */
  readonly deleteByWorkspace: (workspaceId: WorkspaceId) => Effect.Effect<void>
  /**
   * Takes the user out of the presenters of every item of the workspace, open and closed, keeping the others in
   * their order (nothing else changes, updated_at included).
   */
  readonly removePresenter: (workspaceId: WorkspaceId, userId: UserId) => Effect.Effect<void>
  /** The subject's talking points on each of the given items that has any. */
  readonly talkingPoints: (
    itemIds: ReadonlyArray<BacklogItemId>,
    subject: string
  ) => Effect.Effect<ReadonlyMap<BacklogItemId, ReadonlyArray<string>>>
  /** Every subject's talking points on the item, by subject (those with none left out). */
  readonly talkingPointsOfEveryone: (itemId: BacklogItemId) => Effect.Effect<ReadonlyMap<string, ReadonlyArray<string>>>
  /** Replaces the subject's talking points on the item (an empty array removes them). */
  readonly setTalkingPoints: (
    itemId: BacklogItemId,
    subject: string,
    points: ReadonlyArray<string>
  ) => Effect.Effect<void>
  /** Deletes the subject's talking points on every item of the workspace. */
  readonly deleteTalkingPointsOf: (workspaceId: WorkspaceId, subject: string) => Effect.Effect<void>
}>() {}
