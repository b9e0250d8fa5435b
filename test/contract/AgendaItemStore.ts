import {
  ActionItemStore,
  AgendaItemId,
  type AgendaItemRow,
  AgendaItemStore,
  MeetingId,
  normalizeSequence,
  type StorePorts,
  Transactor,
  UserId
} from "@convene/core"
import { addEqualityTesters, expect, layer } from "@effect/vitest"
import { BigDecimal, Effect, FastCheck, type Layer, Option } from "effect"
import {
  agendaItem,
  ids,
  minutes,
  rolledBack,
  seedActionItem,
  seedAgendaItem,
  seedMeeting,
  seedMeetingInNewWorkspace,
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
          presenters: [UserId.make(uuid()), UserId.make(uuid()), UserId.make(uuid())],
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
        const original = yield* seedAgendaItem(m, { description: "before", presenters: [UserId.make(uuid()), UserId.make(uuid())] })
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
        expect((yield* store.list(theirs.id, { meetingIds: [m.id] }, everything)).items).toEqual([])
        expect(yield* store.listByMeeting(theirs.id, m.id)).toEqual([])
        expect(Option.isNone(yield* store.lastSequence(theirs.id, m.id))).toBe(true)
        yield* store.deleteByMeeting(theirs.id, m.id)
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
        const listed = yield* store.list(m.workspace_id, { meetingIds: [m.id] }, everything)
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
          // Seeded in one unit of work: one commit instead of one per row.
          const { m, rows } = yield* (yield* Transactor).withTransaction(Effect.gen(function*() {
            const m = yield* seedMeetingInNewWorkspace()
            const rows: Array<AgendaItemRow> = []
            for (const spec of specs) rows.push(yield* seedAgendaItem(m, { sequence: spec.sequence, created_at: minutes(spec.created) }))
            return { m, rows }
          }))
          const expected = expectedOrder(rows)
          expect(ids((yield* store.list(m.workspace_id, { meetingIds: [m.id] }, everything)).items)).toEqual(ids(expected))
          expect(ids((yield* store.list(m.workspace_id, { meetingIds: [m.id] }, { limit: 3, offset: 1 })).items))
            .toEqual(ids(expected.slice(1, 4)))
          expect(Option.map(yield* store.lastSequence(m.workspace_id, m.id), Number)).toEqual(
            Option.some(Number(expected[expected.length - 1]!.sequence))
          )
        }),
      { fastCheck: { numRuns: 30 } }
    )

    it.effect("list filters by meetingIds (undefined: every meeting; empty: none), and pages", () =>
      Effect.gen(function*() {
        const store = yield* AgendaItemStore
        const ws = yield* seedWorkspace()
        const one = yield* seedMeeting(ws.id)
        const two = yield* seedMeeting(ws.id)
        const three = yield* seedMeeting(ws.id)
        const first = yield* seedAgendaItem(one, { sequence: "1" })
        const second = yield* seedAgendaItem(one, { sequence: "2" })
        const third = yield* seedAgendaItem(one, { sequence: "3" })
        const ofTwo = yield* seedAgendaItem(two, { sequence: "1.5" })
        const ofThree = yield* seedAgendaItem(three, { sequence: "0.5" })

        const listed = (meetingIds: ReadonlyArray<MeetingId> | undefined, page = everything) =>
          Effect.map(store.list(ws.id, { meetingIds }, page), (slice) => ({ ids: ids(slice.items), total: slice.total }))

        expect(yield* listed(undefined)).toEqual({ ids: ids([ofThree, first, ofTwo, second, third]), total: 5 })
        expect((yield* store.list(ws.id, {}, everything)).total).toBe(5)
        expect(yield* listed([two.id])).toEqual({ ids: [ofTwo.id], total: 1 })
        expect(yield* listed([one.id, three.id])).toEqual({ ids: ids([ofThree, first, second, third]), total: 4 })
        expect(yield* listed([three.id, two.id, MeetingId.make(uuid())])).toEqual({ ids: ids([ofThree, ofTwo]), total: 2 })
        expect(yield* listed([])).toEqual({ ids: [], total: 0 })
        expect(yield* listed([MeetingId.make(uuid())])).toEqual({ ids: [], total: 0 })

        expect(yield* listed([one.id], { limit: 2, offset: 1 })).toEqual({ ids: ids([second, third]), total: 3 })
        expect(yield* listed([one.id], { limit: 2, offset: 3 })).toEqual({ ids: [], total: 3 })
        expect(yield* listed([one.id, two.id], { limit: 2, offset: 0 })).toEqual({ ids: ids([first, ofTwo]), total: 4 })
      }))

    it.effect("listByMeeting answers every item of the meeting in list order", () =>
      Effect.gen(function*() {
        const store = yield* AgendaItemStore
        const ws = yield* seedWorkspace()
        const m = yield* seedMeeting(ws.id)
        const other = yield* seedMeeting(ws.id)
        const [low, high] = sortedIds(2).map((id) => AgendaItemId.make(id))
        const rows: Array<AgendaItemRow> = []
        for (const sequence of ["10", "2", "-1", "2.5", "999999999999.5"]) rows.push(yield* seedAgendaItem(m, { sequence }))
        rows.push(yield* seedAgendaItem(m, { id: high!, sequence: "3" }))
        rows.push(yield* seedAgendaItem(m, { sequence: "3", created_at: minutes(-1) }))
        rows.push(yield* seedAgendaItem(m, { id: low!, sequence: "3" }))
        for (let i = 0; i < 25; i++) rows.push(yield* seedAgendaItem(m, { sequence: String(100 + i) }))
        yield* seedAgendaItem(other, { sequence: "5" })

        const all = yield* store.listByMeeting(ws.id, m.id)
        expect(ids(all)).toEqual(ids(expectedOrder(rows)))
        // Not paged like list: every item, beyond the largest page as well.
        expect(all).toHaveLength(33)
        expect(all[0]).toEqual(rows[2])
        expect(ids((yield* store.list(ws.id, { meetingIds: [m.id] }, everything)).items)).toEqual(ids(all))
        expect(yield* store.listByMeeting(ws.id, MeetingId.make(uuid()))).toEqual([])
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

    it.effect("delete removes the item and its talking points, and answers whether it existed", () =>
      Effect.gen(function*() {
        const store = yield* AgendaItemStore
        const m = yield* seedMeetingInNewWorkspace()
        const doomed = yield* seedAgendaItem(m)
        const kept = yield* seedAgendaItem(m)
        const ada = uuid()
        yield* store.setTalkingPoints(doomed.id, ada, ["gone"])
        yield* store.setTalkingPoints(kept.id, ada, ["stays"])

        expect(yield* store.delete(m.workspace_id, doomed.id)).toBe(true)
        expect(yield* store.delete(m.workspace_id, doomed.id)).toBe(false)
        expect(yield* store.delete(m.workspace_id, AgendaItemId.make(uuid()))).toBe(false)
        expect(Option.isNone(yield* store.get(m.workspace_id, doomed.id))).toBe(true)
        expect(ids((yield* store.list(m.workspace_id, { meetingIds: [m.id] }, everything)).items)).toEqual([kept.id])
        expect(new Map(yield* store.talkingPoints([doomed.id, kept.id], ada))).toEqual(new Map([[kept.id, ["stays"]]]))
      }))

    it.effect("delete leaves the action items that point at the item untouched (core detaches them)", () =>
      Effect.gen(function*() {
        const store = yield* AgendaItemStore
        const actions = yield* ActionItemStore
        const m = yield* seedMeetingInNewWorkspace()
        const doomed = yield* seedAgendaItem(m)
        const pointing = yield* seedActionItem(m, { agenda_item_id: doomed.id, updated_at: minutes(1) })

        // Looked at inside a unit that is rolled back: PostgreSQL refuses to commit an action item that
        // points at a deleted agenda item (see the store-pg migration tests).
        const inside = yield* rolledBack(Effect.gen(function*() {
          const existed = yield* store.delete(m.workspace_id, doomed.id)
          return { existed, item: yield* store.get(m.workspace_id, doomed.id), pointing: yield* actions.get(m.workspace_id, pointing.id) }
        }))
        expect(inside).toEqual({ existed: true, item: Option.none(), pointing: Option.some(pointing) })
        expect(yield* store.get(m.workspace_id, doomed.id)).toEqual(Option.some(doomed))
      }))

    it.effect("deleteByMeeting removes the meeting's items with their talking points, and nothing else", () =>
      Effect.gen(function*() {
        const store = yield* AgendaItemStore
        const ws = yield* seedWorkspace()
        const doomed = yield* seedMeeting(ws.id)
        const kept = yield* seedMeeting(ws.id)
        const ada = uuid()
        const gone = [yield* seedAgendaItem(doomed, { sequence: "1" }), yield* seedAgendaItem(doomed, { sequence: "2" })]
        const stays = [yield* seedAgendaItem(kept, { sequence: "1" }), yield* seedAgendaItem(kept, { sequence: "2" })]
        for (const item of [...gone, ...stays]) yield* store.setTalkingPoints(item.id, ada, [`on ${item.id}`])

        yield* store.deleteByMeeting(ws.id, doomed.id)

        for (const item of gone) expect(Option.isNone(yield* store.get(ws.id, item.id))).toBe(true)
        expect(yield* store.listByMeeting(ws.id, doomed.id)).toEqual([])
        expect(Option.isNone(yield* store.lastSequence(ws.id, doomed.id))).toBe(true)
        expect((yield* store.talkingPoints(gone.map((item) => item.id), ada)).size).toBe(0)
        expect(yield* store.listByMeeting(ws.id, kept.id)).toEqual(stays)
        expect(new Map(yield* store.talkingPoints(stays.map((item) => item.id), ada)))
          .toEqual(new Map(stays.map((item) => [item.id, [`on ${item.id}`]])))

        // Again, and for a meeting without items: nothing to do, nothing fails.
        yield* store.deleteByMeeting(ws.id, doomed.id)
        yield* store.deleteByMeeting(ws.id, MeetingId.make(uuid()))
        expect(yield* store.listByMeeting(ws.id, kept.id)).toEqual(stays)
      }))

    it.effect("deleteByWorkspace removes every item of the workspace with their talking points, and nothing else", () =>
      Effect.gen(function*() {
        const store = yield* AgendaItemStore
        const ws = yield* seedWorkspace()
        const one = yield* seedMeeting(ws.id)
        const two = yield* seedMeeting(ws.id)
        const kept = yield* seedMeetingInNewWorkspace()
        const ada = uuid()
        const gone = [yield* seedAgendaItem(one), yield* seedAgendaItem(two, { sequence: "2" })]
        const stays = yield* seedAgendaItem(kept)
        for (const item of [...gone, stays]) yield* store.setTalkingPoints(item.id, ada, [`on ${item.id}`])

        yield* store.deleteByWorkspace(ws.id)
        expect(yield* store.list(ws.id, {}, everything)).toEqual({ items: [], total: 0 })
        for (const item of gone) expect(Option.isNone(yield* store.get(ws.id, item.id))).toBe(true)
        expect((yield* store.talkingPoints(ids(gone) as ReadonlyArray<AgendaItemId>, ada)).size).toBe(0)
        expect(yield* store.get(kept.workspace_id, stays.id)).toEqual(Option.some(stays))
        expect(new Map(yield* store.talkingPoints([stays.id], ada))).toEqual(new Map([[stays.id, [`on ${stays.id}`]]]))
        yield* store.deleteByWorkspace(ws.id)
      }))

    it.effect("removePresenter takes the user out of the presenters of the workspace's items, keeping the others' order", () =>
      Effect.gen(function*() {
        const store = yield* AgendaItemStore
        const ws = yield* seedWorkspace()
        const m = yield* seedMeeting(ws.id)
        const [ann, bob, carol] = [uuid(), uuid(), uuid()].map((id) => UserId.make(id))
        const first = yield* seedAgendaItem(m, { presenters: [ann!, bob!], updated_at: minutes(3) })
        const middle = yield* seedAgendaItem(m, { presenters: [bob!, ann!, carol!], sequence: "2" })
        const without = yield* seedAgendaItem(m, { presenters: [bob!], sequence: "3" })
        const none = yield* seedAgendaItem(m, { sequence: "4" })
        const elsewhere = yield* seedAgendaItem(yield* seedMeetingInNewWorkspace(), { presenters: [ann!] })

        yield* store.removePresenter(ws.id, ann!)
        expect(yield* store.get(ws.id, first.id)).toEqual(Option.some(agendaItem(m, { ...first, presenters: [bob!] })))
        expect(yield* store.get(ws.id, middle.id)).toEqual(Option.some(agendaItem(m, { ...middle, presenters: [bob!, carol!] })))
        expect(yield* store.get(ws.id, without.id)).toEqual(Option.some(without))
        expect(yield* store.get(ws.id, none.id)).toEqual(Option.some(none))
        expect(yield* store.get(elsewhere.workspace_id, elsewhere.id)).toEqual(Option.some(elsewhere))
        yield* store.removePresenter(ws.id, ann!)
        expect(yield* store.get(ws.id, first.id)).toEqual(Option.some(agendaItem(m, { ...first, presenters: [bob!] })))
      }))

    it.effect("deleteTalkingPointsOf deletes the subject's talking points on the workspace's items, and nothing else", () =>
      Effect.gen(function*() {
        const store = yield* AgendaItemStore
        const m = yield* seedMeetingInNewWorkspace()
        const one = yield* seedAgendaItem(m)
        const two = yield* seedAgendaItem(m, { sequence: "2" })
        const elsewhere = yield* seedAgendaItem(yield* seedMeetingInNewWorkspace())
        const ada = uuid()
        const key = uuid()
        yield* store.setTalkingPoints(one.id, ada, ["mine"])
        yield* store.setTalkingPoints(two.id, ada, ["mine too"])
        yield* store.setTalkingPoints(one.id, key, ["the key's"])
        yield* store.setTalkingPoints(elsewhere.id, ada, ["in another workspace"])

        yield* store.deleteTalkingPointsOf(m.workspace_id, ada)
        expect((yield* store.talkingPoints([one.id, two.id], ada)).size).toBe(0)
        expect(new Map(yield* store.talkingPoints([one.id, two.id], key))).toEqual(new Map([[one.id, ["the key's"]]]))
        expect(new Map(yield* store.talkingPoints([elsewhere.id], ada))).toEqual(new Map([[elsewhere.id, ["in another workspace"]]]))
        expect(yield* store.get(m.workspace_id, one.id)).toEqual(Option.some(one))
        yield* store.deleteTalkingPointsOf(m.workspace_id, ada)
      }))
  })
}
