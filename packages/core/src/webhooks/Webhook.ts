/**
 * The webhooks room's records: workspace webhook endpoints (as stored, and as the API shows them) and the outbox
 * of deliveries with their attempts.
 *
 * Deliveries are generic: a delivery is addressed to an addressee of a kind (a workspace endpoint, a partner app,
 * an action of a partner automation), carries the exact bytes to send and its de-duplication key, and goes through one queue, one worker
 * and one signer whatever its addressee.
 */
import { Schema } from "effect"
import { EventId, SubscribableEventType } from "../events/Event.js"
import { UserId, Uuid, WorkspaceId } from "../shared/Ids.js"
import { requestBody, Title } from "../shared/Text.js"
import { Timestamp } from "../shared/Time.js"
import { trusted } from "../shared/Trusted.js"

export const WebhookEndpointId = Uuid.pipe(Schema.brand("WebhookEndpointId"))
export type WebhookEndpointId = typeof WebhookEndpointId.Type

export const DeliveryId = Uuid.pipe(Schema.brand("DeliveryId"))
export type DeliveryId = typeof DeliveryId.Type

/** `pending` until the endpoint first echoed its verification token, `verified` from then on (disabled ones too). */
export const EndpointStatus = Schema.Literal("pending", "verified").annotations({ identifier: "WebhookStatus" })
export type EndpointStatus = typeof EndpointStatus.Type

/**
 * Where the endpoint is in its life (EndpointStates.ts): `verifying` (challenges are sent), `failed` (24 hours passed
 * without an echo; challenges stopped), `verified` (subscribed events are delivered), `disabled` (3 deliveries in a
 * row exhausted their attempts; nothing is delivered until it is re-enabled).
 */
export const VerificationState = Schema.Literal("verifying", "failed", "verified", "disabled").annotations({
  identifier: "WebhookVerificationState"
})
export type VerificationState = typeof VerificationState.Type

/** The fields the API shows (the document's record), shared by the stored endpoint and its view. */
const endpointFields = {
  id: WebhookEndpointId,
  workspace_id: WorkspaceId,
  url: Schema.String,
  subscribed_events: Schema.Array(SubscribableEventType),
  status: EndpointStatus,
  verification_state: VerificationState,
  verification_attempt_count: Schema.Int.annotations({ description: "challenges sent in the current verification window" }),
  verification_last_sent_at: Schema.NullOr(Timestamp),
  /** When the current verification window closes. */
  verification_retry_until: Timestamp,
  verified_at: Schema.NullOr(Timestamp),
  last_success_at: Schema.NullOr(Timestamp),
  consecutive_failure_count: Schema.Int.annotations({
    description: "deliveries in a row that failed all their attempts; at 3 the endpoint is disabled"
  }),
  created_at: Timestamp,
  updated_at: Timestamp
}

/**
 * A workspace webhook endpoint as stored: the document's record plus what only the server sees. The signing
 * secret and the verification token are kept sealed (SecretBox), never in clear; `revision` grows with every
 * write, so that a change computed from a stale read is refused (WebhookStore.updateEndpoint) and computed again.
 */
export class WebhookEndpoint extends Schema.Class<WebhookEndpoint>("WebhookEndpoint")({
  ...endpointFields,
  /** The user who created it (e-mailed when it is disabled); null for a workspace API key or a deleted user. */
  created_by: Schema.NullOr(UserId),
  sealed_signing_secret: Schema.String,
  sealed_verification_token: Schema.String,
  /** Until when a process that claimed the endpoint's challenge may send it (WebhookStore.claimChallenges). */
  challenge_claimed_until: Schema.NullOr(Timestamp),
  deleted_at: Schema.NullOr(Timestamp),
  revision: Schema.Int
}) {}

/** The endpoint as the API shows it: never its secret nor its token. */
export class WebhookEndpointView extends Schema.Class<WebhookEndpointView>("WebhookEndpointView")(endpointFields) {
  static readonly of = (endpoint: WebhookEndpoint) =>
    new WebhookEndpointView({
      id: endpoint.id,
      workspace_id: endpoint.workspace_id,
      url: endpoint.url,
      subscribed_events: endpoint.subscribed_events,
      status: endpoint.status,
      verification_state: endpoint.verification_state,
      verification_attempt_count: endpoint.verification_attempt_count,
      verification_last_sent_at: endpoint.verification_last_sent_at,
      verification_retry_until: endpoint.verification_retry_until,
      verified_at: endpoint.verified_at,
      last_success_at: endpoint.last_success_at,
      consecutive_failure_count: endpoint.consecutive_failure_count,
      created_at: endpoint.created_at,
      updated_at: endpoint.updated_at
    }, trusted)
}

/**
 * POST /v1/workspace/webhooks. `url` must be HTTPS and pass the outbound rules (checked by Webhooks.create);
 * `subscribed_events` is a non-empty list of subscribable types, a type named twice counts once.
 */
export class CreateWebhook extends Schema.Class<CreateWebhook>("CreateWebhook")({
  url: Title(2000),
  subscribed_events: Schema.Array(SubscribableEventType).pipe(
    Schema.minItems(1, { message: () => "must name at least one event type" })
  )
}, requestBody) {}

