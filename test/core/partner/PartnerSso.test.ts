/**
 * Partner single sign-on (partner/idp/PartnerSso.ts) on the in-memory store and the TestClock, with the real OIDC
 * client (NodeOidcClient: jose) over an in-process identity provider that answers the token endpoint and the key set
 * (keys made by jose here): the authorization URL, the session's life (pending, expired after 10 minutes, an outcome
 * read once), single use of the callback, the ID token's checks, the e-mail and domain rules of each mode, and the
 * prior OAuth connection.
 */
import {
  Convene,
  CreatePartnerApp,
  CreateUser,
  CreateWorkspace,
  Crypto,
  DomainVerification,
  DomainVerificationStore,
  Email,
  EmailDomain,
  Grant,
  GrantId,
  IdpConfig,
  IdpConfigId,
  IdpStore,
  OAuthStore,
  Outbound,
  type OutboundRequest,
  PartnerApps,
  type PartnerAppId,
  PartnerSso,
  PartnerStore,
  SecretVault,
  type SsoRefused,
  SsoSessionStore,
  Users,
  Workspaces
} from "@convene/core"
import { NodeOidcClient, NodeSecretBox, NodeSecretVault } from "@convene/node"
import { describe, expect, layer } from "@effect/vitest"
import { DateTime, Effect, Either, Layer, Option, Redacted, TestClock } from "effect"
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose"
import { CoreLive } from "../fixtures.js"

const callbackUrl = "https://convene.example/v1/partner/sso/callback"
const issuer = "https://idp.example"
const tokenEndpoint = `${issuer}/token`
const jwksUri = `${issuer}/jwks`
const idpClientId = "convene-at-idp"
const idpSecret = "idp-client-secret-value"

type Key = {
  readonly kid: string
  readonly privateKey: Awaited<ReturnType<typeof generateKeyPair>>["privateKey"]
  readonly publicJwk: JWK
}

const makeKey = async (kid: string, alg = "RS256"): Promise<Key> => {
  const pair = await generateKeyPair(alg, { extractable: true })
  return { kid, privateKey: pair.privateKey, publicJwk: { ...(await exportJWK(pair.publicKey)), kid, alg, use: "sig" } }
}

/** The identity provider the tests script: what its token endpoint answers and which keys it publishes. */
const idp = {
  published: [] as Array<JWK>,
  signer: undefined as Key | undefined,
  /** The claims of the next ID token (undefined: the token endpoint answers `tokenError`). */
  claims: undefined as Record<string, unknown> | undefined,
  /** A raw ID token to answer instead of a signed one. */
  rawToken: undefined as string | undefined,
  tokenError: { status: 400, body: JSON.stringify({ error: "invalid_grant" }) },
  tokenRequests: [] as Array<OutboundRequest>,
  /** The token endpoint takes only client_secret_post (HTTP Basic is invalid_client). */
  onlyPost: false,
  keyFetches: 0
}

const answer = (status: number, body: string) => ({ status, body, latencyMs: 1, contentType: "application/json" })

const sign = (claims: Record<string, unknown>, key: Key) =>
  new SignJWT(claims).setProtectedHeader({ alg: String(key.publicJwk.alg), kid: key.kid, typ: "JWT" }).sign(key.privateKey)

const IdpOutbound = Layer.succeed(
  Outbound,
  Outbound.of({
    check: () => Effect.void,
    post: (request) =>
      Effect.promise(async () => {
        if (request.url !== tokenEndpoint) return answer(404, "{}")
        idp.tokenRequests.push(request)
        if (idp.onlyPost && request.headers.authorization !== undefined) return answer(401, JSON.stringify({ error: "invalid_client" }))
        if (idp.rawToken !== undefined) return answer(200, JSON.stringify({ id_token: idp.rawToken, token_type: "Bearer" }))
        if (idp.claims === undefined || idp.signer === undefined) return answer(idp.tokenError.status, idp.tokenError.body)
        const idToken = await sign(idp.claims, idp.signer)
        return answer(200, JSON.stringify({ access_token: "at", token_type: "Bearer", id_token: idToken }))
      }),
    get: (request) =>
      Effect.sync(() => {
        if (request.url !== jwksUri) return answer(404, "{}")
        idp.keyFetches += 1
        return answer(200, JSON.stringify({ keys: idp.published }))
      })
  })
)

