/**
 * Idempotency-Key for every endpoint the contract marks `idempotent` (api/Idempotency.ts), in one place,
 * between the host and the API:
 * - the caller is authenticated first (keys are the credential's own); a request that does not
 *   authenticate passes on, and the API answers it 401 as always; one that does takes its unit of the
 *   credential's rate limit here (a replay costs one like any request; over budget: 429);
 * - the core's Idempotency service validates and claims the key and fingerprints the request from its parts
 *   (method, path, query, and the JSON body the host read once);
 * - the API (decoding, the handler, and the encoding through the endpoint's own success schema) answers
 *   inside the service's transaction, so a stored 2xx commits with the resource, and any other answer
 *   releases the key.
 * Requests without the header, and endpoints that do not honour it, pass straight through.
 *
 * The partner user context (/v1/partner/user) uses the same service: the caller is authenticated with the partner
 * token, keys belong to the app and the user (so they survive the rotation of access tokens: a retry with a
 * refreshed token still finds its key), the refusals are in the partner envelope, and the partner's per-IP budget
 * (counted before routing) is the only limit.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as HttpApp from "@effect/platform/HttpApp"
import {
  Authentication,
  Idempotency,
  IdempotencyConflict,
  IdempotencyKeyInvalid,
  IdempotencyKeyReuse,
  PartnerOAuth,
  RateLimits,
  type Principal,
  StoredResponse,
  trusted
} from "@convene/core"
import { Effect, Either, Option, Redacted, Schema } from "effect"
import { InFlight, InvalidIdempotencyKey, KeyReuse, RateLimitExceeded } from "@convene/api/Errors"
import { isPartnerPath } from "@convene/api/Partner"
import {
  PartnerInFlight,
  PartnerInvalidIdempotencyKey,
  PartnerKeyInFlight,
  PartnerKeyInvalid,
  PartnerKeyReuse,
  PartnerKeyReused
} from "@convene/api/PartnerUser"
import { recordIdempotency } from "./Metrics.js"
import { CurrentRoute, JsonBody } from "./RequestContext.js"
import { authenticateRequest, PreAuthenticated, throttle } from "./Security.js"

const utf8 = new TextDecoder()

/** The answer as it is stored: status and body text (every idempotent endpoint answers JSON). */
const stored = (response: HttpServerResponse.HttpServerResponse): StoredResponse =>
  new StoredResponse({
    status: response.status,
    body: response.body._tag === "Uint8Array" ? utf8.decode(response.body.body) : ""
  }, trusted)

const split = (url: string) => {
  const query = url.indexOf("?")
  return query === -1
    ? { path: url, query: [] }
    : { path: url.slice(0, query), query: [...new URLSearchParams(url.slice(query + 1)).entries()] }
}

type KeyFailure = IdempotencyKeyInvalid | IdempotencyConflict | IdempotencyKeyReuse

const isKeyFailure = (error: unknown): error is KeyFailure =>
  error instanceof IdempotencyKeyInvalid || error instanceof IdempotencyConflict || error instanceof IdempotencyKeyReuse

const respond = <A, I>(schema: Schema.Schema<A, I>, status: number, error: A) =>
  Effect.map(Schema.encode(schema)(error).pipe(Effect.orDie), (body) => HttpServerResponse.unsafeJson(body, { status }))

/** A failure of the key itself, in the envelope its wire schema (api/Errors.ts, or the partner's) gives it. */
const refusal = (partner: boolean) => (error: KeyFailure) => {
  switch (error._tag) {
    case "IdempotencyKeyInvalid":
      recordIdempotency("key_invalid")
      return partner
        ? respond(PartnerInvalidIdempotencyKey, 400, new PartnerKeyInvalid({ message: error.message }))
        : respond(InvalidIdempotencyKey, 400, error)
    case "IdempotencyConflict":
      recordIdempotency("in_flight")
      return partner
        ? respond(PartnerInFlight, 409, new PartnerKeyInFlight({ retry_after_seconds: error.retry_after_seconds, message: error.message }))
        : respond(InFlight, 409, error)
    case "IdempotencyKeyReuse":
      recordIdempotency("key_reused")
      return partner
        ? respond(PartnerKeyReuse, 422, new PartnerKeyReused({ message: error.message }))
        : respond(KeyReuse, 422, error)
  }
}

/** The middleware, given the core services it uses. */
export const middleware = Effect.gen(function*() {
  const idempotency = yield* Idempotency
  const authentication = yield* Authentication
  const partner = yield* PartnerOAuth
  const limits = yield* Effect.serviceOption(RateLimits)
  return <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
    Effect.gen(function*() {
      const route = yield* Effect.serviceOption(CurrentRoute)
      const request = yield* HttpServerRequest.HttpServerRequest
      const key = request.headers["idempotency-key"]
      if (Option.isNone(route) || !route.value.idempotent || key === undefined) return yield* app
      const partnerPath = isPartnerPath(split(request.url).path)
      let scope: string
      let principal: Option.Option<Principal> = Option.none()
      if (partnerPath) {
        const header = request.headers["authorization"]
        const caller = yield* Effect.option(partner.authenticate(header === undefined ? undefined : Redacted.make(header)))
        if (Option.isNone(caller)) return yield* app
        scope = `partner:${caller.value.app.id}:${caller.value.principal.user_id}`
      } else {
        principal = yield* Effect.option(authenticateRequest(authentication, request))
        if (Option.isNone(principal)) return yield* app
        // The endpoint's own authentication takes the pre-authenticated principal and counts nothing more.
        const throttled = yield* Effect.either(throttle(limits, { _tag: "Credential", principal: principal.value }))
        if (Either.isLeft(throttled)) return yield* respond(RateLimitExceeded, 429, throttled.left)
        scope = principal.value.credential_id
      }
      const body = yield* Effect.serviceOption(JsonBody)
      const outcome = yield* idempotency.run(
        {
          scope,
          key,
          method: request.method,
          ...split(request.url),
          body: Option.getOrUndefined(Option.flatMap(Option.flatten(body), Either.getRight))?.value
        },
        app.pipe(Effect.map(stored), Effect.locally(PreAuthenticated, principal))
      ).pipe(Effect.catchIf(isKeyFailure, refusal(partnerPath)))
      if (HttpServerResponse.isServerResponse(outcome)) return outcome
      recordIdempotency(
        outcome.replayed ? "replayed" : outcome.response.status >= 200 && outcome.response.status < 300 ? "stored" : "not_stored"
      )
      return HttpServerResponse.text(outcome.response.body, {
        status: outcome.response.status,
        contentType: "application/json",
        headers: outcome.replayed ? { "idempotent-replayed": "true" } : {}
      })
    })
})
