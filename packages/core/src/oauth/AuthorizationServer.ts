/**
 * The OAuth 2.1 authorization server's rules (RFC 6749 with OAuth 2.1's changes, RFC 7636 PKCE with S256
 * only, RFC 9700's refresh-token rotation and replay detection, RFC 7009 revocation, RFC 9207 `iss` in the
 * authorization response), over the store ports. It knows nothing of HTTP: the host hands it the request's
 * parameters and the signed-in session and turns its answers into redirects, pages and JSON.
 *
 * A profile fixes the lifetimes and which clients are served, with the policy of each kind of client (ClientPolicy.ts:
 * consent, redirect URIs, workspace scopes, authentication at the token endpoint), so the partner API's server is
 * this service with another profile (`make`), not a copy.
 */
import { Context, DateTime, Duration, Effect, Encoding, Layer, Option } from "effect"
import { Crypto } from "../ports/Crypto.js"
import { Transactor } from "../ports/Transactor.js"
import { CredentialId } from "../shared/Ids.js"
import { now } from "../shared/Time.js"
import { trusted } from "../shared/Trusted.js"
import {
  Credential,
  type CredentialKind,
  type HeldScope,
  isWorkspaceScope,
  roleGrants,
  Scopes,
  scopesGranted,
  tokenPrefix,
  type User
} from "../identity/Identity.js"
import { CredentialStore, UserStore } from "../identity/IdentityStore.js"
import { type ClientAuthentication, type ClientPolicies, type ClientPolicy, firstPartyClients } from "./ClientPolicy.js"
import { Clients } from "./Clients.js"
import { AuthorizationCode, Grant, GrantId, type OAuthClient } from "./OAuth.js"
import { OAuthError } from "./OAuthError.js"
import { OAuthStore } from "./OAuthStore.js"
import * as RedirectUris from "./RedirectUris.js"
import type { LiveSession } from "./Sessions.js"
import { SigningKeys } from "./SigningKeys.js"
import { fn } from "../shared/Span.js"

export {
  type ClientAuthentication,
  type ClientPolicies,
  type ClientPolicy,
  firstPartyClients,
  partnerClients,
  type TokenEndpointAuth
} from "./ClientPolicy.js"

/**
 * Where a server finds its clients: the first-party server among its OAuth clients (Clients), the partner server
 * among the partner apps.
 */
export interface ClientDirectory {
  readonly find: (clientId: string) => Effect.Effect<Option.Option<OAuthClient>>
  /**
   * Whether `secret` is the confidential client's, compared in constant time (false for an unknown client, after
   * the same work).
   */
  readonly verifySecret: (clientId: string, secret: string) => Effect.Effect<boolean>
  /** Why the client may not be served now (a suspended partner app), or undefined. */
  readonly refusal: (client: OAuthClient) => Effect.Effect<string | undefined>
  /** The user approved the client (a partner app: the user's workspace is connected to it). */
  readonly approved: (client: OAuthClient, user: User) => Effect.Effect<void>
}

/** Lifetimes of one authorization server, and the clients it serves. */
export interface OAuthProfile {
  /** An authorization code is single-use and valid this long. */
  readonly codeLifetime: Duration.Duration
  readonly accessLifetime: Duration.Duration
  /** A refresh token is valid this long after it was issued; each refresh issues a new one (the window restarts). */
  readonly refreshLifetime: Duration.Duration
  /** The kinds of client served, each with its policy. */
  readonly clients: ClientPolicies
  /** The scopes its clients may ask for (besides `openid`). */
  readonly scopes: ReadonlyArray<HeldScope>
  /** What the discovery document lists as `scopes_supported`. */
  readonly scopesSupported: ReadonlyArray<string>
  /** The kinds of credential it issues. */
  readonly tokenKinds: { readonly access: CredentialKind; readonly refresh: CredentialKind }
}

/**
 * The first-party document's lifetimes (code 10 minutes, access token 1 hour, refresh token 30 days) and
 * clients (decisions.md: first-party and registered public clients).
 */
export const firstPartyProfile: OAuthProfile = {
  codeLifetime: Duration.minutes(10),
  accessLifetime: Duration.hours(1),
  refreshLifetime: Duration.days(30),
  clients: firstPartyClients,
  scopes: Scopes,
  // first-party-api.md: "scopes_supported (the seven scopes above)".
  scopesSupported: Scopes,
  tokenKinds: { access: "access_token", refresh: "refresh_token" }
}

