/**
 * The webhooks' side of recording an event (EventFanOut): one delivery per subscriber endpoint of the workspace,
 * written in the unit of work that records the event, carrying the envelope's exact bytes and the key the receiver
 * de-duplicates on. The worker (DeliveryWorker) sends them later; nothing here calls out.
 */
import { Effect, Layer, Schema } from "effect"
import { type DomainEvent, EventEnvelope } from "../events/Event.js"
import { EventFanOut } from "../events/EventFanOut.js"
import { Crypto } from "../ports/Crypto.js"
import { trusted } from "../shared/Trusted.js"
import { idempotencyKey } from "./Signer.js"
import { Delivery, DeliveryId } from "./Webhook.js"
import { WebhookStore } from "./WebhookStore.js"

/** The body every addressee of a first-party event receives: the document's envelope as JSON. */
export const envelopeBody = (event: DomainEvent): Effect.Effect<string> =>
  Effect.map(Effect.orDie(Schema.encode(EventEnvelope)(EventEnvelope.of(event))), (encoded) => JSON.stringify(encoded))

export const layer: Layer.Layer<EventFanOut, never, WebhookStore | Crypto> = Layer.effect(
  EventFanOut,
  Effect.gen(function*() {
    const store = yield* WebhookStore
    const crypto = yield* Crypto

    return EventFanOut.of({
      publish: (event) =>
        Effect.gen(function*() {
          const subscribers = yield* store.subscribers(event.workspace_id, event.type)
          if (subscribers.length === 0) return
          const body = yield* envelopeBody(event)
          const deliveries = yield* Effect.forEach(subscribers, (endpoint) =>
            Effect.gen(function*() {
              return new Delivery({
                id: DeliveryId.make(yield* crypto.randomUUID),
                workspace_id: event.workspace_id,
                addressee_kind: "workspace_endpoint",
                addressee_id: endpoint.id,
                event_id: event.id,
                event_type: event.type,
                occurred_at: event.occurred_at,
                body,
                idempotency_key: yield* idempotencyKey(event.type, event.id, endpoint.id).pipe(
                  Effect.provideService(Crypto, crypto)
                ),
                state: "pending",
                attempt_count: 0,
                // Due at once: the event's own instant (the worker compares with its clock).
                next_attempt_at: event.occurred_at,
                claimed_until: null,
                created_at: event.occurred_at,
                updated_at: event.occurred_at
              }, trusted)
            }))
          yield* store.enqueue(deliveries)
        })
    })
  })
)
