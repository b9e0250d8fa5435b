import {
  ActionItemStore,
  AgendaItemId,
  type AgendaItemRow,
  AgendaItemStore,
  MeetingId,
  normalizeSequence,
  type StorePorts,
  UserId
} from "@convene/core"
import { addEqualityTesters, expect, layer } from "@effect/vitest"
import { BigDecimal, Effect, FastCheck, type Layer, Option } from "effect"
import {
  agendaItem,
  ids,
  minutes,
  seedActionItem,
  seedAgendaItem,
  seedMeeting,
  seedMeetingInNewWorkspace,
  seedParticipant,
  seedUser,
  seedWorkspace,
  sortedIds,
  T0,
  uuid
} from "./fixtures.js"

const everything = { limit: 100, offset: 0 }

/** Sequences in normalised form, such as "-12.5", "0.001" or "7", with many ties. */
const sequence = FastCheck.tuple(FastCheck.integer({ min: -2000, max: 2000 }), FastCheck.integer({ min: 0, max: 3 }))
  .map(([unscaled, scale]) => normalizeSequence(BigDecimal.format(BigDecimal.make(BigInt(unscaled), scale))))

const itemSpec = FastCheck.record({ sequence: FastCheck.oneof(sequence, FastCheck.constantFrom("1", "-1", "1.5")), created: FastCheck.integer({ min: 0, max: 2 }) })

/** The agenda order computed the plain way (these sequences are exact as numbers). */
const expectedOrder = (rows: ReadonlyArray<AgendaItemRow>) =>
  [...rows].sort((a, b) =>
    Number(a.sequence) - Number(b.sequence) || a.created_at.epochMillis - b.created_at.epochMillis ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  )

