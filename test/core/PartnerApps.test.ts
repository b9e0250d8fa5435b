/**
 * Partner apps (partner/PartnerApps.ts) on the in-memory store: what create makes (secrets shown once, kept as
 * hashes), the slug rules, the URL and redirect-URI rules, update, list, connecting workspaces (idempotent, gone with
 * the workspace), and the admin authentication's exact outcomes.
 */
import {
  Convene,
  CreatePartnerApp,
  CreateWorkspace,
  Crypto,
  isPartnerAppSlug,
  MAX_PARTNER_APP_SLUG_LENGTH,
  Outbound,
  OutboundRefused,
  PartnerAppId,
  PartnerApps,
  PartnerStore,
  PartnerAppSlug,
  SecretBox,
  slugFromName,
  UpdatePartnerApp,
  WorkspaceId,
  Workspaces
} from "@convene/core"
import { describe, expect, layer } from "@effect/vitest"
import { DateTime, Effect, Exit, FastCheck as fc, Layer, Option, Redacted, TestClock } from "effect"
import { NodeSecretBox } from "@convene/node"
import { CoreLive, spansOf } from "./fixtures.js"

/** Every URL passes the outbound check but those of `internal.example`, which resolves to a private address. */
const TestOutbound = Layer.succeed(
  Outbound,
  Outbound.of({
    check: (url) =>
      new URL(url).hostname === "internal.example"
        ? Effect.fail(new OutboundRefused({ message: "internal.example resolves to an address this server does not call" }))
        : Effect.void,
    post: () => Effect.die(new Error("partner apps call nobody")),
    get: () => Effect.die(new Error("partner apps call nobody"))
  })
)

const PartnerLive = Convene.partnerLayer.pipe(
  Layer.provideMerge(Layer.mergeAll(CoreLive, TestOutbound, NodeSecretBox.layer(Redacted.make(new Uint8Array(32).fill(7)))))
)

const create = (fields: Partial<ConstructorParameters<typeof CreatePartnerApp>[0]> = {}) =>
  Effect.flatMap(PartnerApps, (apps) => apps.create(CreatePartnerApp.make({ name: `Acme ${crypto.randomUUID().slice(0, 8)}`, ...fields })))

/** The error `effect` fails with (the test fails when it succeeds). */
const failureOf = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<E, A, R> => Effect.flip(effect)

const key = (value: string) => Redacted.make(value)

