/**
 * BacklogItems: the open backlog and its history, private talking points and presenters as on agenda items, and
 * assignment to a meeting: one unit of work that creates the agenda item (under the agenda's own rules) and closes
 * the backlog item with both events, or changes nothing.
 */
import {
  AddParticipants,
  AgendaItems,
  AgendaItemStore,
  AssignBacklogItem,
  BacklogItemId,
  BacklogItems,
  BacklogItemStore,
  CreateAgendaItem,
  CreateBacklogItem,
  CreateMeeting,
  EventLog,
  MeetingId,
  Meetings,
  ParticipantEntry,
  Participants,
  type Principal,
  type Scope,
  Sequence,
  UpdateBacklogItem,
  UpdateMeeting,
  UserId,
  Users,
  type WorkspaceId,
  Workspaces
} from "@convene/core"
import * as StoreMemory from "@convene/store-memory"
import { describe, expect, layer } from "@effect/vitest"
import { Cause, DateTime, Effect, Exit, Layer, Option, TestClock } from "effect"
import { apiKeyFor, CoreLive, coreOver, principalFor, spansOf } from "./fixtures.js"

const NOW = DateTime.unsafeMake("2026-03-02T09:00:00.000Z")
const everything = { limit: 100 }

/** The failure of an effect that must fail, as its tag. */
const failureOf = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.flip(effect), (error) => error._tag)

/** The event types the workspace's log holds, oldest first. */
const eventsOf = (workspaceId: WorkspaceId) =>
  Effect.map(Effect.flatMap(EventLog, (log) => log.after(workspaceId, 0, 100)), (logged) => logged.map((entry) => entry.event))

/** The clock at NOW; a MEMBER (with a colleague in the workspace) and a meeting of the member's. */
const setup = Effect.gen(function*() {
  yield* TestClock.setTime(DateTime.toEpochMillis(NOW))
  const { principal, user, workspace } = yield* principalFor()
  const colleague = yield* principalFor({ workspaceId: workspace.id })
  const backlog = yield* BacklogItems
  const meetings = yield* Meetings
  const agenda = yield* AgendaItems
  const meeting = yield* meetings.create(principal, CreateMeeting.make({ title: "Planning" }))
  const add = (title: string, fields: Omit<ConstructorParameters<typeof CreateBacklogItem>[0], "title"> = {}, by: Principal = principal) =>
    backlog.create(by, CreateBacklogItem.make({ title, ...fields }))
  const assign = (id: BacklogItemId, meetingId: MeetingId = meeting.id, by: Principal = principal) =>
    backlog.assign(by, id, AssignBacklogItem.make({ destination_meeting_id: meetingId }))
  const open = (by: Principal = principal) => Effect.map(backlog.list(by, everything), (list) => list.items)
  const history = (by: Principal = principal) => Effect.map(backlog.history(by, everything), (list) => list.items)
  return { backlog, meetings, agenda, principal, user, workspace, colleague, meeting, add, assign, open, history }
})

/** The core on the in-memory store, except that AgendaItemStore.insert dies. */
const AgendaInsertDies = coreOver(
  Layer.effect(
    AgendaItemStore,
    Effect.map(AgendaItemStore, (store) => AgendaItemStore.of({ ...store, insert: () => Effect.die("the store broke inserting the agenda item") }))
  ).pipe(Layer.provideMerge(StoreMemory.layer))
)

