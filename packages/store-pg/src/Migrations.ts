/**
 * The adapter's schema, migrated from code into its own table `convene_migrations`.
 *
 * Several processes may start on one fresh database at once. @effect/sql's Migrator runs the pending
 * migrations in one transaction that first takes `LOCK TABLE convene_migrations IN ACCESS EXCLUSIVE MODE`,
 * so runners queue and a later one finds the work done; but it creates the table itself with a racy
 * "exists? else CREATE TABLE". So the table is created first, under a transaction-scoped advisory lock.
 * SQL is PostgreSQL 15 (the server's floor) and runs unchanged on PGlite.
 *
 * Every row belongs to a workspace that exists, and user references point at users that exist; these foreign
 * keys are checked at commit (DEFERRABLE INITIALLY DEFERRED), so a unit of work may write in any order.
 * A port's own rows go with their parent (a meeting's participants and transcript, an agenda item's talking
 * points: ON DELETE CASCADE). What other ports keep on a meeting or an agenda item is deleted or detached by
 * core (Contents.ts) in the same transaction; since 0002 the foreign keys refuse a delete that would leave
 * any of it behind, so a cascade forgotten in core fails loudly here instead of being done silently.
 */
import { foldCase } from "@convene/core"
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type * as SqlError from "@effect/sql/SqlError"
import { Effect } from "effect"

/** The table that records which migrations ran. */
export const table = "convene_migrations"

const init = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`CREATE TABLE workspaces (
    id uuid PRIMARY KEY,
    name text NOT NULL,
    plan text NOT NULL,
    default_detail_level text NOT NULL,
    default_template_id uuid,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE TABLE workspace_usage (
    workspace_id uuid NOT NULL REFERENCES workspaces (id) DEFERRABLE INITIALLY DEFERRED,
    counter text NOT NULL,
    period text NOT NULL,
    used integer NOT NULL CHECK (used >= 0),
    PRIMARY KEY (workspace_id, counter, period)
  )`

  yield* sql`CREATE TABLE users (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces (id) DEFERRABLE INITIALLY DEFERRED,
    email text NOT NULL,
    name text NOT NULL,
    role text NOT NULL,
    password_hash text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE UNIQUE INDEX users_email_key ON users (lower(email))`
  yield* sql`CREATE INDEX users_workspace_idx ON users (workspace_id)`

  yield* sql`CREATE TABLE credentials (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces (id) DEFERRABLE INITIALLY DEFERRED,
    user_id uuid REFERENCES users (id) DEFERRABLE INITIALLY DEFERRED,
    kind text NOT NULL,
    name text,
    scopes text[] NOT NULL,
    token_hash text NOT NULL,
    client_id text,
    expires_at timestamptz,
    revoked_at timestamptz,
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE UNIQUE INDEX credentials_token_hash_key ON credentials (token_hash)`
  yield* sql`CREATE INDEX credentials_user_created_idx ON credentials (user_id, created_at DESC, id DESC)`

  yield* sql`CREATE TABLE meetings (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces (id) DEFERRABLE INITIALLY DEFERRED,
    title text NOT NULL,
    status text NOT NULL,
    start_time timestamptz,
    end_time timestamptz,
    is_instant boolean NOT NULL,
    detail_level text NOT NULL,
    template_id uuid,
    owner_user_id uuid REFERENCES users (id) DEFERRABLE INITIALLY DEFERRED,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX meetings_workspace_created_idx ON meetings (workspace_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX meetings_workspace_start_idx ON meetings (workspace_id, start_time, created_at, id)`
  yield* sql`CREATE INDEX meetings_workspace_status_idx ON meetings (workspace_id, status, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX meetings_workspace_not_over_idx ON meetings (workspace_id, (coalesce(end_time, start_time)))`

  yield* sql`CREATE TABLE participants (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL,
    meeting_id uuid NOT NULL REFERENCES meetings (id) ON DELETE CASCADE,
    user_id uuid REFERENCES users (id) DEFERRABLE INITIALLY DEFERRED,
    guest_email text,
    role text NOT NULL,
    is_attended boolean NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE UNIQUE INDEX participants_meeting_user_key ON participants (meeting_id, user_id)`
  yield* sql`CREATE UNIQUE INDEX participants_meeting_guest_key ON participants (meeting_id, lower(guest_email))`
  yield* sql`CREATE INDEX participants_user_idx ON participants (user_id, meeting_id)`
  yield* sql`CREATE INDEX participants_meeting_created_idx ON participants (meeting_id, created_at, id)`

  yield* sql`CREATE TABLE transcript_segments (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id uuid NOT NULL,
    meeting_id uuid NOT NULL REFERENCES meetings (id) ON DELETE CASCADE,
    offset_ms bigint NOT NULL CHECK (offset_ms >= 0),
    speaker text NOT NULL,
    text text NOT NULL,
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX transcript_segments_meeting_idx ON transcript_segments (meeting_id, offset_ms, seq)`

  yield* sql`CREATE TABLE agenda_items (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL,
    meeting_id uuid NOT NULL REFERENCES meetings (id) ON DELETE CASCADE,
    title text NOT NULL,
    description text,
    item_type text NOT NULL,
    sequence numeric NOT NULL,
    presenters text[] NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX agenda_items_meeting_order_idx ON agenda_items (meeting_id, sequence, created_at, id)`
  yield* sql`CREATE INDEX agenda_items_workspace_order_idx ON agenda_items (workspace_id, sequence, created_at, id)`

  yield* sql`CREATE TABLE talking_points (
    agenda_item_id uuid NOT NULL REFERENCES agenda_items (id) ON DELETE CASCADE,
    subject text NOT NULL,
    points text[] NOT NULL,
    PRIMARY KEY (agenda_item_id, subject)
  )`

  yield* sql`CREATE TABLE action_items (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL,
    meeting_id uuid NOT NULL REFERENCES meetings (id) ON DELETE CASCADE,
    agenda_item_id uuid REFERENCES agenda_items (id) ON DELETE SET NULL,
    assigned_to_user_id uuid REFERENCES users (id) DEFERRABLE INITIALLY DEFERRED,
    title text NOT NULL,
    description text,
    due_date date,
    status text NOT NULL,
    is_completed boolean NOT NULL,
    completed_at timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX action_items_workspace_created_idx ON action_items (workspace_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX action_items_workspace_status_idx ON action_items (workspace_id, status, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX action_items_meeting_created_idx ON action_items (meeting_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX action_items_agenda_item_idx ON action_items (agenda_item_id)`

  yield* sql`CREATE TABLE idempotency_records (
    scope text NOT NULL,
    key text NOT NULL,
    fingerprint text NOT NULL,
    response_status integer,
    response_body text,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (scope, key),
    CHECK ((response_status IS NULL) = (response_body IS NULL))
  )`
  yield* sql`CREATE INDEX idempotency_records_expires_idx ON idempotency_records (expires_at)`
})

