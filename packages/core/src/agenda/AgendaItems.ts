/**
 * Agenda items of meetings. A new item is appended after the meeting's last one unless it names its
 * `sequence`; an ended meeting takes no new items (409). Talking points are private: each caller reads and
 * writes only their own. Presenters are users of the workspace.
 */
import { Context, type DateTime, Effect, Layer, Option, Schema } from "effect"
import { requireScope, subjectOf } from "../identity/Access.js"
import type { Principal, User } from "../identity/Identity.js"
import { UserStore } from "../identity/IdentityStore.js"
import type { Meeting } from "../meetings/Meeting.js"
import { MeetingAccess } from "../meetings/MeetingAccess.js"
import type { TemplateAgendaItem } from "../meetings/Templates.js"
import { Events } from "../events/Events.js"
import { Crypto } from "../ports/Crypto.js"
import { Transactor } from "../ports/Transactor.js"
import { AgendaItemType } from "../shared/AgendaItemType.js"
import { Conflict, type InsufficientScope, NotFound, orNotFound } from "../shared/Errors.js"
import { AgendaItemId, MeetingId, UserId } from "../shared/Ids.js"
import { clamp, type PageRequest, toList } from "../shared/Pagination.js"
import { LongText, requestBody, Title } from "../shared/Text.js"
import { now } from "../shared/Time.js"
import { trusted } from "../shared/Trusted.js"
import {
  AgendaItem,
  AgendaItemRow,
  normalizeSequence,
  numbered,
  Sequence,
  sequenceAfter
} from "./AgendaItem.js"
import { AgendaItemReferences } from "./AgendaItemReferences.js"
import { AgendaItemStore } from "./AgendaItemStore.js"
import { presenterDetails, presentersOf } from "./Presenters.js"
import { fn } from "../shared/Span.js"

const TalkingPoints = Schema.Array(LongText(2000)).pipe(
  Schema.maxItems(50, { message: () => "must hold at most 50 talking points" })
)
const Presenters = Schema.Array(UserId).pipe(Schema.maxItems(50, { message: () => "must hold at most 50 presenters" }))

export class CreateAgendaItem extends Schema.Class<CreateAgendaItem>("CreateAgendaItem")({
  meeting_id: MeetingId,
  title: Title(500),
  description: Schema.optional(Schema.NullOr(LongText(10_000))),
  item_type: Schema.optional(AgendaItemType),
  sequence: Schema.optional(Sequence),
  talking_points: Schema.optional(TalkingPoints),
  presenters: Schema.optional(Presenters)
}, requestBody) {}

export class UpdateAgendaItem extends Schema.Class<UpdateAgendaItem>("UpdateAgendaItem")({
  title: Schema.optional(Title(500)),
  description: Schema.optional(Schema.NullOr(LongText(10_000))),
  item_type: Schema.optional(AgendaItemType),
  sequence: Schema.optional(Sequence),
  talking_points: Schema.optional(TalkingPoints),
  presenters: Schema.optional(Presenters)
}, requestBody) {}

/** The rows of a template's agenda on a new meeting: sequences 1, 2, ... in the template's order. */
export const agendaFromTemplate = (
  meeting: Meeting,
  agenda: ReadonlyArray<TemplateAgendaItem>
): Effect.Effect<ReadonlyArray<AgendaItemRow>, never, Crypto> =>
  Effect.flatMap(Crypto, (crypto) =>
    Effect.forEach(agenda, (item, index) =>
      Effect.map(crypto.randomUUID, (id) =>
        new AgendaItemRow({
          id: AgendaItemId.make(id),
          workspace_id: meeting.workspace_id,
          meeting_id: meeting.id,
          title: item.title,
          description: item.description,
          item_type: item.item_type,
          sequence: numbered(index),
          presenters: [],
          created_at: meeting.created_at,
          updated_at: meeting.created_at
        }))))

