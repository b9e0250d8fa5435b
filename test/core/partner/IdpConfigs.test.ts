/**
 * IdP configurations (partner/idp/IdpConfigs.ts) on the in-memory store, the discovery documents served by an
 * Outbound of the test's own (a map of URL to answer), the secret sealed by the real NodeSecretVault: each row of the
 * document's IdP error table, the defaults, partial updates, deletion, and the background refresh on the TestClock.
 */
import {
  ClaimMappingsInput,
  consumerIdpOf,
  Convene,
  CreateIdpConfig,
  CreatePartnerApp,
  type DomainVerification,
  DomainVerificationStore,
  EmailDomain,
  IdpConfigs,
  IdpStore,
  Outbound,
  OutboundFailed,
  type OutboundResponse,
  OutboundRefused,
  type PartnerApp,
  PartnerApps,
  PartnerStore,
  SecretVault,
  type StorePorts,
  UpdateIdpConfig
} from "@convene/core"
import * as StoreMemory from "@convene/store-memory"
import { NodeSecretBox, NodeSecretVault } from "@convene/node"
import { describe, expect, it, layer } from "@effect/vitest"
import { DateTime, Effect, Either, Layer, Logger, Option, Redacted, Ref, Schema, TestClock } from "effect"
import { domainVerification } from "../../support/verifications.js"
import { coreOver } from "../fixtures.js"

type Answer = OutboundResponse | OutboundFailed

/** What the test's identity providers answer, by URL (nothing: a connection failure). */
const answers = Effect.runSync(Ref.make<ReadonlyMap<string, Answer>>(new Map()))

const TestOutbound = Layer.succeed(
  Outbound,
  Outbound.of({
    check: (url) =>
      new URL(url).hostname === "internal.example"
        ? Effect.fail(new OutboundRefused({ message: "internal.example resolves to an address this server does not call" }))
        : Effect.void,
    post: () => Effect.die(new Error("IdP configurations only GET")),
    get: ({ url }) =>
      Effect.flatMap(Ref.get(answers), (served) => {
        const answer = served.get(url)
        if (answer === undefined) return Effect.fail(new OutboundFailed({ reason: "connection", message: `${new URL(url).host} did not answer` }))
        return answer instanceof OutboundFailed ? Effect.fail(answer) : Effect.succeed(answer)
      })
  })
)

const key = Redacted.make(new Uint8Array(32).fill(7))
const vaultKeys = Either.getOrThrow(NodeSecretVault.parseKeys(Buffer.alloc(32, 9).toString("base64")))

/** The IdP and partner rooms over `store` (the core, node:crypto), with the test's Outbound and this vault. */
const liveOn = (store: Layer.Layer<StorePorts>, vault: Layer.Layer<SecretVault>) =>
  Layer.mergeAll(Convene.idpLayer, Convene.partnerLayer).pipe(
    Layer.provideMerge(Layer.mergeAll(coreOver(store), TestOutbound, NodeSecretBox.layer(key), vault))
  )

const live = (vault: Layer.Layer<SecretVault>) => liveOn(StoreMemory.layer, vault)

/** The discovery URL and document of an identity provider at `https://<host>/<path>`. */
const provider = (host: string, overrides: Record<string, unknown> = {}) => {
  const issuer = `https://${host}/oauth2/default`
  const discovery_url = `${issuer}/.well-known/openid-configuration`
  const document = {
    issuer,
    authorization_endpoint: `${issuer}/v1/authorize`,
    token_endpoint: `${issuer}/v1/token`,
    userinfo_endpoint: `${issuer}/v1/userinfo`,
    jwks_uri: `${issuer}/v1/keys`,
    response_types_supported: ["code", "id_token"],
    ...overrides
  }
  return { issuer, discovery_url, document }
}

const serve = (url: string, answer: Answer | Record<string, unknown> | string, status = 200) =>
  Ref.update(answers, (served) =>
    new Map(served).set(
      url,
      answer instanceof OutboundFailed || (typeof answer === "object" && "latencyMs" in answer)
        ? answer as Answer
        : { status, body: typeof answer === "string" ? answer : JSON.stringify(answer), latencyMs: 1, contentType: "application/json" }
    ))

