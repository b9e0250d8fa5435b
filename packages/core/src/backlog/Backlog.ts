/**
 * The workspace's backlog: agenda items not attached to a meeting. Backlog items belong to the workspace, not to
 * a meeting, so every member of the workspace (and the workspace API key) reads them with meetings:read and
 * creates, changes, deletes and assigns them with meetings:write, whatever their role; no meeting role applies
 * until an item is assigned. As on agenda items, talking points are private (each caller reads and writes only
 * their own) and presenters are users of the workspace.
 *
 * Assigning an item creates an agenda item on the destination meeting through AgendaItems.create (its rules
 * whole: the caller must be allowed to change that meeting's agenda, an ended meeting takes no new item, the item
 * is appended) and closes the backlog item, in one unit of work with both events (agenda_item.created,
 * backlog_item.assigned): if any of it fails, nothing changes.
 */
import { Context, Effect, Layer, Schema } from "effect"
import { AgendaItems, CreateAgendaItem } from "../agenda/AgendaItems.js"
import { AgendaItemStore } from "../agenda/AgendaItemStore.js"
import { requireScope, subjectOf } from "../identity/Access.js"
import type { Principal, User } from "../identity/Identity.js"
import { UserStore } from "../identity/IdentityStore.js"
import { Events } from "../events/Events.js"
import { Crypto } from "../ports/Crypto.js"
import { Transactor } from "../ports/Transactor.js"
import { NotFound, orNotFound } from "../shared/Errors.js"
import { MeetingId, UserId } from "../shared/Ids.js"
import { clamp, type PageRequest, toList } from "../shared/Pagination.js"
import { LongText, requestBody, Title } from "../shared/Text.js"
import { now } from "../shared/Time.js"
import { trusted } from "../shared/Trusted.js"
import { BacklogAssignment, BacklogHistoryItem, BacklogItem, BacklogItemId, BacklogItemRow } from "./BacklogItem.js"
import { BacklogItemStore } from "./BacklogItemStore.js"
import { presenterDetails, presentersOf } from "../agenda/Presenters.js"
import { fn } from "../shared/Span.js"

// The limits of agenda items: an assigned item becomes one.
const TalkingPoints = Schema.Array(LongText(2000)).pipe(
  Schema.maxItems(50, { message: () => "must hold at most 50 talking points" })
)
const Presenters = Schema.Array(UserId).pipe(Schema.maxItems(50, { message: () => "must hold at most 50 presenters" }))

export class CreateBacklogItem extends Schema.Class<CreateBacklogItem>("CreateBacklogItem")({
  title: Title(500),
  description: Schema.optional(Schema.NullOr(LongText(10_000))),
  talking_points: Schema.optional(TalkingPoints),
  presenters: Schema.optional(Presenters)
}, requestBody) {}

export class UpdateBacklogItem extends Schema.Class<UpdateBacklogItem>("UpdateBacklogItem")({
  title: Schema.optional(Title(500)),
  description: Schema.optional(Schema.NullOr(LongText(10_000))),
  talking_points: Schema.optional(TalkingPoints),
  presenters: Schema.optional(Presenters)
}, requestBody) {}

export class AssignBacklogItem extends Schema.Class<AssignBacklogItem>("AssignBacklogItem")({
  destination_meeting_id: MeetingId
}, requestBody) {}

