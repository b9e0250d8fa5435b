import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { ActionItems } from "@convene/core"
import { Effect } from "effect"
import { Api } from "@convene/api/Api"
import { ActionItemsApi } from "@convene/api/ActionItems"
import { encoded } from "./Encoded.js"
import { asCaller } from "./Security.js"

const answers = {
  list: encoded(ActionItemsApi, "list"),
  create: encoded(ActionItemsApi, "create"),
  get: encoded(ActionItemsApi, "get"),
  update: encoded(ActionItemsApi, "update")
}

export const ActionItemsLive = HttpApiBuilder.group(Api, "actionItems", (handlers) =>
  Effect.gen(function*() {
    const items = yield* ActionItems
    return handlers
      .handle("list", asCaller((principal, { urlParams }) => Effect.map(items.list(principal, urlParams, urlParams), answers.list)))
      .handle("create", asCaller((principal, { payload }) => Effect.map(items.create(principal, payload), answers.create)))
      .handle("get", asCaller((principal, { path }) => Effect.map(items.get(principal, path.id), answers.get)))
      .handle("update", asCaller((principal, { path, payload }) => Effect.map(items.update(principal, path.id, payload), answers.update)))
      .handle("delete", asCaller((principal, { path }) => items.delete(principal, path.id)))
  }))
