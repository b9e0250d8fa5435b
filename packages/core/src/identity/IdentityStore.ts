import { Context, type DateTime, type Effect, type Option, Schema } from "effect"
import type { CredentialId, UserId, WorkspaceId } from "../shared/Ids.js"
import type { Page, Slice } from "../shared/Pagination.js"
import type { Email } from "../shared/Text.js"
import type { Credential, CredentialKind, Role, User } from "./Identity.js"

/** A uniqueness constraint of the store refused the write. */
export class DuplicateKey extends Schema.TaggedError<DuplicateKey>()("DuplicateKey", {
  constraint: Schema.String
}) {}

/** Which users a list reads. */
export interface UserFilter {
  /** Only the users of this workspace (none: every user of the installation). */
  readonly workspaceId?: WorkspaceId | undefined
  /** Only the users with this role (none: whatever their role). */
  readonly role?: Role | undefined
}

/**
 * Port: users. E-mail addresses (kept normalised by core, see Email) are unique across the installation.
 * Lists are newest first (created_at desc, id desc). What other ports keep on a user (participant rows, owned
 * meetings, presenters, assignments, talking points, credentials) is theirs: core lets go of it before it
 * deletes the user (see IdentityReferences).
 */
export class UserStore extends Context.Tag("@convene/core/UserStore")<UserStore, {
  readonly insert: (user: User) => Effect.Effect<void, DuplicateKey>
  /** Replaces the stored user with the same id (nothing when there is none); a changed e-mail may be DuplicateKey. */
  readonly update: (user: User) => Effect.Effect<void, DuplicateKey>
  readonly get: (id: UserId) => Effect.Effect<Option.Option<User>>
  /** The users among `ids` that belong to `workspaceId`, in no particular order. */
  readonly getMany: (workspaceId: WorkspaceId, ids: ReadonlyArray<UserId>) => Effect.Effect<ReadonlyArray<User>>
  readonly findByEmail: (email: Email) => Effect.Effect<Option.Option<User>>
  /** A page of the users `filter` passes, newest first. */
  readonly list: (filter: UserFilter, page: Page) => Effect.Effect<Slice<User>>
  /** How many users each of the given workspaces has (a workspace without any may be absent). */
  readonly countByWorkspace: (workspaceIds: ReadonlyArray<WorkspaceId>) => Effect.Effect<ReadonlyMap<WorkspaceId, number>>
  /** Deletes the user; answers whether it existed. */
  readonly delete: (id: UserId) => Effect.Effect<boolean>
  /** Deletes every user of the workspace. */
  readonly deleteByWorkspace: (workspaceId: WorkspaceId) => Effect.Effect<void>
}>() {}

/** Which credentials a list reads: always those of one workspace that are live at one instant. */
export interface CredentialFilter {
  readonly workspaceId: WorkspaceId
  /** Only the credentials this user holds (none: whoever holds them). */
  readonly userId?: UserId | undefined
  /** Only credentials of these kinds (none: of every kind). */
  readonly kinds?: ReadonlyArray<CredentialKind> | undefined
  /**
   * Only the credentials live at this instant, as `isLive` says: not revoked, and without an expiry or with
   * one after this instant.
   */
  readonly liveAt: DateTime.Utc
}

/** Port: credentials (tokens and API keys), looked up by the SHA-256 of the presented token. */
export class CredentialStore extends Context.Tag("@convene/core/CredentialStore")<CredentialStore, {
  readonly insert: (credential: Credential) => Effect.Effect<void, DuplicateKey>
  /**
   * The credential with that hash together with its owner (the user row its user_id names, if that user
   * still exists), read in one go: this runs on every authenticated request.
   */
  readonly findByHashWithOwner: (
    tokenHash: string
  ) => Effect.Effect<Option.Option<{ readonly credential: Credential; readonly owner: Option.Option<User> }>>
  readonly get: (workspaceId: WorkspaceId, id: CredentialId) => Effect.Effect<Option.Option<Credential>>
  /** Credentials of `userId`, newest first (revoked ones included; callers filter). */
  readonly listByUser: (userId: UserId) => Effect.Effect<ReadonlyArray<Credential>>
  /** A page of the credentials `filter` passes, newest first (created_at desc, id desc). */
  readonly list: (filter: CredentialFilter, page: Page) => Effect.Effect<Slice<Credential>>
  /**
   * How many credentials of `kinds` live at `liveAt` (as in CredentialFilter) each of the given workspaces
   * has (a workspace without any may be absent).
   */
  readonly countLive: (input: {
    readonly workspaceIds: ReadonlyArray<WorkspaceId>
    readonly kinds: ReadonlyArray<CredentialKind>
    readonly liveAt: DateTime.Utc
  }) => Effect.Effect<ReadonlyMap<WorkspaceId, number>>
  /** Marks the credential revoked at `at` unless it already is; answers whether it changed. */
  readonly revoke: (id: CredentialId, at: DateTime.Utc) => Effect.Effect<boolean>
  /** Deletes every credential the user holds (revoked ones too); answers their ids. */
  readonly deleteByUser: (userId: UserId) => Effect.Effect<ReadonlyArray<CredentialId>>
  /** Deletes every credential of the workspace (API keys and users' tokens, revoked ones too); answers their ids. */
  readonly deleteByWorkspace: (workspaceId: WorkspaceId) => Effect.Effect<ReadonlyArray<CredentialId>>
}>() {}
