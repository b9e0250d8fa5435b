import { HttpApiBuilder } from "@effect/platform"
import { ActionItem, ActionItems, AgendaItem, AgendaItems } from "@convene/core"
import { Effect } from "effect"
import { Api } from "../api/Api.js"
import { CurrentPrincipal } from "../api/Security.js"
import { idempotently } from "./Idempotent.js"

export const AgendaItemsLive = HttpApiBuilder.group(Api, "agendaItems", (handlers) =>
  Effect.gen(function*() {
    const items = yield* AgendaItems
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentPrincipal, (principal) => items.list(principal, urlParams, urlParams)))
      .handle("create", ({ headers, payload }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          idempotently({
            key: headers["idempotency-key"],
            schema: AgendaItem,
            status: 201,
            work: items.create(principal, payload)
          })))
      .handle("get", ({ path }) => Effect.flatMap(CurrentPrincipal, (principal) => items.get(principal, path.id)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentPrincipal, (principal) => items.update(principal, path.id, payload)))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentPrincipal, (principal) => items.delete(principal, path.id)))
  }))

export const ActionItemsLive = HttpApiBuilder.group(Api, "actionItems", (handlers) =>
  Effect.gen(function*() {
    const items = yield* ActionItems
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentPrincipal, (principal) => items.list(principal, urlParams, urlParams)))
      .handle("create", ({ headers, payload }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          idempotently({
            key: headers["idempotency-key"],
            schema: ActionItem,
            status: 201,
            work: items.create(principal, payload)
          })))
      .handle("get", ({ path }) => Effect.flatMap(CurrentPrincipal, (principal) => items.get(principal, path.id)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentPrincipal, (principal) => items.update(principal, path.id, payload)))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentPrincipal, (principal) => items.delete(principal, path.id)))
  }))