describe("BacklogItems", () => {
  layer(CoreLive)((it) => {
    it.effect("create answers the open item with the caller's talking points and the presenters' details; list shows it", () =>
      Effect.gen(function*() {
        const { add, backlog, colleague, open, principal, user, workspace } = yield* setup
        const item = yield* add("Pricing page", {
          description: "What we charge",
          talking_points: ["cheaper", "simpler"],
          presenters: [colleague.user.id, user.id]
        })
        expect(item).toMatchObject({
          workspace_id: workspace.id,
          title: "Pricing page",
          description: "What we charge",
          talking_points: ["cheaper", "simpler"],
          presenters: [colleague.user.id, user.id],
          presenter_details: [
            { user_id: colleague.user.id, name: colleague.user.name, email: colleague.user.email },
            { user_id: user.id, name: user.name, email: user.email }
          ],
          status: "open",
          created_at: NOW,
          updated_at: NOW
        })
        expect(yield* backlog.get(principal, item.id)).toEqual(item)
        expect(yield* open()).toEqual([item])
        // Talking points are private: the colleague sees the item without them, and writes their own.
        expect((yield* backlog.get(colleague.principal, item.id)).talking_points).toEqual([])
        yield* backlog.update(colleague.principal, item.id, UpdateBacklogItem.make({ talking_points: ["theirs"] }))
        expect((yield* backlog.get(colleague.principal, item.id)).talking_points).toEqual(["theirs"])
        expect((yield* backlog.get(principal, item.id)).talking_points).toEqual(["cheaper", "simpler"])
      }))

    it.effect("the open list is oldest first, paged as every list, and belongs to the workspace: every member and its API key see it", () =>
      Effect.gen(function*() {
        const { add, backlog, colleague, open, principal, workspace } = yield* setup
        const first = yield* add("first")
        yield* TestClock.adjust("1 minute")
        const second = yield* add("second", {}, colleague.principal)
        yield* TestClock.adjust("1 minute")
        const third = yield* add("third")
        expect((yield* open()).map((item) => item.title)).toEqual(["first", "second", "third"])
        expect((yield* open(colleague.principal)).map((item) => item.id)).toEqual([first.id, second.id, third.id])
        const key = yield* apiKeyFor(workspace.id)
        expect((yield* open(key)).map((item) => item.id)).toEqual([first.id, second.id, third.id])
        expect(yield* backlog.list(principal, { limit: 2, offset: 1 })).toMatchObject({ total: 3, limit: 2, offset: 1 })
        expect((yield* backlog.list(principal, { limit: 2, offset: 1 })).items.map((item) => item.id)).toEqual([second.id, third.id])
        expect(yield* backlog.list(principal, { limit: 500, offset: -3 })).toMatchObject({ limit: 100, offset: 0, total: 3 })
        expect(yield* backlog.list(principal, {})).toMatchObject({ limit: 20, offset: 0 })
        // Another workspace sees none of it.
        const stranger = yield* principalFor()
        expect(yield* open(stranger.principal)).toEqual([])
        expect(yield* failureOf(backlog.get(stranger.principal, first.id))).toBe("NotFound")
        expect(yield* failureOf(backlog.update(stranger.principal, first.id, UpdateBacklogItem.make({ title: "x" })))).toBe("NotFound")
        expect(yield* failureOf(backlog.delete(stranger.principal, first.id))).toBe("NotFound")
        expect(yield* failureOf(backlog.assign(stranger.principal, first.id, AssignBacklogItem.make({ destination_meeting_id: MeetingId.make(crypto.randomUUID()) }))))
          .toBe("NotFound")
      }))

    it.effect("presenters must be users of the workspace: ValidationError naming presenters[i], on create and on update", () =>
      Effect.gen(function*() {
        const { add, backlog, colleague, open } = yield* setup
        const stranger = yield* principalFor()
        const refused = yield* Effect.flip(add("x", { presenters: [colleague.user.id, stranger.user.id] }))
        expect(refused).toMatchObject({ _tag: "ValidationError", field: "presenters[1]" })
        expect(refused.message).toContain(stranger.user.id)
        expect(yield* open()).toEqual([])
        const item = yield* add("y")
        const unknown = UserId.make(crypto.randomUUID())
        expect(yield* Effect.flip(backlog.update(colleague.principal, item.id, UpdateBacklogItem.make({ presenters: [unknown] }))))
          .toMatchObject({ _tag: "ValidationError", field: "presenters[0]" })
      }))

    it.effect("update changes only the fields given and bumps updated_at; description null clears it", () =>
      Effect.gen(function*() {
        const { add, backlog, colleague, principal } = yield* setup
        const item = yield* add("Before", { description: "kept?", presenters: [colleague.user.id], talking_points: ["mine"] })
        yield* TestClock.adjust("5 minutes")
        const renamed = yield* backlog.update(principal, item.id, UpdateBacklogItem.make({ title: "After" }))
        expect(renamed).toEqual({ ...item, title: "After", updated_at: DateTime.add(NOW, { minutes: 5 }) })
        const cleared = yield* backlog.update(principal, item.id, UpdateBacklogItem.make({ description: null, presenters: [], talking_points: [] }))
        expect(cleared).toMatchObject({ title: "After", description: null, presenters: [], presenter_details: [], talking_points: [], created_at: NOW })
        expect(yield* backlog.get(principal, item.id)).toEqual(cleared)
      }))

    it.effect("delete closes the item as deleted: it reads 404 and shows in the history with deleted_at; again is 404", () =>
      Effect.gen(function*() {
        const { add, backlog, history, open, principal } = yield* setup
        const item = yield* add("Doomed", { talking_points: ["note"] })
        const kept = yield* add("Kept")
        yield* TestClock.adjust("2 minutes")
        yield* backlog.delete(principal, item.id)
        const at = DateTime.add(NOW, { minutes: 2 })
        expect(yield* failureOf(backlog.get(principal, item.id))).toBe("NotFound")
        expect(yield* failureOf(backlog.update(principal, item.id, UpdateBacklogItem.make({ title: "x" })))).toBe("NotFound")
        expect(yield* failureOf(backlog.delete(principal, item.id))).toBe("NotFound")
        expect(yield* failureOf(backlog.delete(principal, BacklogItemId.make(crypto.randomUUID())))).toBe("NotFound")
        expect((yield* open()).map((i) => i.id)).toEqual([kept.id])
        expect(yield* history()).toEqual([{
          ...item,
          status: "deleted",
          updated_at: at,
          assigned_at: null,
          destination_meeting_id: null,
          deleted_at: at
        }])
        // Nothing to record: backlog_item.assigned is the backlog's one event.
        expect((yield* eventsOf(principal.workspace_id)).map((event) => event.type)).toEqual(["meeting.created"])
      }))

    it.effect("assign creates the agenda item appended on the meeting, carries title, description, presenters and everyone's talking points, and closes the item", () =>
      Effect.gen(function*() {
        const { add, agenda, assign, backlog, colleague, history, meeting, open, principal, workspace } = yield* setup
        yield* agenda.create(principal, CreateAgendaItem.make({ meeting_id: meeting.id, title: "Existing", sequence: Sequence.make("4.5") }))
        const item = yield* add("Pricing", { description: "What we charge", presenters: [colleague.user.id], talking_points: ["mine"] })
        yield* backlog.update(colleague.principal, item.id, UpdateBacklogItem.make({ talking_points: ["theirs"] }))
        const key = yield* apiKeyFor(workspace.id)
        yield* backlog.update(key, item.id, UpdateBacklogItem.make({ talking_points: ["the key's"] }))
        yield* TestClock.adjust("3 minutes")
        const at = DateTime.add(NOW, { minutes: 3 })

        const { agenda_item, backlog_item } = yield* assign(item.id)
        expect(agenda_item).toMatchObject({
          meeting_id: meeting.id,
          title: "Pricing",
          description: "What we charge",
          item_type: "DISCUSSION",
          sequence: "5",
          presenters: [colleague.user.id],
          presenter_details: [{ user_id: colleague.user.id, name: colleague.user.name }],
          talking_points: ["mine"],
          created_at: at
        })
        expect(yield* agenda.get(principal, agenda_item.id)).toEqual(agenda_item)
        // The colleague takes no part in the meeting (so cannot read the agenda item), but their notes moved with it.
        expect(new Map(yield* (yield* AgendaItemStore).talkingPoints([agenda_item.id], colleague.user.id)))
          .toEqual(new Map([[agenda_item.id, ["theirs"]]]))
        expect((yield* agenda.get(key, agenda_item.id)).talking_points).toEqual(["the key's"])

        const closed = {
          ...item,
          status: "assigned",
          updated_at: at,
          assigned_at: at,
          destination_meeting_id: meeting.id,
          deleted_at: null
        }
        expect(backlog_item).toEqual(closed)
        expect(yield* failureOf(backlog.get(principal, item.id))).toBe("NotFound")
        expect(yield* open()).toEqual([])
        expect(yield* history()).toEqual([closed])
        // Assigning it again, or deleting it: it is gone from the backlog.
        expect(yield* failureOf(assign(item.id))).toBe("NotFound")
        expect(yield* failureOf(backlog.delete(principal, item.id))).toBe("NotFound")
        expect((yield* agenda.list(principal, { meeting_id: meeting.id }, everything)).items.map((i) => i.title)).toEqual(["Existing", "Pricing"])
      }))

    it.effect("assign records agenda_item.created and backlog_item.assigned (the item without talking points, and the agenda item's id)", () =>
      Effect.gen(function*() {
        const { add, assign, meeting, principal, user } = yield* setup
        const item = yield* add("Evented", { talking_points: ["private"] })
        const { agenda_item } = yield* assign(item.id)
        const events = yield* eventsOf(principal.workspace_id)
        expect(events.map((event) => event.type)).toEqual(["meeting.created", "agenda_item.created", "backlog_item.assigned"])
        const [created, assigned] = events.slice(1)
        expect(created?.data).toMatchObject({ id: agenda_item.id, meeting_id: meeting.id, title: "Evented" })
        expect(assigned?.actor_user_id).toBe(user.id)
        expect(assigned?.data).toEqual({
          id: item.id,
          workspace_id: principal.workspace_id,
          title: "Evented",
          description: null,
          presenters: [],
          status: "assigned",
          created_at: "2026-03-02T09:00:00.000Z",
          updated_at: "2026-03-02T09:00:00.000Z",
          assigned_at: "2026-03-02T09:00:00.000Z",
          destination_meeting_id: meeting.id,
          deleted_at: null,
          agenda_item_id: agenda_item.id
        })
      }))

    it.effect("assign follows the agenda's rules on the destination: missing or invisible meeting 404, VIEWER 403, ended meeting 409; nothing changes", () =>
      Effect.gen(function*() {
        const { add, assign, backlog, colleague, meeting, meetings, open, principal, workspace } = yield* setup
        const item = yield* add("Waiting")
        const elsewhere = yield* meetings.create((yield* principalFor()).principal, CreateMeeting.make({ title: "Theirs" }))
        const colleagues = yield* meetings.create(colleague.principal, CreateMeeting.make({ title: "Colleague's" }))
        const viewed = yield* meetings.create(colleague.principal, CreateMeeting.make({ title: "Viewed" }))
        yield* (yield* Participants).add(
          colleague.principal,
          viewed.id,
          AddParticipants.make({ participants: [ParticipantEntry.make({ role: "VIEWER", user_id: principal.user_id! })] })
        )
        const ended = yield* meetings.create(principal, CreateMeeting.make({ title: "Over", is_instant: true }))
        yield* meetings.update(principal, ended.id, UpdateMeeting.make({ status: "ended" }))
        const before = yield* eventsOf(workspace.id)

        expect(yield* Effect.flip(assign(item.id, MeetingId.make(crypto.randomUUID())))).toMatchObject({ _tag: "NotFound", resource: "meeting" })
        expect(yield* Effect.flip(assign(item.id, elsewhere.id))).toMatchObject({ _tag: "NotFound", resource: "meeting" })
        // A MEMBER who takes no part in the meeting does not see it.
        expect(yield* Effect.flip(assign(item.id, colleagues.id))).toMatchObject({ _tag: "NotFound", resource: "meeting" })
        expect(yield* failureOf(assign(item.id, viewed.id))).toBe("InsufficientScope")
        expect(yield* failureOf(assign(item.id, ended.id))).toBe("Conflict")

        expect((yield* open()).map((i) => i.id)).toEqual([item.id])
        expect(yield* backlog.history(principal, everything)).toMatchObject({ items: [], total: 0 })
        expect(yield* eventsOf(workspace.id)).toEqual(before)
        for (const id of [colleagues.id, viewed.id, ended.id]) {
          expect(yield* (yield* AgendaItemStore).listByMeeting(workspace.id, id)).toEqual([])
        }
        // And the item can still go where the caller may write: their own meeting, or one they edit.
        expect((yield* assign(item.id, meeting.id)).agenda_item.meeting_id).toBe(meeting.id)
      }))

    it.effect("a workspace admin and the workspace API key may assign to any meeting of the workspace", () =>
      Effect.gen(function*() {
        const { add, assign, colleague, meetings, workspace } = yield* setup
        const theirs = yield* meetings.create(colleague.principal, CreateMeeting.make({ title: "Colleague's" }))
        const admin = yield* principalFor({ workspaceId: workspace.id, role: "ADMIN" })
        const key = yield* apiKeyFor(workspace.id)
        expect((yield* assign((yield* add("by admin")).id, theirs.id, admin.principal)).agenda_item.meeting_id).toBe(theirs.id)
        expect((yield* assign((yield* add("by key", {}, key)).id, theirs.id, key)).agenda_item.title).toBe("by key")
      }))

    it.effect("the history lists assigned and deleted items, most recently closed first", () =>
      Effect.gen(function*() {
        const { add, assign, backlog, history, meeting, principal } = yield* setup
        const a = yield* add("a")
        const b = yield* add("b")
        const c = yield* add("c")
        const d = yield* add("d")
        yield* TestClock.adjust("1 minute")
        yield* backlog.delete(principal, c.id)
        yield* TestClock.adjust("1 minute")
        yield* assign(a.id)
        yield* TestClock.adjust("1 minute")
        yield* backlog.delete(principal, b.id)
        const closed = yield* history()
        expect(closed.map((item) => [item.title, item.status])).toEqual([["b", "deleted"], ["a", "assigned"], ["c", "deleted"]])
        expect(closed[1]).toMatchObject({ destination_meeting_id: meeting.id, assigned_at: DateTime.add(NOW, { minutes: 2 }), deleted_at: null })
        expect((yield* backlog.list(principal, everything)).items.map((item) => item.id)).toEqual([d.id])
        expect(yield* backlog.history(principal, { limit: 1, offset: 1 })).toMatchObject({ total: 3, limit: 1, offset: 1 })
        expect((yield* backlog.history(principal, { limit: 1, offset: 1 })).items.map((item) => item.title)).toEqual(["a"])
      }))

    it.effect("scopes: meetings:read to read, meetings:write to change; 403 before anything is looked at", () =>
      Effect.gen(function*() {
        const { add, backlog, meeting, workspace } = yield* setup
        const item = yield* add("Scoped")
        const withScopes = (scopes: ReadonlyArray<Scope>) => Effect.map(principalFor({ workspaceId: workspace.id, scopes }), (p) => p.principal)
        const reader = yield* withScopes(["meetings:read"])
        const writerOnly = yield* withScopes(["meetings:write", "action-items:read"])
        expect((yield* backlog.list(reader, everything)).total).toBe(1)
        expect((yield* backlog.get(reader, item.id)).id).toBe(item.id)
        for (
          const refused of [
            backlog.create(reader, CreateBacklogItem.make({ title: "x" })),
            backlog.update(reader, item.id, UpdateBacklogItem.make({ title: "x" })),
            backlog.delete(reader, item.id),
            backlog.assign(reader, item.id, AssignBacklogItem.make({ destination_meeting_id: meeting.id })),
            backlog.list(writerOnly, everything),
            backlog.history(writerOnly, everything),
            backlog.get(writerOnly, item.id)
          ]
        ) {
          expect(yield* Effect.flip(refused)).toMatchObject({ _tag: "InsufficientScope" })
        }
        expect((yield* backlog.get(reader, item.id)).status).toBe("open")
      }))

    it.effect("deleting a user takes them out of the presenters and deletes their talking points, open and closed items alike", () =>
      Effect.gen(function*() {
        const { add, assign, backlog, colleague, history, principal } = yield* setup
        const open = yield* add("Open", { presenters: [colleague.user.id, principal.user_id!], talking_points: ["mine"] })
        const closed = yield* add("Closed", { presenters: [colleague.user.id] })
        yield* backlog.update(colleague.principal, open.id, UpdateBacklogItem.make({ talking_points: ["theirs"] }))
        yield* backlog.update(colleague.principal, closed.id, UpdateBacklogItem.make({ talking_points: ["theirs too"] }))
        yield* assign(closed.id)

        yield* (yield* Users).delete(colleague.user.id)
        expect(yield* backlog.get(principal, open.id)).toMatchObject({ presenters: [principal.user_id], talking_points: ["mine"] })
        expect((yield* history())[0]).toMatchObject({ id: closed.id, presenters: [] })
        const store = yield* BacklogItemStore
        expect((yield* store.talkingPoints([open.id, closed.id], colleague.user.id)).size).toBe(0)
        expect(new Map(yield* store.talkingPointsOfEveryone(open.id))).toEqual(new Map([[principal.user_id, ["mine"]]]))
      }))

    it.effect("deleting a workspace deletes its backlog, open and closed", () =>
      Effect.gen(function*() {
        const { add, assign, workspace } = yield* setup
        const open = yield* add("Open", { talking_points: ["x"] })
        const closed = yield* add("Closed")
        yield* assign(closed.id)
        yield* (yield* Workspaces).delete(workspace.id)
        const store = yield* BacklogItemStore
        expect(Option.isNone(yield* store.get(workspace.id, open.id))).toBe(true)
        expect(Option.isNone(yield* store.get(workspace.id, closed.id))).toBe(true)
        expect(yield* store.listClosed(workspace.id, { limit: 100, offset: 0 })).toEqual({ items: [], total: 0 })
        expect((yield* store.talkingPointsOfEveryone(open.id)).size).toBe(0)
      }))

    it.effect("every operation records its span: BacklogItems.<method>", () =>
      Effect.gen(function*() {
        const { add, backlog, meeting, principal } = yield* setup
        const item = yield* add("Traced")
        /** The first span the operation opens. */
        const firstSpan = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.map(spansOf(effect), ({ names }) => names[0])
        expect(yield* firstSpan(backlog.list(principal, everything))).toBe("BacklogItems.list")
        expect(yield* firstSpan(backlog.history(principal, everything))).toBe("BacklogItems.history")
        expect(yield* firstSpan(backlog.get(principal, item.id))).toBe("BacklogItems.get")
        expect(yield* firstSpan(backlog.create(principal, CreateBacklogItem.make({ title: "x" })))).toBe("BacklogItems.create")
        expect(yield* firstSpan(backlog.update(principal, item.id, UpdateBacklogItem.make({ title: "y" })))).toBe("BacklogItems.update")
        expect(yield* firstSpan(backlog.assign(principal, item.id, AssignBacklogItem.make({ destination_meeting_id: meeting.id }))))
          .toBe("BacklogItems.assign")
        expect(yield* firstSpan(backlog.delete(principal, item.id))).toBe("BacklogItems.delete")
      }))
  })

  layer(AgendaInsertDies)((it) => {
    it.effect("assign is one unit: when inserting the agenda item fails, the backlog item stays open and nothing is recorded", () =>
      Effect.gen(function*() {
        const { add, assign, backlog, history, meeting, open, principal, workspace } = yield* setup
        const item = yield* add("Stays", { talking_points: ["mine"] })
        const before = yield* eventsOf(workspace.id)
        const exit = yield* Effect.exit(assign(item.id))
        expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
        expect(yield* open()).toEqual([item])
        expect(yield* backlog.get(principal, item.id)).toEqual(item)
        expect(yield* history()).toEqual([])
        expect(yield* eventsOf(workspace.id)).toEqual(before)
        expect(yield* (yield* AgendaItemStore).listByMeeting(workspace.id, meeting.id)).toEqual([])
      }))
  })
})
