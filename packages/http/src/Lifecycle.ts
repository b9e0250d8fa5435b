/**
 * The server's life: it listens before its store is ready, serves the API once it is, and drains when it
 * stops.
 *
 * - `starting`: the socket is open, the store is not ready yet (a PostgreSQL server still coming up, the
 *   embedded database being created). `GET /healthz` answers 200 (the process is alive), `GET /readyz` 503,
 *   everything else 503 `service_unavailable` with Retry-After.
 * - `ready`: every request goes to the API.
 * - `draining`: the server stopped accepting connections. Requests already received are served to the end, and
 *   the connections they came on are closed after their answers (`Connection: close`); `/readyz` is 503. Idle
 *   keep-alive connections are closed after a short grace (500 ms, or a quarter of a shorter drain time), so
 *   that a request already on its way is served rather than met with a reset. What is still running when the
 *   drain time is up is answered 503 `service_unavailable` (its transaction, if any, is rolled back), and what
 *   is left of the connections is closed.
 *
 * The API is built later than the socket, so it is served through a stand-in `HttpServer` (`apiServer`) that
 * hands the app to the gate instead of to Node: the API's layers (ServeLive) are the same whether they run
 * here or on `NodeHttpServer.layerTest`.
 *
 * The gate is a Node request listener in front of the platform's own handler (`NodeHttpServer.makeHandler`: the
 * platform's request and response, its pipeline), not an Effect around it: every request costs the one fiber the
 * platform runs it in and a few plain calls, and the access line is handed to the loggers directly. (As an Effect
 * that forked the API's fiber, joined it and logged through `Effect.log`, the gate cost about 190 µs of CPU a
 * request, a third of a GET on the in-memory store: docs/benchmarks.md.)
 */
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Crypto } from "@convene/core"
import {
  Cause,
  Context,
  Deferred,
  Duration,
  Effect,
  Exit,
  Fiber,
  FiberId,
  FiberRef,
  HashMap,
  HashSet,
  Layer,
  List,
  LogLevel,
  Option,
  Redacted,
  Schedule
} from "effect"
import { type IncomingMessage, type Server, type ServerResponse, validateHeaderName, validateHeaderValue } from "node:http"
import * as Net from "node:net"
import { performance } from "node:perf_hooks"
import { envelope } from "@convene/api/Errors"
import { envelopeFor } from "@convene/api/Partner"
import { recordInFlight, recordRequest } from "./http/Metrics.js"
import * as RequestLog from "./http/RequestLog.js"

export type Phase = "starting" | "ready" | "draining"

/** What the API's health endpoints read: the server's phase. */
export class Lifecycle extends Context.Tag("@convene/http/Lifecycle")<Lifecycle, {
  readonly phase: () => Phase
  /** Completes when the drain starts: long-lived answers (event streams) end then, so their connections close. */
  readonly draining: Effect.Effect<void>
}>() {}

type Response = HttpServerResponse.HttpServerResponse
type NodeHandler = (request: IncomingMessage, response: ServerResponse) => void

/** A request the API is working on. */
interface InFlight {
  readonly request: IncomingMessage
  readonly response: ServerResponse
  readonly entry: RequestLog.RequestLogEntry
  readonly started: number
  /** The fiber the platform runs it in, once it has started. */
  fiber: Fiber.RuntimeFiber<unknown, unknown> | undefined
  /** The API has given its answer (the platform is about to write it). */
  answered: boolean
  /** The client went away before the answer was written: the request is finished, and its answer dropped. */
  gone: boolean
}

/** The mutable state behind the gate (one per server). */
class Gate {
  phase: Phase = "starting"
  /** The API's handler, once it is served. */
  handler: NodeHandler | undefined = undefined
  /** The requests the API is working on, so that a drain can wait for them or cut them off. */
  readonly running = new Set<InFlight>()
  /** Set once the drain time is up: what is still running is answered 503. */
  cutOff = false
  /** Completed when the drain starts. */
  readonly drainStarted = Deferred.unsafeMake<void>(FiberId.none)
}

const unavailable = (url: string, text: string, requestId: string, headers: Record<string, string>): Response =>
  HttpServerResponse.unsafeJson(envelopeFor(url, "service_unavailable", text, requestId), {
    status: 503,
    headers: { ...headers, "x-request-id": requestId }
  })

