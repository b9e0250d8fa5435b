/**
 * The partner OAuth server's rules in the core (partner/PartnerOAuth.ts: the one AuthorizationServer with the
 * partner profile), on the test clock: confidential clients (secret checked in constant time, by the method the
 * policy accepts), state required, PKCE optional but enforced when sent, redirect URIs exact, the lifetimes of
 * the document (code 5 minutes, access token 24 hours, refresh token 30 days), consent connecting the workspace,
 * and the user context's authentication outcomes (PartnerOAuth.authenticate). Also the pre-signed download links
 * (AttachmentLinks) expiring after 15 minutes, and the SRT export's format.
 */
import {
  Attachment,
  AttachmentId,
  AttachmentRow,
  AttachmentStore,
  AttachmentLinks,
  Convene,
  CreatePartnerApp,
  MeetingId,
  Outbound,
  PartnerApps,
  PartnerAuthorizationServer,
  PartnerOAuth,
  PartnerStore,
  toSrt,
  UpdatePartnerApp
} from "@convene/core"
import { NodeSecretBox } from "@convene/node"
import { describe, expect, layer } from "@effect/vitest"
import { DateTime, Effect, Layer, Option, Redacted, TestClock } from "effect"
import { loopbackRedirect, oauthOver, pkce, queryOf, redirectOf, secretKey, signedIn } from "./fixtures.js"
import * as StoreMemory from "@convene/store-memory"

const NoOutbound = Layer.succeed(Outbound, Outbound.of({ check: () => Effect.void, post: () => Effect.die(new Error("nobody is called")), get: () => Effect.die(new Error("nobody is called")) }))

const PartnerServerLive = Convene.partnerOAuthLayer("https://convene.example/oauth2").pipe(
  Layer.provideMerge(Convene.partnerLayer),
  Layer.provideMerge(Layer.mergeAll(oauthOver(StoreMemory.layer), NoOutbound, NodeSecretBox.layer(secretKey)))
)

const newApp = Effect.flatMap(PartnerApps, (apps) =>
  apps.create(CreatePartnerApp.make({ name: `Acme ${crypto.randomUUID().slice(0, 6)}`, redirect_uris: [loopbackRedirect] })))

const params = (entries: Record<string, string>) => Object.entries(entries) as ReadonlyArray<readonly [string, string]>

