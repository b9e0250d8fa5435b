/**
 * The webhooks' side of recording an event (EventFanOut): one delivery per subscriber endpoint of the workspace,
 * written in the unit of work that records the event, carrying the envelope's exact bytes and the key the receiver
 * de-duplicates on. The worker (DeliveryWorker) sends them later; nothing here calls out.
 */
import { type Context, type DateTime, Effect, Layer, Schema } from "effect"
import { type DomainEvent, EventEnvelope, type EventId } from "../events/Event.js"
import { EventFanOut } from "../events/EventFanOut.js"
import { Crypto } from "../ports/Crypto.js"
import type { WorkspaceId } from "../shared/Ids.js"
import { trusted } from "../shared/Trusted.js"
import { idempotencyKey } from "./Signer.js"
import { type Addressee, Delivery, DeliveryId } from "./Webhook.js"
import { WebhookStore } from "./WebhookStore.js"

/** The body every addressee of a first-party event receives: the document's envelope as JSON. */
export const envelopeBody = (event: DomainEvent): Effect.Effect<string> =>
  Effect.map(Effect.orDie(Schema.encode(EventEnvelope)(EventEnvelope.of(event))), (encoded) => JSON.stringify(encoded))

/**
 * A new delivery of `body` to `addressee`, due at once (at the event's own instant: the worker compares it with its
 * clock), with a fresh id and the addressee's de-duplication key of the event. Whatever the kind of addressee, every
 * fan-out enqueues what this makes, in the unit of work of the change.
 */
export const pendingDelivery = (input: {
  readonly addressee: Addressee
  readonly workspaceId: WorkspaceId | null
  readonly eventId: EventId
  readonly eventType: string
  readonly occurredAt: DateTime.Utc
  readonly body: string
}): Effect.Effect<Delivery, never, Crypto> =>
  Effect.gen(function*() {
    const crypto = yield* Crypto
    return new Delivery({
      id: DeliveryId.make(yield* crypto.randomUUID),
      workspace_id: input.workspaceId,
      addressee_kind: input.addressee.kind,
      addressee_id: input.addressee.id,
      event_id: input.eventId,
      event_type: input.eventType,
      occurred_at: input.occurredAt,
      body: input.body,
      idempotency_key: yield* idempotencyKey(input.eventType, input.eventId, input.addressee.id),
      state: "pending",
      attempt_count: 0,
      next_attempt_at: input.occurredAt,
      claimed_until: null,
      created_at: input.occurredAt,
      updated_at: input.occurredAt
    }, trusted)
  })

/** The workspace endpoints' fan-out: one delivery of the envelope per subscriber of the event's type. */
export const make: Effect.Effect<Context.Tag.Service<typeof EventFanOut>, never, WebhookStore | Crypto> = Effect.gen(function*() {
  const store = yield* WebhookStore
  const crypto = yield* Crypto

  return EventFanOut.of({
    publish: (event) =>
      Effect.gen(function*() {
        const subscribers = yield* store.subscribers(event.workspace_id, event.type)
        if (subscribers.length === 0) return
        const body = yield* envelopeBody(event)
        const deliveries = yield* Effect.forEach(subscribers, (endpoint) =>
          pendingDelivery({
            addressee: { kind: "workspace_endpoint", id: endpoint.id },
            workspaceId: event.workspace_id,
            eventId: event.id,
            eventType: event.type,
            occurredAt: event.occurred_at,
            body
          }))
        yield* store.enqueue(deliveries)
      }).pipe(Effect.provideService(Crypto, crypto))
  })
})

export const layer: Layer.Layer<EventFanOut, never, WebhookStore | Crypto> = Layer.effect(EventFanOut, make)
