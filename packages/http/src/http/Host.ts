/**
 * What every request goes through, in two rings around the router:
 * - `hostMiddleware`, outside the API: the request id (X-Request-Id, and `request_id` in error bodies); the
 *   partner API's budgets per client address, by path prefix (429, PartnerLimits.ts); the path in its one exact
 *   form (404 otherwise); 404 or 405 with Allow for paths and methods the contract does not have; and for JSON
 *   endpoints the body, read once within its limit (415, 413, 400 bad_request).
 * - `ApiMiddlewareLive`, inside the API (so its answers are encoded like any domain error): decode failures
 *   become the core's ValidationError in the API's words (under /v1/partner the partner envelope's 400
 *   `invalid_request`, with the same words), and a defect is logged and answered 500 without internals.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiError from "@effect/platform/HttpApiError"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Crypto } from "@convene/core"
import * as Idempotency from "./Idempotency.js"
import { PartnerLimiter } from "./PartnerLimits.js"
import { Cause, Chunk, Effect, Either, FiberRef, Option } from "effect"
import { Api } from "@convene/api/Api"
import { envelopeFor, isPartnerPath } from "@convene/api/Partner"
import { CurrentRequestId } from "@convene/api/RequestId"
import { type BodyProblem, BufferedRequest, maxBodyBytes, readJson } from "./Body.js"
import { BodyRejected, CurrentRoute, JsonBody, type ReadBody } from "./RequestContext.js"
import * as RequestLog from "./RequestLog.js"
import { isCanonical, type Routes } from "./Routes.js"
import { validationErrorOf } from "./Validation.js"


const pathOf = (url: string) => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}

/**
 * A failure of the request to `url` in its API's envelope (the partner envelope under /v1/partner, with the partner
 * codes), with the request id also as a header (answers the host writes itself).
 */
const failure = (
  url: string,
  status: number,
  code: string,
  text: string,
  requestId: string,
  headers: Record<string, string> = {}
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(envelopeFor(url, code, text, requestId), { status, headers: { ...headers, "x-request-id": requestId } })

/**
 * A path as messages show it: segments longer than any of the API's (a UUID has 36 characters) are cut, and so
 * is the whole beyond 200 characters, so a message never echoes kilobytes of input.
 */
const shown = (path: string) => {
  const cut = path.split("/").map((segment) => (segment.length <= 40 ? segment : `${segment.slice(0, 16)}…`)).join("/")
  return cut.length <= 200 ? cut : `${cut.slice(0, 200)}…`
}

/** Methods whose requests carry a body the endpoint reads. */
const bodyMethods = new Set(["POST", "PUT", "PATCH"])

/**
 * What the host does with a body it could not take: too large (answered at once, and the connection closed,
 * whoever asks), cut off (nobody is left to answer), or refused (answered after authentication).
 */
const rejection = (problem: BodyProblem): BodyRejected | undefined => {
  switch (problem._tag) {
    case "UnsupportedMediaType":
      return new BodyRejected({
        status: 415,
        code: "unsupported_media_type",
        reason: problem.contentType === undefined
          ? "this endpoint takes a JSON body: send it with Content-Type: application/json"
          : "this endpoint takes a JSON body: send it as application/json (charset utf-8 or none)"
      })
    case "Malformed":
      return new BodyRejected({ status: 400, code: "bad_request", reason: problem.reason })
    case "TooLarge":
    case "Aborted":
      return undefined
  }
}

const tooLarge = (url: string, requestId: string) =>
  failure(url, 413, "payload_too_large", `the request body is larger than ${maxBodyBytes} bytes`, requestId, {
    connection: "close"
  })

/**
 * Outside the API: request id, exact paths, 404 and 405, and JSON bodies read within their limit. The inner
 * app gets the matched route (CurrentRoute) and the body (JsonBody); `ApiMiddlewareLive` hands the body to
 * the router. (This ring also wraps the writing of the response, so it must not replace the request.)
 */
export const hostMiddleware = (routes: Routes) =>
<E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, Exclude<Exclude<R, CurrentRoute>, JsonBody> | Crypto | PartnerLimiter> =>
  Effect.gen(function*() {
    const requestId = yield* Effect.flatMap(Crypto, (crypto) => crypto.randomUUID)
    yield* FiberRef.set(CurrentRequestId, requestId)
    yield* HttpApp.appendPreResponseHandler((_, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "x-request-id", requestId))
    )
    const request = yield* HttpServerRequest.HttpServerRequest
    const path = pathOf(request.url)
    const route = isCanonical(path) ? routes.find(request.method, path) : undefined
    const log = RequestLog.entryOf(request)
    if (log !== undefined) {
      log.requestId = requestId
      log.route = route?.path
    }
    // The partner API's budgets per client address, by path prefix, before routing (PartnerLimits.ts).
    const refused = yield* Effect.flatMap(PartnerLimiter, (limiter) => limiter.refuse(request, path, requestId))
    if (Option.isSome(refused)) return refused.value
    if (route === undefined) {
      const allowed = isCanonical(path) ? routes.allowed(path) : []
      return allowed.length === 0
        ? failure(request.url, 404, "not_found", `no route for ${request.method} ${shown(path)}`, requestId)
        : failure(
          request.url,
          405,
          "method_not_allowed",
          `${request.method} is not allowed on ${shown(path)}; allowed: ${allowed.join(", ")}`,
          requestId,
          { allow: allowed.join(", ") }
        )
    }
    const routed = (body: Option.Option<ReadBody>) =>
      app.pipe(Effect.provideService(CurrentRoute, route), Effect.provideService(JsonBody, body))
    if (route.body !== "json" || !bodyMethods.has(request.method)) return yield* routed(Option.none())
    const read = yield* Effect.either(readJson(request))
    if (Either.isRight(read)) return yield* routed(Option.some(Either.right(read.right)))
    const rejected = rejection(read.left)
    if (rejected === undefined) {
      return read.left._tag === "TooLarge"
        ? tooLarge(request.url, requestId)
        : failure(request.url, 400, "bad_request", "the request body ended before it was complete", requestId)
    }
    return yield* routed(Option.some(Either.left(rejected)))
  })


