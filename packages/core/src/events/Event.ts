/**
 * Events: what happened in a workspace, recorded in the same transaction as the change itself (the outbox), so
 * that an event is never lost between a committed change and its delivery, and never told for a change that
 * rolled back. Webhook deliveries and the event stream read them from the log.
 */
import { Schema } from "effect"
import { UserId, Uuid, WorkspaceId } from "../shared/Ids.js"
import { Timestamp } from "../shared/Time.js"

export const EventId = Uuid.pipe(Schema.brand("EventId"))
export type EventId = typeof EventId.Type

/** The event types a webhook endpoint or a stream may subscribe to (decisions.md). */
export const SubscribableEventTypes = [
  "meeting.created",
  "meeting.updated",
  "meeting.deleted",
  "meeting.ended",
  "agenda_item.created",
  "agenda_item.updated",
  "agenda_item.deleted",
  "action_item.created",
  "action_item.updated",
  "action_item.completed",
  "action_item.deleted",
  "participant.added",
  "participant.removed",
  "backlog_item.assigned",
  "context.uploaded",
  "attachment.uploaded"
] as const
export const SubscribableEventType = Schema.Literal(...SubscribableEventTypes).annotations({ identifier: "EventType" })
export type SubscribableEventType = typeof SubscribableEventType.Type

/** Every event type, the verification challenge (sent, never subscribed to) included. */
export const EventType = Schema.Literal(...SubscribableEventTypes, "webhook.verification")
export type EventType = typeof EventType.Type

/** The event's payload: the resource as the API shows it (for a deletion, its ids). */
export const EventData = Schema.Record({ key: Schema.String, value: Schema.Unknown })
export type EventData = typeof EventData.Type

/** An event as recorded. */
export class DomainEvent extends Schema.Class<DomainEvent>("DomainEvent")({
  id: EventId,
  type: EventType,
  workspace_id: WorkspaceId,
  /** The user whose request caused it; null for a workspace API key or the system. */
  actor_user_id: Schema.NullOr(UserId),
  occurred_at: Timestamp,
  data: EventData
}) {}

/** An event with its place in the log: positions grow in the order events become visible to readers. */
export class LoggedEvent extends Schema.Class<LoggedEvent>("LoggedEvent")({
  position: Schema.Number,
  event: DomainEvent
}) {}

/**
 * The envelope of the first-party document (webhook body and stream frame `data`): `event_type`, `event_id`,
 * `timestamp` (ISO 8601), `workspace_id`, `actor_user_id` (empty for system events), `data`.
 */
export class EventEnvelope extends Schema.Class<EventEnvelope>("EventEnvelope")({
  event_type: EventType,
  event_id: EventId,
  timestamp: Timestamp,
  workspace_id: WorkspaceId,
  actor_user_id: Schema.String,
  data: EventData
}) {
  static readonly of = (event: DomainEvent) =>
    new EventEnvelope({
      event_type: event.type,
      event_id: event.id,
      timestamp: event.occurred_at,
      workspace_id: event.workspace_id,
      actor_user_id: event.actor_user_id ?? "",
      data: event.data
    })
}
