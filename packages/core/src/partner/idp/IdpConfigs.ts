/**
 * A partner app's IdP configuration (partner document: "IdP configuration" and its "IdP operation errors"), as the
 * app administers it (/v1/partner/admin/idp): one per app, created, read, changed in part and deleted for good, and
 * its discovery document refreshed in the background.
 *
 * The rules, in the order they are checked (the first that fails answers):
 * - create: `invalid_request_body` for what the body's schema cannot say (a discovery URL that is not HTTPS, has a
 *   query or does not end with `/.well-known/openid-configuration`; scopes without `openid`), `idp_config_exists` (the app has one), `secrets_key_not_configured` (no CONVENE_SECRETS_KEY: the secret
 *   could not be stored encrypted), `strict_mode_requires_domains`, `invalid_idp_credentials` (the partner app's own
 *   client id as the IdP's, or its client secret or API key as the IdP's secret; hashes compared in constant time),
 *   `invalid_idp` (the discovery URL of a public consumer provider, ConsumerIdps.ts), `invalid_request_body` naming
 *   discovery_url when the outbound rules refuse its host, then each domain: `domain_is_generic`,
 *   `domain_already_claimed` (another app holds it verified or lists it in its configuration), `domain_not_verified`
 *   (this app has not verified it); then the discovery document (`discovery_fetch_failed`, Discovery.ts) and its
 *   issuer (`invalid_idp` again). `partner_managed` takes an empty list (the IdP decides who signs in); a list it
 *   gives obeys the same domain rules as strict mode's.
 * - update (PUT, partial): `idp_config_not_found`, then the same rules for what the request changes. The domain rules
 *   run again when `mode` or `allowed_email_domains` is given or `is_active` turns true (switching a configuration
 *   off, renaming it or changing its secret never fails because a domain lost its verification meanwhile). A
 *   `discovery_url` given, even the current one, fetches the document again (the on-demand refresh).
 * - The domains are decided again inside the write's unit of work, with every verification of each domain locked
 *   (DomainVerificationStore.lockDomain), so that a domain verified or claimed by another app meanwhile is seen.
 * - The IdP's client secret is sealed by the SecretVault before it is stored; it is in no answer and no log.
 */
import { Context, DateTime, Duration, Effect, Layer, Option } from "effect"
import { Crypto } from "../../ports/Crypto.js"
import { checkCallableUrl, Outbound } from "../../ports/Outbound.js"
import { SecretVault } from "../../ports/SecretVault.js"
import { Transactor } from "../../ports/Transactor.js"
import { fn } from "../../shared/Span.js"
import { now } from "../../shared/Time.js"
import { trusted } from "../../shared/Trusted.js"
import type { PartnerApp } from "../PartnerApp.js"
import { consumerProviderOf } from "./ConsumerIdps.js"
import { discover } from "./Discovery.js"
import { DomainVerificationStore } from "./DomainVerificationStore.js"
import type { EmailDomain } from "./EmailDomain.js"
import { isGenericDomain } from "./GenericDomains.js"
import {
  type ClaimMappings,
  type CreateIdpConfig,
  defaultClaimMappings,
  defaultScopes,
  discoveryUrlProblem,
  IdpConfig,
  IdpConfigId,
  IdpConfigRefused,
  IdpConfigView,
  type IdpMode,
  type UpdateIdpConfig
} from "./IdpConfig.js"
import { IdpStore } from "./IdpStore.js"

/** How old a cached discovery document may get before the background refresh fetches it again. */
export const discoveryMaxAge = Duration.hours(24)

const refused = (code: IdpConfigRefused["code"], message: string) => new IdpConfigRefused({ code, message })

const notFound = () => refused("idp_config_not_found", "the partner app has no IdP configuration")

/** Each value once, in the order first given. */
const distinct = <A>(values: ReadonlyArray<A>): ReadonlyArray<A> => [...new Set(values)]

/** The claim mappings without the optional members left out. */
const mappingsOf = (input: ClaimMappings): ClaimMappings => ({
  email: input.email,
  ...(input.name === undefined ? {} : { name: input.name }),
  ...(input.given_name === undefined ? {} : { given_name: input.given_name }),
  ...(input.family_name === undefined ? {} : { family_name: input.family_name })
})

