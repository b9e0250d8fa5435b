/**
 * The calendar's rules (CalendarRules) and service (Calendar): the half-open window, the order by start time then
 * id in either direction, the page size, whose meetings are on whose calendar, and the refusals.
 */
import {
  AddParticipants,
  Calendar,
  CalendarEventId,
  CalendarRules,
  CreateMeeting,
  CredentialId,
  Meeting,
  MeetingFilters,
  MeetingId,
  Meetings,
  ParticipantEntry,
  ParticipantId,
  ParticipantRow,
  Participants,
  Principal,
  type Scope,
  UpdateMeeting,
  UserId,
  WorkspaceId
} from "@convene/core"
import { describe, expect, it, layer } from "@effect/vitest"
import { DateTime, Effect, FastCheck, Option } from "effect"
import { apiKeyFor, CoreLive, principalFor } from "./fixtures.js"

const T0 = DateTime.unsafeMake("2031-06-01T00:00:00.000Z")
const at = (minutes: number) => DateTime.add(T0, { minutes })
const ms = (millis: number) => DateTime.add(T0, { millis })

const scopes: ReadonlyArray<Scope> = ["meetings:read", "meetings:write", "calendar:read"]

const workspaceId = WorkspaceId.make(crypto.randomUUID())

/** A meeting value (for the pure rules; nothing is stored). */
const meeting = (fields: Partial<Meeting> = {}) =>
  new Meeting({
    id: MeetingId.make(crypto.randomUUID()),
    workspace_id: workspaceId,
    title: "Sync",
    status: "scheduled",
    start_time: null,
    end_time: null,
    is_instant: false,
    detail_level: "standard",
    template_id: null,
    owner_user_id: null,
    created_at: T0,
    updated_at: T0,
    ...fields
  })

const principal = (userId: UserId | null) =>
  new Principal({
    credential_id: CredentialId.make(crypto.randomUUID()),
    kind: userId === null ? "api_key" : "personal_access_token",
    workspace_id: workspaceId,
    user_id: userId,
    role: userId === null ? null : "OWNER",
    scopes: ["calendar:read"],
    client_id: null,
    expires_at: null
  })

const participantOf = (m: Meeting, userId: UserId) =>
  new ParticipantRow({
    id: ParticipantId.make(crypto.randomUUID()),
    workspace_id: workspaceId,
    meeting_id: m.id,
    user_id: userId,
    guest_email: null,
    role: "VIEWER",
    is_attended: false,
    created_at: T0,
    updated_at: T0
  })

describe("CalendarRules", () => {
  it("startsWithin keeps a start at the window's start and a millisecond before its end; not its end, not a millisecond before its start", () => {
    const rule = CalendarRules.startsWithin(T0, at(60))
    const inside = (start: DateTime.Utc | null, end: DateTime.Utc | null = null) =>
      MeetingFilters.matches(rule, meeting({ start_time: start, end_time: end }), [])
    expect(inside(T0)).toBe(true)
    expect(inside(DateTime.subtract(at(60), { millis: 1 }))).toBe(true)
    expect(inside(at(60))).toBe(false)
    expect(inside(ms(-1))).toBe(false)
    // When it ends plays no part: running into the window is not starting in it, and no end time is no matter.
    expect(inside(at(-30), at(30))).toBe(false)
    expect(inside(at(30), at(600))).toBe(true)
    expect(inside(at(30), null)).toBe(true)
    expect(inside(null, at(30))).toBe(false)
  })

  it.prop(
    "startsWithin holds exactly when start <= start_time < end, for any instants",
    // Milliseconds from T0, in a small range so that a start on either edge is common.
    [FastCheck.integer({ min: -10, max: 10 }), FastCheck.integer({ min: 1, max: 10 }), FastCheck.integer({ min: -25, max: 25 })],
    ([from, length, start]) => {
      const rule = CalendarRules.startsWithin(ms(from), ms(from + length))
      expect(MeetingFilters.matches(rule, meeting({ start_time: ms(start) }), [])).toBe(from <= start && start < from + length)
    }
  )

  it.effect("checkWindow refuses an end at or before the start, naming end_date and the start; a millisecond later is a window", () =>
    Effect.gen(function*() {
      for (const end of [T0, ms(-1), at(-60)]) {
        const refused = yield* Effect.flip(CalendarRules.checkWindow(T0, end))
        expect(refused._tag).toBe("ValidationError")
        expect(refused.field).toBe("end_date")
        expect(refused.message).toBe("end_date: must be after start_date (2031-06-01T00:00:00.000Z)")
      }
      yield* CalendarRules.checkWindow(T0, ms(1))
    }))

  it("calendarOf: a user's calendar is the meetings with a start time they take part in; a key's, every one with a start time", () => {
    const ann = UserId.make(crypto.randomUUID())
    const bob = UserId.make(crypto.randomUUID())
    const scheduled = meeting({ start_time: T0 })
    const unscheduled = meeting()
    const on = (who: UserId | null, m: Meeting, participants: ReadonlyArray<UserId>) =>
      MeetingFilters.matches(CalendarRules.calendarOf(principal(who)), m, participants.map((p) => participantOf(m, p)))
    expect(on(ann, scheduled, [ann])).toBe(true)
    expect(on(ann, scheduled, [bob])).toBe(false)
    expect(on(ann, scheduled, [])).toBe(false)
    expect(on(ann, unscheduled, [ann])).toBe(false)
    expect(on(null, scheduled, [])).toBe(true)
    expect(on(null, unscheduled, [])).toBe(false)
  })

  it("orderOf: asc (the default) and desc are the store's start-then-id orders", () => {
    expect(CalendarRules.orderOf("asc")).toBe("start_id_asc")
    expect(CalendarRules.orderOf("desc")).toBe("start_id_desc")
  })

  it("eventOf: the meeting's id, title, status and times; none without a start time", () => {
    const m = meeting({ title: "Review", status: "cancelled", start_time: T0, end_time: at(30) })
    expect(Option.getOrThrow(CalendarRules.eventOf(m))).toEqual({
      id: CalendarEventId.make(m.id),
      meeting_id: m.id,
      title: "Review",
      status: "cancelled",
      start_time: T0,
      end_time: at(30)
    })
    expect(Option.isNone(CalendarRules.eventOf(meeting({ end_time: at(30) })))).toBe(true)
  })
})

