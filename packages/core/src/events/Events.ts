/**
 * Recording events: every service that changes something records its event through `record`, inside the same
 * unit of work as the change (the caller's `withTransaction`), so the log holds exactly the committed changes, and
 * the event's fan-out (EventFanOut: webhook deliveries) is written with it.
 */
import { Context, DateTime, Duration, Effect, Layer, Schema } from "effect"
import { Crypto } from "../ports/Crypto.js"
import { now } from "../shared/Time.js"
import { trusted } from "../shared/Trusted.js"
import type { Principal } from "../identity/Identity.js"
import { DomainEvent, type EventData, EventId, type EventType } from "./Event.js"
import { EventFanOut, type EventOrigin, requestOrigin } from "./EventFanOut.js"
import { EventLog } from "./EventLog.js"
import { fn } from "../shared/Span.js"

/** How long events stay readable in the log (the stream resumes within it): at least 24 hours; 7 days. */
export const eventRetention = Duration.days(7)

const make = Effect.gen(function*() {
  const log = yield* EventLog
  const crypto = yield* Crypto
  const fanOut = yield* EventFanOut

  /**
   * Records that `principal` caused `type` with `data` (the resource encoded as the API shows it); `origin` tells the
   * fan-outs how the change came about (a request, unless said otherwise).
   */
  const record = (
    principal: Pick<Principal, "workspace_id" | "user_id">,
    type: EventType,
    data: EventData,
    origin: EventOrigin = requestOrigin
  ) =>
    Effect.gen(function*() {
      const event = new DomainEvent({
        id: EventId.make(yield* crypto.randomUUID),
        type,
        workspace_id: principal.workspace_id,
        actor_user_id: principal.user_id,
        occurred_at: yield* now,
        data
      }, trusted)
      yield* log.append(event)
      yield* fanOut.publish(event, origin)
      return event
    })

  /** `record` of a resource encoded with its schema (timestamps as RFC 3339 text, as on the wire). */
  const recordOf = <A, I extends EventData>(schema: Schema.Schema<A, I>) =>
  (principal: Pick<Principal, "workspace_id" | "user_id">, type: EventType, value: A, origin: EventOrigin = requestOrigin) =>
    Effect.flatMap(Effect.orDie(Schema.encode(schema)(value)), (data) => record(principal, type, data, origin))

  /** Deletes events older than the retention. */
  const purge = fn("Events.purge")(function*() {
    yield* log.purge(DateTime.subtractDuration(yield* now, eventRetention))
  })

  return { record, recordOf, purge } as const
})

export class Events extends Context.Tag("@convene/core/Events")<Events, Effect.Effect.Success<typeof make>>() {
  static readonly layer: Layer.Layer<Events, never, EventLog | EventFanOut | Crypto> = Layer.effect(Events, make)
}
