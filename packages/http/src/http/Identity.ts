import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Authentication, type DomainEvent, EventEnvelope, EventFeed, Tokens, Users } from "@convene/core"
import { Duration, Effect, Metric, Option, Schema, Stream } from "effect"
import { Api } from "@convene/api/Api"
import type { HostConfig } from "../Config.js"
import { Lifecycle } from "../Lifecycle.js"
import { asCaller } from "./Security.js"

const encodeEnvelope = Schema.encodeSync(EventEnvelope)

/** An event as a Server-Sent Events frame (decisions.md): id, event type, the webhook envelope as JSON. */
export const frameOf = (event: DomainEvent): string =>
  `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(encodeEnvelope(EventEnvelope.of(event)))}\n\n`

const keepAlive = ": keep-alive\n\n"

/** Event streams open in this process. */
const openStreams = Metric.gauge("convene_event_streams_open", { description: "event streams (GET /v1/user/events) open" })

export const IdentityLive = (config: HostConfig) =>
  HttpApiBuilder.group(Api, "identity", (handlers) =>
    Effect.gen(function*() {
      const authentication = yield* Authentication
      const tokens = yield* Tokens
      const users = yield* Users
      const feed = yield* EventFeed
      return handlers
        .handle("introspect", asCaller((principal) => Effect.succeed(authentication.introspect(principal))))
        .handle("listTokens", asCaller((principal, { urlParams }) => tokens.listForCaller(principal, urlParams)))
        .handle("issueToken", asCaller((principal, { payload }) => tokens.issueForCaller(principal, payload)))
        .handle("deleteToken", asCaller((principal, { path }) => tokens.revokeForCaller(principal, path.id)))
        .handle("me", asCaller((principal) => users.me(principal)))
        .handleRaw("events", asCaller((principal, { headers }) =>
          Effect.gen(function*() {
            const events = yield* feed.open(principal, Option.fromNullable(headers["last-event-id"]))
            // The stream ends when the server starts draining, so that its connection closes with the others.
            const draining = Option.match(yield* Effect.serviceOption(Lifecycle), {
              onNone: () => Effect.never,
              onSome: (lifecycle) => lifecycle.draining
            })
            const frames = Stream.merge(
              Stream.map(events, frameOf),
              Stream.map(Stream.tick(Duration.millis(config.limits.streamKeepAliveMs)), () => keepAlive)
            ).pipe(
              Stream.interruptWhen(draining),
              Stream.encodeText
            )
            const counted = Stream.unwrapScoped(
              Effect.as(Effect.acquireRelease(Metric.increment(openStreams), () => Metric.incrementBy(openStreams, -1)), frames)
            )
            return HttpServerResponse.stream(counted, {
              contentType: "text/event-stream",
              headers: { "cache-control": "no-store", "x-accel-buffering": "no" }
            })
          })))
    }))
