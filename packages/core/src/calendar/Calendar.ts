/**
 * The caller's calendar: the meetings on it (CalendarEvent.ts says which) that start inside a window, as events,
 * and one event by id. The rules are CalendarRules'; this service applies the scope (calendar:read), the paging
 * (25 by default) and asks the MeetingStore.
 */
import { Context, type DateTime, Effect, Layer, Option } from "effect"
import { requireScope } from "../identity/Access.js"
import type { Principal } from "../identity/Identity.js"
import { and, matches } from "../meetings/MeetingFilter.js"
import { MeetingStore } from "../meetings/MeetingStore.js"
import { NotFound } from "../shared/Errors.js"
import { type CalendarEventId, MeetingId } from "../shared/Ids.js"
import { clamp, type PageRequest, toList } from "../shared/Pagination.js"
import { trusted } from "../shared/Trusted.js"
import type { CalendarDirection } from "./CalendarEvent.js"
import { calendarOf, checkWindow, DEFAULT_LIMIT, eventOf, orderOf, startsWithin } from "./CalendarRules.js"
import { fn } from "../shared/Span.js"

/** What a calendar list asks for. */
export interface CalendarQuery {
  /** The window's first instant (inside). */
  readonly start_date: DateTime.Utc
  /** The window's end (outside): after start_date, else 400. */
  readonly end_date: DateTime.Utc
  /** `asc` (the default): soonest first; `desc`: latest first. */
  readonly direction?: CalendarDirection | undefined
}

const make = Effect.gen(function*() {
  const store = yield* MeetingStore

  /** The events of the caller's calendar that start inside [start_date, end_date), a page of them. */
  const list = fn("Calendar.list")(function*(principal: Principal, query: CalendarQuery, request: PageRequest) {
    yield* requireScope(principal, "calendar:read")
    yield* checkWindow(query.start_date, query.end_date)
    const page = clamp(request, DEFAULT_LIMIT)
    const slice = yield* store.list(
      principal.workspace_id,
      and(calendarOf(principal), startsWithin(query.start_date, query.end_date)),
      orderOf(query.direction ?? "asc"),
      page
    )
    const items = yield* Effect.forEach(slice.items, (meeting) =>
      Option.match(eventOf(meeting), {
        onNone: () => Effect.dieMessage(`the store listed meeting ${meeting.id}, which has no start time, as a calendar event`),
        onSome: Effect.succeed
      }))
    return toList({ items, total: slice.total }, page)
  })

  /** One event of the caller's calendar; 404 for a meeting that is missing or not on it (no start time, not theirs). */
  const get = fn("Calendar.get")(function*(principal: Principal, id: CalendarEventId) {
    yield* requireScope(principal, "calendar:read")
    const meetingId = MeetingId.make(id, trusted)
    const meeting = yield* store.get(principal.workspace_id, meetingId)
    const participants = Option.isNone(meeting) ? [] : yield* store.listParticipants(principal.workspace_id, meetingId)
    const event = Option.filter(meeting, (m) => matches(calendarOf(principal), m, participants)).pipe(Option.flatMap(eventOf))
    if (Option.isNone(event)) return yield* Effect.fail(NotFound.of("calendar event", id))
    return event.value
  })

  return { list, get } as const
})

export class Calendar extends Context.Tag("@convene/core/Calendar")<Calendar, Effect.Effect.Success<typeof make>>() {
  static readonly layer: Layer.Layer<Calendar, never, MeetingStore> = Layer.effect(Calendar, make)
}
