/**
 * Meetings.update: the status machine and what each change does to start_time and end_time. "Now" is set on
 * the TestClock at the start of each test, and moved with TestClock.adjust.
 */
import {
  CreateMeeting,
  type Meeting,
  type MeetingStatus,
  meetingTransitions,
  Meetings,
  UpdateMeeting
} from "@convene/core"
import { describe, expect, layer } from "@effect/vitest"
import { DateTime, Effect, FastCheck, TestClock } from "effect"
import { CoreLive, principalFor } from "./fixtures.js"

const NOW = DateTime.unsafeMake("2026-03-02T09:00:00.000Z")

/** `NOW` moved by whole minutes (negative: earlier). */
const at = (minutes: number) => DateTime.add(NOW, { minutes })
const iso = (minutes: number) => DateTime.formatIso(at(minutes))

/** Status and times, readable in a failure. */
const times = (meeting: Meeting) => ({
  status: meeting.status,
  start_time: meeting.start_time === null ? null : DateTime.formatIso(meeting.start_time),
  end_time: meeting.end_time === null ? null : DateTime.formatIso(meeting.end_time)
})

/** The clock at NOW, a member who owns the meetings they create, and Meetings. */
const setup = Effect.gen(function*() {
  yield* TestClock.setTime(DateTime.toEpochMillis(NOW))
  const { principal } = yield* principalFor()
  const meetings = yield* Meetings
  /** A meeting created now, with start and end `minutes` from now (null: unset). */
  const create = (start: number | null, end: number | null, fields: Partial<CreateMeeting> = {}) =>
    meetings.create(
      principal,
      CreateMeeting.make({
        title: "Planning",
        start_time: start === null ? null : at(start),
        end_time: end === null ? null : at(end),
        ...fields
      })
    )
  /** Applies the change, checks the stored meeting equals the answer, and answers its status and times. */
  const update = (meeting: Meeting, change: Partial<UpdateMeeting>) =>
    Effect.gen(function*() {
      const changed = yield* meetings.update(principal, meeting.id, UpdateMeeting.make(change))
      expect(yield* meetings.get(principal, meeting.id)).toEqual(changed)
      return changed
    })
  const refused = (meeting: Meeting, change: Partial<UpdateMeeting>) =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(meetings.update(principal, meeting.id, UpdateMeeting.make(change)))
      expect(yield* meetings.get(principal, meeting.id)).toEqual(meeting)
      return error
    })
  return { principal, meetings, create, update, refused }
})

