/**
 * @convene/store-pg: every storage port of @convene/core on PostgreSQL 15+, through @effect/sql.
 *
 * - `layer` is the adapter itself, over any `SqlClient`: it migrates the schema at start, then provides the
 *   ports. One set of SQL serves both drivers below.
 * - `layerPg` / `layerPgConfig` run it on a PostgreSQL server (@effect/sql-pg).
 * - `layerPglite` / `layerPgliteConfig` run it on PGlite, embedded in the process on a locked data directory.
 * - `clientPg` and `PgliteClient.layer` are the clients alone, without the ports and without migrating, for tools
 *   that look before they change anything (`convene migrate --check`: `Migrations.pending`).
 */
import { type BlobStore, type RateLimitStore, RateLimitStores, type StorePorts } from "@convene/core"
import type { SqlClient, SqlError } from "@effect/sql"
import * as PgClient from "@effect/sql-pg/PgClient"
import { Config, type ConfigError, Effect, Layer, type Redacted } from "effect"
import * as Path from "node:path"
import type { DataDirectoryError, DataDirectoryLocked } from "./DataDirectoryLock.js"
import * as FileBlobStore from "./FileBlobStore.js"
import * as Migrations from "./Migrations.js"
import * as PgActionItemStore from "./PgActionItemStore.js"
import * as PgAgendaItemStore from "./PgAgendaItemStore.js"
import * as PgAttachmentStore from "./PgAttachmentStore.js"
import * as PgAutomationStore from "./PgAutomationStore.js"
import * as PgBlobStore from "./PgBlobStore.js"
import * as PgContextStore from "./PgContextStore.js"
import * as PgBacklogItemStore from "./PgBacklogItemStore.js"
import * as PgCredentialStore from "./PgCredentialStore.js"
import * as PgDomainVerificationStore from "./PgDomainVerificationStore.js"
import * as PgEventLog from "./PgEventLog.js"
import * as PgIdempotencyStore from "./PgIdempotencyStore.js"
import * as PgIdpStore from "./PgIdpStore.js"
import * as PgliteClient from "./PgliteClient.js"
import * as PgMeetingStore from "./PgMeetingStore.js"
import * as PgOAuthStore from "./PgOAuthStore.js"
import * as PgPartnerStore from "./PgPartnerStore.js"
import * as PgPool from "./PgPool.js"
import * as PgRateLimitStore from "./PgRateLimitStore.js"
import * as PgSessionStore from "./PgSessionStore.js"
import * as PgSsoSessionStore from "./PgSsoSessionStore.js"
import * as PgToolkitStore from "./PgToolkitStore.js"
import * as PgTransactor from "./PgTransactor.js"
import * as PgUserStore from "./PgUserStore.js"
import * as PgWebhookStore from "./PgWebhookStore.js"
import * as PgWorkflowRunStore from "./PgWorkflowRunStore.js"
import * as PgWorkspaceStore from "./PgWorkspaceStore.js"

export * as DataDirectoryLock from "./DataDirectoryLock.js"
export * as Migrations from "./Migrations.js"
export * as PgliteClient from "./PgliteClient.js"
export {
  FileBlobStore,
  PgActionItemStore,
  PgAgendaItemStore,
  PgAttachmentStore,
  PgAutomationStore,
  PgBlobStore,
  PgContextStore,
  PgBacklogItemStore,
  PgCredentialStore,
  PgDomainVerificationStore,
  PgEventLog,
  PgIdempotencyStore,
  PgIdpStore,
  PgMeetingStore,
  PgOAuthStore,
  PgPartnerStore,
  PgRateLimitStore,
  PgSessionStore,
  PgSsoSessionStore,
  PgToolkitStore,
  PgTransactor,
  PgUserStore,
  PgWebhookStore,
  PgWorkflowRunStore,
  PgWorkspaceStore
}

/** Runs the pending migrations (see `Migrations`); a failure to migrate is a defect. */
export const layerMigrations: Layer.Layer<never, never, SqlClient.SqlClient> = Layer.effectDiscard(
  Effect.orDie(Migrations.run)
)

/**
 * Every storage port but the rate limits' counters and the blobs over the `SqlClient` in context, after migrating
 * the schema.
 */
const ports: Layer.Layer<Exclude<StorePorts, RateLimitStore | BlobStore>, never, SqlClient.SqlClient> = Layer.mergeAll(
  PgWorkspaceStore.layer,
  PgUserStore.layer,
  PgCredentialStore.layer,
  PgMeetingStore.layer,
  PgAgendaItemStore.layer,
  PgActionItemStore.layer,
  PgContextStore.layer,
  PgAttachmentStore.layer,
  PgBacklogItemStore.layer,
  PgIdempotencyStore.layer,
  PgOAuthStore.layer,
  PgSessionStore.layer,
  PgEventLog.layer,
  PgWebhookStore.layer,
  PgPartnerStore.layer,
  PgAutomationStore.layer,
  PgDomainVerificationStore.layer,
  PgIdpStore.layer,
  PgSsoSessionStore.layer,
  PgToolkitStore.layer,
  PgWorkflowRunStore.layer,
  PgTransactor.layer
).pipe(Layer.provide(layerMigrations))