const pathOf = (url: string) => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}

/** The answers while the store is not ready: liveness yes, readiness no, everything else later. */
const whileStarting = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const path = pathOf(request.url)
  if (request.method === "GET" && path === "/healthz") return HttpServerResponse.unsafeJson({ status: "ok" })
  if (request.method === "GET" && path === "/readyz") {
    return HttpServerResponse.unsafeJson({ status: "starting" }, { status: 503, headers: { "retry-after": "1" } })
  }
  const requestId = yield* Effect.flatMap(Crypto, (crypto) => crypto.randomUUID)
  return unavailable(request.url, "the server is starting and its store is not ready yet; retry shortly", requestId, {
    "retry-after": "1"
  })
})

/** What the gate does with every request. */
export interface GateOptions {
  /** Write an access line for every request (else only for those answered 5xx). */
  readonly accessLog: boolean
  /** `GET /metrics` on this server: the scrape, and the token it needs (none: 404). */
  readonly metrics: Option.Option<{ readonly token: Redacted.Redacted<string>; readonly scrape: Effect.Effect<string> }>
}

/** Probes are frequent and say nothing new: debug. Otherwise 5xx error, 4xx warning, the rest info. */
const levelOf = (status: number, route: string | undefined) =>
  route === "/healthz" || route === "/readyz"
    ? LogLevel.Debug
    : status >= 500
    ? LogLevel.Error
    : status >= 400
    ? LogLevel.Warning
    : LogLevel.Info

/**
 * One access line per request, after its answer: request id, method, route template, status, duration, and
 * who called (credential kind and id, workspace). A 5xx is an error line with its cause; a 4xx a warning. It goes
 * to the loggers and at the minimum level the request's fiber has, as `Effect.log` would send it, without running
 * an Effect for it.
 */
const writeAccessLine = (fiber: Fiber.RuntimeFiber<unknown, unknown>, flight: InFlight, status: number) => {
  const { entry } = flight
  const level = levelOf(status, entry.route)
  if (LogLevel.lessThan(level, fiber.getFiberRef(FiberRef.currentMinimumLogLevel))) return
  const loggers = fiber.getFiberRef(FiberRef.currentLoggers)
  if (HashSet.size(loggers) === 0) return
  const annotations = HashMap.make(
    ["request_id", entry.requestId ?? null],
    ["method", flight.request.method ?? null],
    ["route", entry.route ?? null],
    ["status", status],
    ["duration_ms", Math.round((performance.now() - flight.started) * 100) / 100],
    ["credential_kind", entry.credentialKind ?? null],
    ["credential_id", entry.credentialId ?? null],
    ["workspace_id", entry.workspaceId ?? null]
  )
  const options = {
    fiberId: fiber.id(),
    logLevel: level,
    message: "request",
    cause: (entry.cause ?? Cause.empty) as Cause.Cause<unknown>,
    context: fiber.getFiberRefs(),
    spans: List.empty(),
    annotations: annotations as HashMap.HashMap<string, unknown>,
    date: new Date()
  }
  for (const logger of loggers) logger.log(options)
}

/**
 * `GET /metrics` with the operator token: the metrics in Prometheus' text format. Without the right token 401
 * in the envelope; with the operator API off the path does not exist (404, as the API answers it).
 */
const metricsAnswer = (
  request: HttpServerRequest.HttpServerRequest,
  metrics: { readonly token: Redacted.Redacted<string>; readonly scrape: Effect.Effect<string> }
) =>
  Effect.gen(function*() {
    const crypto = yield* Crypto
    const presented = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? "")?.[1] ?? ""
    if (!crypto.timingSafeEqual(presented, Redacted.value(metrics.token))) {
      const requestId = yield* crypto.randomUUID
      const body = presented === ""
        ? envelope("unauthorized", "the operator token is required", requestId)
        : envelope("invalid_token", "the operator token is not valid", requestId)
      return HttpServerResponse.unsafeJson(body, {
        status: 401,
        headers: { "x-request-id": requestId, "www-authenticate": "Bearer" }
      })
    }
    return HttpServerResponse.text(yield* metrics.scrape, { contentType: "text/plain; version=0.0.4; charset=utf-8" })
  })

