import { BacklogItemId, BacklogItemRow, BacklogItemStore, MeetingId, type StorePorts, UserId, type WorkspaceId } from "@convene/core"
import { addEqualityTesters, expect, layer } from "@effect/vitest"
import { Effect, FastCheck, type Layer, Option } from "effect"
import { ids, minutes, seedWorkspace, sortedIds, T0, uuid } from "./fixtures.js"

const everything = { limit: 100, offset: 0 }

/** An open backlog item of the workspace made at `T0`, unless `fields` say otherwise. */
const backlogItem = (workspaceId: WorkspaceId, fields: Partial<BacklogItemRow> = {}): BacklogItemRow =>
  new BacklogItemRow({
    id: BacklogItemId.make(uuid()),
    workspace_id: workspaceId,
    title: "Pricing page",
    description: null,
    presenters: [],
    status: "open",
    created_at: T0,
    updated_at: T0,
    assigned_at: null,
    destination_meeting_id: null,
    deleted_at: null,
    ...fields
  })

const seedBacklogItem = (workspaceId: WorkspaceId, fields: Partial<BacklogItemRow> = {}) =>
  Effect.gen(function*() {
    const row = backlogItem(workspaceId, fields)
    yield* (yield* BacklogItemStore).insert(row)
    return row
  })

/** The row closed as assigned at `at` to a fresh meeting id. */
const assigned = (row: BacklogItemRow, at = minutes(5)) =>
  backlogItem(row.workspace_id, { ...row, status: "assigned", assigned_at: at, destination_meeting_id: MeetingId.make(uuid()), updated_at: at })

/** The row closed as deleted at `at`. */
const deleted = (row: BacklogItemRow, at = minutes(5)) =>
  backlogItem(row.workspace_id, { ...row, status: "deleted", deleted_at: at, updated_at: at })

const userId = () => UserId.make(uuid())

