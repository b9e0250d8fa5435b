import { Context, type Effect } from "effect"
import type { DomainEvent } from "./Event.js"

/**
 * How a change came about, for the fan-outs that tell changes apart (the partner webhooks): through a request or the
 * system (`Request`), or as a completion that an embedding host reconciled from an external to-do provider
 * (`ProviderReconciliation`, ActionItems.reconcileCompletion), naming the provider. The event log does not keep it:
 * the first-party event is the same whichever way the change came.
 */
export type EventOrigin =
  | { readonly _tag: "Request" }
  | { readonly _tag: "ProviderReconciliation"; readonly provider: string }

/** The origin of every change made through a request (or by the system). */
export const requestOrigin: EventOrigin = { _tag: "Request" }

/**
 * What else happens, in the same unit of work, when an event is recorded: a delivery is enqueued for every webhook
 * endpoint of the workspace that subscribes to it (webhooks/WebhookFanOut.ts), and for every partner app connected
 * to the workspace that is told of it, and every automation it triggers (partner/PartnerEvents.ts). The Events
 * service stays ignorant of who listens; a change that rolls back takes its deliveries with it, and one that commits
 * can never lose them.
 */
export class EventFanOut extends Context.Tag("@convene/core/EventFanOut")<EventFanOut, {
  readonly publish: (event: DomainEvent, origin: EventOrigin) => Effect.Effect<void>
}>() {}
