/**
 * GET /v1/user/events on Node: each open stream is a PassThrough piped to its response, fed by the core's event
 * feed (EventFeed.attach) from the workspace's poller. No fiber per stream, so ten thousand idle streams cost
 * their sockets and buffers. One timer writes the `: keep-alive` comment to every stream; when the server starts
 * draining every stream ends (its client reconnects elsewhere with Last-Event-ID). A client that reads too
 * slowly (over 1 MiB of frames waiting) is cut off, and catches up when it reconnects.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { type DomainEvent, EventEnvelope, EventFeed, type Principal } from "@convene/core"
import { Context, type Duration, Effect, Layer, Metric, Option, Runtime, Schedule, Schema } from "effect"
import { PassThrough } from "node:stream"
import { Lifecycle } from "../Lifecycle.js"

const encodeEnvelope = Schema.encodeSync(EventEnvelope)

/** An event as a Server-Sent Events frame (decisions.md): id, event type, the webhook envelope as JSON. */
export const frameOf = (event: DomainEvent): string =>
  `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(encodeEnvelope(EventEnvelope.of(event)))}\n\n`

const keepAlive = ": keep-alive\n\n"

/** Frames waiting for a slow client, at most; beyond, the stream is cut off. */
const maxWaiting = 1024 * 1024

/** Event streams open in this process. */
const openStreams = Metric.gauge("convene_event_streams_open", { description: "event streams (GET /v1/user/events) open" })

export class EventStreams extends Context.Tag("@convene/http/EventStreams")<EventStreams, {
  /** The stream's answer for `principal`, or why it may not have one (InsufficientScope, TooManyStreams). */
  readonly open: (
    principal: Principal,
    lastEventId: Option.Option<string>
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse, Effect.Effect.Error<ReturnType<EventFeed["Type"]["attach"]>>, HttpServerRequest.HttpServerRequest>
}>() {}

export const layer = (settings: { readonly keepAlive: Duration.Duration }) =>
  Layer.scoped(
    EventStreams,
    Effect.gen(function*() {
      const feed = yield* EventFeed
      const runtime = yield* Effect.runtime<never>()
      const streams = new Set<PassThrough>()
      const endAll = Effect.sync(() => {
        for (const stream of streams) stream.end()
      })
      yield* Effect.sync(() => {
        for (const stream of streams) if (!stream.destroyed) stream.write(keepAlive)
      }).pipe(Effect.repeat(Schedule.spaced(settings.keepAlive)), Effect.forkScoped)
      const lifecycle = yield* Effect.serviceOption(Lifecycle)
      if (Option.isSome(lifecycle)) yield* Effect.forkScoped(Effect.zipRight(lifecycle.value.draining, endAll))
      yield* Effect.addFinalizer(() => endAll)

      return EventStreams.of({
        open: (principal, lastEventId) =>
          Effect.gen(function*() {
            const body = new PassThrough()
            // A stream cut off is out of `streams` only once its close event has run: until then, writes are dropped.
            const write = (text: string) => {
              if (body.destroyed) return
              if (body.writableLength > maxWaiting) body.destroy()
              else body.write(text)
            }
            const detach = yield* feed.attach(principal, lastEventId, (events) => {
              for (const event of events) write(frameOf(event))
            })
            streams.add(body)
            Runtime.runSync(runtime)(Metric.increment(openStreams))
            body.once("close", () => {
              streams.delete(body)
              Runtime.runFork(runtime)(Effect.zipRight(detach, Metric.incrementBy(openStreams, -1)))
            })
            // The client going away ends the stream whether or not its body was piped yet.
            const request = yield* HttpServerRequest.HttpServerRequest
            NodeHttpServerRequest.toServerResponse(request).once("close", () => body.destroy())
            body.write(keepAlive)
            return HttpServerResponse.raw(body, {
              contentType: "text/event-stream",
              headers: { "cache-control": "no-store", "x-accel-buffering": "no" }
            })
          })
      })
    })
  )
