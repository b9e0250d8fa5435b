import {
  ActionItemStore,
  AgendaItemStore,
  CalendarRules,
  CredentialId,
  type Meeting,
  MeetingFilter,
  MeetingFilters,
  MeetingId,
  type MeetingOrder,
  type MeetingStatus,
  MeetingStore,
  ParticipantId,
  Principal,
  type StorePorts,
  Transactor,
  UserId,
  type WorkspaceId
} from "@convene/core"
import { addEqualityTesters, expect, layer } from "@effect/vitest"
import { DateTime, Effect, FastCheck, type Layer, Option } from "effect"
import {
  at,
  email,
  ids,
  meeting,
  minutes,
  participant,
  rolledBack,
  seedActionItem,
  seedAgendaItem,
  seedMeeting,
  seedMeetingInNewWorkspace,
  seedParticipant,
  seedUser,
  seedWorkspace,
  segment,
  sortedIds,
  T0,
  templateIds,
  uuid
} from "./fixtures.js"

const everything = { limit: 100, offset: 0 }

const statuses: ReadonlyArray<MeetingStatus> = ["scheduled", "in_progress", "ended", "cancelled"]

/** Half-hour steps from T0. */
const slot = (n: number) => minutes(30 * n)

// --- The list property: generated rows and generated filter trees --------------------------------------------

/** Stand-ins for the users of one run of the property; each run swaps in the ids of the users it creates. */
const placeholderUsers: ReadonlyArray<UserId> = [0, 1, 2].map((i) => UserId.make(`00000000-0000-4000-8000-00000000000${i}`))

/** Meetings for the list property: few distinct values, so that filters bite and orderings tie. */
const meetingSpec = FastCheck.record({
  title: FastCheck.string({ unit: FastCheck.constantFrom("a", "B", "%", "_", " "), minLength: 1, maxLength: 4 }),
  status: FastCheck.constantFrom(...statuses),
  start: FastCheck.option(FastCheck.integer({ min: -3, max: 3 }), { nil: null }),
  end: FastCheck.option(FastCheck.integer({ min: -3, max: 3 }), { nil: null }),
  created: FastCheck.integer({ min: 0, max: 2 }),
  /** Which of the run's users take part (by index); guests are added to every meeting. */
  participants: FastCheck.subarray([0, 1, 2])
})

const timeField = FastCheck.constantFrom("start_time" as const, "end_time" as const)

/** One node that is not And or Or. Times are slots in the range the rows use, so that ties are common. */
const leafFilter: FastCheck.Arbitrary<MeetingFilter> = FastCheck.oneof(
  FastCheck.constant(MeetingFilter.All()),
  FastCheck.subarray([...statuses]).map((statuses) => MeetingFilter.StatusIn({ statuses })),
  FastCheck.constantFrom(...placeholderUsers).map((userId) => MeetingFilter.HasParticipant({ userId })),
  FastCheck.string({ unit: FastCheck.constantFrom("a", "A", "b", "%", "_"), maxLength: 2 })
    .map((text) => MeetingFilter.TitleContains({ text })),
  timeField.map((field) => MeetingFilter.IsSet({ field })),
  timeField.map((field) => MeetingFilter.IsUnset({ field })),
  FastCheck.tuple(timeField, FastCheck.integer({ min: -3, max: 3 }))
    .map(([field, n]) => MeetingFilter.AtOrAfter({ field, at: slot(n) })),
  FastCheck.tuple(timeField, FastCheck.integer({ min: -3, max: 3 }))
    .map(([field, n]) => MeetingFilter.Before({ field, at: slot(n) }))
)

/** Filter trees with And and Or nested up to `depth` levels, empty ones included. */
const filterTree = (depth: number): FastCheck.Arbitrary<MeetingFilter> =>
  depth === 0 ? leafFilter : FastCheck.oneof(
    { arbitrary: leafFilter, weight: 2 },
    {
      arbitrary: FastCheck.array(filterTree(depth - 1), { maxLength: 3 }).map((filters) => MeetingFilter.And({ filters })),
      weight: 1
    },
    {
      arbitrary: FastCheck.array(filterTree(depth - 1), { maxLength: 3 }).map((filters) => MeetingFilter.Or({ filters })),
      weight: 1
    }
  )

/** The filter with each placeholder user replaced by the run's user of the same index. */
const withUsers = (filter: MeetingFilter, users: ReadonlyArray<UserId>): MeetingFilter => {
  switch (filter._tag) {
    case "And":
      return MeetingFilter.And({ filters: filter.filters.map((f) => withUsers(f, users)) })
    case "Or":
      return MeetingFilter.Or({ filters: filter.filters.map((f) => withUsers(f, users)) })
    case "HasParticipant":
      return MeetingFilter.HasParticipant({ userId: users[placeholderUsers.indexOf(filter.userId)] ?? filter.userId })
    default:
      return filter
  }
}

/** A principal of the workspace: the user's (a MEMBER's token with every member scope), or a workspace API key's (null). */
const principalOf = (workspaceId: WorkspaceId, userId: UserId | null) =>
  new Principal({
    credential_id: CredentialId.make(uuid()),
    kind: userId === null ? "api_key" : "personal_access_token",
    workspace_id: workspaceId,
    user_id: userId,
    role: userId === null ? null : "MEMBER",
    scopes: ["meetings:read", "calendar:read"],
    client_id: null,
    expires_at: null
  })

const byId = (a: Meeting, b: Meeting) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** The order of each MeetingOrder, computed the plain way (the start orders are only asked of meetings with a start time). */
const expectedOrder: Record<MeetingOrder, (a: Meeting, b: Meeting) => number> = {
  created_desc: (a, b) => b.created_at.epochMillis - a.created_at.epochMillis || byId(b, a),
  start_asc: (a, b) =>
    a.start_time!.epochMillis - b.start_time!.epochMillis || a.created_at.epochMillis - b.created_at.epochMillis ||
    byId(a, b),
  start_id_asc: (a, b) => a.start_time!.epochMillis - b.start_time!.epochMillis || byId(a, b),
  start_id_desc: (a, b) => b.start_time!.epochMillis - a.start_time!.epochMillis || byId(b, a)
}

const startOrders: ReadonlyArray<MeetingOrder> = ["start_asc", "start_id_asc", "start_id_desc"]

// --- The upcoming rule, case by case ---------------------------------------------------------------------------

interface UpcomingCase {
  readonly name: string
  readonly status: MeetingStatus
  /** Minutes from the instant the rule is asked about; null: not set. */
  readonly start: number | null
  readonly end: number | null
  readonly listed: boolean
}

const upcomingCases: ReadonlyArray<UpcomingCase> = [
  { name: "scheduled, ending in the future", status: "scheduled", start: -30, end: 30, listed: true },
  { name: "scheduled, ending exactly now", status: "scheduled", start: -30, end: 0, listed: true },
  { name: "scheduled, ended in the past", status: "scheduled", start: -60, end: -1, listed: false },
  { name: "scheduled without an end, starting in the future", status: "scheduled", start: 30, end: null, listed: true },
  { name: "scheduled without an end, starting exactly now", status: "scheduled", start: 0, end: null, listed: true },
  { name: "scheduled without an end, started in the past", status: "scheduled", start: -1, end: null, listed: false },
  { name: "in_progress without an end, started in the past", status: "in_progress", start: -600, end: null, listed: true },
  { name: "in_progress with an end in the past", status: "in_progress", start: -60, end: -1, listed: false },
  { name: "scheduled without a start time (no end)", status: "scheduled", start: null, end: null, listed: false },
  { name: "scheduled without a start time (end in the future)", status: "scheduled", start: null, end: 60, listed: false },
  { name: "in_progress without a start time", status: "in_progress", start: null, end: null, listed: false },
  { name: "ended, even if in the future", status: "ended", start: 30, end: 60, listed: false },
  { name: "cancelled, even if in the future", status: "cancelled", start: 30, end: 60, listed: false }
]