const isDecodeError = (error: unknown): error is HttpApiError.HttpApiDecodeError =>
  error instanceof HttpApiError.HttpApiDecodeError

/**
 * A write that lost a race with the deletion of what it refers to: PostgreSQL refused it at commit for a foreign key
 * (SQLSTATE 23503, the deferred keys of packages/store-pg), its parent (a workspace, a meeting) having been deleted by
 * a transaction that committed first. The rules had found the parent there; nothing of the write was kept.
 */
const isLostToDeletion = (defect: unknown): boolean =>
  typeof defect === "object" && defect !== null && (defect as { _tag?: unknown })._tag === "SqlError" &&
  typeof (defect as { cause?: unknown }).cause === "object" &&
  ((defect as { cause?: { code?: unknown } }).cause?.code === "23503")

const isRouteNotFound = (error: unknown) => HttpServerError.isServerError(error) && error._tag === "RouteNotFound"

/**
 * Inside the API, around the router: a failed decode of path, query, headers or body becomes the core's
 * ValidationError (encoded to the envelope like any domain error); anything the router could not route
 * (the host has routed it already, so this is a disagreement between the two) is 404; a write refused at commit
 * because what it refers to was deleted meanwhile is 409 `conflict`; any other defect is logged and answered 500
 * without internals.
 */
const answerFailures = <R>(app: HttpApp.Default<never, R>) =>
  Effect.catchAllCause(app, (cause) =>
    Effect.gen(function*() {
      if (Cause.isInterruptedOnly(cause)) return yield* Effect.failCause(cause)
      const failures = Cause.failures(cause)
      const request = yield* HttpServerRequest.HttpServerRequest
      const requestId = yield* FiberRef.get(CurrentRequestId)
      // The partner code of a request that does not decode: the route's own (the IdP routes' invalid_request_body),
      // else invalid_request.
      const invalidCode = Option.flatMap(yield* Effect.serviceOption(CurrentRoute), (route) => Option.fromNullable(route.invalidCode))
      const decode = Chunk.findFirst(failures, isDecodeError)
      if (Option.isSome(decode)) {
        const invalid = validationErrorOf(decode.value)
        // The partner API's 400 (the contract's PartnerInvalidRequest) is its own envelope, whatever the endpoint.
        // An agenda item type outside the four is the partner document's own code.
        if (isPartnerPath(pathOf(request.url))) {
          const code = invalid.field === "item_type" ? "invalid_item_type" : Option.getOrElse(invalidCode, () => "invalid_request")
          return failure(request.url, 400, code, invalid.message, requestId)
        }
        return yield* Effect.fail(invalid)
      }
      if (Chunk.some(failures, isRouteNotFound)) {
        return failure(request.url, 404, "not_found", `no route for ${request.method} ${shown(pathOf(request.url))}`, requestId)
      }
      if (Chunk.isNonEmpty(failures)) return yield* Effect.failCause(cause)
      const rejected = Chunk.findFirst(Cause.defects(cause), (defect) => defect instanceof BodyRejected)
      if (Option.isSome(rejected) && rejected.value instanceof BodyRejected) {
        const code = rejected.value.code === "bad_request" && isPartnerPath(pathOf(request.url))
          ? Option.getOrElse(invalidCode, () => rejected.value.code)
          : rejected.value.code
        return failure(request.url, rejected.value.status, code, rejected.value.reason, requestId)
      }
      if (Chunk.some(Cause.defects(cause), isLostToDeletion)) {
        return failure(request.url, 409, "conflict", "something this request refers to was deleted while it ran; nothing was changed", requestId)
      }
      // The access line carries the cause (Lifecycle.ts); a host without one logs it here.
      const log = RequestLog.entryOf(request)
      if (log !== undefined) log.cause = cause
      else yield* Effect.logError("unhandled defect", cause).pipe(Effect.annotateLogs({ request_id: requestId }))
      return failure(request.url, 500, "internal_server_error", "an unexpected error occurred; retry with backoff", requestId)
    })
  )

/** The router sees the request with the body the host read (BufferedRequest), so nobody reads it twice. */
const withBody = <E, R>(app: HttpApp.Default<E, R>) =>
  Effect.gen(function*() {
    const body = Option.flatten(yield* Effect.serviceOption(JsonBody))
    if (Option.isNone(body)) return yield* app
    const request = yield* HttpServerRequest.HttpServerRequest
    return yield* Effect.provideService(app, HttpServerRequest.HttpServerRequest, new BufferedRequest(request, body.value))
  })

/**
 * The API's own middleware, outermost first: the read body, failures in the envelope, Idempotency-Key. The
 * key's work fails with decode errors and defects as they are (so it releases its key), and they are put in
 * the envelope outside it, with any failure of the idempotency handling itself.
 */
export const ApiMiddlewareLive = HttpApiBuilder.middleware(
  Api,
  Effect.map(Idempotency.middleware, (idempotent) => (app) => withBody(answerFailures(idempotent(app))))
)
