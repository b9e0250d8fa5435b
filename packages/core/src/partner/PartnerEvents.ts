/**
 * The partner apps' side of recording an event (EventFanOut, beside the workspace endpoints'): for every partner app
 * connected to the event's workspace, the partner webhooks the event calls for, and a call of every action of the
 * app's automations the event triggers. Each is a delivery in the one outbox, written in the unit of work that
 * records the event (so a committed change is always told, and a change that rolled back never is), carrying the
 * exact bytes to send; the worker sends them (DeliveryWorker, with PartnerDeliveries' rules) and signs them with the
 * app's webhook secret. Nothing here calls out.
 *
 * Decisions where the documents are silent:
 * - Webhooks (to the app's `webhook_url`): `action_item.updated` for every change of an action item, and
 *   `action_item.completed` for a completion made through the API, carrying `completed_by_user_id` (the user; null
 *   when a workspace API key completed it). Such a completion is a change of the item too, so it is also told as
 *   `action_item.updated` (the document's "current-state notification for an action item change"), with an event id
 *   of its own (derived from the completion's, the same for every app). A completion an embedding host reconciled
 *   from an external to-do provider (ActionItems.reconcileCompletion) is told only as `action_item.updated`, adding
 *   `reconciled_from` (the provider's name); never as `action_item.completed`. `data` is the action item as the
 *   first-party API shows it.
 * - The body is `{event_id, event_type, occurred_at, partner_app_id, workspace_id, data}`; an automation's call is
 *   `{automation_id, trigger_type, event_id, occurred_at, workspace_id, data}` with X-Svc-Event-Type the trigger
 *   type and X-Svc-Event-ID the event's id (Automation.ts says when each trigger fires).
 * - Every app connected to the workspace is told, if it is active and has a webhook secret (and, for webhooks, a
 *   `webhook_url`). An app suspended, or whose URL was cleared, after a delivery was enqueued does not get it
 *   (PartnerDeliveries).
 * - An app's webhook filter (`webhook_events`, set by the operator) lists the event types its webhooks are sent for;
 *   null sends every type. An event type it leaves out is not enqueued at all. Automations are not filtered: each
 *   says itself what triggers it.
 */
import { type Context, type DateTime, Effect, Schema } from "effect"
import { type DomainEvent, EventData, EventId } from "../events/Event.js"
import { EventFanOut, type EventOrigin } from "../events/EventFanOut.js"
import { Crypto } from "../ports/Crypto.js"
import { derivedUuid } from "../shared/DerivedId.js"
import { WorkspaceId } from "../shared/Ids.js"
import { Timestamp } from "../shared/Time.js"
import { trusted } from "../shared/Trusted.js"
import type { Delivery } from "../webhooks/Webhook.js"
import { pendingDelivery } from "../webhooks/WebhookFanOut.js"
import { WebhookStore } from "../webhooks/WebhookStore.js"
import { type Automation, AutomationId, TriggerType } from "./Automation.js"
import { AutomationStore } from "./AutomationStore.js"
import { type PartnerApp, PartnerAppId } from "./PartnerApp.js"
import { isSubscribed, PartnerEventType } from "./PartnerEventType.js"
import { PartnerStore } from "./PartnerStore.js"

export { isSubscribed, PartnerEventType } from "./PartnerEventType.js"

/**
 * A partner webhook's body (decisions.md). `workspace_id` is the workspace of the change; null for the events about
 * the app itself (its domain verifications).
 */
export class PartnerEventEnvelope extends Schema.Class<PartnerEventEnvelope>("PartnerEventEnvelope")({
  event_id: EventId,
  event_type: PartnerEventType,
  occurred_at: Timestamp,
  partner_app_id: PartnerAppId,
  workspace_id: Schema.NullOr(WorkspaceId),
  data: EventData
}) {}

/** The body of an automation's call (decisions.md). */
export class AutomationPayload extends Schema.Class<AutomationPayload>("AutomationPayload")({
  automation_id: AutomationId,
  trigger_type: TriggerType,
  event_id: EventId,
  occurred_at: Timestamp,
  workspace_id: WorkspaceId,
  data: EventData
}) {}