/**
 * The rules move into core: e-mail addresses are compared as core normalises them (no lower() in SQL), and
 * cascades across ports are core's (the foreign keys only check them).
 */
const rulesInCore = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const normalised = (column: string) => sql.literal(`lower(regexp_replace(${column}, '^\\s+|\\s+$', '', 'g'))`)
  yield* sql`UPDATE users SET email = ${normalised("email")} WHERE email <> ${normalised("email")}`
  yield* sql`DROP INDEX users_email_key`
  yield* sql`CREATE UNIQUE INDEX users_email_key ON users (email)`
  yield* sql`UPDATE participants SET guest_email = ${normalised("guest_email")}
    WHERE guest_email <> ${normalised("guest_email")}`
  yield* sql`DROP INDEX participants_meeting_guest_key`
  yield* sql`CREATE UNIQUE INDEX participants_meeting_guest_key ON participants (meeting_id, guest_email)`

  yield* sql`ALTER TABLE agenda_items DROP CONSTRAINT agenda_items_meeting_id_fkey,
    ADD CONSTRAINT agenda_items_meeting_id_fkey FOREIGN KEY (meeting_id) REFERENCES meetings (id)
      DEFERRABLE INITIALLY DEFERRED`
  yield* sql`ALTER TABLE action_items DROP CONSTRAINT action_items_meeting_id_fkey,
    ADD CONSTRAINT action_items_meeting_id_fkey FOREIGN KEY (meeting_id) REFERENCES meetings (id)
      DEFERRABLE INITIALLY DEFERRED`
  yield* sql`ALTER TABLE action_items DROP CONSTRAINT action_items_agenda_item_id_fkey,
    ADD CONSTRAINT action_items_agenda_item_id_fkey FOREIGN KEY (agenda_item_id) REFERENCES agenda_items (id)
      DEFERRABLE INITIALLY DEFERRED`
})

/**
 * Title search compares text as core folds it (`foldCase`), which no SQL lower() reproduces in every locale:
 * the folded title is kept beside the title, written by the store from core's function.
 */
const foldedTitles = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`ALTER TABLE meetings ADD COLUMN title_folded text`
  const rows = yield* sql<{ readonly id: string; readonly title: string }>`SELECT id, title FROM meetings`
  for (const row of rows) yield* sql`UPDATE meetings SET title_folded = ${foldCase(row.title)} WHERE id = ${row.id}`
  yield* sql`ALTER TABLE meetings ALTER COLUMN title_folded SET NOT NULL`
})

/**
 * The operator's reads and deletes: workspaces and users listed newest first (the installation's users, and a
 * workspace's), a workspace's credentials, and the columns that point at a user, which deleting a user (and the
 * foreign keys' check of it at commit) looks up: owned meetings, assigned action items, talking points by subject.
 */
