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
 */
import { HttpServer, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Crypto } from "@convene/core"
import { Cause, Context, Deferred, Duration, Effect, Exit, Fiber, FiberId, Layer, LogLevel, Option, Redacted, Schedule } from "effect"
import { type Server, validateHeaderName, validateHeaderValue } from "node:http"
import * as Net from "node:net"
import { performance } from "node:perf_hooks"
import { envelope } from "@convene/api/Errors"
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
type App = Effect.Effect<Response, unknown, HttpServerRequest.HttpServerRequest>

/** The mutable state behind the gate (one per server). */
class Gate {
  phase: Phase = "starting"
  app: App | undefined = undefined
  /** The requests the API is working on, each in a fiber of its own, so that a drain can cut them off. */
  readonly running = new Set<Fiber.RuntimeFiber<Response, unknown>>()
  /** Set once the drain time is up: what is still running is answered 503. */
  cutOff = false
  /** Completed when the drain starts. */
  readonly drainStarted = Deferred.unsafeMake<void>(FiberId.none)
}

const unavailable = (text: string, requestId: string, headers: Record<string, string>): Response =>
  HttpServerResponse.unsafeJson(envelope("service_unavailable", text, requestId), {
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
  return unavailable("the server is starting and its store is not ready yet; retry shortly", requestId, {
    "retry-after": "1"
  })
})

/** Marks an answer given during a drain so that Node closes its connection after it. */
const closing = (response: Response) => HttpServerResponse.setHeader(response, "connection", "close")

/** What the gate does with every request. */
export interface GateOptions {
  /** Write an access line for every request (else only for those answered 5xx). */
  readonly accessLog: boolean
  /** `GET /metrics` on this server: the scrape, and the token it needs (none: 404). */
  readonly metrics: Option.Option<{ readonly token: Redacted.Redacted<string>; readonly scrape: Effect.Effect<string> }>
}

/** The API's answer, in a fiber the gate can cut off during a drain. */
const answer = (gate: Gate, app: App) =>
  Effect.gen(function*() {
    if (gate.cutOff) {
      const requestId = yield* Effect.flatMap(Crypto, (crypto) => crypto.randomUUID)
      return unavailable("the server is shutting down; retry", requestId, { connection: "close", "retry-after": "1" })
    }
    // Interruptible, whatever the server's handler inherited (requests run with the flags of the fiber that
    // built the server, which are not), so that the drain can cut it off.
    const fiber = yield* Effect.fork(Effect.interruptible(app))
    gate.running.add(fiber)
    recordInFlight(1)
    fiber.addObserver(() => {
      gate.running.delete(fiber)
      recordInFlight(-1)
    })
    // Joining (not awaiting) brings the fiber's FiberRefs back, such as the pre-response handlers it added.
    const exit = yield* Effect.exit(Fiber.join(fiber))
    if (Exit.isSuccess(exit)) return gate.phase === "draining" ? closing(exit.value) : exit.value
    if (gate.cutOff && Cause.isInterruptedOnly(exit.cause)) {
      const requestId = yield* Effect.flatMap(Crypto, (crypto) => crypto.randomUUID)
      return unavailable("the server shut down before this request was answered; retry", requestId, {
        connection: "close",
        "retry-after": "1"
      })
    }
    return yield* exit
  })

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
 * who called (credential kind and id, workspace). A 5xx is an error line with its cause; a 4xx a warning.
 */
const accessLine = (
  request: HttpServerRequest.HttpServerRequest,
  entry: RequestLog.RequestLogEntry,
  status: number,
  started: number
) =>
  Effect.logWithLevel(levelOf(status, entry.route), "request", ...(entry.cause === undefined ? [] : [entry.cause])).pipe(
    Effect.annotateLogs({
      request_id: entry.requestId ?? null,
      method: request.method,
      route: entry.route ?? null,
      status,
      duration_ms: Math.round((performance.now() - started) * 100) / 100,
      credential_kind: entry.credentialKind ?? null,
      credential_id: entry.credentialId ?? null,
      workspace_id: entry.workspaceId ?? null
    })
  )

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

/**
 * Why Node would refuse to write the answer's head (a header name or value with a character it does not
 * allow, such as CR or LF), or undefined. Node throws while the platform writes the head, after the gate has
 * returned and logged the answer, and the platform then answers 500 without a body and without a log line; so
 * the gate checks the head itself, with Node's own validators, and answers such a response as any other 500.
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

/** The app Node serves: /metrics, the API once it is there (see `answer`), the access line and the metrics. */
const serveThrough = (gate: Gate, options: GateOptions) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (Option.isSome(options.metrics) && request.url === "/metrics" && request.method === "GET") {
      return yield* metricsAnswer(request, options.metrics.value)
    }
    const app = gate.app
    if (app === undefined) return yield* whileStarting
    const started = performance.now()
    const entry = RequestLog.empty()
    let exit = yield* Effect.exit(Effect.provideService(answer(gate, app), RequestLog.RequestLog, entry))
    const problem = Exit.isSuccess(exit) ? headProblem(exit.value) : undefined
    if (problem !== undefined) {
      entry.cause = Cause.die(problem)
      const requestId = entry.requestId ?? (yield* Effect.flatMap(Crypto, (crypto) => crypto.randomUUID))
      exit = Exit.succeed(HttpServerResponse.unsafeJson(
        envelope("internal_server_error", "an unexpected error occurred; retry with backoff", requestId),
        { status: 500, headers: { "x-request-id": requestId } }
      ))
    }
    const status = Exit.isSuccess(exit) ? exit.value.status : 500
    if (Exit.isFailure(exit) && entry.cause === undefined && !Cause.isInterruptedOnly(exit.cause)) entry.cause = exit.cause
    recordRequest(request.method, entry.route, status, (performance.now() - started) / 1000)
    if (options.accessLog || (status >= 500 && entry.cause !== undefined)) yield* accessLine(request, entry, status, started)
    return yield* exit
  })

/**
 * An `HttpServer` that serves nothing itself: the app given to it is what the gate passes requests to. Its
 * address is the real server's.
 */
const apiServer = (gate: Gate, address: HttpServer.Address): HttpServer.HttpServer =>
  HttpServer.make({
    address,
    serve: (app, middleware) =>
      Effect.gen(function*() {
        const context = yield* Effect.context<never>()
        const served = middleware === undefined ? app : middleware(app)
        gate.app = Effect.provide(served, context) as App
        gate.phase = "ready"
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => {
            gate.app = undefined
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
 * The gate served on a real `HttpServer` (Node's), given the Node server itself: provides the stand-in
 * `HttpServer` the API is served on, the `Lifecycle`, and what `drainOnClose` needs.
 */
export const layer = (
  server: Server,
  options: GateOptions
): Layer.Layer<HttpServer.HttpServer | Lifecycle | ServerControl, never, HttpServer.HttpServer | Crypto> =>
  Layer.scopedContext(Effect.gen(function*() {
    const gate = new Gate()
    const real = yield* HttpServer.HttpServer
    yield* real.serve(serveThrough(gate, options))
    return Context.make(HttpServer.HttpServer, apiServer(gate, real.address)).pipe(
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
      yield* Fiber.interruptAll([...gate.running])
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
