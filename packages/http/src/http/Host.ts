/**
 * What every response goes through: a request id (X-Request-Id, and `request_id` in error bodies), the
 * documented envelope for failures that no handler produced (decode failures, malformed JSON, unknown routes,
 * wrong methods, defects), and never an internal detail in a 500.
 */
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiError,
  HttpApp,
  HttpIncomingMessage,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { ValidationError } from "@convene/core"
import { Cause, Chunk, Effect, FiberRef, Option } from "effect"
import * as NodeCrypto from "node:crypto"
import { Api } from "../api/Api.js"
import { BodyTooLarge, envelope, MalformedBody } from "../api/Errors.js"
import { CurrentRequestId } from "../api/RequestId.js"
import type { HostConfig } from "../Config.js"

/** The largest request body read (1 MiB); a larger one is 413 payload_too_large. */
export const maxBodyBytes = 1024 * 1024

const describeIssues = (error: HttpApiError.HttpApiDecodeError): ValidationError => {
  const issue = error.issues[0]
  if (issue === undefined) return new ValidationError({ field: "request", message: error.message })
  const fieldOf = (path: ReadonlyArray<PropertyKey>) => (path.length === 0 ? "body" : path.map(String).join("."))
  const field = fieldOf(issue.path)
  const others = new Set(error.issues.map((i) => fieldOf(i.path)).filter((f) => f !== field))
  const more = others.size > 0 ? ` (also invalid: ${[...others].join(", ")})` : ""
  return new ValidationError({ field, message: `${field}: ${issue.message}${more}` })
}

type Route = { readonly method: string; readonly pattern: RegExp }

const compile = (path: string) =>
  new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z0-9_]+/g, "[^/]+")}/?$`)

/** Every (method, path) the API serves, for telling 404 from 405 (operator paths only when the operator API is on). */
const routesOf = (operatorEnabled: boolean): ReadonlyArray<Route> => {
  const out: Array<Route> = [
    { method: "GET", pattern: compile("/v1/openapi.json") },
    { method: "GET", pattern: compile("/docs") }
  ]
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      if (operatorEnabled || !endpoint.path.startsWith("/operator/")) {
        out.push({ method: endpoint.method, pattern: compile(endpoint.path) })
      }
    }
  })
  return out
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson(body, { status, headers })

const isRequestError = (u: unknown) => HttpServerError.isServerError(u) && u._tag === "RequestError"
const isRouteNotFound = (u: unknown) => HttpServerError.isServerError(u) && u._tag === "RouteNotFound"

const notFoundOrNotAllowed = (
  routes: ReadonlyArray<Route>,
  request: HttpServerRequest.HttpServerRequest,
  requestId: string
) => {
  const path = request.url.split("?")[0]!
  const allowed = [...new Set(routes.filter((route) => route.pattern.test(path)).map((route) => route.method))]
  return allowed.length > 0
    ? json(405, envelope("method_not_allowed", `${request.method} is not allowed on ${path}; allowed: ${allowed.join(", ")}`, requestId), {
      allow: allowed.join(", ")
    })
    : json(404, envelope("not_found", `no route for ${request.method} ${path}`, requestId))
}

/**
 * Inside the API, around the router (so the answers still pass through the server's response handling):
 * a failed decode of path, query, headers or body becomes the core's ValidationError and an unreadable body
 * MalformedBody (both then encode to the envelope like any domain error); an unknown route is 404, a known
 * path with another method 405; any other defect is logged and answered 500 without internals.
 */
export const ApiMiddlewareLive = (config: HostConfig) => {
  const routes = routesOf(Option.isSome(config.operatorToken))
  return HttpApiBuilder.middleware(Api, (app) =>
  (app as HttpApp.Default<unknown>).pipe(
    Effect.catchAllCause((cause) =>
      Effect.gen(function*() {
        if (Cause.isInterruptedOnly(cause)) return yield* Effect.failCause(cause)
        const failures = Cause.failures(cause)
        const decode = Chunk.findFirst(
          failures,
          (error): error is HttpApiError.HttpApiDecodeError => error instanceof HttpApiError.HttpApiDecodeError
        )
        if (Option.isSome(decode)) return yield* Effect.fail(describeIssues(decode.value))
        const requestId = yield* FiberRef.get(CurrentRequestId)
        if (Chunk.some(failures, isRouteNotFound)) {
          return notFoundOrNotAllowed(routes, yield* HttpServerRequest.HttpServerRequest, requestId)
        }
        if (Chunk.isNonEmpty(failures)) return yield* Effect.failCause(cause)
        const unreadable = Chunk.findFirst(Cause.defects(cause), isRequestError)
        if (Option.isSome(unreadable)) {
          const tooLarge = String((unreadable.value as { cause?: unknown }).cause).includes("maxBytes exceeded")
          return yield* Effect.fail(
            tooLarge
              ? new BodyTooLarge({ message: `the request body is larger than ${maxBodyBytes} bytes` })
              : new MalformedBody({ message: "the request body could not be read as JSON" })
          )
        }
        yield* Effect.logError("unhandled defect", cause).pipe(Effect.annotateLogs({ request_id: requestId }))
        return json(500, envelope("internal_server_error", "an unexpected error occurred; retry with backoff", requestId))
      })
    )
    // The builder types the app as failing with the API's errors only; decode errors are among them at run time.
  ) as HttpApp.Default<ValidationError | MalformedBody | BodyTooLarge>)
}

/**
 * Outside the API: assigns the request id (read by the error encoders and the middleware above) and sends it
 * back as X-Request-Id on every response.
 */
export const hostMiddleware = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.gen(function*() {
    const requestId = NodeCrypto.randomUUID()
    yield* FiberRef.set(CurrentRequestId, requestId)
    yield* HttpApp.appendPreResponseHandler((_, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "x-request-id", requestId))
    )
    const request = yield* HttpServerRequest.HttpServerRequest
    // A declared length over the limit is refused before reading a byte (a body that grows past it while
    // being read fails the read instead, see BodyTooLarge above).
    if (Number(request.headers["content-length"] ?? 0) > maxBodyBytes) {
      return json(
        413,
        envelope("payload_too_large", `the request body is larger than ${maxBodyBytes} bytes`, requestId),
        { connection: "close", "x-request-id": requestId }
      )
    }
    return yield* HttpIncomingMessage.withMaxBodySize(app, Option.some(maxBodyBytes))
  })
