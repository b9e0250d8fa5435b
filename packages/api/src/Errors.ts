/**
 * The wire form of every domain error: the documented envelope `{error, code, request_id, message}`
 * (`message` is the deprecated mirror of `error`), each attached to its status here at the contract.
 * Handlers fail with the core's domain errors; these schemas encode them, reading the request id of the
 * request being served, and add the headers a status calls for (WWW-Authenticate, Retry-After).
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import {
  Conflict,
  EndpointCapExceeded,
  EndpointNotPending,
  IdempotencyConflict,
  IdempotencyKeyInvalid,
  IdempotencyKeyReuse,
  InsufficientScope,
  NotFound,
  PlanRequired,
  RateLimited,
  TooManyStreams,
  Unauthenticated,
  ValidationError
} from "@convene/core"
import { Effect, FiberRef, ParseResult, Schema } from "effect"
import { CurrentRequestId } from "./RequestId.js"

/** The envelope of a status, with the codes it can carry. */
export const Envelope = <const Codes extends ReadonlyArray<string>>(identifier: string, codes: Codes, description: string) =>
  Schema.Struct({
    error: Schema.String.annotations({ description: "human-readable description of the failure" }),
    code: Schema.Literal(...codes).annotations({ description: "stable identifier: branch on this and the status" }),
    request_id: Schema.String.annotations({ description: "the id also sent as the X-Request-Id header" }),
    message: Schema.String.annotations({ description: "deprecated mirror of `error`, removed in 2.0" })
  }).annotations({ identifier, description })

export interface EnvelopeBody<Code extends string = string> {
  readonly error: string
  readonly code: Code
  readonly request_id: string
  readonly message: string
}

export const envelope = <const Code extends string>(code: Code, text: string, requestId: string): EnvelopeBody<Code> => ({
  error: text,
  code,
  request_id: requestId,
  message: text
})

const header = (name: string, value: string) =>
  HttpApp.appendPreResponseHandler((_, response) => Effect.succeed(HttpServerResponse.setHeader(response, name, value)))

/**
 * A wire schema for the domain error class `Self`: encodes an instance into the envelope (with extra
 * fields and headers where the status needs them) and decodes an envelope back into an instance (for
 * HttpApiClient users).
 */
export const wire = <Self extends { readonly message: string }, SelfEncoded, Body, BodyEncoded>(
  domain: Schema.Schema<Self, SelfEncoded>,
  body: Schema.Schema<Body, BodyEncoded>,
  status: number,
  toBody: (error: Self, requestId: string) => Effect.Effect<Body>,
  fromBody: (body: Body) => Self
) =>
  Schema.transformOrFail(body, Schema.typeSchema(domain), {
    strict: true,
    decode: (b) => ParseResult.succeed(fromBody(b)),
    encode: (error) => Effect.flatMap(FiberRef.get(CurrentRequestId), (id) => toBody(error, id))
  }).annotations(HttpApiSchema.annotations({ status }))

/** The envelope with one `code` and the error's message. */
const plain = <const Code extends string>(code: Code) =>
<Self extends { readonly message: string }>(error: Self, requestId: string) =>
  Effect.succeed(envelope(code, error.message, requestId))

export const ValidationFailed = wire(
  ValidationError,
  Envelope("ValidationFailed", ["validation_error", "bad_request"], "the request is malformed or a field is invalid; `error` names the field"),
  400,
  plain("validation_error"),
  (b) => new ValidationError({ field: "", message: b.error })
)

export const InvalidIdempotencyKey = wire(
  IdempotencyKeyInvalid,
  Envelope("IdempotencyKeyInvalid", ["idempotency_key_invalid"], "the Idempotency-Key is empty, white space, longer than 255 characters or not printable ASCII"),
  400,
  plain("idempotency_key_invalid"),
  (b) => new IdempotencyKeyInvalid({ message: b.error })
)

export const Unauthorized = wire(
  Unauthenticated,
  Envelope("Unauthorized", ["unauthorized", "invalid_token"], "no valid credential: `unauthorized` when none was sent, `invalid_token` when it is malformed, unknown, expired or revoked"),
  401,
  (error, requestId) => {
    const missing = error.reason === "missing"
    return Effect.as(
      header("www-authenticate", missing ? "Bearer" : `Bearer error="invalid_token"`),
      missing ? envelope("unauthorized", error.message, requestId) : envelope("invalid_token", error.message, requestId)
    )
  },
  (b) => new Unauthenticated({ reason: b.code === "unauthorized" ? "missing" : "unknown", message: b.error })
)

export const PlanGate = wire(
  PlanRequired,
  Schema.Struct({
    ...Envelope("", ["plan_required"], "").fields,
    feature: Schema.String,
    current_plan: Schema.String,
    required_plan: Schema.String
  }).annotations({ identifier: "PlanRequired", description: "the workspace's plan does not include this, or its allowance is used up" }),
  402,
  (error, requestId) =>
    Effect.succeed({
      ...envelope("plan_required", error.message, requestId),
      feature: error.feature,
      current_plan: error.current_plan,
      required_plan: error.required_plan
    }),
  (b) => new PlanRequired({ feature: b.feature, current_plan: b.current_plan, required_plan: b.required_plan, message: b.error })
)