export const suite = (name: string, storeLayer: Layer.Layer<StorePorts, unknown>) => {
  addEqualityTesters()

  layer(storeLayer)(`BacklogItemStore (${name})`, (it) => {
    it.effect("insert then get answers every field, nulls, arrays and closed items included", () =>
      Effect.gen(function*() {
        const store = yield* BacklogItemStore
        const ws = yield* seedWorkspace()
        const full = backlogItem(ws.id, {
          title: "Budget ✓ \"quoted\"",
          description: "Numbers for Q2",
          presenters: [userId(), userId(), userId()],
          created_at: minutes(-2),
          updated_at: minutes(2)
        })
        const closed = assigned(backlogItem(ws.id, { presenters: [userId()] }), minutes(7))
        const gone = deleted(backlogItem(ws.id), minutes(8))
        for (const row of [full, closed, gone]) yield* store.insert(row)
        expect(yield* store.get(ws.id, full.id)).toEqual(Option.some(full))
        expect(yield* store.get(ws.id, closed.id)).toEqual(Option.some(closed))
        expect(yield* store.get(ws.id, gone.id)).toEqual(Option.some(gone))
        expect(Option.isNone(yield* store.get(ws.id, BacklogItemId.make(uuid())))).toBe(true)
      }))

    it.effect("update replaces an open item (with an open or a closed row) and answers true; a closed item stays as it is", () =>
      Effect.gen(function*() {
        const store = yield* BacklogItemStore
        const ws = yield* seedWorkspace()
        const original = yield* seedBacklogItem(ws.id, { description: "before", presenters: [userId()] })
        const edited = backlogItem(ws.id, { ...original, title: "After", description: null, presenters: [], updated_at: minutes(1) })
        expect(yield* store.update(edited)).toBe(true)
        expect(yield* store.get(ws.id, original.id)).toEqual(Option.some(edited))

        const closed = assigned(edited)
        expect(yield* store.update(closed)).toBe(true)
        expect(yield* store.get(ws.id, original.id)).toEqual(Option.some(closed))

        // Closed: neither another close nor an edit changes it.
        expect(yield* store.update(deleted(edited, minutes(9)))).toBe(false)
        expect(yield* store.update(backlogItem(ws.id, { ...edited, title: "Too late" }))).toBe(false)
        expect(yield* store.get(ws.id, original.id)).toEqual(Option.some(closed))
        // Nothing stored: nothing to replace.
        expect(yield* store.update(backlogItem(ws.id))).toBe(false)
      }))

    it.effect("of concurrent closes of one open item exactly one succeeds", () =>
      Effect.gen(function*() {
        const store = yield* BacklogItemStore
        const ws = yield* seedWorkspace()
        const row = yield* seedBacklogItem(ws.id)
        const attempts = [assigned(row, minutes(1)), assigned(row, minutes(2)), deleted(row, minutes(3)), deleted(row, minutes(4))]
        const answers = yield* Effect.all(attempts.map((attempt) => store.update(attempt)), { concurrency: "unbounded" })
        expect(answers.filter((answer) => answer)).toHaveLength(1)
        const winner = attempts[answers.indexOf(true)]!
        expect(yield* store.get(ws.id, row.id)).toEqual(Option.some(winner))
      }))

    it.effect("reads and writes are scoped by workspace", () =>
      Effect.gen(function*() {
        const store = yield* BacklogItemStore
        const ws = yield* seedWorkspace()
        const theirs = yield* seedWorkspace()
        const presenter = userId()
        const item = yield* seedBacklogItem(ws.id, { presenters: [presenter] })
        yield* store.setTalkingPoints(item.id, "ann", ["mine"])
        expect(Option.isNone(yield* store.get(theirs.id, item.id))).toBe(true)
        expect(yield* store.listOpen(theirs.id, everything)).toEqual({ items: [], total: 0 })
        expect(yield* store.update(backlogItem(theirs.id, { ...item, workspace_id: theirs.id, title: "Hijacked" }))).toBe(false)
        yield* store.removePresenter(theirs.id, presenter)
        yield* store.deleteTalkingPointsOf(theirs.id, "ann")
        yield* store.deleteByWorkspace(theirs.id)
        expect(yield* store.get(ws.id, item.id)).toEqual(Option.some(item))
        expect(new Map(yield* store.talkingPoints([item.id], "ann"))).toEqual(new Map([[item.id, ["mine"]]]))
      }))

    it.effect("listOpen answers the open items oldest first (created_at, then id), with the total, and pages", () =>
      Effect.gen(function*() {
        const store = yield* BacklogItemStore
        const ws = yield* seedWorkspace()
        const [low, high] = sortedIds(2).map((id) => BacklogItemId.make(id))
        const late = yield* seedBacklogItem(ws.id, { created_at: minutes(10) })
        const tieHigh = yield* seedBacklogItem(ws.id, { id: high!, created_at: minutes(1) })
        const early = yield* seedBacklogItem(ws.id, { created_at: minutes(-5) })
        const tieLow = yield* seedBacklogItem(ws.id, { id: low!, created_at: minutes(1) })
        yield* seedBacklogItem(ws.id, { status: "assigned", assigned_at: minutes(2), destination_meeting_id: MeetingId.make(uuid()) })
        yield* seedBacklogItem(ws.id, { status: "deleted", deleted_at: minutes(2) })

        const listed = yield* store.listOpen(ws.id, everything)
        expect(ids(listed.items)).toEqual(ids([early, tieLow, tieHigh, late]))
        expect(listed.total).toBe(4)
        expect(listed.items[0]).toEqual(early)
        const page = yield* store.listOpen(ws.id, { limit: 2, offset: 1 })
        expect({ ids: ids(page.items), total: page.total }).toEqual({ ids: ids([tieLow, tieHigh]), total: 4 })
        expect(yield* store.listOpen(ws.id, { limit: 2, offset: 4 })).toEqual({ items: [], total: 4 })
      }))

    it.effect("listClosed answers the assigned and deleted items, most recently closed first (then id descending)", () =>
      Effect.gen(function*() {
        const store = yield* BacklogItemStore
        const ws = yield* seedWorkspace()
        const [low, high] = sortedIds(2).map((id) => BacklogItemId.make(id))
        const open = yield* seedBacklogItem(ws.id)
        // Created in another order than they were closed.
        const first = assigned(yield* seedBacklogItem(ws.id, { created_at: minutes(3) }), minutes(10))
        const second = deleted(yield* seedBacklogItem(ws.id, { created_at: minutes(1) }), minutes(20))
        const third = assigned(yield* seedBacklogItem(ws.id, { created_at: minutes(2) }), minutes(30))
        const tieLow = deleted(yield* seedBacklogItem(ws.id, { id: low! }), minutes(15))
        const tieHigh = assigned(yield* seedBacklogItem(ws.id, { id: high! }), minutes(15))
        for (const row of [first, second, third, tieLow, tieHigh]) expect(yield* store.update(row)).toBe(true)

        const listed = yield* store.listClosed(ws.id, everything)
        expect(ids(listed.items)).toEqual(ids([third, second, tieHigh, tieLow, first]))
        expect(listed.total).toBe(5)
        expect(listed.items).toEqual([third, second, tieHigh, tieLow, first])
        expect(ids(listed.items)).not.toContain(open.id)
        const page = yield* store.listClosed(ws.id, { limit: 2, offset: 2 })
        expect({ ids: ids(page.items), total: page.total }).toEqual({ ids: ids([tieHigh, tieLow]), total: 5 })
        expect(ids((yield* store.listOpen(ws.id, everything)).items)).toEqual([open.id])
      }))

    it.effect.prop(
      "open and closed lists partition the items, each in its order",
      {
        specs: FastCheck.array(
          FastCheck.record({ created: FastCheck.integer({ min: 0, max: 3 }), closed: FastCheck.constantFrom("open", "assigned", "deleted"), at: FastCheck.integer({ min: 0, max: 3 }) }),
          { minLength: 1, maxLength: 10 }
        )
      },
      ({ specs }) =>
        Effect.gen(function*() {
          const store = yield* BacklogItemStore
          const ws = yield* seedWorkspace()
          const rows: Array<BacklogItemRow> = []
          for (const spec of specs) {
            const row = yield* seedBacklogItem(ws.id, { created_at: minutes(spec.created) })
            const final = spec.closed === "open" ? row : spec.closed === "assigned" ? assigned(row, minutes(10 + spec.at)) : deleted(row, minutes(10 + spec.at))
            if (final !== row) expect(yield* store.update(final)).toBe(true)
            rows.push(final)
          }
          const byId = (a: BacklogItemRow, b: BacklogItemRow) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
          const open = rows.filter((row) => row.status === "open")
            .sort((a, b) => a.created_at.epochMillis - b.created_at.epochMillis || byId(a, b))
          const closedAtOf = (row: BacklogItemRow) => (row.assigned_at ?? row.deleted_at)!.epochMillis
          const closed = rows.filter((row) => row.status !== "open").sort((a, b) => closedAtOf(b) - closedAtOf(a) || byId(b, a))
          expect(yield* store.listOpen(ws.id, everything)).toEqual({ items: open, total: open.length })
          expect(yield* store.listClosed(ws.id, everything)).toEqual({ items: closed, total: closed.length })
        }),
      { fastCheck: { numRuns: 20 } }
    )

    it.effect("talking points are kept per item and subject; everyone's can be read at once", () =>
      Effect.gen(function*() {
        const store = yield* BacklogItemStore
        const ws = yield* seedWorkspace()
        const one = yield* seedBacklogItem(ws.id)
        const two = yield* seedBacklogItem(ws.id)
        const silent = yield* seedBacklogItem(ws.id)
        const ada = uuid()
        const key = uuid()
        yield* store.setTalkingPoints(one.id, ada, ["first", "second", "first"])
        yield* store.setTalkingPoints(two.id, ada, ["only"])
        yield* store.setTalkingPoints(one.id, key, ["the key's own"])

        expect(new Map(yield* store.talkingPoints([one.id, two.id, silent.id], ada)))
          .toEqual(new Map([[one.id, ["first", "second", "first"]], [two.id, ["only"]]]))
        expect(new Map(yield* store.talkingPoints([one.id, two.id], key))).toEqual(new Map([[one.id, ["the key's own"]]]))
        expect((yield* store.talkingPoints([], ada)).size).toBe(0)
        expect(new Map(yield* store.talkingPointsOfEveryone(one.id)))
          .toEqual(new Map([[ada, ["first", "second", "first"]], [key, ["the key's own"]]]))
        expect((yield* store.talkingPointsOfEveryone(silent.id)).size).toBe(0)

        yield* store.setTalkingPoints(one.id, ada, ["replaced"])
        expect((yield* store.talkingPoints([one.id], ada)).get(one.id)).toEqual(["replaced"])
        yield* store.setTalkingPoints(one.id, ada, [])
        expect((yield* store.talkingPoints([one.id], ada)).has(one.id)).toBe(false)
        expect(new Map(yield* store.talkingPointsOfEveryone(one.id))).toEqual(new Map([[key, ["the key's own"]]]))
      }))

    it.effect("closing an item keeps its talking points", () =>
      Effect.gen(function*() {
        const store = yield* BacklogItemStore
        const ws = yield* seedWorkspace()
        const row = yield* seedBacklogItem(ws.id)
        yield* store.setTalkingPoints(row.id, "ann", ["kept"])
        expect(yield* store.update(deleted(row))).toBe(true)
        expect(new Map(yield* store.talkingPoints([row.id], "ann"))).toEqual(new Map([[row.id, ["kept"]]]))
      }))

    it.effect("deleteByWorkspace removes every item of the workspace, open and closed, with their talking points, and nothing else", () =>
      Effect.gen(function*() {
        const store = yield* BacklogItemStore
        const ws = yield* seedWorkspace()
        const other = yield* seedWorkspace()
        const open = yield* seedBacklogItem(ws.id)
        const closed = assigned(yield* seedBacklogItem(ws.id))
        expect(yield* store.update(closed)).toBe(true)
        const kept = yield* seedBacklogItem(other.id)
        for (const row of [open, closed, kept]) yield* store.setTalkingPoints(row.id, "ann", [`on ${row.id}`])

        yield* store.deleteByWorkspace(ws.id)
        expect(yield* store.listOpen(ws.id, everything)).toEqual({ items: [], total: 0 })
        expect(yield* store.listClosed(ws.id, everything)).toEqual({ items: [], total: 0 })
        for (const row of [open, closed]) expect(Option.isNone(yield* store.get(ws.id, row.id))).toBe(true)
        expect((yield* store.talkingPoints([open.id, closed.id], "ann")).size).toBe(0)
        expect(yield* store.get(other.id, kept.id)).toEqual(Option.some(kept))
        expect(new Map(yield* store.talkingPoints([kept.id], "ann"))).toEqual(new Map([[kept.id, [`on ${kept.id}`]]]))
        yield* store.deleteByWorkspace(ws.id)
      }))

    it.effect("removePresenter takes the user out of every item of the workspace, open and closed, keeping the others' order", () =>
      Effect.gen(function*() {
        const store = yield* BacklogItemStore
        const ws = yield* seedWorkspace()
        const [ann, bob, carol] = [userId(), userId(), userId()] as const
        const first = yield* seedBacklogItem(ws.id, { presenters: [ann, bob], updated_at: minutes(3) })
        const middle = yield* seedBacklogItem(ws.id, { presenters: [bob, ann, carol] })
        const closed = assigned(yield* seedBacklogItem(ws.id, { presenters: [carol, ann] }))
        expect(yield* store.update(closed)).toBe(true)
        const without = yield* seedBacklogItem(ws.id, { presenters: [bob] })
        const elsewhere = yield* seedBacklogItem((yield* seedWorkspace()).id, { presenters: [ann] })

        yield* store.removePresenter(ws.id, ann)
        const expectPresenters = (row: BacklogItemRow, presenters: ReadonlyArray<UserId>) =>
          Effect.map(store.get(row.workspace_id, row.id), (found) => expect(found).toEqual(Option.some(backlogItem(row.workspace_id, { ...row, presenters }))))
        yield* expectPresenters(first, [bob])
        yield* expectPresenters(middle, [bob, carol])
        yield* expectPresenters(closed, [carol])
        yield* expectPresenters(without, [bob])
        yield* expectPresenters(elsewhere, [ann])
      }))

    it.effect("deleteTalkingPointsOf deletes the subject's talking points on the workspace's items, and nothing else", () =>
      Effect.gen(function*() {
        const store = yield* BacklogItemStore
        const ws = yield* seedWorkspace()
        const one = yield* seedBacklogItem(ws.id)
        const closed = assigned(yield* seedBacklogItem(ws.id))
        expect(yield* store.update(closed)).toBe(true)
        const elsewhere = yield* seedBacklogItem((yield* seedWorkspace()).id)
        const ada = uuid()
        const key = uuid()
        yield* store.setTalkingPoints(one.id, ada, ["mine"])
        yield* store.setTalkingPoints(closed.id, ada, ["mine too"])
        yield* store.setTalkingPoints(one.id, key, ["the key's"])
        yield* store.setTalkingPoints(elsewhere.id, ada, ["in another workspace"])

        yield* store.deleteTalkingPointsOf(ws.id, ada)
        expect((yield* store.talkingPoints([one.id, closed.id], ada)).size).toBe(0)
        expect(new Map(yield* store.talkingPoints([one.id], key))).toEqual(new Map([[one.id, ["the key's"]]]))
        expect(new Map(yield* store.talkingPoints([elsewhere.id], ada))).toEqual(new Map([[elsewhere.id, ["in another workspace"]]]))
        expect(yield* store.get(ws.id, one.id)).toEqual(Option.some(one))
      }))
  })
}
