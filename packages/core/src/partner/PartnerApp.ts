/**
 * The partner room's records: a partner app (an integrating company's application, created by the operator) as
 * stored and as the APIs show it, the operator's requests, and the workspaces connected to an app.
 *
 * Decisions where the documents are silent (decisions.md "Partner API, where the document is open" fixes the rest):
 * - `slug` is 1 to 63 characters of lower-case letters, digits and hyphens, starting and ending with a letter or a
 *   digit (a DNS label: it names the app in URLs such as /v1/partner/sso/info/{slug}). It is unique across the
 *   installation and cannot be changed. Given on create, a taken slug is 409 `conflict`; left out, it is derived
 *   from the name (accents dropped, lower-cased, every run of other characters one hyphen, cut to 63; `app` when
 *   nothing is left), and a taken one gets the first free suffix `-2`, `-3`, ...
 * - `webhook_url` is an absolute HTTPS URL without user information that the outbound rules let this server call
 *   (400 `validation_error` otherwise, as for workspace webhooks); `webhook_enabled` is whether one is set, and
 *   PATCH with `webhook_url: null` clears it. `co_brand_logo_url` is an absolute HTTPS URL too (shown to browsers,
 *   never called by the server); `co_brand_name` is 1 to 100 characters; null clears either.
 * - `redirect_uris` (for the partner OAuth server) lists at most 20 URIs, each an https URI or a loopback URI
 *   (`http://127.0.0.1:<port>/...`, `http://localhost:<port>/...`), without fragment or user information; a URI
 *   listed twice counts once. They will be matched exactly. PATCH replaces the whole list.
 * - `client_id` (`cvp_...`, public: the X-Client-ID header) is made by the server. The API key (`svc_pak_v1_...`)
 *   and the client secret (`svc_pcs_v1_...`) are 32 random bytes each, shown once in the create answer and kept
 *   only as SHA-256 hashes.
 * - The webhook secret (`whsec_...`, 32 random bytes), which signs the app's webhooks and its automations' calls
 *   (X-Svc-Signature), is made with the app and shown once in the create answer, as Stripe and Svix show an
 *   endpoint's secret; the operator replaces it (POST /operator/v1/partner-apps/{id}/webhook-secret), which answers
 *   the new one once and signs every delivery from then on, retries included. It is kept sealed (SecretBox, as a
 *   workspace endpoint's secret), since the server must sign with it, and shown in no other answer nor any log. An
 *   app made before webhook secrets existed has none until the operator makes one that way; until then nothing is
 *   sent to it, and `webhook_enabled` is false.
 * - `webhook_events` is the app's webhook filter: the event types its webhooks are sent for (the partner document's
 *   Events table, those this server sends), or null (the default) for every type. The operator sets it (create and
 *   PATCH; null clears it, an empty list sends nothing); a type listed twice counts once. It filters the app's
 *   webhooks only, not its automations' calls (each automation names its own trigger).
 */
import { Schema } from "effect"
import { Uuid, WorkspaceId } from "../shared/Ids.js"
import { requestBody, Text, Title } from "../shared/Text.js"
import { Timestamp } from "../shared/Time.js"
import { trusted } from "../shared/Trusted.js"
import { Plan } from "../workspaces/Workspace.js"
import { PartnerEventType } from "./PartnerEventType.js"

export const PartnerAppId = Uuid.pipe(Schema.brand("PartnerAppId"))
export type PartnerAppId = typeof PartnerAppId.Type

/** `active`, or `suspended`: a suspended app is refused (403 `partner_app_inactive`) on every partner call. */
export const PartnerAppStatus = Schema.Literal("active", "suspended").annotations({ identifier: "PartnerAppStatus" })
export type PartnerAppStatus = typeof PartnerAppStatus.Type

/** The longest slug: a DNS label. */
export const MAX_PARTNER_APP_SLUG_LENGTH = 63

const slugPattern = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/

/** The form of a slug (see the module's decisions). */
export const isPartnerAppSlug = (value: string): boolean => slugPattern.test(value)

