import { Context, type DateTime, type Effect, type Option } from "effect"
import type { DuplicateKey } from "../identity/IdentityStore.js"
import type { WorkspaceId } from "../shared/Ids.js"
import type { Page, Slice } from "../shared/Pagination.js"
import type { ConnectedWorkspace, PartnerApp, PartnerAppId } from "./PartnerApp.js"

/**
 * Port: partner apps and the workspaces connected to them. Slugs and client ids are unique across the installation
 * (an insert that would repeat one is DuplicateKey); a workspace is connected to an app at most once. Connections
 * are the workspace's rows as much as the app's: core deletes them before it deletes the workspace (see
 * WorkspaceContents). Partner apps are never deleted.
 */
export class PartnerStore extends Context.Tag("@convene/core/PartnerStore")<PartnerStore, {
  readonly insert: (app: PartnerApp) => Effect.Effect<void, DuplicateKey>
  /**
   * Replaces the stored app with the same id (nothing when there is none); slug and client id never change, and the
   * stored webhook secret is kept whatever `app` carries (only `setWebhookSecret` writes it, so that a change computed
   * from an earlier read never brings back a replaced secret).
   */
  readonly update: (app: PartnerApp) => Effect.Effect<void>
  /** Stores the app's sealed webhook secret and `updated_at`, nothing else; answers whether the app exists. */
  readonly setWebhookSecret: (id: PartnerAppId, sealed: string, at: DateTime.Utc) => Effect.Effect<boolean>
  readonly get: (id: PartnerAppId) => Effect.Effect<Option.Option<PartnerApp>>
  readonly getByClientId: (clientId: string) => Effect.Effect<Option.Option<PartnerApp>>
  readonly getBySlug: (slug: string) => Effect.Effect<Option.Option<PartnerApp>>
  /** A page of every app, newest first (created_at desc, id desc). */
  readonly list: (page: Page) => Effect.Effect<Slice<PartnerApp>>
  /**
   * Atomically connects the workspace to the app unless it is connected already; answers when it was connected
   * (`at` for a new connection, the first connection's instant otherwise). The app and the workspace exist.
   */
  readonly connect: (input: {
    readonly appId: PartnerAppId
    readonly workspaceId: WorkspaceId
    readonly at: DateTime.Utc
  }) => Effect.Effect<DateTime.Utc>
  /** A page of the workspaces connected to the app, newest connection first (connected_at desc, id desc). */
  readonly listWorkspaces: (appId: PartnerAppId, page: Page) => Effect.Effect<Slice<ConnectedWorkspace>>
  /**
   * The app with that client id, and whether the workspace is connected to it (one lookup: what authenticating a
   * user-context token needs).
   */
  readonly getByClientIdFor: (
    clientId: string,
    workspaceId: WorkspaceId
  ) => Effect.Effect<Option.Option<{ readonly app: PartnerApp; readonly connected: boolean }>>
  /** Every app the workspace is connected to, whatever its status, oldest connection first (connected_at, id). */
  readonly connectedApps: (workspaceId: WorkspaceId) => Effect.Effect<ReadonlyArray<PartnerApp>>
  /** Deletes every connection of the workspace (to any app). */
  readonly deleteByWorkspace: (workspaceId: WorkspaceId) => Effect.Effect<void>
}>() {}