/** What the gate answers itself: /metrics, and everything while the API is not served yet. */
const gateApp = (options: GateOptions) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    Option.isSome(options.metrics) && request.url === "/metrics" && request.method === "GET"
      ? metricsAnswer(request, options.metrics.value)
      : whileStarting)

/**
 * Why Node would refuse to write the answer's head (a header name or value with a character it does not
 * allow, such as CR or LF), or undefined. Node throws while the platform writes the head, after the API has
 * answered, and the platform then answers 500 without a body and without a log line; so the gate checks the
 * head itself, with Node's own validators, and answers such a response as any other 500.
 */
const headProblem = (response: Response): unknown => {
  for (const [name, value] of Object.entries(response.headers)) {
    try {
      validateHeaderName(name)
      validateHeaderValue(name, value)
    } catch (error) {
      return error
    }
  }
  return undefined
}

/** Writes a failure in the envelope straight to Node's response, when nothing has been written yet. */
const writeFailure = (response: ServerResponse, status: 500 | 503, code: string, text: string, requestId: string, headers: Record<string, string>) => {
  if (response.headersSent || response.destroyed) return
  const body = JSON.stringify(envelopeFor(response.req?.url, code, text, requestId))
  response.writeHead(status, {
    ...headers,
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body)),
    "x-request-id": requestId
  })
  response.end(body)
}

/** The request being served, as the gate registered it (none when the API runs without the gate). */
const inFlight = new WeakMap<object, InFlight>()

const flightOf = (request: HttpServerRequest.HttpServerRequest): InFlight | undefined => {
  const source = request.source
  return typeof source === "object" && source !== null ? inFlight.get(source) : undefined
}

type OnEnd = (flight: InFlight, fiber: Fiber.RuntimeFiber<unknown, unknown>, exit: Exit.Exit<unknown, unknown>) => void

/**
 * Around everything the platform runs for a request (the host's rings, the API, the writing of the answer): the
 * request's fiber registered for the drain (the platform runs requests uninterruptibly, so this always runs first),
 * and made interruptible. One the drain cuts off is answered 503 in the envelope here; the platform's own answer to
 * an interruption is a bare 503.
 */
const registered = (gate: Gate, newId: () => string, onEnd: OnEnd) =>
<E, R>(handled: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.withFiberRuntime<Response, E, R | HttpServerRequest.HttpServerRequest>((fiber) => {
    const flight = flightOf(Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest))
    if (flight === undefined) return Effect.interruptible(handled)
    flight.fiber = fiber
    fiber.addObserver((exit) => onEnd(flight, fiber, exit))
    return Effect.catchAllCause(Effect.interruptible(handled), (cause) => {
      if (!gate.cutOff || !Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
      writeFailure(
        flight.response,
        503,
        "service_unavailable",
        "the server shut down before this request was answered; retry",
        flight.entry.requestId ?? newId(),
        { connection: "close", "retry-after": "1" }
      )
      // Written already: the platform writes nothing more for an ended response.
      return Effect.succeed(HttpServerResponse.empty({ status: 503 }))
    })
  })

/**
 * The first of the pre-response handlers of every request the gate serves (set once, for all of them): the head
 * checked, and for a client that went away meanwhile, Node's response ended without a word, so that the platform
 * writes nothing (it would wait for ever for a write to a closed connection to end). The other pre-response
 * handlers (X-Request-Id, X-RateLimit-*) come after it and only add headers of their own.
 */
const beforeWrite = (newId: () => string): HttpApp.PreResponseHandler => (request, response) => {
  const flight = flightOf(request)
  if (flight !== undefined) {
    flight.answered = true
    if (flight.gone) flight.response.end()
  }
  const problem = headProblem(response)
  if (problem === undefined) return Effect.succeed(response)
  if (flight !== undefined) flight.entry.cause = Cause.die(problem)
  const requestId = flight?.entry.requestId ?? newId()
  return Effect.succeed(HttpServerResponse.unsafeJson(
    envelopeFor(request.url, "internal_server_error", "an unexpected error occurred; retry with backoff", requestId),
    { status: 500, headers: { "x-request-id": requestId } }
  ))
}

/**
 * An `HttpServer` that serves nothing itself: the app given to it is what the gate passes requests to, through the
 * platform's Node handler. Its address is the real server's.
 */
const apiServer = (gate: Gate, address: HttpServer.Address, newId: () => string, onEnd: OnEnd): HttpServer.HttpServer =>
  HttpServer.make({
    address,
    serve: (app, middleware) =>
      Effect.gen(function*() {
        const outer = registered(gate, newId, onEnd)
        gate.handler = yield* NodeHttpServer.makeHandler(
          app,
          (handled) => outer(middleware === undefined ? handled : middleware(handled))
        ).pipe(Effect.locally(HttpApp.currentPreResponseHandlers, Option.some(beforeWrite(newId))))
        gate.phase = "ready"
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => {
            gate.handler = undefined
          })
        )
      })
  })

