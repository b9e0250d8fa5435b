import { HttpApiBuilder } from "@effect/platform"
import { AgendaItems } from "@convene/core"
import { Effect } from "effect"
import { Api } from "@convene/api/Api"
import { asCaller } from "./Security.js"

export const AgendaItemsLive = HttpApiBuilder.group(Api, "agendaItems", (handlers) =>
  Effect.gen(function*() {
    const items = yield* AgendaItems
    return handlers
      .handle("list", asCaller((principal, { urlParams }) => items.list(principal, urlParams, urlParams)))
      .handle("create", asCaller((principal, { payload }) => items.create(principal, payload)))
      .handle("get", asCaller((principal, { path }) => items.get(principal, path.id)))
      .handle("update", asCaller((principal, { path, payload }) => items.update(principal, path.id, payload)))
      .handle("delete", asCaller((principal, { path }) => items.delete(principal, path.id)))
  }))