describe("the partner authorization server", () => {
  layer(PartnerServerLive)((it) => {
    it.effect("issues a code after consent, connects the workspace, and exchanges it with the client secret for 24-hour tokens", () =>
      Effect.gen(function*() {
        const server = yield* PartnerAuthorizationServer
        const app = yield* newApp
        const { live, user } = yield* signedIn()
        const request = params({ response_type: "code", client_id: app.client_id, redirect_uri: loopbackRedirect, scope: "meetings:read profile", state: "s1" })
        const consent = yield* server.authorize(request, Option.some(live), Option.none())
        expect(consent).toMatchObject({ _tag: "ConsentRequired", scopes: ["profile", "meetings:read"] })
        const store = yield* PartnerStore
        const connected = Effect.map(store.getByClientIdFor(app.client_id, user.workspace_id), Option.map((found) => found.connected))
        expect(yield* connected).toEqual(Option.some(false))
        const code = queryOf(redirectOf(yield* server.authorize(request, Option.some(live), Option.some("approve")))).code!
        expect(yield* connected).toEqual(Option.some(true))

        const basic = { method: "client_secret_basic" as const, clientId: app.client_id }
        const wrong = yield* Effect.flip(server.exchangeCode({ code, code_verifier: undefined, client: { ...basic, secret: "svc_pcs_v1_nope" }, redirect_uri: loopbackRedirect }))
        expect(wrong).toMatchObject({ error: "invalid_client" })
        // A public client's method is not a partner app's.
        const none = yield* Effect.flip(server.exchangeCode({ code, code_verifier: undefined, client: { method: "none", clientId: app.client_id }, redirect_uri: loopbackRedirect }))
        expect(none).toMatchObject({ error: "invalid_client" })
        const tokens = yield* server.exchangeCode({ code, code_verifier: undefined, client: { ...basic, secret: app.client_secret }, redirect_uri: loopbackRedirect })
        expect(tokens).toMatchObject({ token_type: "Bearer", expires_in: 86_400, scope: "profile meetings:read" })

        const oauth = yield* PartnerOAuth
        const caller = yield* oauth.authenticate(Redacted.make(`Bearer ${tokens.access_token}`))
        expect(caller.app.id).toBe(app.id)
        expect(caller.principal).toMatchObject({ kind: "partner_access_token", user_id: user.id, scopes: ["profile", "meetings:read"] })
        yield* TestClock.adjust("24 hours")
        expect(yield* Effect.flip(oauth.authenticate(Redacted.make(`Bearer ${tokens.access_token}`)))).toMatchObject({ code: "unauthorized" })
        // The refresh token lasts 30 days from its issue.
        const refreshed = yield* server.refresh({ refresh_token: tokens.refresh_token, client: { ...basic, secret: app.client_secret } })
        yield* TestClock.adjust("30 days")
        const expired = yield* Effect.flip(server.refresh({ refresh_token: refreshed.refresh_token, client: { ...basic, secret: app.client_secret } }))
        expect(expired).toMatchObject({ error: "invalid_grant", error_description: expect.stringMatching(/expired/) })
      }))

    it.effect("a code lives 5 minutes", () =>
      Effect.gen(function*() {
        const server = yield* PartnerAuthorizationServer
        const app = yield* newApp
        const { live } = yield* signedIn()
        const request = params({ response_type: "code", client_id: app.client_id, redirect_uri: loopbackRedirect, scope: "meetings:read", state: "s" })
        const code = queryOf(redirectOf(yield* server.authorize(request, Option.some(live), Option.some("approve")))).code!
        yield* TestClock.adjust("5 minutes")
        const client = { method: "client_secret_post" as const, clientId: app.client_id, secret: app.client_secret }
        expect(yield* Effect.flip(server.exchangeCode({ code, code_verifier: undefined, client, redirect_uri: loopbackRedirect }))).toMatchObject({
          error: "invalid_grant",
          error_description: expect.stringMatching(/expired/)
        })
      }))

    it.effect("PKCE is enforced when the request sent a challenge, and state is required", () =>
      Effect.gen(function*() {
        const server = yield* PartnerAuthorizationServer
        const app = yield* newApp
        const { live } = yield* signedIn()
        const { challenge, verifier } = pkce()
        const base = { response_type: "code", client_id: app.client_id, redirect_uri: loopbackRedirect, scope: "meetings:read" }
        const noState = queryOf(redirectOf(yield* server.authorize(params(base), Option.some(live), Option.some("approve"))))
        expect(noState).toMatchObject({ error: "invalid_request", error_description: "state is required" })
        const plain = queryOf(redirectOf(yield* server.authorize(params({ ...base, state: "s", code_challenge: challenge, code_challenge_method: "plain" }), Option.some(live), Option.some("approve"))))
        expect(plain.error).toBe("invalid_request")
        const request = params({ ...base, state: "s", code_challenge: challenge, code_challenge_method: "S256" })
        const code = queryOf(redirectOf(yield* server.authorize(request, Option.some(live), Option.some("approve")))).code!
        const client = { method: "client_secret_basic" as const, clientId: app.client_id, secret: app.client_secret }
        expect(yield* Effect.flip(server.exchangeCode({ code, code_verifier: undefined, client, redirect_uri: loopbackRedirect }))).toMatchObject({
          error: "invalid_request",
          error_description: expect.stringMatching(/code_verifier/)
        })
        expect((yield* server.exchangeCode({ code, code_verifier: verifier, client, redirect_uri: loopbackRedirect })).access_token).toMatch(/^svc_pua_v1_/)
      }))

    it.effect("refuses a redirect URI that differs from the registered one, even by the loopback port", () =>
      Effect.gen(function*() {
        const server = yield* PartnerAuthorizationServer
        const app = yield* newApp
        const { live } = yield* signedIn()
        const outcome = yield* server.authorize(
          params({ response_type: "code", client_id: app.client_id, redirect_uri: loopbackRedirect.replace("8123", "8124"), scope: "meetings:read", state: "s" }),
          Option.some(live),
          Option.none()
        )
        expect(outcome._tag).toBe("Refused")
      }))

    it.effect("authenticate: the header's form, the token kind, suspension and the connection", () =>
      Effect.gen(function*() {
        const oauth = yield* PartnerOAuth
        const codeOf = (header: string | undefined) =>
          Effect.map(Effect.flip(oauth.authenticate(header === undefined ? undefined : Redacted.make(header))), (error) =>
            "code" in error ? error.code : error._tag)
        expect(yield* codeOf(undefined)).toBe("missing_authorization")
        expect(yield* codeOf("  ")).toBe("missing_authorization")
        expect(yield* codeOf("Token abc")).toBe("invalid_authorization_format")
        expect(yield* codeOf("Bearer")).toBe("invalid_authorization_format")
        expect(yield* codeOf(`Bearer svc_at_v1_${"a".repeat(43)}`)).toBe("unauthorized")
        expect(yield* codeOf(`Bearer svc_pua_v1_${"a".repeat(43)}`)).toBe("unauthorized")

        const server = yield* PartnerAuthorizationServer
        const app = yield* newApp
        const { live, user } = yield* signedIn()
        const request = params({ response_type: "code", client_id: app.client_id, redirect_uri: loopbackRedirect, scope: "meetings:read", state: "s" })
        const code = queryOf(redirectOf(yield* server.authorize(request, Option.some(live), Option.some("approve")))).code!
        const tokens = yield* server.exchangeCode({
          code,
          code_verifier: undefined,
          client: { method: "client_secret_basic", clientId: app.client_id, secret: app.client_secret },
          redirect_uri: loopbackRedirect
        })
        expect(yield* codeOf(`Bearer ${tokens.refresh_token}`)).toBe("unauthorized")
        const apps = yield* PartnerApps
        yield* apps.update(app.id, UpdatePartnerApp.make({ status: "suspended" }))
        expect(yield* codeOf(`Bearer ${tokens.access_token}`)).toBe("PartnerAppInactive")
        yield* apps.update(app.id, UpdatePartnerApp.make({ status: "active" }))
        yield* (yield* PartnerStore).deleteByWorkspace(user.workspace_id)
        expect(yield* codeOf(`Bearer ${tokens.access_token}`)).toBe("unauthorized")
      }))

    it.effect("a pre-signed download link is valid 15 minutes and only as it was made", () =>
      Effect.gen(function*() {
        const links = yield* AttachmentLinks
        const { user } = yield* signedIn()
        const row = new AttachmentRow({
          id: AttachmentId.make(crypto.randomUUID()),
          workspace_id: user.workspace_id,
          meeting_id: MeetingId.make(crypto.randomUUID()),
          file_name: "a.bin",
          content_type: "application/octet-stream",
          size: 3,
          sha256: "0".repeat(64),
          created_at: DateTime.unsafeMake(0)
        })
        yield* (yield* AttachmentStore).insert(row)
        const made = yield* links.mint("https://convene.example", Attachment.of(row), user.workspace_id)
        const url = new URL(made.download_url)
        expect(url.origin + url.pathname).toBe(`https://convene.example/v1/partner/files/${user.workspace_id}/${row.meeting_id}/${row.id}`)
        const parts = {
          workspaceId: user.workspace_id,
          meetingId: row.meeting_id,
          attachmentId: row.id,
          expires: url.searchParams.get("expires")!,
          kid: url.searchParams.get("kid")!,
          signature: url.searchParams.get("signature")!
        }
        expect(DateTime.toEpochMillis(made.download_url_expires_at)).toBe(Number(parts.expires) * 1000)
        yield* links.check(parts)
        const refused = (changed: Partial<typeof parts>) => Effect.map(Effect.flip(links.check({ ...parts, ...changed })), (error) => error._tag)
        expect(yield* refused({ expires: String(Number(parts.expires) + 1) })).toBe("NotFound")
        expect(yield* refused({ signature: parts.signature.replace(/^./, (c) => (c === "0" ? "1" : "0")) })).toBe("NotFound")
        expect(yield* refused({ kid: "another" })).toBe("NotFound")
        expect(yield* refused({ meetingId: MeetingId.make(crypto.randomUUID()) })).toBe("NotFound")
        yield* TestClock.adjust("14 minutes")
        yield* links.check(parts)
        yield* TestClock.adjust("1 minute")
        expect(yield* refused({})).toBe("NotFound")
      }))
  })
})

describe("toSrt", () => {
  layer(Layer.empty)((it) => {
    it.effect("numbers the cues, ends each where the next starts (the last after 5 s), keeps the text's lines", () =>
      Effect.sync(() => {
        expect(toSrt([])).toBe("")
        expect(
          toSrt([
            { offset_ms: 0, speaker: "Ann", text: "Hello" },
            { offset_ms: 3_723_004, speaker: "Bo", text: "Two\n\nlines" }
          ])
        ).toBe("1\r\n00:00:00,000 --> 01:02:03,004\r\nAnn: Hello\r\n\r\n2\r\n01:02:03,004 --> 01:02:08,004\r\nBo: Two\r\nlines\r\n")
      }))
  })
})