const operatorAdministration = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`CREATE INDEX workspaces_created_idx ON workspaces (created_at DESC, id DESC)`
  yield* sql`CREATE INDEX users_created_idx ON users (created_at DESC, id DESC)`
  yield* sql`CREATE INDEX users_workspace_created_idx ON users (workspace_id, created_at DESC, id DESC)`
  yield* sql`DROP INDEX users_workspace_idx`
  yield* sql`CREATE INDEX credentials_workspace_created_idx ON credentials (workspace_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX meetings_owner_idx ON meetings (owner_user_id) WHERE owner_user_id IS NOT NULL`
  yield* sql`CREATE INDEX action_items_assignee_idx ON action_items (assigned_to_user_id)
    WHERE assigned_to_user_id IS NOT NULL`
  yield* sql`CREATE INDEX talking_points_subject_idx ON talking_points (subject)`
})

/**
 * The authorization server (OAuthStore) and browser sessions (SessionStore). As everywhere, rows point at the
 * workspaces, users and credentials of other ports through foreign keys checked at commit, which core's
 * cascades (OAuthStore.deleteByUser / deleteByWorkspace, SessionStore's) must satisfy; only the port's own
 * rows go with their parent (a grant's grant-credential rows: ON DELETE CASCADE). Codes and grants name their
 * client without a foreign key: the built-in client `convene-cli` has no row. At most one signing key is active
 * (not retired): a second one is refused by a unique index over a constant, so racing processes make one.
 */
const oauth = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`CREATE TABLE oauth_clients (
    client_id text PRIMARY KEY,
    kind text NOT NULL,
    name text NOT NULL,
    redirect_uris text[] NOT NULL,
    scope text[],
    client_uri text,
    logo_uri text,
    registration_token_hash text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`

  yield* sql`CREATE TABLE authorization_codes (
    code_hash text PRIMARY KEY,
    grant_id uuid NOT NULL,
    client_id text NOT NULL,
    redirect_uri text NOT NULL,
    user_id uuid NOT NULL REFERENCES users (id) DEFERRABLE INITIALLY DEFERRED,
    workspace_id uuid NOT NULL REFERENCES workspaces (id) DEFERRABLE INITIALLY DEFERRED,
    scopes text[] NOT NULL,
    openid boolean NOT NULL,
    code_challenge text NOT NULL,
    nonce text,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    consumed_at timestamptz
  )`
  yield* sql`CREATE INDEX authorization_codes_expires_idx ON authorization_codes (expires_at)`
  yield* sql`CREATE INDEX authorization_codes_user_idx ON authorization_codes (user_id)`
  yield* sql`CREATE INDEX authorization_codes_workspace_idx ON authorization_codes (workspace_id)`
  yield* sql`CREATE INDEX authorization_codes_client_idx ON authorization_codes (client_id)`

  yield* sql`CREATE TABLE grants (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces (id) DEFERRABLE INITIALLY DEFERRED,
    user_id uuid NOT NULL REFERENCES users (id) DEFERRABLE INITIALLY DEFERRED,
    client_id text NOT NULL,
    scopes text[] NOT NULL,
    openid boolean NOT NULL,
    nonce text,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
  )`
  yield* sql`CREATE INDEX grants_user_idx ON grants (user_id)`
  yield* sql`CREATE INDEX grants_workspace_idx ON grants (workspace_id)`
  yield* sql`CREATE INDEX grants_client_idx ON grants (client_id)`

  // A credential is issued under one grant; seq keeps the order the credentials were added in.
  yield* sql`CREATE TABLE grant_credentials (
    credential_id uuid PRIMARY KEY REFERENCES credentials (id) DEFERRABLE INITIALLY DEFERRED,
    grant_id uuid NOT NULL REFERENCES grants (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    seq bigint GENERATED ALWAYS AS IDENTITY
  )`
  yield* sql`CREATE INDEX grant_credentials_grant_idx ON grant_credentials (grant_id, seq)`

  yield* sql`CREATE TABLE signing_keys (
    kid text PRIMARY KEY,
    algorithm text NOT NULL,
    public_jwk text NOT NULL,
    sealed_private_jwk text NOT NULL,
    created_at timestamptz NOT NULL,
    retired_at timestamptz
  )`
  yield* sql`CREATE UNIQUE INDEX signing_keys_active_key ON signing_keys ((true)) WHERE retired_at IS NULL`

  yield* sql`CREATE TABLE sessions (
    id uuid PRIMARY KEY,
    token_hash text NOT NULL,
    user_id uuid NOT NULL REFERENCES users (id) DEFERRABLE INITIALLY DEFERRED,
    workspace_id uuid NOT NULL REFERENCES workspaces (id) DEFERRABLE INITIALLY DEFERRED,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz
  )`
  yield* sql`CREATE UNIQUE INDEX sessions_token_hash_key ON sessions (token_hash)`
  yield* sql`CREATE INDEX sessions_user_idx ON sessions (user_id)`
  yield* sql`CREATE INDEX sessions_workspace_idx ON sessions (workspace_id)`
  yield* sql`CREATE INDEX sessions_expires_idx ON sessions (expires_at)`
  yield* sql`CREATE INDEX sessions_revoked_idx ON sessions (revoked_at) WHERE revoked_at IS NOT NULL`

  yield* sql`CREATE TABLE sign_in_failures (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    key text NOT NULL,
    at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX sign_in_failures_key_at_idx ON sign_in_failures (key, at)`
  yield* sql`CREATE INDEX sign_in_failures_at_idx ON sign_in_failures (at)`
})

