/**
 * The calendar's rules as values (CalendarEvent.ts says what an event is): which meetings are on a caller's
 * calendar, which start inside a window, in which order a direction lists them, and when a window is refused.
 * The window is half-open, [start_date, end_date): a meeting is inside when its start time is at or after
 * start_date and before end_date; when it ends does not matter (one that started before the window and runs into
 * it is not listed; one without an end time is listed by its start). The meeting rules are MeetingFilter values:
 * the store evaluates them for a list, `MeetingFilters.matches` for one event, so both answer alike on every store.
 */
import { DateTime, Effect, Option } from "effect"
import type { Principal } from "../identity/Identity.js"
import type { Meeting } from "../meetings/Meeting.js"
import { and, MeetingFilter } from "../meetings/MeetingFilter.js"
import type { MeetingOrder } from "../meetings/MeetingStore.js"
import { ValidationError } from "../shared/Errors.js"
import { CalendarEventId } from "../shared/Ids.js"
import { trusted } from "../shared/Trusted.js"
import { type CalendarDirection, CalendarEvent } from "./CalendarEvent.js"

/** The calendar's page size when the request gives none (the contract's Limits table: 25, where other lists have 20). */
export const DEFAULT_LIMIT = 25

/**
 * The meetings of the caller's calendar: those with a start time that the caller takes part in (whatever their
 * role on the meeting or in the workspace), or, for a credential that is no person (a workspace API key, which
 * acts as the workspace), every meeting of the workspace with a start time. Always a part of what the caller may
 * read (MeetingAccess): an OWNER or ADMIN reads every meeting, but their calendar holds their own.
 */
export const calendarOf = (principal: Principal): MeetingFilter =>
  and(
    MeetingFilter.IsSet({ field: "start_time" }),
    principal.user_id === null ? MeetingFilter.All() : MeetingFilter.HasParticipant({ userId: principal.user_id })
  )

/** The meetings that start inside [start, end). */
export const startsWithin = (start: DateTime.Utc, end: DateTime.Utc): MeetingFilter =>
  and(MeetingFilter.AtOrAfter({ field: "start_time", at: start }), MeetingFilter.Before({ field: "start_time", at: end }))

/** The store's order for a direction: by start time, ties by id, both in that direction. */
export const orderOf = (direction: CalendarDirection): MeetingOrder => direction === "desc" ? "start_id_desc" : "start_id_asc"

/** A window holds something only when it ends after it starts: an end at or before the start is refused. */
export const checkWindow = (start: DateTime.Utc, end: DateTime.Utc): Effect.Effect<void, ValidationError> =>
  DateTime.greaterThan(end, start)
    ? Effect.void
    : Effect.fail(ValidationError.of("end_date", `must be after start_date (${DateTime.formatIso(start)})`))

/** The event a meeting is on a calendar: its id is the meeting's; none for a meeting without a start time. */
export const eventOf = (meeting: Meeting): Option.Option<CalendarEvent> =>
  meeting.start_time === null ? Option.none() : Option.some(
    new CalendarEvent({
      id: CalendarEventId.make(meeting.id, trusted),
      meeting_id: meeting.id,
      title: meeting.title,
      status: meeting.status,
      start_time: meeting.start_time,
      end_time: meeting.end_time
    }, trusted)
  )