/** The create answer: the secret and the token, shown this once. */
export class CreatedWebhook extends Schema.Class<CreatedWebhook>("CreatedWebhook")({
  signing_secret: Schema.String,
  verification_token: Schema.String,
  webhook: WebhookEndpointView
}) {}

/** The rotate-secret answer (decisions.md): the new secret, shown this once, and the endpoint. */
export class RotatedSecret extends Schema.Class<RotatedSecret>("RotatedSecret")({
  signing_secret: Schema.String,
  webhook: WebhookEndpointView
}) {}

/**
 * Whom a delivery is for. A literal union that grows with the rooms that send webhooks: a workspace endpoint
 * (addressee_id: the endpoint's id), a partner app's webhook URL (the app's id), an action of a partner automation
 * (the action's id; partner/Automation.ts), a webhook step of a partner workflow run (the run's id;
 * partner/workflows/Workflows.ts).
 */
export const AddresseeKind = Schema.Literal("workspace_endpoint", "partner_app", "partner_automation_action", "workflow_step")
export type AddresseeKind = typeof AddresseeKind.Type

export interface Addressee {
  readonly kind: AddresseeKind
  readonly id: string
}

/** `pending` while attempts remain (or one is due), then `delivered` (a 2xx answer) or `failed` (all attempts failed). */
export const DeliveryState = Schema.Literal("pending", "delivered", "failed").annotations({ identifier: "DeliveryState" })
export type DeliveryState = typeof DeliveryState.Type

/**
 * One message in the outbox: the exact body to POST to one addressee, its de-duplication key, and where it is in
 * its attempts. Written in the unit of work of the change it tells about (see WebhookFanOut), taken by one worker
 * at a time (`claimed_until`, the lease), and kept with its attempts as the delivery log.
 */
export class Delivery extends Schema.Class<Delivery>("Delivery")({
  /** Sent as X-Svc-Delivery-ID. */
  id: DeliveryId,
  /** The workspace the event happened in (null for events of no workspace, such as a partner app's own). */
  workspace_id: Schema.NullOr(WorkspaceId),
  addressee_kind: AddresseeKind,
  addressee_id: Uuid,
  event_id: EventId,
  event_type: Schema.String,
  /** When the event happened: X-Svc-Timestamp. */
  occurred_at: Timestamp,
  /** The exact bytes of every attempt (the signature is computed over them). */
  body: Schema.String,
  /** X-Svc-Idempotency-Key: the same on every attempt and every redelivery to this addressee, at most 64 characters. */
  idempotency_key: Schema.String,
  state: DeliveryState,
  attempt_count: Schema.Int,
  /** When the next attempt is due; null once the delivery is delivered or failed. */
  next_attempt_at: Schema.NullOr(Timestamp),
  /** Until when the worker that claimed it may attempt it; past that another worker may claim it again. */
  claimed_until: Schema.NullOr(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

/** One POST of a delivery and what came of it. */
export class DeliveryAttempt extends Schema.Class<DeliveryAttempt>("DeliveryAttempt")({
  delivery_id: DeliveryId,
  /** 1 for the first attempt. */
  number: Schema.Int,
  at: Timestamp,
  /** The answer's status; null when no answer came (timeout, connection, TLS, refused). */
  status_code: Schema.NullOr(Schema.Int),
  latency_ms: Schema.Int,
  /** Why no answer came, or why the delivery was given up without a call; null for an answer. */
  error: Schema.NullOr(Schema.String)
}) {}

/** A delivery with its attempts, oldest attempt first. */
export interface DeliveryRecord {
  readonly delivery: Delivery
  readonly attempts: ReadonlyArray<DeliveryAttempt>
}

export class DeliveryAttemptView extends Schema.Class<DeliveryAttemptView>("DeliveryAttemptView")({
  number: Schema.Int,
  at: Timestamp,
  status_code: Schema.NullOr(Schema.Int),
  latency_ms: Schema.Int,
  error: Schema.NullOr(Schema.String)
}) {}

/** A delivery as the delivery log shows it: what was sent when, and what came back. Never the body's signature. */
export class DeliveryView extends Schema.Class<DeliveryView>("DeliveryView")({
  id: DeliveryId,
  event_id: EventId,
  event_type: Schema.String,
  idempotency_key: Schema.String,
  state: DeliveryState,
  attempt_count: Schema.Int,
  next_attempt_at: Schema.NullOr(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
  attempts: Schema.Array(DeliveryAttemptView)
}) {
  static readonly of = (record: DeliveryRecord) =>
    new DeliveryView({
      id: record.delivery.id,
      event_id: record.delivery.event_id,
      event_type: record.delivery.event_type,
      idempotency_key: record.delivery.idempotency_key,
      state: record.delivery.state,
      attempt_count: record.delivery.attempt_count,
      next_attempt_at: record.delivery.next_attempt_at,
      created_at: record.delivery.created_at,
      updated_at: record.delivery.updated_at,
      attempts: record.attempts.map((attempt) =>
        new DeliveryAttemptView({
          number: attempt.number,
          at: attempt.at,
          status_code: attempt.status_code,
          latency_ms: attempt.latency_ms,
          error: attempt.error
        }, trusted)
      )
    }, trusted)
}
