/**
 * OAuth clients (oauth/Clients.ts): RFC 7591 registration and its metadata rules, RFC 7592 management with the
 * registration access token (read, update, delete; deleting revokes the client's tokens), the built-in client,
 * and the operator's first-party clients (loopback redirect URIs only).
 */
import {
  AuthorizationServer,
  builtInClientId,
  type ClientMetadata,
  Clients,
  CreateFirstPartyClient
} from "@convene/core"
import { describe, expect, layer } from "@effect/vitest"
import { Clock, Effect, FastCheck, Option, TestClock } from "effect"
import { authorizeParams, bearer, OAuthLive, RedirectArbitraries as A, signedIn, tokensFor } from "./fixtures.js"

const redirectUri = "https://notes.example/oauth/callback"

const register = (metadata: ClientMetadata) => Effect.flatMap(Clients, (clients) => clients.register(metadata))

describe("Clients", () => {
  layer(OAuthLive)((it) => {
    it.effect("registration answers the client with its registration access token, once; defaults fill what the client left out", () =>
      Effect.gen(function*() {
        yield* TestClock.adjust("1 day")
        const registered = yield* register({ redirect_uris: [redirectUri] })
        expect(registered).toEqual({
          client_id: expect.stringMatching(/^cvr_[A-Za-z0-9_-]{22}$/),
          client_id_issued_at: Math.floor((yield* Clock.currentTimeMillis) / 1000),
          client_name: "notes.example",
          redirect_uris: [redirectUri],
          grant_types: ["authorization_code", "refresh_token"],
          response_types: ["code"],
          token_endpoint_auth_method: "none",
          registration_access_token: expect.stringMatching(/^svc_rat_v1_[A-Za-z0-9_-]{43}$/)
        })
        const { registration_access_token: token, ...view } = registered
        expect(yield* (yield* Clients).read(registered.client_id, token!)).toEqual(view)
        expect(Option.map(yield* (yield* Clients).find(registered.client_id), (client) => client.kind)).toEqual(Option.some("registered"))

        const full = yield* register({
          redirect_uris: [redirectUri, "http://127.0.0.1:43110/cb", "com.example.notes:/oauth"],
          client_name: "  Notes  ",
          client_uri: "https://notes.example",
          logo_uri: "https://notes.example/logo.png",
          scope: "meetings:read openid action-items:read",
          grant_types: ["authorization_code"],
          response_types: ["code"],
          token_endpoint_auth_method: "none"
        })
        expect(full).toMatchObject({
          client_name: "Notes",
          redirect_uris: [redirectUri, "http://127.0.0.1:43110/cb", "com.example.notes:/oauth"],
          client_uri: "https://notes.example",
          logo_uri: "https://notes.example/logo.png",
          scope: "meetings:read action-items:read",
          token_endpoint_auth_method: "none"
        })
        expect(full.client_id).not.toBe(registered.client_id)
      }))

    it.effect.prop(
      "any https, loopback-with-port or reverse-DNS redirect URI registers",
      [FastCheck.array(FastCheck.oneof(A.httpsUri, A.loopbackUri, A.privateUseUri), { minLength: 1, maxLength: 5 })],
      ([uris]) =>
        Effect.gen(function*() {
          const registered = yield* register({ redirect_uris: uris })
          expect(registered.redirect_uris).toEqual(uris)
        }),
      { fastCheck: { numRuns: 50 } }
    )

    it.effect("redirect_uris are required and each must be allowed: otherwise invalid_redirect_uri", () =>
      Effect.gen(function*() {
        const refused: ReadonlyArray<readonly [string, ClientMetadata]> = [
          ["absent", {}],
          ["empty", { redirect_uris: [] }],
          ["a string", { redirect_uris: redirectUri }],
          ["not strings", { redirect_uris: [42] }],
          ["more than 20", { redirect_uris: Array.from({ length: 21 }, (_, i) => `https://notes.example/cb/${i}`) }],
          ["http elsewhere than loopback", { redirect_uris: ["http://notes.example/cb"] }],
          ["loopback without a port", { redirect_uris: ["http://127.0.0.1/cb"] }],
          ["a fragment", { redirect_uris: ["https://notes.example/cb#x"] }],
          ["javascript:", { redirect_uris: ["javascript:alert(document.cookie)"] }],
          ["data:", { redirect_uris: ["data:text/html,hi"] }],
          ["user information", { redirect_uris: ["https://me:pw@notes.example/cb"] }],
          ["a scheme without a dot", { redirect_uris: ["notes:/callback"] }],
          ["relative", { redirect_uris: ["/callback"] }],
          ["one bad among good ones", { redirect_uris: [redirectUri, "http://evil.example/cb"] }]
        ]
        for (const [name, metadata] of refused) {
          expect(yield* Effect.flip(register(metadata)), name).toMatchObject({ _tag: "OAuthError", error: "invalid_redirect_uri" })
        }
      }))

    it.effect("other metadata must be what a public PKCE client can have: otherwise invalid_client_metadata", () =>
      Effect.gen(function*() {
        const refused: ReadonlyArray<readonly [string, Omit<ClientMetadata, "redirect_uris">, RegExp]> = [
          ["a workspace scope", { scope: "meetings:read workspace:read" }, /workspace scopes/],
          ["only workspace scopes", { scope: "workspace:write" }, /workspace scopes/],
          ["an unknown scope", { scope: "meetings:read admin" }, /unknown scope admin/],
          ["a scope that is not a string", { scope: ["meetings:read"] }, /scope/],
          ["client_secret_basic", { token_endpoint_auth_method: "client_secret_basic" }, /token_endpoint_auth_method/],
          ["client_secret_post", { token_endpoint_auth_method: "client_secret_post" }, /token_endpoint_auth_method/],
          ["private_key_jwt", { token_endpoint_auth_method: "private_key_jwt" }, /token_endpoint_auth_method/],
          ["client_credentials", { grant_types: ["authorization_code", "client_credentials"] }, /grant_types/],
          ["implicit", { grant_types: ["implicit"] }, /grant_types/],
          ["refresh_token alone", { grant_types: ["refresh_token"] }, /grant_types/],
          ["response_type token", { response_types: ["token"] }, /response_types/],
          ["an empty client_name", { client_name: "  " }, /client_name/],
          ["a long client_name", { client_name: "n".repeat(201) }, /client_name/],
          ["a client_name with a control character", { client_name: "Notes\nFake" }, /client_name/],
          ["client_uri over http", { client_uri: "http://notes.example" }, /client_uri/],
          ["logo_uri javascript:", { logo_uri: "javascript:alert(1)" }, /logo_uri/]
        ]
        for (const [name, metadata, description] of refused) {
          expect(yield* Effect.flip(register({ redirect_uris: [redirectUri], ...metadata })), name).toMatchObject({
            _tag: "OAuthError",
            error: "invalid_client_metadata",
            error_description: expect.stringMatching(description)
          })
        }
      }))

    it.effect("metadata the server does not know is ignored", () =>
      Effect.gen(function*() {
        const metadata = {
          redirect_uris: [redirectUri],
          client_name: "Notes",
          contacts: ["ops@notes.example"],
          jwks_uri: "https://notes.example/jwks.json",
          software_id: "4NRB1-0XZABZI9E6-5SM3R",
          policy_uri: "https://notes.example/policy",
          client_secret: "not asked for"
        }
        const registered = yield* register(metadata)
        expect(Object.keys(registered).sort()).toEqual([
          "client_id",
          "client_id_issued_at",
          "client_name",
          "grant_types",
          "redirect_uris",
          "registration_access_token",
          "response_types",
          "token_endpoint_auth_method"
        ])
        // A client_id in the registration is not the client's to choose.
        const chosen = yield* register({ redirect_uris: [redirectUri], client_id: builtInClientId })
        expect(chosen.client_id).not.toBe(builtInClientId)
      }))

    it.effect("the registration access token reads, updates and deletes its client; any other token is invalid_token", () =>
      Effect.gen(function*() {
        const clients = yield* Clients
        const mine = yield* register({ redirect_uris: [redirectUri], client_name: "Notes" })
        const theirs = yield* register({ redirect_uris: [redirectUri], client_name: "Other" })
        const token = mine.registration_access_token!
        const wrong: ReadonlyArray<readonly [string, string]> = [
          [mine.client_id, theirs.registration_access_token!],
          [mine.client_id, token + "x"],
          [mine.client_id, ""],
          [theirs.client_id, token],
          ["cvr_unknown", token],
          [builtInClientId, token]
        ]
        for (const [clientId, presented] of wrong) {
          const invalid = { _tag: "OAuthError", error: "invalid_token" }
          expect(yield* Effect.flip(clients.read(clientId, presented))).toMatchObject(invalid)
          expect(yield* Effect.flip(clients.update(clientId, presented, { client_id: clientId, redirect_uris: [redirectUri] }))).toMatchObject(invalid)
          expect(yield* Effect.flip(clients.remove(clientId, presented))).toMatchObject(invalid)
        }

        const updated = yield* clients.update(mine.client_id, token, {
          client_id: mine.client_id,
          redirect_uris: ["com.example.notes:/oauth"],
          client_name: "Notes 2",
          scope: "meetings:read"
        })
        expect(updated).toMatchObject({
          client_id: mine.client_id,
          client_name: "Notes 2",
          redirect_uris: ["com.example.notes:/oauth"],
          scope: "meetings:read"
        })
        expect(updated).not.toHaveProperty("registration_access_token")
        expect(yield* clients.read(mine.client_id, token)).toEqual(updated)
        // Without a client_name the name is kept.
        expect(yield* clients.update(mine.client_id, token, { client_id: mine.client_id, redirect_uris: ["com.example.notes:/oauth"] }))
          .toMatchObject({ client_name: "Notes 2" })

        // The update is checked like a registration, and must name the client.
        expect(yield* Effect.flip(clients.update(mine.client_id, token, { client_id: mine.client_id, redirect_uris: ["http://notes.example/cb"] })))
          .toMatchObject({ error: "invalid_redirect_uri" })
        expect(yield* Effect.flip(clients.update(mine.client_id, token, { redirect_uris: [redirectUri] })))
          .toMatchObject({ error: "invalid_client_metadata" })
        expect(yield* Effect.flip(clients.update(mine.client_id, token, { client_id: theirs.client_id, redirect_uris: [redirectUri] })))
          .toMatchObject({ error: "invalid_client_metadata" })
        expect(yield* Effect.flip(clients.update(mine.client_id, token, { client_id: mine.client_id, redirect_uris: [redirectUri], scope: "workspace:read" })))
          .toMatchObject({ error: "invalid_client_metadata" })
        expect((yield* clients.read(mine.client_id, token)).redirect_uris).toEqual(["com.example.notes:/oauth"])
        // The other client was not touched.
        expect(yield* clients.read(theirs.client_id, theirs.registration_access_token!)).toMatchObject({ client_name: "Other", redirect_uris: [redirectUri] })

        yield* clients.remove(mine.client_id, token)
        expect(yield* clients.find(mine.client_id)).toEqual(Option.none())
        expect(yield* Effect.flip(clients.read(mine.client_id, token))).toMatchObject({ error: "invalid_token" })
        expect(yield* Effect.flip(clients.remove(mine.client_id, token))).toMatchObject({ error: "invalid_token" })
      }))

    it.effect("an updated client's redirect URIs are the ones the authorization endpoint allows", () =>
      Effect.gen(function*() {
        const clients = yield* Clients
        const server = yield* AuthorizationServer
        const { live } = yield* signedIn()
        const app = yield* register({ redirect_uris: [redirectUri] })
        yield* clients.update(app.client_id, app.registration_access_token!, { client_id: app.client_id, redirect_uris: ["https://notes.example/v2/cb"] })
        const authorize = (uri: string) => server.authorize(authorizeParams({ client_id: app.client_id, redirect_uri: uri }), Option.some(live), Option.none())
        expect(yield* authorize(redirectUri)).toMatchObject({ _tag: "Refused" })
        expect(yield* authorize("https://notes.example/v2/cb")).toMatchObject({ _tag: "ConsentRequired" })
      }))

    it.effect("deleting a client revokes every token issued to it, and only those", () =>
      Effect.gen(function*() {
        const clients = yield* Clients
        const server = yield* AuthorizationServer
        const { live } = yield* signedIn()
        const app = yield* register({ redirect_uris: [redirectUri] })
        const other = yield* register({ redirect_uris: [redirectUri] })
        const first = yield* tokensFor({ live, clientId: app.client_id, redirectUri, decision: "approve" })
        const refreshed = yield* server.refresh({ refresh_token: first.refresh_token })
        const second = yield* tokensFor({ live, clientId: app.client_id, redirectUri, decision: "approve" })
        const others = yield* tokensFor({ live, clientId: other.client_id, redirectUri, decision: "approve" })
        const cli = yield* tokensFor({ live })
        // A code issued but not yet exchanged.
        const pending = yield* server.authorize(
          authorizeParams({ client_id: app.client_id, redirect_uri: redirectUri }),
          Option.some(live),
          Option.some("approve")
        )
        expect(pending).toMatchObject({ _tag: "Redirect" })

        yield* clients.remove(app.client_id, app.registration_access_token!)
        for (const access of [first.access_token, refreshed.access_token, second.access_token]) {
          expect(yield* Effect.flip(bearer(access))).toMatchObject({ _tag: "Unauthenticated" })
        }
        for (const refresh of [refreshed.refresh_token, second.refresh_token]) {
          expect(yield* Effect.flip(server.refresh({ refresh_token: refresh }))).toMatchObject({ error: "invalid_grant" })
        }
        expect(yield* server.authorize(authorizeParams({ client_id: app.client_id, redirect_uri: redirectUri }), Option.some(live), Option.none()))
          .toMatchObject({ _tag: "Refused" })
        yield* bearer(others.access_token)
        yield* bearer(cli.access_token)
        yield* server.refresh({ refresh_token: others.refresh_token })
      }))

    it.effect("the built-in client is always there: first-party, any loopback redirect URI", () =>
      Effect.gen(function*() {
        const found = yield* (yield* Clients).find(builtInClientId)
        expect(Option.map(found, ({ client_id, kind, redirect_uris }) => ({ client_id, kind, redirect_uris }))).toEqual(
          Option.some({ client_id: builtInClientId, kind: "first_party", redirect_uris: [] })
        )
        expect(yield* (yield* Clients).find("cvc_nobody")).toEqual(Option.none())
      }))

    it.effect("the operator's first-party client takes loopback redirect URIs, or none (any loopback URI)", () =>
      Effect.gen(function*() {
        const clients = yield* Clients
        const created = yield* clients.createFirstParty(
          CreateFirstPartyClient.make({ name: "Sync", redirect_uris: ["http://127.0.0.1:7000/cb", "http://localhost:7001/"] })
        )
        expect(created).toMatchObject({ client_id: expect.stringMatching(/^cvc_[A-Za-z0-9_-]{22}$/), name: "Sync", redirect_uris: ["http://127.0.0.1:7000/cb", "http://localhost:7001/"] })
        expect(Option.map(yield* clients.find(created.client_id), (client) => client.kind)).toEqual(Option.some("first_party"))
        const open = yield* clients.createFirstParty(CreateFirstPartyClient.make({ name: "Any port" }))
        expect(open.redirect_uris).toEqual([])
        // Any loopback URI works for it.
        const { live } = yield* signedIn()
        const tokens = yield* tokensFor({ live, clientId: open.client_id, redirectUri: "http://localhost:40000/anything" })
        expect((yield* bearer(tokens.access_token)).client_id).toBe(open.client_id)
      }))

    it.effect.prop(
      "the operator's first-party client refuses any redirect URI that is not loopback",
      [A.loopbackUri, FastCheck.oneof(A.httpsUri, A.privateUseUri, FastCheck.constant("http://app.example:8080/cb"))],
      ([loopback, other]) =>
        Effect.gen(function*() {
          const clients = yield* Clients
          const error = yield* Effect.flip(clients.createFirstParty(CreateFirstPartyClient.make({ name: "Tool", redirect_uris: [loopback, other] })))
          expect(error).toMatchObject({ _tag: "ValidationError", field: "redirect_uris[1]" })
          const created = yield* clients.createFirstParty(CreateFirstPartyClient.make({ name: "Tool", redirect_uris: [loopback] }))
          expect(created.redirect_uris).toEqual([loopback])
        }),
      { fastCheck: { numRuns: 50 } }
    )
  })
})