export const PartnerAppSlug = Text.pipe(
  Schema.filter(isPartnerAppSlug, {
    message: () =>
      "must be 1 to 63 lower-case letters, digits and hyphens, starting and ending with a letter or a digit"
  }),
  Schema.brand("PartnerAppSlug")
).annotations({
  identifier: "PartnerAppSlug",
  description: "1 to 63 lower-case letters, digits and hyphens, starting and ending with a letter or a digit; unique",
  jsonSchema: { type: "string", pattern: slugPattern.source, minLength: 1, maxLength: MAX_PARTNER_APP_SLUG_LENGTH }
})
export type PartnerAppSlug = typeof PartnerAppSlug.Type

/**
 * The slug derived from a name: accents dropped, lower-cased, every run of anything but a-z and 0-9 one hyphen,
 * no hyphen at either end, at most 63 characters; `app` when nothing is left.
 */
export const slugFromName = (name: string): PartnerAppSlug => {
  const folded = name.normalize("NFKD").replace(/\p{M}+/gu, "").toLowerCase()
  const hyphenated = folded.replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "")
  const cut = hyphenated.slice(0, MAX_PARTNER_APP_SLUG_LENGTH).replace(/-+$/, "")
  return (cut === "" ? "app" : cut) as PartnerAppSlug
}

/** `base` with the suffix `-n` (n >= 2), cut so that the whole stays a slug of at most 63 characters. */
export const slugWithSuffix = (base: PartnerAppSlug, n: number): PartnerAppSlug => {
  const suffix = `-${n}`
  return `${base.slice(0, MAX_PARTNER_APP_SLUG_LENGTH - suffix.length).replace(/-+$/, "")}${suffix}` as PartnerAppSlug
}

/** The fields every view of an app shows (the document's record and what the partner OAuth server needs). */
const appFields = {
  id: PartnerAppId,
  name: Schema.String,
  slug: Schema.String,
  status: PartnerAppStatus,
  webhook_url: Schema.NullOr(Schema.String),
  co_brand_name: Schema.NullOr(Schema.String),
  co_brand_logo_url: Schema.NullOr(Schema.String),
  client_id: Schema.String.annotations({ description: "the app's public identifier: the X-Client-ID header and the OAuth client_id" }),
  redirect_uris: Schema.Array(Schema.String).annotations({
    description: "the redirect URIs the partner OAuth server accepts, matched exactly"
  }),
  created_at: Timestamp,
  updated_at: Timestamp
}

/** The webhook filter: the event types the app's webhooks are sent for; null for every type. */
export const WebhookEvents = Schema.NullOr(Schema.Array(PartnerEventType)).annotations({
  description: "the event types the app's webhooks are sent for (its webhook filter); null: every type"
})

/** A partner app as stored: the record, and the hashes of its two secrets (never shown). */
export class PartnerApp extends Schema.Class<PartnerApp>("PartnerApp")({
  ...appFields,
  webhook_events: Schema.optionalWith(WebhookEvents, { default: () => null }),
  /** SHA-256 (hex) of the API key. */
  api_key_hash: Schema.String,
  /** SHA-256 (hex) of the OAuth client secret. */
  client_secret_hash: Schema.String,
  /** The webhook secret, sealed (SecretBox); null for an app made before webhook secrets existed. */
  sealed_webhook_secret: Schema.NullOr(Schema.String)
}) {}

const viewFields = {
  id: appFields.id,
  name: appFields.name,
  slug: appFields.slug,
  status: appFields.status,
  webhook_enabled: Schema.Boolean.annotations({
    description: "whether the app's webhooks are sent: a webhook_url is set and the app has a webhook secret"
  }),
  webhook_url: appFields.webhook_url,
  webhook_events: WebhookEvents,
  co_brand_name: appFields.co_brand_name,
  co_brand_logo_url: appFields.co_brand_logo_url,
  client_id: appFields.client_id,
  redirect_uris: appFields.redirect_uris,
  created_at: appFields.created_at,
  updated_at: appFields.updated_at
}

