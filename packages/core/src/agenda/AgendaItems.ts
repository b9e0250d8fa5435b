/**
 * Agenda items of meetings. A new item is appended after the meeting's last one unless it names its
 * `sequence`; an ended meeting takes no new items (409). Talking points are private: each caller reads and
 * writes only their own.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { requireScope, subjectOf } from "../identity/Access.js"
import type { Principal } from "../identity/Identity.js"
import { UserStore } from "../identity/IdentityStore.js"
import { MeetingAccess } from "../meetings/MeetingAccess.js"
import { Crypto } from "../shared/Crypto.js"
import { Conflict, NotFound } from "../shared/Errors.js"
import { AgendaItemId, MeetingId, UserId } from "../shared/Ids.js"
import { clamp, type PageRequest, toList } from "../shared/Pagination.js"
import { LongText, Title } from "../shared/Text.js"
import { now } from "../shared/Time.js"
import { trusted } from "../shared/Trusted.js"
import { Transactor } from "../shared/Transactor.js"
import { AgendaItem, AgendaItemRow, AgendaItemType, normalizeSequence, PresenterDetail, Sequence, sequenceAfter } from "./AgendaItem.js"
import { AgendaItemStore } from "./AgendaItemStore.js"

const TalkingPoints = Schema.Array(LongText(2000)).pipe(
  Schema.maxItems(50, { message: () => "must hold at most 50 talking points" })
)
const Presenters = Schema.Array(Schema.UUID).pipe(Schema.maxItems(50, { message: () => "must hold at most 50 presenters" }))

export class CreateAgendaItem extends Schema.Class<CreateAgendaItem>("CreateAgendaItem")({
  meeting_id: MeetingId,
  title: Title(500),
  description: Schema.optional(Schema.NullOr(LongText(10_000))),
  item_type: Schema.optional(AgendaItemType),
  sequence: Schema.optional(Sequence),
  talking_points: Schema.optional(TalkingPoints),
  presenters: Schema.optional(Presenters)
}) {}

export class UpdateAgendaItem extends Schema.Class<UpdateAgendaItem>("UpdateAgendaItem")({
  title: Schema.optional(Title(500)),
  description: Schema.optional(Schema.NullOr(LongText(10_000))),
  item_type: Schema.optional(AgendaItemType),
  sequence: Schema.optional(Sequence),
  talking_points: Schema.optional(TalkingPoints),
  presenters: Schema.optional(Presenters)
}) {}

const make = Effect.gen(function*() {
  const store = yield* AgendaItemStore
  const users = yield* UserStore
  const access = yield* MeetingAccess
  const crypto = yield* Crypto
  const transactor = yield* Transactor

  /** Rows as one caller sees them: their own talking points and the presenters' details. */
  const view = (principal: Principal, rows: ReadonlyArray<AgendaItemRow>) =>
    Effect.gen(function*() {
      if (rows.length === 0) return []
      const points = yield* store.talkingPoints(rows.map((row) => row.id), subjectOf(principal))
      const presenterIds = [...new Set(rows.flatMap((row) => row.presenters))]
      const people = presenterIds.length === 0
        ? []
        : yield* users.getMany(principal.workspace_id, presenterIds.map((id) => UserId.make(id)))
      const byId = new Map(people.map((user) => [user.id as string, user]))
      return rows.map((row) =>
        new AgendaItem({
          ...row,
          talking_points: points.get(row.id) ?? [],
          presenter_details: row.presenters.map((id) => {
            const user = byId.get(id)
            return user === undefined
              ? new PresenterDetail({ user_id: id }, trusted)
              : new PresenterDetail({ user_id: id, name: user.name, email: user.email }, trusted)
          })
        }, trusted)
      )
    })

  const find = (principal: Principal, id: AgendaItemId) =>
    store.get(principal.workspace_id, id).pipe(
      Effect.flatMap(Option.match({ onNone: () => Effect.fail(NotFound.of("agenda item", id)), onSome: Effect.succeed }))
    )

  const list = Effect.fn("AgendaItems.list")(function*(
    principal: Principal,
    filter: { readonly meeting_id?: MeetingId | undefined },
    request: PageRequest
  ) {
    yield* requireScope(principal, "meetings:read")
    if (filter.meeting_id !== undefined) yield* access.readable(principal, filter.meeting_id)
    const page = clamp(request)
    const slice = yield* store.list(
      principal.workspace_id,
      { meetingId: filter.meeting_id, visibleTo: access.visibleTo(principal) },
      page
    )
    return toList({ items: yield* view(principal, slice.items), total: slice.total }, page)
  })

  const get = Effect.fn("AgendaItems.get")(function*(principal: Principal, id: AgendaItemId) {
    yield* requireScope(principal, "meetings:read")
    const row = yield* find(principal, id)
    yield* access.readable(principal, row.meeting_id).pipe(Effect.mapError(() => NotFound.of("agenda item", id)))
    const [item] = yield* view(principal, [row])
    return item!
  })

  const create = Effect.fn("AgendaItems.create")(function*(principal: Principal, input: CreateAgendaItem) {
    yield* requireScope(principal, "meetings:write")
    const meeting = yield* access.writable(principal, input.meeting_id)
    if (meeting.status === "ended") {
      return yield* Effect.fail(new Conflict({ message: "the meeting has ended and takes no new agenda items" }))
    }
    const at = yield* now
    const sequence = input.sequence === undefined
      ? sequenceAfter(yield* store.lastSequence(principal.workspace_id, meeting.id))
      : normalizeSequence(input.sequence)
    const row = new AgendaItemRow({
      id: AgendaItemId.make(yield* crypto.randomUUID),
      workspace_id: principal.workspace_id,
      meeting_id: meeting.id,
      title: input.title,
      description: input.description ?? null,
      item_type: input.item_type ?? "DISCUSSION",
      sequence,
      presenters: input.presenters ?? [],
      created_at: at,
      updated_at: at
    })
    yield* transactor.withTransaction(Effect.gen(function*() {
      yield* store.insert(row)
      if (input.talking_points !== undefined && input.talking_points.length > 0) {
        yield* store.setTalkingPoints(row.id, subjectOf(principal), input.talking_points)
      }
    }))
    const [item] = yield* view(principal, [row])
    return item!
  })

  /** Only the fields present change; an omitted `sequence` keeps the item where it is. */
  const update = Effect.fn("AgendaItems.update")(function*(principal: Principal, id: AgendaItemId, input: UpdateAgendaItem) {
    yield* requireScope(principal, "meetings:write")
    const current = yield* find(principal, id)
    yield* access.writable(principal, current.meeting_id).pipe(
      Effect.catchTag("NotFound", () => Effect.fail(NotFound.of("agenda item", id)))
    )
    const next = new AgendaItemRow({
      ...current,
      title: input.title ?? current.title,
      description: input.description === undefined ? current.description : input.description,
      item_type: input.item_type ?? current.item_type,
      sequence: input.sequence === undefined ? current.sequence : normalizeSequence(input.sequence),
      presenters: input.presenters ?? current.presenters,
      updated_at: yield* now
    })
    yield* transactor.withTransaction(Effect.gen(function*() {
      yield* store.update(next)
      if (input.talking_points !== undefined) {
        yield* store.setTalkingPoints(id, subjectOf(principal), input.talking_points)
      }
    }))
    const [item] = yield* view(principal, [next])
    return item!
  })

  const remove = Effect.fn("AgendaItems.delete")(function*(principal: Principal, id: AgendaItemId) {
    yield* requireScope(principal, "meetings:write")
    const current = yield* find(principal, id)
    yield* access.writable(principal, current.meeting_id).pipe(
      Effect.catchTag("NotFound", () => Effect.fail(NotFound.of("agenda item", id)))
    )
    yield* store.delete(principal.workspace_id, id)
  })

  return { list, get, create, update, delete: remove } as const
})

export class AgendaItems extends Context.Tag("@convene/core/AgendaItems")<
  AgendaItems,
  Effect.Effect.Success<typeof make>
>() {
  static readonly layer: Layer.Layer<
    AgendaItems,
    never,
    AgendaItemStore | UserStore | MeetingAccess | Transactor | Crypto
  > = Layer
    .effect(AgendaItems, make)
}
