/**
 * What other rooms keep in a workspace: users and their credentials, API keys, meetings with everything on them,
 * idempotency records of the workspace's credentials. The workspaces room counts them and deletes them, inside its
 * own transaction, before it deletes the workspace itself, without importing those rooms; core's composition root
 * (Contents.ts) implements it by calling every storage port's `deleteByWorkspace`, so no store can keep a row of a
 * deleted workspace. A new kind of thing kept in a workspace is added there (and to the workspace deletion tests).
 */
import { Context, type DateTime, type Effect } from "effect"
import type { WorkspaceId } from "../shared/Ids.js"
import type { WorkspaceCounts } from "./Workspace.js"

export class WorkspaceContents extends Context.Tag("@convene/core/WorkspaceContents")<WorkspaceContents, {
  /**
   * The counts of each given workspace (an entry for every id given): its users, its meetings, the tokens its
   * users hold that are live at `at` (every kind but the API key), and its API keys live at `at`.
   */
  readonly counts: (
    workspaceIds: ReadonlyArray<WorkspaceId>,
    at: DateTime.Utc
  ) => Effect.Effect<ReadonlyMap<WorkspaceId, WorkspaceCounts>>
  /** Deletes everything other rooms keep in the workspace (not the workspace itself). */
  readonly deleteAll: (workspaceId: WorkspaceId) => Effect.Effect<void>
}>() {}