const make = Effect.gen(function*() {
  const store = yield* IdpStore
  const verifications = yield* DomainVerificationStore
  const { withTransaction } = yield* Transactor
  const crypto = yield* Crypto
  const outbound = yield* Outbound
  const vault = yield* SecretVault

  const requireVault = vault.available
    ? Effect.void
    : Effect.fail(refused(
      "secrets_key_not_configured",
      "IdP configurations cannot be stored: the server has no secrets key to encrypt the IdP client secret with " +
        "(its operator must set CONVENE_SECRETS_KEY)"
    ))

  /** The partner app's own credentials given as the IdP's. */
  const checkCredentials = Effect.fnUntraced(function*(app: PartnerApp, clientId: string | undefined, secret: string | undefined) {
    if (clientId !== undefined && clientId === app.client_id) {
      return yield* refused("invalid_idp_credentials", "idp_client_id is the partner app's own client id, not a client id at the identity provider")
    }
    if (secret !== undefined) {
      const hash = yield* crypto.sha256(secret)
      // Both compared, whatever the first answers.
      const matches = [crypto.timingSafeEqual(hash, app.client_secret_hash), crypto.timingSafeEqual(hash, app.api_key_hash)]
      if (matches.some(Boolean)) {
        return yield* refused(
          "invalid_idp_credentials",
          "idp_client_secret is one of the partner app's own credentials, not the client secret at the identity provider"
        )
      }
    }
  })

  /**
   * Refuses a consumer provider (`url`: a discovery URL or an issuer); one that also serves organisations (Google:
   * Workspace) only outside strict mode, where the app's own verified domains and the hosted-domain claim hold.
   */
  const checkProvider = (url: string, mode: IdpMode, what: string) => {
    const consumer = consumerProviderOf(url)
    if (consumer === undefined || (consumer.hostedDomainClaim !== undefined && mode === "strict")) return Effect.void
    return Effect.fail(refused(
      "invalid_idp",
      consumer.hostedDomainClaim === undefined
        ? `${what} ${consumer.name}, a public consumer identity provider; configure your organisation's own identity provider`
        : `${what} ${consumer.name}, which serves personal accounts too: it is usable in strict mode only (your verified ` +
          `domains, and each account managed by your organisation's ${consumer.name} domain)`
    ))
  }

  /** A discovery URL of a consumer provider (for the mode), or one the outbound rules refuse. */
  const checkDiscoveryUrl = Effect.fnUntraced(function*(url: string, mode: IdpMode) {
    yield* checkProvider(url, mode, "the discovery URL is")
    yield* checkCallableUrl("discovery_url", url).pipe(
      Effect.provideService(Outbound, outbound),
      Effect.mapError((invalid) => refused("invalid_request_body", invalid.message))
    )
  })

  /** The discovery document's endpoints, its issuer no consumer provider's (for the mode). */
  const discovered = Effect.fnUntraced(function*(url: string, mode: IdpMode) {
    const endpoints = yield* discover(url).pipe(Effect.provideService(Outbound, outbound))
    yield* checkProvider(endpoints.issuer, mode, "the discovery document's issuer is")
    return endpoints
  })

  /** The domain rules of the mode for the app's list (see the module's comment). */
  const checkDomains = Effect.fnUntraced(function*(app: PartnerApp, mode: IdpMode, domains: ReadonlyArray<EmailDomain>) {
    if (mode === "strict" && domains.length === 0) {
      return yield* refused("strict_mode_requires_domains", "strict mode needs at least one domain in allowed_email_domains")
    }
    const generic = domains.find(isGenericDomain)
    if (generic !== undefined) {
      return yield* refused("domain_is_generic", `${generic} is a generic e-mail domain (anyone can have an address there); list your organisation's own domains`)
    }
    for (const domain of domains) {
      const owner = yield* verifications.verifiedOwner(domain)
      const claiming = yield* store.claimingApps(domain, app.id)
      if ((Option.isSome(owner) && owner.value !== app.id) || claiming.length > 0) {
        return yield* refused("domain_already_claimed", `${domain} is claimed by another partner app`)
      }
    }
    for (const domain of domains) {
      const verification = yield* verifications.get(app.id, domain)
      if (Option.isNone(verification) || verification.value.status !== "verified") {
        return yield* refused(
          "domain_not_verified",
          `${domain} is not verified by this partner app: verify it first (POST /v1/partner/admin/idp/domains/${domain}/verify, then .../check)`
        )
      }
    }
  })

  /** The domain rules again inside the unit of work, every verification of each domain locked (in one order). */
  const checkDomainsLocked = Effect.fnUntraced(function*(app: PartnerApp, mode: IdpMode, domains: ReadonlyArray<EmailDomain>) {
    for (const domain of [...domains].sort()) yield* verifications.lockDomain(domain)
    yield* checkDomains(app, mode, domains)
  })

  /** The rules of the fields the body's schema cannot say (invalid_request_body naming the field). */
  const checkFields = Effect.fnUntraced(function*(input: { readonly discovery_url?: string | undefined; readonly scopes?: ReadonlyArray<string> | undefined }) {
    const problem = input.discovery_url === undefined ? undefined : discoveryUrlProblem(input.discovery_url)
    if (problem !== undefined) return yield* refused("invalid_request_body", `discovery_url: ${problem}`)
    if (input.scopes !== undefined && !input.scopes.includes("openid")) {
      return yield* refused("invalid_request_body", "scopes: must include openid")
    }
  })

  const get = fn("IdpConfigs.get")(function*(app: PartnerApp) {
    const config = yield* store.getByApp(app.id)
    if (Option.isNone(config)) return yield* notFound()
    return IdpConfigView.of(config.value)
  })

  const create = fn("IdpConfigs.create")(function*(app: PartnerApp, input: CreateIdpConfig) {
    yield* checkFields(input)
    if (Option.isSome(yield* store.getByApp(app.id))) {
      return yield* refused("idp_config_exists", "the partner app has an IdP configuration already: change it with PUT, or delete it first")
    }
    yield* requireVault
    const domains = distinct(input.allowed_email_domains ?? [])
    if (input.mode === "strict" && domains.length === 0) yield* checkDomains(app, input.mode, domains)
    yield* checkCredentials(app, input.idp_client_id, input.idp_client_secret)
    yield* checkDiscoveryUrl(input.discovery_url, input.mode)
    yield* checkDomains(app, input.mode, domains)
    const endpoints = yield* discovered(input.discovery_url, input.mode)
    const sealed = yield* vault.seal(input.idp_client_secret).pipe(Effect.orDie)
    const at = yield* now
    const config = new IdpConfig({
      id: IdpConfigId.make(yield* crypto.randomUUID),
      partner_app_id: app.id,
      name: input.name,
      discovery_url: input.discovery_url,
      idp_client_id: input.idp_client_id,
      sealed_client_secret: sealed,
      scopes: distinct(input.scopes ?? defaultScopes),
      claim_mappings: mappingsOf(input.claim_mappings ?? defaultClaimMappings),
      mode: input.mode,
      allowed_email_domains: domains,
      is_active: true,
      ...endpoints,
      discovery_last_fetched_at: at,
      created_at: at,
      updated_at: at
    }, trusted)
    yield* withTransaction(Effect.gen(function*() {
      yield* checkDomainsLocked(app, config.mode, config.allowed_email_domains)
      if (!(yield* store.insert(config))) {
        return yield* refused("idp_config_exists", "the partner app has an IdP configuration already: change it with PUT, or delete it first")
      }
    }))
    return IdpConfigView.of(config)
  })

  const update = fn("IdpConfigs.update")(function*(app: PartnerApp, input: UpdateIdpConfig) {
    yield* checkFields(input)
    const found = yield* store.getByApp(app.id)
    if (Option.isNone(found)) return yield* notFound()
    const current = found.value
    if (input.idp_client_secret !== undefined) yield* requireVault
    const mode = input.mode ?? current.mode
    const domains = input.allowed_email_domains === undefined ? current.allowed_email_domains : distinct(input.allowed_email_domains)
    const domainsDecided = input.mode !== undefined || input.allowed_email_domains !== undefined ||
      (input.is_active === true && !current.is_active)
    if (domainsDecided && mode === "strict" && domains.length === 0) yield* checkDomains(app, mode, domains)
    yield* checkCredentials(app, input.idp_client_id, input.idp_client_secret)
    if (input.discovery_url !== undefined) yield* checkDiscoveryUrl(input.discovery_url, mode)
    if (domainsDecided) yield* checkDomains(app, mode, domains)
    const at = yield* now
    const endpoints: Partial<IdpConfig> = input.discovery_url === undefined
      ? {}
      : { ...(yield* discovered(input.discovery_url, mode)), discovery_url: input.discovery_url, discovery_last_fetched_at: at }
    const sealed = input.idp_client_secret === undefined
      ? undefined
      : yield* vault.seal(input.idp_client_secret).pipe(Effect.orDie)
    return yield* withTransaction(Effect.gen(function*() {
      // The configuration as it is now, held until the unit of work ends: another request may have changed or
      // deleted it meanwhile, and what this request leaves out is taken from what that one committed.
      const latest = yield* store.getByAppForUpdate(app.id)
      if (Option.isNone(latest) || latest.value.id !== current.id) return yield* notFound()
      const mode = input.mode ?? latest.value.mode
      const domains = input.allowed_email_domains === undefined
        ? latest.value.allowed_email_domains
        : distinct(input.allowed_email_domains)
      const domainsDecided = input.mode !== undefined || input.allowed_email_domains !== undefined ||
        (input.is_active === true && !latest.value.is_active)
      if (domainsDecided) yield* checkDomainsLocked(app, mode, domains)
      // A mode leaving strict on a provider usable only in strict mode (the configuration's issuer as it will be).
      yield* checkProvider(endpoints.issuer ?? latest.value.issuer, mode, "the identity provider is")
      const changed = new IdpConfig({
        ...latest.value,
        ...(input.name === undefined ? {} : { name: input.name }),
        ...(input.idp_client_id === undefined ? {} : { idp_client_id: input.idp_client_id }),
        ...(input.scopes === undefined ? {} : { scopes: distinct(input.scopes) }),
        ...(input.claim_mappings === undefined ? {} : { claim_mappings: mappingsOf(input.claim_mappings) }),
        ...(input.is_active === undefined ? {} : { is_active: input.is_active }),
        ...endpoints,
        mode,
        allowed_email_domains: domains,
        sealed_client_secret: sealed ?? latest.value.sealed_client_secret,
        updated_at: at
      }, trusted)
      yield* store.update(changed)
      return IdpConfigView.of(changed)
    }))
  })

  const remove = fn("IdpConfigs.remove")(function*(app: PartnerApp) {
    if (!(yield* store.deleteByApp(app.id))) return yield* notFound()
  })

  /**
   * The background refresh: fetches again the discovery documents of up to `limit` active configurations last
   * fetched more than `discoveryMaxAge` ago, the oldest first, and stores their endpoints (unless the configuration's
   * discovery URL changed meanwhile). A failure keeps the cached endpoints and is logged as a warning naming the
   * configuration and the problem (never a secret); the configuration is tried again at the next sweep. Answers how
   * many were refreshed and how many failed.
   */
  const refreshStale = fn("IdpConfigs.refreshStale")(function*(limit = 100) {
    const at = yield* now
    const due = yield* store.staleDiscovery(DateTime.subtractDuration(at, discoveryMaxAge), limit)
    let refreshed = 0
    let failed = 0
    for (const config of due) {
      const outcome = yield* Effect.either(discovered(config.discovery_url, config.mode))
      if (outcome._tag === "Right") {
        if (yield* store.storeDiscovery(config.id, config.discovery_url, outcome.right, at)) refreshed++
      } else {
        failed++
        yield* Effect.logWarning("IdP discovery refresh failed; the cached endpoints stay").pipe(
          Effect.annotateLogs({
            idp_config_id: config.id,
            partner_app_id: config.partner_app_id,
            code: outcome.left.code,
            reason: outcome.left.message
          })
        )
      }
    }
    return { refreshed, failed }
  })

  /**
   * Key rotation's second half: seals again, under the first key of CONVENE_SECRETS_KEY, every client secret sealed
   * under another (still listed) key, `batch` configurations read at a time; a secret given meanwhile wins. One that
   * does not open (its key no longer listed) is logged and left as it is. Once this has run, the old keys may be
   * removed from the variable. Answers how many were sealed again.
   */
  const resealStale = fn("IdpConfigs.resealStale")(function*(batch = 100) {
    if (!vault.available) return 0
    let resealed = 0
    let after: IdpConfigId | undefined = undefined
    for (;;) {
      const configs: ReadonlyArray<IdpConfig> = yield* store.page(after, batch)
      for (const config of configs) {
        if (!vault.isStale(config.sealed_client_secret)) continue
        const opened = yield* Effect.either(vault.open(config.sealed_client_secret))
        if (opened._tag === "Left") {
          yield* Effect.logWarning("an IdP client secret cannot be opened with the configured secrets keys").pipe(
            Effect.annotateLogs({ idp_config_id: config.id, partner_app_id: config.partner_app_id, reason: opened.left.message })
          )
          continue
        }
        const sealed = yield* vault.seal(opened.right).pipe(Effect.orDie)
        if (yield* store.replaceSealedSecret(config.id, config.sealed_client_secret, sealed)) resealed++
      }
      if (configs.length < batch) return resealed
      after = configs[configs.length - 1]!.id
    }
  })

  return { get, create, update, remove, refreshStale, resealStale } as const
})

export class IdpConfigs extends Context.Tag("@convene/core/IdpConfigs")<IdpConfigs, Effect.Effect.Success<typeof make>>() {
  static readonly layer: Layer.Layer<
    IdpConfigs,
    never,
    IdpStore | DomainVerificationStore | Transactor | Crypto | Outbound | SecretVault
  > = Layer.effect(IdpConfigs, make)
}
