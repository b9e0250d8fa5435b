import { Context, type DateTime, type Effect, type Option, Schema } from "effect"
import type { CredentialId, UserId, WorkspaceId } from "../shared/Ids.js"
import type { Email } from "../shared/Text.js"
import type { Credential, User } from "./Identity.js"

/** A uniqueness constraint of the store refused the write. */
export class DuplicateKey extends Schema.TaggedError<DuplicateKey>()("DuplicateKey", {
  constraint: Schema.String
}) {}

/** Port: users. E-mail addresses (kept normalised by core, see Email) are unique across the installation. */
export class UserStore extends Context.Tag("@convene/core/UserStore")<UserStore, {
  readonly insert: (user: User) => Effect.Effect<void, DuplicateKey>
  readonly get: (id: UserId) => Effect.Effect<Option.Option<User>>
  /** The users among `ids` that belong to `workspaceId`, in no particular order. */
  readonly getMany: (workspaceId: WorkspaceId, ids: ReadonlyArray<UserId>) => Effect.Effect<ReadonlyArray<User>>
  readonly findByEmail: (email: Email) => Effect.Effect<Option.Option<User>>
}>() {}

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
  /** Marks the credential revoked at `at` unless it already is; answers whether it changed. */
  readonly revoke: (id: CredentialId, at: DateTime.Utc) => Effect.Effect<boolean>
}>() {}