export const Forbidden = wire(
  InsufficientScope,
  Envelope("Forbidden", ["insufficient_scope"], "the credential lacks the scope or the role this needs"),
  403,
  (error, requestId) =>
    Effect.as(
      header("www-authenticate", `Bearer error="insufficient_scope", scope="${error.required}"`),
      envelope("insufficient_scope", error.message, requestId)
    ),
  (b) => new InsufficientScope({ required: "", message: b.error })
)

export const Missing = wire(
  NotFound,
  Envelope("NotFound", ["not_found"], "missing, or not visible to this credential"),
  404,
  plain("not_found"),
  (b) => new NotFound({ resource: "", id: "", message: b.error })
)

export const StateConflict = wire(
  Conflict,
  Envelope("Conflict", ["conflict"], "the request does not fit the resource's current state"),
  409,
  plain("conflict"),
  (b) => new Conflict({ message: b.error })
)

export const EndpointCap = wire(
  EndpointCapExceeded,
  Envelope("EndpointCapExceeded", ["endpoint_cap_exceeded"], "the workspace has as many active webhook endpoints as its plan allows"),
  409,
  plain("endpoint_cap_exceeded"),
  (b) => new EndpointCapExceeded({ cap: 0, current_plan: "", message: b.error })
)

export const NotPending = wire(
  EndpointNotPending,
  Envelope("EndpointNotPending", ["endpoint_not_pending"], "the endpoint is verified or disabled: there is nothing to verify"),
  409,
  plain("endpoint_not_pending"),
  (b) => new EndpointNotPending({ verification_state: "", message: b.error })
)

export const StreamLimit = wire(
  TooManyStreams,
  Envelope("TooManyStreams", ["too_many_requests"], "this credential holds as many open event streams as allowed; close one first"),
  429,
  (error, requestId) => Effect.as(header("retry-after", "5"), envelope("too_many_requests", error.message, requestId)),
  (b) => new TooManyStreams({ limit: 0, message: b.error })
)

export const RateLimitExceeded = wire(
  RateLimited,
  Schema.Struct({
    code: Schema.Literal("rate_limit_exceeded").annotations({ description: "stable identifier" }),
    message: Schema.String.annotations({ description: "the budget and when to retry" }),
    request_id: Schema.String.annotations({ description: "the id also sent as the X-Request-Id header" })
  }).annotations({
    identifier: "RateLimitExceeded",
    description: "the credential (or, without one, the client address) spent its request budget for the current " +
      "minute; retry after Retry-After seconds. The compact body has no `error` field."
  }),
  429,
  (error, requestId) =>
    Effect.as(header("retry-after", String(error.retry_after_seconds)), {
      code: "rate_limit_exceeded" as const,
      message: error.message,
      request_id: requestId
    }),
  (b) => new RateLimited({ limit: 0, retry_after_seconds: 0, message: b.message })
)

export const InFlight = wire(
  IdempotencyConflict,
  Envelope("IdempotencyConflict", ["idempotency_conflict"], "a request with this Idempotency-Key is still in flight; retry after Retry-After seconds"),
  409,
  (error, requestId) =>
    Effect.as(header("retry-after", String(error.retry_after_seconds)), envelope("idempotency_conflict", error.message, requestId)),
  (b) => new IdempotencyConflict({ retry_after_seconds: 1, message: b.error })
)

export const KeyReuse = wire(
  IdempotencyKeyReuse,
  Envelope("IdempotencyKeyReuse", ["idempotency_key_reuse"], "this Idempotency-Key was used with another body or route"),
  422,
  plain("idempotency_key_reuse"),
  (b) => new IdempotencyKeyReuse({ message: b.error })
)


/** The body is not valid JSON (or not readable). */
export class MalformedBody extends Schema.TaggedError<MalformedBody>()("MalformedBody", {
  message: Schema.String
}) {}

export const BadRequest = wire(
  MalformedBody,
  Envelope("BadRequest", ["bad_request"], "the request could not be read, e.g. its body is not valid JSON"),
  400,
  plain("bad_request"),
  (b) => new MalformedBody({ message: b.error })
)

/** The body is larger than the server accepts (1 MiB). */
export class BodyTooLarge extends Schema.TaggedError<BodyTooLarge>()("BodyTooLarge", {
  message: Schema.String
}) {}

export const PayloadTooLarge = wire(
  BodyTooLarge,
  Envelope("PayloadTooLarge", ["payload_too_large"], "the request body is larger than 1 MiB"),
  413,
  plain("payload_too_large"),
  (b) => new BodyTooLarge({ message: b.error })
)

/** The body's media type is not one the endpoint takes (JSON endpoints take application/json only). */
export class MediaTypeUnsupported extends Schema.TaggedError<MediaTypeUnsupported>()("MediaTypeUnsupported", {
  message: Schema.String
}) {}

export const UnsupportedMediaType = wire(
  MediaTypeUnsupported,
  Envelope(
    "UnsupportedMediaType",
    ["unsupported_media_type"],
    "the body's Content-Type is not one the endpoint takes: application/json (charset utf-8 or none) for JSON bodies"
  ),
  415,
  plain("unsupported_media_type"),
  (b) => new MediaTypeUnsupported({ message: b.error })
)
