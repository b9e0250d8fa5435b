/**
 * The core and the first-party authorization server on the in-memory store, node:crypto, jose and AES-256-GCM,
 * and helpers that walk the OAuth flows through the real services: a signed-in user, an authorization request,
 * the code it answers, the tokens the code turns into.
 */
import {
  Authentication,
  type AuthorizeOutcome,
  AuthorizationServer,
  builtInClientId,
  Convene,
  CreateUser,
  CreateWorkspace,
  type LiveSession,
  type Role,
  Sessions,
  SigningKeys,
  type StorePorts,
  Users,
  type WorkspaceId,
  Workspaces
} from "@convene/core"
import { JoseJwtSigner, NodeSecretBox } from "@convene/node"
import * as StoreMemory from "@convene/store-memory"
import { expect } from "@effect/vitest"
import { Clock, Effect, FastCheck, Layer, Option, Redacted } from "effect"
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from "jose"
import * as NodeCrypto from "node:crypto"
import { coreOver, freshEmail } from "../fixtures.js"

export const issuer = "https://convene.example/v1/oauth"

/** The installation's secret key (SecretBox) of these tests. */
export const secretKey = Redacted.make(new Uint8Array(32).fill(7))

/** The core and the OAuth services over `store`, with every port exposed. */
export const oauthOver = (store: Layer.Layer<StorePorts>) =>
  Convene.oauthLayer(issuer).pipe(
    Layer.provideMerge(Layer.mergeAll(coreOver(store), JoseJwtSigner.layer, NodeSecretBox.layer(secretKey)))
  )

/** The core and the OAuth services on the in-memory store (each build starts empty). */
export const OAuthLive = oauthOver(StoreMemory.layer)

export const password = "correct horse battery staple"

/** A client address of its own, so that one test's failed sign-ins never count against another's. */
export const freshAddress = () => `203.0.113.${NodeCrypto.randomInt(1, 255)}-${crypto.randomUUID()}`

/** A workspace (or the given one) with a user who has `password`. */
export const accountFor = (options: { readonly role?: Role; readonly workspaceId?: WorkspaceId } = {}) =>
  Effect.gen(function*() {
    const workspaces = yield* Workspaces
    const workspace = options.workspaceId === undefined
      ? yield* workspaces.create(new CreateWorkspace({ name: "Acme", plan: "PRO" }))
      : yield* workspaces.get(options.workspaceId)
    const user = yield* (yield* Users).create(
      workspace.id,
      CreateUser.make({ email: freshEmail(), name: "Ann", role: options.role ?? "MEMBER", password })
    )
    return { workspace, user }
  }).pipe(Effect.orDie)

/** A user who signed in: their session token and the live session the host hands the authorization server. */
export const signedIn = (options: { readonly role?: Role; readonly workspaceId?: WorkspaceId } = {}) =>
  Effect.gen(function*() {
    const { user, workspace } = yield* accountFor(options)
    const signed = yield* (yield* Sessions).signIn({ email: user.email, password, address: freshAddress() })
    const live: LiveSession = { session: signed.session, user: signed.user }
    return { workspace, user, token: signed.token, live }
  }).pipe(Effect.orDie)

/** A PKCE pair: a verifier of 43 characters and its S256 challenge, computed here with node:crypto. */
export const pkce = () => {
  const verifier = NodeCrypto.randomBytes(32).toString("base64url")
  return { verifier, challenge: NodeCrypto.createHash("sha256").update(verifier).digest("base64url") }
}

export const loopbackRedirect = "http://127.0.0.1:8123/callback"

/**
 * The query of an authorization request: a valid request for the built-in client by default; `overrides` set a
 * parameter (undefined: leave it out); `extra` adds parameters as given (to duplicate one).
 */
export const authorizeParams = (
  overrides: Readonly<Record<string, string | undefined>> = {},
  extra: ReadonlyArray<readonly [string, string]> = []
): ReadonlyArray<readonly [string, string]> => {
  const fields: Record<string, string | undefined> = {
    response_type: "code",
    client_id: builtInClientId,
    redirect_uri: loopbackRedirect,
    code_challenge: pkce().challenge,
    code_challenge_method: "S256",
    scope: "meetings:read",
    state: "st-42",
    ...overrides
  }
  const entries = Object.entries(fields).flatMap(([key, value]) => value === undefined ? [] : [[key, value] as const])
  return [...entries, ...extra]
}

/** The URL a Redirect outcome sends the browser to (failing the test for any other outcome). */
export const redirectOf = (outcome: AuthorizeOutcome): URL => {
  if (outcome._tag !== "Redirect") throw new Error(`expected a redirect, got ${outcome._tag}: ${JSON.stringify(outcome)}`)
  return new URL(outcome.location)
}

/** The query parameters of a redirect, as a plain record (every name once). */
export const queryOf = (url: URL) => Object.fromEntries(url.searchParams.entries())