describe("PartnerApps", () => {
  layer(PartnerLive)((it) => {
    it.effect("create makes an active app with a client id, and answers the API key and client secret, which are stored only as hashes", () =>
      Effect.gen(function*() {
        yield* TestClock.adjust("1 hour")
        const created = yield* create({ webhook_url: "https://hooks.acme.example/convene", co_brand_name: "Acme" })
        expect(created).toMatchObject({
          status: "active",
          webhook_enabled: true,
          webhook_url: "https://hooks.acme.example/convene",
          co_brand_name: "Acme",
          co_brand_logo_url: null,
          redirect_uris: []
        })
        expect(created.client_id).toMatch(/^cvp_[A-Za-z0-9_-]{22}$/)
        expect(created.api_key).toMatch(/^svc_pak_v1_[A-Za-z0-9_-]{43}$/)
        expect(created.client_secret).toMatch(/^svc_pcs_v1_[A-Za-z0-9_-]{43}$/)
        expect(DateTime.toEpochMillis(created.created_at)).toBe(3_600_000)
        const stored = Option.getOrThrow(yield* (yield* PartnerStore).get(created.id))
        const crypto = yield* Crypto
        expect(stored.api_key_hash).toBe(yield* crypto.sha256(created.api_key))
        expect(stored.client_secret_hash).toBe(yield* crypto.sha256(created.client_secret))
        expect(JSON.stringify(stored)).not.toContain(created.api_key)
        expect(JSON.stringify(stored)).not.toContain(created.client_secret)
        // The webhook secret is kept sealed (the server signs with it), never in clear.
        expect(created.webhook_secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)
        expect(JSON.stringify(stored)).not.toContain(created.webhook_secret)
        expect(yield* (yield* SecretBox).open(stored.sealed_webhook_secret!)).toBe(created.webhook_secret)
        // No view shows a secret or its hash again.
        const view = yield* (yield* PartnerApps).get(created.id)
        expect(Object.keys(view).sort()).toEqual([
          "client_id", "co_brand_logo_url", "co_brand_name", "created_at", "id", "name", "redirect_uris", "slug", "status",
          "updated_at", "webhook_enabled", "webhook_events", "webhook_url"
        ])
        expect(JSON.stringify(view)).not.toContain(stored.api_key_hash)
      }))

    it.effect("two apps never share a client id, an API key or a client secret", () =>
      Effect.gen(function*() {
        const a = yield* create()
        const b = yield* create()
        expect(a.client_id).not.toBe(b.client_id)
        expect(a.api_key).not.toBe(b.api_key)
        expect(a.client_secret).not.toBe(b.client_secret)
      }))

    it.effect("a slug left out is derived from the name; a taken derived slug gets the first free suffix", () =>
      Effect.gen(function*() {
        const name = `Ünïcödé Çafé ${crypto.randomUUID().slice(0, 8)}!!`
        const first = yield* create({ name })
        expect(first.slug).toBe(slugFromName(name))
        expect(first.slug).toMatch(/^unicode-cafe-[0-9a-f]{8}$/)
        const second = yield* create({ name })
        const third = yield* create({ name })
        expect([second.slug, third.slug]).toEqual([`${first.slug}-2`, `${first.slug}-3`])
      }))

    it.effect("a slug given is kept; given again it is 409 Conflict, and nothing is created", () =>
      Effect.gen(function*() {
        const slug = PartnerAppSlug.make(`acme-${crypto.randomUUID().slice(0, 8)}`)
        const first = yield* create({ slug })
        expect(first.slug).toBe(slug)
        const before = (yield* (yield* PartnerApps).list({ limit: 100 })).total
        const error = yield* failureOf(create({ slug, name: "Other" }))
        expect(error).toMatchObject({ _tag: "Conflict" })
        expect((yield* (yield* PartnerApps).list({ limit: 100 })).total).toBe(before)
      }))

    it.effect("slugFromName always gives a slug, whatever the name", () =>
      Effect.sync(() =>
        fc.assert(fc.property(fc.string({ unit: "grapheme", maxLength: 300 }), (name) => {
          const slug = slugFromName(name)
          expect(isPartnerAppSlug(slug)).toBe(true)
          expect(slug.length).toBeLessThanOrEqual(MAX_PARTNER_APP_SLUG_LENGTH)
        }))
      ))

    it.effect("webhook_url must be HTTPS, without user information, and pass the outbound rules; co_brand_logo_url must be HTTPS", () =>
      Effect.gen(function*() {
        for (const [fields, field] of [
          [{ webhook_url: "http://hooks.acme.example/x" }, "webhook_url"],
          [{ webhook_url: "not a url" }, "webhook_url"],
          [{ webhook_url: "https://user:pw@hooks.acme.example/x" }, "webhook_url"],
          [{ webhook_url: "https://internal.example/x" }, "webhook_url"],
          [{ co_brand_logo_url: "http://cdn.acme.example/logo.png" }, "co_brand_logo_url"]
        ] as const) {
          const error = yield* failureOf(create(fields))
          expect(error).toMatchObject({ _tag: "ValidationError", field })
        }
      }))

    it.effect("redirect URIs are https or loopback, at most 20, a repeated one kept once", () =>
      Effect.gen(function*() {
        const created = yield* create({
          redirect_uris: ["https://acme.example/cb", "http://127.0.0.1:8000/cb", "https://acme.example/cb"]
        })
        expect(created.redirect_uris).toEqual(["https://acme.example/cb", "http://127.0.0.1:8000/cb"])
        for (const uri of ["com.acme.app:/cb", "http://acme.example/cb", "https://acme.example/cb#x", "/relative"]) {
          const error = yield* failureOf(create({ redirect_uris: ["https://acme.example/ok", uri] }))
          expect(error).toMatchObject({ _tag: "ValidationError", field: "redirect_uris[1]" })
        }
      }))

    it.effect("update changes what it names, keeps the rest, clears with null, and never touches the slug, client id or secrets", () =>
      Effect.gen(function*() {
        const apps = yield* PartnerApps
        const created = yield* create({ webhook_url: "https://hooks.acme.example/a", co_brand_name: "Acme" })
        const before = Option.getOrThrow(yield* (yield* PartnerStore).get(created.id))
        yield* TestClock.adjust("5 minutes")
        const updated = yield* apps.update(created.id, UpdatePartnerApp.make({ status: "suspended", webhook_url: null, name: "Acme 2" }))
        expect(updated).toMatchObject({
          name: "Acme 2",
          status: "suspended",
          webhook_enabled: false,
          webhook_url: null,
          co_brand_name: "Acme",
          slug: created.slug,
          client_id: created.client_id
        })
        expect(updated.updated_at).toEqual(DateTime.add(created.updated_at, { minutes: 5 }))
        const after = Option.getOrThrow(yield* (yield* PartnerStore).get(created.id))
        expect([after.api_key_hash, after.client_secret_hash]).toEqual([before.api_key_hash, before.client_secret_hash])
        const cleared = yield* apps.update(created.id, UpdatePartnerApp.make({ co_brand_name: null, redirect_uris: ["https://a.example/cb"] }))
        expect(cleared).toMatchObject({ co_brand_name: null, name: "Acme 2", status: "suspended", redirect_uris: ["https://a.example/cb"] })
        expect(yield* failureOf(apps.update(created.id, UpdatePartnerApp.make({ webhook_url: "https://internal.example/" }))))
          .toMatchObject({ _tag: "ValidationError", field: "webhook_url" })
        expect(yield* failureOf(apps.update(PartnerAppId.make(crypto.randomUUID()), UpdatePartnerApp.make({ name: "x" }))))
          .toMatchObject({ _tag: "NotFound" })
      }))

    it.effect("list is newest first with the list envelope", () =>
      Effect.gen(function*() {
        const apps = yield* PartnerApps
        const a = yield* create()
        yield* TestClock.adjust("1 second")
        const b = yield* create()
        // Other tests' apps share the store (and their own clocks): these two are in order among them.
        const page = yield* apps.list({ limit: 100 })
        expect(page).toMatchObject({ limit: 100, offset: 0 })
        expect(page.total).toBe(page.items.length)
        expect(page.items.map((app) => app.id).filter((id) => id === a.id || id === b.id)).toEqual([b.id, a.id])
        expect(page.items.every((app) => !("api_key" in app) && !("api_key_hash" in app))).toBe(true)
        expect((yield* apps.list({ limit: 1, offset: 1 })).items).toHaveLength(1)
      }))

    it.effect("connecting a workspace is idempotent (the first connected_at stays), lists newest first, and is 404 for unknown ids", () =>
      Effect.gen(function*() {
        const apps = yield* PartnerApps
        const workspaces = yield* Workspaces
        const app = yield* create()
        const w1 = yield* workspaces.create(CreateWorkspace.make({ name: "One", plan: "PRO" }))
        const w2 = yield* workspaces.create(CreateWorkspace.make({ name: "Two", plan: "ELITE" }))
        const first = yield* apps.connectWorkspace(app.id, w1.id)
        expect(first).toMatchObject({ id: w1.id, name: "One", plan: "PRO" })
        yield* TestClock.adjust("1 minute")
        const again = yield* apps.connectWorkspace(app.id, w1.id)
        expect(again.connected_at).toEqual(first.connected_at)
        const second = yield* apps.connectWorkspace(app.id, w2.id)
        const listed = yield* apps.listWorkspaces(app.id, {})
        expect(listed).toMatchObject({ total: 2, limit: 20, offset: 0 })
        expect(listed.items).toEqual([second, first])
        expect(yield* failureOf(apps.connectWorkspace(app.id, WorkspaceId.make(crypto.randomUUID()))))
          .toMatchObject({ _tag: "NotFound", resource: "workspace" })
        expect(yield* failureOf(apps.connectWorkspace(PartnerAppId.make(crypto.randomUUID()), w1.id)))
          .toMatchObject({ _tag: "NotFound", resource: "partner app" })
        // Another app sees none of them.
        const other = yield* create()
        expect((yield* apps.listWorkspaces(other.id, {})).total).toBe(0)
      }))

    it.effect("deleting a workspace deletes its connections; the app stays", () =>
      Effect.gen(function*() {
        const apps = yield* PartnerApps
        const workspaces = yield* Workspaces
        const app = yield* create()
        const kept = yield* workspaces.create(CreateWorkspace.make({ name: "Kept", plan: "PRO" }))
        const gone = yield* workspaces.create(CreateWorkspace.make({ name: "Gone", plan: "PRO" }))
        yield* apps.connectWorkspace(app.id, kept.id)
        yield* apps.connectWorkspace(app.id, gone.id)
        yield* workspaces.delete(gone.id)
        const listed = yield* apps.listWorkspaces(app.id, {})
        expect(listed.items.map((workspace) => workspace.id)).toEqual([kept.id])
        expect(listed.total).toBe(1)
        expect((yield* apps.get(app.id)).id).toBe(app.id)
        // The deleted workspace cannot be connected again.
        expect(yield* failureOf(apps.connectWorkspace(app.id, gone.id))).toMatchObject({ _tag: "NotFound" })
      }))

    it.effect("authenticateAdmin: the key's absence first, then the client id's, then one refusal for unknown and wrong, then suspension", () =>
      Effect.gen(function*() {
        const apps = yield* PartnerApps
        const app = yield* create()
        const refusal = (apiKey: string | undefined, clientId: string | undefined) =>
          Effect.map(failureOf(apps.authenticateAdmin(apiKey === undefined ? undefined : key(apiKey), clientId)), (error) =>
            "code" in error ? error.code : error._tag)
        expect(yield* refusal(undefined, undefined)).toBe("missing_api_key")
        expect(yield* refusal(undefined, app.client_id)).toBe("missing_api_key")
        expect(yield* refusal("  ", app.client_id)).toBe("missing_api_key")
        expect(yield* refusal(app.api_key, undefined)).toBe("missing_client_id")
        expect(yield* refusal(app.api_key, "")).toBe("missing_client_id")
        expect(yield* refusal(app.api_key, "cvp_unknown")).toBe("invalid_credentials")
        expect(yield* refusal(app.api_key, "x".repeat(5000))).toBe("invalid_credentials")
        expect(yield* refusal(`${app.api_key}x`, app.client_id)).toBe("invalid_credentials")
        expect(yield* refusal(app.client_secret, app.client_id)).toBe("invalid_credentials")
        const other = yield* create()
        expect(yield* refusal(other.api_key, app.client_id)).toBe("invalid_credentials")
        const found = yield* apps.authenticateAdmin(key(app.api_key), app.client_id)
        expect(found.id).toBe(app.id)
        yield* apps.update(app.id, UpdatePartnerApp.make({ status: "suspended" }))
        expect(yield* refusal(app.api_key, app.client_id)).toBe("PartnerAppInactive")
        // A wrong key never learns that the app is suspended.
        expect(yield* refusal(other.api_key, app.client_id)).toBe("invalid_credentials")
        yield* apps.update(app.id, UpdatePartnerApp.make({ status: "active" }))
        expect((yield* apps.authenticateAdmin(key(app.api_key), app.client_id)).id).toBe(app.id)
      }))

    it.effect("no refusal's message holds the key or the client id sent", () =>
      Effect.gen(function*() {
        const apps = yield* PartnerApps
        const app = yield* create()
        for (const [apiKey, clientId] of [[app.api_key, "cvp_nope"], [`${app.api_key}0`, app.client_id]] as const) {
          const error = yield* failureOf(apps.authenticateAdmin(key(apiKey), clientId))
          expect(error.message).not.toContain(apiKey)
          expect(error.message).not.toContain(clientId)
        }
      }))

    it.effect.prop(
      "authenticateAdmin accepts exactly the app's own key with its own client id",
      [fc.string({ maxLength: 80 }), fc.boolean()],
      ([guess, ownClientId]) =>
        Effect.gen(function*() {
          const apps = yield* PartnerApps
          const app = yield* create()
          const clientId = ownClientId ? app.client_id : `cvp_${guess}`
          const exit = yield* Effect.exit(apps.authenticateAdmin(key(guess), clientId))
          expect(Exit.isFailure(exit)).toBe(true)
          const own = yield* Effect.exit(apps.authenticateAdmin(key(app.api_key), app.client_id))
          expect(Exit.isSuccess(own)).toBe(true)
        }),
      { fastCheck: { numRuns: 30 } }
    )

    it.effect("every operation records a span named PartnerApps.method (the outermost one)", () =>
      Effect.gen(function*() {
        const apps = yield* PartnerApps
        const workspace = yield* (yield* Workspaces).create(CreateWorkspace.make({ name: "Spans", plan: "PRO" }))
        const outermost = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
          Effect.map(spansOf(effect), ({ exit, names }) => {
            expect(Exit.isSuccess(exit)).toBe(true)
            return names[0]
          })
        const created = yield* create()
        expect(yield* outermost(create())).toBe("PartnerApps.create")
        expect(yield* outermost(apps.update(created.id, UpdatePartnerApp.make({ name: "Renamed" })))).toBe("PartnerApps.update")
        expect(yield* outermost(apps.get(created.id))).toBe("PartnerApps.get")
        expect(yield* outermost(apps.list({}))).toBe("PartnerApps.list")
        expect(yield* outermost(apps.connectWorkspace(created.id, workspace.id))).toBe("PartnerApps.connectWorkspace")
        expect(yield* outermost(apps.listWorkspaces(created.id, {}))).toBe("PartnerApps.listWorkspaces")
        expect(yield* outermost(apps.authenticateAdmin(key(created.api_key), created.client_id))).toBe("PartnerApps.authenticateAdmin")
      }))
  })
})