const viewOf = (app: PartnerApp) => ({
  id: app.id,
  name: app.name,
  slug: app.slug,
  status: app.status,
  webhook_enabled: app.webhook_url !== null && app.sealed_webhook_secret !== null,
  webhook_url: app.webhook_url,
  webhook_events: app.webhook_events,
  co_brand_name: app.co_brand_name,
  co_brand_logo_url: app.co_brand_logo_url,
  client_id: app.client_id,
  redirect_uris: app.redirect_uris,
  created_at: app.created_at,
  updated_at: app.updated_at
})

/** The app as the operator and the app itself see it: never a secret nor its hash. */
export class PartnerAppView extends Schema.Class<PartnerAppView>("PartnerAppView")(viewFields) {
  static readonly of = (app: PartnerApp) => new PartnerAppView(viewOf(app), trusted)
}

const webhookSecret = Schema.String.annotations({
  description: "the secret that signs the app's webhooks and automation calls (whsec_...: X-Svc-Signature is " +
    "sha256=<hex HMAC-SHA256 of the raw body keyed by it>); shown only here"
})

/** The create answer: the app with its API key, client secret and webhook secret, shown this once. */
export class CreatedPartnerApp extends Schema.Class<CreatedPartnerApp>("CreatedPartnerApp")({
  ...viewFields,
  api_key: Schema.String.annotations({ description: "the X-API-Key of the admin API (svc_pak_v1_...); shown only here" }),
  client_secret: Schema.String.annotations({ description: "the OAuth client secret (svc_pcs_v1_...); shown only here" }),
  webhook_secret: webhookSecret
}) {
  static readonly of = (
    app: PartnerApp,
    secrets: { readonly api_key: string; readonly client_secret: string; readonly webhook_secret: string }
  ) => new CreatedPartnerApp({ ...viewOf(app), ...secrets }, trusted)
}

/** The answer to a new webhook secret: the app with the secret, shown this once. */
export class RotatedWebhookSecret extends Schema.Class<RotatedWebhookSecret>("RotatedWebhookSecret")({
  ...viewFields,
  webhook_secret: webhookSecret
}) {
  static readonly of = (app: PartnerApp, webhookSecret: string) =>
    new RotatedWebhookSecret({ ...viewOf(app), webhook_secret: webhookSecret }, trusted)
}

const HttpsUrl = Title(2000)

const RedirectUriList = Schema.Array(Text.pipe(Schema.maxLength(2000, { message: () => "must be at most 2000 characters" }))).pipe(
  Schema.maxItems(20, { message: () => "may list at most 20 URIs" })
)

export const PartnerAppName = Title(200)
export const CoBrandName = Title(100)

/** The fields both requests may set (null clears one). */
const settableFields = {
  webhook_url: Schema.optional(Schema.NullOr(HttpsUrl)),
  co_brand_name: Schema.optional(Schema.NullOr(CoBrandName)),
  co_brand_logo_url: Schema.optional(Schema.NullOr(HttpsUrl)),
  redirect_uris: Schema.optional(RedirectUriList),
  webhook_events: Schema.optional(WebhookEvents)
}

/** POST /operator/v1/partner-apps. */
export class CreatePartnerApp extends Schema.Class<CreatePartnerApp>("CreatePartnerApp")({
  name: PartnerAppName,
  slug: Schema.optional(PartnerAppSlug),
  ...settableFields
}, requestBody) {}

/** PATCH /operator/v1/partner-apps/{id}: what is left out is kept; null clears the optional fields. */
export class UpdatePartnerApp extends Schema.Class<UpdatePartnerApp>("UpdatePartnerApp")({
  status: Schema.optional(PartnerAppStatus),
  name: Schema.optional(PartnerAppName),
  ...settableFields
}, requestBody) {}

/** POST /operator/v1/partner-apps/{id}/workspaces. */
export class ConnectWorkspace extends Schema.Class<ConnectWorkspace>("ConnectWorkspace")({
  workspace_id: WorkspaceId
}, requestBody) {}

/** A workspace connected to a partner app, as GET /v1/partner/admin/workspaces lists it. */
export class ConnectedWorkspace extends Schema.Class<ConnectedWorkspace>("ConnectedWorkspace")({
  id: WorkspaceId,
  name: Schema.String,
  plan: Plan,
  /** When the workspace was first connected to the app. */
  connected_at: Timestamp
}) {}