/**
 * Where a PostgreSQL store keeps attachments' bytes: in the database (`blob_chunks`, PgBlobStore; every server
 * process sharing the database sees them) or in a directory (FileBlobStore; every process must see the same one).
 */
export type BlobPlacement = { readonly _tag: "database" } | { readonly _tag: "directory"; readonly path: string }

const blobsIn = (placement: BlobPlacement): Layer.Layer<BlobStore, never, SqlClient.SqlClient> =>
  placement._tag === "database"
    ? PgBlobStore.layer.pipe(Layer.provide(layerMigrations))
    : FileBlobStore.layer({ directory: placement.path })

/**
 * Every storage port over the `SqlClient` in context, after migrating the schema; the rate limits count in
 * PostgreSQL, so that every server process sharing the database enforces one budget, and attachments' bytes are
 * kept in the database too (unless `blobs` says otherwise).
 */
export const layerWith = (blobs: BlobPlacement): Layer.Layer<StorePorts, never, SqlClient.SqlClient> =>
  Layer.mergeAll(ports, PgRateLimitStore.layer.pipe(Layer.provide(layerMigrations)), blobsIn(blobs))

/** `layerWith` the bytes of attachments in the database. */
export const layer: Layer.Layer<StorePorts, never, SqlClient.SqlClient> = layerWith({ _tag: "database" })

/** Connection settings for a PostgreSQL server. */
export interface PgOptions {
  /** A connection URL such as postgres://user:password@host:5432/database. */
  readonly url: Redacted.Redacted
  /** The pool's size (default 10). */
  readonly maxConnections?: number | undefined
  /** Reported to the server as application_name (default "convene"). */
  readonly applicationName?: string | undefined
  /** Where attachments' bytes are kept (default: in the database). */
  readonly blobs?: BlobPlacement | undefined
}

/**
 * The `SqlClient` (and @effect/sql-pg's `PgClient`) on a PostgreSQL server, alone: no ports, no migration. For
 * tools that look at the schema before anything changes it (`Migrations.pending`, then `Migrations.run`).
 */
export const clientPg = (options: PgOptions): Layer.Layer<SqlClient.SqlClient | PgClient.PgClient, SqlError.SqlError> =>
  PgClient.layerFromPool({
    acquire: PgPool.make({
      url: options.url,
      maxConnections: options.maxConnections ?? 10,
      applicationName: options.applicationName ?? "convene"
    }),
    applicationName: options.applicationName ?? "convene"
  })

/** The ports on a PostgreSQL server, with the `SqlClient` (and @effect/sql-pg's `PgClient`) they use. */
export const layerPg = (
  options: PgOptions
): Layer.Layer<StorePorts | SqlClient.SqlClient | PgClient.PgClient, SqlError.SqlError> =>
  layerWith(options.blobs ?? { _tag: "database" }).pipe(Layer.provideMerge(clientPg(options)))

/** `layerPg` with the URL from the DATABASE_URL environment variable (through effect's `Config`). */
export const layerPgConfig: Layer.Layer<
  StorePorts | SqlClient.SqlClient | PgClient.PgClient,
  SqlError.SqlError | ConfigError.ConfigError
> = Layer.unwrapEffect(Effect.map(Config.redacted("DATABASE_URL"), (url) => layerPg({ url })))

/** The directory the embedded store keeps attachments' bytes in: `convene-blobs` in its data directory. */
export const blobDirectoryOf = (dataDir: string): string => Path.join(dataDir, "convene-blobs")

/**
 * The ports on PGlite in `options.dataDir`, with the `SqlClient` they use. The directory is locked while the layer
 * lives. Attachments' bytes are files in `blobDirectoryOf(dataDir)` unless `blobs` says otherwise.
 */
export const layerPglite = (
  options: PgliteClient.PgliteClientConfig,
  blobs?: BlobPlacement
): Layer.Layer<
  StorePorts | SqlClient.SqlClient,
  SqlError.SqlError | DataDirectoryLocked | DataDirectoryError
> =>
  // PGlite's data belongs to this one process (its directory is locked), so the rate limits count in the process:
  // no write to the embedded database per request.
  Layer.mergeAll(ports, RateLimitStores.inProcess, blobsIn(blobs ?? { _tag: "directory", path: blobDirectoryOf(options.dataDir) })).pipe(
    Layer.provideMerge(PgliteClient.layer(options))
  )

/** `layerPglite` in the directory CONVENE_DATA_DIR names (default ./.convene/data). */
export const layerPgliteConfig: Layer.Layer<
  StorePorts | SqlClient.SqlClient,
  SqlError.SqlError | DataDirectoryLocked | DataDirectoryError | ConfigError.ConfigError
> = Layer.unwrapEffect(
  Effect.map(
    Config.string("CONVENE_DATA_DIR").pipe(Config.withDefault("./.convene/data")),
    (dataDir) => layerPglite({ dataDir })
  )
)