/**
 * The event log (EventLog, the outbox). Events point at their workspace through a foreign key checked at commit
 * (core deletes a workspace's events before the workspace); the actor is kept without one, so that a deleted
 * user's events stay. `position` is taken at insert, but transactions commit in another order: `tx` records
 * the inserting transaction, and readers see only events whose transaction is older than every transaction still
 * running (`tx < pg_snapshot_xmin(pg_current_snapshot())`, PostgreSQL 13+).
 */
const events = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`CREATE TABLE events (
    position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id uuid NOT NULL UNIQUE,
    workspace_id uuid NOT NULL REFERENCES workspaces (id) DEFERRABLE INITIALLY DEFERRED,
    type text NOT NULL,
    actor_user_id uuid,
    occurred_at timestamptz NOT NULL,
    data jsonb NOT NULL,
    tx xid8 NOT NULL DEFAULT pg_current_xact_id()
  )`
  yield* sql`CREATE INDEX events_workspace_position_idx ON events (workspace_id, position)`
  yield* sql`CREATE INDEX events_occurred_at_idx ON events (occurred_at)`
})

/**
 * Workspace webhooks (WebhookStore): endpoints, and the outbox of deliveries with their attempts. Endpoints and
 * deliveries point at their workspace, and an endpoint at its creator, through foreign keys checked at commit (core
 * deletes the workspace's rows, and lets go of a deleted creator, in the same unit of work); a delivery's attempts
 * go with it (ON DELETE CASCADE). A delivery names its addressee by kind and id, without a foreign key, so that
 * other kinds of addressee (partner apps) share the queue. The partial indexes serve the workers' claims: pending
 * deliveries by due time, verifying endpoints by their last challenge.
 */
const webhooks = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`CREATE TABLE webhook_endpoints (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces (id) DEFERRABLE INITIALLY DEFERRED,
    url text NOT NULL,
    subscribed_events text[] NOT NULL,
    status text NOT NULL,
    verification_state text NOT NULL,
    verification_attempt_count integer NOT NULL,
    verification_last_sent_at timestamptz,
    verification_retry_until timestamptz NOT NULL,
    verified_at timestamptz,
    last_success_at timestamptz,
    consecutive_failure_count integer NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    created_by uuid REFERENCES users (id) DEFERRABLE INITIALLY DEFERRED,
    sealed_signing_secret text NOT NULL,
    sealed_verification_token text NOT NULL,
    challenge_claimed_until timestamptz,
    deleted_at timestamptz,
    revision integer NOT NULL
  )`
  yield* sql`CREATE INDEX webhook_endpoints_workspace_created_idx ON webhook_endpoints (workspace_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX webhook_endpoints_subscribers_idx ON webhook_endpoints (workspace_id)
    WHERE deleted_at IS NULL AND verification_state = 'verified'`
  yield* sql`CREATE INDEX webhook_endpoints_verifying_idx ON webhook_endpoints (verification_last_sent_at NULLS FIRST)
    WHERE deleted_at IS NULL AND verification_state = 'verifying'`
  yield* sql`CREATE INDEX webhook_endpoints_created_by_idx ON webhook_endpoints (created_by) WHERE created_by IS NOT NULL`

  yield* sql`CREATE TABLE deliveries (
    id uuid PRIMARY KEY,
    workspace_id uuid REFERENCES workspaces (id) DEFERRABLE INITIALLY DEFERRED,
    addressee_kind text NOT NULL,
    addressee_id uuid NOT NULL,
    event_id uuid NOT NULL,
    event_type text NOT NULL,
    occurred_at timestamptz NOT NULL,
    body text NOT NULL,
    idempotency_key text NOT NULL CHECK (length(idempotency_key) <= 64),
    state text NOT NULL,
    attempt_count integer NOT NULL,
    next_attempt_at timestamptz,
    claimed_until timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX deliveries_due_idx ON deliveries (next_attempt_at, id) WHERE state = 'pending'`
  yield* sql`CREATE INDEX deliveries_addressee_idx ON deliveries (addressee_kind, addressee_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX deliveries_workspace_idx ON deliveries (workspace_id)`
  yield* sql`CREATE INDEX deliveries_finished_created_idx ON deliveries (created_at) WHERE state <> 'pending'`

  yield* sql`CREATE TABLE delivery_attempts (
    delivery_id uuid NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    number integer NOT NULL,
    at timestamptz NOT NULL,
    status_code integer,
    latency_ms integer NOT NULL,
    error text,
    PRIMARY KEY (delivery_id, number)
  )`
})

/**
 * Request counters of the rate limits: one row per (key, window), dropped once their window ended. UNLOGGED: a
 * crash of the server empties it, which only ever gives callers more room; no WAL is written for a request's count.
 */
