/**
 * The partner admin API's automations (GET and POST /v1/partner/admin/automations), in the admin context: the same
 * authentication (PartnerAdminAuth: X-API-Key and X-Client-ID) and the partner envelope on every failure. The rules
 * are core's (Automations, with the decisions of Automation.ts); the partner webhooks and automation calls they lead
 * to are described here too, since the document's readers look for them beside the automations.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { AutomationView, CreateAutomation, MAX_AUTOMATION_ACTIONS, Pagination } from "@convene/core"
import { Schema } from "effect"
import {
  PartnerAdminAuth,
  PartnerInvalidRequest,
  PartnerPayloadTooLarge,
  partnerPrefix,
  PartnerUnsupportedMediaType
} from "./Partner.js"
import { PartnerRateLimited } from "./PartnerLimits.js"
import { PageParams } from "./Query.js"

export const AutomationList = Pagination.ListOf(AutomationView).annotations({ identifier: "AutomationList" })

const authentication = "Authenticated as the other admin routes (X-API-Key and X-Client-ID: 401 `missing_api_key`, " +
  "`missing_client_id` or `invalid_credentials`, 403 `partner_app_inactive`)."

/** What the partner webhooks and automation calls are, for the document's description. */
export const eventsDescription = `

**Partner webhooks and automations.** An app's webhooks go to its \`webhook_url\` for every workspace connected to
it: \`action_item.updated\` for every change of an action item, and \`action_item.completed\` when a user (or a
workspace API key) completes one, with \`completed_by_user_id\` (null for an API key); such a completion is also sent as
\`action_item.updated\` (a change like any other), under an event id of its own. A completion an embedding host reconciled
from an external to-do provider is sent only as \`action_item.updated\`, with \`reconciled_from\` naming the provider.
The body is \`{event_id, event_type, occurred_at, partner_app_id, workspace_id, data}\`, \`data\` the action item as
/v1 shows it. An automation's actions each get \`{automation_id, trigger_type, event_id, occurred_at, workspace_id,
data}\` when its trigger fires in a connected workspace: \`action_item_created\`, \`action_item_completed\` (a user's
completion, not a reconciled one: no echo to the provider that reported it) or \`meeting_ended\`; \`data\` is the action
item (with \`completed_by_user_id\` for a completion) or the meeting. Every one is a POST with \`Content-Type:
application/json\`, \`X-Svc-Signature: sha256=<hex>\` (HMAC-SHA256 of the raw body keyed by the app's webhook secret:
GitHub's X-Hub-Signature-256 scheme, which \`@octokit/webhooks-methods\` verifies), \`X-Svc-Timestamp\` (Unix
seconds of the attempt, so that a retry is not older than a five-minute tolerance; not signed), \`X-Svc-Event-Type\`
(the event type, or an automation's trigger type) and \`X-Svc-Event-ID\` (receivers de-duplicate on it). They are
written in the same transaction as the change (the outbox workspace webhooks use), sent by the same worker under the
same outbound rules (HTTPS, public addresses unless \`CONVENE_OUTBOUND_ALLOW_HOSTS\` allows the host, redirects never
followed, 10 s per call) and retried the same way: 3 attempts in all, 1 and 4 minutes apart; a 2xx answer delivers.
Only an active app with a webhook secret is sent anything; a delivery whose app was suspended (or whose
\`webhook_url\` was cleared) meanwhile is not sent. The webhook secret (\`whsec_...\`) is made with the app and shown
once, to the operator who created it; the operator replaces it (an app made before webhook secrets existed gets its
first one so), which shows the new one once and signs every delivery from then on, retries included. It is stored
sealed and shown in no other answer.`

export class PartnerAutomationsApi extends HttpApiGroup.make("partnerAutomations")
  .add(
    HttpApiEndpoint.get("listAutomations", "/automations")
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(AutomationList)
      .addError(PartnerInvalidRequest)
      .annotate(OpenApi.Summary, "List the automations")
      .annotate(
        OpenApi.Description,
        "The app's automations `{id, name, description, trigger_type, actions, enabled, created_at}`, newest first, in " +
          `the list envelope \`{items, total, limit, offset}\` (limit 20 by default, at most 100). ${authentication}`
      )
  )
  .add(
    HttpApiEndpoint.post("createAutomation", "/automations")
      .setPayload(CreateAutomation)
      .addSuccess(AutomationView, { status: 201 })
      .addError(PartnerInvalidRequest)
      .addError(PartnerPayloadTooLarge)
      .addError(PartnerUnsupportedMediaType)
      .annotate(OpenApi.Summary, "Create an automation")
      .annotate(
        OpenApi.Description,
        "Creates an automation of the app: `name` (1 to 200 characters), `description` (at most 2000; null or left " +
          "out: none), `trigger_type` (`action_item_created`, `action_item_completed`: a user's completion, not one " +
          "reconciled from an external to-do provider; `meeting_ended`), `actions` (1 to " +
          `${MAX_AUTOMATION_ACTIONS} of \`{type: "webhook", webhook_url}\`, each URL absolute HTTPS without user ` +
          "information, whose host the outbound rules let the server call) and `enabled` (default true; a disabled " +
          "automation never fires). When its trigger fires in a workspace connected to the app, each action gets a " +
          "signed POST of `{automation_id, trigger_type, event_id, occurred_at, workspace_id, data}` (see Partner " +
          "webhooks and automations). A field that breaks these rules, an unknown field or a body that is not JSON is " +
          `400 \`invalid_request\` naming it (\`actions[0].webhook_url\`); a body over 1 MiB is 413 \`payload_too_large\`, one ` +
          `not sent as application/json 415 \`unsupported_media_type\`. ${authentication}`
      )
  )
  .middleware(PartnerAdminAuth)
  .addError(PartnerRateLimited)
  .prefix(`${partnerPrefix}/admin`)
  .annotate(OpenApi.Title, "Partner automations")
  .annotate(
    OpenApi.Description,
    "The partner app's automations, in the admin context: calls to the app's own URLs when something happens in a " +
      "workspace connected to it."
  )
{}

/** The document with the description of partner webhooks and automations appended to its own. */
export const describe = (spec: Record<string, unknown>): Record<string, unknown> => {
  const info = typeof spec.info === "object" && spec.info !== null ? (spec.info as Record<string, unknown>) : {}
  const text = typeof info.description === "string" ? info.description : ""
  return { ...spec, info: { ...info, description: `${text}${eventsDescription}` } }
}
