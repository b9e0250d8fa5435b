import { Context, type DateTime, type Effect, type Option } from "effect"
import type { CredentialId, UserId, WorkspaceId } from "../shared/Ids.js"
import type { DuplicateKey } from "../identity/IdentityStore.js"
import type { User } from "../identity/Identity.js"
import type { AuthorizationCode, Grant, GrantId, OAuthClient, Session, SessionId, SigningKey } from "./OAuth.js"

/**
 * Port: the authorization server's records. Clients are keyed by `client_id`; codes by the SHA-256 of the code.
 * A grant's credentials live in the CredentialStore; this port keeps which credentials belong to which grant.
 * The built-in client `convene-cli` is not stored (core knows it).
 */
export class OAuthStore extends Context.Tag("@convene/core/OAuthStore")<OAuthStore, {
  readonly insertClient: (client: OAuthClient) => Effect.Effect<void, DuplicateKey>
  readonly getClient: (clientId: string) => Effect.Effect<Option.Option<OAuthClient>>
  /** Replaces the stored client with the same client_id (nothing when there is none). */
  readonly updateClient: (client: OAuthClient) => Effect.Effect<void>
  /** Deletes the client with its codes and grants (their credentials are revoked by core first); answers whether it existed. */
  readonly deleteClient: (clientId: string) => Effect.Effect<boolean>

  readonly insertCode: (code: AuthorizationCode) => Effect.Effect<void, DuplicateKey>
  readonly getCode: (codeHash: string) => Effect.Effect<Option.Option<AuthorizationCode>>
  /** Marks the code consumed at `at` unless it already is; answers whether this call consumed it. */
  readonly consumeCode: (codeHash: string, at: DateTime.Utc) => Effect.Effect<boolean>
  /** Deletes codes that expired before `before`. */
  readonly purgeCodes: (before: DateTime.Utc) => Effect.Effect<void>

  readonly insertGrant: (grant: Grant) => Effect.Effect<void, DuplicateKey>
  readonly getGrant: (id: GrantId) => Effect.Effect<Option.Option<Grant>>
  /** Marks the grant revoked at `at` unless it already is; answers whether it changed. */
  readonly revokeGrant: (id: GrantId, at: DateTime.Utc) => Effect.Effect<boolean>
  /** Records that the credential was issued under the grant. */
  readonly addGrantCredential: (id: GrantId, credentialId: CredentialId) => Effect.Effect<void>
  /** The credentials issued under the grant, in the order they were added. */
  readonly grantCredentials: (id: GrantId) => Effect.Effect<ReadonlyArray<CredentialId>>
  /** The credentials issued under every grant of the client (to revoke them before the client is deleted). */
  readonly clientCredentials: (clientId: string) => Effect.Effect<ReadonlyArray<CredentialId>>
  /** The grant a credential was issued under, if any. */
  readonly grantOf: (credentialId: CredentialId) => Effect.Effect<Option.Option<GrantId>>
  /** Whether the user holds a grant of the client that is not revoked (partner SSO's "prior connection"). */
  readonly hasLiveGrant: (clientId: string, userId: UserId) => Effect.Effect<boolean>

  /** Every signing key, newest first. */
  readonly signingKeys: Effect.Effect<ReadonlyArray<SigningKey>>
  /** Inserts a key; DuplicateKey when another key is already active (not retired): another process won the race. */
  readonly insertSigningKey: (key: SigningKey) => Effect.Effect<void, DuplicateKey>
  readonly retireSigningKey: (kid: string, at: DateTime.Utc) => Effect.Effect<void>

  /** Deletes the user's codes and grants (with their grant-credential rows). */
  readonly deleteByUser: (userId: UserId) => Effect.Effect<void>
  /** Deletes the workspace's codes and grants. */
  readonly deleteByWorkspace: (workspaceId: WorkspaceId) => Effect.Effect<void>
}>() {}

/**
 * A sign-in attempt to count against the limits: its id, and under each key (an account, a client address) the
 * number of attempts within the window (those at or after `since`) that leaves no room for another.
 */
export interface SignInAttempt {
  readonly id: string
  readonly limits: ReadonlyArray<{ readonly key: string; readonly limit: number }>
  readonly at: DateTime.Utc
  readonly since: DateTime.Utc
}

/**
 * Port: browser sessions, looked up by the SHA-256 of the session token, and sign-in attempts counted per key
 * (an account's e-mail, a client address) for the sign-in rate limit, shared by every server process. An
 * attempt is counted before its password is checked and stays counted as a failure unless it is forgotten.
 */
export class SessionStore extends Context.Tag("@convene/core/SessionStore")<SessionStore, {
  readonly insert: (session: Session) => Effect.Effect<void, DuplicateKey>
  /** The session with that hash and its user (if the user still exists), read in one go. */
  readonly findByHash: (
    tokenHash: string
  ) => Effect.Effect<Option.Option<{ readonly session: Session; readonly user: Option.Option<User> }>>
  /** Marks the session revoked at `at` unless it already is. */
  readonly revoke: (id: SessionId, at: DateTime.Utc) => Effect.Effect<void>
  /** Deletes sessions that expired or were revoked before `before`. */
  readonly purge: (before: DateTime.Utc) => Effect.Effect<void>
  readonly deleteByUser: (userId: UserId) => Effect.Effect<void>
  readonly deleteByWorkspace: (workspaceId: WorkspaceId) => Effect.Effect<void>

  /**
   * Counts the attempt, atomically with checking the limits: when every key has fewer than its limit of
   * attempts at or after `since`, records the attempt at `at` under each key and answers true; otherwise records
   * nothing and answers false. Attempts made at the same time are counted one after the other, so no more than
   * a key's limit ever get in within the window, however many race.
   */
  readonly recordAttempt: (attempt: SignInAttempt) => Effect.Effect<boolean>
  /** Forgets an attempt under every key (it succeeded); nothing when there is none with that id. */
  readonly forgetAttempt: (id: string) => Effect.Effect<void>
  /** How many attempts each key has at or after `since` (a key without any may be absent). */
  readonly failuresSince: (
    keys: ReadonlyArray<string>,
    since: DateTime.Utc
  ) => Effect.Effect<ReadonlyMap<string, number>>
  /** Forgets the attempts of a key (an account signed in). */
  readonly clearFailures: (key: string) => Effect.Effect<void>
  /** Deletes attempts older than `before`. */
  readonly purgeFailures: (before: DateTime.Utc) => Effect.Effect<void>
}>() {}
