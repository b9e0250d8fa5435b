/**
 * The authorization server's rules (oauth/AuthorizationServer.ts), on the test clock: the authorization request
 * and what each mistake in it comes to, the code (10 minutes, single use, bound to its client, redirect URI and
 * PKCE challenge), access tokens (1 hour), refresh tokens (30 days from each refresh, rotated, a replay revokes
 * the chain), RFC 7009 revocation, ID tokens, and the signing keys that sign them.
 */
import {
  type AuthorizeOutcome,
  AuthorizationServer,
  builtInClientId,
  Clients,
  CreateFirstPartyClient,
  firstPartyClients,
  firstPartyDirectory,
  firstPartyProfile,
  IssueToken,
  make as makeAuthorizationServer,
  OAuthStore,
  SigningKeys,
  Tokens
} from "@convene/core"
import { NodeSecretBox } from "@convene/node"
import { describe, expect, it, layer } from "@effect/vitest"
import { Clock, DateTime, Duration, Effect, Layer, Option, Redacted, TestClock } from "effect"
import { decodeProtectedHeader } from "jose"
import {
  authorizeParams,
  bearer,
  codeFor,
  issuer,
  loopbackRedirect,
  OAuthLive,
  pkce,
  publishedKids,
  queryOf,
  redirectOf,
  signedIn,
  tokensFor,
  verifyJwt
} from "./fixtures.js"

const nowMillis = Clock.currentTimeMillis

/** The error an effect failed with. */
const failureOf = Effect.flip

const registeredApp = (redirectUri = "https://app.example/callback") =>
  Effect.flatMap(Clients, (clients) => clients.register({ redirect_uris: [redirectUri], client_name: "Notes app" }))