const rateLimits = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE UNLOGGED TABLE rate_limit_counters (
    key text NOT NULL,
    window_start bigint NOT NULL,
    hits integer NOT NULL,
    PRIMARY KEY (key, window_start)
  )`
  yield* sql`CREATE INDEX rate_limit_counters_window_idx ON rate_limit_counters (window_start)`
})

/**
 * The workspace's backlog (BacklogItemStore): open and closed items in one table, and their private talking points
 * per subject (ON DELETE CASCADE, like the agenda's). Items point at their workspace through a foreign key checked
 * at commit (core deletes them before the workspace); presenters are user ids without one, as on agenda items (core
 * takes a deleted user out); a closed item's destination meeting is kept as history, without one either (the
 * meeting may be deleted later). The partial indexes serve the two lists: open items oldest first, closed ones most
 * recently closed first.
 */
const backlog = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`CREATE TABLE backlog_items (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces (id) DEFERRABLE INITIALLY DEFERRED,
    title text NOT NULL,
    description text,
    presenters text[] NOT NULL,
    status text NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    assigned_at timestamptz,
    destination_meeting_id uuid,
    deleted_at timestamptz
  )`
  yield* sql`CREATE INDEX backlog_items_open_idx ON backlog_items (workspace_id, created_at, id) WHERE status = 'open'`
  yield* sql`CREATE INDEX backlog_items_closed_idx ON backlog_items
    (workspace_id, (coalesce(assigned_at, deleted_at)) DESC, id DESC) WHERE status <> 'open'`

  yield* sql`CREATE TABLE backlog_talking_points (
    backlog_item_id uuid NOT NULL REFERENCES backlog_items (id) ON DELETE CASCADE,
    subject text NOT NULL,
    points text[] NOT NULL,
    PRIMARY KEY (backlog_item_id, subject)
  )`
  yield* sql`CREATE INDEX backlog_talking_points_subject_idx ON backlog_talking_points (subject)`
})

/**
 * Meeting context: each item with its normalised, scrubbed text (the upload itself is never stored). Items go with
 * their meeting and workspace through core (Contents.ts), as agenda items do.
 */
const context = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE context_items (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces (id) DEFERRABLE INITIALLY DEFERRED,
    meeting_id uuid NOT NULL REFERENCES meetings (id) DEFERRABLE INITIALLY DEFERRED,
    kind text NOT NULL,
    file_name text NOT NULL,
    content_type text NOT NULL,
    size integer NOT NULL CHECK (size >= 0),
    text text NOT NULL,
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX context_items_meeting_order_idx ON context_items (workspace_id, meeting_id, created_at, id)`
})

/**
 * Meeting attachments: the records (their bytes are in a BlobStore, under the attachment's id), and the tables of
 * the PostgreSQL BlobStore (PgBlobStore): a blob's bytes in chunks of a fixed size, so that neither the server nor
 * the database holds a whole file at once. A blob's rows are written outside any transaction while it streams
 * in, and become visible (`complete`) in one statement at the end. Records go with their meeting and workspace
 * through core (Contents.ts); blobs no record points at are deleted by core's sweep.
 */
const attachments = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE attachments (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces (id) DEFERRABLE INITIALLY DEFERRED,
    meeting_id uuid NOT NULL REFERENCES meetings (id) DEFERRABLE INITIALLY DEFERRED,
    file_name text NOT NULL,
    content_type text NOT NULL,
    size integer NOT NULL CHECK (size >= 0),
    sha256 text NOT NULL,
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX attachments_meeting_order_idx ON attachments (workspace_id, meeting_id, created_at, id)`

  yield* sql`CREATE TABLE blobs (
    id uuid PRIMARY KEY,
    key text NOT NULL,
    size bigint NOT NULL DEFAULT 0 CHECK (size >= 0),
    chunk_size integer NOT NULL CHECK (chunk_size > 0),
    complete boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE UNIQUE INDEX blobs_complete_key_idx ON blobs (key) WHERE complete`
  yield* sql`CREATE INDEX blobs_key_idx ON blobs (key, created_at)`
  yield* sql`CREATE TABLE blob_chunks (
    blob_id uuid NOT NULL REFERENCES blobs (id) ON DELETE CASCADE,
    index integer NOT NULL CHECK (index >= 0),
    data bytea NOT NULL,
    PRIMARY KEY (blob_id, index)
  )`
})

/**
 * Sign-in attempts are counted before the password is checked, and a successful one is forgotten afterwards: each
 * row of `sign_in_failures` names its attempt (rows from before have none, and are only ever counted).
 */
const signInAttempts = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE sign_in_failures ADD COLUMN attempt uuid`
  yield* sql`CREATE INDEX sign_in_failures_attempt_idx ON sign_in_failures (attempt) WHERE attempt IS NOT NULL`
})

/**
 * Partner apps (issue 12): the apps, their slug and client id each unique, their secrets only as SHA-256 hashes, and
 * the workspaces connected to them. A connection belongs to its workspace (core deletes it before the workspace:
 * the deferred key refuses a deletion that would leave one behind) and to its app (apps are never deleted).
 */
