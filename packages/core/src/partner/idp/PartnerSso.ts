/**
 * Partner single sign-on (partner document: "Public SSO and OAuth endpoints", "SSO session status"): a user of a
 * partner app signs in at the app's identity provider, and the app learns which Convene user that is. The four
 * public operations, without credentials: `info` (what a sign-in page shows of the app), `initiate` (a session and
 * the IdP's authorization URL), `callback` (the IdP's answer) and `session` (the app polls the outcome).
 *
 * Decisions where the document is silent:
 * - the code is exchanged with HTTP Basic (client_secret_basic); when the token endpoint refuses that as
 *   `invalid_client`, once more with the client id and secret in the form (client_secret_post), for providers that
 *   take only that (the stored configuration does not keep the provider's list of methods).
 * - initiate needs an active app with an active IdP configuration; it makes a session (id: 128 random bits), a state
 *   and a nonce (256 random bits each, kept hashed) and a PKCE verifier (kept sealed), and answers the IdP's
 *   authorization URL (response_type code, the configuration's client id and scopes, redirect_uri the callback,
 *   state, nonce, code_challenge with S256). The `web` target needs a redirect URI registered on the app.
 * - callback finds the session by its state; an unknown state (missing, tampered) cannot be tied to a session and
 *   is refused (`invalid_state`), and so is one whose session is already finished (`session_already_processed`: a
 *   replayed callback changes nothing). Otherwise the session finishes: `failed` with an SsoFailure, or
 *   `completed` with the user, once (a conditional update: of racing callbacks one finishes it).
 * - the ID token: signature by one of the IdP's keys (the adapter), then here: `iss` equal to the configuration's
 *   issuer, `aud` the IdP client id (a string, or a list holding it, then with `azp`), `azp` when present the IdP client
 *   id, `exp` not past (60 s of clock tolerance), `iat` a number, `nonce` the session's (compared hashed, in constant
 *   time).
 * - the e-mail is the claim `claim_mappings.email` names; an `email_verified` claim that is false is refused (absent,
 *   the IdP vouches for the address by giving it). The name claims are not used: SSO creates and changes no account,
 *   and the user's name is Convene's.
 * - the e-mail's domain: with allowed domains (required in strict mode, optional in partner_managed) it must be one
 *   of them and verified by the app now; partner_managed without domains accepts any.
 * - the user must exist (by e-mail) and hold a live (unrevoked) grant of the app's OAuth server with the workspace
 *   still connected to the app; an unknown e-mail and a user without a connection fail alike (`no_prior_connection`).
 * - a pending session expires 10 minutes after initiate; an outcome can be read once, within 10 minutes of the
 *   callback; a session read once, or never made, reads not_found.
 */
import { Context, DateTime, Duration, Effect, Either, Encoding, Layer, Option, Redacted, Schema } from "effect"
import { UserStore } from "../../identity/IdentityStore.js"
import { SecretBox } from "../../oauth/Signing.js"
import { OAuthStore } from "../../oauth/OAuthStore.js"
import { Crypto } from "../../ports/Crypto.js"
import { SecretVault } from "../../ports/SecretVault.js"
import { fn } from "../../shared/Span.js"
import { Email } from "../../shared/Text.js"
import { now, plus, Timestamp } from "../../shared/Time.js"
import { trusted } from "../../shared/Trusted.js"
import type { PartnerApp } from "../PartnerApp.js"
import { PartnerStore } from "../PartnerStore.js"
import { DomainVerificationStore } from "./DomainVerificationStore.js"
import { domainOfEmail } from "./EmailDomain.js"
import { hostedDomainClaimOf } from "./ConsumerIdps.js"
import type { IdpConfig } from "./IdpConfig.js"
import { IdpStore } from "./IdpStore.js"
import { type IdpClientAuth, OidcClient } from "./OidcClient.js"
import {
  isSsoSessionId,
  SsoFailure,
  type SsoOutcome,
  SsoSession,
  SsoSessionId,
  SsoTarget,
  SsoUser
} from "./SsoSession.js"
import { SsoSessionStore } from "./SsoSessionStore.js"

