import { HttpApiBuilder } from "@effect/platform"
import { BacklogItems } from "@convene/core"
import { Effect } from "effect"
import { Api } from "@convene/api/Api"
import { asCaller } from "./Security.js"

export const BacklogLive = HttpApiBuilder.group(Api, "backlogItems", (handlers) =>
  Effect.gen(function*() {
    const backlog = yield* BacklogItems
    return handlers
      .handle("list", asCaller((principal, { urlParams }) => backlog.list(principal, urlParams)))
      .handle("create", asCaller((principal, { payload }) => backlog.create(principal, payload)))
      .handle("history", asCaller((principal, { urlParams }) => backlog.history(principal, urlParams)))
      .handle("get", asCaller((principal, { path }) => backlog.get(principal, path.id)))
      .handle("update", asCaller((principal, { path, payload }) => backlog.update(principal, path.id, payload)))
      .handle("delete", asCaller((principal, { path }) => backlog.delete(principal, path.id)))
      .handle("assign", asCaller((principal, { path, payload }) => backlog.assign(principal, path.id, payload)))
  }))
