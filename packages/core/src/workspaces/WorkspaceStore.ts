import { Context, type Effect, type Option } from "effect"
import type { WorkspaceId } from "../shared/Ids.js"
import type { Workspace } from "./Workspace.js"

/** Port: workspaces, and the per-period usage counters that plan allowances are measured with. */
export class WorkspaceStore extends Context.Tag("@convene/core/WorkspaceStore")<WorkspaceStore, {
  readonly insert: (workspace: Workspace) => Effect.Effect<void>
  readonly update: (workspace: Workspace) => Effect.Effect<void>
  readonly get: (id: WorkspaceId) => Effect.Effect<Option.Option<Workspace>>
  /**
   * Atomically adds one to the counter `(workspace, counter, period)` unless it already reached `limit`.
   * Answers whether the unit was consumed. Two racing callers can never both take the last unit.
   */
  readonly consume: (input: {
    readonly workspaceId: WorkspaceId
    readonly counter: string
    readonly period: string
    readonly limit: number
  }) => Effect.Effect<boolean>
}>() {}
