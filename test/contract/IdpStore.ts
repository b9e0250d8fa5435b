import {
  EmailDomain,
  IdpConfig,
  IdpConfigId,
  IdpStore,
  type PartnerAppId,
  PartnerStore,
  type StorePorts,
  Transactor
} from "@convene/core"
import { addEqualityTesters, expect, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, type Layer, Option } from "effect"
import { at, minutes, rolledBack, uuid } from "./fixtures.js"
import { partnerApp } from "./PartnerStore.js"

/** A domain no other test uses. */
const freshDomain = (): EmailDomain => EmailDomain.make(`d${uuid().slice(0, 8)}.example.org`)

/** An IdP configuration of `appId` with every optional field set, unless `fields` say otherwise. */
export const idpConfig = (appId: PartnerAppId, fields: Partial<IdpConfig> = {}): IdpConfig =>
  new IdpConfig({
    id: IdpConfigId.make(uuid()),
    partner_app_id: appId,
    name: "Acme Okta",
    discovery_url: "https://idp.example.com/.well-known/openid-configuration",
    idp_client_id: "acme-client",
    sealed_client_secret: "v1.k1.aaaa.bbbb.cccc",
    scopes: ["openid", "email", "profile"],
    claim_mappings: { email: "mail", name: "display_name", given_name: "first", family_name: "last" },
    mode: "strict",
    allowed_email_domains: [freshDomain(), freshDomain()],
    is_active: true,
    issuer: "https://idp.example.com",
    authorization_endpoint: "https://idp.example.com/authorize",
    token_endpoint: "https://idp.example.com/token",
    userinfo_endpoint: "https://idp.example.com/userinfo",
    jwks_uri: "https://idp.example.com/jwks",
    discovery_last_fetched_at: minutes(0),
    created_at: minutes(0),
    updated_at: minutes(0),
    ...fields
  })

const seedApp = Effect.gen(function*() {
  const app = partnerApp()
  yield* (yield* PartnerStore).insert(app)
  return app.id
})

const seed = (fields: Partial<IdpConfig> = {}) =>
  Effect.gen(function*() {
    const config = idpConfig(yield* seedApp, fields)
    expect(yield* (yield* IdpStore).insert(config)).toBe(true)
    return config
  })