const make = Effect.gen(function*() {
  const store = yield* BacklogItemStore
  const agenda = yield* AgendaItems
  const agendaStore = yield* AgendaItemStore
  const users = yield* UserStore
  const crypto = yield* Crypto
  const transactor = yield* Transactor
  const events = yield* Events

  const { checkPresenters, viewOf } = presentersOf(users)

  /** A row as one caller sees it (an open item, or a closed one in the history). */
  const present = (
    row: BacklogItemRow,
    points: ReadonlyMap<BacklogItemId, ReadonlyArray<string>>,
    people: ReadonlyMap<string, User>
  ) => {
    const shown = {
      id: row.id,
      workspace_id: row.workspace_id,
      title: row.title,
      description: row.description,
      talking_points: points.get(row.id) ?? [],
      presenters: row.presenters,
      presenter_details: presenterDetails(row.presenters, people),
      status: row.status,
      created_at: row.created_at,
      updated_at: row.updated_at
    }
    return {
      open: () => new BacklogItem(shown, trusted),
      closed: () =>
        new BacklogHistoryItem({
          ...shown,
          assigned_at: row.assigned_at,
          destination_meeting_id: row.destination_meeting_id,
          deleted_at: row.deleted_at
        }, trusted)
    }
  }

  const presentAll = viewOf(store.talkingPoints, present)

  const presentOne = (principal: Principal, row: BacklogItemRow) => Effect.map(presentAll(principal, [row]), (all) => all[0]!)

  /** The open item: a closed one (assigned or deleted) answers 404 like a missing one. */
  const findOpen = (principal: Principal, id: BacklogItemId) =>
    Effect.gen(function*() {
      const row = yield* store.get(principal.workspace_id, id).pipe(orNotFound("backlog item", id))
      if (row.status !== "open") return yield* Effect.fail(NotFound.of("backlog item", id))
      return row
    })

  /** Writes `next` over the open item, or fails NotFound when it was closed meanwhile. */
  const replaceOpen = (next: BacklogItemRow) =>
    Effect.flatMap(
      store.update(next),
      (replaced) => replaced ? Effect.void : Effect.fail(NotFound.of("backlog item", next.id))
    )

  const list = fn("BacklogItems.list")(function*(principal: Principal, request: PageRequest) {
    yield* requireScope(principal, "meetings:read")
    const page = clamp(request)
    const slice = yield* store.listOpen(principal.workspace_id, page)
    const items = (yield* presentAll(principal, slice.items)).map((shown) => shown.open())
    return toList({ items, total: slice.total }, page)
  })

  const history = fn("BacklogItems.history")(function*(principal: Principal, request: PageRequest) {
    yield* requireScope(principal, "meetings:read")
    const page = clamp(request)
    const slice = yield* store.listClosed(principal.workspace_id, page)
    const items = (yield* presentAll(principal, slice.items)).map((shown) => shown.closed())
    return toList({ items, total: slice.total }, page)
  })

  const get = fn("BacklogItems.get")(function*(principal: Principal, id: BacklogItemId) {
    yield* requireScope(principal, "meetings:read")
    const row = yield* findOpen(principal, id)
    return (yield* presentOne(principal, row)).open()
  })

  const create = fn("BacklogItems.create")(function*(principal: Principal, input: CreateBacklogItem) {
    yield* requireScope(principal, "meetings:write")
    yield* checkPresenters(principal, input.presenters)
    const at = yield* now
    const row = new BacklogItemRow({
      id: BacklogItemId.make(yield* crypto.randomUUID),
      workspace_id: principal.workspace_id,
      title: input.title,
      description: input.description ?? null,
      presenters: input.presenters ?? [],
      status: "open",
      created_at: at,
      updated_at: at,
      assigned_at: null,
      destination_meeting_id: null,
      deleted_at: null
    })
    yield* transactor.withTransaction(Effect.gen(function*() {
      yield* store.insert(row)
      if (input.talking_points !== undefined) yield* store.setTalkingPoints(row.id, subjectOf(principal), input.talking_points)
    }))
    return (yield* presentOne(principal, row)).open()
  })

  /** Only the fields present change; `talking_points` replaces the caller's own. */
  const update = fn("BacklogItems.update")(function*(principal: Principal, id: BacklogItemId, input: UpdateBacklogItem) {
    yield* requireScope(principal, "meetings:write")
    const current = yield* findOpen(principal, id)
    yield* checkPresenters(principal, input.presenters)
    const next = new BacklogItemRow({
      ...current,
      title: input.title ?? current.title,
      description: input.description === undefined ? current.description : input.description,
      presenters: input.presenters ?? current.presenters,
      updated_at: yield* now
    })
    yield* transactor.withTransaction(Effect.gen(function*() {
      yield* replaceOpen(next)
      if (input.talking_points !== undefined) yield* store.setTalkingPoints(id, subjectOf(principal), input.talking_points)
    }))
    return (yield* presentOne(principal, next)).open()
  })

  /** Closes the item as `deleted`: it leaves the backlog and shows in the history; deleting it again is 404. */
  const remove = fn("BacklogItems.delete")(function*(principal: Principal, id: BacklogItemId) {
    yield* requireScope(principal, "meetings:write")
    const current = yield* findOpen(principal, id)
    const at = yield* now
    yield* replaceOpen(new BacklogItemRow({ ...current, status: "deleted", deleted_at: at, updated_at: at }))
  })

  /**
   * Creates the agenda item on the destination meeting (as AgendaItems.create does: access, ended meeting,
   * appended sequence, agenda_item.created) carrying the title, description and presenters, and everyone's
   * talking points (each stays private to its writer), then closes the backlog item as `assigned` and records
   * backlog_item.assigned: all in one unit of work. The item is closed first, so that of two assignments racing
   * on one item the second finds it closed (404) before it creates anything.
   */
  const assign = fn("BacklogItems.assign")(function*(principal: Principal, id: BacklogItemId, input: AssignBacklogItem) {
    yield* requireScope(principal, "meetings:write")
    return yield* transactor.withTransaction(Effect.gen(function*() {
      const current = yield* findOpen(principal, id)
      const at = yield* now
      const closed = new BacklogItemRow({
        ...current,
        status: "assigned",
        assigned_at: at,
        destination_meeting_id: input.destination_meeting_id,
        updated_at: at
      })
      yield* replaceOpen(closed)
      const points = yield* store.talkingPointsOfEveryone(id)
      const subject = subjectOf(principal)
      const own = points.get(subject)
      const agendaItem = yield* agenda.create(
        principal,
        CreateAgendaItem.make({
          meeting_id: input.destination_meeting_id,
          title: current.title,
          description: current.description,
          presenters: current.presenters,
          ...(own === undefined ? {} : { talking_points: own })
        })
      )
      for (const [writer, theirs] of points) {
        if (writer !== subject) yield* agendaStore.setTalkingPoints(agendaItem.id, writer, theirs)
      }
      // The event carries the item as stored (without anyone's talking points) and the agenda item it became.
      const data = yield* Effect.orDie(Schema.encode(BacklogItemRow)(closed))
      yield* events.record(principal, "backlog_item.assigned", { ...data, agenda_item_id: agendaItem.id })
      const backlogItem = (yield* presentOne(principal, closed)).closed()
      return new BacklogAssignment({ agenda_item: agendaItem, backlog_item: backlogItem }, trusted)
    }))
  })

  return { list, history, get, create, update, delete: remove, assign } as const
})

export class BacklogItems extends Context.Tag("@convene/core/BacklogItems")<
  BacklogItems,
  Effect.Effect.Success<typeof make>
>() {
  static readonly layer: Layer.Layer<
    BacklogItems,
    never,
    BacklogItemStore | AgendaItems | AgendaItemStore | UserStore | Transactor | Crypto | Events
  > = Layer.effect(BacklogItems, make)
}
