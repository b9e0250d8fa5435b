/** Users, roles, scopes, credentials and the principal a credential authenticates as. */
import { DateTime, Schema } from "effect"
import { CredentialId, UserId, WorkspaceId } from "../shared/Ids.js"
import { Email } from "../shared/Text.js"
import { Timestamp } from "../shared/Time.js"

export const Role = Schema.Literal("OWNER", "ADMIN", "MEMBER").annotations({ identifier: "Role" })
export type Role = typeof Role.Type

export const Scopes = [
  "meetings:read",
  "meetings:write",
  "action-items:read",
  "action-items:write",
  "calendar:read",
  "workspace:read",
  "workspace:write"
] as const
export const Scope = Schema.Literal(...Scopes).annotations({ identifier: "Scope" })
export type Scope = typeof Scope.Type

/**
 * Scopes only partner apps' tokens hold (partner-api.md, "Scopes named"; decisions.md): `profile` (the user's name
 * and e-mail in the ID token) and the workflow scopes of the partner API. No first-party token or key carries them,
 * and no role gates them.
 */
export const PartnerOnlyScopes = ["profile", "partner-api/workflows:read", "partner-api/workflows:write"] as const

/**
 * Every scope a stored credential, grant or authorization code may hold: the first-party scopes (`Scope`, which
 * the first-party API's requests decode) and the partner-only ones.
 */
export const HeldScope = Schema.Literal(...Scopes, ...PartnerOnlyScopes).annotations({ identifier: "HeldScope" })
export type HeldScope = typeof HeldScope.Type

export const isFirstPartyScope = (scope: HeldScope): scope is Scope => (Scopes as ReadonlyArray<string>).includes(scope)

export const WorkspaceScopes: ReadonlyArray<Scope> = ["workspace:read", "workspace:write"]
export const isWorkspaceScope = (scope: HeldScope): boolean => (WorkspaceScopes as ReadonlyArray<string>).includes(scope)

/** The scopes a user's role lets them hold (and so grant to their tokens). */
export const grantsOf = (role: Role): ReadonlyArray<Scope> =>
  role === "MEMBER" ? Scopes.filter((scope) => !isWorkspaceScope(scope)) : Scopes

/** Whether the user's role lets them hold the scope: the partner-only scopes are not role-gated. */
export const roleGrants = (role: Role, scope: HeldScope): boolean =>
  !isFirstPartyScope(scope) || grantsOf(role).includes(scope)

/**
 * The scopes a credential authenticates with: a user's token those of its scopes that the holder's current role
 * grants (a role lowered since issue takes them away; raised again, gives back no more than the token was
 * issued with); a workspace API key (no holder) all of its own.
 */
export const scopesGranted = <S extends HeldScope>(scopes: ReadonlyArray<S>, holderRole: Role | null): ReadonlyArray<S> => {
  if (holderRole === null) return scopes
  return scopes.filter((scope) => roleGrants(holderRole, scope))
}

/** A user as stored. The password hash never leaves the core. */
export class User extends Schema.Class<User>("User")({
  id: UserId,
  workspace_id: WorkspaceId,
  email: Email,
  name: Schema.String,
  role: Role,
  password_hash: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

export const CredentialKind = Schema.Literal(
  "access_token",
  "refresh_token",
  "personal_access_token",
  "short_lived",
  "api_key",
  "partner_access_token",
  "partner_refresh_token"
).annotations({ identifier: "CredentialKind" })
export type CredentialKind = typeof CredentialKind.Type

/** The kinds a user holds (every kind but the workspace API key, which acts as the workspace). */
export const userCredentialKinds: ReadonlyArray<CredentialKind> = CredentialKind.literals.filter((kind) => kind !== "api_key")

/** The documented plaintext prefix of each kind. Tokens are opaque to clients; the prefix is for humans and scanners. */
export const tokenPrefix: Record<CredentialKind, string> = {
  access_token: "svc_at_v1_",
  refresh_token: "svc_rt_v1_",
  short_lived: "svc_slt_v1_",
  personal_access_token: "svc_pat_v1_",
  api_key: "svc_wk_v1_",
  partner_access_token: "svc_pua_v1_",
  partner_refresh_token: "svc_pur_v1_"
}

/** A credential as stored: only the SHA-256 of the token, never the token. */
export class Credential extends Schema.Class<Credential>("Credential")({
  id: CredentialId,
  workspace_id: WorkspaceId,
  user_id: Schema.NullOr(UserId),
  kind: CredentialKind,
  name: Schema.NullOr(Schema.String),
  scopes: Schema.Array(HeldScope),
  token_hash: Schema.String,
  client_id: Schema.NullOr(Schema.String),
  expires_at: Schema.NullOr(Timestamp),
  revoked_at: Schema.NullOr(Timestamp),
  created_at: Timestamp
}) {}

/**
 * A credential authenticates (is live) at `at` while it is not revoked and has no expiry or expires after `at`
 * (at its expiry instant it is expired). Stores that filter credentials by liveness (`CredentialFilter.liveAt`)
 * apply exactly this.
 */
export const isLive = (credential: Pick<Credential, "revoked_at" | "expires_at">, at: DateTime.Utc): boolean =>
  credential.revoked_at === null && (credential.expires_at === null || DateTime.greaterThan(credential.expires_at, at))

/**
 * What a caller authenticated with: a credential of one of the kinds, or the signed-in browser session, which only
 * the endpoints that say so accept (issuing a personal access token).
 */
export const PrincipalKind = Schema.Union(CredentialKind, Schema.Literal("session"))
export type PrincipalKind = typeof PrincipalKind.Type

/** Who is calling: what a valid credential authenticates as, for the length of one request. */
export class Principal extends Schema.Class<Principal>("Principal")({
  /** The credential's id (the session's id for a session). */
  credential_id: CredentialId,
  kind: PrincipalKind,
  workspace_id: WorkspaceId,
  user_id: Schema.NullOr(UserId),
  role: Schema.NullOr(Role),
  scopes: Schema.Array(HeldScope),
  client_id: Schema.NullOr(Schema.String),
  expires_at: Schema.NullOr(Timestamp)
}) {}