const vaultKey = Buffer.alloc(32, 9).toString("base64")

const SsoLive = Convene.partnerSsoLayer(callbackUrl).pipe(
  Layer.provideMerge(Layer.mergeAll(Convene.partnerLayer, NodeOidcClient.layer)),
  Layer.provideMerge(Layer.mergeAll(
    CoreLive,
    IdpOutbound,
    NodeSecretBox.layer(Redacted.make(new Uint8Array(32).fill(7))),
    NodeSecretVault.layer(Either.getOrThrow(NodeSecretVault.parseKeys(vaultKey)))
  ))
)

const uid = () => crypto.randomUUID().slice(0, 8)

interface WorldOptions {
  readonly mode?: "strict" | "partner_managed"
  /** The configuration's allowed domains (the user's domain is `domain`). */
  readonly allowed?: "own" | "other" | "none"
  /** Whether the app verified the user's domain. */
  readonly verified?: boolean
  /** Whether the user approved the app's OAuth consent (a live grant, the workspace connected). */
  readonly connected?: boolean
  readonly redirectUris?: ReadonlyArray<string>
  readonly emailClaim?: string
  /** The configuration's issuer (the ID tokens' `iss`); the test IdP's by default. */
  readonly issuer?: string
}

/** A partner app with an IdP configuration, and a Convene user of `domain`. */
const world = (options: WorldOptions = {}) =>
  Effect.gen(function*() {
    const domain = `acme-${uid()}.example`
    const app = yield* (yield* PartnerApps).create(CreatePartnerApp.make({
      name: `Acme ${uid()}`,
      redirect_uris: options.redirectUris ?? ["https://app.acme.example/sso/done", "https://app.acme.example/other"]
    }))
    const workspace = yield* (yield* Workspaces).create(new CreateWorkspace({ name: "Acme", plan: "PRO" }))
    const user = yield* (yield* Users).create(workspace.id, CreateUser.make({ email: Email.make(`ann-${uid()}@${domain}`), name: "Ann Lee", role: "MEMBER" }))
    const at = yield* DateTime.now
    const allowed = options.allowed ?? "own"
    yield* (yield* IdpStore).insert(new IdpConfig({
      id: IdpConfigId.make(crypto.randomUUID()),
      partner_app_id: app.id,
      name: "Acme IdP",
      discovery_url: `${issuer}/.well-known/openid-configuration`,
      idp_client_id: idpClientId,
      sealed_client_secret: yield* (yield* SecretVault).seal(idpSecret),
      scopes: ["openid", "email", "profile"],
      claim_mappings: { email: options.emailClaim ?? "email", name: "name" },
      mode: options.mode ?? "strict",
      allowed_email_domains: allowed === "own"
        ? [EmailDomain.make(domain)]
        : allowed === "other"
        ? [EmailDomain.make(`other-${uid()}.example`)]
        : [],
      is_active: true,
      issuer: options.issuer ?? issuer,
      authorization_endpoint: `${issuer}/authorize?tenant=acme`,
      token_endpoint: tokenEndpoint,
      userinfo_endpoint: null,
      jwks_uri: jwksUri,
      discovery_last_fetched_at: at,
      created_at: at,
      updated_at: at
    }))
    if (options.verified ?? true) yield* verify(app.id, domain)
    const grant = options.connected ?? true
      ? Option.some(yield* connect(app.id, app.client_id, user.id, workspace.id))
      : Option.none()
    return { app, workspace, user, domain, grant }
  }).pipe(Effect.orDie)

const verify = (appId: PartnerAppId, domain: string) =>
  Effect.gen(function*() {
    const at = yield* DateTime.now
    yield* (yield* DomainVerificationStore).put(new DomainVerification({
      partner_app_id: appId,
      domain: EmailDomain.make(domain),
      status: "verified",
      challenge: `convene-verification=${uid()}`,
      issued_at: at,
      expires_at: at,
      verified_at: at,
      last_checked_at: at,
      last_proven_at: at,
      created_at: at,
      updated_at: at
    }))
  })

