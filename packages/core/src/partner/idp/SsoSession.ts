/**
 * A partner single sign-on session (partner document: "SSO session status"; the decisions are PartnerSso's): made by
 * /v1/partner/sso/initiate, finished by the identity provider's answer at /v1/partner/sso/callback, read once by the
 * partner through /v1/partner/sso/session/{session_id}.
 *
 * As stored, a session is `pending` (waiting for the IdP), `completed` (a Convene user was signed in: `result`),
 * or `failed` (`error`); once its outcome was read it is consumed (`consumed_at`) and reads not_found from then on. A pending
 * session past `expires_at` reads `expired`, and so does an outcome nobody collected before `expires_at` (finishing
 * sets it to 10 minutes after the finish). The state and nonce sent to the IdP are kept only as SHA-256 hashes (the
 * callback finds the session by the state's, the ID token's nonce is compared with the other); the PKCE verifier,
 * which the code exchange must send in the clear, is kept sealed (SecretBox).
 */
import { Schema } from "effect"
import { UserId, WorkspaceId } from "../../shared/Ids.js"
import { Timestamp } from "../../shared/Time.js"
import { PartnerAppId } from "../PartnerApp.js"
import { IdpConfigId } from "./IdpConfig.js"

const idPattern = /^[A-Za-z0-9_-]{22}$/

/** 128 random bits in base64url (22 characters): the only credential of the polling endpoint. */
export const SsoSessionId = Schema.String.pipe(
  Schema.pattern(idPattern, { message: () => "must be a session id as initiate answered it" }),
  Schema.brand("SsoSessionId")
).annotations({
  identifier: "SsoSessionId",
  description: "the session's id: 128 random bits in base64url (22 characters)",
  jsonSchema: { type: "string", pattern: idPattern.source }
})
export type SsoSessionId = typeof SsoSessionId.Type

/** Whether `value` has the form of a session id. */
export const isSsoSessionId = (value: string): value is SsoSessionId => idPattern.test(value)

/** Where the browser goes after the callback: the app's web redirect URI, or a Convene page for a desktop app. */
export const SsoTarget = Schema.Literal("web", "desktop").annotations({ identifier: "SsoTarget" })
export type SsoTarget = typeof SsoTarget.Type

export const SsoSessionState = Schema.Literal("pending", "completed", "failed")
export type SsoSessionState = typeof SsoSessionState.Type

/**
 * Why a sign-in failed, as the session and the target's `error` parameter name it:
 * - `idp_error`: the IdP answered the callback with an error (the user cancelled, the IdP refused);
 * - `invalid_callback`: the callback carried neither a code nor an error;
 * - `token_exchange_failed`: the IdP's token endpoint could not be reached or refused the code;
 * - `invalid_id_token`: the ID token's signature, issuer, audience, expiry, nonce or azp is wrong;
 * - `email_missing`, `email_not_verified`: no usable e-mail claim, or the IdP says it is not verified;
 * - `domain_not_allowed`: the e-mail's domain is not among the configuration's allowed domains;
 * - `domain_not_verified`: it is, but the app has not verified it (or lost it);
 * - `no_prior_connection`: no Convene user with this e-mail has connected the app through its OAuth consent (an
 *   unknown e-mail answers the same, so the partner learns nothing of who has a Convene account);
 * - `sso_not_configured`: the app's IdP configuration was deleted, deactivated or replaced, or the app suspended,
 *   since the session began.
 */
export const SsoFailure = Schema.Literal(
  "idp_error",
  "issuer_mismatch",
  "invalid_callback",
  "token_exchange_failed",
  "invalid_id_token",
  "email_missing",
  "email_not_verified",
  "domain_not_allowed",
  "domain_not_verified",
  "no_prior_connection",
  "sso_not_configured"
).annotations({ identifier: "SsoFailure" })
export type SsoFailure = typeof SsoFailure.Type

/** Who signed in: what a completed session hands the partner (never a token of the IdP). */
export class SsoUser extends Schema.Class<SsoUser>("SsoUser")({
  user_id: UserId,
  email: Schema.String,
  name: Schema.String,
  workspace_id: WorkspaceId
}) {}

export class SsoSession extends Schema.Class<SsoSession>("SsoSession")({
  id: SsoSessionId,
  partner_app_id: PartnerAppId,
  /** The IdP configuration the session began with (a replaced one does not finish it). */
  idp_config_id: IdpConfigId,
  target: SsoTarget,
  state: SsoSessionState,
  /** SHA-256 (hex) of the `state` parameter sent to the IdP. */
  state_hash: Schema.String,
  /** SHA-256 (hex) of the `nonce` parameter sent to the IdP. */
  nonce_hash: Schema.String,
  /** The PKCE code verifier, sealed (SecretBox). */
  sealed_code_verifier: Schema.String,
  created_at: Timestamp,
  /** Pending: when authentication must have finished; finished: until when the outcome can be read. */
  expires_at: Timestamp,
  finished_at: Schema.NullOr(Timestamp),
  /** When the outcome was read (once). */
  consumed_at: Schema.NullOr(Timestamp),
  /** Who signed in (completed sessions). */
  result: Schema.NullOr(SsoUser),
  /** Why it failed (failed sessions), and the IdP's own words when it sent an error. */
  error: Schema.NullOr(SsoFailure),
  error_description: Schema.NullOr(Schema.String)
}) {}

/** How a session ends: `completed` with the user, or `failed` with why. */
export type SsoOutcome =
  | { readonly state: "completed"; readonly result: SsoUser }
  | { readonly state: "failed"; readonly error: SsoFailure; readonly error_description: string | null }
