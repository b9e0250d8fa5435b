/**
 * The credentials the host accepts: first-party bearer tokens on /v1 (the core's Authentication decides),
 * and the operator token on /operator (compared in constant time). `asCaller` gives handlers the principal.
 */
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import {
  Authentication,
  CredentialId,
  Crypto,
  grantsOf,
  NotFound,
  Principal,
  RateLimits,
  type RateLimitState,
  type RateLimitSubject,
  refusal,
  sessionPrefix,
  Sessions,
  trusted,
  Unauthenticated
} from "@convene/core"
import { type Context, Effect, FiberRef, Layer, Option, Redacted } from "effect"
import { Authenticate, CurrentPrincipal, OperatorAuth } from "@convene/api/Security"
import type { HostConfig } from "../Config.js"
import { CurrentRoute } from "./RequestContext.js"
import * as RequestLog from "./RequestLog.js"

/** Who called, for the access line (never the token itself). */
const noteCaller = (principal: Principal) =>
  Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
    const log = RequestLog.entryOf(request)
    if (log === undefined) return principal
    log.credentialKind = principal.kind
    log.credentialId = principal.credential_id
    log.workspaceId = principal.workspace_id
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

/** The endpoints that take the signed-in session as a bearer token besides credentials (decisions.md: issuing tokens). */
const sessionRoutes = new Set(["POST /v1/user/tokens"])

/**
 * The principal of a session token (`svc_ses_v1_`, the session cookie's value) where the route takes one: the
 * session's user with every scope their role grants. Anywhere else a session is no credential (401).
 */
const sessionPrincipal = (sessions: Sessions["Type"], token: string) =>
  Effect.gen(function*() {
    const route = yield* Effect.serviceOption(CurrentRoute)
    if (Option.isNone(route) || !sessionRoutes.has(`${route.value.method} ${route.value.path}`)) {
      return yield* Effect.fail(
        new Unauthenticated({ reason: "malformed", message: "a browser session is not a credential for this endpoint; use a token" })
      )
    }
    const live = yield* sessions.resolve(token)
    if (Option.isNone(live)) {
      return yield* Effect.fail(new Unauthenticated({ reason: "unknown", message: "the session is not valid (signed out or expired)" }))
    }
    const { session, user } = live.value
    return new Principal({
      credential_id: CredentialId.make(session.id),
      kind: "session",
      workspace_id: user.workspace_id,
      user_id: user.id,
      role: user.role,
      scopes: grantsOf(user.role),
      client_id: null,
      expires_at: session.expires_at
    }, trusted)
  })

/** The X-RateLimit-* headers of `state`, on whatever response the request gets (success or error). */
const rateLimitHeaders = (state: RateLimitState) =>
  HttpApp.appendPreResponseHandler((_, response) =>
    Effect.succeed(HttpServerResponse.setHeaders(response, {
      "x-ratelimit-limit": String(state.limit),
      "x-ratelimit-remaining": String(state.remaining),
      "x-ratelimit-reset": String(state.reset)
    }))
  )

/**
 * Takes the request's unit of `subject`'s budget, announces where it stands in the response headers, and refuses
 * the request (429) when it is over; a host without RateLimits counts nothing.
 */
export const throttle = (limits: Option.Option<RateLimits["Type"]>, subject: RateLimitSubject) =>
  Option.match(limits, {
    onNone: () => Effect.void,
    onSome: (limits) =>
      Effect.flatMap(limits.take(subject), (state) =>
        Effect.zipRight(rateLimitHeaders(state), state.exceeded ? Effect.fail(refusal(state)) : Effect.void))
  })

/** The client address a request without a valid credential is counted under (the socket's peer). */
const addressOf = (request: HttpServerRequest.HttpServerRequest) => Option.getOrElse(request.remoteAddress, () => "unknown")

export const AuthenticateLive = Layer.effect(
  Authenticate,
  Effect.gen(function*() {
    const authentication = yield* Authentication
    const sessions = yield* Sessions
    const limits = yield* Effect.serviceOption(RateLimits)
    const authenticate = Effect.flatMap(FiberRef.get(PreAuthenticated), (known) =>
      Option.isSome(known)
        ? Effect.succeed(known.value)
        : Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
          const token = Option.getOrElse(bearerToken(request), () => "")
          return token.startsWith(sessionPrefix)
            ? sessionPrincipal(sessions, token)
            : authenticateRequest(authentication, request)
        }))
    return {
      bearer: () =>
        authenticate.pipe(
          Effect.flatMap(noteCaller),
          Effect.tapBoth({
            onSuccess: (principal) =>
              // A principal authenticated before the router (Idempotency.ts) has taken its unit there already.
              Effect.flatMap(FiberRef.get(PreAuthenticated), (known) =>
                Option.isSome(known) ? Effect.void : throttle(limits, { _tag: "Credential", principal })),
            // Without a valid credential the request counts against its address (then answers 401 if within it).
            onFailure: () =>
              Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
                throttle(limits, { _tag: "Address", address: addressOf(request) }))
          })
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
            const log = RequestLog.entryOf(request)
            if (log !== undefined) log.credentialKind = "operator"
          })
      }
    })
  )