export const suite = (name: string, storeLayer: Layer.Layer<StorePorts, unknown>) => {
  addEqualityTesters()

  layer(storeLayer)(`IdpStore (${name})`, (it) => {
    it.effect("insert then getByApp answers every field; an app without one answers none", () =>
      Effect.gen(function*() {
        const store = yield* IdpStore
        const full = yield* seed()
        const bare = yield* seed({
          claim_mappings: { email: "email" },
          mode: "partner_managed",
          allowed_email_domains: [],
          scopes: ["openid"],
          userinfo_endpoint: null
        })
        expect(yield* store.getByApp(full.partner_app_id)).toEqual(Option.some(full))
        expect(yield* store.getByApp(bare.partner_app_id)).toEqual(Option.some(bare))
        expect(yield* store.getByApp(yield* seedApp)).toEqual(Option.none())
      }))

    it.effect("a second insert for the app stores nothing and answers false", () =>
      Effect.gen(function*() {
        const store = yield* IdpStore
        const first = yield* seed()
        const second = idpConfig(first.partner_app_id, { name: "Second" })
        expect(yield* store.insert(second)).toBe(false)
        expect(yield* store.getByApp(first.partner_app_id)).toEqual(Option.some(first))
      }))

    it.effect("update replaces every field of the configuration with that id; another id changes nothing", () =>
      Effect.gen(function*() {
        const store = yield* IdpStore
        const config = yield* seed()
        const changed = new IdpConfig({
          ...config,
          name: "Renamed",
          discovery_url: "https://other.example.com/.well-known/openid-configuration",
          idp_client_id: "other",
          sealed_client_secret: "v1.k2.dddd.eeee.ffff",
          scopes: ["openid", "groups"],
          claim_mappings: { email: "email" },
          mode: "partner_managed",
          allowed_email_domains: [],
          is_active: false,
          issuer: "https://other.example.com",
          userinfo_endpoint: null,
          updated_at: minutes(5)
        })
        yield* store.update(changed)
        expect(yield* store.getByApp(config.partner_app_id)).toEqual(Option.some(changed))
        yield* store.update(new IdpConfig({ ...changed, id: IdpConfigId.make(uuid()), name: "Stranger" }))
        expect(yield* store.getByApp(config.partner_app_id)).toEqual(Option.some(changed))
      }))

    it.effect("deleteByApp answers whether there was one; the app may then insert again", () =>
      Effect.gen(function*() {
        const store = yield* IdpStore
        const config = yield* seed()
        expect(yield* store.deleteByApp(config.partner_app_id)).toBe(true)
        expect(yield* store.deleteByApp(config.partner_app_id)).toBe(false)
        expect(yield* store.getByApp(config.partner_app_id)).toEqual(Option.none())
        const again = idpConfig(config.partner_app_id)
        expect(yield* store.insert(again)).toBe(true)
        expect(yield* store.getByApp(config.partner_app_id)).toEqual(Option.some(again))
      }))

    it.effect("claimingApps lists the other apps listing the domain exactly (not a subdomain), sorted", () =>
      Effect.gen(function*() {
        const store = yield* IdpStore
        const domain = freshDomain()
        const a = yield* seed({ allowed_email_domains: [domain] })
        const b = yield* seed({ allowed_email_domains: [freshDomain(), domain], is_active: false })
        yield* seed({ allowed_email_domains: [EmailDomain.make(`eu.${domain}`)] })
        expect(yield* store.claimingApps(domain, yield* seedApp)).toEqual([a.partner_app_id, b.partner_app_id].sort())
        expect(yield* store.claimingApps(domain, a.partner_app_id)).toEqual([b.partner_app_id])
        expect(yield* store.claimingApps(freshDomain(), a.partner_app_id)).toEqual([])
      }))

    it.effect("staleDiscovery answers the active configurations fetched before the instant, oldest first, up to the limit", () =>
      Effect.gen(function*() {
        const store = yield* IdpStore
        // Long before any other test's rows, so that these come first.
        const old = at("1990-01-01T00:00:00.000Z")
        const second = yield* seed({ discovery_last_fetched_at: minutes(2, old) })
        const first = yield* seed({ discovery_last_fetched_at: minutes(1, old) })
        yield* seed({ discovery_last_fetched_at: minutes(0, old), is_active: false })
        const fresh = yield* seed({ discovery_last_fetched_at: minutes(10, old) })
        expect(yield* store.staleDiscovery(minutes(5, old), 10)).toEqual([first, second])
        expect(yield* store.staleDiscovery(minutes(5, old), 1)).toEqual([first])
        expect((yield* store.staleDiscovery(minutes(11, old), 10)).slice(0, 3)).toEqual([first, second, fresh])
        yield* store.deleteByApp(first.partner_app_id)
        yield* store.deleteByApp(second.partner_app_id)
        yield* store.deleteByApp(fresh.partner_app_id)
      }))

    it.effect("storeDiscovery stores the endpoints and instant only while the discovery URL is the one fetched", () =>
      Effect.gen(function*() {
        const store = yield* IdpStore
        const config = yield* seed()
        const endpoints = {
          issuer: "https://idp.example.com/v2",
          authorization_endpoint: "https://idp.example.com/v2/authorize",
          token_endpoint: "https://idp.example.com/v2/token",
          userinfo_endpoint: null,
          jwks_uri: "https://idp.example.com/v2/jwks"
        }
        expect(yield* store.storeDiscovery(config.id, config.discovery_url, endpoints, minutes(30))).toBe(true)
        expect(yield* store.getByApp(config.partner_app_id)).toEqual(
          Option.some(new IdpConfig({ ...config, ...endpoints, discovery_last_fetched_at: minutes(30) }))
        )
        expect(yield* store.storeDiscovery(config.id, "https://changed.example.com/x", { ...endpoints, issuer: "x" }, minutes(40)))
          .toBe(false)
        expect(yield* store.storeDiscovery(IdpConfigId.make(uuid()), config.discovery_url, endpoints, minutes(40))).toBe(false)
        expect(Option.map(yield* store.getByApp(config.partner_app_id), (c) => c.discovery_last_fetched_at)).toEqual(
          Option.some(minutes(30))
        )
      }))

    it.effect("page answers every configuration once, by id, after the one given", () =>
      Effect.gen(function*() {
        const store = yield* IdpStore
        const ours = [yield* seed(), yield* seed(), yield* seed()].map((config) => config.id)
        const seen: Array<string> = []
        let after: IdpConfigId | undefined = undefined
        for (;;) {
          const page: ReadonlyArray<IdpConfig> = yield* store.page(after, 2)
          seen.push(...page.map((config) => config.id))
          if (page.length < 2) break
          after = page[page.length - 1]!.id
        }
        expect(seen).toEqual([...seen].sort())
        expect(new Set(seen).size).toBe(seen.length)
        for (const id of ours) expect(seen).toContain(id)
        const sorted = [...ours].sort()
        expect((yield* store.page(IdpConfigId.make(sorted[0]!), 1000)).map((config) => config.id)).not.toContain(sorted[0])
      }))

    it.effect("replaceSealedSecret replaces the sealed secret only while it is the one expected, nothing else", () =>
      Effect.gen(function*() {
        const store = yield* IdpStore
        const config = yield* seed()
        expect(yield* store.replaceSealedSecret(config.id, "v1.other.x.y.z", "v1.k3.new.new.new")).toBe(false)
        expect(yield* store.replaceSealedSecret(config.id, config.sealed_client_secret, "v1.k3.new.new.new")).toBe(true)
        expect(yield* store.getByApp(config.partner_app_id)).toEqual(
          Option.some(new IdpConfig({ ...config, sealed_client_secret: "v1.k3.new.new.new" }))
        )
        expect(yield* store.replaceSealedSecret(IdpConfigId.make(uuid()), "v1.k3.new.new.new", "x")).toBe(false)
      }))

    it.effect("getByAppForUpdate holds the configuration: a second unit of work reading it so waits and reads what the first committed", () =>
      Effect.gen(function*() {
        const store = yield* IdpStore
        const { withTransaction } = yield* Transactor
        const config = yield* seed()
        expect(yield* store.getByAppForUpdate(config.partner_app_id)).toEqual(Option.some(config))
        expect(yield* store.getByAppForUpdate(yield* seedApp)).toEqual(Option.none())

        const held = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const first = yield* Effect.fork(withTransaction(Effect.gen(function*() {
          const read = yield* store.getByAppForUpdate(config.partner_app_id)
          yield* Deferred.succeed(held, undefined)
          yield* Deferred.await(release)
          yield* store.update(new IdpConfig({ ...Option.getOrThrow(read), name: "First" }))
        })))
        yield* Deferred.await(held)
        const second = yield* Effect.fork(withTransaction(
          Effect.map(store.getByAppForUpdate(config.partner_app_id), Option.map((read) => read.name))
        ))
        // The second is now waiting (for the row, or for the store's one unit of work at a time).
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 150)))
        expect(second.unsafePoll()).toBeNull()
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(first)
        expect(yield* Fiber.join(second)).toEqual(Option.some("First"))
      }))

    it.effect("writes join the unit of work: a rolled-back insert, update and delete leave nothing behind", () =>
      Effect.gen(function*() {
        const store = yield* IdpStore
        const config = yield* seed()
        const appId = yield* seedApp
        yield* rolledBack(Effect.gen(function*() {
          yield* store.insert(idpConfig(appId))
          yield* store.update(new IdpConfig({ ...config, name: "Rolled back" }))
          yield* store.deleteByApp(config.partner_app_id)
        }))
        expect(yield* store.getByApp(appId)).toEqual(Option.none())
        expect(yield* store.getByApp(config.partner_app_id)).toEqual(Option.some(config))
      }))
  })
}
