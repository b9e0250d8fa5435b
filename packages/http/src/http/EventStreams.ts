/**
 * GET /v1/user/events on Node. An open stream is its Node response and a few small records: the request's fiber
 * ends once the head is written (see `takeOver`), and the core's event feed (EventFeed.attach) hands each poll's
 * events to the stream through a callback, so an idle stream costs about what its connection costs Node
 * (docs/benchmarks.md). One timer writes the `: keep-alive` comment to every stream; when the server starts
 * draining every stream ends (its client reconnects elsewhere with Last-Event-ID). A client that reads too slowly
 * (over 1 MiB of frames waiting) is cut off, and catches up when it reconnects.
 *
 * A stream's access log line is written when it opens, with status 200 and the time it took to open: the gate
 * (Lifecycle.ts) writes it once the app has answered, and for a stream that is when its head is about to be sent.
 */
import * as Cookies from "@effect/platform/Cookies"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { type DomainEvent, EventEnvelope, EventFeed, type Principal } from "@convene/core"
import { Context, type Duration, Effect, Layer, Metric, Option, Runtime, Schedule, Schema } from "effect"
import type { ServerResponse } from "node:http"
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

/**
 * One open stream: the Node response it is written to. Until its head is written (`live`), what it is given
 * waits in `early`: the opening comment, and the events a resume replays while the request is being answered.
 * Ten thousand of these are held at once, so a stream keeps what it needs and nothing of its request.
 */
class OpenStream {
  private early: string | undefined = keepAlive
  /** Ended by the server (the drain): nothing more is written, and the response ends once its head is out. */
  private ended = false
  /** Takes the stream off the feed (the feed's, once attached). */
  detach: Effect.Effect<void> = Effect.void

  constructor(
    readonly response: ServerResponse,
    /** Runs once its response has closed. */
    private readonly onClosed: (stream: OpenStream) => void
  ) {}

  /** What the feed hands the stream's events to. */
  readonly push = (events: ReadonlyArray<DomainEvent>): void => {
    for (const event of events) this.write(frameOf(event))
  }

  /** Its response's close listener: however the stream ends, its response closes. */
  readonly closed = (): void => this.onClosed(this)

  write(text: string): void {
    if (this.ended) return
    if (this.early !== undefined) {
      this.early += text
      // A resume that replays more than a slow client may have waiting is sent up to there, and then the stream
      // ends: its client resumes after the last frame it got.
      if (this.early.length > maxWaiting) this.ended = true
      return
    }
    // A stream cut off is out of the open streams only once its close event has run: until then, writes are dropped.
    if (this.response.destroyed) return
    if (this.response.writableLength > maxWaiting) this.response.destroy()
    else this.response.write(text)
  }

  /** After the head: what waited is sent, and the stream ends at once if the server ended it meanwhile. */
  live(): void {
    const early = this.early ?? ""
    this.early = undefined
    if (this.ended) this.response.end(early)
    else this.response.write(early)
  }

  end(): void {
    if (this.ended) return
    this.ended = true
    if (this.early === undefined && !this.response.destroyed) this.response.end()
  }
}

/** The response's headers as the platform would write them (cookies included, though a stream sets none). */
const headersOf = (response: HttpServerResponse.HttpServerResponse): Record<string, string | Array<string>> =>
  Cookies.isEmpty(response.cookies)
    ? response.headers
    : { ...response.headers, "set-cookie": Cookies.toSetCookieHeaders(response.cookies) }

/** What the platform is told a stream's Node response is, once the stream has it (see `leaveToStream`). */
const alreadyAnswered = { writableEnded: true }

/**
 * Leaves the stream's response to the stream, and lets the request's fiber go. This relies on the internals of
 * the platform's Node server (@effect/platform-node, `handleResponse` and `makeHandler`), not on its API:
 * - Once the pre-response handlers are done, `handleResponse` would write the head and then pipe a body in the
 *   request's fiber, keeping that fiber and everything the request gathered (its rings' continuations, context,
 *   scope) alive as long as the stream is open. It writes nothing for a response that has already ended, and it
 *   finds the response through the request's `resolvedResponse` (a getter of its ServerRequestImpl, read nowhere
 *   else): for this request, that is a response which has ended. The Node response itself is left as it is.
 * - `makeHandler` listens for the response's close, to interrupt the request's fiber if it is still running then.
 *   That fiber ends now, but the listener would keep it (about 3.5 KB) as long as the stream is open. The listeners
 *   the response had before the stream added its own are that one: they are removed.
 */