/** Why nothing is sent on the app's behalf (it is suspended, or has no secret to sign with), or undefined. */
const whyNotSigned = (app: PartnerApp): string | undefined =>
  app.status !== "active"
    ? "not sent: the partner app is suspended"
    : app.sealed_webhook_secret === null
    ? "not sent: the partner app has no webhook secret"
    : undefined

/** Why nothing is sent to the app at `url` (its webhook URL, or an action's), or undefined when it may be called. */
export const whyNotSent = (app: PartnerApp, url: string | null): string | undefined =>
  whyNotSigned(app) ?? (url === null ? "not sent: the partner app has no webhook URL" : undefined)

/** One partner webhook an event calls for: its type, its event id and its data. */
interface Notification {
  readonly type: PartnerEventType
  readonly id: EventId
  readonly data: EventData
}

/** An event id derived from another, the same wherever it is derived (derivedUuid of `type:eventId`). */
const derivedEventId = (type: string, eventId: EventId): Effect.Effect<EventId, never, Crypto> =>
  Effect.map(derivedUuid(`${type}:${eventId}`), (id) => EventId.make(id))

const encodeEnvelope = Schema.encode(PartnerEventEnvelope)

/** One partner webhook to an app: what its envelope says besides the app. */
export interface AppEvent {
  readonly type: PartnerEventType
  readonly id: EventId
  readonly workspaceId: WorkspaceId | null
  readonly occurredAt: DateTime.Utc
  readonly data: EventData
}

/** The delivery of `event` to the app's webhook URL: the partner envelope's exact bytes, in the outbox's shape. */
const appDelivery = (app: PartnerApp, event: AppEvent): Effect.Effect<Delivery, never, Crypto> =>
  Effect.gen(function*() {
    const body = yield* Effect.orDie(encodeEnvelope(
      new PartnerEventEnvelope({
        event_id: event.id,
        event_type: event.type,
        occurred_at: event.occurredAt,
        partner_app_id: app.id,
        workspace_id: event.workspaceId,
        data: event.data
      }, trusted)
    ))
    return yield* pendingDelivery({
      addressee: { kind: "partner_app", id: app.id },
      workspaceId: event.workspaceId,
      eventId: event.id,
      eventType: event.type,
      occurredAt: event.occurredAt,
      body: JSON.stringify(body)
    })
  })

/** Whether the app is told `type`: active, able to sign, with a webhook URL, and its webhook filter lets it through. */
export const isToldOf = (app: PartnerApp, type: PartnerEventType): boolean =>
  whyNotSent(app, app.webhook_url) === undefined && isSubscribed(app.webhook_events, type)

/**
 * Enqueues one partner webhook about the app's own business (a domain verification, a button triggered, a workflow
 * run) to the app's webhook URL, in the caller's unit of work: run it inside the Transactor.withTransaction that
 * records the change, so that the change and its delivery commit or roll back together. Nothing is enqueued when the
 * app is not told (isToldOf: suspended, no webhook secret or URL, or its filter leaves the type out). Answers whether
 * a delivery was enqueued.
 */
export const tellApp = (app: PartnerApp, event: AppEvent): Effect.Effect<boolean, never, WebhookStore | Crypto> =>
  Effect.gen(function*() {
    if (!isToldOf(app, event.type)) return false
    const outbox = yield* WebhookStore
    yield* outbox.enqueue([yield* appDelivery(app, event)])
    return true
  })

/** The data of a completion made through the API: the item and who completed it. */
const completedBy = (event: DomainEvent): EventData => ({ ...event.data, completed_by_user_id: event.actor_user_id })

