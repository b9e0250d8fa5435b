/**
 * A calendar event: a meeting of the caller's calendar as a calendar shows it. The first-party document names
 * the resource and leaves its fields open; what an event is, is decided here and in Calendar.ts (the rules):
 * - the caller's calendar holds the meetings the caller takes part in (as OWNER, EDITOR or VIEWER; a meeting's
 *   owner is always one of its participants), whatever the caller's role in the workspace; a workspace API key,
 *   which acts as the workspace and is no person, has the whole workspace's meetings as its calendar;
 * - only meetings with a start time are events; every status is shown (a cancelled meeting stays on the calendar
 *   with `status: cancelled`, so that a client that synchronises learns of the cancellation);
 * - an event's id is its meeting's id.
 */
import { Schema } from "effect"
import { MeetingStatus } from "../meetings/Meeting.js"
import { CalendarEventId, MeetingId } from "../shared/Ids.js"
import { Timestamp } from "../shared/Time.js"

/** The order of a calendar list: `asc` soonest first, `desc` latest first (ties by id in the same direction). */
export const CalendarDirection = Schema.Literal("asc", "desc").annotations({ identifier: "CalendarDirection" })
export type CalendarDirection = typeof CalendarDirection.Type

export class CalendarEvent extends Schema.Class<CalendarEvent>("CalendarEvent")({
  id: Schema.propertySignature(CalendarEventId).annotations({
    description: "the event's id: the id of its meeting (equal to `meeting_id`)"
  }),
  meeting_id: MeetingId,
  title: Schema.String.annotations({ description: "the meeting's title" }),
  status: MeetingStatus.annotations({ description: "the meeting's status; cancelled meetings stay on the calendar" }),
  start_time: Schema.propertySignature(Timestamp).annotations({
    description: "when the meeting starts (a meeting without a start time is no event)"
  }),
  end_time: Schema.NullOr(Timestamp).annotations({ description: "when it ends; null when the meeting has no end time" })
}, {
  description: "A meeting of the caller's calendar: a meeting with a start time that the caller takes part in (OWNER, " +
    "EDITOR or VIEWER, whatever the caller's workspace role), or any meeting of the workspace for a workspace API key. " +
    "Every status is listed, cancelled meetings included. The event's id is the meeting's id."
}) {}
