import { HttpApiBuilder } from "@effect/platform"
import { Authentication, Tokens } from "@convene/core"
import { Effect } from "effect"
import { Api } from "../api/Api.js"
import { CurrentPrincipal } from "../api/Security.js"

export const IdentityLive = HttpApiBuilder.group(Api, "identity", (handlers) =>
  Effect.gen(function*() {
    const authentication = yield* Authentication
    const tokens = yield* Tokens
    return handlers
      .handle("introspect", () => Effect.map(CurrentPrincipal, authentication.introspect))
      .handle("listTokens", ({ urlParams }) =>
        Effect.flatMap(CurrentPrincipal, (principal) => tokens.listForCaller(principal, urlParams)))
      .handle("issueToken", ({ payload }) =>
        Effect.flatMap(CurrentPrincipal, (principal) => tokens.issueForCaller(principal, payload)))
      .handle("deleteToken", ({ path }) =>
        Effect.flatMap(CurrentPrincipal, (principal) => tokens.revokeForCaller(principal, path.id)))
  }))
