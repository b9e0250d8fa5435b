import { Context, type DateTime, type Effect, type Option } from "effect"
import type { UserId, WorkspaceId } from "../shared/Ids.js"
import type { Page, Slice } from "../shared/Pagination.js"
import type {
  Addressee,
  Delivery,
  DeliveryAttempt,
  DeliveryId,
  DeliveryRecord,
  WebhookEndpoint,
  WebhookEndpointId
} from "./Webhook.js"

/**
 * Port: workspace webhook endpoints and the outbox of deliveries. Storage only; the rules (which state follows
 * which, when a challenge or an attempt is due, how long a lease lasts) are core's, which passes the instants in.
 *
 * Words the methods use:
 * - an endpoint is *active* while it is neither deleted (`deleted_at` set) nor `disabled`; pending ones are active;
 * - a *subscriber* of an event type is an endpoint that is not deleted, is `verified` (not disabled) and lists the
 *   type in `subscribed_events`;
 * - a row is *claimed* while its lease (`claimed_until`, `challenge_claimed_until`) lies after now; a claim that
 *   expired (its process died) is free again.
 *
 * Writes join the caller's unit of work (Transactor): deliveries enqueued with a change commit with it or not at
 * all. Claims are atomic: of several processes claiming at once, each row goes to one of them.
 */
export class WebhookStore extends Context.Tag("@convene/core/WebhookStore")<WebhookStore, {
  /**
   * Inserts the endpoint unless its workspace already has `cap` active endpoints (`undefined`: no cap); answers
   * whether it did. Racing inserts into one workspace never pass the cap together.
   */
  readonly insertEndpoint: (endpoint: WebhookEndpoint, cap: number | undefined) => Effect.Effect<boolean>
  /** The endpoint, deleted or not. */
  readonly getEndpoint: (workspaceId: WorkspaceId, id: WebhookEndpointId) => Effect.Effect<Option.Option<WebhookEndpoint>>
  /**
   * Stores `endpoint` in place of the row with its id if that row is still at revision `endpoint.revision - 1`;
   * answers whether it did (false: another write got in first, or there is no such row).
   */
  readonly updateEndpoint: (endpoint: WebhookEndpoint) => Effect.Effect<boolean>
  /** A page of the workspace's endpoints that are not deleted, newest first (created_at desc, id desc). */
  readonly listEndpoints: (workspaceId: WorkspaceId, page: Page) => Effect.Effect<Slice<WebhookEndpoint>>
  /** How many active endpoints the workspace has. */
  readonly countActive: (workspaceId: WorkspaceId) => Effect.Effect<number>
  /** The workspace's subscribers of `eventType`, oldest first (created_at asc, id asc). */
  readonly subscribers: (workspaceId: WorkspaceId, eventType: string) => Effect.Effect<ReadonlyArray<WebhookEndpoint>>
  /**
   * Claims, until `leaseUntil`, at most `limit` endpoints (of any workspace) that are verifying, not deleted, not
   * claimed at `now`, and either never challenged, last challenged at or before `sentBefore`, or past their window
   * (`verification_retry_until` at or before `now`); the longest waiting first. Answers them as claimed (the claim
   * counts as a write: `revision` grows by one).
   */
  readonly claimChallenges: (input: {
    readonly now: DateTime.Utc
    readonly sentBefore: DateTime.Utc
    readonly leaseUntil: DateTime.Utc
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<WebhookEndpoint>>
  /**
   * Sets `created_by` to null on every endpoint the user created; like every write of an endpoint it moves the
   * `revision` on (so that a change computed before it cannot put the user back).
   */
  readonly detachCreator: (userId: UserId) => Effect.Effect<void>

  readonly enqueue: (deliveries: ReadonlyArray<Delivery>) => Effect.Effect<void>
  /**
   * Claims, until `leaseUntil`, at most `limit` pending deliveries whose next attempt is due at `now` and that are
   * not claimed at `now`, the longest due first, and answers them as claimed. Two claimers never both get a delivery.
   */
  readonly claimDue: (input: {
    readonly now: DateTime.Utc
    readonly leaseUntil: DateTime.Utc
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<Delivery>>
  /**
   * The outbox at `now`, for its metrics: how many deliveries are pending (due, in flight, or waiting for a retry),
   * and when the one that has been due longest became due (none when nothing is due).
   */
  readonly outbox: (now: DateTime.Utc) => Effect.Effect<{
    readonly pending: number
    readonly oldestDue: Option.Option<DateTime.Utc>
  }>
  /**
   * Stores the delivery's new state (as core decided it after an attempt, or after giving up without one) in place
   * of the row with its id, together with the attempt, if any.
   */
  readonly recordAttempt: (delivery: Delivery, attempt: Option.Option<DeliveryAttempt>) => Effect.Effect<void>
  readonly getDelivery: (workspaceId: WorkspaceId, id: DeliveryId) => Effect.Effect<Option.Option<DeliveryRecord>>
  /** A page of the addressee's deliveries, newest first (created_at desc, id desc), each with its attempts, oldest first. */
  readonly listDeliveries: (addressee: Addressee, page: Page) => Effect.Effect<Slice<DeliveryRecord>>
  /** Deletes the deliveries (with their attempts) that are no longer pending and were created before `before`. */
  readonly purgeDeliveries: (before: DateTime.Utc) => Effect.Effect<void>

  /** Deletes the workspace's endpoints and deliveries (with their attempts). */
  readonly deleteByWorkspace: (workspaceId: WorkspaceId) => Effect.Effect<void>
}>() {}
