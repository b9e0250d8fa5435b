/**
 * The credentials the host accepts: first-party bearer tokens on /v1 (the core's Authentication decides),
 * and the operator token on /operator (compared in constant time). `asCaller` gives handlers the principal.
 */
import { HttpServerRequest } from "@effect/platform"
import { Authentication, Crypto, NotFound, type Principal, Unauthenticated } from "@convene/core"
import { type Context, Effect, FiberRef, Layer, Option, Redacted } from "effect"
import { Authenticate, CurrentPrincipal, OperatorAuth } from "@convene/api/Security"
import type { HostConfig } from "../Config.js"
import { RequestLog } from "./RequestLog.js"

/** Who called, for the access line (never the token itself). */
const noteCaller = (principal: Principal) =>
  Effect.map(Effect.serviceOption(RequestLog), (log) => {
    if (Option.isNone(log)) return principal
    log.value.credentialKind = principal.kind
    log.value.credentialId = principal.credential_id
    log.value.workspaceId = principal.workspace_id
    return principal
  })

/** The token of an `Authorization: Bearer <token>` header; none when the header is absent or of another scheme. */
export const bearerToken = (request: HttpServerRequest.HttpServerRequest): Option.Option<string> => {
  const match = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? "")
  return Option.fromNullable(match?.[1])
}

/**
 * The principal of the request being served when it was authenticated before the router ran (the
 * idempotency middleware must know the credential before it claims a key); the endpoint's own
 * authentication then uses it instead of asking the store again.
 */
export const PreAuthenticated: FiberRef.FiberRef<Option.Option<Principal>> = FiberRef.unsafeMake(Option.none())

/** Authenticates the request's bearer token through the core. */
export const authenticateRequest = (
  authentication: Context.Tag.Service<typeof Authentication>,
  request: HttpServerRequest.HttpServerRequest) =>
  authentication.authenticate(Redacted.make(Option.getOrElse(bearerToken(request), () => "")))

export const AuthenticateLive = Layer.effect(
  Authenticate,
  Effect.gen(function*() {
    const authentication = yield* Authentication
    return {
      bearer: () =>
        Effect.flatMap(FiberRef.get(PreAuthenticated), (known) =>
          Option.isSome(known)
            ? Effect.succeed(known.value)
            : Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => authenticateRequest(authentication, request))).pipe(
              Effect.flatMap(noteCaller)
            )
    }
  })
)

/** A handler that acts for the caller: the principal first, then what the endpoint decoded. */
export const asCaller = <Request, A, E, R>(handler: (principal: Principal, request: Request) => Effect.Effect<A, E, R>) =>
(request: Request): Effect.Effect<A, E, R | CurrentPrincipal> =>
  Effect.flatMap(CurrentPrincipal, (principal) => handler(principal, request))

export const OperatorAuthLive = (config: HostConfig) =>
  Layer.effect(
    OperatorAuth,
    Effect.gen(function*() {
      const crypto = yield* Crypto
      return {
        operator: () =>
          Effect.gen(function*() {
            const request = yield* HttpServerRequest.HttpServerRequest
            // The route table leaves the operator's routes out when it is off; this is the second lock.
            if (Option.isNone(config.operatorToken)) {
              return yield* Effect.fail(
                new NotFound({ resource: "route", id: request.url, message: `no route for ${request.method} ${request.url}` })
              )
            }
            const token = bearerToken(request)
            if (Option.isNone(token)) {
              return yield* Effect.fail(new Unauthenticated({ reason: "missing", message: "the operator token is required" }))
            }
            if (!crypto.timingSafeEqual(token.value, Redacted.value(config.operatorToken.value))) {
              return yield* Effect.fail(new Unauthenticated({ reason: "unknown", message: "the operator token is not valid" }))
            }
            const log = yield* Effect.serviceOption(RequestLog)
            if (Option.isSome(log)) log.value.credentialKind = "operator"
          })
      }
    })
  )
