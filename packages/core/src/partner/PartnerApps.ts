/**
 * Partner apps: the operator creates, changes and lists them and connects workspaces to them (the operator API),
 * and an app authenticates to the partner admin API with its API key and client id (`authenticateAdmin`), then
 * reads itself and its connected workspaces. The rules of each field are PartnerApp.ts's decisions.
 */
import { Context, DateTime, Effect, Encoding, Layer, Option, Redacted } from "effect"
import { SecretBox } from "../oauth/Signing.js"
import { Crypto } from "../ports/Crypto.js"
import { Outbound } from "../ports/Outbound.js"
import { Transactor } from "../ports/Transactor.js"
import { Conflict, NotFound, orNotFound, ValidationError } from "../shared/Errors.js"
import type { WorkspaceId } from "../shared/Ids.js"
import { clamp, type PageRequest, toList } from "../shared/Pagination.js"
import { fn } from "../shared/Span.js"
import { now } from "../shared/Time.js"
import { trusted } from "../shared/Trusted.js"
import { httpsUrlProblem } from "../shared/Url.js"
import * as RedirectUris from "../oauth/RedirectUris.js"
import { mintSigningSecret } from "../webhooks/Secrets.js"
import { WorkspaceStore } from "../workspaces/WorkspaceStore.js"
import {
  ConnectedWorkspace,
  type CreatePartnerApp,
  CreatedPartnerApp,
  PartnerApp,
  PartnerAppId,
  PartnerAppView,
  type PartnerAppSlug,
  RotatedWebhookSecret,
  slugFromName,
  slugWithSuffix,
  type UpdatePartnerApp
} from "./PartnerApp.js"
import { PartnerAppInactive, PartnerCredentialsRefused } from "./PartnerErrors.js"
import type { PartnerEventType } from "./PartnerEventType.js"
import { PartnerStore } from "./PartnerStore.js"
import { queueFirstInstalls } from "./toolkits/Toolkits.js"
import { ToolkitStore } from "./toolkits/ToolkitStore.js"

/** The documented look of the secrets: a prefix and 32 random bytes (256 bits) in base64url. */
export const partnerApiKeyPrefix = "svc_pak_v1_"
export const partnerClientSecretPrefix = "svc_pcs_v1_"
/** Partner client ids: `cvp_` and 16 random bytes in base64url (first-party clients are cvc_, registered cvr_). */
export const partnerClientIdPrefix = "cvp_"

/** Derived slugs tried before a create gives up with 409 (`name`, `name-2`, ... `name-100`). */
const slugAttempts = 100

/** A webhook filter as stored: each type once, in the order first given. */
const webhookEventsOf = (types: ReadonlyArray<PartnerEventType> | null) => types === null ? null : [...new Set(types)]

/** A client id longer than any the server makes is unknown without asking the store. */
const maxClientIdLength = 64