export interface OAuthSettings {
  /** The issuer identifier (`{base_url}/v1/oauth`): in the discovery document, the `iss` of ID tokens and of authorization responses. */
  readonly issuer: string
  readonly profile: OAuthProfile
  readonly directory: ClientDirectory
}

/** The scope that asks for an ID token; it is not one of the API's scopes and no credential carries it. */
export const openIdScope = "openid"

/** What the consent page says each scope lets the application do. */
export const scopeDescriptions: Record<HeldScope, string> = {
  profile: "Know your name and e-mail address",
  "partner-api/workflows:read": "Read workflow runs",
  "partner-api/workflows:write": "Start workflow runs",
  "meetings:read": "Read your meetings, their agenda items and context",
  "meetings:write": "Create, change and delete meetings, agenda items and context",
  "action-items:read": "Read action items",
  "action-items:write": "Create, change and delete action items",
  "calendar:read": "Read your calendar",
  "workspace:read": "Read the workspace's settings, members, API keys and webhooks",
  "workspace:write": "Manage the workspace's settings, members, API keys and webhooks"
}

/** What an authorization request comes to. */
export type AuthorizeOutcome =
  /** The client or redirect URI cannot be trusted: an error page, never a redirect (RFC 6749 4.1.2.1). */
  | { readonly _tag: "Refused"; readonly description: string }
  /** Back to the client: with a code, or with an error. */
  | { readonly _tag: "Redirect"; readonly location: string }
  /** Nobody is signed in. */
  | { readonly _tag: "SignInRequired" }
  /** The user must approve the client (registered clients, every time). */
  | {
    readonly _tag: "ConsentRequired"
    readonly client: OAuthClient
    readonly scopes: ReadonlyArray<HeldScope>
    readonly openid: boolean
    readonly redirectUri: string
  }

/** The token endpoint's successful answer (RFC 6749 5.1). */
export interface TokenResponse {
  readonly access_token: string
  readonly token_type: "Bearer"
  readonly expires_in: number
  readonly refresh_token: string
  readonly scope: string
  readonly id_token?: string
}

type Params = ReadonlyArray<readonly [string, string]>

const valuesOf = (params: Params, name: string) => params.filter(([key]) => key === name).map(([, value]) => value)

const challengePattern = /^[A-Za-z0-9_-]{43}$/
const verifierPattern = /^[A-Za-z0-9\-._~]{43,128}$/

const invalidGrant = (description: string) => OAuthError.of("invalid_grant", description)
const invalidRequest = (description: string) => OAuthError.of("invalid_request", description)

