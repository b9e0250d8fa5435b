import { Context, type Effect } from "effect"
import type { DomainEvent } from "./Event.js"

/**
 * What else happens, in the same unit of work, when an event is recorded: today, a delivery is enqueued for every
 * webhook endpoint of the workspace that subscribes to it (webhooks/WebhookFanOut.ts). The Events service stays
 * ignorant of who listens; a change that rolls back takes its deliveries with it, and one that commits can never
 * lose them.
 */
export class EventFanOut extends Context.Tag("@convene/core/EventFanOut")<EventFanOut, {
  readonly publish: (event: DomainEvent) => Effect.Effect<void>
}>() {}