const make = Effect.gen(function*() {
  const store = yield* PartnerStore
  const toolkitStore = yield* ToolkitStore
  const workspaces = yield* WorkspaceStore
  const transactor = yield* Transactor
  const crypto = yield* Crypto
  const outbound = yield* Outbound
  const box = yield* SecretBox
  /** A new webhook secret (whsec_..., as a workspace endpoint's) and its sealed form. */
  const mintWebhookSecret = mintSigningSecret.pipe(Effect.provideService(Crypto, crypto), Effect.provideService(SecretBox, box))
  // What a key is compared with when the client id is unknown: a hash no key has, of the same length as every
  // stored hash, so an unknown client id costs the same work as a known one with a wrong key.
  const noApp = yield* crypto.sha256(Encoding.encodeHex(yield* crypto.randomBytes(32)))

  const randomToken = (prefix: string, size: number) =>
    Effect.map(crypto.randomBytes(size), (bytes) => prefix + Encoding.encodeBase64Url(bytes))

  const find = (id: PartnerAppId) => store.get(id).pipe(orNotFound("partner app", id))

  /** An absolute HTTPS URL without user information. */
  const checkHttps = (field: string, url: string): Effect.Effect<void, ValidationError> => {
    const problem = httpsUrlProblem(url)
    return problem === undefined ? Effect.void : Effect.fail(ValidationError.of(field, problem))
  }

  /** The webhook URL: HTTPS, and a host the outbound rules let this server call (as workspace webhooks). */
  const checkWebhookUrl = (url: string) =>
    Effect.gen(function*() {
      yield* checkHttps("webhook_url", url)
      yield* outbound.check(url).pipe(Effect.mapError((refused) => ValidationError.of("webhook_url", refused.message)))
    })

  /** The redirect URIs, each https or loopback, a URI listed twice kept once. */
  const checkRedirectUris = (uris: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      for (const [index, uri] of uris.entries()) {
        const found = RedirectUris.classify(uri)
        if ("problem" in found) return yield* Effect.fail(ValidationError.of(`redirect_uris[${index}]`, found.problem))
        if (found.kind !== "https" && found.kind !== "loopback") {
          return yield* Effect.fail(
            ValidationError.of(`redirect_uris[${index}]`, "must be an https URI or a loopback URI (http://127.0.0.1:<port>/...)")
          )
        }
      }
      return [...new Set(uris)]
    })

  /** The optional URL fields of a request, checked (undefined: left out; null: cleared). */
  const checkUrls = (input: {
    readonly webhook_url?: string | null | undefined
    readonly co_brand_logo_url?: string | null | undefined
  }) =>
    Effect.gen(function*() {
      if (typeof input.webhook_url === "string") yield* checkWebhookUrl(input.webhook_url)
      if (typeof input.co_brand_logo_url === "string") yield* checkHttps("co_brand_logo_url", input.co_brand_logo_url)
    })

  /** Inserts `app` under the first free slug of `candidates`; Conflict when they are all taken. */
  const insertWithSlug = (app: PartnerApp, candidates: ReadonlyArray<PartnerAppSlug>) =>
    Effect.gen(function*() {
      for (const slug of candidates) {
        const placed = new PartnerApp({ ...app, slug }, trusted)
        const inserted = yield* store.insert(placed).pipe(
          Effect.as(true),
          Effect.catchTag("DuplicateKey", (duplicate) =>
            // A client id is 128 random bits: a clash is a broken random source, not the caller's fault.
            duplicate.constraint.includes("client_id")
              ? Effect.die(new Error("a new partner client id clashed with a stored one"))
              : Effect.succeed(false))
        )
        if (inserted) return placed
      }
      return yield* Effect.fail(new Conflict({ message: `the slug ${candidates[0]} is taken by another partner app` }))
    })

  /**
   * Creates an app, active; its API key and client secret are answered this once and stored only as hashes, its
   * webhook secret answered this once and stored sealed.
   */
  const create = fn("PartnerApps.create")(function*(input: CreatePartnerApp) {
    yield* checkUrls(input)
    const redirectUris = yield* checkRedirectUris(input.redirect_uris ?? [])
    const apiKey = yield* randomToken(partnerApiKeyPrefix, 32)
    const clientSecret = yield* randomToken(partnerClientSecretPrefix, 32)
    const webhookSecret = yield* mintWebhookSecret
    const at = yield* now
    const base = input.slug ?? slugFromName(input.name)
    const app = new PartnerApp({
      id: PartnerAppId.make(yield* crypto.randomUUID),
      name: input.name,
      slug: base,
      status: "active",
      webhook_url: input.webhook_url ?? null,
      webhook_events: webhookEventsOf(input.webhook_events ?? null),
      co_brand_name: input.co_brand_name ?? null,
      co_brand_logo_url: input.co_brand_logo_url ?? null,
      client_id: yield* randomToken(partnerClientIdPrefix, 16),
      redirect_uris: redirectUris,
      created_at: at,
      updated_at: at,
      api_key_hash: yield* crypto.sha256(apiKey),
      client_secret_hash: yield* crypto.sha256(clientSecret),
      sealed_webhook_secret: webhookSecret.sealed
    }, trusted)
    // A slug the operator chose is theirs or nothing; a derived one takes the first free suffix.
    const candidates = input.slug !== undefined
      ? [base]
      : [base, ...Array.from({ length: slugAttempts - 1 }, (_, index) => slugWithSuffix(base, index + 2))]
    const created = yield* insertWithSlug(app, candidates)
    return CreatedPartnerApp.of(created, {
      api_key: apiKey,
      client_secret: clientSecret,
      webhook_secret: webhookSecret.secret
    })
  })

  /** Changes the app; what `input` leaves out is kept, null clears an optional field. */
  const update = fn("PartnerApps.update")(function*(id: PartnerAppId, input: UpdatePartnerApp) {
    const current = yield* find(id)
    yield* checkUrls(input)
    const redirectUris = input.redirect_uris === undefined ? current.redirect_uris : yield* checkRedirectUris(input.redirect_uris)
    const next = new PartnerApp({
      ...current,
      status: input.status ?? current.status,
      name: input.name ?? current.name,
      webhook_url: input.webhook_url === undefined ? current.webhook_url : input.webhook_url,
      webhook_events: input.webhook_events === undefined ? current.webhook_events : webhookEventsOf(input.webhook_events),
      co_brand_name: input.co_brand_name === undefined ? current.co_brand_name : input.co_brand_name,
      co_brand_logo_url: input.co_brand_logo_url === undefined ? current.co_brand_logo_url : input.co_brand_logo_url,
      redirect_uris: redirectUris,
      updated_at: yield* now
    }, trusted)
    yield* store.update(next)
    return PartnerAppView.of(next)
  })

  /**
   * Replaces the app's webhook secret with a new one (makes the first one of an app made before webhook secrets
   * existed), answered this once: it signs every delivery sent from now on, retries of earlier ones included.
   */
  const rotateWebhookSecret = fn("PartnerApps.rotateWebhookSecret")(function*(id: PartnerAppId) {
    yield* find(id)
    const webhookSecret = yield* mintWebhookSecret
    if (!(yield* store.setWebhookSecret(id, webhookSecret.sealed, yield* now))) {
      return yield* Effect.fail(NotFound.of("partner app", id))
    }
    return RotatedWebhookSecret.of(yield* find(id), webhookSecret.secret)
  })

  const get = fn("PartnerApps.get")(function*(id: PartnerAppId) {
    return PartnerAppView.of(yield* find(id))
  })

  /** A page of every app, newest first. */
  const list = fn("PartnerApps.list")(function*(request: PageRequest) {
    const page = clamp(request)
    const slice = yield* store.list(page)
    return toList({ items: slice.items.map(PartnerAppView.of), total: slice.total }, page)
  })

  /**
   * Connects the workspace to the app (NotFound for an unknown app or workspace). Connecting again changes nothing:
   * the answer keeps the first `connected_at`. The write shares the workspace against its deletion (as
   * Workspaces.within does), so a connection is never left behind by a deletion that runs meanwhile.
   */
  const connectWorkspace = fn("PartnerApps.connectWorkspace")(function*(id: PartnerAppId, workspaceId: WorkspaceId) {
    yield* find(id)
    return yield* transactor.withTransaction(Effect.gen(function*() {
      if (!(yield* workspaces.share(workspaceId))) return yield* Effect.fail(NotFound.of("workspace", workspaceId))
      const workspace = yield* workspaces.get(workspaceId).pipe(orNotFound("workspace", workspaceId))
      const at = yield* now
      const connectedAt = yield* store.connect({ appId: id, workspaceId, at })
      // A new connection gets the app's toolkits that install themselves on new workspaces.
      if (DateTime.Equivalence(connectedAt, at)) {
        yield* queueFirstInstalls(id, workspaceId, at).pipe(Effect.provideService(ToolkitStore, toolkitStore))
      }
      return new ConnectedWorkspace({
        id: workspace.id,
        name: workspace.name,
        plan: workspace.plan,
        connected_at: connectedAt
      }, trusted)
    }))
  })

  /** A page of the workspaces connected to the app, newest connection first. */
  const listWorkspaces = fn("PartnerApps.listWorkspaces")(function*(id: PartnerAppId, request: PageRequest) {
    const page = clamp(request)
    return toList(yield* store.listWorkspaces(id, page), page)
  })

  /**
   * The app whose API key and client id the admin API's headers carry (undefined: the header is absent; an empty
   * or white-space value counts as absent). The key is checked for presence first, then the client id; an unknown
   * client id and a wrong key are the same refusal, after the same work (the key's hash is compared in constant
   * time with the app's, or with a hash no key has). Only the app's own key learns that it is suspended.
   */
  const authenticateAdmin = fn("PartnerApps.authenticateAdmin")(function*(
    apiKey: Redacted.Redacted<string> | undefined,
    clientId: string | undefined
  ) {
    const key = apiKey === undefined ? "" : Redacted.value(apiKey).trim()
    if (key === "") return yield* Effect.fail(PartnerCredentialsRefused.missingApiKey())
    const id = clientId?.trim() ?? ""
    if (id === "") return yield* Effect.fail(PartnerCredentialsRefused.missingClientId())
    const hash = yield* crypto.sha256(key)
    const found = id.length > maxClientIdLength ? Option.none<PartnerApp>() : yield* store.getByClientId(id)
    const expected = Option.match(found, { onNone: () => noApp, onSome: (app) => app.api_key_hash })
    const matches = crypto.timingSafeEqual(expected, hash)
    if (Option.isNone(found) || !matches) return yield* Effect.fail(PartnerCredentialsRefused.invalid())
    if (found.value.status !== "active") return yield* Effect.fail(PartnerAppInactive.of())
    return found.value
  })

  return { create, update, rotateWebhookSecret, get, list, connectWorkspace, listWorkspaces, authenticateAdmin } as const
})

export class PartnerApps extends Context.Tag("@convene/core/PartnerApps")<PartnerApps, Effect.Effect.Success<typeof make>>() {
  static readonly layer: Layer.Layer<
    PartnerApps,
    never,
    PartnerStore | WorkspaceStore | Transactor | Crypto | Outbound | SecretBox | ToolkitStore
  > = Layer.effect(PartnerApps, make)
}
