import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Authentication, Tokens, Users } from "@convene/core"
import { Effect, Option } from "effect"
import { Api } from "@convene/api/Api"
import { EventStreams } from "./EventStreams.js"
import { IdentityApi } from "@convene/api/Identity"
import { encoded } from "./Encoded.js"
import { asCaller } from "./Security.js"

const answers = {
  me: encoded(IdentityApi, "me"),
  listTokens: encoded(IdentityApi, "listTokens")
}

export const IdentityLive = HttpApiBuilder.group(Api, "identity", (handlers) =>
  Effect.gen(function*() {
    const authentication = yield* Authentication
    const tokens = yield* Tokens
    const users = yield* Users
    const streams = yield* EventStreams
    return handlers
      .handle("introspect", asCaller((principal) => Effect.succeed(authentication.introspect(principal))))
      .handle("listTokens", asCaller((principal, { urlParams }) => Effect.map(tokens.listForCaller(principal, urlParams), answers.listTokens)))
      .handle("issueToken", asCaller((principal, { payload }) => tokens.issueForCaller(principal, payload)))
      .handle("deleteToken", asCaller((principal, { path }) => tokens.revokeForCaller(principal, path.id)))
      .handle("me", asCaller((principal) => Effect.map(users.me(principal), answers.me)))
      .handleRaw(
        "events",
        asCaller((principal, { headers }) => streams.open(principal, Option.fromNullable(headers["last-event-id"])))
      )
  }))