/** partner-api.md "Limits": an SSO session times out after 10 minutes. */
export const ssoSessionLifetime = Duration.minutes(10)

/** How late an ID token's `exp` may be passed, for clocks that disagree a little. */
export const idTokenClockTolerance = Duration.seconds(60)

/**
 * A refusal of an SSO request that no session can carry: `not_found` (no app with that slug; 404),
 * `partner_app_inactive` (the app is suspended; 403), `sso_not_configured` (no active IdP configuration; 400),
 * `invalid_request` (a parameter; 400), `invalid_state` (a callback whose state is missing or matches no session;
 * 400), `session_already_processed` (a callback for a session already finished; 409).
 */
export class SsoRefused extends Schema.TaggedError<SsoRefused>()("SsoRefused", {
  code: Schema.Literal(
    "not_found",
    "partner_app_inactive",
    "sso_not_configured",
    "invalid_request",
    "invalid_state",
    "session_already_processed"
  ),
  message: Schema.String
}) {}

/** GET /v1/partner/sso/info/{slug}. */
export class SsoInfo extends Schema.Class<SsoInfo>("SsoInfo")({
  slug: Schema.String,
  name: Schema.String,
  co_brand_name: Schema.NullOr(Schema.String),
  co_brand_logo_url: Schema.NullOr(Schema.String),
  has_idp_config: Schema.Boolean.annotations({ description: "the app has an IdP configuration (active or not)" }),
  is_active: Schema.Boolean.annotations({
    description: "single sign-on can start now: the app is active and its IdP configuration exists and is active"
  })
}) {}

/** GET /v1/partner/sso/initiate without `auto=true`. */
export class InitiatedSso extends Schema.Class<InitiatedSso>("InitiatedSso")({
  session_id: SsoSessionId,
  authorization_url: Schema.String.annotations({
    description: "where to send the user's browser: the IdP's authorization endpoint with this session's parameters"
  }),
  target: SsoTarget,
  expires_at: Timestamp.annotations({ description: "when the session expires unless the user signed in (10 minutes)" })
}) {}

/** GET /v1/partner/sso/session/{session_id}. */
export class SsoSessionStatus extends Schema.Class<SsoSessionStatus>("SsoSessionStatus")({
  session_id: SsoSessionId,
  status: Schema.Literal("pending", "expired", "completed", "failed"),
  target: SsoTarget,
  expires_at: Timestamp.annotations({
    description: "pending: when it expires unless the user signs in; completed or failed: until when this outcome " +
      "could be read (it is read once)"
  }),
  user: Schema.optional(SsoUser.annotations({ description: "completed: who signed in" })),
  error: Schema.optional(SsoFailure.annotations({ description: "failed: why" })),
  error_description: Schema.optional(Schema.NullOr(Schema.String))
}) {}

/** The callback's parameters, as sent (each may be absent). */
export interface CallbackParams {
  /** RFC 9207: the issuer of the authorization response, when the IdP names it. */
  readonly iss?: string | undefined
  readonly code?: string | undefined
  readonly state?: string | undefined
  readonly error?: string | undefined
  readonly error_description?: string | undefined
}

/** Where the callback sends the browser: the session's target, with how it ended. */
export interface CallbackAnswer {
  readonly session_id: SsoSessionId
  readonly target: SsoTarget
  /** The app's name (the desktop page names it). */
  readonly app_name: string
  /** Web target: the app's first redirect URI with `sso_session_id` (and `error` on failure); desktop: none. */
  readonly redirect: string | undefined
  /** `completed`, an SsoFailure, or `session_expired` (the session was not finished: it reads expired). */
  readonly outcome: "completed" | SsoFailure | "session_expired"
}

