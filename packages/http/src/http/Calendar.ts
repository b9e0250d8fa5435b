import { HttpApiBuilder } from "@effect/platform"
import { Calendar } from "@convene/core"
import { Effect } from "effect"
import { Api } from "@convene/api/Api"
import { asCaller } from "./Security.js"

export const CalendarLive = HttpApiBuilder.group(Api, "calendar", (handlers) =>
  Effect.gen(function*() {
    const calendar = yield* Calendar
    return handlers
      .handle("listEvents", asCaller((principal, { urlParams }) => calendar.list(principal, urlParams, urlParams)))
      .handle("getEvent", asCaller((principal, { path }) => calendar.get(principal, path.id)))
  }))