const partnerApps = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE partner_apps (
    id uuid PRIMARY KEY,
    name text NOT NULL,
    slug text NOT NULL CONSTRAINT partner_apps_slug_key UNIQUE,
    status text NOT NULL,
    webhook_url text,
    co_brand_name text,
    co_brand_logo_url text,
    client_id text NOT NULL CONSTRAINT partner_apps_client_id_key UNIQUE,
    redirect_uris text[] NOT NULL,
    api_key_hash text NOT NULL,
    client_secret_hash text NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX partner_apps_created_idx ON partner_apps (created_at DESC, id DESC)`
  yield* sql`CREATE TABLE partner_app_workspaces (
    partner_app_id uuid NOT NULL REFERENCES partner_apps (id) DEFERRABLE INITIALLY DEFERRED,
    workspace_id uuid NOT NULL REFERENCES workspaces (id) DEFERRABLE INITIALLY DEFERRED,
    connected_at timestamptz NOT NULL,
    PRIMARY KEY (partner_app_id, workspace_id)
  )`
  yield* sql`CREATE INDEX partner_app_workspaces_workspace_idx ON partner_app_workspaces (workspace_id)`
  yield* sql`CREATE INDEX partner_app_workspaces_connected_idx ON partner_app_workspaces (partner_app_id, connected_at DESC, workspace_id DESC)`
})

/**
 * Partner webhooks and automations (issue 12): each app's webhook secret, sealed (SecretBox), null for the apps made
 * before (the operator makes one by rotating it); the apps' automations, with their actions in order. An automation
 * belongs to its app (apps are never deleted), an action to its automation (automations are never deleted either);
 * the deliveries of both go through the one outbox (`deliveries`, addressed by kind and id). The indexes serve the
 * fan-out (the automations of connected apps with a trigger) and the worker (the automation of an action).
 */
const partnerEvents = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE partner_apps ADD COLUMN sealed_webhook_secret text`
  yield* sql`CREATE TABLE partner_automations (
    id uuid PRIMARY KEY,
    partner_app_id uuid NOT NULL REFERENCES partner_apps (id) DEFERRABLE INITIALLY DEFERRED,
    name text NOT NULL,
    description text,
    trigger_type text NOT NULL,
    enabled boolean NOT NULL,
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX partner_automations_app_created_idx ON partner_automations (partner_app_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX partner_automations_app_trigger_idx ON partner_automations (partner_app_id, trigger_type)`
  yield* sql`CREATE TABLE partner_automation_actions (
    id uuid PRIMARY KEY,
    automation_id uuid NOT NULL REFERENCES partner_automations (id) DEFERRABLE INITIALLY DEFERRED,
    position integer NOT NULL CHECK (position >= 0),
    type text NOT NULL,
    webhook_url text NOT NULL,
    UNIQUE (automation_id, position)
  )`
})

/**
 * The partner OAuth server: a partner app may leave PKCE out (partner-api.md), so an authorization code's challenge
 * may be null. Its clients are partner apps (no oauth_clients row), its tokens credentials of their own kinds.
 */
const partnerOAuth = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE authorization_codes ALTER COLUMN code_challenge DROP NOT NULL`
})

/**
 * The partner API's budgets per client address count in windows of five minutes beside the one-minute windows of
 * the others, so a counter's row says when its window ends, and a window's first hit drops the rows whose windows
 * ended (instead of every row that started earlier, which took the five-minute counts away each minute). Rows of
 * 0011 had one-minute windows. A process of an earlier version inserting during an upgrade gets the default 0: its
 * rows are dropped at the next window's first hit, which only ever gives callers more room.
 */
const partnerRateLimits = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE rate_limit_counters ADD COLUMN window_end bigint NOT NULL DEFAULT 0`
  yield* sql`UPDATE rate_limit_counters SET window_end = window_start + 60000`
  yield* sql`DROP INDEX rate_limit_counters_window_idx`
  yield* sql`CREATE INDEX rate_limit_counters_end_idx ON rate_limit_counters (window_end)`
})

/**
 * Partner domain verifications (issue 13): one row per app and domain; at most one app holds a domain verified (a
 * partial unique index backs core's rule); the domain's rows are found together (a decision about a domain locks them
 * all); the sweep finds the pending ones by expiry and the verified ones by their last check. Partner apps get their
 * webhook filter: the event types their webhooks are sent for, null for every type.
 */