describe("Meetings.update: status changes and times", () => {
  layer(CoreLive)((it) => {
    it.effect("scheduled in the future: starting moves the start to now and the planned end with it; ending sets the end", () =>
      Effect.gen(function*() {
        const { create, update } = yield* setup
        const meeting = yield* create(60, 120)
        const started = yield* update(meeting, { status: "in_progress" })
        expect(times(started)).toEqual({ status: "in_progress", start_time: iso(0), end_time: iso(60) })
        expect(started.updated_at).toEqual(NOW)

        yield* TestClock.adjust("25 minutes")
        const ended = yield* update(started, { status: "ended" })
        expect(times(ended)).toEqual({ status: "ended", start_time: iso(0), end_time: iso(25) })
        expect(ended.updated_at).toEqual(at(25))
      }))

    it.effect("scheduled in the future, ended directly: it took place at that instant (start and end now)", () =>
      Effect.gen(function*() {
        const { create, update } = yield* setup
        const meeting = yield* create(60, 120)
        expect(times(yield* update(meeting, { status: "ended" }))).toEqual({ status: "ended", start_time: iso(0), end_time: iso(0) })
      }))

    it.effect("scheduled without an end: starting sets the start and leaves the end unset; ending sets the end", () =>
      Effect.gen(function*() {
        const { create, update } = yield* setup
        const meeting = yield* create(30, null)
        const started = yield* update(meeting, { status: "in_progress" })
        expect(times(started)).toEqual({ status: "in_progress", start_time: iso(0), end_time: null })
        yield* TestClock.adjust("90 minutes")
        expect(times(yield* update(started, { status: "ended" }))).toEqual({ status: "ended", start_time: iso(0), end_time: iso(90) })
      }))

    it.effect("without any time: ending it directly sets start and end to now", () =>
      Effect.gen(function*() {
        const { create, update } = yield* setup
        const meeting = yield* create(null, null)
        expect(times(yield* update(meeting, { status: "ended" }))).toEqual({ status: "ended", start_time: iso(0), end_time: iso(0) })
      }))

    it.effect("scheduled in the past: starting moves it to now keeping its length; ending directly keeps the start", () =>
      Effect.gen(function*() {
        const { create, update } = yield* setup
        const late = yield* create(-120, -90)
        expect(times(yield* update(late, { status: "in_progress" })))
          .toEqual({ status: "in_progress", start_time: iso(0), end_time: iso(30) })
        const forgotten = yield* create(-120, -90)
        expect(times(yield* update(forgotten, { status: "ended" }))).toEqual({ status: "ended", start_time: iso(-120), end_time: iso(0) })
      }))

    it.effect("an end planned without a start that has passed is dropped when the meeting starts; one still ahead stays", () =>
      Effect.gen(function*() {
        const { create, update } = yield* setup
        const stale = yield* create(null, -30)
        expect(times(yield* update(stale, { status: "in_progress" }))).toEqual({ status: "in_progress", start_time: iso(0), end_time: null })
        const ahead = yield* create(null, 45)
        expect(times(yield* update(ahead, { status: "in_progress" }))).toEqual({ status: "in_progress", start_time: iso(0), end_time: iso(45) })
      }))

    it.effect("a change that is not a status change keeps the times, in every status", () =>
      Effect.gen(function*() {
        const { create, update } = yield* setup
        const scheduled = yield* create(60, 120)
        expect(times(yield* update(scheduled, { title: "Renamed" }))).toEqual(times(scheduled))
        const running = yield* update(yield* create(-10, 50), { status: "in_progress" })
        yield* TestClock.adjust("5 minutes")
        expect(times(yield* update(running, { title: "Renamed", status: "in_progress" }))).toEqual(times(running))
        const ended = yield* update(yield* create(-90, -30), { status: "ended" })
        expect(times(yield* update(ended, { detail_level: "brief" }))).toEqual(times(ended))
        const cancelled = yield* update(yield* create(60, 120), { status: "cancelled" })
        expect(times(yield* update(cancelled, { title: "Still off" }))).toEqual(times(cancelled))
      }))

    it.effect("an instant meeting runs from its creation; ending it sets the end", () =>
      Effect.gen(function*() {
        const { create, update } = yield* setup
        const instant = yield* create(null, null, { is_instant: true })
        expect(instant.is_instant).toBe(true)
        expect(times(instant)).toEqual({ status: "in_progress", start_time: iso(0), end_time: null })
        yield* TestClock.adjust("10 minutes")
        expect(times(yield* update(instant, { status: "ended" }))).toEqual({ status: "ended", start_time: iso(0), end_time: iso(10) })
      }))

    it.effect("times the request gives win over the ones the change records", () =>
      Effect.gen(function*() {
        const { create, update } = yield* setup
        // An explicit start: the planned end keeps the planned length from it.
        expect(times(yield* update(yield* create(60, 120), { status: "in_progress", start_time: at(5) })))
          .toEqual({ status: "in_progress", start_time: iso(5), end_time: iso(65) })
        // Both explicit.
        expect(times(yield* update(yield* create(60, 120), { status: "in_progress", start_time: at(-10), end_time: at(50) })))
          .toEqual({ status: "in_progress", start_time: iso(-10), end_time: iso(50) })
        // An explicit end on ending.
        expect(times(yield* update(yield* create(-60, null), { status: "ended", end_time: at(-5) })))
          .toEqual({ status: "ended", start_time: iso(-60), end_time: iso(-5) })
        // An explicit end before the planned start: the start moves to it.
        expect(times(yield* update(yield* create(60, null), { status: "ended", end_time: at(30) })))
          .toEqual({ status: "ended", start_time: iso(30), end_time: iso(30) })
        // An explicit start on ending: the end is now.
        expect(times(yield* update(yield* create(null, null), { status: "ended", start_time: at(-30) })))
          .toEqual({ status: "ended", start_time: iso(-30), end_time: iso(0) })
        // An explicit null start on starting stays null.
        expect(times(yield* update(yield* create(60, null), { status: "in_progress", start_time: null })))
          .toEqual({ status: "in_progress", start_time: null, end_time: null })
      }))

    it.effect("cancelling keeps the times, and so does putting a cancelled meeting back on the schedule", () =>
      Effect.gen(function*() {
        const { create, update } = yield* setup
        const planned = yield* create(60, 120)
        yield* TestClock.adjust("3 hours")
        const cancelled = yield* update(planned, { status: "cancelled" })
        expect(times(cancelled)).toEqual({ status: "cancelled", start_time: iso(60), end_time: iso(120) })
        const restored = yield* update(cancelled, { status: "scheduled" })
        expect(times(restored)).toEqual({ status: "scheduled", start_time: iso(60), end_time: iso(120) })
        expect(restored.updated_at).toEqual(at(180))

        const running = yield* update(yield* create(-30, 30), { status: "in_progress" })
        expect(times(yield* update(running, { status: "cancelled" })))
          .toEqual({ status: "cancelled", start_time: times(running).start_time, end_time: times(running).end_time })
      }))

    it.effect("times given together with a status are taken as given", () =>
      Effect.gen(function*() {
        const { create, update } = yield* setup
        const cancelled = yield* update(yield* create(60, 120), { status: "cancelled", start_time: at(90), end_time: at(100) })
        expect(times(cancelled)).toEqual({ status: "cancelled", start_time: iso(90), end_time: iso(100) })
        const restored = yield* update(cancelled, { status: "scheduled", start_time: at(200), end_time: null })
        expect(times(restored)).toEqual({ status: "scheduled", start_time: iso(200), end_time: null })
        // Only times, the status as it is.
        expect(times(yield* update(restored, { end_time: at(260) })))
          .toEqual({ status: "scheduled", start_time: iso(200), end_time: iso(260) })
      }))

    it.effect("ended is final: every other status is refused with 409, naming no way out; the times stay", () =>
      Effect.gen(function*() {
        const { create, refused, update } = yield* setup
        const ended = yield* update(yield* create(-60, -30), { status: "ended" })
        for (const target of ["scheduled", "in_progress", "cancelled"] as const) {
          const error = yield* refused(ended, { status: target })
          expect(error).toMatchObject({ _tag: "Conflict", message: `the meeting is ended, which is final: it cannot go to ${target}` })
          expect(error.message).not.toContain("can go to")
        }
        // Setting the status it has is no change: the title may still be corrected, the times stay.
        yield* TestClock.adjust("1 hour")
        const renamed = yield* update(ended, { status: "ended", title: "Planning (notes)" })
        expect(renamed.title).toBe("Planning (notes)")
        expect(times(renamed)).toEqual(times(ended))
      }))

    it.effect("a refused transition is 409 and its message lists the moves allowed from there", () =>
      Effect.gen(function*() {
        const { create, refused, update } = yield* setup
        const running = yield* update(yield* create(0, 60), { status: "in_progress" })
        expect(yield* refused(running, { status: "scheduled" })).toMatchObject({
          _tag: "Conflict",
          message: "a meeting cannot go from in_progress to scheduled; from in_progress it can go to ended or cancelled"
        })
        const cancelled = yield* update(yield* create(60, 120), { status: "cancelled" })
        for (const target of ["in_progress", "ended"] as const) {
          expect(yield* refused(cancelled, { status: target })).toMatchObject({
            _tag: "Conflict",
            message: `a meeting cannot go from cancelled to ${target}; from cancelled it can go to scheduled`
          })
        }
      }))

    it.effect("an end before the start is 400 naming the field the request set", () =>
      Effect.gen(function*() {
        const { create, meetings, principal, refused } = yield* setup
        const planned = yield* create(60, 120)
        expect(yield* refused(planned, { end_time: at(30) })).toMatchObject({ _tag: "ValidationError", field: "end_time" })
        expect(yield* refused(planned, { start_time: at(150) })).toMatchObject({ _tag: "ValidationError", field: "start_time" })
        expect(yield* refused(planned, { start_time: at(150), end_time: at(140) }))
          .toMatchObject({ _tag: "ValidationError", field: "end_time" })
        // Starting sets the start to now: an explicit end before it is the end's fault.
        expect(yield* refused(planned, { status: "in_progress", end_time: at(-10) }))
          .toMatchObject({ _tag: "ValidationError", field: "end_time" })
        // Ending sets the end to now: an explicit start after it is the start's fault.
        expect(yield* refused(planned, { status: "ended", start_time: at(10) }))
          .toMatchObject({ _tag: "ValidationError", field: "start_time" })
        // An end equal to the start is fine.
        expect(times(yield* meetings.update(principal, planned.id, UpdateMeeting.make({ end_time: at(60) }))).end_time).toBe(iso(60))

        expect(yield* Effect.flip(create(60, 30))).toMatchObject({ _tag: "ValidationError", field: "end_time" })
        expect(yield* Effect.flip(create(null, -5, { is_instant: true }))).toMatchObject({ _tag: "ValidationError", field: "end_time" })
      }))

    it.effect("an instant meeting takes no start_time (400 naming start_time); a null one is no start time", () =>
      Effect.gen(function*() {
        const { create } = yield* setup
        expect(yield* Effect.flip(create(30, null, { is_instant: true }))).toMatchObject({ _tag: "ValidationError", field: "start_time" })
        expect(times(yield* create(null, 30, { is_instant: true }))).toEqual({ status: "in_progress", start_time: iso(0), end_time: iso(30) })
      }))
  })

  // Model-based: any sequence of requested status changes is accepted exactly when the documented table
  // allows it (or it is no change), and a refusal lists what the table allows from there.
  const statuses: ReadonlyArray<MeetingStatus> = ["scheduled", "in_progress", "ended", "cancelled"]
  layer(CoreLive)((it) => {
    it.effect.prop(
      "follows the documented transitions for any sequence of requested changes",
      [FastCheck.array(FastCheck.constantFrom(...statuses), { maxLength: 10 })],
      ([requested]) =>
        Effect.gen(function*() {
          const { create, meetings, principal } = yield* setup
          let meeting = yield* create(60, 120)
          let model: MeetingStatus = "scheduled"
          for (const target of requested) {
            const result = yield* Effect.either(meetings.update(principal, meeting.id, UpdateMeeting.make({ status: target })))
            if (target === model || meetingTransitions[model].includes(target)) {
              expect(result._tag).toBe("Right")
              if (result._tag === "Right") meeting = result.right
              model = target
            } else {
              expect(result._tag === "Left" && result.left._tag).toBe("Conflict")
              const listed = result._tag === "Left" ? /can go to (.+)$/.exec(result.left.message)?.[1]?.split(" or ") : undefined
              const allowed = meetingTransitions[model]
              expect(listed ?? []).toEqual(allowed)
            }
            expect(meeting.status).toBe(model)
            expect((yield* meetings.get(principal, meeting.id)).status).toBe(model)
          }
        }),
      { fastCheck: { numRuns: 20 } }
    )
  })
})
