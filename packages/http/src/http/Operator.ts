import { HttpApiBuilder } from "@effect/platform"
import { Tokens, Users, UserView, Workspaces } from "@convene/core"
import { Effect } from "effect"
import { Api } from "../api/Api.js"

export const OperatorLive = HttpApiBuilder.group(Api, "operator", (handlers) =>
  Effect.gen(function*() {
    const workspaces = yield* Workspaces
    const users = yield* Users
    const tokens = yield* Tokens
    return handlers
      .handle("createWorkspace", ({ payload }) => workspaces.create(payload))
      .handle("updateWorkspace", ({ path, payload }) => workspaces.update(path.id, payload))
      .handle("createUser", ({ path, payload }) => Effect.map(users.create(path.id, payload), UserView.of))
      .handle("issueToken", ({ path, payload }) => tokens.issue(path.id, payload))
      .handle("createApiKey", ({ path, payload }) => tokens.issueApiKey(path.id, payload))
  }))
