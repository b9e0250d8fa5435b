import { Context, type Effect, type Option } from "effect"
import type { WorkspaceId } from "../shared/Ids.js"
import type { Page, Slice } from "../shared/Pagination.js"
import type { Workspace } from "./Workspace.js"

/**
 * Port: workspaces, and the per-period usage counters that plan allowances are measured with. Everything other
 * ports keep in a workspace is theirs: core deletes it before it deletes the workspace (see WorkspaceContents).
 */
export class WorkspaceStore extends Context.Tag("@convene/core/WorkspaceStore")<WorkspaceStore, {
  readonly insert: (workspace: Workspace) => Effect.Effect<void>
  readonly update: (workspace: Workspace) => Effect.Effect<void>
  readonly get: (id: WorkspaceId) => Effect.Effect<Option.Option<Workspace>>
  /** A page of every workspace of the installation, newest first (created_at desc, id desc). */
  readonly list: (page: Page) => Effect.Effect<Slice<Workspace>>
  /**
   * Inside a transaction (Transactor), holds the workspace against every other transaction that locks it, until this
   * one ends: what such transactions read and decide about the workspace (its members' roles) is decided in turn.
   * Outside a transaction it holds nothing. A store whose transactions never overlap has nothing to do.
   */
  readonly lock: (id: WorkspaceId) => Effect.Effect<void>
  /**
   * Inside a transaction, holds the workspace against `lock` (and so against its deletion, which locks it first)
   * until this one ends, without holding up other transactions that share it; answers whether the workspace exists.
   * A transaction that shares it while another has it locked waits for that one to end, then sees what it left:
   * after a deletion, nothing. Outside a transaction it only answers whether the workspace exists.
   */
  readonly share: (id: WorkspaceId) => Effect.Effect<boolean>
  /** Deletes the workspace with its usage counters; answers whether it existed. */
  readonly delete: (id: WorkspaceId) => Effect.Effect<boolean>
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