export const suite = (name: string, storeLayer: Layer.Layer<StorePorts, unknown>) => {
  addEqualityTesters()

  layer(storeLayer)(`AgendaItemStore (${name})`, (it) => {
    it.effect("insert then get answers every field, nulls and arrays included", () =>
      Effect.gen(function*() {
        const store = yield* AgendaItemStore
        const m = yield* seedMeetingInNewWorkspace()
        const full = agendaItem(m, {
          title: "Budget ✓",
          description: "Numbers for Q2",
          item_type: "QUESTIONS_TO_ANSWER",
          sequence: "-12.000125",
          presenters: [uuid(), "someone@example.com", uuid()],
          created_at: minutes(-2),
          updated_at: minutes(2)
        })
        const bare = agendaItem(m, { item_type: "ADJOURN", sequence: "999999999999" })
        yield* store.insert(full)
        yield* store.insert(bare)
        expect(yield* store.get(m.workspace_id, full.id)).toEqual(Option.some(full))
        expect(yield* store.get(m.workspace_id, bare.id)).toEqual(Option.some(bare))
        expect(Option.isNone(yield* store.get(m.workspace_id, AgendaItemId.make(uuid())))).toBe(true)
      }))

    it.effect("update replaces every field", () =>
      Effect.gen(function*() {
        const store = yield* AgendaItemStore
        const m = yield* seedMeetingInNewWorkspace()
        const original = yield* seedAgendaItem(m, { description: "before", presenters: ["a", "b"] })
        const changed = agendaItem(m, {
          ...original,
          title: "After",
          description: null,
          item_type: "BREAK",
          sequence: "7.5",
          presenters: [],
          updated_at: minutes(9)
        })
        yield* store.update(changed)
        expect(yield* store.get(m.workspace_id, original.id)).toEqual(Option.some(changed))
      }))

    it.effect("reads and writes are scoped by workspace", () =>
      Effect.gen(function*() {
        const store = yield* AgendaItemStore
        const m = yield* seedMeetingInNewWorkspace()
        const theirs = yield* seedWorkspace()
        const item = yield* seedAgendaItem(m)
        expect(Option.isNone(yield* store.get(theirs.id, item.id))).toBe(true)
        expect((yield* store.list(theirs.id, {}, everything)).total).toBe(0)
        expect((yield* store.list(theirs.id, { meetingId: m.id }, everything)).items).toEqual([])
        expect(Option.isNone(yield* store.lastSequence(theirs.id, m.id))).toBe(true)
        yield* store.update(agendaItem(m, { ...item, workspace_id: theirs.id, title: "Hijacked" }))
        expect(yield* store.delete(theirs.id, item.id)).toBe(false)
        expect(yield* store.get(m.workspace_id, item.id)).toEqual(Option.some(item))
      }))

    it.effect("lists order by the numeric value of sequence, then created_at, then id", () =>
      Effect.gen(function*() {
        const store = yield* AgendaItemStore
        const m = yield* seedMeetingInNewWorkspace()
        const [low, high] = sortedIds(2).map((id) => AgendaItemId.make(id))
        const ten = yield* seedAgendaItem(m, { sequence: "10" })
        const two = yield* seedAgendaItem(m, { sequence: "2" })
        const twoAndAHalf = yield* seedAgendaItem(m, { sequence: "2.5" })
        const minusOne = yield* seedAgendaItem(m, { sequence: "-1" })
        const small = yield* seedAgendaItem(m, { sequence: "1.25" })
        const tieHigh = yield* seedAgendaItem(m, { id: high!, sequence: "3", created_at: T0 })
        const tieLate = yield* seedAgendaItem(m, { sequence: "3", created_at: minutes(-1) })
        const tieLow = yield* seedAgendaItem(m, { id: low!, sequence: "3", created_at: T0 })
        const listed = yield* store.list(m.workspace_id, { meetingId: m.id }, everything)
        expect(ids(listed.items)).toEqual(
          ids([minusOne, small, two, twoAndAHalf, tieLate, tieLow, tieHigh, ten])
        )
        expect(listed.total).toBe(8)
      }))

    it.effect.prop(
      "any set of sequences lists in numeric order, and lastSequence is the greatest",
      { specs: FastCheck.array(itemSpec, { minLength: 1, maxLength: 12 }) },
      ({ specs }) =>
        Effect.gen(function*() {
          const store = yield* AgendaItemStore
          const m = yield* seedMeetingInNewWorkspace()
          const rows: Array<AgendaItemRow> = []
          for (const spec of specs) rows.push(yield* seedAgendaItem(m, { sequence: spec.sequence, created_at: minutes(spec.created) }))
          const expected = expectedOrder(rows)
          expect(ids((yield* store.list(m.workspace_id, { meetingId: m.id }, everything)).items)).toEqual(ids(expected))
          expect(ids((yield* store.list(m.workspace_id, { meetingId: m.id }, { limit: 3, offset: 1 })).items))
            .toEqual(ids(expected.slice(1, 4)))
          expect(Option.map(yield* store.lastSequence(m.workspace_id, m.id), Number)).toEqual(
            Option.some(Number(expected[expected.length - 1]!.sequence))
          )
        }),
      { fastCheck: { numRuns: 30 } }
    )

    it.effect("list filters by meeting and by participant, and pages", () =>
      Effect.gen(function*() {
        const store = yield* AgendaItemStore
        const ws = yield* seedWorkspace()
        const member = yield* seedUser(ws.id)
        const mine = yield* seedMeeting(ws.id)
        const notMine = yield* seedMeeting(ws.id)
        yield* seedParticipant(mine, { user_id: member.id })
        const first = yield* seedAgendaItem(mine, { sequence: "1" })
        const second = yield* seedAgendaItem(mine, { sequence: "2" })
        const third = yield* seedAgendaItem(mine, { sequence: "3" })
        const elsewhere = yield* seedAgendaItem(notMine, { sequence: "1.5" })

        expect(ids((yield* store.list(ws.id, {}, everything)).items)).toEqual(ids([first, elsewhere, second, third]))
        expect(ids((yield* store.list(ws.id, { meetingId: notMine.id }, everything)).items)).toEqual([elsewhere.id])
        expect(ids((yield* store.list(ws.id, { visibleTo: member.id }, everything)).items)).toEqual(ids([first, second, third]))
        expect((yield* store.list(ws.id, { visibleTo: member.id, meetingId: notMine.id }, everything)).total).toBe(0)
        expect((yield* store.list(ws.id, { visibleTo: UserId.make(uuid()) }, everything)).total).toBe(0)
        expect((yield* store.list(ws.id, { meetingId: MeetingId.make(uuid()) }, everything)).total).toBe(0)

        const page = yield* store.list(ws.id, { meetingId: mine.id }, { limit: 2, offset: 1 })
        expect(ids(page.items)).toEqual(ids([second, third]))
        expect(page.total).toBe(3)
        expect(yield* store.list(ws.id, { meetingId: mine.id }, { limit: 2, offset: 3 })).toEqual({ items: [], total: 3 })
      }))

    it.effect("lastSequence answers the numerically highest sequence of the meeting", () =>
      Effect.gen(function*() {
        const store = yield* AgendaItemStore
        const ws = yield* seedWorkspace()
        const m = yield* seedMeeting(ws.id)
        const other = yield* seedMeeting(ws.id)
        expect(Option.isNone(yield* store.lastSequence(ws.id, m.id))).toBe(true)
        yield* seedAgendaItem(m, { sequence: "9.5" })
        yield* seedAgendaItem(m, { sequence: "10" })
        yield* seedAgendaItem(m, { sequence: "-20" })
        yield* seedAgendaItem(other, { sequence: "100" })
        expect(yield* store.lastSequence(ws.id, m.id)).toEqual(Option.some("10"))
        const negative = yield* seedMeeting(ws.id)
        yield* seedAgendaItem(negative, { sequence: "-3" })
        yield* seedAgendaItem(negative, { sequence: "-2.75" })
        expect(yield* store.lastSequence(ws.id, negative.id)).toEqual(Option.some("-2.75"))
      }))

    it.effect("talking points are kept per item and subject", () =>
      Effect.gen(function*() {
        const store = yield* AgendaItemStore
        const m = yield* seedMeetingInNewWorkspace()
        const one = yield* seedAgendaItem(m)
        const two = yield* seedAgendaItem(m)
        const silent = yield* seedAgendaItem(m)
        const ada = uuid()
        const apiKey = uuid()

        yield* store.setTalkingPoints(one.id, ada, ["first", "second", "first"])
        yield* store.setTalkingPoints(two.id, ada, ["only"])
        yield* store.setTalkingPoints(one.id, apiKey, ["the key's own"])

        const adas = yield* store.talkingPoints([one.id, two.id, silent.id], ada)
        expect(new Map(adas)).toEqual(new Map([[one.id, ["first", "second", "first"]], [two.id, ["only"]]]))
        expect(new Map(yield* store.talkingPoints([one.id, two.id], apiKey))).toEqual(new Map([[one.id, ["the key's own"]]]))
        expect((yield* store.talkingPoints([one.id, two.id], uuid())).size).toBe(0)
        expect((yield* store.talkingPoints([], ada)).size).toBe(0)

        yield* store.setTalkingPoints(one.id, ada, ["replaced"])
        expect((yield* store.talkingPoints([one.id], ada)).get(one.id)).toEqual(["replaced"])
        yield* store.setTalkingPoints(one.id, ada, [])
        expect((yield* store.talkingPoints([one.id, two.id], ada)).has(one.id)).toBe(false)
        expect((yield* store.talkingPoints([one.id], apiKey)).get(one.id)).toEqual(["the key's own"])
      }))

    it.effect("delete removes the talking points and detaches action items", () =>
      Effect.gen(function*() {
        const store = yield* AgendaItemStore
        const actions = yield* ActionItemStore
        const m = yield* seedMeetingInNewWorkspace()
        const doomed = yield* seedAgendaItem(m)
        const kept = yield* seedAgendaItem(m)
        const ada = uuid()
        yield* store.setTalkingPoints(doomed.id, ada, ["gone"])
        yield* store.setTalkingPoints(kept.id, ada, ["stays"])
        const pointing = yield* seedActionItem(m, { agenda_item_id: doomed.id, updated_at: minutes(1) })
        const pointingElsewhere = yield* seedActionItem(m, { agenda_item_id: kept.id })

        expect(yield* store.delete(m.workspace_id, doomed.id)).toBe(true)
        expect(yield* store.delete(m.workspace_id, doomed.id)).toBe(false)
        expect(Option.isNone(yield* store.get(m.workspace_id, doomed.id))).toBe(true)
        expect(ids((yield* store.list(m.workspace_id, { meetingId: m.id }, everything)).items)).toEqual([kept.id])
        expect(new Map(yield* store.talkingPoints([doomed.id, kept.id], ada))).toEqual(new Map([[kept.id, ["stays"]]]))

        const detached = Option.getOrThrow(yield* actions.get(m.workspace_id, pointing.id))
        expect(detached.agenda_item_id).toBeNull()
        expect({ ...detached, agenda_item_id: doomed.id }).toEqual({ ...pointing })
        expect(yield* actions.get(m.workspace_id, pointingElsewhere.id)).toEqual(Option.some(pointingElsewhere))
      }))
  })
}
