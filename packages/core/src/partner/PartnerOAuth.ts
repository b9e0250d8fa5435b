/**
 * The partner API's OAuth 2.0 server (/oauth2/authorize, /oauth2/token) and its user context: the one
 * AuthorizationServer of core/oauth with the partner profile (partner-api.md "Authentication", decisions.md):
 * partner apps as confidential clients (HTTP Basic or client_secret_post), redirect URIs equal to a registered one,
 * `state` required, PKCE checked when sent, codes valid 5 minutes, access tokens 24 hours, refresh tokens 30 days
 * with rotation and replay detection, the consent page every time; approving it connects the user's workspace to
 * the app.
 *
 * Its tokens are credentials of their own kinds (`partner_access_token`, `partner_refresh_token`, with their own
 * prefixes), so a first-party endpoint never accepts one and the user context accepts nothing else. A token reaches
 * only the workspace of its user, while that workspace is connected to the token's app and the app is active.
 */
import { Context, DateTime, Duration, Effect, Encoding, Layer, Option, Redacted, Schema } from "effect"
import { Crypto } from "../ports/Crypto.js"
import { type Transactor } from "../ports/Transactor.js"
import { InsufficientScope } from "../shared/Errors.js"
import { now } from "../shared/Time.js"
import { trusted } from "../shared/Trusted.js"
import { type HeldScope, Principal, scopesGranted, tokenPrefix } from "../identity/Identity.js"
import { CredentialStore, type UserStore } from "../identity/IdentityStore.js"
import { type AuthorizationServer, type ClientDirectory, make as makeServer, type OAuthProfile, partnerClients } from "../oauth/AuthorizationServer.js"
import { OAuthClient } from "../oauth/OAuth.js"
import { type OAuthStore } from "../oauth/OAuthStore.js"
import { type SigningKeys } from "../oauth/SigningKeys.js"
import type { PartnerApp } from "./PartnerApp.js"
import { PartnerApps } from "./PartnerApps.js"
import { PartnerAppInactive } from "./PartnerErrors.js"
import { PartnerStore } from "./PartnerStore.js"
import { fn } from "../shared/Span.js"

/** The scopes a partner app may ask for (decisions.md), besides `openid`. */
export const partnerOAuthScopes: ReadonlyArray<HeldScope> = [
  "profile",
  "meetings:read",
  "meetings:write",
  "action-items:read",
  "action-items:write",
  "partner-api/workflows:read",
  "partner-api/workflows:write"
]

/** partner-api.md's lifetimes: code 5 minutes, access token 24 hours, refresh token 30 days. */
export const partnerProfile: OAuthProfile = {
  codeLifetime: Duration.minutes(5),
  accessLifetime: Duration.hours(24),
  refreshLifetime: Duration.days(30),
  clients: partnerClients,
  scopes: partnerOAuthScopes,
  scopesSupported: ["openid", ...partnerOAuthScopes],
  tokenKinds: { access: "partner_access_token", refresh: "partner_refresh_token" }
}

/**
 * A refusal of the user context's bearer token (401), with the document's codes: `missing_authorization` without
 * an Authorization header, `invalid_authorization_format` when it is not `Bearer <token>`, `unauthorized` when the
 * token is not a live partner access token of a connected workspace.
 */
export class PartnerTokenRefused extends Schema.TaggedError<PartnerTokenRefused>()("PartnerTokenRefused", {
  code: Schema.Literal("missing_authorization", "invalid_authorization_format", "unauthorized"),
  message: Schema.String
}) {}

/** Who calls the user context: the user (as the principal the core services check) and the app the token is of. */
export interface PartnerCaller {
  readonly principal: Principal
  readonly app: PartnerApp
}

const bodyPattern = /^[A-Za-z0-9_-]{43}$/
const bearerPattern = /^Bearer +(\S+) *$/i

