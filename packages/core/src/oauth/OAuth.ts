/**
 * The authorization server's records: clients, browser sessions, authorization codes, grants (one per
 * approved authorization: the chain of access and refresh tokens it issues) and signing keys. Secrets (session
 * tokens, codes, registration access tokens) are stored only as SHA-256 hashes; private signing keys only
 * sealed (SecretBox).
 */
import { Schema } from "effect"
import { CredentialId, UserId, Uuid, WorkspaceId } from "../shared/Ids.js"
import { Timestamp } from "../shared/Time.js"
import { HeldScope } from "../identity/Identity.js"

export const GrantId = Uuid.pipe(Schema.brand("GrantId"))
export type GrantId = typeof GrantId.Type

export const SessionId = Uuid.pipe(Schema.brand("SessionId"))
export type SessionId = typeof SessionId.Type

/**
 * Who a client is, which decides the rules it gets (each kind's ClientPolicy; these are the first-party server's,
 * `firstPartyClients`):
 * - `first_party`: public clients of this installation (the built-in `convene-cli`, and those the operator
 *   adds): loopback redirect URIs only, approved without a consent page, may hold workspace scopes the user's
 *   role grants;
 * - `registered`: clients that registered themselves (RFC 7591): https, loopback or custom-scheme redirect URIs
 *   given at registration, a consent page every time, never a workspace scope;
 * - `partner`: partner apps (core/partner), confidential clients of the partner server at /oauth2 (`partnerClients`),
 *   which are never stored as OAuth clients: the partner server finds them among the partner apps.
 */
export const ClientKind = Schema.Literal("first_party", "registered", "partner")
export type ClientKind = typeof ClientKind.Type

export class OAuthClient extends Schema.Class<OAuthClient>("OAuthClient")({
  client_id: Schema.String,
  kind: ClientKind,
  name: Schema.String,
  /** Exact redirect URIs (loopback ones match on any port, RFC 8252 7.3); empty for a first-party client: any loopback URI. */
  redirect_uris: Schema.Array(Schema.String),
  /** The scopes a registered client asked for at registration (none: any it may hold). */
  scope: Schema.NullOr(Schema.Array(HeldScope)),
  client_uri: Schema.NullOr(Schema.String),
  logo_uri: Schema.NullOr(Schema.String),
  /** SHA-256 of the RFC 7592 registration access token (registered clients only). */
  registration_token_hash: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

/** A browser session: made by signing in, ended by signing out or by its expiry. */
export class Session extends Schema.Class<Session>("Session")({
  id: SessionId,
  token_hash: Schema.String,
  user_id: UserId,
  workspace_id: WorkspaceId,
  created_at: Timestamp,
  expires_at: Timestamp,
  revoked_at: Schema.NullOr(Timestamp)
}) {}

/** An authorization code: single use, bound to its client, redirect URI and PKCE challenge. */
export class AuthorizationCode extends Schema.Class<AuthorizationCode>("AuthorizationCode")({
  code_hash: Schema.String,
  /** The grant the code turns into (made when the code is exchanged; revoked when the code is used twice). */
  grant_id: GrantId,
  client_id: Schema.String,
  redirect_uri: Schema.String,
  user_id: UserId,
  workspace_id: WorkspaceId,
  scopes: Schema.Array(HeldScope),
  openid: Schema.Boolean,
  /** The PKCE challenge; null when the client sent none (a partner app, for which PKCE is optional). */
  code_challenge: Schema.NullOr(Schema.String),
  nonce: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  expires_at: Timestamp,
  consumed_at: Schema.NullOr(Timestamp)
}) {}

/**
 * An approved authorization: the access and refresh tokens issued from one code and every refresh after it.
 * Revoking the grant revokes all of them (refresh-token replay, code reuse, RFC 7009 revocation).
 */
export class Grant extends Schema.Class<Grant>("Grant")({
  id: GrantId,
  workspace_id: WorkspaceId,
  user_id: UserId,
  client_id: Schema.String,
  scopes: Schema.Array(HeldScope),
  openid: Schema.Boolean,
  nonce: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  revoked_at: Schema.NullOr(Timestamp)
}) {}

/** A token signing key. The private JWK is stored sealed; the public one is published while the key may have signed live tokens. */
export class SigningKey extends Schema.Class<SigningKey>("SigningKey")({
  kid: Schema.String,
  algorithm: Schema.Literal("RS256"),
  public_jwk: Schema.String,
  sealed_private_jwk: Schema.String,
  created_at: Timestamp,
  /** When it stopped signing (a newer key took over); published until its last token expired. */
  retired_at: Schema.NullOr(Timestamp)
}) {}

/** A credential id of a grant's chain. */
export const GrantCredential = Schema.Struct({ grant_id: GrantId, credential_id: CredentialId })