const refuse = (code: SsoRefused["code"], message: string) => Effect.fail(new SsoRefused({ code, message }))

const base64Url = (bytes: Uint8Array) => Encoding.encodeBase64Url(bytes)

/** The longest parameter read (a state, a code): anything longer is no value this server or an IdP made. */
const maxParameter = 4096

/** The IdP's `error_description`, shortened to something a page and a poll can carry. */
const describe = (error: string, description: string | undefined) =>
  `${error.slice(0, 100)}${description === undefined || description === "" ? "" : `: ${description.slice(0, 400)}`}`

/** `url` (no fragment: authorization endpoints and redirect URIs have none) with the parameters added to its query. */
const withParams = (url: string, params: ReadonlyArray<readonly [string, string]>) => {
  const query = params.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).join("&")
  const separator = !url.includes("?") ? "?" : url.endsWith("?") || url.endsWith("&") ? "" : "&"
  return `${url}${separator}${query}`
}

/** Whether the claims' `aud` is the client id (alone, or in a list). */
const audienceHolds = (aud: unknown, clientId: string) =>
  aud === clientId || (Array.isArray(aud) && aud.includes(clientId))

const make = (callbackUrl: string) =>
  Effect.gen(function*() {
    const apps = yield* PartnerStore
    const idps = yield* IdpStore
    const domains = yield* DomainVerificationStore
    const sessions = yield* SsoSessionStore
    const users = yield* UserStore
    const oauth = yield* OAuthStore
    const vault = yield* SecretVault
    const box = yield* SecretBox
    const crypto = yield* Crypto
    const oidc = yield* OidcClient

    const appBySlug = (slug: string) =>
      Effect.flatMap(
        slug.length > 63 ? Effect.succeedNone : apps.getBySlug(slug),
        Option.match({
          onNone: () => refuse("not_found", "no partner app has this slug"),
          onSome: Effect.succeed
        })
      )

    /** The app's active IdP configuration, if single sign-on can start or finish now. */
    const activeConfig = (app: PartnerApp) =>
      app.status !== "active"
        ? Effect.succeedNone
        : Effect.map(idps.getByApp(app.id), Option.filter((config) => config.is_active))

    const info = fn("PartnerSso.info")(function*(slug: string) {
      const app = yield* appBySlug(slug)
      const config = yield* idps.getByApp(app.id)
      return new SsoInfo({
        slug: app.slug,
        name: app.name,
        co_brand_name: app.co_brand_name,
        co_brand_logo_url: app.co_brand_logo_url,
        has_idp_config: Option.isSome(config),
        is_active: app.status === "active" && Option.isSome(config) && config.value.is_active
      }, trusted)
    })

    const initiate = fn("PartnerSso.initiate")(function*(input: { readonly slug: string; readonly target: SsoTarget }) {
      const app = yield* appBySlug(input.slug)
      if (app.status !== "active") {
        return yield* refuse("partner_app_inactive", "the partner app is suspended")
      }
      const found = yield* activeConfig(app)
      if (Option.isNone(found)) {
        return yield* refuse("sso_not_configured", "the partner app has no active identity provider configuration")
      }
      if (input.target === "web" && app.redirect_uris.length === 0) {
        return yield* refuse("invalid_request", "target: web needs a redirect URI registered on the partner app; use desktop")
      }
      const config = found.value
      const id = SsoSessionId.make(base64Url(yield* crypto.randomBytes(16)))
      const state = base64Url(yield* crypto.randomBytes(32))
      const nonce = base64Url(yield* crypto.randomBytes(32))
      const verifier = base64Url(yield* crypto.randomBytes(32))
      const challenge = base64Url(Either.getOrThrow(Encoding.decodeHex(yield* crypto.sha256(verifier))))
      const at = yield* now
      const session = new SsoSession({
        id,
        partner_app_id: app.id,
        idp_config_id: config.id,
        target: input.target,
        state: "pending",
        state_hash: yield* crypto.sha256(state),
        nonce_hash: yield* crypto.sha256(nonce),
        sealed_code_verifier: yield* box.seal(verifier),
        created_at: at,
        expires_at: plus(at, ssoSessionLifetime),
        finished_at: null,
        consumed_at: null,
        result: null,
        error: null,
        error_description: null
      }, trusted)
      yield* sessions.insert(session)
      const authorizationUrl = withParams(config.authorization_endpoint, [
        ["response_type", "code"],
        ["client_id", config.idp_client_id],
        ["redirect_uri", callbackUrl],
        ["scope", config.scopes.join(" ")],
        ["state", state],
        ["nonce", nonce],
        ["code_challenge", challenge],
        ["code_challenge_method", "S256"]
      ])
      return new InitiatedSso({
        session_id: id,
        authorization_url: authorizationUrl,
        target: session.target,
        expires_at: session.expires_at
      }, trusted)
    })

    /** The ID token's claims checked against the configuration and the session; the reason when one fails. */
    const claimProblem = (claims: Readonly<Record<string, unknown>>, config: IdpConfig, session: SsoSession, at: DateTime.Utc) =>
      Effect.gen(function*() {
        if (claims.iss !== config.issuer) return "the ID token's issuer is not the identity provider's"
        if (!audienceHolds(claims.aud, config.idp_client_id)) return "the ID token is not meant for this client"
        const many = Array.isArray(claims.aud) && claims.aud.length > 1
        if (many && claims.azp === undefined) return "the ID token names several audiences and no authorized party"
        if (claims.azp !== undefined && claims.azp !== config.idp_client_id) return "the ID token's authorized party is another client"
        if (typeof claims.exp !== "number") return "the ID token has no expiry"
        if (DateTime.toEpochMillis(at) >= claims.exp * 1000 + Duration.toMillis(idTokenClockTolerance)) return "the ID token has expired"
        if (typeof claims.iat !== "number") return "the ID token has no issue time"
        if (typeof claims.nonce !== "string") return "the ID token has no nonce"
        if (!crypto.timingSafeEqual(yield* crypto.sha256(claims.nonce), session.nonce_hash)) return "the ID token's nonce is not this session's"
        return undefined
      })

    /** Why the e-mail's domain may not sign in to the app, if it may not. */
    const domainProblem = (app: PartnerApp, config: IdpConfig, domain: string) =>
      Effect.gen(function*() {
        if (config.mode === "partner_managed" && config.allowed_email_domains.length === 0) return undefined
        if (!config.allowed_email_domains.some((allowed) => allowed === domain)) return "domain_not_allowed" as const
        const verification = yield* domains.get(app.id, domain)
        return Option.isSome(verification) && verification.value.status === "verified" ? undefined : "domain_not_verified" as const
      })

    /** The Convene user with this e-mail, if it holds a live grant of the app with its workspace still connected. */
    const connectedUser = (app: PartnerApp, email: string) =>
      Effect.gen(function*() {
        const address = Schema.decodeUnknownOption(Email)(email)
        if (Option.isNone(address)) return Option.none()
        const user = yield* users.findByEmail(address.value)
        if (Option.isNone(user)) return Option.none()
        const granted = yield* oauth.hasLiveGrant(app.client_id, user.value.id)
        const connection = granted ? yield* apps.getByClientIdFor(app.client_id, user.value.workspace_id) : Option.none()
        return Option.isSome(connection) && connection.value.connected ? user : Option.none()
      })

    /** The outcome of a callback for a live pending session. */
    const outcomeOf = (session: SsoSession, app: PartnerApp, config: IdpConfig, params: CallbackParams, at: DateTime.Utc) =>
      Effect.gen(function*() {
        const failed = (error: SsoFailure, description: string | null = null): SsoOutcome => ({
          state: "failed",
          error,
          error_description: description
        })
        // RFC 9207, before anything of the response is believed (an error response too): an answer naming another
        // issuer comes from another IdP (a mix-up), whatever it holds.
        if (params.iss !== undefined && params.iss !== config.issuer) {
          return failed("issuer_mismatch", "the authorization response names another issuer than the identity provider's (RFC 9207)")
        }
        if (params.error !== undefined) return failed("idp_error", describe(params.error, params.error_description))
        const code = params.code
        if (code === undefined || code.length > maxParameter) return failed("invalid_callback", "the callback carried no code")
        const secret = yield* Effect.either(vault.open(config.sealed_client_secret))
        const verifier = yield* Effect.either(box.open(session.sealed_code_verifier))
        if (secret._tag === "Left" || verifier._tag === "Left") {
          yield* Effect.logWarning("partner SSO: a sealed secret of the session or the IdP configuration does not open")
          return failed("token_exchange_failed", "the identity provider's client secret cannot be read by this server")
        }
        const exchange = (auth: IdpClientAuth) =>
          Effect.either(oidc.exchangeCode({
            tokenEndpoint: config.token_endpoint,
            clientId: config.idp_client_id,
            clientSecret: Redacted.make(secret.right),
            auth,
            code,
            redirectUri: callbackUrl,
            codeVerifier: Redacted.make(verifier.right)
          }))
        // HTTP Basic first (RFC 6749's default); a provider that refuses it as invalid_client (it takes only
        // client_secret_post) has not looked at the code yet, which is sent again in the form.
        const first = yield* exchange("client_secret_basic")
        const exchanged = first._tag === "Left" && first.left.error === "invalid_client" ? yield* exchange("client_secret_post") : first
        if (exchanged._tag === "Left") return failed("token_exchange_failed", exchanged.left.message)
        const claims = yield* Effect.either(oidc.verifiedClaims(exchanged.right, config.jwks_uri))
        if (claims._tag === "Left") return failed("invalid_id_token", claims.left.message)
        const problem = yield* claimProblem(claims.right, config, session, at)
        if (problem !== undefined) return failed("invalid_id_token", problem)
        const email = claims.right[config.claim_mappings.email]
        const domain = typeof email === "string" ? domainOfEmail(email) : undefined
        if (typeof email !== "string" || domain === undefined) {
          return failed("email_missing", `the ID token has no e-mail address in the claim ${config.claim_mappings.email}`)
        }
        if (claims.right.email_verified === false) return failed("email_not_verified", "the identity provider has not verified the e-mail address")
        // A provider that serves personal accounts too (Google): the account must be managed by the e-mail's domain.
        const hostedClaim = hostedDomainClaimOf(config.issuer)
        if (hostedClaim !== undefined) {
          const hosted = claims.right[hostedClaim]
          if (typeof hosted !== "string" || hosted.toLowerCase() !== domain) {
            return failed("domain_not_allowed", `the account is not one that ${domain} manages (the ID token's ${hostedClaim} claim)`)
          }
        }
        const refused = yield* domainProblem(app, config, domain)
        if (refused !== undefined) {
          return failed(refused, refused === "domain_not_allowed"
            ? `the e-mail domain ${domain} is not allowed for this app`
            : `the e-mail domain ${domain} is not verified by this app`)
        }
        const user = yield* connectedUser(app, email)
        if (Option.isNone(user)) {
          return failed("no_prior_connection", "no Convene user with this e-mail address has connected the app")
        }
        return {
          state: "completed",
          result: new SsoUser({
            user_id: user.value.id,
            email: user.value.email,
            name: user.value.name,
            workspace_id: user.value.workspace_id
          }, trusted)
        } satisfies SsoOutcome
      })

    const answerOf = (session: SsoSession, app: PartnerApp, outcome: CallbackAnswer["outcome"]): CallbackAnswer => {
      const first = app.redirect_uris[0]
      const redirect = session.target === "web" && first !== undefined
        ? withParams(first, [["sso_session_id", session.id], ...(outcome === "completed" ? [] : [["error", outcome] as const])])
        : undefined
      return { session_id: session.id, target: session.target, app_name: app.name, redirect, outcome }
    }

    const callback = fn("PartnerSso.callback")(function*(params: CallbackParams) {
      if (params.state === undefined || params.state === "" || params.state.length > maxParameter) {
        return yield* refuse("invalid_state", "the state parameter is missing or matches no sign-in")
      }
      const found = yield* sessions.getByStateHash(yield* crypto.sha256(params.state))
      if (Option.isNone(found)) return yield* refuse("invalid_state", "the state parameter is missing or matches no sign-in")
      const session = found.value
      if (session.state !== "pending") {
        return yield* refuse("session_already_processed", "this sign-in was already processed")
      }
      const app = yield* Effect.map(apps.get(session.partner_app_id), Option.getOrThrow)
      const at = yield* now
      if (DateTime.greaterThanOrEqualTo(at, session.expires_at)) return answerOf(session, app, "session_expired")
      const config = yield* Effect.map(activeConfig(app), Option.filter((config) => config.id === session.idp_config_id))
      const outcome: SsoOutcome = Option.isNone(config)
        ? { state: "failed", error: "sso_not_configured", error_description: "single sign-on is no longer configured for the app" }
        : yield* outcomeOf(session, app, config.value, params, at)
      const finishedAt = yield* now
      const finished = yield* sessions.finish(session.id, outcome, finishedAt, plus(finishedAt, ssoSessionLifetime))
      if (!finished) return yield* refuse("session_already_processed", "this sign-in was already processed")
      return answerOf(session, app, outcome.state === "completed" ? "completed" : outcome.error)
    })

    const statusOf = (session: SsoSession, status: SsoSessionStatus["status"]) =>
      new SsoSessionStatus({
        session_id: session.id,
        status,
        target: session.target,
        expires_at: session.expires_at,
        ...(status === "completed" && session.result !== null ? { user: session.result } : {}),
        ...(status === "failed" && session.error !== null
          ? { error: session.error, error_description: session.error_description }
          : {})
      }, trusted)

    const notFound = () => refuse("not_found", "no SSO session has this id, or its outcome was already read")

    const session = fn("PartnerSso.session")(function*(id: string) {
      if (!isSsoSessionId(id)) return yield* notFound()
      const found = yield* sessions.get(id)
      if (Option.isNone(found) || found.value.consumed_at !== null) return yield* notFound()
      const at = yield* now
      if (DateTime.greaterThanOrEqualTo(at, found.value.expires_at)) return statusOf(found.value, "expired")
      if (found.value.state === "pending") return statusOf(found.value, "pending")
      const consumed = yield* sessions.consume(id, at)
      if (Option.isNone(consumed)) return yield* notFound()
      return statusOf(consumed.value, consumed.value.state === "completed" ? "completed" : "failed")
    })

    /** Deletes sessions expired more than a day ago (the sweep). */
    const purge = fn("PartnerSso.purge")(function*() {
      yield* sessions.purge(DateTime.subtractDuration(yield* now, Duration.days(1)))
    })

    return { info, initiate, callback, session, purge }
  })

export class PartnerSso extends Context.Tag("@convene/core/PartnerSso")<PartnerSso, Effect.Effect.Success<ReturnType<typeof make>>>() {
  /** The service with the callback URL registered at the IdPs (`{base_url}/v1/partner/sso/callback`). */
  static readonly layer = (callbackUrl: string): Layer.Layer<
    PartnerSso,
    never,
    | PartnerStore
    | IdpStore
    | DomainVerificationStore
    | SsoSessionStore
    | UserStore
    | OAuthStore
    | SecretVault
    | SecretBox
    | Crypto
    | OidcClient
  > => Layer.effect(PartnerSso, make(callbackUrl))
}