const make = Effect.gen(function*() {
  const store = yield* PartnerStore
  const apps = yield* PartnerApps
  const credentials = yield* CredentialStore
  const crypto = yield* Crypto
  // A hash no secret has, compared against when the client id is unknown (the same work either way).
  const noApp = yield* crypto.sha256(Encoding.encodeHex(yield* crypto.randomBytes(32)))

  const clientOf = (app: PartnerApp) =>
    new OAuthClient({
      client_id: app.client_id,
      kind: "partner",
      name: app.name,
      redirect_uris: app.redirect_uris,
      scope: null,
      client_uri: null,
      logo_uri: app.co_brand_logo_url,
      registration_token_hash: null,
      created_at: app.created_at,
      updated_at: app.updated_at
    })

  const appOf = (clientId: string) => clientId.length > 64 ? Effect.succeed(Option.none<PartnerApp>()) : store.getByClientId(clientId)

  const directory: ClientDirectory = {
    find: (clientId) => Effect.map(appOf(clientId), Option.map(clientOf)),
    verifySecret: (clientId, secret) =>
      Effect.gen(function*() {
        const found = yield* appOf(clientId)
        const hash = yield* crypto.sha256(secret)
        const expected = Option.match(found, { onNone: () => noApp, onSome: (app) => app.client_secret_hash })
        return crypto.timingSafeEqual(expected, hash) && Option.isSome(found)
      }),
    refusal: (client) =>
      Effect.map(appOf(client.client_id), (found) =>
        Option.isSome(found) && found.value.status === "active" ? undefined : "the partner app is suspended"),
    approved: (client, user) =>
      Effect.gen(function*() {
        const found = yield* appOf(client.client_id)
        if (Option.isSome(found)) yield* apps.connectWorkspace(found.value.id, user.workspace_id).pipe(Effect.orDie)
      })
  }

  const refuse = (code: PartnerTokenRefused["code"], message: string) => Effect.fail(new PartnerTokenRefused({ code, message }))

  /**
   * The caller of a user-context request from its Authorization header (undefined: absent). The checks, in order:
   * the header's form; a live partner access token (hash looked up, compared in constant time); its user still in
   * its workspace; the app active (403 partner_app_inactive), the workspace still connected to it.
   */
  const authenticate = fn("PartnerOAuth.authenticate")(function*(authorization: Redacted.Redacted<string> | undefined) {
    const header = authorization === undefined ? "" : Redacted.value(authorization).trim()
    if (header === "") return yield* refuse("missing_authorization", "the Authorization header is required: Bearer <access token>")
    const match = bearerPattern.exec(header)
    if (match === null) return yield* refuse("invalid_authorization_format", "the Authorization header must be Bearer <access token>")
    const token = match[1]!
    const prefix = tokenPrefix.partner_access_token
    const invalid = refuse("unauthorized", "the access token is not valid")
    if (!token.startsWith(prefix) || !bodyPattern.test(token.slice(prefix.length))) return yield* invalid
    const hash = yield* crypto.sha256(token)
    const found = yield* credentials.findByHashWithOwner(hash)
    if (
      Option.isNone(found) || found.value.credential.kind !== "partner_access_token" ||
      !crypto.timingSafeEqual(found.value.credential.token_hash, hash)
    ) return yield* invalid
    const { credential, owner } = found.value
    const at = yield* now
    if (credential.revoked_at !== null) return yield* refuse("unauthorized", "the access token was revoked")
    if (credential.expires_at !== null && DateTime.lessThanOrEqualTo(credential.expires_at, at)) {
      return yield* refuse("unauthorized", "the access token expired")
    }
    if (Option.isNone(owner) || owner.value.workspace_id !== credential.workspace_id) {
      return yield* refuse("unauthorized", "the access token's user no longer exists")
    }
    const held = credential.client_id === null
      ? Option.none()
      : yield* store.getByClientIdFor(credential.client_id, credential.workspace_id)
    if (Option.isNone(held)) return yield* invalid
    const { app, connected } = held.value
    if (app.status !== "active") return yield* Effect.fail(PartnerAppInactive.of())
    if (!connected) return yield* refuse("unauthorized", "the workspace is no longer connected to the partner app")
    const principal = new Principal({
      credential_id: credential.id,
      kind: "partner_access_token",
      workspace_id: credential.workspace_id,
      user_id: owner.value.id,
      role: owner.value.role,
      scopes: scopesGranted(credential.scopes, owner.value.role),
      client_id: credential.client_id,
      expires_at: credential.expires_at
    }, trusted)
    return { principal, app } satisfies PartnerCaller
  })

  return { directory, authenticate } as const
})

/** The user context's authentication and the partner server's client directory. */
export class PartnerOAuth extends Context.Tag("@convene/core/PartnerOAuth")<PartnerOAuth, Effect.Effect.Success<typeof make>>() {
  static readonly layer: Layer.Layer<PartnerOAuth, never, PartnerStore | PartnerApps | CredentialStore | Crypto> = Layer.effect(
    PartnerOAuth,
    make
  )
}

/** The partner OAuth server: the AuthorizationServer with the partner profile, and its issuer (`{base_url}/oauth2`). */
export class PartnerAuthorizationServer extends Context.Tag("@convene/core/PartnerAuthorizationServer")<
  PartnerAuthorizationServer,
  AuthorizationServer["Type"]
>() {
  static readonly layer = (
    issuer: string
  ): Layer.Layer<
    PartnerAuthorizationServer,
    never,
    PartnerOAuth | OAuthStore | CredentialStore | UserStore | SigningKeys | Crypto | Transactor
  > =>
    Layer.effect(
      PartnerAuthorizationServer,
      Effect.flatMap(PartnerOAuth, ({ directory }) => makeServer({ issuer, profile: partnerProfile, directory }))
    )
}

/** The partner document's 403 `insufficient_scope` when the caller's token lacks `scope`. */
export const requirePartnerScope = (caller: PartnerCaller, scope: HeldScope): Effect.Effect<void, InsufficientScope> =>
  caller.principal.scopes.includes(scope)
    ? Effect.void
    : Effect.fail(new InsufficientScope({ required: scope, message: `the access token lacks the scope ${scope}` }))