describe("AuthorizationServer", () => {
  layer(OAuthLive)((it) => {
    it.effect("the whole flow: authorize with a session, exchange the code, use the tokens, refresh, and the used refresh token is refused", () =>
      Effect.gen(function*() {
        const server = yield* AuthorizationServer
        const { live, user, workspace } = yield* signedIn({ role: "MEMBER" })
        const { challenge, verifier } = pkce()
        const outcome = yield* server.authorize(
          authorizeParams({ code_challenge: challenge, scope: "meetings:read meetings:write", state: "opaque-state" }),
          Option.some(live),
          Option.none()
        )
        const location = redirectOf(outcome)
        expect(location.origin + location.pathname).toBe(loopbackRedirect)
        const query = queryOf(location)
        expect(Object.keys(query).sort()).toEqual(["code", "iss", "state"])
        expect(query).toMatchObject({ state: "opaque-state", iss: issuer })

        const issuedAt = yield* nowMillis
        const tokens = yield* server.exchangeCode({
          code: query.code!,
          code_verifier: verifier,
          client: { method: "none", clientId: builtInClientId },
          redirect_uri: loopbackRedirect
        })
        expect(tokens).toEqual({
          access_token: expect.stringMatching(/^svc_at_v1_[A-Za-z0-9_-]{43}$/),
          refresh_token: expect.stringMatching(/^svc_rt_v1_[A-Za-z0-9_-]{43}$/),
          token_type: "Bearer",
          expires_in: 3600,
          scope: "meetings:read meetings:write"
        })
        const principal = yield* bearer(tokens.access_token)
        expect(principal).toMatchObject({
          kind: "access_token",
          user_id: user.id,
          workspace_id: workspace.id,
          role: "MEMBER",
          scopes: ["meetings:read", "meetings:write"],
          client_id: builtInClientId
        })
        expect(DateTime.toEpochMillis(principal.expires_at!)).toBe(issuedAt + 3_600_000)
        // A refresh token is not a bearer credential.
        expect(yield* failureOf(bearer(tokens.refresh_token))).toMatchObject({ _tag: "Unauthenticated" })

        yield* TestClock.adjust("10 minutes")
        const refreshed = yield* server.refresh({ refresh_token: tokens.refresh_token, client: { method: "none", clientId: builtInClientId } })
        expect(refreshed).toMatchObject({ token_type: "Bearer", expires_in: 3600, scope: "meetings:read meetings:write" })
        expect(refreshed.access_token).not.toBe(tokens.access_token)
        expect(refreshed.refresh_token).not.toBe(tokens.refresh_token)
        expect(yield* bearer(refreshed.access_token)).toMatchObject({
          user_id: user.id,
          scopes: ["meetings:read", "meetings:write"],
          client_id: builtInClientId
        })
        expect(yield* failureOf(server.refresh({ refresh_token: tokens.refresh_token }))).toMatchObject({
          _tag: "OAuthError",
          error: "invalid_grant"
        })
      }))

    it.effect("without a session a valid request asks for sign-in", () =>
      Effect.gen(function*() {
        const server = yield* AuthorizationServer
        expect(yield* server.authorize(authorizeParams(), Option.none(), Option.none())).toEqual({ _tag: "SignInRequired" })
      }))

    it.effect("a code works until 9:59 after it was issued and is invalid_grant at 10:00", () =>
      Effect.gen(function*() {
        const server = yield* AuthorizationServer
        const { live } = yield* signedIn()
        const early = yield* codeFor({ live })
        const late = yield* codeFor({ live })
        yield* TestClock.adjust("599 seconds") // 9:59
        yield* server.exchangeCode({ code: early.code, code_verifier: early.verifier, client: { method: "none", clientId: early.clientId }, redirect_uri: early.redirectUri })
        yield* TestClock.adjust("1 second")
        expect(
          yield* failureOf(server.exchangeCode({ code: late.code, code_verifier: late.verifier, client: { method: "none", clientId: late.clientId }, redirect_uri: late.redirectUri }))
        ).toMatchObject({ _tag: "OAuthError", error: "invalid_grant", error_description: expect.stringMatching(/expired/) })
      }))

    it.effect("a code is single-use: a second exchange is invalid_grant and revokes the tokens of the first", () =>
      Effect.gen(function*() {
        const server = yield* AuthorizationServer
        const { live } = yield* signedIn()
        const asked = yield* codeFor({ live })
        const exchange = { code: asked.code, code_verifier: asked.verifier, client: { method: "none" as const, clientId: asked.clientId }, redirect_uri: asked.redirectUri }
        const first = yield* server.exchangeCode(exchange)
        yield* bearer(first.access_token)
        expect(yield* failureOf(server.exchangeCode(exchange))).toMatchObject({ _tag: "OAuthError", error: "invalid_grant" })
        expect(yield* failureOf(bearer(first.access_token))).toMatchObject({ _tag: "Unauthenticated", reason: "revoked" })
        expect(yield* failureOf(server.refresh({ refresh_token: first.refresh_token }))).toMatchObject({ error: "invalid_grant" })
        // And a third time still nothing.
        expect(yield* failureOf(server.exchangeCode(exchange))).toMatchObject({ error: "invalid_grant" })
      }))

    it.effect("two exchanges of one code at the same time: one gets tokens, the other invalid_grant, and those tokens are revoked", () =>
      Effect.gen(function*() {
        const server = yield* AuthorizationServer
        const { live } = yield* signedIn()
        const asked = yield* codeFor({ live })
        const exchange = server.exchangeCode({ code: asked.code, code_verifier: asked.verifier, client: { method: "none", clientId: asked.clientId }, redirect_uri: asked.redirectUri })
        const outcomes = yield* Effect.all([Effect.either(exchange), Effect.either(exchange)], { concurrency: "unbounded" })
        const issued = outcomes.flatMap((outcome) => (outcome._tag === "Right" ? [outcome.right] : []))
        const refused = outcomes.flatMap((outcome) => (outcome._tag === "Left" ? [outcome.left] : []))
        expect(issued).toHaveLength(1)
        expect(refused).toMatchObject([{ error: "invalid_grant" }])
        expect(yield* failureOf(bearer(issued[0]!.access_token))).toMatchObject({ reason: "revoked" })
      }))

    it.effect("an unknown code is invalid_grant", () =>
      Effect.gen(function*() {
        const server = yield* AuthorizationServer
        const { verifier } = pkce()
        expect(
          yield* failureOf(server.exchangeCode({ code: "x".repeat(43), code_verifier: verifier, client: { method: "none", clientId: builtInClientId }, redirect_uri: loopbackRedirect }))
        ).toMatchObject({ error: "invalid_grant" })
      }))

    it.effect("the exchange must name the code's client and redirect URI, and the verifier of its challenge", () =>
      Effect.gen(function*() {
        const server = yield* AuthorizationServer
        const clients = yield* Clients
        const { live } = yield* signedIn()
        const other = yield* clients.createFirstParty(CreateFirstPartyClient.make({ name: "Other tool" }))
        const cases: ReadonlyArray<readonly [string, (asked: Effect.Effect.Success<ReturnType<typeof codeFor>>) => Parameters<typeof server.exchangeCode>[0], RegExp]> = [
          ["another client", (asked) => ({ code: asked.code, code_verifier: asked.verifier, client: { method: "none", clientId: other.client_id }, redirect_uri: asked.redirectUri }), /another client/],
          ["another path", (asked) => ({ code: asked.code, code_verifier: asked.verifier, client: { method: "none", clientId: asked.clientId }, redirect_uri: "http://127.0.0.1:8123/other" }), /redirect_uri/],
          // The loopback port may vary at the authorization endpoint, never between the request and the exchange.
          ["another port", (asked) => ({ code: asked.code, code_verifier: asked.verifier, client: { method: "none", clientId: asked.clientId }, redirect_uri: "http://127.0.0.1:8124/callback" }), /redirect_uri/],
          ["another verifier", (asked) => ({ code: asked.code, code_verifier: pkce().verifier, client: { method: "none", clientId: asked.clientId }, redirect_uri: asked.redirectUri }), /code_verifier/],
          ["the challenge as verifier", (asked) => ({ code: asked.code, code_verifier: pkce().challenge, client: { method: "none", clientId: asked.clientId }, redirect_uri: asked.redirectUri }), /code_verifier/]
        ]
        for (const [name, request, description] of cases) {
          const asked = yield* codeFor({ live })
          const error = yield* failureOf(server.exchangeCode(request(asked)))
          expect(error, name).toMatchObject({ _tag: "OAuthError", error: "invalid_grant", error_description: expect.stringMatching(description) })
        }
        const asked = yield* codeFor({ live })
        expect(
          yield* failureOf(server.exchangeCode({ code: asked.code, code_verifier: "too-short", client: { method: "none", clientId: asked.clientId }, redirect_uri: asked.redirectUri }))
        ).toMatchObject({ error: "invalid_request" })
        expect(
          yield* failureOf(server.exchangeCode({ code: asked.code, code_verifier: asked.verifier, client: { method: "none", clientId: "nobody" }, redirect_uri: asked.redirectUri }))
        ).toMatchObject({ error: "invalid_client" })
      }))

    it.effect("a client or redirect URI that cannot be trusted is refused (an error page, never a redirect)", () =>
      Effect.gen(function*() {
        const server = yield* AuthorizationServer
        const { live } = yield* signedIn()
        const app = yield* registeredApp()
        const cases: ReadonlyArray<readonly [string, ReturnType<typeof authorizeParams>, RegExp]> = [
          ["client_id missing", authorizeParams({ client_id: undefined }), /client_id is missing/],
          ["client_id empty", authorizeParams({ client_id: "" }), /client_id/],
          ["client_id twice", authorizeParams({}, [["client_id", builtInClientId]]), /client_id must be given once/],
          ["client_id unknown", authorizeParams({ client_id: "cvr_unknown" }), /not known/],
          ["redirect_uri missing", authorizeParams({ redirect_uri: undefined }), /redirect_uri is missing/],
          ["redirect_uri twice", authorizeParams({}, [["redirect_uri", loopbackRedirect]]), /redirect_uri must be given once/],
          ["https for the built-in client", authorizeParams({ redirect_uri: "https://app.example/callback" }), /loopback/],
          ["loopback without a port", authorizeParams({ redirect_uri: "http://127.0.0.1/callback" }), /loopback/],
          ["another URI than registered", authorizeParams({ client_id: app.client_id, redirect_uri: "https://app.example/other" }), /registered/],
          ["loopback for an https-registered client", authorizeParams({ client_id: app.client_id, redirect_uri: loopbackRedirect }), /registered/]
        ]
        for (const [name, params, description] of cases) {
          for (const session of [Option.none(), Option.some(live)]) {
            const outcome: AuthorizeOutcome = yield* server.authorize(params, session, Option.none())
            expect(outcome, name).toEqual({ _tag: "Refused", description: expect.stringMatching(description) })
          }
        }
      }))

    it.effect("every other mistake goes back to the client as an error with state and iss, and issues no code", () =>
      Effect.gen(function*() {
        const server = yield* AuthorizationServer
        const { live } = yield* signedIn()
        const cases: ReadonlyArray<readonly [string, ReturnType<typeof authorizeParams>, string]> = [
          ["response_type missing", authorizeParams({ response_type: undefined }), "invalid_request"],
          ["response_type token", authorizeParams({ response_type: "token" }), "unsupported_response_type"],
          ["code_challenge missing", authorizeParams({ code_challenge: undefined }), "invalid_request"],
          ["code_challenge malformed", authorizeParams({ code_challenge: "short" }), "invalid_request"],
          ["code_challenge_method missing", authorizeParams({ code_challenge_method: undefined }), "invalid_request"],
          ["code_challenge_method plain", authorizeParams({ code_challenge_method: "plain" }), "invalid_request"],
          ["code_challenge_method s256", authorizeParams({ code_challenge_method: "s256" }), "invalid_request"],
          ["scope missing", authorizeParams({ scope: undefined }), "invalid_request"],
          ["scope blank", authorizeParams({ scope: "  " }), "invalid_request"],
          ["scope twice", authorizeParams({}, [["scope", "meetings:write"]]), "invalid_request"],
          ["response_type twice", authorizeParams({}, [["response_type", "code"]]), "invalid_request"],
          ["code_challenge twice", authorizeParams({}, [["code_challenge", pkce().challenge]]), "invalid_request"],
          ["unknown scope", authorizeParams({ scope: "meetings:read meetings:admin" }), "invalid_scope"],
          ["nonce too long", authorizeParams({ nonce: "n".repeat(256) }), "invalid_request"]
        ]
        for (const [name, params, error] of cases) {
          for (const session of [Option.none(), Option.some(live)]) {
            const location = redirectOf(yield* server.authorize(params, session, Option.none()))
            expect(location.origin + location.pathname, name).toBe(loopbackRedirect)
            expect(queryOf(location), name).toEqual({
              error,
              error_description: expect.any(String),
              state: "st-42",
              iss: issuer
            })
          }
        }
        // A duplicated state is not echoed (which of the two would be the client's?), the error still is.
        const location = redirectOf(yield* server.authorize(authorizeParams({}, [["state", "other"]]), Option.some(live), Option.none()))
        expect(queryOf(location)).toEqual({ error: "invalid_request", error_description: expect.stringMatching(/state/), iss: issuer })
        // Without state, none comes back.
        const stateless = redirectOf(yield* server.authorize(authorizeParams({ state: undefined }), Option.some(live), Option.none()))
        expect(Object.keys(queryOf(stateless)).sort()).toEqual(["code", "iss"])
      }))

    it.effect("state comes back exactly as the client sent it, whatever its characters", () =>
      Effect.gen(function*() {
        const server = yield* AuthorizationServer
        const { live } = yield* signedIn()
        for (const state of ["a b&c=d#e?f", "é/%20+", "x".repeat(500)]) {
          for (const params of [authorizeParams({ state }), authorizeParams({ state, response_type: "token" })]) {
            const location = redirectOf(yield* server.authorize(params, Option.some(live), Option.none()))
            expect(location.searchParams.get("state")).toBe(state)
            expect(location.hash).toBe("")
          }
        }
      }))

    it.effect("a redirect URI with a query keeps it and gets the answer's parameters added", () =>
      Effect.gen(function*() {
        const server = yield* AuthorizationServer
        const { live } = yield* signedIn()
        const redirectUri = "http://localhost:9000/callback?tenant=a"
        const location = redirectOf(yield* server.authorize(authorizeParams({ redirect_uri: redirectUri }), Option.some(live), Option.none()))
        expect(location.searchParams.get("tenant")).toBe("a")
        expect(location.searchParams.get("code")).toMatch(/^[A-Za-z0-9_-]{43}$/)
        expect(location.searchParams.get("iss")).toBe(issuer)
      }))

    it.effect("registered clients need consent every time and never get workspace scopes; deny is access_denied", () =>
      Effect.gen(function*() {
        const server = yield* AuthorizationServer
        const { live } = yield* signedIn({ role: "ADMIN" })
        const app = yield* registeredApp()
        const redirectUri = "https://app.example/callback"
        const params = authorizeParams({ client_id: app.client_id, redirect_uri: redirectUri, scope: "meetings:read workspace:read workspace:write" })

        // Signing in comes before consent.
        expect(yield* server.authorize(params, Option.none(), Option.none())).toEqual({ _tag: "SignInRequired" })
        for (let round = 0; round < 2; round++) {
          const outcome = yield* server.authorize(params, Option.some(live), Option.none())
          expect(outcome).toMatchObject({ _tag: "ConsentRequired", scopes: ["meetings:read"], openid: false, redirectUri })
          if (outcome._tag === "ConsentRequired") expect(outcome.client.client_id).toBe(app.client_id)
          const approved = redirectOf(yield* server.authorize(params, Option.some(live), Option.some("approve")))
          expect(approved.searchParams.get("code")).toMatch(/^[A-Za-z0-9_-]{43}$/)
        }

        const denied = redirectOf(yield* server.authorize(params, Option.some(live), Option.some("deny")))
        expect(denied.origin + denied.pathname).toBe(redirectUri)
        expect(queryOf(denied)).toEqual({ error: "access_denied", error_description: expect.any(String), state: "st-42", iss: issuer })

        const tokens = yield* tokensFor({ live, clientId: app.client_id, redirectUri, scope: "meetings:read workspace:read", decision: "approve" })
        expect(tokens.scope).toBe("meetings:read")
        expect(yield* bearer(tokens.access_token)).toMatchObject({ scopes: ["meetings:read"], client_id: app.client_id, role: "ADMIN" })

        // Only workspace scopes: nothing this client may hold.
        const onlyWorkspace = redirectOf(yield* server.authorize(
          authorizeParams({ client_id: app.client_id, redirect_uri: redirectUri, scope: "workspace:read" }),
          Option.some(live),
          Option.some("approve")
        ))
        expect(onlyWorkspace.searchParams.get("error")).toBe("invalid_scope")
        expect(onlyWorkspace.searchParams.get("code")).toBeNull()
      }))

    it.effect("a registered client that registered scopes gets no more than those", () =>
      Effect.gen(function*() {
        const clients = yield* Clients
        const server = yield* AuthorizationServer
        const { live } = yield* signedIn()
        const redirectUri = "com.example.notes:/oauth"
        const app = yield* clients.register({ redirect_uris: [redirectUri], scope: "meetings:read" })
        const outcome = yield* server.authorize(
          authorizeParams({ client_id: app.client_id, redirect_uri: redirectUri, scope: "meetings:read meetings:write" }),
          Option.some(live),
          Option.none()
        )
        expect(outcome).toMatchObject({ _tag: "ConsentRequired", scopes: ["meetings:read"] })
        const beyond = redirectOf(yield* server.authorize(
          authorizeParams({ client_id: app.client_id, redirect_uri: redirectUri, scope: "meetings:write" }),
          Option.some(live),
          Option.some("approve")
        ))
        expect(beyond.searchParams.get("error")).toBe("invalid_scope")
      }))

    it.effect("first-party clients are approved without consent, with the scopes the user's role grants", () =>
      Effect.gen(function*() {
        const server = yield* AuthorizationServer
        const admin = yield* signedIn({ role: "ADMIN" })
        const member = yield* signedIn({ role: "MEMBER", workspaceId: admin.workspace.id })
        const scope = "meetings:read workspace:read"

        const forAdmin = yield* tokensFor({ live: admin.live, scope })
        expect(forAdmin.scope).toBe(scope)
        expect((yield* bearer(forAdmin.access_token)).scopes).toEqual(["meetings:read", "workspace:read"])

        const forMember = yield* tokensFor({ live: member.live, scope })
        expect(forMember.scope).toBe("meetings:read")
        expect((yield* bearer(forMember.access_token)).scopes).toEqual(["meetings:read"])

        const nothing = redirectOf(yield* server.authorize(authorizeParams({ scope: "workspace:read" }), Option.some(member.live), Option.none()))
        expect(queryOf(nothing)).toMatchObject({ error: "invalid_scope", state: "st-42", iss: issuer })
        expect(nothing.searchParams.get("code")).toBeNull()
      }))

    it.effect("an operator's first-party client: its loopback URI on any port, nothing else; no consent", () =>
      Effect.gen(function*() {
        const server = yield* AuthorizationServer
        const clients = yield* Clients
        const { live } = yield* signedIn()
        const tool = yield* clients.createFirstParty(
          CreateFirstPartyClient.make({ name: "Sync tool", redirect_uris: ["http://127.0.0.1:7000/done"] })
        )
        const anyPort = yield* tokensFor({ live, clientId: tool.client_id, redirectUri: "http://127.0.0.1:51234/done" })
        expect((yield* bearer(anyPort.access_token)).client_id).toBe(tool.client_id)
        for (const redirectUri of ["http://127.0.0.1:7000/other", "http://localhost:7000/done", "https://app.example/done"]) {
          const outcome = yield* server.authorize(authorizeParams({ client_id: tool.client_id, redirect_uri: redirectUri }), Option.some(live), Option.none())
          expect(outcome, redirectUri).toMatchObject({ _tag: "Refused" })
        }
      }))

    it.effect("an access token authenticates for exactly one hour: at 59:59 it does, at 60:00 it is expired", () =>
      Effect.gen(function*() {
        const { live } = yield* signedIn()
        const tokens = yield* tokensFor({ live })
        yield* TestClock.adjust("3599 seconds") // 59:59
        yield* bearer(tokens.access_token)
        yield* TestClock.adjust("1 second")
        expect(yield* failureOf(bearer(tokens.access_token))).toMatchObject({ _tag: "Unauthenticated", reason: "expired" })
      }))

    it.effect("a refresh token is valid 30 days from its issue, and each refresh starts a new 30 days", () =>
      Effect.gen(function*() {
        const server = yield* AuthorizationServer
        const { live } = yield* signedIn()
        const almost = Duration.subtract(Duration.days(30), Duration.seconds(1))
        let tokens = yield* tokensFor({ live })
        // Three times just before the window closes: 90 days in all, each refresh resetting it.
        for (let round = 0; round < 3; round++) {
          yield* TestClock.adjust(almost)
          tokens = yield* server.refresh({ refresh_token: tokens.refresh_token })
          yield* bearer(tokens.access_token)
        }
        yield* TestClock.adjust("30 days")
        expect(yield* failureOf(server.refresh({ refresh_token: tokens.refresh_token }))).toMatchObject({
          error: "invalid_grant",
          error_description: expect.stringMatching(/expired/)
        })
      }))

    it.effect("refresh keeps the grant's scopes, may narrow them, never widen them, and only for its client", () =>
      Effect.gen(function*() {
        const server = yield* AuthorizationServer
        const { live } = yield* signedIn()
        const tokens = yield* tokensFor({ live, scope: "meetings:read meetings:write" })
        // An unknown client is invalid_client; another known client may not use the grant (invalid_grant).
        expect(
          yield* failureOf(server.refresh({ refresh_token: tokens.refresh_token, client: { method: "none", clientId: "cvc_someone_else" } }))
        ).toMatchObject({ error: "invalid_client" })
        const other = yield* (yield* Clients).createFirstParty(CreateFirstPartyClient.make({ name: "Other tool" }))
        expect(
          yield* failureOf(server.refresh({ refresh_token: tokens.refresh_token, client: { method: "none", clientId: other.client_id } }))
        ).toMatchObject({ error: "invalid_grant", error_description: expect.stringMatching(/another client/) })
        expect(
          yield* failureOf(server.refresh({ refresh_token: tokens.refresh_token, scope: "meetings:read action-items:read" }))
        ).toMatchObject({ error: "invalid_scope" })
        const narrowed = yield* server.refresh({ refresh_token: tokens.refresh_token, scope: "meetings:read" })
        expect(narrowed.scope).toBe("meetings:read")
        expect((yield* bearer(narrowed.access_token)).scopes).toEqual(["meetings:read"])
        expect(yield* failureOf(server.refresh({ refresh_token: "svc_rt_v1_" + "A".repeat(43) }))).toMatchObject({ error: "invalid_grant" })
        expect(yield* failureOf(server.refresh({ refresh_token: tokens.access_token }))).toMatchObject({ error: "invalid_grant" })
      }))

    it.effect("replaying a rotated refresh token revokes the whole chain: the newest tokens stop working too", () =>
      Effect.gen(function*() {
        const server = yield* AuthorizationServer
        const { live } = yield* signedIn()
        const first = yield* tokensFor({ live })
        const second = yield* server.refresh({ refresh_token: first.refresh_token })
        const third = yield* server.refresh({ refresh_token: second.refresh_token })
        yield* bearer(third.access_token)

        expect(yield* failureOf(server.refresh({ refresh_token: first.refresh_token }))).toMatchObject({ error: "invalid_grant" })
        for (const access of [first.access_token, second.access_token, third.access_token]) {
          expect(yield* failureOf(bearer(access))).toMatchObject({ _tag: "Unauthenticated", reason: "revoked" })
        }
        for (const refresh of [third.refresh_token, second.refresh_token, first.refresh_token]) {
          expect(yield* failureOf(server.refresh({ refresh_token: refresh }))).toMatchObject({ error: "invalid_grant" })
        }
        // Another grant of the same user is not touched.
        const other = yield* tokensFor({ live })
        yield* bearer(other.access_token)
        yield* server.refresh({ refresh_token: other.refresh_token })
      }))

    it.effect("revocation (RFC 7009) of the user's own access or refresh token revokes its chain; another user's token is left alone", () =>
      Effect.gen(function*() {
        const server = yield* AuthorizationServer
        const ann = yield* signedIn()
        const bob = yield* signedIn({ workspaceId: ann.workspace.id })

        for (const which of ["access_token", "refresh_token"] as const) {
          const first = yield* tokensFor({ live: ann.live })
          const newest = yield* server.refresh({ refresh_token: first.refresh_token })
          yield* server.revoke(which === "access_token" ? first.access_token : newest.refresh_token, ann.live)
          for (const access of [first.access_token, newest.access_token]) {
            expect(yield* failureOf(bearer(access)), which).toMatchObject({ reason: "revoked" })
          }
          expect(yield* failureOf(server.refresh({ refresh_token: newest.refresh_token })), which).toMatchObject({ error: "invalid_grant" })
        }

        // A token of the user's own that belongs to no grant is revoked alone.
        const own = yield* (yield* Tokens).issue(ann.user.id, IssueToken.make({ kind: "short_lived", scopes: ["meetings:read"], expiry_hours: 1 }))
        const kept = yield* tokensFor({ live: ann.live })
        yield* server.revoke(own.token, ann.live)
        expect(yield* failureOf(bearer(own.token))).toMatchObject({ reason: "revoked" })
        yield* bearer(kept.access_token)

        const bobs = yield* tokensFor({ live: bob.live })
        const bobsOwn = yield* (yield* Tokens).issue(bob.user.id, IssueToken.make({ kind: "short_lived", scopes: ["meetings:read"], expiry_hours: 1 }))
        yield* server.revoke(bobsOwn.token, ann.live)
        yield* bearer(bobsOwn.token)
        yield* server.revoke(bobs.access_token, ann.live)
        yield* server.revoke(bobs.refresh_token, ann.live)
        yield* server.revoke("svc_at_v1_" + "B".repeat(43), ann.live)
        yield* server.revoke("", ann.live)
        yield* bearer(bobs.access_token)
        const refreshed = yield* server.refresh({ refresh_token: bobs.refresh_token })
        yield* bearer(refreshed.access_token)
      }))

    it.effect("openid: an ID token that jose verifies against the published keys, with iss, sub, aud, nonce and exp = iat + 3600", () =>
      Effect.gen(function*() {
        const { live, user } = yield* signedIn()
        yield* TestClock.adjust("1234 millis")
        const tokens = yield* tokensFor({ live, scope: "openid meetings:read", nonce: "n-0S6_WzA2Mj" })
        const millis = yield* nowMillis
        expect(tokens.scope).toBe("openid meetings:read")
        expect(tokens.id_token).toBeDefined()
        const { payload, protectedHeader } = yield* verifyJwt(tokens.id_token!, { audience: builtInClientId })
        expect(protectedHeader).toMatchObject({ alg: "RS256", typ: "JWT" })
        expect(yield* publishedKids).toContain(protectedHeader.kid)
        expect(payload).toEqual({
          iss: issuer,
          sub: user.id,
          aud: builtInClientId,
          nonce: "n-0S6_WzA2Mj",
          iat: Math.floor(millis / 1000),
          exp: Math.floor(millis / 1000) + 3600
        })
        // The access token carries the API scopes only (openid is not one).
        expect((yield* bearer(tokens.access_token)).scopes).toEqual(["meetings:read"])

        // Without a nonce the token has none; refreshing an openid grant issues a new ID token.
        const plain = yield* tokensFor({ live, scope: "openid meetings:read" })
        expect((yield* verifyJwt(plain.id_token!)).payload.nonce).toBeUndefined()
        yield* TestClock.adjust("5 minutes")
        const refreshed = yield* (yield* AuthorizationServer).refresh({ refresh_token: tokens.refresh_token })
        expect(refreshed.scope).toBe("openid meetings:read")
        const again = (yield* verifyJwt(refreshed.id_token!, { audience: builtInClientId })).payload
        expect(again).toMatchObject({ iss: issuer, sub: user.id, aud: builtInClientId, iat: Math.floor(millis / 1000) + 300 })
        // OpenID Connect Core 12.2: a refreshed ID token should not have a nonce; if it has one, the original one.
        expect([undefined, "n-0S6_WzA2Mj"]).toContain(again.nonce)

        // No ID token without openid.
        expect((yield* tokensFor({ live })).id_token).toBeUndefined()
      }))

    it.effect("kinds of client are configuration: another profile's policies change consent, scopes and which clients are served", () =>
      Effect.gen(function*() {
        const { live } = yield* signedIn({ role: "OWNER" })
        const app = yield* registeredApp()
        // A server that serves first-party clients only, with consent and without workspace scopes.
        const strict = { ...firstPartyClients.first_party, consent: true, workspaceScopes: false }
        const other = yield* makeAuthorizationServer({
          issuer,
          profile: { ...firstPartyProfile, clients: { first_party: strict } },
          directory: firstPartyDirectory(yield* Clients)
        })
        const asked = authorizeParams({ scope: "meetings:read workspace:read" })
        expect(yield* other.authorize(asked, Option.some(live), Option.none())).toMatchObject({
          _tag: "ConsentRequired",
          scopes: ["meetings:read"]
        })
        // Registered clients are unknown there, at the authorization and at the token endpoint.
        const appRequest = authorizeParams({ client_id: app.client_id, redirect_uri: "https://app.example/callback" })
        expect(yield* other.authorize(appRequest, Option.some(live), Option.none())).toEqual({
          _tag: "Refused",
          description: "the application (client_id) is not known to this server"
        })
        const refused = yield* failureOf(other.exchangeCode({
          code: "x".repeat(43),
          code_verifier: "v".repeat(43),
          client: { method: "none", clientId: app.client_id },
          redirect_uri: "https://app.example/callback"
        }))
        expect(refused.error).toBe("invalid_client")
        // The first-party server, on the same stores, keeps its own rules: no consent, the workspace scope granted.
        const firstParty = yield* AuthorizationServer
        const code = redirectOf(yield* firstParty.authorize(asked, Option.some(live), Option.none())).searchParams.get("code")
        expect(code).toBeTruthy()
        expect(yield* firstParty.authorize(appRequest, Option.some(live), Option.none())).toMatchObject({ _tag: "ConsentRequired" })
      }))
  })

  // Each on a store of its own: the signing keys are the installation's.
  describe("signing keys", () => {
    it.effect("the key is made on first use, kept sealed in the store, and another instance on the same store uses it", () =>
      Effect.gen(function*() {
        const keys = yield* SigningKeys
        expect(yield* (yield* OAuthStore).signingKeys).toEqual([])
        const kid = yield* keys.ensure()
        const [stored] = yield* (yield* OAuthStore).signingKeys
        expect(stored).toMatchObject({ kid, algorithm: "RS256", retired_at: null })
        expect(stored!.sealed_private_jwk).not.toContain("\"d\"")
        expect(yield* publishedKids).toEqual([kid])

        const another = yield* Effect.provide(SigningKeys, Layer.fresh(SigningKeys.layer))
        expect(another).not.toBe(keys)
        expect(yield* another.ensure()).toBe(kid)
        const jwt = yield* another.sign({ iss: issuer, sub: "someone", exp: Math.floor((yield* nowMillis) / 1000) + 60 })
        expect(decodeProtectedHeader(jwt).kid).toBe(kid)
        yield* verifyJwt(jwt)
        expect(yield* (yield* OAuthStore).signingKeys).toHaveLength(1)
      }).pipe(Effect.provide(OAuthLive)))

    it.effect("a server with another secret key cannot open the stored key and says so at start", () =>
      Effect.gen(function*() {
        const kid = yield* (yield* SigningKeys).ensure()
        const otherBox = NodeSecretBox.layer(Redacted.make(new Uint8Array(32).fill(8)))
        const elsewhere = yield* Effect.provide(SigningKeys, SigningKeys.layer.pipe(Layer.provide(otherBox)))
        expect(yield* failureOf(elsewhere.ensure())).toMatchObject({ _tag: "SealBroken" })
        // It made no key of its own: the installation's key stays the one.
        expect((yield* (yield* OAuthStore).signingKeys).map((key) => key.kid)).toEqual([kid])
      }).pipe(Effect.provide(OAuthLive)))

    it.effect("rotation signs with a new key and keeps the old one published for one hour, then drops it", () =>
      Effect.gen(function*() {
        const keys = yield* SigningKeys
        const { live } = yield* signedIn()
        const old = yield* keys.ensure()
        const signedAt = yield* nowMillis
        const before = yield* tokensFor({ live, scope: "openid" })
        expect(decodeProtectedHeader(before.id_token!).kid).toBe(old)

        yield* TestClock.adjust("10 minutes")
        const fresh = yield* keys.rotate()
        expect(fresh).not.toBe(old)
        expect(yield* keys.ensure()).toBe(fresh)
        expect(yield* publishedKids).toEqual([fresh, old])
        const after = yield* tokensFor({ live, scope: "openid" })
        expect(decodeProtectedHeader(after.id_token!).kid).toBe(fresh)
        // Another instance on the store signs with the new key too.
        expect(yield* (yield* Effect.provide(SigningKeys, Layer.fresh(SigningKeys.layer))).ensure()).toBe(fresh)

        // The old key's last token lives until 60 minutes after it was signed: still checkable just before.
        yield* TestClock.adjust("2999 seconds") // 49:59
        yield* verifyJwt(before.id_token!)
        yield* TestClock.adjust("10 minutes")
        expect(yield* publishedKids).toEqual([fresh, old])
        yield* TestClock.adjust("1 second")
        expect(yield* publishedKids).toEqual([fresh])
        // Gone from the key set: even at the instant it was signed, its token finds no key.
        const error = yield* failureOf(verifyJwt(before.id_token!, { at: signedAt }))
        expect(error.error).toMatchObject({ code: "ERR_JWKS_NO_MATCHING_KEY" })
        yield* verifyJwt(after.id_token!, { at: signedAt + 11 * 60_000 })
      }).pipe(Effect.provide(OAuthLive)))
  })
})
