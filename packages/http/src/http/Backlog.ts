import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { BacklogItems } from "@convene/core"
import { Effect } from "effect"
import { Api } from "@convene/api/Api"
import { BacklogApi } from "@convene/api/Backlog"
import { encoded } from "./Encoded.js"
import { asCaller } from "./Security.js"

const answers = {
  list: encoded(BacklogApi, "list"),
  create: encoded(BacklogApi, "create"),
  history: encoded(BacklogApi, "history"),
  get: encoded(BacklogApi, "get"),
  update: encoded(BacklogApi, "update")
}

export const BacklogLive = HttpApiBuilder.group(Api, "backlogItems", (handlers) =>
  Effect.gen(function*() {
    const backlog = yield* BacklogItems
    return handlers
      .handle("list", asCaller((principal, { urlParams }) => Effect.map(backlog.list(principal, urlParams), answers.list)))
      .handle("create", asCaller((principal, { payload }) => Effect.map(backlog.create(principal, payload), answers.create)))
      .handle("history", asCaller((principal, { urlParams }) => Effect.map(backlog.history(principal, urlParams), answers.history)))
      .handle("get", asCaller((principal, { path }) => Effect.map(backlog.get(principal, path.id), answers.get)))
      .handle("update", asCaller((principal, { path, payload }) => Effect.map(backlog.update(principal, path.id, payload), answers.update)))
      .handle("delete", asCaller((principal, { path }) => backlog.delete(principal, path.id)))
      .handle("assign", asCaller((principal, { path, payload }) => backlog.assign(principal, path.id, payload)))
  }))
