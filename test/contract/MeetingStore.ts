import {
  ActionItemStore,
  AgendaItemStore,
  type Meeting,
  type MeetingFilter,
  MeetingId,
  type MeetingOrder,
  type MeetingStatus,
  MeetingStore,
  ParticipantId,
  type StorePorts,
  UserId
} from "@convene/core"
import { addEqualityTesters, expect, layer } from "@effect/vitest"
import { Effect, FastCheck, type Layer, Option } from "effect"
import {
  at,
  email,
  ids,
  meeting,
  minutes,
  participant,
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

/** Meetings for the list property: few distinct values, so that filters bite and orderings tie. */
const meetingSpec = FastCheck.record({
  title: FastCheck.string({ unit: FastCheck.constantFrom("a", "B", "%", "_", " "), minLength: 1, maxLength: 4 }),
  status: FastCheck.constantFrom<MeetingStatus>("scheduled", "in_progress", "ended", "cancelled"),
  start: FastCheck.option(FastCheck.integer({ min: -3, max: 3 }), { nil: null }),
  length: FastCheck.option(FastCheck.integer({ min: 0, max: 3 }), { nil: null }),
  created: FastCheck.integer({ min: 0, max: 2 })
})

/** Absent two times out of three, so that most lists are not filtered away. */
const sometimes = <A>(arbitrary: FastCheck.Arbitrary<A>) =>
  FastCheck.oneof({ arbitrary: FastCheck.constant(undefined), weight: 2 }, { arbitrary, weight: 1 })

const instant = sometimes(FastCheck.integer({ min: -3, max: 3 }))

const listSpec = {
  rows: FastCheck.array(meetingSpec, { minLength: 2, maxLength: 8 }),
  titleContains: sometimes(FastCheck.string({ unit: FastCheck.constantFrom("a", "A", "b", "%", "_"), minLength: 1, maxLength: 2 })),
  statuses: sometimes(FastCheck.subarray(["scheduled", "in_progress", "ended", "cancelled"] as const, { minLength: 1 })),
  startFrom: instant,
  startBefore: instant,
  notOverAt: instant,
  order: FastCheck.constantFrom<MeetingOrder>("created_desc", "start_asc"),
  limit: FastCheck.integer({ min: 1, max: 5 }),
  offset: FastCheck.integer({ min: 0, max: 6 })
}

/** Half-hour steps from T0. */
const slot = (n: number) => minutes(30 * n)

/** What a list must answer, computed the plain way. */
const expectedList = (rows: ReadonlyArray<Meeting>, filter: MeetingFilter, order: MeetingOrder) => {
  const byId = (a: Meeting, b: Meeting) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  const kept = rows.filter((m) => {
    const start = m.start_time?.epochMillis
    const end = m.end_time?.epochMillis
    return (filter.titleContains === undefined || m.title.toLowerCase().includes(filter.titleContains.toLowerCase())) &&
      (filter.statuses === undefined || filter.statuses.includes(m.status)) &&
      (filter.startFrom === undefined || (start !== undefined && start >= filter.startFrom.epochMillis)) &&
      (filter.startBefore === undefined || (start !== undefined && start < filter.startBefore.epochMillis)) &&
      (filter.notOverAt === undefined ||
        (start !== undefined &&
          (end !== undefined
            ? end >= filter.notOverAt.epochMillis
            : m.status === "in_progress" || start >= filter.notOverAt.epochMillis)))
  })
  return kept.sort((a, b) =>
    order === "created_desc"
      ? b.created_at.epochMillis - a.created_at.epochMillis || byId(b, a)
      : a.start_time!.epochMillis - b.start_time!.epochMillis || a.created_at.epochMillis - b.created_at.epochMillis ||
        byId(a, b)
  )
}

export const suite = (name: string, storeLayer: Layer.Layer<StorePorts, unknown>) => {
  addEqualityTesters()

  layer(storeLayer)(`MeetingStore (${name})`, (it) => {
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
        expect((yield* store.list(theirs.id, {}, "created_desc", everything)).items).toEqual([])
        expect(yield* store.listParticipants(theirs.id, stored.id)).toEqual([])
        expect(Option.isNone(yield* store.findParticipant(theirs.id, stored.id, owner.id))).toBe(true)
        expect(yield* store.transcript(theirs.id, stored.id)).toEqual([])

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

    it.effect("delete removes participants, transcript, agenda items with talking points and action items", () =>
      Effect.gen(function*() {
        const store = yield* MeetingStore
        const agenda = yield* AgendaItemStore
        const actions = yield* ActionItemStore
        const ws = yield* seedWorkspace()
        const member = yield* seedUser(ws.id)
        const doomed = yield* seedMeeting(ws.id)
        const kept = yield* seedMeeting(ws.id)
        for (const m of [doomed, kept]) {
          yield* seedParticipant(m, { user_id: member.id })
          yield* seedParticipant(m)
          yield* store.appendTranscript(ws.id, [segment(m), segment(m, { offset_ms: 10 })])
        }
        const doomedItem = yield* seedAgendaItem(doomed)
        const keptItem = yield* seedAgendaItem(kept)
        yield* agenda.setTalkingPoints(doomedItem.id, member.id, ["gone"])
        yield* agenda.setTalkingPoints(keptItem.id, member.id, ["stays"])
        const doomedAction = yield* seedActionItem(doomed, { agenda_item_id: doomedItem.id })
        const doomedLoose = yield* seedActionItem(doomed)
        const keptAction = yield* seedActionItem(kept, { agenda_item_id: keptItem.id })

        expect(yield* store.delete(ws.id, doomed.id)).toBe(true)

        expect(yield* store.listParticipants(ws.id, doomed.id)).toEqual([])
        expect(Option.isNone(yield* store.findParticipant(ws.id, doomed.id, member.id))).toBe(true)
        expect(yield* store.transcript(ws.id, doomed.id)).toEqual([])
        expect(Option.isNone(yield* agenda.get(ws.id, doomedItem.id))).toBe(true)
        expect((yield* agenda.talkingPoints([doomedItem.id], member.id)).size).toBe(0)
        expect(Option.isNone(yield* actions.get(ws.id, doomedAction.id))).toBe(true)
        expect(Option.isNone(yield* actions.get(ws.id, doomedLoose.id))).toBe(true)
        expect((yield* agenda.list(ws.id, { meetingId: doomed.id }, everything)).total).toBe(0)
        expect((yield* actions.list(ws.id, { meetingId: doomed.id }, everything)).total).toBe(0)
        expect(ids((yield* store.list(ws.id, { visibleTo: member.id }, "created_desc", everything)).items)).toEqual([kept.id])

        // The other meeting of the workspace keeps everything.
        expect(yield* store.listParticipants(ws.id, kept.id)).toHaveLength(2)
        expect(yield* store.transcript(ws.id, kept.id)).toHaveLength(2)
        expect(yield* agenda.get(ws.id, keptItem.id)).toEqual(Option.some(keptItem))
        expect((yield* agenda.talkingPoints([keptItem.id], member.id)).get(keptItem.id)).toEqual(["stays"])
        expect(yield* actions.get(ws.id, keptAction.id)).toEqual(Option.some(keptAction))
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
        const listed = yield* store.list(ws.id, {}, "created_desc", everything)
        expect(ids(listed.items)).toEqual([newest.id, tieHigh.id, tieLow.id, oldest.id])
        expect(listed.total).toBe(4)
      }))

    it.effect("start_asc lists soonest first, then created_at, then id", () =>
      Effect.gen(function*() {
        const store = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const [low, high] = sortedIds(2).map((id) => MeetingId.make(id))
        const later = yield* seedMeeting(ws.id, { start_time: minutes(60), created_at: minutes(0) })
        const tieHigh = yield* seedMeeting(ws.id, { id: high!, start_time: minutes(90), created_at: minutes(0) })
        const soonest = yield* seedMeeting(ws.id, { start_time: minutes(30), created_at: minutes(5) })
        const tieLow = yield* seedMeeting(ws.id, { id: low!, start_time: minutes(90), created_at: minutes(0) })
        const createdEarlier = yield* seedMeeting(ws.id, { start_time: minutes(90), created_at: minutes(-5) })
        const listed = yield* store.list(ws.id, { startFrom: T0 }, "start_asc", everything)
        expect(ids(listed.items)).toEqual([soonest.id, later.id, createdEarlier.id, tieLow.id, tieHigh.id])
      }))

    it.effect("each filter narrows the list", () =>
      Effect.gen(function*() {
        const store = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const member = yield* seedUser(ws.id)
        const outsider = yield* seedUser(ws.id)
        const quarterly = yield* seedMeeting(ws.id, { title: "Quarterly Planning", start_time: minutes(60), end_time: minutes(120) })
        const poker = yield* seedMeeting(ws.id, { title: "planning poker", status: "in_progress", start_time: minutes(-30) })
        const retro = yield* seedMeeting(ws.id, { title: "Retro", status: "ended", start_time: minutes(-120), end_time: minutes(-60) })
        const budget = yield* seedMeeting(ws.id, { title: "Budget 50% review", status: "cancelled" })
        const items = yield* seedMeeting(ws.id, { title: "500 items", start_time: minutes(24 * 60) })
        const startsNow = yield* seedMeeting(ws.id, { title: "Starts now", start_time: T0 })
        const endsNow = yield* seedMeeting(ws.id, { title: "Ends now", status: "ended", start_time: minutes(-45), end_time: T0 })
        yield* seedParticipant(quarterly, { user_id: member.id })
        yield* seedParticipant(retro, { user_id: member.id, role: "OWNER" })
        yield* seedParticipant(poker, { user_id: outsider.id })
        yield* seedParticipant(budget)

        const titles = (filter: MeetingFilter) =>
          Effect.map(store.list(ws.id, filter, "created_desc", everything), (slice) => {
            expect(slice.total).toBe(slice.items.length)
            return slice.items.map((m) => m.title).sort()
          })

        expect(yield* titles({})).toEqual([quarterly, poker, retro, budget, items, startsNow, endsNow].map((m) => m.title).sort())
        expect(yield* titles({ titleContains: "PLAN" })).toEqual(["Quarterly Planning", "planning poker"])
        expect(yield* titles({ titleContains: "50%" })).toEqual(["Budget 50% review"])
        expect(yield* titles({ titleContains: "nothing like this" })).toEqual([])
        expect(yield* titles({ statuses: ["ended", "cancelled"] })).toEqual(["Budget 50% review", "Ends now", "Retro"])
        expect(yield* titles({ statuses: ["in_progress"] })).toEqual(["planning poker"])
        expect(yield* titles({ startFrom: T0 })).toEqual(["500 items", "Quarterly Planning", "Starts now"])
        expect(yield* titles({ startBefore: T0 })).toEqual(["Ends now", "Retro", "planning poker"])
        expect(yield* titles({ startFrom: minutes(-60), startBefore: minutes(60) }))
          .toEqual(["Ends now", "Starts now", "planning poker"])
        expect(yield* titles({ notOverAt: T0 }))
          .toEqual(["500 items", "Ends now", "Quarterly Planning", "Starts now", "planning poker"])
        expect(yield* titles({ notOverAt: minutes(61) })).toEqual(["500 items", "Quarterly Planning", "planning poker"])
        expect(yield* titles({ visibleTo: member.id })).toEqual(["Quarterly Planning", "Retro"])
        expect(yield* titles({ visibleTo: UserId.make(uuid()) })).toEqual([])
        expect(yield* titles({ titleContains: "plan", statuses: ["scheduled"] })).toEqual(["Quarterly Planning"])
        expect(yield* titles({ visibleTo: member.id, startFrom: T0 })).toEqual(["Quarterly Planning"])
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
        const page = (limit: number, offset: number, filter: MeetingFilter = {}) =>
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

        const evens = yield* page(2, 1, { titleContains: "even" })
        expect(evens.items.map((m) => m.title)).toEqual(["even 4", "even 2"])
        expect(evens.total).toBe(4)
      }))

    it.effect.prop(
      "any filter, order and page answers what filtering, sorting and slicing all rows gives",
      listSpec,
      ({ limit, offset, order, rows, ...bounds }) =>
        Effect.gen(function*() {
          const store = yield* MeetingStore
          const ws = yield* seedWorkspace()
          const stored: Array<Meeting> = []
          for (const spec of rows) {
            // Where meetings without a start time sort is not part of the contract: start_asc lists get none.
            const start = spec.start ?? (order === "start_asc" ? 0 : null)
            stored.push(yield* seedMeeting(ws.id, {
              title: spec.title,
              status: spec.status,
              start_time: start === null ? null : slot(start),
              end_time: start === null || spec.length === null ? null : slot(start + spec.length),
              created_at: slot(spec.created)
            }))
          }
          const filter: MeetingFilter = {
            titleContains: bounds.titleContains,
            statuses: bounds.statuses,
            startFrom: bounds.startFrom === undefined ? undefined : slot(bounds.startFrom),
            startBefore: bounds.startBefore === undefined ? undefined : slot(bounds.startBefore),
            notOverAt: bounds.notOverAt === undefined ? undefined : slot(bounds.notOverAt)
          }
          const expected = expectedList(stored, filter, order)
          const listed = yield* store.list(ws.id, filter, order, { limit, offset })
          expect(ids(listed.items)).toEqual(ids(expected.slice(offset, offset + limit)))
          expect(listed.total).toBe(expected.length)
        }),
      { fastCheck: { numRuns: 40 } }
    )

    it.effect("addParticipants answers the stored row for each given row, in order", () =>
      Effect.gen(function*() {
        const store = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const ada = yield* seedUser(ws.id)
        const bob = yield* seedUser(ws.id)
        const m = yield* seedMeeting(ws.id)
        const guestAddress = email("Guest")

        const adaRow = participant(m, { user_id: ada.id, role: "OWNER", is_attended: true, created_at: minutes(-1) })
        const guestRow = participant(m, { guest_email: guestAddress })
        expect(yield* store.addParticipants([adaRow, guestRow])).toEqual([adaRow, guestRow])

        const bobRow = participant(m, { user_id: bob.id, role: "EDITOR" })
        const adaAgain = participant(m, { user_id: ada.id, role: "VIEWER" })
        const guestAgain = participant(m, { guest_email: guestAddress.toUpperCase() })
        expect(yield* store.addParticipants([adaAgain, bobRow, guestAgain])).toEqual([adaRow, bobRow, guestRow])

        const listed = yield* store.listParticipants(ws.id, m.id)
        expect([...ids(listed)].sort()).toEqual([adaRow.id, guestRow.id, bobRow.id].sort())
        expect(yield* store.addParticipants([])).toEqual([])
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
          participant(m, { guest_email: address.toUpperCase() })
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
        const listed = yield* store.listParticipants(ws.id, m.id)
        expect(listed).toHaveLength(1)
        expect(answers.map(([row]) => row!.id)).toEqual(Array(10).fill(listed[0]!.id))
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
  })
}