const connect = (appId: PartnerAppId, clientId: string, userId: Grant["user_id"], workspaceId: Grant["workspace_id"]) =>
  Effect.gen(function*() {
    const at = yield* DateTime.now
    const id = GrantId.make(crypto.randomUUID())
    yield* (yield* OAuthStore).insertGrant(new Grant({
      id,
      workspace_id: workspaceId,
      user_id: userId,
      client_id: clientId,
      scopes: ["meetings:read"],
      openid: true,
      nonce: null,
      created_at: at,
      revoked_at: null
    })).pipe(Effect.orDie)
    yield* (yield* PartnerStore).connect({ appId, workspaceId, at })
    return id
  })

/** The parameters of an authorization URL. */
const paramsOf = (url: string) => new URL(url).searchParams

/** The claims a good ID token of `email` carries for the session whose nonce is `nonce`, at the clock's time. */
const claimsFor = (email: string, nonce: string) =>
  Effect.map(DateTime.now, (at) => {
    const seconds = Math.floor(DateTime.toEpochMillis(at) / 1000)
    return { iss: issuer, aud: idpClientId, sub: "idp-user-1", email, email_verified: true, nonce, iat: seconds, exp: seconds + 300 }
  })

/**
 * Initiates for the app, lets the IdP answer an ID token for `email` (with `change` applied to its claims) and
 * sends the callback; answers the session id and the callback's answer.
 */
const signIn = (
  slug: string,
  email: string,
  options: { readonly target?: "web" | "desktop"; readonly change?: (claims: Record<string, unknown>) => Record<string, unknown> } = {}
) =>
  Effect.gen(function*() {
    const sso = yield* PartnerSso
    const started = yield* sso.initiate({ slug, target: options.target ?? "desktop" })
    const params = paramsOf(started.authorization_url)
    const claims = yield* claimsFor(email, params.get("nonce")!)
    idp.claims = (options.change ?? ((c) => c))(claims)
    const answered = yield* sso.callback({ code: `code-${uid()}`, state: params.get("state")! })
    return { started, params, answered }
  })

const refusalOf = <A, R>(effect: Effect.Effect<A, SsoRefused, R>) => Effect.map(Effect.flip(effect), (refused) => refused.code)

