/** The calendar group: the caller's meetings in a time window, as calendar events. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { CalendarDirection, CalendarEvent, CalendarEventId, CalendarRules, Pagination, Timestamp } from "@convene/core"
import { Schema } from "effect"
import { Forbidden, Missing } from "./Errors.js"
import { pageParamsWith } from "./Query.js"
import { Authenticate } from "./Security.js"

const EventPath = Schema.Struct({ id: CalendarEventId })
export const CalendarEventList = Pagination.ListOf(CalendarEvent).annotations({ identifier: "CalendarEventList" })

export class CalendarApi extends HttpApiGroup.make("calendar")
  .add(
    HttpApiEndpoint.get("listEvents", "/calendar/events")
      .setUrlParams(Schema.Struct({
        start_date: Schema.propertySignature(Timestamp).annotations({
          description: "the window's first instant (required; RFC 3339 date and time, e.g. 2026-03-01T00:00:00Z; without an offset read as UTC)"
        }),
        end_date: Schema.propertySignature(Timestamp).annotations({
          description: "the window's end, outside it (required; RFC 3339 date and time; must be after start_date)"
        }),
        ...pageParamsWith(CalendarRules.DEFAULT_LIMIT),
        direction: Schema.optional(CalendarDirection).annotations({
          description: "`asc` (default): soonest first; `desc`: latest first. Equal start times are ordered by id, in the same direction"
        })
      }))
      .addSuccess(CalendarEventList)
      .annotate(OpenApi.Summary, "List calendar events")
      .annotate(
        OpenApi.Description,
        "The events of the caller's calendar that start inside the window [start_date, end_date): a meeting is listed when " +
          "its start time is at or after start_date and before end_date, whenever it ends (a meeting that started before the " +
          "window is not listed, even if it runs into it; one without an end time is listed by its start). The calendar holds " +
          "the meetings the caller takes part in (OWNER, EDITOR or VIEWER; a workspace OWNER or ADMIN sees only their own " +
          "here), or every meeting of the workspace for a workspace API key; meetings without a start time are never events; " +
          "cancelled and ended meetings are listed with their status. Ordered by start_time, then id, ascending or descending " +
          "by `direction`. `limit` defaults to 25 (at most 100). 400 `validation_error` naming the parameter when start_date " +
          "or end_date is missing or not an RFC 3339 date and time (a date alone is refused), when end_date is not after " +
          "start_date, or when direction is neither asc nor desc. Scope calendar:read."
      )
  )
  .add(
    HttpApiEndpoint.get("getEvent", "/calendar/events/:id")
      .setPath(EventPath)
      .addSuccess(CalendarEvent)
      .addError(Missing)
      .annotate(OpenApi.Summary, "Get a calendar event")
      .annotate(
        OpenApi.Description,
        "The event with this id (an event's id is its meeting's id). 404 when there is no such meeting in the workspace, " +
          "or it is not on the caller's calendar: it has no start time, or the caller does not take part in it (also when " +
          "the caller, as a workspace OWNER or ADMIN, may read the meeting itself). Scope calendar:read."
      )
  )
  .middleware(Authenticate)
  .addError(Forbidden)
  .prefix("/v1")
  .annotate(OpenApi.Title, "Calendar")
  .annotate(
    OpenApi.Description,
    "The caller's meetings as a calendar. An event is a meeting with a start time that the caller takes part in, whatever " +
      "their role on it or in the workspace; for a workspace API key, which acts as the workspace, any meeting of the " +
      "workspace with a start time. An event's id is its meeting's id; its fields are the meeting's `title`, `status`, " +
      "`start_time` and `end_time` (null when the meeting has none). Every status is shown: a cancelled meeting stays on " +
      "the calendar as `cancelled`. Scope calendar:read."
  )
{}