/** A new partner app (its record, with its API key and client secret in the clear). */
const newApp = Effect.gen(function*() {
  const created = yield* (yield* PartnerApps).create(CreatePartnerApp.make({ name: `Acme ${crypto.randomUUID().slice(0, 8)}` }))
  const app = Option.getOrThrow(yield* (yield* PartnerStore).get(created.id))
  return { app, apiKey: created.api_key, clientSecret: created.client_secret }
})

/** A domain no other test uses. */
const freshDomain = () => EmailDomain.make(`acme-${crypto.randomUUID().slice(0, 8)}.example`)

/** Stores the app's verification of `domain` in `status`, as the domain verification room would. */
const verification = (app: PartnerApp, domain: EmailDomain, status: DomainVerification["status"] = "verified") =>
  Effect.gen(function*() {
    yield* (yield* DomainVerificationStore).put(domainVerification(app.id, domain, status, yield* DateTime.now))
  })

/** An app with a verified domain and a provider serving its document: what a valid create needs. */
const ready = Effect.gen(function*() {
  const { apiKey, app, clientSecret } = yield* newApp
  const domain = freshDomain()
  yield* verification(app, domain)
  const idp = provider(`idp-${crypto.randomUUID().slice(0, 8)}.example`)
  yield* serve(idp.discovery_url, idp.document)
  const input = (fields: Partial<CreateIdpConfig> = {}) =>
    CreateIdpConfig.make({
      name: "Acme Okta",
      discovery_url: idp.discovery_url,
      idp_client_id: "0oa1b2c3d4",
      idp_client_secret: "idp-secret-value-123",
      mode: "strict",
      allowed_email_domains: [domain],
      ...fields
    })
  return { app, apiKey, clientSecret, domain, idp, input }
})

const create = (app: PartnerApp, input: CreateIdpConfig) => Effect.flatMap(IdpConfigs, (configs) => configs.create(app, input))
const update = (app: PartnerApp, fields: ConstructorParameters<typeof UpdateIdpConfig>[0]) =>
  Effect.flatMap(IdpConfigs, (configs) => configs.update(app, UpdateIdpConfig.make(fields)))

/** The code the operation is refused with. */
const codeOf = <A, R>(effect: Effect.Effect<A, { readonly code: string; readonly message: string }, R>) =>
  Effect.map(Effect.flip(effect), (refused) => refused.code)