const make = Effect.gen(function*() {
  const store = yield* AgendaItemStore
  const references = yield* AgendaItemReferences
  const users = yield* UserStore
  const access = yield* MeetingAccess
  const crypto = yield* Crypto
  const transactor = yield* Transactor
  const events = yield* Events
  // The event carries the item as stored: without anyone's talking points, which are private to their writer.
  const recordItem = events.recordOf(AgendaItemRow)

  const { checkPresenters, peopleOf, viewOf } = presentersOf(users)

  /** A row as one caller sees it: their own talking points and the presenters' details. */
  const present = (
    row: AgendaItemRow,
    points: ReadonlyMap<AgendaItemId, ReadonlyArray<string>>,
    people: ReadonlyMap<string, User>
  ) =>
    new AgendaItem({
      ...row,
      talking_points: points.get(row.id) ?? [],
      presenter_details: presenterDetails(row.presenters, people)
    }, trusted)

  const view = viewOf(store.talkingPoints, present)

  const viewOne = (principal: Principal, row: AgendaItemRow) =>
    Effect.gen(function*() {
      const points = yield* store.talkingPoints([row.id], subjectOf(principal))
      return present(row, points, yield* peopleOf(principal.workspace_id, row.presenters))
    })

  /** The item, if the caller may see its meeting (another meeting's visibility answers 404 for the item). */
  const find = (principal: Principal, id: AgendaItemId, check: (meetingId: MeetingId) => Effect.Effect<Meeting, NotFound | InsufficientScope>) =>
    Effect.gen(function*() {
      const row = yield* store.get(principal.workspace_id, id).pipe(orNotFound("agenda item", id))
      yield* check(row.meeting_id).pipe(Effect.catchTag("NotFound", () => Effect.fail(NotFound.of("agenda item", id))))
      return row
    })

  /**
   * The sequence an appended item gets: the next whole number after the meeting's last item. When that would
   * leave the range, the meeting's items are first renumbered 1, 2, ... in their order (in the caller's
   * transaction), so appending never fails however large the sequences already are.
   */
  const appendSequence = (meeting: Meeting, at: DateTime.Utc) =>
    Effect.gen(function*() {
      const next = sequenceAfter(yield* store.lastSequence(meeting.workspace_id, meeting.id))
      if (Option.isSome(next)) return next.value
      const items = yield* store.listByMeeting(meeting.workspace_id, meeting.id)
      yield* Effect.forEach(
        items,
        (item, index) => store.update(new AgendaItemRow({ ...item, sequence: numbered(index), updated_at: at })),
        { discard: true }
      )
      return numbered(items.length)
    })

  const list = fn("AgendaItems.list")(function*(
    principal: Principal,
    filter: { readonly meeting_id?: MeetingId | undefined },
    request: PageRequest
  ) {
    yield* requireScope(principal, "meetings:read")
    const page = clamp(request)
    const meetingIds = filter.meeting_id === undefined
      ? yield* access.visibleMeetingIds(principal)
      : [(yield* access.readable(principal, filter.meeting_id)).id]
    const slice = yield* store.list(principal.workspace_id, { meetingIds }, page)
    return toList({ items: yield* view(principal, slice.items), total: slice.total }, page)
  })

  const get = fn("AgendaItems.get")(function*(principal: Principal, id: AgendaItemId) {
    yield* requireScope(principal, "meetings:read")
    const row = yield* find(principal, id, (meetingId) => access.readable(principal, meetingId))
    return yield* viewOne(principal, row)
  })

  const create = fn("AgendaItems.create")(function*(principal: Principal, input: CreateAgendaItem) {
    yield* requireScope(principal, "meetings:write")
    const meeting = yield* access.writable(principal, input.meeting_id)
    if (meeting.status === "ended") {
      return yield* Effect.fail(new Conflict({ message: "the meeting has ended and takes no new agenda items" }))
    }
    yield* checkPresenters(principal, input.presenters)
    const at = yield* now
    const id = AgendaItemId.make(yield* crypto.randomUUID)
    const row = yield* transactor.withTransaction(Effect.gen(function*() {
      const row = new AgendaItemRow({
        id,
        workspace_id: principal.workspace_id,
        meeting_id: meeting.id,
        title: input.title,
        description: input.description ?? null,
        item_type: input.item_type ?? "DISCUSSION",
        sequence: input.sequence === undefined ? yield* appendSequence(meeting, at) : normalizeSequence(input.sequence),
        presenters: input.presenters ?? [],
        created_at: at,
        updated_at: at
      })
      yield* store.insert(row)
      if (input.talking_points !== undefined) yield* store.setTalkingPoints(row.id, subjectOf(principal), input.talking_points)
      yield* recordItem(principal, "agenda_item.created", row)
      return row
    }))
    return yield* viewOne(principal, row)
  })

  /** Only the fields present change; an omitted `sequence` keeps the item where it is. */
  const update = fn("AgendaItems.update")(function*(principal: Principal, id: AgendaItemId, input: UpdateAgendaItem) {
    yield* requireScope(principal, "meetings:write")
    const current = yield* find(principal, id, (meetingId) => access.writable(principal, meetingId))
    yield* checkPresenters(principal, input.presenters)
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
      yield* recordItem(principal, "agenda_item.updated", next)
    }))
    return yield* viewOne(principal, next)
  })

  /** Deletes the item with its talking points; what pointed at it (action items) stays, pointing nowhere. */
  const remove = fn("AgendaItems.delete")(function*(principal: Principal, id: AgendaItemId) {
    yield* requireScope(principal, "meetings:write")
    const item = yield* find(principal, id, (meetingId) => access.writable(principal, meetingId))
    yield* transactor.withTransaction(Effect.gen(function*() {
      yield* references.detach(principal.workspace_id, id)
      yield* store.delete(principal.workspace_id, id)
      yield* events.record(principal, "agenda_item.deleted", { id, meeting_id: item.meeting_id, workspace_id: principal.workspace_id })
    }))
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
    AgendaItemStore | AgendaItemReferences | UserStore | MeetingAccess | Transactor | Crypto | Events
  > = Layer.effect(AgendaItems, make)
}
