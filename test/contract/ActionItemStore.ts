import { ActionItemId, ActionItemStore, AgendaItemId, CalendarDate, MeetingId, type StorePorts } from "@convene/core"
import { addEqualityTesters, expect, layer } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import {
  actionItem,
  ids,
  minutes,
  seedActionItem,
  seedAgendaItem,
  seedMeeting,
  seedMeetingInNewWorkspace,
  seedUser,
  seedWorkspace,
  sortedIds,
  T0,
  uuid
} from "./fixtures.js"

const everything = { limit: 100, offset: 0 }

export const suite = (name: string, storeLayer: Layer.Layer<StorePorts, unknown>) => {
  addEqualityTesters()

  layer(storeLayer)(`ActionItemStore (${name})`, (it) => {
    it.effect("insert then get answers every field, nulls included", () =>
      Effect.gen(function*() {
        const store = yield* ActionItemStore
        const ws = yield* seedWorkspace()
        const assignee = yield* seedUser(ws.id)
        const m = yield* seedMeeting(ws.id)
        const item = yield* seedAgendaItem(m)
        const full = actionItem(m, {
          agenda_item_id: item.id,
          assigned_to_user_id: assignee.id,
          title: "Ship it ✓",
          description: "by Friday",
          due_date: CalendarDate.make("2026-02-28"),
          status: "completed",
          is_completed: true,
          completed_at: minutes(30),
          created_at: minutes(-30),
          updated_at: minutes(30)
        })
        const bare = actionItem(m)
        yield* store.insert(full)
        yield* store.insert(bare)
        expect(yield* store.get(ws.id, full.id)).toEqual(Option.some(full))
        expect(yield* store.get(ws.id, bare.id)).toEqual(Option.some(bare))
        expect(Option.isNone(yield* store.get(ws.id, ActionItemId.make(uuid())))).toBe(true)
      }))

    it.effect("update replaces every field, to null as well", () =>
      Effect.gen(function*() {
        const store = yield* ActionItemStore
        const ws = yield* seedWorkspace()
        const assignee = yield* seedUser(ws.id)
        const m = yield* seedMeeting(ws.id)
        const item = yield* seedAgendaItem(m)
        const original = yield* seedActionItem(m, {
          agenda_item_id: item.id,
          assigned_to_user_id: assignee.id,
          description: "before",
          due_date: CalendarDate.make("2026-12-31"),
          status: "completed",
          is_completed: true,
          completed_at: minutes(1)
        })
        const changed = actionItem(m, {
          ...original,
          agenda_item_id: null,
          assigned_to_user_id: null,
          title: "Reopened",
          description: null,
          due_date: null,
          status: "in_progress",
          is_completed: false,
          completed_at: null,
          updated_at: minutes(2)
        })
        yield* store.update(changed)
        expect(yield* store.get(ws.id, original.id)).toEqual(Option.some(changed))
      }))

    it.effect("reads and writes are scoped by workspace; delete answers whether it existed", () =>
      Effect.gen(function*() {
        const store = yield* ActionItemStore
        const m = yield* seedMeetingInNewWorkspace()
        const theirs = yield* seedWorkspace()
        const stored = yield* seedActionItem(m)
        expect(Option.isNone(yield* store.get(theirs.id, stored.id))).toBe(true)
        expect((yield* store.list(theirs.id, {}, everything)).total).toBe(0)
        yield* store.update(actionItem(m, { ...stored, workspace_id: theirs.id, title: "Hijacked" }))
        expect(yield* store.delete(theirs.id, stored.id)).toBe(false)
        expect(yield* store.get(m.workspace_id, stored.id)).toEqual(Option.some(stored))

        expect(yield* store.delete(m.workspace_id, stored.id)).toBe(true)
        expect(yield* store.delete(m.workspace_id, stored.id)).toBe(false)
        expect(Option.isNone(yield* store.get(m.workspace_id, stored.id))).toBe(true)
      }))

    it.effect("lists are newest first, ties by id descending", () =>
      Effect.gen(function*() {
        const store = yield* ActionItemStore
        const m = yield* seedMeetingInNewWorkspace()
        const [low, high] = sortedIds(2).map((id) => ActionItemId.make(id))
        const oldest = yield* seedActionItem(m, { created_at: minutes(-5) })
        const tieLow = yield* seedActionItem(m, { id: low!, created_at: T0 })
        const newest = yield* seedActionItem(m, { created_at: minutes(5) })
        const tieHigh = yield* seedActionItem(m, { id: high!, created_at: T0 })
        const listed = yield* store.list(m.workspace_id, {}, everything)
        expect(ids(listed.items)).toEqual(ids([newest, tieHigh, tieLow, oldest]))
        expect(listed.total).toBe(4)
      }))

    it.effect("list filters by meetingIds (undefined: every meeting; empty: none) and status, and pages", () =>
      Effect.gen(function*() {
        const store = yield* ActionItemStore
        const ws = yield* seedWorkspace()
        const one = yield* seedMeeting(ws.id)
        const two = yield* seedMeeting(ws.id)
        const three = yield* seedMeeting(ws.id)
        const a = yield* seedActionItem(one, { status: "accepted", created_at: minutes(1) })
        const b = yield* seedActionItem(one, { status: "blocked", created_at: minutes(2) })
        const c = yield* seedActionItem(one, { status: "accepted", created_at: minutes(3) })
        const d = yield* seedActionItem(two, { status: "accepted", created_at: minutes(4) })
        const e = yield* seedActionItem(two, { status: "cancelled", created_at: minutes(5) })
        const f = yield* seedActionItem(three, { status: "accepted", created_at: minutes(6) })

        const listed = (filter: Parameters<typeof store.list>[1], page = everything) =>
          Effect.map(store.list(ws.id, filter, page), (slice) => ({ ids: ids(slice.items), total: slice.total }))

        expect(yield* listed({})).toEqual({ ids: ids([f, e, d, c, b, a]), total: 6 })
        expect(yield* listed({ meetingIds: undefined, status: undefined })).toEqual({ ids: ids([f, e, d, c, b, a]), total: 6 })
        expect(yield* listed({ meetingIds: [one.id] })).toEqual({ ids: ids([c, b, a]), total: 3 })
        expect(yield* listed({ meetingIds: [one.id, three.id] })).toEqual({ ids: ids([f, c, b, a]), total: 4 })
        expect(yield* listed({ meetingIds: [three.id, two.id, MeetingId.make(uuid())] })).toEqual({ ids: ids([f, e, d]), total: 3 })
        expect(yield* listed({ meetingIds: [] })).toEqual({ ids: [], total: 0 })
        expect(yield* listed({ meetingIds: [], status: "accepted" })).toEqual({ ids: [], total: 0 })
        expect(yield* listed({ status: "accepted" })).toEqual({ ids: ids([f, d, c, a]), total: 4 })
        expect(yield* listed({ status: "completed" })).toEqual({ ids: [], total: 0 })
        expect(yield* listed({ meetingIds: [one.id, two.id], status: "accepted" })).toEqual({ ids: ids([d, c, a]), total: 3 })
        expect(yield* listed({ meetingIds: [two.id], status: "accepted" })).toEqual({ ids: [d.id], total: 1 })
        expect(yield* listed({ meetingIds: [MeetingId.make(uuid())] })).toEqual({ ids: [], total: 0 })

        expect(yield* listed({ status: "accepted" }, { limit: 1, offset: 1 })).toEqual({ ids: [d.id], total: 4 })
        expect(yield* listed({}, { limit: 2, offset: 5 })).toEqual({ ids: [a.id], total: 6 })
        expect(yield* listed({}, { limit: 2, offset: 6 })).toEqual({ ids: [], total: 6 })
        expect(yield* listed({ meetingIds: [one.id] }, { limit: 2, offset: 1 })).toEqual({ ids: ids([b, a]), total: 3 })
      }))

    it.effect("deleteByMeeting removes the meeting's items only, and only in the given workspace", () =>
      Effect.gen(function*() {
        const store = yield* ActionItemStore
        const ws = yield* seedWorkspace()
        const theirs = yield* seedWorkspace()
        const doomed = yield* seedMeeting(ws.id)
        const kept = yield* seedMeeting(ws.id)
        const elsewhere = yield* seedMeeting(theirs.id)
        const item = yield* seedAgendaItem(doomed)
        const gone = [yield* seedActionItem(doomed), yield* seedActionItem(doomed, { agenda_item_id: item.id, status: "completed" })]
        const stays = yield* seedActionItem(kept)
        const theirsStays = yield* seedActionItem(elsewhere)

        // Asked in the wrong workspace, nothing goes.
        yield* store.deleteByMeeting(theirs.id, doomed.id)
        for (const row of gone) expect(yield* store.get(ws.id, row.id)).toEqual(Option.some(row))

        yield* store.deleteByMeeting(ws.id, doomed.id)
        for (const row of gone) expect(Option.isNone(yield* store.get(ws.id, row.id))).toBe(true)
        expect((yield* store.list(ws.id, { meetingIds: [doomed.id] }, everything)).total).toBe(0)
        expect(yield* store.get(ws.id, stays.id)).toEqual(Option.some(stays))
        expect(yield* store.get(theirs.id, theirsStays.id)).toEqual(Option.some(theirsStays))
        expect(ids((yield* store.list(ws.id, {}, everything)).items)).toEqual([stays.id])

        yield* store.deleteByMeeting(ws.id, doomed.id)
        yield* store.deleteByMeeting(ws.id, MeetingId.make(uuid()))
        expect(yield* store.get(ws.id, stays.id)).toEqual(Option.some(stays))
      }))

    it.effect("detachAgendaItem clears agenda_item_id on the items pointing at it, in that workspace, and nothing else", () =>
      Effect.gen(function*() {
        const store = yield* ActionItemStore
        const ws = yield* seedWorkspace()
        const theirs = yield* seedWorkspace()
        const assignee = yield* seedUser(ws.id)
        const m = yield* seedMeeting(ws.id)
        const detached = yield* seedAgendaItem(m, { sequence: "1" })
        const other = yield* seedAgendaItem(m, { sequence: "2" })
        const pointing = yield* seedActionItem(m, {
          agenda_item_id: detached.id,
          assigned_to_user_id: assignee.id,
          title: "Follow up",
          description: "with details",
          due_date: CalendarDate.make("2026-04-01"),
          status: "completed",
          is_completed: true,
          completed_at: minutes(30),
          created_at: minutes(-30),
          updated_at: minutes(30)
        })
        const pointingToo = yield* seedActionItem(m, { agenda_item_id: detached.id, status: "blocked", updated_at: minutes(5) })
        const pointingElsewhere = yield* seedActionItem(m, { agenda_item_id: other.id })
        const loose = yield* seedActionItem(m)
        // Another workspace's row naming the same agenda item (the store does not check where ids belong).
        const elsewhere = yield* seedMeeting(theirs.id)
        const theirsPointing = yield* seedActionItem(elsewhere, { agenda_item_id: detached.id })

        // Asked in the wrong workspace, only that workspace's rows change.
        yield* store.detachAgendaItem(theirs.id, detached.id)
        expect(yield* store.get(ws.id, pointing.id)).toEqual(Option.some(pointing))
        expect(yield* store.get(theirs.id, theirsPointing.id))
          .toEqual(Option.some(actionItem(elsewhere, { ...theirsPointing, agenda_item_id: null })))
        yield* store.update(theirsPointing)

        yield* store.detachAgendaItem(ws.id, detached.id)
        expect(yield* store.get(ws.id, pointing.id)).toEqual(Option.some(actionItem(m, { ...pointing, agenda_item_id: null })))
        expect(yield* store.get(ws.id, pointingToo.id)).toEqual(Option.some(actionItem(m, { ...pointingToo, agenda_item_id: null })))
        expect(yield* store.get(ws.id, pointingElsewhere.id)).toEqual(Option.some(pointingElsewhere))
        expect(yield* store.get(ws.id, loose.id)).toEqual(Option.some(loose))
        expect(yield* store.get(theirs.id, theirsPointing.id)).toEqual(Option.some(theirsPointing))

        yield* store.detachAgendaItem(ws.id, AgendaItemId.make(uuid()))
        expect(yield* store.get(ws.id, pointingElsewhere.id)).toEqual(Option.some(pointingElsewhere))
      }))

    it.effect("deleteByWorkspace removes every action item of the workspace, and nothing else", () =>
      Effect.gen(function*() {
        const store = yield* ActionItemStore
        const ws = yield* seedWorkspace()
        const one = yield* seedMeeting(ws.id)
        const two = yield* seedMeeting(ws.id)
        const gone = [yield* seedActionItem(one), yield* seedActionItem(two, { status: "completed" })]
        const elsewhere = yield* seedMeetingInNewWorkspace()
        const kept = yield* seedActionItem(elsewhere)

        yield* store.deleteByWorkspace(ws.id)
        expect(yield* store.list(ws.id, {}, everything)).toEqual({ items: [], total: 0 })
        for (const item of gone) expect(Option.isNone(yield* store.get(ws.id, item.id))).toBe(true)
        expect(yield* store.get(elsewhere.workspace_id, kept.id)).toEqual(Option.some(kept))
        yield* store.deleteByWorkspace(ws.id)
      }))

    it.effect("unassignUser clears assigned_to_user_id on the user's items in that workspace, and nothing else", () =>
      Effect.gen(function*() {
        const store = yield* ActionItemStore
        const ws = yield* seedWorkspace()
        const theirs = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id)
        const bob = yield* seedUser(ws.id)
        const m = yield* seedMeeting(ws.id)
        const item = yield* seedAgendaItem(m)
        const anns = yield* seedActionItem(m, {
          assigned_to_user_id: ann.id,
          agenda_item_id: item.id,
          due_date: CalendarDate.make("2026-04-01"),
          status: "completed",
          is_completed: true,
          completed_at: minutes(30),
          updated_at: minutes(30)
        })
        const annsToo = yield* seedActionItem(m, { assigned_to_user_id: ann.id })
        const bobs = yield* seedActionItem(m, { assigned_to_user_id: bob.id })
        const nobodys = yield* seedActionItem(m)
        const elsewhere = yield* seedActionItem(yield* seedMeeting(theirs.id), { assigned_to_user_id: ann.id })

        yield* store.unassignUser(ws.id, ann.id)
        expect(yield* store.get(ws.id, anns.id)).toEqual(Option.some(actionItem(m, { ...anns, assigned_to_user_id: null })))
        expect(yield* store.get(ws.id, annsToo.id)).toEqual(Option.some(actionItem(m, { ...annsToo, assigned_to_user_id: null })))
        expect(yield* store.get(ws.id, bobs.id)).toEqual(Option.some(bobs))
        expect(yield* store.get(ws.id, nobodys.id)).toEqual(Option.some(nobodys))
        expect(yield* store.get(theirs.id, elsewhere.id)).toEqual(Option.some(elsewhere))
        yield* store.unassignUser(ws.id, ann.id)
      }))
  })
}