describe("Calendar", () => {
  layer(CoreLive)((it) => {
    /** A user of a new workspace (OWNER unless told) who may create meetings and read the calendar. */
    const user = (options: Parameters<typeof principalFor>[0] = {}) =>
      Effect.map(principalFor({ role: "OWNER", scopes, ...options }), ({ principal, workspace }) => ({ principal, workspace }))

    const create = (who: Principal, start: DateTime.Utc | null, title = "Meeting") =>
      Effect.flatMap(Meetings, (meetings) => meetings.create(who, CreateMeeting.make({ title, start_time: start })))

    it.effect("lists by start time then id, ascending by default, the exact reverse with desc; pages cut the ordered list", () =>
      Effect.gen(function*() {
        const calendar = yield* Calendar
        const { principal: ann } = yield* user()
        const tied = [yield* create(ann, at(30)), yield* create(ann, at(30)), yield* create(ann, at(30))]
        const first = yield* create(ann, at(10))
        const last = yield* create(ann, at(50))
        const ascending = [first.id, ...tied.map((m) => m.id).sort(), last.id]
        const window = { start_date: T0, end_date: at(60) }
        const ids = (page: { readonly items: ReadonlyArray<{ readonly id: string }> }) => page.items.map((e) => e.id)
        expect(ids(yield* calendar.list(ann, window, {}))).toEqual(ascending)
        expect(ids(yield* calendar.list(ann, { ...window, direction: "asc" }, {}))).toEqual(ascending)
        expect(ids(yield* calendar.list(ann, { ...window, direction: "desc" }, {}))).toEqual([...ascending].reverse())
        const page = yield* calendar.list(ann, { ...window, direction: "desc" }, { limit: 2, offset: 2 })
        expect(page).toMatchObject({ total: 5, limit: 2, offset: 2 })
        expect(ids(page)).toEqual([...ascending].reverse().slice(2, 4))
      }))

    it.effect("pages 25 by default, at most 100, as the contract's Limits table says for calendar events", () =>
      Effect.gen(function*() {
        const calendar = yield* Calendar
        const { principal: ann } = yield* user()
        yield* Effect.forEach(Array.from({ length: 27 }, (_, i) => i), (i) => create(ann, at(i)))
        const window = { start_date: T0, end_date: at(60) }
        const first = yield* calendar.list(ann, window, {})
        expect(first).toMatchObject({ total: 27, limit: 25, offset: 0 })
        expect(first.items).toHaveLength(25)
        expect(yield* calendar.list(ann, window, { limit: 0 })).toMatchObject({ limit: 25 })
        expect((yield* calendar.list(ann, window, { limit: 1000 })).items).toHaveLength(27)
        expect(yield* calendar.list(ann, window, { limit: 1000, offset: -1 })).toMatchObject({ limit: 100, offset: 0 })
      }))

    it.effect.prop(
      "any meetings, window and direction: the list is what filtering by [start, end) and sorting by start then id gives",
      {
        starts: FastCheck.array(FastCheck.option(FastCheck.integer({ min: 0, max: 8 }), { nil: null }), { minLength: 1, maxLength: 8 }),
        from: FastCheck.integer({ min: 0, max: 8 }),
        length: FastCheck.integer({ min: 1, max: 8 }),
        direction: FastCheck.constantFrom("asc" as const, "desc" as const)
      },
      ({ direction, from, length, starts }) =>
        Effect.gen(function*() {
          const calendar = yield* Calendar
          const { principal: ann } = yield* user()
          // Starts in quarter hours: few distinct values, so ties are common.
          const created = yield* Effect.forEach(starts, (start) => create(ann, start === null ? null : at(15 * start)))
          const inside = created.filter((m) => m.start_time !== null && 15 * from <= minutesOf(m.start_time) && minutesOf(m.start_time) < 15 * (from + length))
          const ascending = inside.sort((a, b) => minutesOf(a.start_time!) - minutesOf(b.start_time!) || (a.id < b.id ? -1 : 1)).map((m) => m.id)
          const listed = yield* calendar.list(ann, { start_date: at(15 * from), end_date: at(15 * (from + length)), direction }, { limit: 100 })
          expect(listed.items.map((e) => e.id)).toEqual(direction === "asc" ? ascending : [...ascending].reverse())
          expect(listed.total).toBe(ascending.length)
        }),
      { fastCheck: { numRuns: 25 } }
    )

    it.effect("holds the meetings a user takes part in, whatever their workspace role; a key's holds the workspace's", () =>
      Effect.gen(function*() {
        const calendar = yield* Calendar
        const participants = yield* Participants
        const { principal: owner, workspace } = yield* user()
        const { principal: member } = yield* user({ role: "MEMBER", workspaceId: workspace.id })
        const key = yield* apiKeyFor(workspace.id)
        const { principal: stranger } = yield* user()
        const owners = yield* create(owner, at(10), "Owner's")
        const members = yield* create(member, at(20), "Member's")
        const shared = yield* create(owner, at(30), "Shared")
        yield* participants.add(owner, shared.id, AddParticipants.make({
          participants: [ParticipantEntry.make({ role: "VIEWER", user_id: member.user_id! })]
        }))
        yield* create(owner, null, "Unscheduled")
        const theirs = yield* create(stranger, at(10), "Elsewhere")
        const window = { start_date: T0, end_date: at(60) }
        const ids = (who: Principal) => Effect.map(calendar.list(who, window, {}), (page) => page.items.map((e) => e.id))
        expect(yield* ids(owner)).toEqual([owners.id, shared.id])
        expect(yield* ids(member)).toEqual([members.id, shared.id])
        expect(yield* ids(key)).toEqual([owners.id, members.id, shared.id])
        expect(yield* ids(stranger)).toEqual([theirs.id])

        // By id: the same rule.
        expect((yield* calendar.get(member, CalendarEventId.make(shared.id))).title).toBe("Shared")
        expect((yield* calendar.get(key, CalendarEventId.make(members.id))).title).toBe("Member's")
        for (const [who, id] of [[owner, members.id], [member, owners.id], [stranger, owners.id], [owner, theirs.id]] as const) {
          const refused = yield* Effect.flip(calendar.get(who, CalendarEventId.make(id)))
          expect(refused._tag).toBe("NotFound")
          expect(refused.message).toBe(`calendar event ${id} was not found`)
        }
      }))

    it.effect("get: a meeting whose start time is taken away is no event any more (404); one of no meeting neither", () =>
      Effect.gen(function*() {
        const calendar = yield* Calendar
        const meetings = yield* Meetings
        const { principal: ann } = yield* user()
        const m = yield* create(ann, at(10))
        expect((yield* calendar.get(ann, CalendarEventId.make(m.id))).start_time).toEqual(at(10))
        yield* meetings.update(ann, m.id, UpdateMeeting.make({ start_time: null }))
        expect((yield* Effect.flip(calendar.get(ann, CalendarEventId.make(m.id))))._tag).toBe("NotFound")
        expect((yield* Effect.flip(calendar.get(ann, CalendarEventId.make(crypto.randomUUID()))))._tag).toBe("NotFound")
      }))

    it.effect("refuses without calendar:read (before anything else), and a window whose end is not after its start", () =>
      Effect.gen(function*() {
        const calendar = yield* Calendar
        const { principal: narrow } = yield* user({ scopes: ["meetings:read", "meetings:write"] })
        const m = yield* create(narrow, at(10))
        const noScope = yield* Effect.flip(calendar.list(narrow, { start_date: at(60), end_date: T0 }, {}))
        expect(noScope).toMatchObject({ _tag: "InsufficientScope", required: "calendar:read" })
        expect(yield* Effect.flip(calendar.get(narrow, CalendarEventId.make(m.id)))).toMatchObject({ _tag: "InsufficientScope" })

        const { principal: ann } = yield* user()
        const empty = yield* Effect.flip(calendar.list(ann, { start_date: T0, end_date: T0 }, {}))
        expect(empty).toMatchObject({ _tag: "ValidationError", field: "end_date" })
      }))
  })
})

const minutesOf = (instant: DateTime.Utc) => DateTime.distance(T0, instant) / 60_000