const withQuery = (uri: string, entries: ReadonlyArray<readonly [string, string]>) => {
  const query = entries.map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`).join("&")
  return uri + (uri.includes("?") ? "&" : "?") + query
}

export const make = (settings: OAuthSettings) =>
  Effect.gen(function*() {
    const store = yield* OAuthStore
    const credentials = yield* CredentialStore
    const users = yield* UserStore
    const keys = yield* SigningKeys
    const crypto = yield* Crypto
    const transactor = yield* Transactor
    const { directory, profile } = settings
    const refreshPattern = new RegExp(`^${tokenPrefix[profile.tokenKinds.refresh]}[A-Za-z0-9_-]{43}$`)

    const random = Effect.map(crypto.randomBytes(32), Encoding.encodeBase64Url)

    /** The policy of the client's kind, or undefined when this server does not serve that kind. */
    const policyOf = (client: OAuthClient): ClientPolicy | undefined => profile.clients[client.kind]

    /**
     * A URI of a kind the client's policy allows, and one it registered: equal to it (`exactRedirect`), or as
     * RedirectUris.matches compares (loopback on any port; any loopback URI when the policy says so).
     */
    const redirectAllowed = (client: OAuthClient, policy: ClientPolicy, uri: string) => {
      const found = RedirectUris.classify(uri)
      if (!("kind" in found) || !policy.redirectKinds.includes(found.kind)) return false
      if (policy.exactRedirect) return client.redirect_uris.includes(uri)
      return RedirectUris.matches(uri, client.redirect_uris, policy.anyLoopbackWithoutRegistration && client.redirect_uris.length === 0)
    }

    const unknownClient = "the application (client_id) is not known to this server"

    /**
     * The client that authenticated at the token endpoint (RFC 6749 2.3): a public client names itself (PKCE binds
     * the code to it); a confidential one proves its secret with a method its policy accepts. A client that may
     * not be served now is unauthorized_client.
     */
    const authenticateClient = (auth: ClientAuthentication) =>
      Effect.gen(function*() {
        const refused = OAuthError.of("invalid_client", "client authentication failed")
        const found = yield* directory.find(auth.clientId)
        const policy = Option.isSome(found) ? policyOf(found.value) : undefined
        if (Option.isNone(found) || policy === undefined) {
          // The same work as for a known client, so that the answer's timing does not tell which ids exist.
          if (auth.secret !== undefined) yield* directory.verifySecret(auth.clientId, auth.secret)
          return yield* Effect.fail(auth.method === "none" ? OAuthError.of("invalid_client", "the client_id is not known to this server") : refused)
        }
        const accepted = [policy.tokenEndpointAuth, ...policy.alsoAccepted]
        if (!accepted.includes(auth.method)) {
          return yield* Effect.fail(
            OAuthError.of(
              "invalid_client",
              policy.tokenEndpointAuth === "none"
                ? "this client is a public client: send client_id without a secret"
                : "this client must authenticate with its client secret (HTTP Basic, or client_id and client_secret in the form)"
            )
          )
        }
        if (auth.method !== "none" && !(yield* directory.verifySecret(auth.clientId, auth.secret ?? ""))) {
          return yield* Effect.fail(refused)
        }
        const refusal = yield* directory.refusal(found.value)
        if (refusal !== undefined) return yield* Effect.fail(OAuthError.of("unauthorized_client", refusal))
        return found.value
      })

    /**
     * GET /authorize (and the consent form's POST, with the user's `decision`): checks the request in RFC 6749's
     * order (client and redirect URI first, which are never redirected to when wrong), then wants a session,
     * then consent when the client needs it, then issues a code.
     */
    const authorize = fn("AuthorizationServer.authorize")(function*(
      params: Params,
      session: Option.Option<LiveSession>,
      decision: Option.Option<"approve" | "deny">
    ) {
      const clientIds = valuesOf(params, "client_id")
      if (clientIds.length !== 1 || clientIds[0] === "") {
        return { _tag: "Refused", description: clientIds.length > 1 ? "client_id must be given once" : "client_id is missing" } as AuthorizeOutcome
      }
      const found = yield* directory.find(clientIds[0]!)
      const policy = Option.isSome(found) ? policyOf(found.value) : undefined
      if (Option.isNone(found) || policy === undefined) return { _tag: "Refused", description: unknownClient } as AuthorizeOutcome
      const client = found.value
      const refusal = yield* directory.refusal(client)
      if (refusal !== undefined) return { _tag: "Refused", description: refusal } as AuthorizeOutcome
      const redirects = valuesOf(params, "redirect_uri")
      if (redirects.length !== 1 || redirects[0] === "") {
        return { _tag: "Refused", description: redirects.length > 1 ? "redirect_uri must be given once" : "redirect_uri is missing" } as AuthorizeOutcome
      }
      const redirectUri = redirects[0]!
      if (!redirectAllowed(client, policy, redirectUri)) return { _tag: "Refused", description: policy.redirectRefusal } as AuthorizeOutcome
      const states = valuesOf(params, "state")
      const state = states.length === 1 ? states[0] : undefined
      const back = (entries: ReadonlyArray<readonly [string, string]>): AuthorizeOutcome => ({
        _tag: "Redirect",
        location: withQuery(redirectUri, [...entries, ...(state === undefined ? [] : [["state", state] as const]), ["iss", settings.issuer]])
      })
      const fail = (error: OAuthError["error"], description: string) => back([["error", error], ["error_description", description]])

      const duplicated = [...new Set(params.map(([key]) => key))].find((key) => valuesOf(params, key).length > 1)
      if (duplicated !== undefined) return fail("invalid_request", `${duplicated.slice(0, 50)} must be given once`)
      const one = (name: string) => valuesOf(params, name)[0]
      const responseType = one("response_type")
      if (responseType === undefined || responseType === "") return fail("invalid_request", "response_type is missing")
      if (responseType !== "code") return fail("unsupported_response_type", "response_type must be code")
      if (policy.stateRequired && (state === undefined || state === "")) return fail("invalid_request", "state is required")
      const challenge = one("code_challenge") || undefined
      const method = one("code_challenge_method") || undefined
      // PKCE: always for a client whose policy requires it, else checked when the request carries a challenge.
      if (challenge === undefined && (policy.pkce === "required" || method !== undefined)) {
        return fail("invalid_request", policy.pkce === "required" ? "code_challenge is required (PKCE)" : "code_challenge is missing")
      }
      if (challenge !== undefined) {
        if (method === undefined) return fail("invalid_request", "code_challenge_method is required and must be S256")
        if (method !== "S256") return fail("invalid_request", "code_challenge_method must be S256 (plain is not supported)")
        if (!challengePattern.test(challenge)) {
          return fail("invalid_request", "code_challenge must be the base64url SHA-256 of the code verifier (43 characters)")
        }
      }
      const scopeText = one("scope")
      if (scopeText === undefined || scopeText.trim() === "") return fail("invalid_request", "scope is missing")
      const asked = scopeText.split(" ").filter((item) => item !== "")
      const unknown = asked.find((item) => item !== openIdScope && !(profile.scopes as ReadonlyArray<string>).includes(item))
      if (unknown !== undefined) return fail("invalid_scope", `unknown scope ${unknown.slice(0, 50)}`)
      const nonce = one("nonce")
      if (nonce !== undefined && (nonce.length === 0 || nonce.length > 255)) {
        return fail("invalid_request", "nonce must be 1 to 255 characters")
      }
      const openid = asked.includes(openIdScope)
      // A client holds workspace scopes only when its policy allows them, and never scopes beyond those it registered with.
      let scopes = profile.scopes.filter((scope) =>
        asked.includes(scope) && (policy.workspaceScopes || !isWorkspaceScope(scope)) &&
        (client.scope === null || client.scope.includes(scope))
      )
      if (scopes.length === 0 && !openid) {
        return fail(
          "invalid_scope",
          `none of the requested scopes may be granted to this application${policy.workspaceScopes ? "" : " (never workspace scopes)"}`
        )
      }

      if (Option.isNone(session)) return { _tag: "SignInRequired" } as AuthorizeOutcome
      const user = session.value.user
      scopes = scopes.filter((scope) => roleGrants(user.role, scope))
      if (scopes.length === 0 && !openid) return fail("invalid_scope", `none of the requested scopes is granted to the role ${user.role}`)

      if (policy.consent && Option.isNone(decision)) {
        return { _tag: "ConsentRequired", client, scopes, openid, redirectUri } as AuthorizeOutcome
      }
      if (Option.isSome(decision) && decision.value === "deny") return fail("access_denied", "the user denied the request")
      yield* directory.approved(client, user)

      const code = yield* random
      const at = yield* now
      yield* store.insertCode(
        new AuthorizationCode({
          code_hash: yield* crypto.sha256(code),
          grant_id: GrantId.make(yield* crypto.randomUUID),
          client_id: client.client_id,
          redirect_uri: redirectUri,
          user_id: user.id,
          workspace_id: user.workspace_id,
          scopes,
          openid,
          code_challenge: challenge ?? null,
          nonce: nonce ?? null,
          created_at: at,
          expires_at: DateTime.addDuration(at, profile.codeLifetime),
          consumed_at: null
        })
      ).pipe(Effect.orDie)
      return back([["code", code]])
    })

    /** Revokes a grant and every credential issued under it (the whole rotation chain). */
    const revokeChain = (grantId: GrantId) =>
      transactor.withTransaction(Effect.gen(function*() {
        const at = yield* now
        yield* store.revokeGrant(grantId, at)
        for (const id of yield* store.grantCredentials(grantId)) yield* credentials.revoke(id, at)
      }))

    /** A new credential of the grant: its token (shown once) and the stored record. */
    const mintFor = (grant: Grant, kind: CredentialKind, scopes: ReadonlyArray<HeldScope>, lifetime: Duration.Duration) =>
      Effect.gen(function*() {
        const token = tokenPrefix[kind] + (yield* random)
        const at = yield* now
        const credential = new Credential({
          id: CredentialId.make(yield* crypto.randomUUID),
          workspace_id: grant.workspace_id,
          user_id: grant.user_id,
          kind,
          name: null,
          scopes,
          token_hash: yield* crypto.sha256(token),
          client_id: grant.client_id,
          expires_at: DateTime.addDuration(at, lifetime),
          revoked_at: null,
          created_at: at
        }, trusted)
        yield* credentials.insert(credential).pipe(Effect.orDie)
        yield* store.addGrantCredential(grant.id, credential.id)
        return token
      })

    /**
     * An access token and a refresh token of the grant, and an ID token when it was granted `openid` (with the
     * authorization request's nonce only in the first: OpenID Connect Core 12.2 leaves it out on refresh).
     */
    const issue = (grant: Grant, scopes: ReadonlyArray<HeldScope>, first: boolean) =>
      Effect.gen(function*() {
        const access = yield* mintFor(grant, profile.tokenKinds.access, scopes, profile.accessLifetime)
        const refresh = yield* mintFor(grant, profile.tokenKinds.refresh, scopes, profile.refreshLifetime)
        const response: TokenResponse = {
          access_token: access,
          token_type: "Bearer",
          expires_in: Math.round(Duration.toSeconds(profile.accessLifetime)),
          refresh_token: refresh,
          scope: [...(grant.openid ? [openIdScope] : []), ...scopes].join(" ")
        }
        if (!grant.openid) return response
        const issuedAt = Math.floor(DateTime.toEpochMillis(yield* now) / 1000)
        // The profile scope adds the user's name and e-mail address (OpenID Connect Core 5.4).
        const user = scopes.includes("profile") ? yield* users.get(grant.user_id) : Option.none<User>()
        const idToken = yield* keys.sign({
          ...Option.match(user, { onNone: () => ({}), onSome: (found) => ({ name: found.name, email: found.email }) }),
          iss: settings.issuer,
          sub: grant.user_id,
          aud: grant.client_id,
          iat: issuedAt,
          exp: issuedAt + Math.round(Duration.toSeconds(profile.accessLifetime)),
          ...(grant.nonce === null || !first ? {} : { nonce: grant.nonce })
        })
        return { ...response, id_token: idToken }
      })

    /** base64url(SHA-256(verifier)), as RFC 7636 4.2 computes the S256 challenge. */
    const challengeOf = (verifier: string) =>
      Effect.map(crypto.sha256(verifier), (hex) =>
        Encoding.encodeBase64Url(Encoding.decodeHex(hex).pipe((either) => (either._tag === "Right" ? either.right : new Uint8Array()))))

    type Exchanged = { readonly _tag: "Issued"; readonly response: TokenResponse } | { readonly _tag: "Replayed"; readonly grantId: GrantId }

    /** grant_type=authorization_code. */
    const exchangeCode = fn("AuthorizationServer.exchangeCode")(function*(input: {
      readonly code: string
      readonly code_verifier: string | undefined
      readonly client: ClientAuthentication
      readonly redirect_uri: string
    }) {
      const client = yield* authenticateClient(input.client)
      const policy = policyOf(client)!
      if (input.code_verifier === undefined && policy.pkce === "required") {
        return yield* Effect.fail(invalidRequest("code_verifier is missing"))
      }
      if (input.code_verifier !== undefined && !verifierPattern.test(input.code_verifier)) {
        return yield* Effect.fail(invalidRequest("code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~"))
      }
      const hash = yield* crypto.sha256(input.code)
      const outcome: Exchanged = yield* transactor.withTransaction(Effect.gen(function*() {
        const found = yield* store.getCode(hash)
        if (Option.isNone(found)) return yield* Effect.fail(invalidGrant("the authorization code is not valid"))
        const code = found.value
        // A code presented twice: whoever holds it may have stolen it; what the first use issued is revoked.
        if (code.consumed_at !== null) return { _tag: "Replayed", grantId: code.grant_id } as Exchanged
        if (code.client_id !== client.client_id) return yield* Effect.fail(invalidGrant("the authorization code was issued to another client"))
        if (code.redirect_uri !== input.redirect_uri) {
          return yield* Effect.fail(invalidGrant("redirect_uri is not the one of the authorization request"))
        }
        const at = yield* now
        if (DateTime.lessThanOrEqualTo(code.expires_at, at)) return yield* Effect.fail(invalidGrant("the authorization code expired"))
        // RFC 9700 2.1.1: a verifier without a challenge is refused too (no PKCE downgrade).
        if (code.code_challenge === null) {
          if (input.code_verifier !== undefined) {
            return yield* Effect.fail(invalidGrant("code_verifier was sent, but the authorization request carried no code_challenge"))
          }
        } else if (input.code_verifier === undefined) {
          return yield* Effect.fail(invalidRequest("code_verifier is missing: the authorization request carried a code_challenge"))
        } else if (!crypto.timingSafeEqual(yield* challengeOf(input.code_verifier), code.code_challenge)) {
          return yield* Effect.fail(invalidGrant("code_verifier does not match the code_challenge"))
        }
        if (!(yield* store.consumeCode(hash, at))) return { _tag: "Replayed", grantId: code.grant_id } as Exchanged
        const grant = new Grant({
          id: code.grant_id,
          workspace_id: code.workspace_id,
          user_id: code.user_id,
          client_id: code.client_id,
          scopes: code.scopes,
          openid: code.openid,
          nonce: code.nonce,
          created_at: at,
          revoked_at: null
        })
        yield* store.insertGrant(grant).pipe(Effect.orDie)
        return { _tag: "Issued", response: yield* issue(grant, code.scopes, true) } as Exchanged
      }))
      if (outcome._tag === "Replayed") {
        yield* revokeChain(outcome.grantId)
        return yield* Effect.fail(invalidGrant("the authorization code was already used; the tokens it issued are revoked"))
      }
      return outcome.response
    })

    type Refreshed = { readonly _tag: "Issued"; readonly response: TokenResponse } | { readonly _tag: "Replayed"; readonly grantId: GrantId }

    /** grant_type=refresh_token: rotation, and replay of a rotated token revokes the chain (RFC 9700 4.14.2). */
    const refresh = fn("AuthorizationServer.refresh")(function*(input: {
      readonly refresh_token: string
      /** How the client authenticated; a public client of the first-party server may leave itself unnamed. */
      readonly client?: ClientAuthentication | undefined
      readonly scope?: string | undefined
    }) {
      const client = input.client === undefined ? undefined : yield* authenticateClient(input.client)
      const unknown = invalidGrant("the refresh token is not valid")
      if (!refreshPattern.test(input.refresh_token)) return yield* Effect.fail(unknown)
      const hash = yield* crypto.sha256(input.refresh_token)
      const outcome: Refreshed = yield* transactor.withTransaction(Effect.gen(function*() {
        const found = yield* credentials.findByHashWithOwner(hash)
        if (Option.isNone(found) || found.value.credential.kind !== profile.tokenKinds.refresh ||
          !crypto.timingSafeEqual(found.value.credential.token_hash, hash)) {
          return yield* Effect.fail(unknown)
        }
        const { credential, owner } = found.value
        const grantId = yield* store.grantOf(credential.id)
        if (Option.isNone(grantId)) return yield* Effect.fail(unknown)
        const grant = yield* store.getGrant(grantId.value)
        if (Option.isNone(grant) || grant.value.revoked_at !== null) return yield* Effect.fail(invalidGrant("the refresh token was revoked"))
        if (credential.revoked_at !== null) return { _tag: "Replayed", grantId: grantId.value } as Refreshed
        const at = yield* now
        if (credential.expires_at !== null && DateTime.lessThanOrEqualTo(credential.expires_at, at)) {
          return yield* Effect.fail(invalidGrant("the refresh token expired"))
        }
        if (client !== undefined && client.client_id !== grant.value.client_id) {
          return yield* Effect.fail(invalidGrant("the refresh token was issued to another client"))
        }
        if (Option.isNone(owner) || owner.value.workspace_id !== grant.value.workspace_id) {
          return yield* Effect.fail(invalidGrant("the refresh token's user no longer exists"))
        }
        // The scopes the user's role grants today, narrowed to those the request asks for (RFC 6749 6).
        let scopes = scopesGranted(credential.scopes, owner.value.role)
        if (input.scope !== undefined) {
          const asked = input.scope.split(" ").filter((item) => item !== "" && item !== openIdScope)
          const beyond = asked.find((item) => !(credential.scopes as ReadonlyArray<string>).includes(item))
          if (beyond !== undefined) {
            return yield* Effect.fail(OAuthError.of("invalid_scope", `${beyond.slice(0, 50)} was not granted to this refresh token`))
          }
          scopes = scopes.filter((scope) => asked.includes(scope))
        }
        if (!(yield* credentials.revoke(credential.id, at))) return { _tag: "Replayed", grantId: grantId.value } as Refreshed
        return { _tag: "Issued", response: yield* issue(grant.value, scopes, false) } as Refreshed
      }))
      if (outcome._tag === "Replayed") {
        yield* revokeChain(outcome.grantId)
        return yield* Effect.fail(invalidGrant("the refresh token was already used; every token of its grant is revoked"))
      }
      return outcome.response
    })

    /**
     * RFC 7009: revokes the token, and with it its grant's whole chain, when it is the signed-in user's. Unknown
     * tokens, other users' tokens and tokens already revoked change nothing; the answer is the same.
     */
    const revoke = fn("AuthorizationServer.revoke")(function*(token: string, session: LiveSession) {
      if (token.length === 0 || token.length > 512) return
      const hash = yield* crypto.sha256(token)
      const found = yield* credentials.findByHashWithOwner(hash)
      if (Option.isNone(found) || found.value.credential.user_id !== session.user.id) return
      const grantId = yield* store.grantOf(found.value.credential.id)
      if (Option.isSome(grantId)) return yield* revokeChain(grantId.value)
      if (found.value.credential.kind !== "api_key") yield* credentials.revoke(found.value.credential.id, yield* now)
    })

    /** The discovery document (RFC 8414 / OpenID Connect Discovery) for endpoints under `baseUrl`. */
    const metadata = (urls: {
      readonly authorization_endpoint: string
      readonly token_endpoint: string
      readonly revocation_endpoint?: string | undefined
      readonly jwks_uri: string
      readonly registration_endpoint?: string | undefined
    }) => ({
      issuer: settings.issuer,
      authorization_endpoint: urls.authorization_endpoint,
      token_endpoint: urls.token_endpoint,
      ...(urls.revocation_endpoint === undefined
        ? {}
        : { revocation_endpoint: urls.revocation_endpoint, revocation_endpoint_auth_methods_supported: ["none"] }),
      jwks_uri: urls.jwks_uri,
      ...(urls.registration_endpoint === undefined ? {} : { registration_endpoint: urls.registration_endpoint }),
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: [
        ...new Set(Object.values(profile.clients).flatMap((policy) => [policy.tokenEndpointAuth, ...policy.alsoAccepted]))
      ],
      id_token_signing_alg_values_supported: ["RS256"],
      subject_types_supported: ["public"],
      scopes_supported: [...profile.scopesSupported],
      response_modes_supported: ["query"],
      authorization_response_iss_parameter_supported: true,
      claims_supported: ["iss", "sub", "aud", "exp", "iat", "nonce"]
    })

    return { authorize, exchangeCode, refresh, revoke, metadata, issuer: settings.issuer } as const
  })

/** The first-party server's clients: public clients, found among the OAuth clients; approving one changes nothing else. */
export const firstPartyDirectory = (clients: Clients["Type"]): ClientDirectory => ({
  find: clients.find,
  verifySecret: () => Effect.succeed(false),
  refusal: () => Effect.succeed(undefined),
  approved: () => Effect.void
})

export class AuthorizationServer extends Context.Tag("@convene/core/AuthorizationServer")<
  AuthorizationServer,
  Effect.Effect.Success<ReturnType<typeof make>>
>() {
  /** The first-party server: `firstPartyProfile` and its issuer. */
  static readonly layer = (
    issuer: string
  ): Layer.Layer<AuthorizationServer, never, OAuthStore | CredentialStore | UserStore | Clients | SigningKeys | Crypto | Transactor> =>
    Layer.effect(
      AuthorizationServer,
      Effect.flatMap(Clients, (clients) => make({ issuer, profile: firstPartyProfile, directory: firstPartyDirectory(clients) }))
    )
}