const partnerDomainVerifications = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE partner_domain_verifications (
    partner_app_id uuid NOT NULL REFERENCES partner_apps (id) DEFERRABLE INITIALLY DEFERRED,
    domain text NOT NULL,
    status text NOT NULL,
    challenge text NOT NULL,
    issued_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    verified_at timestamptz,
    last_checked_at timestamptz,
    last_proven_at timestamptz,
    proof_missing_since timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (partner_app_id, domain)
  )`
  yield* sql`CREATE INDEX partner_domain_verifications_domain_idx ON partner_domain_verifications (domain, partner_app_id)`
  yield* sql`CREATE UNIQUE INDEX partner_domain_verifications_verified_key ON partner_domain_verifications (domain)
    WHERE status = 'verified'`
  yield* sql`CREATE INDEX partner_domain_verifications_expiry_idx ON partner_domain_verifications (expires_at)
    WHERE status = 'pending'`
  yield* sql`CREATE INDEX partner_domain_verifications_checked_idx ON partner_domain_verifications (last_checked_at NULLS FIRST)
    WHERE status = 'verified'`
  yield* sql`ALTER TABLE partner_apps ADD COLUMN webhook_events text[]`
})

/**
 * Partner IdP configurations (issue 13): at most one per app (the primary key is the app's), the IdP's client secret
 * only sealed (SecretVault), the claim mappings as JSON text, the allowed e-mail domains as an array with a GIN index
 * (which other app claims a domain), and the active ones by their last discovery fetch (the background refresh).
 */
const partnerIdpConfigs = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE partner_idp_configs (
    partner_app_id uuid PRIMARY KEY REFERENCES partner_apps (id) DEFERRABLE INITIALLY DEFERRED,
    id uuid NOT NULL CONSTRAINT partner_idp_configs_id_key UNIQUE,
    name text NOT NULL,
    discovery_url text NOT NULL,
    idp_client_id text NOT NULL,
    sealed_client_secret text NOT NULL,
    scopes text[] NOT NULL,
    claim_mappings text NOT NULL,
    mode text NOT NULL,
    allowed_email_domains text[] NOT NULL,
    is_active boolean NOT NULL,
    issuer text NOT NULL,
    authorization_endpoint text NOT NULL,
    token_endpoint text NOT NULL,
    userinfo_endpoint text,
    jwks_uri text NOT NULL,
    discovery_last_fetched_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX partner_idp_configs_domains_idx ON partner_idp_configs USING gin (allowed_email_domains)`
  yield* sql`CREATE INDEX partner_idp_configs_discovery_idx ON partner_idp_configs (discovery_last_fetched_at, id) WHERE is_active`
})

/**
 * Partner SSO sessions (issue 13): one row per session, found by id (polling) or by the state's hash (the callback:
 * unique); the signed-in user kept as JSON until the outcome is read; the sweep deletes them by expiry.
 */
const partnerSsoSessions = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE partner_sso_sessions (
    id text PRIMARY KEY,
    partner_app_id uuid NOT NULL REFERENCES partner_apps (id) DEFERRABLE INITIALLY DEFERRED,
    idp_config_id uuid NOT NULL,
    target text NOT NULL,
    state text NOT NULL,
    state_hash text NOT NULL CONSTRAINT partner_sso_sessions_state_hash_key UNIQUE,
    nonce_hash text NOT NULL,
    sealed_code_verifier text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    finished_at timestamptz,
    consumed_at timestamptz,
    result text,
    error text,
    error_description text
  )`
  yield* sql`CREATE INDEX partner_sso_sessions_expires_idx ON partner_sso_sessions (expires_at)`
})

/**
 * Partner toolkits (issue 14): the toolkits, their versions (the manifest as JSON text), their installations in
 * workspaces (one per workspace and toolkit; the pending ones are the distribution's queue, claimed with SKIP LOCKED)
 * and the workspaces' opt-out of automatic toolkit updates. A workspace's rows go with it (ON DELETE CASCADE), and so
 * do a toolkit's versions and installations.
 */
const partnerToolkits = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE partner_toolkits (
    id uuid PRIMARY KEY,
    partner_app_id uuid NOT NULL REFERENCES partner_apps (id) DEFERRABLE INITIALLY DEFERRED,
    name text NOT NULL,
    description text,
    auto_propagate boolean NOT NULL,
    auto_install_on_new_workspaces boolean NOT NULL,
    latest_version_id uuid NOT NULL,
    published_version_id uuid,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX partner_toolkits_app_created_idx ON partner_toolkits (partner_app_id, created_at DESC, id DESC)`
  yield* sql`CREATE TABLE partner_toolkit_versions (
    id uuid PRIMARY KEY,
    toolkit_id uuid NOT NULL REFERENCES partner_toolkits (id) ON DELETE CASCADE,
    number integer NOT NULL CHECK (number >= 1),
    manifest text NOT NULL,
    status text NOT NULL,
    created_at timestamptz NOT NULL,
    published_at timestamptz,
    UNIQUE (toolkit_id, number)
  )`
  yield* sql`CREATE TABLE partner_toolkit_installations (
    workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    toolkit_id uuid NOT NULL REFERENCES partner_toolkits (id) ON DELETE CASCADE,
    version_id uuid NOT NULL,
    installed_version_id uuid,
    status text NOT NULL,
    reason text,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, toolkit_id)
  )`
  yield* sql`CREATE INDEX partner_toolkit_installations_toolkit_idx ON partner_toolkit_installations (toolkit_id)`
  yield* sql`CREATE INDEX partner_toolkit_installations_pending_idx ON partner_toolkit_installations (updated_at)
    WHERE status = 'pending'`
  yield* sql`CREATE TABLE workspace_toolkit_opt_outs (
    workspace_id uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE
  )`
})