export const suite = (name: string, storeLayer: Layer.Layer<StorePorts, unknown>) => {
  addEqualityTesters()

  layer(storeLayer)(`MeetingStore (${name})`, (it) => {
    /** The ids `filter` lists in the workspace, all of them (total checked against the page). */
    const listed = (workspaceId: WorkspaceId, filter: MeetingFilter, order: MeetingOrder = "created_desc") =>
      Effect.gen(function*() {
        const slice = yield* (yield* MeetingStore).list(workspaceId, filter, order, everything)
        expect(slice.total).toBe(slice.items.length)
        return ids(slice.items)
      })

    /** `listed`, as a set (for filters whose order is not the point). */
    const listedSet = (workspaceId: WorkspaceId, filter: MeetingFilter) =>
      Effect.map(listed(workspaceId, filter), (found) => [...found].sort())

    const sortedIdsOf = (...rows: ReadonlyArray<{ readonly id: string }>) => ids(rows).slice().sort()

    it.effect("insert then get answers every field, nulls included", () =>
      Effect.gen(function*() {
        const store = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const owner = yield* seedUser(ws.id)
        const full = meeting(ws.id, {
          title: "Kickoff: Ünïcode ✓",
          status: "in_progress",
          start_time: at("2026-03-02T10:15:30.123Z"),
          end_time: at("2026-03-02T11:00:00.000Z"),
          is_instant: true,
          detail_level: "detailed",
          template_id: templateIds.retrospective,
          owner_user_id: owner.id,
          created_at: minutes(-3),
          updated_at: minutes(4)
        })
        const bare = meeting(ws.id)
        yield* store.insert(full)
        yield* store.insert(bare)
        expect(yield* store.get(ws.id, full.id)).toEqual(Option.some(full))
        expect(yield* store.get(ws.id, bare.id)).toEqual(Option.some(bare))
        expect(Option.isNone(yield* store.get(ws.id, MeetingId.make(uuid())))).toBe(true)
      }))

    it.effect("update replaces every field, to null as well", () =>
      Effect.gen(function*() {
        const store = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const owner = yield* seedUser(ws.id)
        const original = yield* seedMeeting(ws.id, {
          start_time: minutes(60),
          end_time: minutes(90),
          template_id: templateIds.oneOnOne,
          owner_user_id: owner.id
        })
        const changed = meeting(ws.id, {
          ...original,
          title: "Renamed",
          status: "cancelled",
          start_time: null,
          end_time: null,
          detail_level: "brief",
          template_id: null,
          owner_user_id: null,
          updated_at: minutes(1)
        })
        yield* store.update(changed)
        expect(yield* store.get(ws.id, original.id)).toEqual(Option.some(changed))

        const rescheduled = meeting(ws.id, { ...changed, status: "scheduled", start_time: minutes(120), updated_at: minutes(2) })
        yield* store.update(rescheduled)
        expect(yield* store.get(ws.id, original.id)).toEqual(Option.some(rescheduled))
      }))

    it.effect("every read and write is scoped by workspace", () =>
      Effect.gen(function*() {
        const store = yield* MeetingStore
        const mine = yield* seedWorkspace()
        const theirs = yield* seedWorkspace()
        const owner = yield* seedUser(mine.id)
        const stored = yield* seedMeeting(mine.id)
        const row = yield* seedParticipant(stored, { user_id: owner.id })
        yield* store.appendTranscript(mine.id, [segment(stored)])

        expect(Option.isNone(yield* store.get(theirs.id, stored.id))).toBe(true)
        expect((yield* store.list(theirs.id, MeetingFilter.All(), "created_desc", everything)).items).toEqual([])
        expect(yield* store.listParticipants(theirs.id, stored.id)).toEqual([])
        expect(Option.isNone(yield* store.findParticipant(theirs.id, stored.id, owner.id))).toBe(true)
        expect(yield* store.transcript(theirs.id, stored.id)).toEqual([])
        expect(yield* store.meetingIdsOf(theirs.id, owner.id)).toEqual([])

        yield* store.update(meeting(theirs.id, { ...stored, workspace_id: theirs.id, title: "Hijacked" }))
        expect(yield* store.removeParticipant(theirs.id, row.id)).toBe(false)
        expect(yield* store.delete(theirs.id, stored.id)).toBe(false)

        expect(yield* store.get(mine.id, stored.id)).toEqual(Option.some(stored))
        expect(Option.isNone(yield* store.get(theirs.id, stored.id))).toBe(true)
        expect(yield* store.listParticipants(mine.id, stored.id)).toEqual([row])
      }))

    it.effect("delete answers whether the meeting existed", () =>
      Effect.gen(function*() {
        const store = yield* MeetingStore
        const stored = yield* seedMeetingInNewWorkspace()
        expect(yield* store.delete(stored.workspace_id, stored.id)).toBe(true)
        expect(Option.isNone(yield* store.get(stored.workspace_id, stored.id))).toBe(true)
        expect(yield* store.delete(stored.workspace_id, stored.id)).toBe(false)
        expect(yield* store.delete(stored.workspace_id, MeetingId.make(uuid()))).toBe(false)
      }))

    it.effect("delete removes the meeting's participants and transcript, and nothing of other meetings", () =>
      Effect.gen(function*() {
        const store = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const member = yield* seedUser(ws.id)
        const doomed = yield* seedMeeting(ws.id)
        const kept = yield* seedMeeting(ws.id)
        for (const m of [doomed, kept]) {
          yield* seedParticipant(m, { user_id: member.id })
          yield* seedParticipant(m)
          yield* store.appendTranscript(ws.id, [segment(m), segment(m, { offset_ms: 10 })])
        }

        expect(yield* store.delete(ws.id, doomed.id)).toBe(true)

        expect(yield* store.listParticipants(ws.id, doomed.id)).toEqual([])
        expect(Option.isNone(yield* store.findParticipant(ws.id, doomed.id, member.id))).toBe(true)
        expect(yield* store.transcript(ws.id, doomed.id)).toEqual([])
        expect(yield* store.meetingIdsOf(ws.id, member.id)).toEqual([kept.id])
        expect(yield* listed(ws.id, MeetingFilter.HasParticipant({ userId: member.id }))).toEqual([kept.id])

        expect(yield* store.listParticipants(ws.id, kept.id)).toHaveLength(2)
        expect(yield* store.transcript(ws.id, kept.id)).toHaveLength(2)
      }))

    it.effect("delete leaves the agenda and action items other ports keep on the meeting (core deletes them)", () =>
      Effect.gen(function*() {
        const store = yield* MeetingStore
        const agenda = yield* AgendaItemStore
        const actions = yield* ActionItemStore
        const ws = yield* seedWorkspace()
        const member = yield* seedUser(ws.id)
        const m = yield* seedMeeting(ws.id)
        const item = yield* seedAgendaItem(m)
        yield* agenda.setTalkingPoints(item.id, member.id, ["still here"])
        const pointing = yield* seedActionItem(m, { agenda_item_id: item.id })
        const loose = yield* seedActionItem(m)

        // Looked at inside a unit that is rolled back: PostgreSQL refuses to commit such a state (see the
        // store-pg migration tests), the memory store would keep it; either way the meeting store left them.
        const inside = yield* rolledBack(Effect.gen(function*() {
          const existed = yield* store.delete(ws.id, m.id)
          return {
            existed,
            meeting: yield* store.get(ws.id, m.id),
            item: yield* agenda.get(ws.id, item.id),
            points: (yield* agenda.talkingPoints([item.id], member.id)).get(item.id),
            pointing: yield* actions.get(ws.id, pointing.id),
            loose: yield* actions.get(ws.id, loose.id)
          }
        }))
        expect(inside).toEqual({
          existed: true,
          meeting: Option.none(),
          item: Option.some(item),
          points: ["still here"],
          pointing: Option.some(pointing),
          loose: Option.some(loose)
        })
        expect(yield* store.get(ws.id, m.id)).toEqual(Option.some(m))
      }))

    it.effect("created_desc lists newest first, ties by id descending", () =>
      Effect.gen(function*() {
        const store = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const [low, high] = sortedIds(2).map((id) => MeetingId.make(id))
        const oldest = yield* seedMeeting(ws.id, { created_at: minutes(-10) })
        const tieHigh = yield* seedMeeting(ws.id, { id: high!, created_at: T0 })
        const newest = yield* seedMeeting(ws.id, { created_at: minutes(10) })
        const tieLow = yield* seedMeeting(ws.id, { id: low!, created_at: T0 })
        const slice = yield* store.list(ws.id, MeetingFilter.All(), "created_desc", everything)
        expect(ids(slice.items)).toEqual([newest.id, tieHigh.id, tieLow.id, oldest.id])
        expect(slice.total).toBe(4)
      }))

    it.effect("start_asc lists soonest first, then created_at, then id", () =>
      Effect.gen(function*() {
        const ws = yield* seedWorkspace()
        const [low, high] = sortedIds(2).map((id) => MeetingId.make(id))
        const later = yield* seedMeeting(ws.id, { start_time: minutes(60), created_at: minutes(0) })
        const tieHigh = yield* seedMeeting(ws.id, { id: high!, start_time: minutes(90), created_at: minutes(0) })
        const soonest = yield* seedMeeting(ws.id, { start_time: minutes(30), created_at: minutes(5) })
        const tieLow = yield* seedMeeting(ws.id, { id: low!, start_time: minutes(90), created_at: minutes(0) })
        const createdEarlier = yield* seedMeeting(ws.id, { start_time: minutes(90), created_at: minutes(-5) })
        expect(yield* listed(ws.id, MeetingFilter.IsSet({ field: "start_time" }), "start_asc"))
          .toEqual([soonest.id, later.id, createdEarlier.id, tieLow.id, tieHigh.id])
      }))

    it.effect("start_id_asc lists soonest first, then by id (created_at plays no part); start_id_desc is its exact reverse", () =>
      Effect.gen(function*() {
        const ws = yield* seedWorkspace()
        const [low, middle, high] = sortedIds(3).map((id) => MeetingId.make(id))
        const later = yield* seedMeeting(ws.id, { start_time: minutes(60), created_at: minutes(-30) })
        const tieHigh = yield* seedMeeting(ws.id, { id: high!, start_time: minutes(90), created_at: minutes(-20) })
        const soonest = yield* seedMeeting(ws.id, { start_time: minutes(30), created_at: minutes(5) })
        const tieLow = yield* seedMeeting(ws.id, { id: low!, start_time: minutes(90), created_at: minutes(10) })
        const tieMiddle = yield* seedMeeting(ws.id, { id: middle!, start_time: minutes(90), created_at: minutes(0) })
        // A millisecond apart: the stores keep start times to the millisecond.
        const justAfter = yield* seedMeeting(ws.id, { start_time: DateTime.add(minutes(30), { millis: 1 }) })
        const ascending = [soonest.id, justAfter.id, later.id, tieLow.id, tieMiddle.id, tieHigh.id]
        const withStart = MeetingFilter.IsSet({ field: "start_time" })
        expect(yield* listed(ws.id, withStart, "start_id_asc")).toEqual(ascending)
        expect(yield* listed(ws.id, withStart, "start_id_desc")).toEqual([...ascending].reverse())

        const store = yield* MeetingStore
        const page = yield* store.list(ws.id, withStart, "start_id_desc", { limit: 2, offset: 1 })
        expect(ids(page.items)).toEqual([tieMiddle.id, tieLow.id])
        expect(page.total).toBe(6)
      }))

    // --- The calendar's rules (core's CalendarRules), as every store evaluates them ------------------------------

    it.effect("calendar: a window [start, end) keeps the meetings starting at or after start and before end, by start time alone", () =>
      Effect.gen(function*() {
        const ws = yield* seedWorkspace()
        const start = minutes(0)
        const end = minutes(24 * 60)
        const atStart = yield* seedMeeting(ws.id, { start_time: start })
        const msBeforeStart = yield* seedMeeting(ws.id, { start_time: DateTime.subtract(start, { millis: 1 }), end_time: minutes(60) })
        const msBeforeEnd = yield* seedMeeting(ws.id, { start_time: DateTime.subtract(end, { millis: 1 }), end_time: minutes(48 * 60) })
        const atEnd = yield* seedMeeting(ws.id, { start_time: end })
        const withoutEnd = yield* seedMeeting(ws.id, { start_time: minutes(60), status: "in_progress" })
        const cancelled = yield* seedMeeting(ws.id, { start_time: minutes(120), end_time: minutes(180), status: "cancelled" })
        const ended = yield* seedMeeting(ws.id, { start_time: minutes(240), end_time: minutes(300), status: "ended" })
        const withoutStart = yield* seedMeeting(ws.id, { end_time: minutes(60) })
        const rule = CalendarRules.startsWithin(start, end)
        const all = [atStart, msBeforeStart, msBeforeEnd, atEnd, withoutEnd, cancelled, ended, withoutStart]
        const inside = [atStart, withoutEnd, cancelled, ended, msBeforeEnd]
        expect(all.filter((m) => MeetingFilters.matches(rule, m, [])).map((m) => m.id).sort()).toEqual(sortedIdsOf(...inside))
        expect(yield* listed(ws.id, rule, CalendarRules.orderOf("asc"))).toEqual(ids(inside))
        expect(yield* listed(ws.id, rule, CalendarRules.orderOf("desc"))).toEqual(ids([...inside].reverse()))
      }))

    it.effect("calendar: a user's calendar holds the meetings with a start time they take part in; a key's, every one with a start time", () =>
      Effect.gen(function*() {
        const ws = yield* seedWorkspace()
        const other = yield* seedWorkspace()
        const ada = yield* seedUser(ws.id, { role: "OWNER" })
        const bob = yield* seedUser(ws.id)
        const owned = yield* seedMeeting(ws.id, { start_time: minutes(10), owner_user_id: ada.id })
        yield* seedParticipant(owned, { user_id: ada.id, role: "OWNER" })
        const viewing = yield* seedMeeting(ws.id, { start_time: minutes(20) })
        yield* seedParticipant(viewing, { user_id: ada.id, role: "VIEWER" })
        yield* seedParticipant(viewing, { user_id: bob.id, role: "OWNER" })
        const bobs = yield* seedMeeting(ws.id, { start_time: minutes(30) })
        yield* seedParticipant(bobs, { user_id: bob.id, role: "OWNER" })
        const unscheduled = yield* seedMeeting(ws.id)
        yield* seedParticipant(unscheduled, { user_id: ada.id, role: "OWNER" })
        const elsewhere = yield* seedMeeting(other.id, { start_time: minutes(10) })
        yield* seedParticipant(elsewhere, { user_id: ada.id })

        const calendar = (principal: Principal) =>
          listed(ws.id, MeetingFilters.and(CalendarRules.calendarOf(principal), CalendarRules.startsWithin(minutes(-60), minutes(60))), "start_id_asc")
        // Ada is an OWNER of the workspace: she may read Bob's meeting, but it is not on her calendar.
        expect(yield* calendar(principalOf(ws.id, ada.id))).toEqual(ids([owned, viewing]))
        expect(yield* calendar(principalOf(ws.id, bob.id))).toEqual(ids([viewing, bobs]))
        expect(yield* calendar(principalOf(ws.id, null))).toEqual(ids([owned, viewing, bobs]))
        expect(yield* calendar(principalOf(ws.id, UserId.make(uuid())))).toEqual([])
      }))

    // --- One test per MeetingFilter node -----------------------------------------------------------------------

    it.effect("All lists every meeting of the workspace and none of another", () =>
      Effect.gen(function*() {
        const ws = yield* seedWorkspace()
        const other = yield* seedWorkspace()
        const rows = [
          yield* seedMeeting(ws.id, { status: "scheduled" }),
          yield* seedMeeting(ws.id, { status: "ended", start_time: minutes(-60), end_time: minutes(-30) }),
          yield* seedMeeting(ws.id, { status: "cancelled", title: "Nothing in common" })
        ]
        yield* seedMeeting(other.id)
        expect(yield* listedSet(ws.id, MeetingFilter.All())).toEqual(sortedIdsOf(...rows))
      }))

    it.effect("StatusIn keeps the meetings whose status is listed; no status keeps none", () =>
      Effect.gen(function*() {
        const ws = yield* seedWorkspace()
        const byStatus = new Map<MeetingStatus, Meeting>()
        for (const status of statuses) byStatus.set(status, yield* seedMeeting(ws.id, { status }))
        for (const status of statuses) {
          expect(yield* listed(ws.id, MeetingFilter.StatusIn({ statuses: [status] }))).toEqual([byStatus.get(status)!.id])
        }
        expect(yield* listedSet(ws.id, MeetingFilter.StatusIn({ statuses: ["ended", "cancelled"] })))
          .toEqual(sortedIdsOf(byStatus.get("ended")!, byStatus.get("cancelled")!))
        expect(yield* listedSet(ws.id, MeetingFilter.StatusIn({ statuses }))).toEqual(sortedIdsOf(...byStatus.values()))
        expect(yield* listed(ws.id, MeetingFilter.StatusIn({ statuses: [] }))).toEqual([])
      }))

    it.effect("HasParticipant keeps the meetings the user takes part in, whatever the role", () =>
      Effect.gen(function*() {
        const ws = yield* seedWorkspace()
        const ada = yield* seedUser(ws.id)
        const bob = yield* seedUser(ws.id)
        const owned = yield* seedMeeting(ws.id)
        const viewing = yield* seedMeeting(ws.id)
        const bobs = yield* seedMeeting(ws.id)
        const guestsOnly = yield* seedMeeting(ws.id)
        yield* seedParticipant(owned, { user_id: ada.id, role: "OWNER" })
        yield* seedParticipant(viewing, { user_id: ada.id, role: "VIEWER" })
        yield* seedParticipant(viewing, { user_id: bob.id, role: "EDITOR" })
        yield* seedParticipant(bobs, { user_id: bob.id })
        yield* seedParticipant(guestsOnly)

        expect(yield* listedSet(ws.id, MeetingFilter.HasParticipant({ userId: ada.id }))).toEqual(sortedIdsOf(owned, viewing))
        expect(yield* listedSet(ws.id, MeetingFilter.HasParticipant({ userId: bob.id }))).toEqual(sortedIdsOf(viewing, bobs))
        expect(yield* listed(ws.id, MeetingFilter.HasParticipant({ userId: UserId.make(uuid()) }))).toEqual([])
      }))

    it.effect("TitleContains compares case-insensitively", () =>
      Effect.gen(function*() {
        const ws = yield* seedWorkspace()
        const quarterly = yield* seedMeeting(ws.id, { title: "Quarterly Planning" })
        const poker = yield* seedMeeting(ws.id, { title: "planning poker" })
        const retro = yield* seedMeeting(ws.id, { title: "Retro" })
        expect(yield* listedSet(ws.id, MeetingFilter.TitleContains({ text: "PLAN" }))).toEqual(sortedIdsOf(quarterly, poker))
        expect(yield* listedSet(ws.id, MeetingFilter.TitleContains({ text: "plan" }))).toEqual(sortedIdsOf(quarterly, poker))
        expect(yield* listed(ws.id, MeetingFilter.TitleContains({ text: "rLY p" }))).toEqual([quarterly.id])
        expect(yield* listed(ws.id, MeetingFilter.TitleContains({ text: "retro" }))).toEqual([retro.id])
        expect(yield* listed(ws.id, MeetingFilter.TitleContains({ text: "nothing like this" }))).toEqual([])
        expect(yield* listedSet(ws.id, MeetingFilter.TitleContains({ text: "" }))).toEqual(sortedIdsOf(quarterly, poker, retro))
      }))

    it.effect("TitleContains takes %, _ and \\ literally", () =>
      Effect.gen(function*() {
        const ws = yield* seedWorkspace()
        const percent = yield* seedMeeting(ws.id, { title: "Budget 50% review" })
        const fifty = yield* seedMeeting(ws.id, { title: "500 items" })
        const underscore = yield* seedMeeting(ws.id, { title: "a_b sync" })
        const plain = yield* seedMeeting(ws.id, { title: "axb sync" })
        const backslash = yield* seedMeeting(ws.id, { title: "C:\\notes" })
        expect(yield* listed(ws.id, MeetingFilter.TitleContains({ text: "%" }))).toEqual([percent.id])
        expect(yield* listed(ws.id, MeetingFilter.TitleContains({ text: "0%" }))).toEqual([percent.id])
        expect(yield* listed(ws.id, MeetingFilter.TitleContains({ text: "5%0" }))).toEqual([])
        expect(yield* listed(ws.id, MeetingFilter.TitleContains({ text: "_" }))).toEqual([underscore.id])
        expect(yield* listed(ws.id, MeetingFilter.TitleContains({ text: "a_b" }))).toEqual([underscore.id])
        expect(yield* listed(ws.id, MeetingFilter.TitleContains({ text: "\\" }))).toEqual([backslash.id])
        expect(yield* listedSet(ws.id, MeetingFilter.TitleContains({ text: "sync" }))).toEqual(sortedIdsOf(underscore, plain))
        expect(yield* listed(ws.id, MeetingFilter.TitleContains({ text: "500" }))).toEqual([fifty.id])
      }))

    it.effect("TitleContains folds the case of letters beyond ASCII as MeetingFilters.matches does", () =>
      Effect.gen(function*() {
        const ws = yield* seedWorkspace()
        const overview = yield* seedMeeting(ws.id, { title: "Überblick Éditions" })
        yield* seedMeeting(ws.id, { title: "Other" })
        for (const text of ["über", "ÜBER", "éditions", "ÉDITIONS"]) {
          expect(MeetingFilters.matches(MeetingFilter.TitleContains({ text }), overview, [])).toBe(true)
          expect(yield* listed(ws.id, MeetingFilter.TitleContains({ text }))).toEqual([overview.id])
        }
      }))

    it.effect("TitleContains agrees with MeetingFilters.matches on special case mappings (final sigma, dotted capital I)", () =>
      Effect.gen(function*() {
        const ws = yield* seedWorkspace()
        // JavaScript lower-cases a word-final Σ to ς and İ to i + U+0307; PostgreSQL's lower() maps them one
        // code point at a time (σ, i). Whatever the rule, every store must answer as the reference does.
        const greek = yield* seedMeeting(ws.id, { title: "ΟΔΟΣ" })
        const turkish = yield* seedMeeting(ws.id, { title: "İstanbul" })
        const rows = [greek, turkish]
        for (const text of ["οδος", "οδοσ", "ΟΔΟΣ", "istanbul", "İstanbul", "i̇stanbul"]) {
          const filter = MeetingFilter.TitleContains({ text })
          const expected = rows.filter((m) => MeetingFilters.matches(filter, m, [])).map((m) => m.id).sort()
          expect(yield* listedSet(ws.id, filter), JSON.stringify(text)).toEqual(expected)
        }
      }))

    it.effect("IsSet and IsUnset look at start_time and end_time each", () =>
      Effect.gen(function*() {
        const ws = yield* seedWorkspace()
        const both = yield* seedMeeting(ws.id, { start_time: minutes(10), end_time: minutes(20) })
        const startOnly = yield* seedMeeting(ws.id, { start_time: minutes(10) })
        const endOnly = yield* seedMeeting(ws.id, { end_time: minutes(20) })
        const neither = yield* seedMeeting(ws.id)
        expect(yield* listedSet(ws.id, MeetingFilter.IsSet({ field: "start_time" }))).toEqual(sortedIdsOf(both, startOnly))
        expect(yield* listedSet(ws.id, MeetingFilter.IsUnset({ field: "start_time" }))).toEqual(sortedIdsOf(endOnly, neither))
        expect(yield* listedSet(ws.id, MeetingFilter.IsSet({ field: "end_time" }))).toEqual(sortedIdsOf(both, endOnly))
        expect(yield* listedSet(ws.id, MeetingFilter.IsUnset({ field: "end_time" }))).toEqual(sortedIdsOf(startOnly, neither))
      }))

    for (const field of ["start_time", "end_time"] as const) {
      it.effect(`AtOrAfter and Before on ${field}: the instant itself is at-or-after, an unset ${field} is neither`, () =>
        Effect.gen(function*() {
          const ws = yield* seedWorkspace()
          const at = (value: DateTime.Utc) => (field === "start_time" ? { start_time: value } : { end_time: value })
          const earlier = yield* seedMeeting(ws.id, at(minutes(-1)))
          const exactly = yield* seedMeeting(ws.id, at(T0))
          const later = yield* seedMeeting(ws.id, at(minutes(1)))
          const justBefore = yield* seedMeeting(ws.id, at(DateTime.subtract(T0, { millis: 1 })))
          yield* seedMeeting(ws.id)
          expect(yield* listedSet(ws.id, MeetingFilter.AtOrAfter({ field, at: T0 }))).toEqual(sortedIdsOf(exactly, later))
          expect(yield* listedSet(ws.id, MeetingFilter.Before({ field, at: T0 }))).toEqual(sortedIdsOf(earlier, justBefore))
          expect(yield* listed(ws.id, MeetingFilter.AtOrAfter({ field, at: minutes(2) }))).toEqual([])
          expect(yield* listedSet(ws.id, MeetingFilter.Before({ field, at: minutes(2) })))
            .toEqual(sortedIdsOf(earlier, exactly, later, justBefore))
        }))
    }

    it.effect("And keeps what every filter keeps; an empty And keeps everything", () =>
      Effect.gen(function*() {
        const ws = yield* seedWorkspace()
        const scheduledPlan = yield* seedMeeting(ws.id, { title: "Plan", status: "scheduled", start_time: minutes(30) })
        const scheduledOther = yield* seedMeeting(ws.id, { title: "Other", status: "scheduled", start_time: minutes(30) })
        const endedPlan = yield* seedMeeting(ws.id, { title: "Plan B", status: "ended" })
        const scheduledPlanUnset = yield* seedMeeting(ws.id, { title: "plan C", status: "scheduled" })
        const scheduled = MeetingFilter.StatusIn({ statuses: ["scheduled"] })
        const plan = MeetingFilter.TitleContains({ text: "plan" })
        expect(yield* listedSet(ws.id, MeetingFilter.And({ filters: [scheduled, plan] })))
          .toEqual(sortedIdsOf(scheduledPlan, scheduledPlanUnset))
        expect(yield* listed(ws.id, MeetingFilter.And({ filters: [scheduled, plan, MeetingFilter.IsSet({ field: "start_time" })] })))
          .toEqual([scheduledPlan.id])
        expect(yield* listed(ws.id, MeetingFilter.And({ filters: [plan, MeetingFilter.StatusIn({ statuses: [] })] })))
          .toEqual([])
        expect(yield* listedSet(ws.id, MeetingFilter.And({ filters: [] })))
          .toEqual(sortedIdsOf(scheduledPlan, scheduledOther, endedPlan, scheduledPlanUnset))
        expect(yield* listedSet(ws.id, MeetingFilter.And({ filters: [MeetingFilter.And({ filters: [] }), plan, scheduled, MeetingFilter.All()] })))
          .toEqual(sortedIdsOf(scheduledPlan, scheduledPlanUnset))
      }))

    it.effect("Or keeps what any filter keeps; an empty Or keeps nothing", () =>
      Effect.gen(function*() {
        const ws = yield* seedWorkspace()
        const ended = yield* seedMeeting(ws.id, { title: "Retro", status: "ended" })
        const poker = yield* seedMeeting(ws.id, { title: "planning poker", status: "in_progress" })
        const both = yield* seedMeeting(ws.id, { title: "poker night", status: "ended" })
        yield* seedMeeting(ws.id, { title: "Neither", status: "scheduled" })
        const endedOrPoker = MeetingFilter.Or({
          filters: [MeetingFilter.StatusIn({ statuses: ["ended"] }), MeetingFilter.TitleContains({ text: "poker" })]
        })
        expect(yield* listedSet(ws.id, endedOrPoker)).toEqual(sortedIdsOf(ended, poker, both))
        expect(yield* listed(ws.id, MeetingFilter.Or({ filters: [] }))).toEqual([])
        expect(yield* listed(ws.id, MeetingFilter.And({ filters: [MeetingFilter.Or({ filters: [] }), MeetingFilter.All()] })))
          .toEqual([])
        expect(yield* listedSet(ws.id, MeetingFilter.Or({ filters: [MeetingFilter.Or({ filters: [] }), endedOrPoker] })))
          .toEqual(sortedIdsOf(ended, poker, both))
        // Nested: (ended AND title has "retro") OR in_progress
        const nested = MeetingFilter.Or({
          filters: [
            MeetingFilter.And({ filters: [MeetingFilter.StatusIn({ statuses: ["ended"] }), MeetingFilter.TitleContains({ text: "retro" })] }),
            MeetingFilter.StatusIn({ statuses: ["in_progress"] })
          ]
        })
        expect(yield* listedSet(ws.id, nested)).toEqual(sortedIdsOf(ended, poker))
      }))

    it.effect("pages slice the ordered list and total counts the whole filtered set", () =>
      Effect.gen(function*() {
        const store = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const rows: Array<Meeting> = []
        for (let i = 0; i < 7; i++) {
          rows.push(yield* seedMeeting(ws.id, { title: i % 2 === 0 ? `even ${i}` : `odd ${i}`, created_at: minutes(i) }))
        }
        const newestFirst = ids([...rows].reverse())
        const page = (limit: number, offset: number, filter: MeetingFilter = MeetingFilter.All()) =>
          store.list(ws.id, filter, "created_desc", { limit, offset })

        const first = yield* page(3, 0)
        expect(ids(first.items)).toEqual(newestFirst.slice(0, 3))
        expect(first.total).toBe(7)
        expect(ids((yield* page(3, 3)).items)).toEqual(newestFirst.slice(3, 6))
        const last = yield* page(3, 6)
        expect(ids(last.items)).toEqual(newestFirst.slice(6))
        expect(last.total).toBe(7)
        const past = yield* page(3, 7)
        expect(past.items).toEqual([])
        expect(past.total).toBe(7)
        expect(yield* page(3, 1000)).toEqual({ items: [], total: 7 })

        const evens = yield* page(2, 1, MeetingFilter.TitleContains({ text: "even" }))
        expect(evens.items.map((m) => m.title)).toEqual(["even 4", "even 2"])
        expect(evens.total).toBe(4)
      }))

    it.effect.prop(
      "any filter tree, order and page answers what MeetingFilters.matches, sorting and slicing all rows gives",
      {
        rows: FastCheck.array(meetingSpec, { minLength: 2, maxLength: 8 }),
        // Several lists of one set of rows: seeding is what costs on a database.
        queries: FastCheck.array(
          FastCheck.record({
            filter: filterTree(3),
            order: FastCheck.constantFrom<MeetingOrder>("created_desc", "start_asc", "start_id_asc", "start_id_desc"),
            limit: FastCheck.integer({ min: 1, max: 5 }),
            offset: FastCheck.integer({ min: 0, max: 6 })
          }),
          { minLength: 1, maxLength: 4 }
        )
      },
      ({ queries, rows }) =>
        Effect.gen(function*() {
          const store = yield* MeetingStore
          // Seeded in one unit of work: one commit instead of one per row.
          const { meetings, participants, users, ws } = yield* (yield* Transactor).withTransaction(Effect.gen(function*() {
            const ws = yield* seedWorkspace()
            const users = [yield* seedUser(ws.id), yield* seedUser(ws.id), yield* seedUser(ws.id)]
            const meetings = yield* Effect.forEach(rows, (spec) =>
              seedMeeting(ws.id, {
                title: spec.title,
                status: spec.status,
                start_time: spec.start === null ? null : slot(spec.start),
                end_time: spec.end === null ? null : slot(spec.end),
                created_at: slot(spec.created)
              }))
            const participants = yield* store.addParticipants(rows.flatMap((spec, index) => [
              participant(meetings[index]!),
              ...spec.participants.map((i) => participant(meetings[index]!, { user_id: users[i]!.id }))
            ]))
            return { meetings, participants, users, ws }
          }))
          for (const query of queries) {
            const tree = withUsers(query.filter, users.map((u) => u.id))
            // Where meetings without a start time sort is not part of the contract: lists in a start order keep none.
            const filter = startOrders.includes(query.order)
              ? MeetingFilter.And({ filters: [MeetingFilter.IsSet({ field: "start_time" }), tree] })
              : tree
            const expected = meetings
              .filter((m) => MeetingFilters.matches(filter, m, participants.filter((p) => p.meeting_id === m.id)))
              .sort(expectedOrder[query.order])
            const slice = yield* store.list(ws.id, filter, query.order, { limit: query.limit, offset: query.offset })
            expect(ids(slice.items)).toEqual(ids(expected.slice(query.offset, query.offset + query.limit)))
            expect(slice.total).toBe(expected.length)
          }
        }),
      { fastCheck: { numRuns: 25 } }
    )

    // --- The upcoming rule, one case per test ------------------------------------------------------------------

    for (const c of upcomingCases) {
      it.effect(`upcoming: ${c.name} is ${c.listed ? "listed" : "not listed"}`, () =>
        Effect.gen(function*() {
          const now = minutes(7 * 24 * 60)
          const ws = yield* seedWorkspace()
          const m = yield* seedMeeting(ws.id, {
            status: c.status,
            start_time: c.start === null ? null : minutes(c.start, now),
            end_time: c.end === null ? null : minutes(c.end, now)
          })
          const rule = MeetingFilters.upcoming(now)
          expect(MeetingFilters.matches(rule, m, [])).toBe(c.listed)
          expect(yield* listed(ws.id, rule, "start_asc")).toEqual(c.listed ? [m.id] : [])
        }))
    }

    it.effect("upcoming lists soonest first and combines with HasParticipant", () =>
      Effect.gen(function*() {
        const ws = yield* seedWorkspace()
        const ada = yield* seedUser(ws.id)
        const running = yield* seedMeeting(ws.id, { status: "in_progress", start_time: minutes(-90) })
        const tomorrow = yield* seedMeeting(ws.id, { start_time: minutes(24 * 60) })
        const soon = yield* seedMeeting(ws.id, { start_time: minutes(-10), end_time: minutes(20) })
        yield* seedMeeting(ws.id, { start_time: minutes(-60), end_time: minutes(-30) })
        yield* seedParticipant(tomorrow, { user_id: ada.id })
        yield* seedParticipant(running, { user_id: ada.id })
        const rule = MeetingFilters.upcoming(T0)
        expect(yield* listed(ws.id, rule, "start_asc")).toEqual(ids([running, soon, tomorrow]))
        expect(yield* listed(ws.id, MeetingFilters.and(MeetingFilter.HasParticipant({ userId: ada.id }), rule), "start_asc"))
          .toEqual(ids([running, tomorrow]))
      }))

    // --- Participants ----------------------------------------------------------------------------------------------

    it.effect("meetingIdsOf answers the meetings the user takes part in, in that workspace only", () =>
      Effect.gen(function*() {
        const store = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const other = yield* seedWorkspace()
        const ada = yield* seedUser(ws.id)
        const bob = yield* seedUser(ws.id)
        const one = yield* seedMeeting(ws.id)
        const two = yield* seedMeeting(ws.id)
        const bobsOnly = yield* seedMeeting(ws.id)
        const elsewhere = yield* seedMeeting(other.id)
        yield* seedParticipant(one, { user_id: ada.id, role: "OWNER" })
        yield* seedParticipant(two, { user_id: ada.id })
        yield* seedParticipant(two, { user_id: bob.id })
        yield* seedParticipant(bobsOnly, { user_id: bob.id })
        yield* seedParticipant(bobsOnly)
        // A participant row of another workspace's meeting that names Ada.
        yield* seedParticipant(elsewhere, { user_id: ada.id })

        expect([...(yield* store.meetingIdsOf(ws.id, ada.id))].sort()).toEqual(sortedIdsOf(one, two))
        expect([...(yield* store.meetingIdsOf(ws.id, bob.id))].sort()).toEqual(sortedIdsOf(two, bobsOnly))
        expect(yield* store.meetingIdsOf(other.id, ada.id)).toEqual([elsewhere.id])
        expect(yield* store.meetingIdsOf(other.id, bob.id)).toEqual([])
        expect(yield* store.meetingIdsOf(ws.id, UserId.make(uuid()))).toEqual([])

        yield* store.removeParticipant(ws.id, (Option.getOrThrow(yield* store.findParticipant(ws.id, two.id, ada.id))).id)
        expect(yield* store.meetingIdsOf(ws.id, ada.id)).toEqual([one.id])
      }))

    it.effect("addParticipants answers the stored row for each given row, in order", () =>
      Effect.gen(function*() {
        const store = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const ada = yield* seedUser(ws.id)
        const bob = yield* seedUser(ws.id)
        const m = yield* seedMeeting(ws.id)
        const guestAddress = email("guest")

        const adaRow = participant(m, { user_id: ada.id, role: "OWNER", is_attended: true, created_at: minutes(-1) })
        const guestRow = participant(m, { guest_email: guestAddress })
        expect(yield* store.addParticipants([adaRow, guestRow])).toEqual([adaRow, guestRow])

        const bobRow = participant(m, { user_id: bob.id, role: "EDITOR" })
        const adaAgain = participant(m, { user_id: ada.id, role: "VIEWER" })
        const guestAgain = participant(m, { guest_email: guestAddress, role: "EDITOR" })
        expect(yield* store.addParticipants([adaAgain, bobRow, guestAgain])).toEqual([adaRow, bobRow, guestRow])

        const participants = yield* store.listParticipants(ws.id, m.id)
        expect([...ids(participants)].sort()).toEqual([adaRow.id, guestRow.id, bobRow.id].sort())
        expect(yield* store.addParticipants([])).toEqual([])
      }))

    it.effect("addParticipants: a guest is the same person exactly when the (normalised) Email is equal", () =>
      Effect.gen(function*() {
        const store = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const m = yield* seedMeeting(ws.id)
        const address = email("guest")
        const first = participant(m, { guest_email: address })
        const same = participant(m, { guest_email: address, role: "EDITOR", created_at: minutes(1) })
        const other = participant(m, { guest_email: email("guest") })
        expect(yield* store.addParticipants([first])).toEqual([first])
        expect(yield* store.addParticipants([same, other])).toEqual([first, other])
        expect([...ids(yield* store.listParticipants(ws.id, m.id))].sort()).toEqual([first.id, other.id].sort())
      }))

    it.effect("addParticipants stores one row per person within one call", () =>
      Effect.gen(function*() {
        const store = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const ada = yield* seedUser(ws.id)
        const m = yield* seedMeeting(ws.id)
        const address = email("twice")
        const answers = yield* store.addParticipants([
          participant(m, { user_id: ada.id }),
          participant(m, { guest_email: address }),
          participant(m, { user_id: ada.id }),
          participant(m, { guest_email: address })
        ])
        expect(answers[0]!.id).toBe(answers[2]!.id)
        expect(answers[1]!.id).toBe(answers[3]!.id)
        expect(ids(yield* store.listParticipants(ws.id, m.id)).slice().sort()).toEqual([answers[0]!.id, answers[1]!.id].sort())
      }))

    it.effect("10 racing addParticipants of one user store one row", () =>
      Effect.gen(function*() {
        const store = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const ada = yield* seedUser(ws.id)
        const m = yield* seedMeeting(ws.id)
        const answers = yield* Effect.all(
          Array.from({ length: 10 }, () => store.addParticipants([participant(m, { user_id: ada.id })])),
          { concurrency: "unbounded" }
        )
        const participants = yield* store.listParticipants(ws.id, m.id)
        expect(participants).toHaveLength(1)
        expect(answers.map(([row]) => row!.id)).toEqual(Array(10).fill(participants[0]!.id))
      }))

    it.effect("a user or guest may be on several meetings", () =>
      Effect.gen(function*() {
        const store = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const ada = yield* seedUser(ws.id)
        const address = email("roaming")
        const one = yield* seedMeeting(ws.id)
        const two = yield* seedMeeting(ws.id)
        const rows = [
          participant(one, { user_id: ada.id }),
          participant(two, { user_id: ada.id }),
          participant(one, { guest_email: address }),
          participant(two, { guest_email: address })
        ]
        expect(yield* store.addParticipants(rows)).toEqual(rows)
        expect(yield* store.listParticipants(ws.id, one.id)).toHaveLength(2)
        expect(yield* store.listParticipants(ws.id, two.id)).toHaveLength(2)
      }))

    it.effect("listParticipants answers oldest first, ties by id", () =>
      Effect.gen(function*() {
        const store = yield* MeetingStore
        const m = yield* seedMeetingInNewWorkspace()
        const [low, high] = sortedIds(2).map((id) => ParticipantId.make(id))
        const newest = participant(m, { created_at: minutes(10) })
        const tieHigh = participant(m, { id: high!, created_at: T0 })
        const oldest = participant(m, { created_at: minutes(-10) })
        const tieLow = participant(m, { id: low!, created_at: T0 })
        yield* store.addParticipants([newest, tieHigh, oldest, tieLow])
        expect(yield* store.listParticipants(m.workspace_id, m.id)).toEqual([oldest, tieLow, tieHigh, newest])
        expect(yield* store.listParticipants(m.workspace_id, MeetingId.make(uuid()))).toEqual([])
      }))

    it.effect("findParticipant finds a user's row on the meeting only", () =>
      Effect.gen(function*() {
        const store = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const ada = yield* seedUser(ws.id)
        const bob = yield* seedUser(ws.id)
        const m = yield* seedMeeting(ws.id)
        const other = yield* seedMeeting(ws.id)
        const row = yield* seedParticipant(m, { user_id: ada.id, role: "EDITOR" })
        yield* seedParticipant(other, { user_id: bob.id })
        expect(yield* store.findParticipant(ws.id, m.id, ada.id)).toEqual(Option.some(row))
        expect(Option.isNone(yield* store.findParticipant(ws.id, m.id, bob.id))).toBe(true)
        expect(Option.isNone(yield* store.findParticipant(ws.id, other.id, ada.id))).toBe(true)
      }))

    it.effect("updateParticipant replaces the row; removeParticipant deletes it once", () =>
      Effect.gen(function*() {
        const store = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const ada = yield* seedUser(ws.id)
        const m = yield* seedMeeting(ws.id)
        const row = yield* seedParticipant(m, { user_id: ada.id })
        const guest = yield* seedParticipant(m)

        const changed = participant(m, { ...row, role: "OWNER", is_attended: true, updated_at: minutes(3) })
        yield* store.updateParticipant(changed)
        expect(yield* store.findParticipant(ws.id, m.id, ada.id)).toEqual(Option.some(changed))

        expect(yield* store.removeParticipant(ws.id, row.id)).toBe(true)
        expect(yield* store.removeParticipant(ws.id, row.id)).toBe(false)
        expect(yield* store.removeParticipant(ws.id, ParticipantId.make(uuid()))).toBe(false)
        expect(yield* store.listParticipants(ws.id, m.id)).toEqual([guest])
        expect(Option.isNone(yield* store.findParticipant(ws.id, m.id, ada.id))).toBe(true)
      }))

    it.effect("the transcript reads in order of offset_ms, then insertion order", () =>
      Effect.gen(function*() {
        const store = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const m = yield* seedMeeting(ws.id)
        const other = yield* seedMeeting(ws.id)
        const b = segment(m, { offset_ms: 2000, speaker: "Bob", text: "second at 2s", created_at: minutes(1) })
        const a = segment(m, { offset_ms: 0, speaker: "Ada", text: "first", created_at: minutes(2) })
        const c = segment(m, { offset_ms: 1000, speaker: "Cy", text: "at 1s" })
        const d = segment(m, { offset_ms: 2000, speaker: "Dee", text: "later at 2s" })
        yield* store.appendTranscript(ws.id, [b, a])
        yield* store.appendTranscript(ws.id, [c, segment(other, { text: "elsewhere" }), d])
        yield* store.appendTranscript(ws.id, [])
        expect(yield* store.transcript(ws.id, m.id)).toEqual([a, c, b, d])
        expect((yield* store.transcript(ws.id, other.id)).map((s) => s.text)).toEqual(["elsewhere"])
        expect(yield* store.transcript(ws.id, MeetingId.make(uuid()))).toEqual([])
      }))

    it.effect("appends a long transcript (more rows than one SQL statement takes) whole and in order", () =>
      Effect.gen(function*() {
        const store = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const m = yield* seedMeeting(ws.id)
        // 12,000 rows of 6 columns would be 72,000 parameters in one statement (PostgreSQL takes 65,535).
        const lines = Array.from({ length: 12_000 }, (_, i) => segment(m, { offset_ms: i * 10, text: `line ${i}` }))
        yield* store.appendTranscript(ws.id, lines)
        const read = yield* store.transcript(ws.id, m.id)
        expect(read.length).toBe(12_000)
        expect(read[0]?.text).toBe("line 0")
        expect(read[11_999]?.text).toBe("line 11999")
      }), { timeout: 60_000 })

    it.effect("deleteByWorkspace removes every meeting of the workspace with its participants and transcript, and nothing else", () =>
      Effect.gen(function*() {
        const store = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const other = yield* seedWorkspace()
        const member = yield* seedUser(ws.id)
        const gone = [yield* seedMeeting(ws.id, { owner_user_id: member.id }), yield* seedMeeting(ws.id)]
        const kept = yield* seedMeeting(other.id)
        for (const m of [...gone, kept]) {
          yield* seedParticipant(m)
          yield* store.appendTranscript(m.workspace_id, [segment(m)])
        }
        yield* seedParticipant(gone[0]!, { user_id: member.id, role: "OWNER" })

        yield* store.deleteByWorkspace(ws.id)
        expect(yield* listed(ws.id, MeetingFilter.All())).toEqual([])
        for (const m of gone) {
          expect(Option.isNone(yield* store.get(ws.id, m.id))).toBe(true)
          expect(yield* store.listParticipants(ws.id, m.id)).toEqual([])
          expect(yield* store.transcript(ws.id, m.id)).toEqual([])
        }
        expect(yield* store.meetingIdsOf(ws.id, member.id)).toEqual([])
        expect(yield* store.get(other.id, kept.id)).toEqual(Option.some(kept))
        expect(yield* store.listParticipants(other.id, kept.id)).toHaveLength(1)
        expect(yield* store.transcript(other.id, kept.id)).toHaveLength(1)
        yield* store.deleteByWorkspace(ws.id)
      }))

    it.effect("countByWorkspace counts the meetings of each given workspace only", () =>
      Effect.gen(function*() {
        const store = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const other = yield* seedWorkspace()
        const empty = yield* seedWorkspace()
        const notAsked = yield* seedWorkspace()
        yield* seedMeeting(ws.id)
        yield* seedMeeting(ws.id, { status: "cancelled" })
        yield* seedMeeting(ws.id, { status: "ended" })
        yield* seedMeeting(other.id)
        yield* seedMeeting(notAsked.id)
        const counts = yield* store.countByWorkspace([ws.id, other.id, empty.id])
        expect([counts.get(ws.id), counts.get(other.id), counts.get(empty.id) ?? 0]).toEqual([3, 1, 0])
        expect(counts.has(notAsked.id)).toBe(false)
        expect((yield* store.countByWorkspace([])).size).toBe(0)
      }))

    it.effect("detachOwner clears owner_user_id on the user's meetings in that workspace, and nothing else", () =>
      Effect.gen(function*() {
        const store = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const theirs = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id)
        const bob = yield* seedUser(ws.id)
        const owned = yield* seedMeeting(ws.id, { owner_user_id: ann.id, title: "Ann's", updated_at: minutes(5) })
        const ownedToo = yield* seedMeeting(ws.id, { owner_user_id: ann.id, status: "ended", start_time: minutes(1) })
        const bobs = yield* seedMeeting(ws.id, { owner_user_id: bob.id })
        const nobodys = yield* seedMeeting(ws.id)
        const ownerRow = yield* seedParticipant(owned, { user_id: ann.id, role: "OWNER" })
        // Another workspace's row naming the same user (the store does not check where ids belong).
        const elsewhere = yield* seedMeeting(theirs.id, { owner_user_id: ann.id })

        yield* store.detachOwner(ws.id, ann.id)
        expect(yield* store.get(ws.id, owned.id)).toEqual(Option.some(meeting(ws.id, { ...owned, owner_user_id: null })))
        expect(yield* store.get(ws.id, ownedToo.id)).toEqual(Option.some(meeting(ws.id, { ...ownedToo, owner_user_id: null })))
        expect(yield* store.get(ws.id, bobs.id)).toEqual(Option.some(bobs))
        expect(yield* store.get(ws.id, nobodys.id)).toEqual(Option.some(nobodys))
        expect(yield* store.get(theirs.id, elsewhere.id)).toEqual(Option.some(elsewhere))
        // The participant rows are another matter (removeUserParticipants).
        expect(yield* store.listParticipants(ws.id, owned.id)).toEqual([ownerRow])
        yield* store.detachOwner(ws.id, ann.id)
      }))

    it.effect("removeUserParticipants removes the user's rows from every meeting of that workspace, and nothing else", () =>
      Effect.gen(function*() {
        const store = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const theirs = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id)
        const bob = yield* seedUser(ws.id)
        const both = yield* seedMeeting(ws.id, { owner_user_id: ann.id })
        const annsOnly = yield* seedMeeting(ws.id)
        const bobsOnly = yield* seedMeeting(ws.id)
        yield* seedParticipant(both, { user_id: ann.id, role: "OWNER" })
        const bobOnBoth = yield* seedParticipant(both, { user_id: bob.id, role: "EDITOR", created_at: minutes(1) })
        const guest = yield* seedParticipant(both, { created_at: minutes(2) })
        yield* seedParticipant(annsOnly, { user_id: ann.id })
        const bobAlone = yield* seedParticipant(bobsOnly, { user_id: bob.id })
        const elsewhere = yield* seedMeeting(theirs.id)
        const theirRow = yield* seedParticipant(elsewhere, { user_id: ann.id })

        yield* store.removeUserParticipants(ws.id, ann.id)
        expect(yield* store.listParticipants(ws.id, both.id)).toEqual([bobOnBoth, guest])
        expect(yield* store.listParticipants(ws.id, annsOnly.id)).toEqual([])
        expect(yield* store.listParticipants(ws.id, bobsOnly.id)).toEqual([bobAlone])
        expect(yield* store.meetingIdsOf(ws.id, ann.id)).toEqual([])
        expect(yield* listed(ws.id, MeetingFilter.HasParticipant({ userId: ann.id }))).toEqual([])
        expect(yield* store.get(ws.id, both.id)).toEqual(Option.some(both))
        expect(yield* store.listParticipants(theirs.id, elsewhere.id)).toEqual([theirRow])
        yield* store.removeUserParticipants(ws.id, ann.id)
      }))
  })
}
