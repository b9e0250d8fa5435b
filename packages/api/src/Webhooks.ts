/** The workspace webhooks group: endpoints, their verification, secrets and delivery log. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import {
  CreatedWebhook,
  CreateWebhook,
  DeliveryId,
  DeliveryView,
  Pagination,
  RotatedSecret,
  WebhookEndpointId,
  WebhookEndpointView
} from "@convene/core"
import { Schema } from "effect"
import { EndpointCap, Forbidden, Missing, NotPending, PlanGate, StateConflict } from "./Errors.js"
import { idempotent } from "./Idempotency.js"
import { PageParams } from "./Query.js"
import { Authenticate } from "./Security.js"

const EndpointPath = Schema.Struct({ id: WebhookEndpointId })

export const WebhookList = Pagination.ListOf(WebhookEndpointView).annotations({ identifier: "WebhookList" })
export const DeliveryList = Pagination.ListOf(DeliveryView).annotations({ identifier: "WebhookDeliveryList" })

const admin = "Workspace API keys and OWNER or ADMIN users (a MEMBER gets 403)"

export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.get("list", "/workspace/webhooks")
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(WebhookList)
      .annotate(OpenApi.Summary, "List webhook endpoints")
      .annotate(
        OpenApi.Description,
        `The workspace's webhook endpoints that are not deleted, newest first; never their secrets. ${admin}; scope workspace:read.`
      )
  )
  .add(
    HttpApiEndpoint.post("create", "/workspace/webhooks")
      .setPayload(CreateWebhook)
      .addSuccess(CreatedWebhook, { status: 201 })
      .addError(Missing)
      .addError(PlanGate)
      .addError(EndpointCap)
      .annotate(OpenApi.Summary, "Create a webhook endpoint")
      .annotate(
        OpenApi.Description,
        "Creates an endpoint (PRO plan and higher, 402 on FREE) that receives the subscribed events as signed POSTs. " +
          "`url` must be HTTPS and its host must resolve to public addresses only (400 validation_error otherwise, unless " +
          "the operator allows the host in CONVENE_OUTBOUND_ALLOW_HOSTS); `subscribed_events` is a non-empty list of " +
          "subscribable event types (a type named twice counts once). Active endpoints (neither deleted nor disabled; " +
          "pending ones count) are capped per plan: PRO 1, ELITE 3, ENTERPRISE unlimited (409 endpoint_cap_exceeded).\n\n" +
          "The answer carries `signing_secret` and `verification_token` this once; they are never shown again. The " +
          "endpoint starts `pending`/`verifying`: a `webhook.verification` challenge is POSTed at once and every 5 minutes " +
          "for 24 hours, until the receiver answers 2xx with the token (the body, trimmed, equal to it, or a JSON object " +
          "whose `verification_token` equals it); then it is `verified` and events are delivered. After 24 hours without " +
          `an echo it is \`pending\`/\`failed\`. No Idempotency-Key. ${admin}; scope workspace:write.`
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/workspace/webhooks/:id")
      .setPath(EndpointPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Missing)
      .annotate(OpenApi.Summary, "Delete a webhook endpoint")
      .annotate(
        OpenApi.Description,
        "Soft-deletes the endpoint: nothing more is delivered to it and it leaves the list; 204 with no body. Deleting it " +
          `again is a harmless 204; an unknown id is 404. ${admin}; scope workspace:write.`
      )
  )
  .add(
    HttpApiEndpoint.post("reEnable", "/workspace/webhooks/:id/re-enable")
      .setPath(EndpointPath)
      .addSuccess(WebhookEndpointView)
      .addError(Missing)
      .addError(StateConflict)
      .pipe(idempotent)
      .annotate(OpenApi.Summary, "Re-enable a disabled webhook endpoint")
      .annotate(
        OpenApi.Description,
        "Brings a disabled endpoint back: `verification_state` verified, `consecutive_failure_count` 0 (it was verified " +
          "before it was disabled, so it is not challenged again). Deliveries that failed while it was disabled are not " +
          "resent by themselves; redeliver them from the delivery log. An endpoint that is not disabled is 409 conflict. " +
          `Idempotency-Key honoured. ${admin}; scope workspace:write.`
      )
  )
  .add(
    HttpApiEndpoint.post("rotateSecret", "/workspace/webhooks/:id/rotate-secret")
      .setPath(EndpointPath)
      .addSuccess(RotatedSecret)
      .addError(Missing)
      .annotate(OpenApi.Summary, "Rotate an endpoint's signing secret")
      .annotate(
        OpenApi.Description,
        "Mints a new signing secret, shown this once in `signing_secret`; the old one is invalid at once (every later " +
          `attempt, retries included, is signed with the new one). ${admin}; scope workspace:write.`
      )
  )
  .add(
    HttpApiEndpoint.post("resendVerification", "/workspace/webhooks/:id/resend-verification")
      .setPath(EndpointPath)
      .addSuccess(WebhookEndpointView)
      .addError(Missing)
      .addError(NotPending)
      .annotate(OpenApi.Summary, "Send the verification challenge again")
      .annotate(
        OpenApi.Description,
        "On a `verifying` or `failed` endpoint: resets the 24-hour window and the attempt counter and sends the challenge " +
          "now, within this request; the answer shows `verified` when the receiver echoed the token, else `verifying` " +
          "(challenges go on every 5 minutes). A verified or disabled endpoint is 409 endpoint_not_pending. " +
          `${admin}; scope workspace:write.`
      )
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/workspace/webhooks/:id/deliveries")
      .setPath(EndpointPath)
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(DeliveryList)
      .addError(Missing)
      .annotate(OpenApi.Summary, "An endpoint's delivery log")
      .annotate(
        OpenApi.Description,
        "The endpoint's deliveries, newest first, each with its state (pending, delivered, failed), its attempts " +
          "(time, status code or null, latency, error) and when the next is due. A delivery makes at most 3 attempts, " +
          "1 and 4 minutes apart (n² minutes); a receiver must answer 2xx within 10 seconds, and a redirect is an " +
          `answer like any other, never followed. Deliveries are kept 7 days. ${admin}; scope workspace:read.`
      )
  )
  .add(
    HttpApiEndpoint.post("redeliver", "/workspace/webhooks/:id/deliveries/:deliveryId/redeliver")
      .setPath(Schema.Struct({ id: WebhookEndpointId, deliveryId: DeliveryId }))
      .addSuccess(DeliveryView, { status: 201 })
      .addError(Missing)
      .addError(StateConflict)
      .annotate(OpenApi.Summary, "Send a delivery again")
      .annotate(
        OpenApi.Description,
        "Queues a delivered or failed delivery again as a new delivery (a new X-Svc-Delivery-ID) of the same event with " +
          "the same body, event id and X-Svc-Idempotency-Key, so a receiver that already has it can tell; 201 with the new " +
          "delivery. A delivery still pending, or an endpoint that is not verified, is 409 conflict. " +
          `${admin}; scope workspace:write.`
      )
  )
  .middleware(Authenticate)
  .addError(Forbidden)
  .prefix("/v1")
  .annotate(OpenApi.Title, "Webhooks")
  .annotate(
    OpenApi.Description,
    "Signed workspace webhooks. Each delivery is a POST with the JSON envelope `{event_type, event_id, timestamp, " +
      "workspace_id, actor_user_id, data}` and the headers Content-Type application/json, User-Agent Svc-Webhook/1.0, " +
      "X-Svc-Signature `sha256=<hex HMAC-SHA256 of the raw body keyed by the signing secret>`, X-Svc-Event-Type, " +
      "X-Svc-Event-ID (stable across retries), X-Svc-Idempotency-Key (at most 64 characters, stable per endpoint and " +
      "event), X-Svc-Delivery-ID, X-Svc-Timestamp (Unix seconds of the event) and, on retries, X-Svc-Retry-Count. " +
      "Events are written to the outbox in the same transaction as the change, so none is lost when a process dies; " +
      "with the in-memory store they do not survive a restart. Three deliveries in a row that fail all their attempts " +
      "disable the endpoint and its creator is told by e-mail."
  )
{}