describe("IdpConfigs", () => {
  layer(live(NodeSecretVault.layer(vaultKeys)))((it) => {
    it.effect("create answers the configuration with the defaults and the cached endpoints; the secret is stored sealed and shown nowhere", () =>
      Effect.gen(function*() {
        yield* TestClock.adjust("1 hour")
        const { app, domain, idp, input } = yield* ready
        const created = yield* create(app, input())
        expect(created).toMatchObject({
          partner_app_id: app.id,
          name: "Acme Okta",
          type: "oidc",
          discovery_url: idp.discovery_url,
          idp_client_id: "0oa1b2c3d4",
          scopes: ["openid", "email", "profile"],
          claim_mappings: { email: "email", name: "name" },
          mode: "strict",
          allowed_email_domains: [domain],
          is_active: true,
          issuer: idp.issuer,
          authorization_endpoint: idp.document.authorization_endpoint,
          token_endpoint: idp.document.token_endpoint,
          userinfo_endpoint: idp.document.userinfo_endpoint,
          jwks_uri: idp.document.jwks_uri
        })
        expect(DateTime.formatIso(created.discovery_last_fetched_at)).toBe("1970-01-01T01:00:00.000Z")
        expect(JSON.stringify(created)).not.toContain("idp-secret-value-123")
        expect(Object.keys(created)).not.toContain("idp_client_secret")
        const stored = Option.getOrThrow(yield* (yield* IdpStore).getByApp(app.id))
        expect(stored.sealed_client_secret).not.toContain("idp-secret-value-123")
        expect(yield* (yield* SecretVault).open(stored.sealed_client_secret)).toBe("idp-secret-value-123")
        expect(yield* (yield* IdpConfigs).get(app)).toEqual(created)
      }))

    it.effect("scopes and claim mappings are taken as given (each scope once); partner_managed takes no domains", () =>
      Effect.gen(function*() {
        const { app, input } = yield* ready
        const created = yield* create(app, input({
          mode: "partner_managed",
          allowed_email_domains: [],
          scopes: ["openid", "email", "groups", "email"],
          claim_mappings: new ClaimMappingsInput({ email: "upn", given_name: "first", family_name: "last" })
        }))
        expect(created).toMatchObject({
          mode: "partner_managed",
          allowed_email_domains: [],
          scopes: ["openid", "email", "groups"],
          claim_mappings: { email: "upn", given_name: "first", family_name: "last" }
        })
      }))

    it.effect("a discovery URL that is not HTTPS, has a query or lacks the suffix, or scopes without openid, are invalid_request_body naming the field, first", () =>
      Effect.gen(function*() {
        const { app, input } = yield* ready
        yield* create(app, input())
        for (const url of [
          "http://idp.example/.well-known/openid-configuration",
          "https://idp.example/",
          "https://idp.example/.well-known/openid-configuration?x=1",
          "https://user:pw@idp.example/.well-known/openid-configuration",
          "not a url"
        ]) {
          // Before idp_config_exists: the body is wrong whatever the state.
          const refused = yield* Effect.flip(create(app, input({ discovery_url: url })))
          expect(refused, url).toMatchObject({ code: "invalid_request_body", message: expect.stringMatching(/^discovery_url: /) })
          expect((yield* Effect.flip(update(app, { discovery_url: url }))).code).toBe("invalid_request_body")
        }
        expect(yield* Effect.flip(create(app, input({ scopes: ["email", "profile"] }))))
          .toMatchObject({ code: "invalid_request_body", message: "scopes: must include openid" })
        expect((yield* Effect.flip(update(app, { scopes: ["email"] }))).message).toBe("scopes: must include openid")
      }))

    it.effect("a second create is idp_config_exists, and the first stays", () =>
      Effect.gen(function*() {
        const { app, input } = yield* ready
        const first = yield* create(app, input())
        expect(yield* codeOf(create(app, input({ name: "Second" })))).toBe("idp_config_exists")
        expect(yield* (yield* IdpConfigs).get(app)).toEqual(first)
      }))

    it.effect("strict mode without domains is strict_mode_requires_domains", () =>
      Effect.gen(function*() {
        const { app, input } = yield* ready
        expect(yield* codeOf(create(app, input({ allowed_email_domains: [] })))).toBe("strict_mode_requires_domains")
        expect(yield* codeOf(create(app, input({ allowed_email_domains: undefined })))).toBe("strict_mode_requires_domains")
      }))

    it.effect("the partner app's own client id, client secret or API key as the IdP's is invalid_idp_credentials", () =>
      Effect.gen(function*() {
        const { apiKey, app, clientSecret, input } = yield* ready
        expect(yield* codeOf(create(app, input({ idp_client_id: app.client_id })))).toBe("invalid_idp_credentials")
        expect(yield* codeOf(create(app, input({ idp_client_secret: clientSecret })))).toBe("invalid_idp_credentials")
        expect(yield* codeOf(create(app, input({ idp_client_secret: apiKey })))).toBe("invalid_idp_credentials")
        yield* create(app, input())
        expect(yield* codeOf(update(app, { idp_client_secret: apiKey }))).toBe("invalid_idp_credentials")
        expect(yield* codeOf(update(app, { idp_client_id: app.client_id }))).toBe("invalid_idp_credentials")
      }))

    it.effect("a consumer provider's discovery URL is invalid_idp, before anything is fetched", () =>
      Effect.gen(function*() {
        const { app, input } = yield* ready
        for (const url of [
          "https://login.microsoftonline.com/consumers/v2.0/.well-known/openid-configuration",
          "https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0/.well-known/openid-configuration",
          "https://appleid.apple.com/.well-known/openid-configuration",
          "https://api.login.yahoo.com/.well-known/openid-configuration"
        ]) {
          const refused = yield* Effect.flip(create(app, input({ discovery_url: url })))
          expect(refused.code, url).toBe("invalid_idp")
          expect(refused.message).toContain("public consumer identity provider")
        }
      }))

    it.effect("Google (personal and Workspace accounts alike) is usable in strict mode only: created there, refused otherwise and when a PUT leaves strict", () =>
      Effect.gen(function*() {
        const { app, input } = yield* ready
        const google = "https://accounts.google.com/.well-known/openid-configuration"
        const refused = yield* Effect.flip(create(app, input({ discovery_url: google, mode: "partner_managed", allowed_email_domains: [] })))
        expect(refused.code).toBe("invalid_idp")
        expect(refused.message).toContain("strict mode only")
        yield* serve(google, {
          issuer: "https://accounts.google.com",
          authorization_endpoint: "https://accounts.google.com/o/oauth2/v2/auth",
          token_endpoint: "https://oauth2.googleapis.com/token",
          userinfo_endpoint: "https://openidconnect.googleapis.com/v1/userinfo",
          jwks_uri: "https://www.googleapis.com/oauth2/v3/certs",
          response_types_supported: ["code", "id_token"],
          subject_types_supported: ["public"],
          id_token_signing_alg_values_supported: ["RS256"]
        })
        const created = yield* create(app, input({ discovery_url: google }))
        expect(created).toMatchObject({ mode: "strict", issuer: "https://accounts.google.com" })
        expect(yield* codeOf(update(app, { mode: "partner_managed" }))).toBe("invalid_idp")
        expect((yield* update(app, { name: "Acme Google" })).mode).toBe("strict")
      }))

    it("consumerIdpOf knows the consumer providers by issuer and discovery URL, and not organisations' own", () => {
      expect(consumerIdpOf("https://accounts.google.com")).toBe("Google")
      expect(consumerIdpOf("https://ACCOUNTS.google.com/")).toBe("Google")
      expect(consumerIdpOf("https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0")).toBe("Microsoft personal accounts")
      expect(consumerIdpOf("https://login.microsoftonline.com/{tenantid}/v2.0")).toBe("Microsoft personal accounts")
      expect(consumerIdpOf("https://www.facebook.com")).toBe("Facebook")
      expect(consumerIdpOf("https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/v2.0")).toBeUndefined()
      expect(consumerIdpOf("https://acme.okta.com/oauth2/default")).toBeUndefined()
      expect(consumerIdpOf("https://accounts.google.com.acme.example")).toBeUndefined()
      expect(consumerIdpOf("https://appleid.apple.community")).toBeUndefined()
    })

    it.effect("a discovery host the outbound rules refuse is invalid_request_body naming discovery_url", () =>
      Effect.gen(function*() {
        const { app, input } = yield* ready
        const refused = yield* Effect.flip(create(app, input({ discovery_url: "https://internal.example/.well-known/openid-configuration" })))
        expect(refused.code).toBe("invalid_request_body")
        expect(refused.message).toMatch(/^discovery_url: /)
        // Refused when called (the host's addresses changed since the check): the same answer.
        const late = provider("late.example")
        yield* serve(late.discovery_url, new OutboundFailed({ reason: "refused", message: "late.example resolves to a private address" }))
        const lateRefusal = yield* Effect.flip(create(app, input({ discovery_url: late.discovery_url })))
        expect(lateRefusal).toMatchObject({ code: "invalid_request_body", message: "discovery_url: late.example resolves to a private address" })
      }))

    it.effect("a generic e-mail domain is domain_is_generic, in either mode", () =>
      Effect.gen(function*() {
        const { app, domain, input } = yield* ready
        for (const generic of ["gmail.com", "outlook.com", "yahoo.com"]) {
          expect(yield* codeOf(create(app, input({ allowed_email_domains: [domain, EmailDomain.make(generic)] })))).toBe("domain_is_generic")
        }
        expect(yield* codeOf(create(app, input({ mode: "partner_managed", allowed_email_domains: [EmailDomain.make("gmail.com")] }))))
          .toBe("domain_is_generic")
      }))

    it.effect("a domain another app holds verified, or lists in its configuration, is domain_already_claimed", () =>
      Effect.gen(function*() {
        const { app, input } = yield* ready
        const other = yield* ready
        // Verified by the other app.
        const held = freshDomain()
        yield* verification(other.app, held)
        expect(yield* codeOf(create(app, input({ allowed_email_domains: [held] })))).toBe("domain_already_claimed")
        // Listed in the other app's configuration (its verification since lost).
        yield* create(other.app, other.input())
        yield* verification(other.app, other.domain, "revoked")
        yield* verification(app, other.domain)
        expect(yield* codeOf(create(app, input({ allowed_email_domains: [other.domain] })))).toBe("domain_already_claimed")
        expect(yield* codeOf(create(app, input({ mode: "partner_managed", allowed_email_domains: [other.domain] }))))
          .toBe("domain_already_claimed")
      }))

    it.effect("a domain this app has not verified (none, pending, expired, revoked) is domain_not_verified, in either mode", () =>
      Effect.gen(function*() {
        const { app, input } = yield* ready
        expect(yield* codeOf(create(app, input({ allowed_email_domains: [freshDomain()] })))).toBe("domain_not_verified")
        for (const status of ["pending", "expired", "revoked"] as const) {
          const domain = freshDomain()
          yield* verification(app, domain, status)
          expect(yield* codeOf(create(app, input({ allowed_email_domains: [domain] })))).toBe("domain_not_verified")
        }
        expect(yield* codeOf(create(app, input({ mode: "partner_managed", allowed_email_domains: [freshDomain()] }))))
          .toBe("domain_not_verified")
      }))

    it.effect("a discovery document that cannot be fetched or is not valid OIDC metadata for its URL is discovery_fetch_failed", () =>
      Effect.gen(function*() {
        const { app, input } = yield* ready
        const cases: ReadonlyArray<readonly [string, (url: string, idp: ReturnType<typeof provider>) => Effect.Effect<void>]> = [
          ["no answer", () => Effect.void],
          ["time limit", (url) => serve(url, new OutboundFailed({ reason: "timeout", message: "no answer within 10 s" }))],
          ["too large", (url) => serve(url, new OutboundFailed({ reason: "too_large", message: "the answer is over 64 KiB" }))],
          ["404", (url) => serve(url, { error: "nope" }, 404)],
          ["302", (url, idp) => serve(url, idp.document, 302)],
          ["not JSON", (url) => serve(url, "<html>hello</html>")],
          ["an array", (url) => serve(url, "[1,2]")],
          ["no jwks_uri", (url, idp) => serve(url, { ...idp.document, jwks_uri: undefined })],
          ["an http endpoint", (url, idp) => serve(url, { ...idp.document, token_endpoint: "http://idp.example/token" })],
          ["another issuer", (url, idp) => serve(url, { ...idp.document, issuer: `${idp.issuer}/other` })],
          ["no code flow", (url, idp) => serve(url, { ...idp.document, response_types_supported: ["id_token"] })]
        ]
        for (const [name, setup] of cases) {
          const idp = provider(`broken-${crypto.randomUUID().slice(0, 8)}.example`)
          yield* setup(idp.discovery_url, idp)
          const refused = yield* Effect.flip(create(app, input({ discovery_url: idp.discovery_url })))
          expect(refused.code, name).toBe("discovery_fetch_failed")
        }
        expect(Option.isNone(yield* (yield* IdpStore).getByApp(app.id))).toBe(true)
      }))

    it.effect("without a configuration, get, update and delete are idp_config_not_found; delete is for good", () =>
      Effect.gen(function*() {
        const { app, input } = yield* ready
        const configs = yield* IdpConfigs
        expect(yield* codeOf(configs.get(app))).toBe("idp_config_not_found")
        expect(yield* codeOf(update(app, { name: "x" }))).toBe("idp_config_not_found")
        expect(yield* codeOf(configs.remove(app))).toBe("idp_config_not_found")
        const created = yield* create(app, input())
        yield* configs.remove(app)
        expect(yield* codeOf(configs.get(app))).toBe("idp_config_not_found")
        expect(yield* codeOf(configs.remove(app))).toBe("idp_config_not_found")
        const again = yield* create(app, input())
        expect(again.id).not.toBe(created.id)
      }))

    it.effect("update changes only what it names, toggles is_active, and a discovery_url (even the same) fetches the document again", () =>
      Effect.gen(function*() {
        const { app, idp, input } = yield* ready
        const created = yield* create(app, input())
        yield* TestClock.adjust("2 hours")
        const renamed = yield* update(app, { name: "Renamed" })
        expect(renamed).toEqual({ ...created, name: "Renamed", updated_at: renamed.updated_at })
        expect(DateTime.greaterThan(renamed.updated_at, created.updated_at)).toBe(true)
        const off = yield* update(app, { is_active: false })
        expect(off.is_active).toBe(false)
        expect((yield* update(app, { is_active: true })).is_active).toBe(true)
        // The same URL, the document changed at the provider: fetched again.
        yield* serve(idp.discovery_url, { ...idp.document, jwks_uri: `${idp.issuer}/v2/keys`, userinfo_endpoint: undefined })
        const refreshed = yield* update(app, { discovery_url: idp.discovery_url })
        expect(refreshed).toMatchObject({ jwks_uri: `${idp.issuer}/v2/keys`, userinfo_endpoint: null })
        expect(DateTime.greaterThan(refreshed.discovery_last_fetched_at, created.discovery_last_fetched_at)).toBe(true)
        // A new secret is sealed in place of the old one.
        yield* update(app, { idp_client_secret: "the-new-secret" })
        const stored = Option.getOrThrow(yield* (yield* IdpStore).getByApp(app.id))
        expect(yield* (yield* SecretVault).open(stored.sealed_client_secret)).toBe("the-new-secret")
        // A failed update changes nothing.
        const before = yield* (yield* IdpConfigs).get(app)
        expect(yield* codeOf(update(app, { name: "Never", discovery_url: provider("gone.example").discovery_url }))).toBe("discovery_fetch_failed")
        expect(yield* (yield* IdpConfigs).get(app)).toEqual(before)
      }))

    it.effect("update checks the domains when mode or the list changes or the configuration is switched on, not otherwise", () =>
      Effect.gen(function*() {
        const { app, domain, input } = yield* ready
        yield* create(app, input({ mode: "partner_managed", allowed_email_domains: [] }))
        expect(yield* codeOf(update(app, { mode: "strict" }))).toBe("strict_mode_requires_domains")
        expect(yield* codeOf(update(app, { allowed_email_domains: [freshDomain()] }))).toBe("domain_not_verified")
        expect(yield* codeOf(update(app, { allowed_email_domains: [EmailDomain.make("gmail.com")] }))).toBe("domain_is_generic")
        expect(yield* update(app, { mode: "strict", allowed_email_domains: [domain] })).toMatchObject({ mode: "strict" })
        // The verification lost meanwhile: switching off and renaming still work; switching on again does not.
        yield* verification(app, domain, "revoked")
        expect(yield* update(app, { is_active: false, name: "Off" })).toMatchObject({ is_active: false, name: "Off" })
        expect(yield* codeOf(update(app, { is_active: true }))).toBe("domain_not_verified")
      }))

    it.effect("refreshStale fetches the active configurations older than a day again; a failure keeps the cached endpoints and is logged without the secret", () =>
      Effect.gen(function*() {
        const fresh = yield* ready
        const failing = yield* ready
        const inactive = yield* ready
        yield* create(fresh.app, fresh.input())
        yield* create(failing.app, failing.input())
        yield* create(inactive.app, inactive.input())
        yield* update(inactive.app, { is_active: false })
        const configs = yield* IdpConfigs
        const fetchedAt = (app: PartnerApp) => Effect.map(configs.get(app), (config) => config.discovery_last_fetched_at)
        const created = yield* fetchedAt(fresh.app)
        // Not a day old yet: not fetched again.
        yield* TestClock.adjust("23 hours")
        yield* serve(fresh.idp.discovery_url, { ...fresh.idp.document, token_endpoint: `${fresh.idp.issuer}/v2/token` })
        yield* configs.refreshStale(1000)
        expect(yield* fetchedAt(fresh.app)).toEqual(created)
        expect((yield* configs.get(fresh.app)).token_endpoint).toBe(fresh.idp.document.token_endpoint)
        yield* TestClock.adjust("2 hours")
        yield* serve(failing.idp.discovery_url, { error: "down" }, 503)
        const logs: Array<string> = []
        const logger = Logger.make(({ annotations, message }) => {
          logs.push(JSON.stringify({ message, annotations: Object.fromEntries(annotations) }))
        })
        const outcome = yield* configs.refreshStale(1000).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
        expect(outcome.refreshed).toBeGreaterThanOrEqual(1)
        expect(outcome.failed).toBeGreaterThanOrEqual(1)
        const now = yield* DateTime.now
        expect(yield* configs.get(fresh.app)).toMatchObject({ token_endpoint: `${fresh.idp.issuer}/v2/token`, discovery_last_fetched_at: now })
        const kept = yield* configs.get(failing.app)
        expect(kept.token_endpoint).toBe(failing.idp.document.token_endpoint)
        expect(DateTime.lessThan(kept.discovery_last_fetched_at, now)).toBe(true)
        expect(DateTime.lessThan((yield* configs.get(inactive.app)).discovery_last_fetched_at, now)).toBe(true)
        const warning = logs.find((line) => line.includes(kept.id))
        expect(warning).toContain("discovery_fetch_failed")
        expect(warning).toContain("HTTP 503")
        expect(logs.join("\n")).not.toContain("idp-secret-value-123")
      }))
  })

  // Rotation: configurations made under the old key, then the server restarted with a new key first, on one store.
  const oldKey = Buffer.alloc(32, 1).toString("base64")
  const newKey = Buffer.alloc(32, 2).toString("base64")
  const vaultOf = (text: string) => NodeSecretVault.layer(Either.getOrThrow(NodeSecretVault.parseKeys(text)))
  it.scoped("resealStale seals every secret of an older key again under the first; the old key may then go", () =>
    Effect.gen(function*() {
      const store = Layer.succeedContext(yield* Layer.build(StoreMemory.layer))
      const made = yield* Effect.gen(function*() {
        const first = yield* ready
        const second = yield* ready
        yield* create(first.app, first.input())
        yield* create(second.app, second.input({ idp_client_secret: "second-secret" }))
        return [first.app, second.app] as const
      }).pipe(Effect.provide(liveOn(store, vaultOf(`old:${oldKey}`))))
      const resealed = yield* Effect.gen(function*() {
        const configs = yield* IdpConfigs
        const count = yield* configs.resealStale(1)
        // Nothing left to do.
        expect(yield* configs.resealStale(1)).toBe(0)
        return count
      }).pipe(Effect.provide(liveOn(store, vaultOf(`new:${newKey},old:${oldKey}`))))
      expect(resealed).toBe(2)
      // Only the new key now: every secret opens.
      yield* Effect.gen(function*() {
        const idps = yield* IdpStore
        const stored = yield* Effect.forEach(made, (app) => Effect.map(idps.getByApp(app.id), Option.getOrThrow))
        expect(stored.map((config) => config.sealed_client_secret.split(".")[1])).toEqual(["new", "new"])
        const vault = yield* SecretVault
        expect(yield* Effect.forEach(stored, (config) => vault.open(config.sealed_client_secret))).toEqual(["idp-secret-value-123", "second-secret"])
      }).pipe(Effect.provide(liveOn(store, vaultOf(`new:${newKey}`))))
    }))

  layer(live(NodeSecretVault.unavailableLayer))("without CONVENE_SECRETS_KEY", (it) => {
    it.effect("create is secrets_key_not_configured, naming the variable; nothing is stored", () =>
      Effect.gen(function*() {
        const { app, input } = yield* ready
        const refused = yield* Effect.flip(create(app, input()))
        expect(refused.code).toBe("secrets_key_not_configured")
        expect(refused.message).toContain("CONVENE_SECRETS_KEY")
        expect(Option.isNone(yield* (yield* IdpStore).getByApp(app.id))).toBe(true)
      }))
  })

  it("the request schemas refuse unknown fields, empty or long values, a claim mapping without email or with another key", () => {
    const decode = Schema.decodeUnknownEither(CreateIdpConfig)
    const valid = {
      name: "Acme",
      discovery_url: "https://idp.example/.well-known/openid-configuration",
      idp_client_id: "client",
      idp_client_secret: "secret",
      mode: "strict"
    }
    expect(Either.isRight(decode(valid))).toBe(true)
    for (const invalid of [
      { ...valid, extra: 1 },
      { ...valid, name: "" },
      { ...valid, name: "x".repeat(256) },
      { ...valid, scopes: ["openid", "has space"] },
      { ...valid, claim_mappings: { name: "name" } },
      { ...valid, claim_mappings: { email: "email", phone: "phone" } },
      { ...valid, mode: "open" },
      { ...valid, allowed_email_domains: ["not a domain"] },
      { ...valid, idp_client_secret: "" },
      { ...valid, idp_client_id: "" }
    ]) expect(Either.isLeft(decode(invalid)), JSON.stringify(invalid)).toBe(true)
    expect(Either.isLeft(Schema.decodeUnknownEither(UpdateIdpConfig)({ is_active: "yes" }))).toBe(true)
    expect(Either.isLeft(Schema.decodeUnknownEither(UpdateIdpConfig)({ type: "oidc" }))).toBe(true)
  })
})
