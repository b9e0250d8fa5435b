import { Context, type Effect, type Option } from "effect"
import type { WorkspaceId } from "../../shared/Ids.js"
import type { Page, Slice } from "../../shared/Pagination.js"
import type { PartnerAppId } from "../PartnerApp.js"
import type { Toolkit, ToolkitId, ToolkitInstallation as Installation, ToolkitVersion, ToolkitVersionId } from "./Toolkit.js"

/**
 * Port: partner apps' toolkits, their versions, their installations in workspaces (at most one per workspace and
 * toolkit) and the workspaces that opted out of automatic toolkit updates. Storage only: what a version may change,
 * what a publish queues and how an installation completes are core's rules (Toolkits). Writes join the caller's unit
 * of work (Transactor).
 */
export class ToolkitStore extends Context.Tag("@convene/core/ToolkitStore")<ToolkitStore, {
  /** Stores a new toolkit; its app exists. */
  readonly insertToolkit: (toolkit: Toolkit) => Effect.Effect<void>
  /** Replaces the stored toolkit with the same id. */
  readonly updateToolkit: (toolkit: Toolkit) => Effect.Effect<void>
  /** The app's toolkit with this id (none for another app's). */
  readonly getToolkit: (appId: PartnerAppId, id: ToolkitId) => Effect.Effect<Option.Option<Toolkit>>
  /**
   * The same, held for the caller's unit of work: a concurrent unit of work asking for it waits until this one ends
   * (PostgreSQL: SELECT ... FOR UPDATE), so changes of one toolkit (a version, a publish, a PUT or PATCH) are made one
   * after another, each on what the previous committed.
   */
  readonly getToolkitForUpdate: (appId: PartnerAppId, id: ToolkitId) => Effect.Effect<Option.Option<Toolkit>>
  /** A page of the app's toolkits, newest first (created_at desc, id desc). */
  readonly listToolkits: (appId: PartnerAppId, page: Page) => Effect.Effect<Slice<Toolkit>>
  /** The app's toolkits, all or those with these ids, oldest first (created_at, id). */
  readonly toolkitsOf: (appId: PartnerAppId, ids?: ReadonlyArray<ToolkitId>) => Effect.Effect<ReadonlyArray<Toolkit>>
  /** Deletes the toolkit with its versions and installations. */
  readonly deleteToolkit: (id: ToolkitId) => Effect.Effect<void>

  /** Stores a new version; its number is the toolkit's next. */
  readonly insertVersion: (version: ToolkitVersion) => Effect.Effect<void>
  /** Replaces the stored version with the same id. */
  readonly updateVersion: (version: ToolkitVersion) => Effect.Effect<void>
  /** The toolkit's version with this id. */
  readonly getVersion: (toolkitId: ToolkitId, id: ToolkitVersionId) => Effect.Effect<Option.Option<ToolkitVersion>>
  /** The versions with these ids (of any toolkit), in no particular order. */
  readonly versionsOf: (ids: ReadonlyArray<ToolkitVersionId>) => Effect.Effect<ReadonlyArray<ToolkitVersion>>
  /** A page of the toolkit's versions, newest first (number desc). */
  readonly listVersions: (toolkitId: ToolkitId, page: Page) => Effect.Effect<Slice<ToolkitVersion>>

  /** Stores the installation, replacing the one of the same workspace and toolkit. */
  readonly putInstallation: (installation: Installation) => Effect.Effect<void>
  /** The toolkit's installations, by workspace id. */
  readonly installationsOf: (toolkitId: ToolkitId) => Effect.Effect<ReadonlyArray<Installation>>
  /** The workspace's installations, of every app's toolkits, by toolkit id. */
  readonly installationsIn: (workspaceId: WorkspaceId) => Effect.Effect<ReadonlyArray<Installation>>
  /**
   * Up to `limit` pending installations, oldest change first (updated_at, workspace_id, toolkit_id), held for the
   * caller's unit of work: a concurrent unit of work skips them (PostgreSQL: FOR UPDATE SKIP LOCKED).
   */
  readonly claimPending: (limit: number) => Effect.Effect<ReadonlyArray<Installation>>

  /** Whether the workspace takes automatic toolkit updates (true unless it opted out). */
  readonly autoUpdates: (workspaceId: WorkspaceId) => Effect.Effect<boolean>
  readonly setAutoUpdates: (workspaceId: WorkspaceId, enabled: boolean) => Effect.Effect<void>
  /** Deletes the workspace's installations and its opt-out (core runs it before it deletes the workspace). */
  readonly deleteByWorkspace: (workspaceId: WorkspaceId) => Effect.Effect<void>
}>() {}
