import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { AgendaItems } from "@convene/core"
import { Effect } from "effect"
import { Api } from "@convene/api/Api"
import { AgendaItemsApi } from "@convene/api/AgendaItems"
import { encoded } from "./Encoded.js"
import { asCaller } from "./Security.js"

const answers = {
  list: encoded(AgendaItemsApi, "list"),
  create: encoded(AgendaItemsApi, "create"),
  get: encoded(AgendaItemsApi, "get"),
  update: encoded(AgendaItemsApi, "update")
}

export const AgendaItemsLive = HttpApiBuilder.group(Api, "agendaItems", (handlers) =>
  Effect.gen(function*() {
    const items = yield* AgendaItems
    return handlers
      .handle("list", asCaller((principal, { urlParams }) => Effect.map(items.list(principal, urlParams, urlParams), answers.list)))
      .handle("create", asCaller((principal, { payload }) => Effect.map(items.create(principal, payload), answers.create)))
      .handle("get", asCaller((principal, { path }) => Effect.map(items.get(principal, path.id), answers.get)))
      .handle("update", asCaller((principal, { path, payload }) => Effect.map(items.update(principal, path.id, payload), answers.update)))
      .handle("delete", asCaller((principal, { path }) => items.delete(principal, path.id)))
  }))
