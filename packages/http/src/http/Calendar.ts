import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Calendar } from "@convene/core"
import { Effect } from "effect"
import { Api } from "@convene/api/Api"
import { CalendarApi } from "@convene/api/Calendar"
import { encoded } from "./Encoded.js"
import { asCaller } from "./Security.js"

const answers = {
  listEvents: encoded(CalendarApi, "listEvents"),
  getEvent: encoded(CalendarApi, "getEvent")
}

export const CalendarLive = HttpApiBuilder.group(Api, "calendar", (handlers) =>
  Effect.gen(function*() {
    const calendar = yield* Calendar
    return handlers
      .handle("listEvents", asCaller((principal, { urlParams }) => Effect.map(calendar.list(principal, urlParams, urlParams), answers.listEvents)))
      .handle("getEvent", asCaller((principal, { path }) => Effect.map(calendar.get(principal, path.id), answers.getEvent)))
  }))
