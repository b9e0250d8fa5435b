/**
 * Domain errors. Each carries a readable `message`; the HTTP host maps the tag to a status and a stable
 * `code` (the domain never knows about statuses).
 */
import { Effect, Option, Schema } from "effect"

/** A request value broke a rule. `field` names the offending field (dotted path for nested ones). */
export class ValidationError extends Schema.TaggedError<ValidationError>()("ValidationError", {
  field: Schema.String,
  message: Schema.String
}) {
  static readonly of = (field: string, problem: string) => new ValidationError({ field, message: `${field}: ${problem}` })
}

/** The resource does not exist, or the caller cannot see it (another workspace, not a participant). */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  resource: Schema.String,
  id: Schema.String,
  message: Schema.String
}) {
  static readonly of = (resource: string, id: string) =>
    new NotFound({ resource, id, message: `${resource} ${id} was not found` })
}

/** The request does not fit the current state of the resource. */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", {
  message: Schema.String
}) {}

/** No valid credential: missing, malformed, unknown, expired or revoked. */
export class Unauthenticated extends Schema.TaggedError<Unauthenticated>()("Unauthenticated", {
  reason: Schema.Literal("missing", "malformed", "unknown", "expired", "revoked"),
  message: Schema.String
}) {}

/** The credential is valid but lacks the scope or the role the operation needs. */
export class InsufficientScope extends Schema.TaggedError<InsufficientScope>()("InsufficientScope", {
  required: Schema.String,
  message: Schema.String
}) {}

/** The workspace's plan does not include the feature, or its allowance for the period is used up. */
export class PlanRequired extends Schema.TaggedError<PlanRequired>()("PlanRequired", {
  feature: Schema.String,
  current_plan: Schema.String,
  required_plan: Schema.String,
  message: Schema.String
}) {}

/** The workspace already has as many active webhook endpoints as its plan allows (409 `endpoint_cap_exceeded`). */
export class EndpointCapExceeded extends Schema.TaggedError<EndpointCapExceeded>()("EndpointCapExceeded", {
  cap: Schema.Int,
  current_plan: Schema.String,
  message: Schema.String
}) {}

/** Resend-verification on an endpoint that is verified or disabled (409 `endpoint_not_pending`). */
export class EndpointNotPending extends Schema.TaggedError<EndpointNotPending>()("EndpointNotPending", {
  verification_state: Schema.String,
  message: Schema.String
}) {}

/** The value of an optional lookup, or `NotFound` of `resource` `id` when there is none. */
export const orNotFound = (resource: string, id: string) =>
<A, E, R>(self: Effect.Effect<Option.Option<A>, E, R>): Effect.Effect<A, E | NotFound, R> =>
  Effect.flatMap(self, Option.match({ onNone: () => Effect.fail(NotFound.of(resource, id)), onSome: Effect.succeed }))

/** The credential already holds as many open event streams as allowed (429 `too_many_requests`). */
export class TooManyStreams extends Schema.TaggedError<TooManyStreams>()("TooManyStreams", {
  limit: Schema.Int,
  message: Schema.String
}) {}

/** The caller spent its request budget for the current window (429 `rate_limit_exceeded`, with Retry-After). */
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  limit: Schema.Int,
  retry_after_seconds: Schema.Int,
  message: Schema.String
}) {}