/** Asks for a code: answers it with the verifier and the request's redirect URI (the client must approve without consent, or `decision` says approve). */
export const codeFor = (options: {
  readonly live: LiveSession
  readonly clientId?: string
  readonly redirectUri?: string
  readonly scope?: string
  readonly nonce?: string
  readonly decision?: "approve"
}) =>
  Effect.gen(function*() {
    const server = yield* AuthorizationServer
    const { challenge, verifier } = pkce()
    const clientId = options.clientId ?? builtInClientId
    const redirectUri = options.redirectUri ?? loopbackRedirect
    const outcome = yield* server.authorize(
      authorizeParams({ client_id: clientId, redirect_uri: redirectUri, code_challenge: challenge, scope: options.scope ?? "meetings:read", nonce: options.nonce }),
      Option.some(options.live),
      Option.fromNullable(options.decision)
    )
    const code = redirectOf(outcome).searchParams.get("code")
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/)
    return { code: code!, verifier, clientId, redirectUri }
  })

/** The tokens of a new grant: a code asked for (see codeFor) and exchanged. */
export const tokensFor = (options: Parameters<typeof codeFor>[0]) =>
  Effect.gen(function*() {
    const asked = yield* codeFor(options)
    return yield* (yield* AuthorizationServer).exchangeCode({
      code: asked.code,
      code_verifier: asked.verifier,
      client: { method: "none", clientId: asked.clientId },
      redirect_uri: asked.redirectUri
    })
  })

/** The principal a bearer token authenticates as. */
export const bearer = (token: string) => Effect.flatMap(Authentication, (authentication) => authentication.authenticate(Redacted.make(token)))

/** The key set as the jwks_uri publishes it: JSON, read back as a client reads it. */
export const publishedKeys = Effect.gen(function*() {
  const jwks = yield* (yield* SigningKeys).jwks()
  const published: JSONWebKeySet = JSON.parse(JSON.stringify(jwks))
  return published
})

/** Verifies a JWT with jose against the published key set, at the test clock's time (or at `at`, epoch millis). */
export const verifyJwt = (jwt: string, options: { readonly audience?: string; readonly at?: number } = {}) =>
  Effect.gen(function*() {
    const keys = yield* publishedKeys
    const millis = options.at ?? (yield* Clock.currentTimeMillis)
    return yield* Effect.tryPromise(() =>
      jwtVerify(jwt, createLocalJWKSet(keys), {
        issuer,
        algorithms: ["RS256"],
        currentDate: new Date(millis),
        ...(options.audience === undefined ? {} : { audience: options.audience })
      })
    )
  })

/** The `kid` of the published keys, in their order. */
export const publishedKids = Effect.map(publishedKeys, (keys) => keys.keys.map((key) => key.kid))

/** Arbitraries of redirect URIs of each kind, for property tests. */
export const RedirectArbitraries = (() => {
  const letters = "abcdefghijklmnopqrstuvwxyz"
  // No hyphen: "xn--" would start a punycode label, which the URL parser checks.
  const label = FastCheck.tuple(
    FastCheck.constantFrom(...letters),
    FastCheck.string({ unit: FastCheck.constantFrom(...letters, ..."0123456789"), maxLength: 8 })
  ).map(([first, rest]) => first + rest)
  const segment = FastCheck.tuple(
    FastCheck.constantFrom(...letters),
    FastCheck.string({ unit: FastCheck.constantFrom(...letters, ..."0123456789-._~"), maxLength: 8 })
  ).map(([first, rest]) => first + rest)
  const path = FastCheck.array(segment, { maxLength: 3 }).map((segments) => "/" + segments.join("/"))
  const query = FastCheck.option(FastCheck.tuple(segment, segment).map(([key, value]) => `?${key}=${value}`), { nil: "" })
  const port = FastCheck.integer({ min: 1, max: 65535 })
  const loopbackHost = FastCheck.constantFrom("127.0.0.1", "localhost")
  const loopback = FastCheck.record({ host: loopbackHost, port, path, query })
  const domain = FastCheck.array(label, { minLength: 1, maxLength: 3 }).map((labels) => [...labels, "example"].join("."))
  return {
    label,
    path,
    port,
    /** The parts of a loopback URI (to make another one that differs in one part). */
    loopback,
    loopbackUri: loopback.map(({ host, path, port, query }) => `http://${host}:${port}${path}${query}`),
    httpsUri: FastCheck.tuple(domain, FastCheck.option(port, { nil: undefined }), path, query).map(([host, port, path, query]) =>
      `https://${host}${port === undefined ? "" : `:${port}`}${path}${query}`
    ),
    /** A private-use scheme of a native app: a reverse domain name (RFC 8252 7.1). */
    privateUseUri: FastCheck.tuple(FastCheck.array(label, { minLength: 1, maxLength: 3 }), path).map(([labels, path]) =>
      `com.${labels.join(".")}:${path}`
    )
  }
})()