/** The partner webhooks `event` calls for. */
const notificationsOf = (event: DomainEvent, origin: EventOrigin): Effect.Effect<ReadonlyArray<Notification>, never, Crypto> => {
  switch (event.type) {
    case "action_item.updated":
      return Effect.succeed([{ type: "action_item.updated", id: event.id, data: event.data }])
    case "action_item.completed":
      if (origin._tag === "ProviderReconciliation") {
        return Effect.succeed([{ type: "action_item.updated", id: event.id, data: { ...event.data, reconciled_from: origin.provider } }])
      }
      return Effect.map(derivedEventId("action_item.updated", event.id), (updatedId) => [
        { type: "action_item.completed", id: event.id, data: completedBy(event) },
        { type: "action_item.updated", id: updatedId, data: event.data }
      ])
    default:
      return Effect.succeed([])
  }
}

/** The trigger `event` fires, if any, with the data the automations' calls carry. */
const triggerOf = (
  event: DomainEvent,
  origin: EventOrigin
): { readonly trigger: TriggerType; readonly data: EventData } | undefined => {
  switch (event.type) {
    case "action_item.created":
      return { trigger: "action_item_created", data: event.data }
    case "action_item.completed":
      return origin._tag === "Request" ? { trigger: "action_item_completed", data: completedBy(event) } : undefined
    case "meeting.ended":
      return { trigger: "meeting_ended", data: event.data }
    default:
      return undefined
  }
}

const encodePayload = Schema.encode(AutomationPayload)

/** The partner apps' fan-out (see the module's decisions). */
export const make: Effect.Effect<
  Context.Tag.Service<typeof EventFanOut>,
  never,
  PartnerStore | AutomationStore | WebhookStore | Crypto
> = Effect.gen(function*() {
  const partners = yield* PartnerStore
  const automations = yield* AutomationStore
  const outbox = yield* WebhookStore
  const crypto = yield* Crypto

  const webhooksOf = (event: DomainEvent, app: PartnerApp, notifications: ReadonlyArray<Notification>) =>
    Effect.forEach(
      notifications.filter((notification) => isToldOf(app, notification.type)),
      (notification) =>
        appDelivery(app, {
          type: notification.type,
          id: notification.id,
          workspaceId: event.workspace_id,
          occurredAt: event.occurred_at,
          data: notification.data
        })
    )

  const callsOf = (event: DomainEvent, fired: { readonly trigger: TriggerType; readonly data: EventData }, automation: Automation) =>
    Effect.gen(function*() {
      const body = JSON.stringify(
        yield* Effect.orDie(encodePayload(
          new AutomationPayload({
            automation_id: automation.id,
            trigger_type: fired.trigger,
            event_id: event.id,
            occurred_at: event.occurred_at,
            workspace_id: event.workspace_id,
            data: fired.data
          }, trusted)
        ))
      )
      return yield* Effect.forEach(automation.actions, (action) =>
        pendingDelivery({
          addressee: { kind: "partner_automation_action", id: action.id },
          workspaceId: event.workspace_id,
          eventId: event.id,
          eventType: fired.trigger,
          occurredAt: event.occurred_at,
          body
        }))
    })

  return EventFanOut.of({
    publish: (event, origin) =>
      Effect.gen(function*() {
        const fired = triggerOf(event, origin)
        const notifications = yield* notificationsOf(event, origin)
        if (fired === undefined && notifications.length === 0) return
        // Told only while active and able to sign (whether it has a webhook URL is the webhooks' own question).
        const apps = (yield* partners.connectedApps(event.workspace_id)).filter((app) => whyNotSigned(app) === undefined)
        if (apps.length === 0) return
        const deliveries: Array<Delivery> = []
        for (const app of apps) deliveries.push(...(yield* webhooksOf(event, app, notifications)))
        if (fired !== undefined) {
          const triggered = yield* automations.withTrigger(apps.map((app) => app.id), fired.trigger)
          for (const automation of triggered) {
            if (automation.enabled) deliveries.push(...(yield* callsOf(event, fired, automation)))
          }
        }
        if (deliveries.length > 0) yield* outbox.enqueue(deliveries)
      }).pipe(Effect.provideService(Crypto, crypto))
  })
})
