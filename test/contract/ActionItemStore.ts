import { ActionItemId, ActionItemStore, CalendarDate, MeetingId, type StorePorts, UserId } from "@convene/core"
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
  seedParticipant,
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

    it.effect("list filters by meeting, status and participant, and pages", () =>
      Effect.gen(function*() {
        const store = yield* ActionItemStore
        const ws = yield* seedWorkspace()
        const member = yield* seedUser(ws.id)
        const mine = yield* seedMeeting(ws.id)
        const notMine = yield* seedMeeting(ws.id)
        yield* seedParticipant(mine, { user_id: member.id })
        const a = yield* seedActionItem(mine, { status: "accepted", created_at: minutes(1) })
        const b = yield* seedActionItem(mine, { status: "blocked", created_at: minutes(2) })
        const c = yield* seedActionItem(mine, { status: "accepted", created_at: minutes(3) })
        const d = yield* seedActionItem(notMine, { status: "accepted", created_at: minutes(4) })
        const e = yield* seedActionItem(notMine, { status: "cancelled", created_at: minutes(5) })

        const listed = (filter: Parameters<typeof store.list>[1], page = everything) =>
          Effect.map(store.list(ws.id, filter, page), (slice) => ({ ids: ids(slice.items), total: slice.total }))

        expect(yield* listed({})).toEqual({ ids: ids([e, d, c, b, a]), total: 5 })
        expect(yield* listed({ meetingId: mine.id })).toEqual({ ids: ids([c, b, a]), total: 3 })
        expect(yield* listed({ status: "accepted" })).toEqual({ ids: ids([d, c, a]), total: 3 })
        expect(yield* listed({ status: "completed" })).toEqual({ ids: [], total: 0 })
        expect(yield* listed({ visibleTo: member.id })).toEqual({ ids: ids([c, b, a]), total: 3 })
        expect(yield* listed({ visibleTo: member.id, status: "accepted" })).toEqual({ ids: ids([c, a]), total: 2 })
        expect(yield* listed({ meetingId: notMine.id, status: "accepted" })).toEqual({ ids: [d.id], total: 1 })
        expect(yield* listed({ visibleTo: UserId.make(uuid()) })).toEqual({ ids: [], total: 0 })
        expect(yield* listed({ meetingId: MeetingId.make(uuid()) })).toEqual({ ids: [], total: 0 })

        expect(yield* listed({ status: "accepted" }, { limit: 1, offset: 1 })).toEqual({ ids: [c.id], total: 3 })
        expect(yield* listed({}, { limit: 2, offset: 4 })).toEqual({ ids: [a.id], total: 5 })
        expect(yield* listed({}, { limit: 2, offset: 5 })).toEqual({ ids: [], total: 5 })
      }))
  })
}
