/**
 * The operator's endpoints for partner apps (decisions.md: create, change, connect workspaces), added to the operator
 * group (Operator.ts) so that they share its authentication, its switch and its document. The rules are core's
 * (PartnerApps, with the decisions of PartnerApp.ts); this is the contract.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as OpenApi from "@effect/platform/OpenApi"
import {
  ConnectedWorkspace,
  ConnectWorkspace,
  CreatedPartnerApp,
  CreatePartnerApp,
  Pagination,
  PartnerAppId,
  PartnerAppView,
  RotatedWebhookSecret,
  UpdatePartnerApp
} from "@convene/core"
import { Schema } from "effect"
import { StateConflict } from "./Errors.js"
import { PageParams } from "./Query.js"

const PartnerAppPath = Schema.Struct({ id: PartnerAppId })

export const PartnerAppList = Pagination.ListOf(PartnerAppView).annotations({ identifier: "PartnerAppList" })

const fields = "`slug`: 1 to 63 lower-case letters, digits and hyphens, starting and ending with a letter or a digit, " +
  "unique, and fixed once made (left out, it is derived from the name: accents dropped, lower-cased, other characters " +
  "hyphens; a taken derived slug gets the first free suffix -2, -3, ...). `webhook_url`: an absolute HTTPS URL without " +
  "user information whose host the outbound rules let the server call (CONVENE_OUTBOUND_ALLOW_HOSTS), else 400 " +
  "`validation_error`; `webhook_enabled` says whether one is set. `co_brand_name`: 1 to 100 characters; " +
  "`co_brand_logo_url`: an absolute HTTPS URL. `redirect_uris`: at most 20 https or loopback URIs " +
  "(`http://127.0.0.1:<port>/...`), without fragment or user information, matched exactly by the partner OAuth server; " +
  "a URI listed twice counts once. `webhook_events`: the app's webhook filter, the event types its webhooks are sent " +
  "for (`action_item.updated`, `action_item.completed`, `partner.idp.domain_verified`, " +
  "`partner.idp.domain_verification_failed`, `partner.idp.domain_revoked`); null (the default) sends every type, an " +
  "empty list none; automations' calls are not filtered."

export const listPartnerApps = HttpApiEndpoint.get("listPartnerApps", "/partner-apps")
  .setUrlParams(Schema.Struct(PageParams))
  .addSuccess(PartnerAppList)
  .annotate(OpenApi.Summary, "List partner apps")
  .annotate(OpenApi.Description, "Every partner app of the installation, newest first; never a secret.")

export const createPartnerApp = HttpApiEndpoint.post("createPartnerApp", "/partner-apps")
  .setPayload(CreatePartnerApp)
  .addSuccess(CreatedPartnerApp, { status: 201 })
  .addError(StateConflict)
  .annotate(OpenApi.Summary, "Create a partner app")
  .annotate(
    OpenApi.Description,
    "Creates a partner app, `active`, with its `client_id` (cvp_..., the X-Client-ID header and the OAuth client id), " +
      "its API key (`api_key`, svc_pak_v1_..., the X-API-Key header of /v1/partner/admin), its OAuth client secret " +
      "(`client_secret`, svc_pcs_v1_...) and its webhook secret (`webhook_secret`, whsec_..., which signs its webhooks " +
      "and its automations' calls: X-Svc-Signature). The key and the secrets are in this answer only: the server keeps " +
      "the key's and the client secret's SHA-256 hashes and the webhook secret sealed (it must sign with it), and no " +
      "other answer or log line shows them (the webhook secret can be replaced: POST .../webhook-secret). " +
      `${fields} 409 \`conflict\` when the slug given is taken.`
  )

export const getPartnerApp = HttpApiEndpoint.get("getPartnerApp", "/partner-apps/:id")
  .setPath(PartnerAppPath)
  .addSuccess(PartnerAppView)
  .annotate(OpenApi.Summary, "Get a partner app")
  .annotate(OpenApi.Description, "The partner app (404 when unknown); never a secret.")

export const updatePartnerApp = HttpApiEndpoint.patch("updatePartnerApp", "/partner-apps/:id")
  .setPath(PartnerAppPath)
  .setPayload(UpdatePartnerApp)
  .addSuccess(PartnerAppView)
  .annotate(OpenApi.Summary, "Change a partner app")
  .annotate(
    OpenApi.Description,
    "Changes the app's `status` (`active` or `suspended`: a suspended app gets 403 `partner_app_inactive` on every " +
      "partner call, from the next request on), `name`, `webhook_url`, `co_brand_name`, `co_brand_logo_url`, " +
      "`redirect_uris` (replaced whole) or `webhook_events` (the webhook filter; null: every type). What the request " +
      "leaves out is kept; null clears `webhook_url` (which turns " +
      `webhooks off), \`co_brand_name\` or \`co_brand_logo_url\`. The slug and the secrets cannot be changed. ${fields} ` +
      "404 when unknown."
  )

export const rotatePartnerAppWebhookSecret = HttpApiEndpoint.post("rotatePartnerAppWebhookSecret", "/partner-apps/:id/webhook-secret")
  .setPath(PartnerAppPath)
  .addSuccess(RotatedWebhookSecret)
  .annotate(OpenApi.Summary, "Replace a partner app's webhook secret")
  .annotate(
    OpenApi.Description,
    "Makes a new webhook secret for the app (whsec_..., 32 random bytes) and answers 200 with the app and the secret " +
      "(`webhook_secret`), shown in this answer only. It replaces the old one at once: every delivery sent from now " +
      "on, retries of earlier ones included, is signed with it. There is no overlap (Stripe and Svix may sign with both " +
      "for a while; X-Svc-Signature carries one signature): a receiver accepts either while it switches. An app made " +
      "before webhook secrets existed has " +
      "none, and is sent nothing (`webhook_enabled` false) until this makes its first one. No body. 404 when unknown."
  )

export const connectPartnerAppWorkspace = HttpApiEndpoint.post("connectPartnerAppWorkspace", "/partner-apps/:id/workspaces")
  .setPath(PartnerAppPath)
  .setPayload(ConnectWorkspace)
  .addSuccess(ConnectedWorkspace, { status: 201 })
  .annotate(OpenApi.Summary, "Connect a workspace to a partner app")
  .annotate(
    OpenApi.Description,
    "Connects the workspace to the app: 201 `{id, name, plan, connected_at}`, the workspace as the app's " +
      "GET /v1/partner/admin/workspaces lists it. Connecting a connected workspace again changes nothing and answers " +
      "the same, with the first `connected_at`. 404 when the app or the workspace is unknown. Deleting the workspace " +
      "deletes its connections."
  )