const leaveToStream = (request: HttpServerRequest.HttpServerRequest, stream: OpenStream): void => {
  Object.defineProperty(request, "resolvedResponse", { value: alreadyAnswered })
  const listeners = stream.response.listeners("close")
  const own = listeners.indexOf(stream.closed)
  for (const listener of listeners.slice(0, Math.max(own, 0))) {
    stream.response.removeListener("close", listener as (...args: Array<unknown>) => void)
  }
}

/**
 * The pre-response handler of a stream's request: the last to run, so the answer it gets has every header the
 * rings around the API gave it (X-Request-Id, Connection: close during a drain). It writes the head, then what
 * waited, and leaves the platform out. Any other answer (a failure after the stream was attached) goes on as it
 * is, and so does a HEAD request's: the response's close detaches the stream.
 */
const takeOver = (stream: OpenStream, body: HttpServerResponse.HttpServerResponse["body"]): HttpApp.PreResponseHandler =>
(request, response) =>
  Effect.sync(() => {
    const node = stream.response
    if (response.body !== body || request.method === "HEAD" || node.headersSent || node.destroyed) return response
    node.writeHead(response.status, headersOf(response))
    // Sent on its own, the head is written from one flat string; sent along with the first frame it stays the
    // rope of some thirty pieces Node built it from, about 700 bytes more for as long as the stream is open.
    node.flushHeaders()
    stream.live()
    leaveToStream(request, stream)
    return response
  })

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
      const runFork = Runtime.runFork(yield* Effect.runtime<never>())
      const streams = new Set<OpenStream>()
      let draining = false
      const endAll = Effect.sync(() => {
        draining = true
        for (const stream of streams) stream.end()
      })
      yield* Effect.sync(() => {
        for (const stream of streams) stream.write(keepAlive)
      }).pipe(Effect.repeat(Schedule.spaced(settings.keepAlive)), Effect.forkScoped)
      const lifecycle = yield* Effect.serviceOption(Lifecycle)
      if (Option.isSome(lifecycle)) yield* Effect.forkScoped(Effect.zipRight(lifecycle.value.draining, endAll))
      yield* Effect.addFinalizer(() => endAll)

      // However a stream ends (the client going away, cut off, ended by the drain, or its request answered
      // otherwise), its response closes: the stream is taken off the feed then, which gives its slot back.
      const whenClosed = (stream: OpenStream) => {
        streams.delete(stream)
        runFork(Effect.zipRight(stream.detach, Metric.incrementBy(openStreams, -1)))
      }

      return EventStreams.of({
        open: (principal, lastEventId) =>
          Effect.gen(function*() {
            const request = yield* HttpServerRequest.HttpServerRequest
            const stream = new OpenStream(NodeHttpServerRequest.toServerResponse(request), whenClosed)
            // Attached and registered in one uninterruptible region, so that the detach the feed returns is never
            // lost to an interruption (the client going away, the drain cutting the request off); the feed's replay
            // stays interruptible, and detaches by itself when interrupted.
            yield* Effect.uninterruptible(Effect.gen(function*() {
              stream.detach = yield* feed.attach(principal, lastEventId, stream.push)
              yield* Metric.increment(openStreams)
              streams.add(stream)
              // Opened after the drain began: it ends as soon as its head is out.
              if (draining) stream.end()
              // Close is emitted once; a response already closed (the client went away meanwhile) emits no more.
              if (stream.response.closed) stream.closed()
              else stream.response.on("close", stream.closed)
            }))
            const answer = HttpServerResponse.raw(keepAlive, {
              contentType: "text/event-stream",
              headers: { "cache-control": "no-store", "x-accel-buffering": "no" }
            })
            yield* HttpApp.appendPreResponseHandler(takeOver(stream, answer.body))
            return answer
          })
      })
    })
  )