/** The running Node server and its gate, for the drain. */
export class ServerControl extends Context.Tag("@convene/http/Lifecycle/ServerControl")<ServerControl, {
  readonly gate: Gate
  readonly server: Server
}>() {}

/**
 * The gate on Node's server, given the server itself and the `HttpServer` listening on it (for its address):
 * provides the stand-in `HttpServer` the API is served on, the `Lifecycle`, and what `drainOnClose` needs.
 */
export const layer = (
  server: Server,
  options: GateOptions
): Layer.Layer<HttpServer.HttpServer | Lifecycle | ServerControl, never, HttpServer.HttpServer | Crypto> =>
  Layer.scopedContext(Effect.gen(function*() {
    const gate = new Gate()
    const real = yield* HttpServer.HttpServer
    const ownAnswers = yield* NodeHttpServer.makeHandler(gateApp(options))
    const crypto = yield* Crypto
    const newId = () => Effect.runSync(crypto.randomUUID)

    /** A request the API has finished with: counted, logged, and answered 503 if the drain cut it off. */
    const onEnd: OnEnd = (flight, fiber, exit) => {
      gate.running.delete(flight)
      recordInFlight(-1)
      const { entry, response } = flight
      // Interrupted: cut off by the drain (answered 503 already), or its client left while its answer was written.
      // Otherwise a failure of the platform's own (writing the answer), which it answered 500 without a body.
      if (Exit.isFailure(exit) && !Cause.isInterruptedOnly(exit.cause)) entry.cause ??= exit.cause
      // A client that left before its answer is counted as nginx does: 499, client closed request.
      const status = flight.gone ? 499 : response.statusCode
      recordRequest(flight.request.method ?? "GET", entry.route, status, (performance.now() - flight.started) / 1000)
      if (options.accessLog || (status >= 500 && entry.cause !== undefined)) writeAccessLine(fiber, flight, status)
    }

    const listener = (request: IncomingMessage, response: ServerResponse) => {
      const handler = gate.handler
      if (handler === undefined || (request.url === "/metrics" && request.method === "GET" && Option.isSome(options.metrics))) {
        return ownAnswers(request, response)
      }
      if (gate.cutOff) {
        writeFailure(response, 503, "service_unavailable", "the server is shutting down; retry", newId(), {
          connection: "close",
          "retry-after": "1"
        })
        return
      }
      // During a drain every answer closes its connection (those in flight when it began are told so by the drain).
      if (gate.phase === "draining") response.setHeader("connection", "close")
      const entry = RequestLog.track(request)
      const flight: InFlight = {
        request,
        response,
        entry,
        started: performance.now(),
        fiber: undefined,
        answered: false,
        gone: false
      }
      inFlight.set(request, flight)
      gate.running.add(flight)
      recordInFlight(1)
      const listening = response.listenerCount("close")
      handler(request, response)
      // The platform's handler listens for the response's close to interrupt the request when its client goes away.
      // Convene finishes such a request instead (a write the client did not wait for is still made whole, and its
      // Idempotency-Key then replays it), as it did when the gate was an Effect around the API: interrupting a
      // statement in flight makes @effect/sql-pg cancel it through another connection of the pool, and a burst of
      // clients leaving (a load balancer's timeout) held every connection, each waiting for a free one, for 5 s.
      for (const other of response.listeners("close").slice(listening)) {
        response.removeListener("close", other as () => void)
      }
      response.once("close", () => {
        if (response.writableFinished) return
        if (!request.complete || response.headersSent) {
          // Its body will never arrive whole (nothing was done with it yet), or only the writing of the answer is
          // left (and Node never tells when a write to a closed connection ends): the request is interrupted.
          flight.fiber?.unsafeInterruptAsFork(FiberId.none)
        } else if (flight.answered) {
          // Answered, not written yet: the platform writes nothing for an ended response.
          response.end()
          flight.gone = true
        } else {
          flight.gone = true
        }
      })
    }
    server.on("request", listener)
    yield* Effect.addFinalizer(() => Effect.sync(() => server.off("request", listener)))
    return Context.make(HttpServer.HttpServer, apiServer(gate, real.address, newId, onEnd)).pipe(
      Context.add(Lifecycle, Lifecycle.of({ phase: () => gate.phase, draining: Deferred.await(gate.drainStarted) })),
      Context.add(ServerControl, ServerControl.of({ gate, server }))
    )
  }))

