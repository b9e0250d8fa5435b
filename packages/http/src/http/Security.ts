import { HttpServerRequest } from "@effect/platform"
import { Authentication, Crypto, NotFound, Unauthenticated } from "@convene/core"
import { Effect, Layer, Option, Redacted } from "effect"
import { Authenticate, OperatorAuth } from "../api/Security.js"
import type { HostConfig } from "../Config.js"

/** The token of an `Authorization: Bearer <token>` header; none when the header is absent or of another scheme. */
const bearerToken = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
  const match = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? "")
  return match === null ? Option.none<string>() : Option.some(match[1]!)
})

export const AuthenticateLive = Layer.effect(
  Authenticate,
  Effect.gen(function*() {
    const authentication = yield* Authentication
    return {
      bearer: () =>
        Effect.flatMap(bearerToken, (token) => authentication.authenticate(Redacted.make(Option.getOrElse(token, () => ""))))
    }
  })
)

export const OperatorAuthLive = (config: HostConfig) =>
  Layer.effect(
    OperatorAuth,
    Effect.gen(function*() {
      const crypto = yield* Crypto
      return {
        operator: () =>
          Effect.gen(function*() {
            if (Option.isNone(config.operatorToken)) {
              const request = yield* HttpServerRequest.HttpServerRequest
              return yield* Effect.fail(
                new NotFound({ resource: "route", id: request.url, message: `no route for ${request.method} ${request.url}` })
              )
            }
            const token = yield* bearerToken
            if (Option.isNone(token)) {
              return yield* Effect.fail(new Unauthenticated({ reason: "missing", message: "the operator token is required" }))
            }
            if (!crypto.timingSafeEqual(token.value, Redacted.value(config.operatorToken.value))) {
              return yield* Effect.fail(new Unauthenticated({ reason: "unknown", message: "the operator token is not valid" }))
            }
          })
      }
    })
  )