describe("PartnerSso", () => {
  layer(SsoLive)((it) => {
    it.effect("initiate answers the IdP's authorization URL with state, nonce and PKCE S256; the session is pending for 10 minutes", () =>
      Effect.gen(function*() {
        const key = yield* Effect.promise(() => makeKey("k1"))
        idp.published = [key.publicJwk]
        idp.signer = key
        const { app } = yield* world()
        const sso = yield* PartnerSso
        const started = yield* sso.initiate({ slug: app.slug, target: "web" })
        expect(started.session_id).toMatch(/^[A-Za-z0-9_-]{22}$/)
        const at = yield* DateTime.now
        expect(DateTime.toEpochMillis(started.expires_at) - DateTime.toEpochMillis(at)).toBe(600_000)
        const url = new URL(started.authorization_url)
        expect(`${url.origin}${url.pathname}`).toBe(`${issuer}/authorize`)
        const params = url.searchParams
        expect(params.get("tenant")).toBe("acme")
        expect(params.get("response_type")).toBe("code")
        expect(params.get("client_id")).toBe(idpClientId)
        expect(params.get("redirect_uri")).toBe(callbackUrl)
        expect(params.get("scope")).toBe("openid email profile")
        expect(params.get("code_challenge_method")).toBe("S256")
        expect(params.get("state")).toMatch(/^[A-Za-z0-9_-]{43}$/)
        expect(params.get("nonce")).toMatch(/^[A-Za-z0-9_-]{43}$/)
        expect(params.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/)
        // Stored: the state and nonce only hashed, the verifier only sealed.
        const stored = Option.getOrThrow(yield* (yield* SsoSessionStore).get(started.session_id))
        const crypto = yield* Crypto
        expect(stored.state_hash).toBe(yield* crypto.sha256(params.get("state")!))
        expect(stored.nonce_hash).toBe(yield* crypto.sha256(params.get("nonce")!))
        expect(JSON.stringify(stored)).not.toContain(params.get("state"))
        expect(JSON.stringify(stored)).not.toContain(params.get("nonce"))
        const polled = yield* sso.session(started.session_id)
        expect(polled).toMatchObject({ session_id: started.session_id, status: "pending", target: "web" })
        expect(polled.user).toBeUndefined()
      }))

    it.effect("a sign-in completes: the code is exchanged with HTTP Basic and the PKCE verifier; the outcome is read once, then not_found", () =>
      Effect.gen(function*() {
        const { app, user, workspace } = yield* world()
        idp.tokenRequests = []
        const { started, params, answered } = yield* signIn(app.slug, user.email)
        expect(answered).toEqual({ session_id: started.session_id, target: "desktop", app_name: app.name, redirect: undefined, outcome: "completed" })
        const request = idp.tokenRequests[0]!
        expect(request.headers.authorization).toBe(`Basic ${Buffer.from(`${idpClientId}:${idpSecret}`).toString("base64")}`)
        const form = new URLSearchParams(request.body)
        expect(form.get("grant_type")).toBe("authorization_code")
        expect(form.get("redirect_uri")).toBe(callbackUrl)
        expect(form.get("client_secret")).toBeNull()
        const verifier = form.get("code_verifier")!
        const challenge = Buffer.from(yield* Effect.promise(() => globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))))
          .toString("base64url")
        expect(challenge).toBe(params.get("code_challenge"))
        // The verifier is stored sealed, never in the clear.
        const stored = Option.getOrThrow(yield* (yield* SsoSessionStore).get(started.session_id))
        expect(JSON.stringify(stored)).not.toContain(verifier)
        const sso = yield* PartnerSso
        const polled = yield* sso.session(started.session_id)
        expect(polled.status).toBe("completed")
        expect(polled.user).toMatchObject({ user_id: user.id, email: user.email, name: "Ann Lee", workspace_id: workspace.id })
        // What the partner gets: who signed in, never a token of the IdP.
        expect(Object.keys(polled).sort()).toEqual(["expires_at", "session_id", "status", "target", "user"])
        expect(yield* refusalOf(sso.session(started.session_id))).toBe("not_found")
      }))

    it.effect("a token endpoint that refuses HTTP Basic as invalid_client gets the client id and secret in the form", () =>
      Effect.gen(function*() {
        const { app, user } = yield* world()
        idp.tokenRequests = []
        idp.onlyPost = true
        const { answered } = yield* signIn(app.slug, user.email).pipe(Effect.ensuring(Effect.sync(() => (idp.onlyPost = false))))
        expect(answered.outcome).toBe("completed")
        expect(idp.tokenRequests).toHaveLength(2)
        const form = new URLSearchParams(idp.tokenRequests[1]!.body)
        expect(idp.tokenRequests[1]!.headers.authorization).toBeUndefined()
        expect([form.get("client_id"), form.get("client_secret")]).toEqual([idpClientId, idpSecret])
        expect(form.get("code")).toBe(new URLSearchParams(idp.tokenRequests[0]!.body).get("code"))
      }))

    it.effect("the web target goes back to the app's first redirect URI with sso_session_id, and error on failure", () =>
      Effect.gen(function*() {
        const { app, user } = yield* world()
        const done = yield* signIn(app.slug, user.email, { target: "web" })
        expect(done.answered.redirect).toBe(`https://app.acme.example/sso/done?sso_session_id=${done.started.session_id}`)
        const failed = yield* signIn(app.slug, user.email, { target: "web", change: (claims) => ({ ...claims, nonce: "other" }) })
        expect(failed.answered.redirect).toBe(
          `https://app.acme.example/sso/done?sso_session_id=${failed.started.session_id}&error=invalid_id_token`
        )
      }))

    it.effect("a session expires after 10 minutes: polled expired, its callback sent to the target with session_expired", () =>
      Effect.gen(function*() {
        const { app, user } = yield* world()
        const sso = yield* PartnerSso
        const started = yield* sso.initiate({ slug: app.slug, target: "web" })
        const params = paramsOf(started.authorization_url)
        yield* TestClock.adjust("599 seconds")
        expect((yield* sso.session(started.session_id)).status).toBe("pending")
        yield* TestClock.adjust("1 second")
        expect((yield* sso.session(started.session_id)).status).toBe("expired")
        idp.claims = yield* claimsFor(user.email, params.get("nonce")!)
        const answered = yield* sso.callback({ code: "late", state: params.get("state")! })
        expect(answered.outcome).toBe("session_expired")
        expect(answered.redirect).toContain("error=session_expired")
        expect((yield* sso.session(started.session_id)).status).toBe("expired")
      }))

    it.effect("an outcome not read within 10 minutes of the callback reads expired", () =>
      Effect.gen(function*() {
        const { app, user } = yield* world()
        const sso = yield* PartnerSso
        yield* TestClock.adjust("9 minutes")
        const { started } = yield* signIn(app.slug, user.email)
        yield* TestClock.adjust("9 minutes")
        expect((yield* sso.session(started.session_id)).status).toBe("completed")
        const late = yield* signIn(app.slug, user.email)
        yield* TestClock.adjust("10 minutes")
        expect((yield* sso.session(late.started.session_id)).status).toBe("expired")
      }))

    it.effect("the callback is single use: a replay is session_already_processed; a missing or tampered state is invalid_state", () =>
      Effect.gen(function*() {
        const { app, user } = yield* world()
        const sso = yield* PartnerSso
        const { params } = yield* signIn(app.slug, user.email)
        expect(yield* refusalOf(sso.callback({ code: "again", state: params.get("state")! }))).toBe("session_already_processed")
        expect(yield* refusalOf(sso.callback({ code: "x" }))).toBe("invalid_state")
        const state = params.get("state")!
        const tampered = `${state.slice(0, -1)}${state.endsWith("A") ? "B" : "A"}`
        expect(yield* refusalOf(sso.callback({ code: "x", state: tampered }))).toBe("invalid_state")
        expect(yield* refusalOf(sso.callback({ code: "x", state: "x".repeat(5000) }))).toBe("invalid_state")
        // Racing callbacks of one session: one finishes it, the other is refused.
        const second = yield* sso.initiate({ slug: app.slug, target: "desktop" })
        const secondState = paramsOf(second.authorization_url).get("state")!
        idp.claims = yield* claimsFor(user.email, paramsOf(second.authorization_url).get("nonce")!)
        const raced = yield* Effect.all([sso.callback({ code: "a", state: secondState }), sso.callback({ code: "b", state: secondState })].map(Effect.either), {
          concurrency: 2
        })
        expect(raced.filter(Either.isRight)).toHaveLength(1)
        expect(raced.filter(Either.isLeft).map((left) => left.left.code)).toEqual(["session_already_processed"])
      }))

    it.effect("the ID token is checked: nonce, issuer, audience, azp, expiry (60 s of tolerance), signature, algorithm", () =>
      Effect.gen(function*() {
        const { app, user } = yield* world()
        const sso = yield* PartnerSso
        const failureOf = (change: (claims: Record<string, unknown>) => Record<string, unknown>) =>
          Effect.flatMap(signIn(app.slug, user.email, { change }), ({ answered, started }) =>
            Effect.map(sso.session(started.session_id), (polled) => [answered.outcome, polled.error_description] as const))
        expect((yield* failureOf((c) => ({ ...c, nonce: "not-the-sessions" })))[0]).toBe("invalid_id_token")
        expect((yield* failureOf((c) => ({ ...c, iss: "https://evil.example" })))[0]).toBe("invalid_id_token")
        expect((yield* failureOf((c) => ({ ...c, aud: "someone-else" })))[0]).toBe("invalid_id_token")
        expect((yield* failureOf((c) => ({ ...c, aud: [idpClientId, "someone-else"] })))[0]).toBe("invalid_id_token")
        expect((yield* failureOf((c) => ({ ...c, aud: [idpClientId, "someone-else"], azp: idpClientId })))[0]).toBe("completed")
        expect((yield* failureOf((c) => ({ ...c, azp: "someone-else" })))[0]).toBe("invalid_id_token")
        expect((yield* failureOf((c) => ({ ...c, exp: Number(c.iat) - 61 })))).toEqual(["invalid_id_token", "the ID token has expired"])
        expect((yield* failureOf((c) => ({ ...c, exp: Number(c.iat) - 30 })))[0]).toBe("completed")
        expect((yield* failureOf(({ nonce: _, ...c }) => c))[0]).toBe("invalid_id_token")
        // Unsigned, or signed with a shared secret, or by a key the IdP does not publish.
        const header = (alg: string) => Buffer.from(JSON.stringify({ alg, typ: "JWT" })).toString("base64url")
        const body = Buffer.from(JSON.stringify({ iss: issuer })).toString("base64url")
        for (const raw of [`${header("none")}.${body}.`, `${header("HS256")}.${body}.c2ln`]) {
          idp.rawToken = raw
          expect((yield* failureOf((c) => c))[0]).toBe("invalid_id_token")
        }
        idp.rawToken = undefined
        const stranger = yield* Effect.promise(() => makeKey("k-stranger"))
        const signer = idp.signer
        idp.signer = stranger
        const fetches = idp.keyFetches
        expect(yield* failureOf((c) => c)).toEqual(["invalid_id_token", "the ID token is signed by a key the identity provider does not publish"])
        // An unknown kid fetches the key set once more (the IdP may have rotated).
        expect(idp.keyFetches).toBe(fetches + 1)
        // The IdP rotates: the new key is published, and found by that refetch.
        idp.published = [...idp.published, stranger.publicJwk]
        expect((yield* failureOf((c) => c))[0]).toBe("completed")
        idp.signer = signer
        const es = yield* Effect.promise(() => makeKey("k-es", "ES256"))
        idp.published = [...idp.published, es.publicJwk]
        idp.signer = es
        expect((yield* failureOf((c) => c))[0]).toBe("completed")
        idp.signer = signer
      }))

    it.effect("the token endpoint's refusal is token_exchange_failed; the IdP's error parameter is idp_error with its words", () =>
      Effect.gen(function*() {
        const { app } = yield* world()
        const sso = yield* PartnerSso
        const started = yield* sso.initiate({ slug: app.slug, target: "desktop" })
        idp.claims = undefined
        idp.tokenRequests = []
        const answered = yield* sso.callback({ code: "c", state: paramsOf(started.authorization_url).get("state")! })
        expect(answered.outcome).toBe("token_exchange_failed")
        // invalid_grant is no reason to try another client authentication.
        expect(idp.tokenRequests).toHaveLength(1)
        expect(yield* sso.session(started.session_id)).toMatchObject({
          status: "failed",
          error: "token_exchange_failed",
          error_description: "the token endpoint answered 400 invalid_grant"
        })
        const denied = yield* sso.initiate({ slug: app.slug, target: "desktop" })
        const refused = yield* sso.callback({
          state: paramsOf(denied.authorization_url).get("state")!,
          error: "access_denied",
          error_description: "The user cancelled"
        })
        expect(refused.outcome).toBe("idp_error")
        expect(yield* sso.session(denied.session_id)).toMatchObject({ status: "failed", error: "idp_error", error_description: "access_denied: The user cancelled" })
        const empty = yield* sso.initiate({ slug: app.slug, target: "desktop" })
        expect((yield* sso.callback({ state: paramsOf(empty.authorization_url).get("state")! })).outcome).toBe("invalid_callback")
      }))

    it.effect("RFC 9207: a callback naming another issuer is issuer_mismatch, before its code or error is believed; the right one passes", () =>
      Effect.gen(function*() {
        const { app } = yield* world()
        const sso = yield* PartnerSso
        idp.tokenRequests = []
        const mixedUp = yield* sso.initiate({ slug: app.slug, target: "desktop" })
        const answered = yield* sso.callback({ iss: "https://attacker.example", code: "c", state: paramsOf(mixedUp.authorization_url).get("state")! })
        expect(answered.outcome).toBe("issuer_mismatch")
        // Nothing was sent to the token endpoint.
        expect(idp.tokenRequests).toHaveLength(0)
        expect(yield* sso.session(mixedUp.session_id)).toMatchObject({ status: "failed", error: "issuer_mismatch" })
        const mixedError = yield* sso.initiate({ slug: app.slug, target: "desktop" })
        const refused = yield* sso.callback({ iss: `${issuer}/`, error: "access_denied", state: paramsOf(mixedError.authorization_url).get("state")! })
        expect(refused.outcome).toBe("issuer_mismatch")
        const right = yield* sso.initiate({ slug: app.slug, target: "desktop" })
        const denied = yield* sso.callback({ iss: issuer, error: "access_denied", state: paramsOf(right.authorization_url).get("state")! })
        expect(denied.outcome).toBe("idp_error")
      }))

    it.effect("the e-mail: from the mapped claim; missing is email_missing, email_verified false is email_not_verified", () =>
      Effect.gen(function*() {
        const mapped = yield* world({ emailClaim: "upn" })
        const viaUpn = yield* signIn(mapped.app.slug, "nobody@elsewhere.example", { change: (c) => ({ ...c, upn: mapped.user.email }) })
        expect(viaUpn.answered.outcome).toBe("completed")
        const { app, user } = yield* world()
        expect((yield* signIn(app.slug, user.email, { change: ({ email: _, ...c }) => c })).answered.outcome).toBe("email_missing")
        expect((yield* signIn(app.slug, user.email, { change: (c) => ({ ...c, email: 42 }) })).answered.outcome).toBe("email_missing")
        expect((yield* signIn(app.slug, user.email, { change: (c) => ({ ...c, email_verified: false }) })).answered.outcome)
          .toBe("email_not_verified")
        // Absent, the IdP vouches for the address by giving it.
        expect((yield* signIn(app.slug, user.email, { change: ({ email_verified: _, ...c }) => c })).answered.outcome).toBe("completed")
        // The address is compared as Convene keeps it (lower case).
        expect((yield* signIn(app.slug, user.email.toUpperCase())).answered.outcome).toBe("completed")
      }))

    it.effect("Google: the account must be managed by the e-mail's domain (hd), a personal account with a company address is not", () =>
      Effect.gen(function*() {
        const google = "https://accounts.google.com"
        const { app, domain, user } = yield* world({ mode: "strict", issuer: google })
        const asGoogle = (hd: unknown) => (claims: Record<string, unknown>) => ({ ...claims, iss: google, ...(hd === undefined ? {} : { hd }) })
        expect((yield* signIn(app.slug, user.email, { change: asGoogle(domain) })).answered.outcome).toBe("completed")
        expect((yield* signIn(app.slug, user.email, { change: asGoogle(domain.toUpperCase()) })).answered.outcome).toBe("completed")
        const personal = yield* signIn(app.slug, user.email, { change: asGoogle(undefined) })
        expect(personal.answered.outcome).toBe("domain_not_allowed")
        expect(yield* (yield* PartnerSso).session(personal.started.session_id)).toMatchObject({
          status: "failed",
          error: "domain_not_allowed",
          error_description: `the account is not one that ${domain} manages (the ID token's hd claim)`
        })
        expect((yield* signIn(app.slug, user.email, { change: asGoogle("other.example") })).answered.outcome).toBe("domain_not_allowed")
        expect((yield* signIn(app.slug, user.email, { change: asGoogle(42) })).answered.outcome).toBe("domain_not_allowed")
        // Another provider's tokens need no hd.
        const okta = yield* world({ mode: "strict" })
        expect((yield* signIn(okta.app.slug, okta.user.email)).answered.outcome).toBe("completed")
      }))

    it.effect("strict mode: the domain must be allowed and verified by the app", () =>
      Effect.gen(function*() {
        const ok = yield* world({ mode: "strict" })
        expect((yield* signIn(ok.app.slug, ok.user.email)).answered.outcome).toBe("completed")
        const unverified = yield* world({ mode: "strict", verified: false })
        expect((yield* signIn(unverified.app.slug, unverified.user.email)).answered.outcome).toBe("domain_not_verified")
        // Verified by another app does not count.
        const other = yield* world()
        yield* verify(other.app.id, unverified.domain)
        expect((yield* signIn(unverified.app.slug, unverified.user.email)).answered.outcome).toBe("domain_not_verified")
        const elsewhere = yield* world({ mode: "strict", allowed: "other" })
        expect((yield* signIn(elsewhere.app.slug, elsewhere.user.email)).answered.outcome).toBe("domain_not_allowed")
        // Once the domain is verified, the same user signs in.
        yield* verify(unverified.app.id, unverified.domain)
        expect((yield* signIn(unverified.app.slug, unverified.user.email)).answered.outcome).toBe("completed")
      }))

    it.effect("partner_managed: without domains anyone the IdP signs in; with domains the strict rules", () =>
      Effect.gen(function*() {
        const open = yield* world({ mode: "partner_managed", allowed: "none", verified: false })
        expect((yield* signIn(open.app.slug, open.user.email)).answered.outcome).toBe("completed")
        const listed = yield* world({ mode: "partner_managed", allowed: "own", verified: false })
        expect((yield* signIn(listed.app.slug, listed.user.email)).answered.outcome).toBe("domain_not_verified")
        const unlisted = yield* world({ mode: "partner_managed", allowed: "other" })
        expect((yield* signIn(unlisted.app.slug, unlisted.user.email)).answered.outcome).toBe("domain_not_allowed")
      }))

    it.effect("no prior connection: a user who never approved the app, whose grant was revoked, or an unknown e-mail", () =>
      Effect.gen(function*() {
        const never = yield* world({ connected: false, mode: "partner_managed", allowed: "none" })
        expect((yield* signIn(never.app.slug, never.user.email)).answered.outcome).toBe("no_prior_connection")
        expect((yield* signIn(never.app.slug, `ghost-${uid()}@${never.domain}`)).answered.outcome).toBe("no_prior_connection")
        // A grant of another app does not count.
        const other = yield* world()
        yield* connect(other.app.id, other.app.client_id, never.user.id, never.workspace.id)
        expect((yield* signIn(never.app.slug, never.user.email)).answered.outcome).toBe("no_prior_connection")
        const revoked = yield* world()
        expect((yield* signIn(revoked.app.slug, revoked.user.email)).answered.outcome).toBe("completed")
        yield* (yield* OAuthStore).revokeGrant(Option.getOrThrow(revoked.grant), yield* DateTime.now)
        expect((yield* signIn(revoked.app.slug, revoked.user.email)).answered.outcome).toBe("no_prior_connection")
      }))

    it.effect("info shows the app; initiate needs an active app with an active configuration", () =>
      Effect.gen(function*() {
        const { app } = yield* world()
        const sso = yield* PartnerSso
        expect(yield* sso.info(app.slug)).toMatchObject({
          slug: app.slug,
          name: app.name,
          co_brand_name: null,
          co_brand_logo_url: null,
          has_idp_config: true,
          is_active: true
        })
        expect(yield* refusalOf(sso.info("no-such-app"))).toBe("not_found")
        expect(yield* refusalOf(sso.initiate({ slug: "no-such-app", target: "web" }))).toBe("not_found")
        const idps = yield* IdpStore
        const config = Option.getOrThrow(yield* idps.getByApp(app.id))
        // A session begun before the configuration was deactivated does not finish.
        const begun = yield* sso.initiate({ slug: app.slug, target: "desktop" })
        yield* idps.update(new IdpConfig({ ...config, is_active: false }))
        expect(yield* sso.info(app.slug)).toMatchObject({ has_idp_config: true, is_active: false })
        expect(yield* refusalOf(sso.initiate({ slug: app.slug, target: "web" }))).toBe("sso_not_configured")
        expect((yield* sso.callback({ code: "c", state: paramsOf(begun.authorization_url).get("state")! })).outcome).toBe("sso_not_configured")
        yield* idps.deleteByApp(app.id)
        expect(yield* sso.info(app.slug)).toMatchObject({ has_idp_config: false, is_active: false })
        expect(yield* refusalOf(sso.initiate({ slug: app.slug, target: "web" }))).toBe("sso_not_configured")
        const bare = yield* world({ redirectUris: [] })
        expect(yield* refusalOf(sso.initiate({ slug: bare.app.slug, target: "web" }))).toBe("invalid_request")
        expect((yield* sso.initiate({ slug: bare.app.slug, target: "desktop" })).target).toBe("desktop")
        const suspended = yield* world()
        const apps = yield* PartnerStore
        const stored = Option.getOrThrow(yield* apps.get(suspended.app.id))
        yield* apps.update({ ...stored, status: "suspended" } as typeof stored)
        expect(yield* refusalOf(sso.initiate({ slug: suspended.app.slug, target: "web" }))).toBe("partner_app_inactive")
        expect((yield* sso.info(suspended.app.slug)).is_active).toBe(false)
        expect(yield* refusalOf(sso.session("not-an-id"))).toBe("not_found")
        expect(yield* refusalOf(sso.session("A".repeat(22)))).toBe("not_found")
      }))
  })
})