/**
 * Stops listening; completes once every connection has ended. (net.Server's close, not http.Server's: that one
 * also closes the idle connections at once, and an accepted connection whose request has not been read yet
 * counts as idle, so its client would see a reset. The drain closes idle connections itself, after a grace.)
 */
const stopListening = (server: Server) =>
  Effect.async<void>((resume) => {
    if (!server.listening) return resume(Effect.void)
    Net.Server.prototype.close.call(server, () => resume(Effect.void))
  })

/** How long a drain leaves idle connections open, for requests already on their way to arrive. */
const grace = (timeout: Duration.Duration) => Duration.min(Duration.millis(500), Duration.times(timeout, 0.25))

/**
 * When its scope closes (before the API's and the store's, which it is built after): stop accepting, let what
 * is running finish within `timeout`, answer the rest 503, close every connection.
 */
export const drainOnClose = (timeout: Duration.Duration): Layer.Layer<never, never, ServerControl> =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const { gate, server } = yield* ServerControl
    // Finalizers run uninterruptibly, in a fiber being interrupted: the drain runs in a fiber of its own, made
    // interruptible (a fork inherits the flag), where its timeouts can interrupt what they wait on.
    yield* Effect.addFinalizer(() =>
      Effect.flatMap(Effect.forkDaemon(Effect.interruptible(drain(gate, server, timeout))), Fiber.join)
    )
  }))

const drain = (gate: Gate, server: Server, timeout: Duration.Duration): Effect.Effect<void> =>
  Effect.gen(function*() {
    const started = Date.now()
    gate.phase = "draining"
    // Node merges these with the head the platform writes: each answer given from now on closes its connection.
    for (const flight of gate.running) {
      if (!flight.response.headersSent) flight.response.setHeader("connection", "close")
    }
    yield* Deferred.succeed(gate.drainStarted, undefined)
    yield* Effect.logInfo("shutting down: no new connections; finishing the requests in flight").pipe(
      Effect.annotateLogs({ in_flight: gate.running.size, drain_timeout_ms: Duration.toMillis(timeout) })
    )
    const closed = yield* Effect.fork(stopListening(server))
    // Requests already sent on open connections still arrive during the grace, and are served (their answers
    // close their connections); then the idle connections are closed.
    yield* Effect.sleep(grace(timeout))
    server.closeIdleConnections()
    const drained = yield* Effect.suspend(() => Effect.succeed(gate.running.size === 0)).pipe(
      Effect.repeat({ until: (idle) => idle, schedule: Schedule.spaced("20 millis") }),
      Effect.timeoutTo({
        duration: Duration.subtract(timeout, grace(timeout)),
        onSuccess: () => true,
        onTimeout: () => false
      })
    )
    const cut = gate.running.size
    if (!drained) {
      gate.cutOff = true
      // Each is answered 503 as its fiber is interrupted (`registered`).
      const fibers: Array<Fiber.RuntimeFiber<unknown, unknown>> = []
      for (const flight of gate.running) {
        if (flight.fiber !== undefined) fibers.push(flight.fiber)
      }
      yield* Fiber.interruptAll(fibers)
    }
    // Answers given during the drain close their connections; anything left is idle or never sent a request.
    server.closeIdleConnections()
    yield* Fiber.join(closed).pipe(Effect.timeout("250 millis"), Effect.ignore)
    server.closeAllConnections()
    yield* Effect.logInfo(
      drained
        ? "drained: every request in flight was answered"
        : "drain time up: the requests still running were answered 503"
    ).pipe(
      Effect.annotateLogs({ duration_ms: Date.now() - started, answered_503: cut })
    )
  })