/**
 * Partner workflow runs (issue 14): one row per run, its template as it was at creation, its role mappings, steps
 * and failure as JSON (jsonb); the runs' human tasks, at most one per run and step. A run keeps its toolkit's id
 * without a foreign key (a run outlives its toolkit's deletion); a workspace's runs go with it, and a run's tasks
 * with the run (ON DELETE CASCADE). The index serves an app's list of a workspace's runs, newest first.
 */
const partnerWorkflowRuns = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE workflow_runs (
    id uuid PRIMARY KEY,
    partner_app_id uuid NOT NULL REFERENCES partner_apps (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    toolkit_id uuid NOT NULL,
    template_id uuid NOT NULL,
    template jsonb NOT NULL,
    status text NOT NULL,
    role_mappings jsonb NOT NULL,
    steps jsonb NOT NULL,
    failure jsonb,
    created_by_user_id uuid NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX workflow_runs_app_workspace_created_idx
    ON workflow_runs (partner_app_id, workspace_id, created_at DESC, id DESC)`
  yield* sql`CREATE TABLE workflow_tasks (
    id uuid PRIMARY KEY,
    run_id uuid NOT NULL REFERENCES workflow_runs (id) ON DELETE CASCADE,
    step_key text NOT NULL,
    assignee_user_id uuid NOT NULL,
    status text NOT NULL,
    comment text,
    resolved_by_user_id uuid,
    created_at timestamptz NOT NULL,
    resolved_at timestamptz,
    UNIQUE (run_id, step_key)
  )`
})

/** Every migration, by `<id>_<name>`. Append new ones; never edit one that shipped. */
export const migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {
  "0001_init": init,
  "0002_rules_in_core": rulesInCore,
  "0003_folded_titles": foldedTitles,
  "0004_operator_administration": operatorAdministration,
  "0005_oauth": oauth,
  "0006_events": events,
  "0007_webhooks": webhooks,
  "0008_backlog": backlog,
  "0009_attachments": attachments,
  "0010_context": context,
  "0011_rate_limits": rateLimits,
  "0012_sign_in_attempts": signInAttempts,
  "0013_partner_apps": partnerApps,
  "0014_partner_events": partnerEvents,
  "0015_partner_oauth": partnerOAuth,
  "0016_partner_rate_limits": partnerRateLimits,
  "0017_partner_domain_verifications": partnerDomainVerifications,
  "0018_partner_idp_configs": partnerIdpConfigs,
  "0019_partner_sso_sessions": partnerSsoSessions,
  "0020_partner_toolkits": partnerToolkits,
  "0021_partner_workflow_runs": partnerWorkflowRuns
}

const runMigrator = Migrator.make({})

/** Every migration as the Migrator resolves it: `[id, name]`, in order. */
export const all: Effect.Effect<ReadonlyArray<readonly [id: number, name: string]>, Migrator.MigrationError> = Effect.map(
  Migrator.fromRecord(migrations),
  (resolved) => resolved.map(([id, name]) => [id, name] as const)
)

/**
 * Brings the schema up to date; safe to run from several processes at once. Answers the migrations this call
 * ran (none when another runner did them).
 */
export const run: Effect.Effect<
  ReadonlyArray<readonly [id: number, name: string]>,
  Migrator.MigrationError | SqlError.SqlError,
  SqlClient.SqlClient
> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Same columns as the Migrator's own table. Concurrent CREATE TABLE IF NOT EXISTS can still collide in the
  // catalog, hence the advisory lock (released at commit).
  yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql`SELECT pg_advisory_xact_lock(hashtext(${table}))`
    yield* sql`CREATE TABLE IF NOT EXISTS ${sql(table)} (
      migration_id integer PRIMARY KEY,
      created_at timestamptz NOT NULL DEFAULT now(),
      name text NOT NULL
    )`
  }))
  return yield* runMigrator({ loader: Migrator.fromRecord(migrations), table })
}).pipe(Effect.withSpan("PgMigrations.run"))

/**
 * The migrations `run` would apply now, without applying any (and without creating the migrations table): as
 * the Migrator decides, those numbered after the latest one recorded; every one on a database never migrated.
 * Only reads, so it may run beside a server that is migrating.
 */
export const pending: Effect.Effect<
  ReadonlyArray<readonly [id: number, name: string]>,
  Migrator.MigrationError | SqlError.SqlError,
  SqlClient.SqlClient
> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const every = yield* all
  const [found] = yield* sql<{ readonly present: boolean }>`SELECT to_regclass(${table}) IS NOT NULL AS present`
  if (found?.present !== true) return every
  const [latest] = yield* sql<{ readonly migration_id: number }>`SELECT migration_id FROM ${sql(table)}
    ORDER BY migration_id DESC LIMIT 1`
  return every.filter(([id]) => id > (latest?.migration_id ?? 0))
}).pipe(Effect.withSpan("PgMigrations.pending"))
