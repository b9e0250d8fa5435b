/**
 * Action items of meetings. Status changes follow the machine in ActionItem.ts (409 otherwise); moving to
 * `completed` sets is_completed and completed_at, leaving it clears both. Anyone who can see the meeting
 * (VIEWERs too: action items are often theirs) works on its action items, given the action-items scopes.
 *
 * An embedding host that keeps action items in step with an external to-do provider reports a completion made there
 * with `reconcileCompletion`: the item is completed without a user (the event's actor is none), and its event is
 * marked as reconciled from the provider, so partner apps are told `action_item.updated` only, never
 * `action_item.completed` (partner-api.md "Events"; partner/PartnerEvents.ts).
 */
import { Context, Effect, Layer, Option, ParseResult, Schema } from "effect"
import { AgendaItemStore } from "../agenda/AgendaItemStore.js"
import { requireScope } from "../identity/Access.js"
import type { Principal } from "../identity/Identity.js"
import { UserStore } from "../identity/IdentityStore.js"
import { MeetingAccess } from "../meetings/MeetingAccess.js"
import { Events } from "../events/Events.js"
import { Crypto } from "../ports/Crypto.js"
import { Transactor } from "../ports/Transactor.js"
import { Conflict, NotFound, orNotFound, ValidationError } from "../shared/Errors.js"
import { ActionItemId, AgendaItemId, MeetingId, UserId, type WorkspaceId } from "../shared/Ids.js"
import { clamp, type PageRequest, toList } from "../shared/Pagination.js"
import { LongText, requestBody, Title } from "../shared/Text.js"
import { CalendarDate, now } from "../shared/Time.js"
import { ActionItem, ActionItemStatus, canMove } from "./ActionItem.js"
import { ActionItemStore } from "./ActionItemStore.js"
import { fn } from "../shared/Span.js"
import { validated } from "../shared/Trusted.js"

export class CreateActionItem extends Schema.Class<CreateActionItem>("CreateActionItem")({
  meeting_id: MeetingId,
  title: Title(500),
  description: Schema.optional(Schema.NullOr(LongText(10_000))),
  due_date: Schema.optional(Schema.NullOr(CalendarDate)),
  status: Schema.optional(ActionItemStatus),
  assigned_to_user_id: Schema.optional(Schema.NullOr(UserId)),
  agenda_item_id: Schema.optional(Schema.NullOr(AgendaItemId))
}, requestBody) {}

export class UpdateActionItem extends Schema.Class<UpdateActionItem>("UpdateActionItem")({
  title: Schema.optional(Title(500)),
  description: Schema.optional(Schema.NullOr(LongText(10_000))),
  due_date: Schema.optional(Schema.NullOr(CalendarDate)),
  status: Schema.optional(ActionItemStatus),
  assigned_to_user_id: Schema.optional(Schema.NullOr(UserId)),
  agenda_item_id: Schema.optional(Schema.NullOr(AgendaItemId))
}, requestBody) {}

/** The name of an external to-do provider, as `reconcileCompletion` takes it. */
const ProviderName = Title(100)

const make = Effect.gen(function*() {
  const store = yield* ActionItemStore
  const agenda = yield* AgendaItemStore
  const users = yield* UserStore
  const access = yield* MeetingAccess
  const crypto = yield* Crypto
  const transactor = yield* Transactor
  const events = yield* Events
  const recordItem = events.recordOf(ActionItem)

  const find = (principal: Principal, id: ActionItemId) =>
    Effect.gen(function*() {
      const item = yield* store.get(principal.workspace_id, id).pipe(orNotFound("action item", id))
      yield* access.readable(principal, item.meeting_id).pipe(Effect.mapError(() => NotFound.of("action item", id)))
      return item
    })

  /** The assignee must be a user of the workspace; the agenda item must be on the same meeting. */
  const checkReferences = (
    principal: Principal,
    meetingId: MeetingId,
    assignee: UserId | null,
    agendaItemId: AgendaItemId | null
  ) =>
    Effect.gen(function*() {
      if (assignee !== null && (yield* users.getMany(principal.workspace_id, [assignee])).length === 0) {
        return yield* Effect.fail(new NotFound({
          resource: "user",
          id: assignee,
          message: `assigned_to_user_id: user ${assignee} was not found in this workspace`
        }))
      }
      if (agendaItemId !== null) {
        const item = yield* agenda.get(principal.workspace_id, agendaItemId)
        if (Option.isNone(item)) {
          return yield* Effect.fail(new NotFound({
            resource: "agenda item",
            id: agendaItemId,
            message: `agenda_item_id: agenda item ${agendaItemId} was not found`
          }))
        }
        if (item.value.meeting_id !== meetingId) {
          return yield* Effect.fail(ValidationError.of("agenda_item_id", "belongs to another meeting"))
        }
      }
    })

  const list = fn("ActionItems.list")(function*(
    principal: Principal,
    filter: { readonly meeting_id?: MeetingId | undefined; readonly status?: ActionItemStatus | undefined },
    request: PageRequest
  ) {
    yield* requireScope(principal, "action-items:read")
    const page = clamp(request)
    const meetingIds = filter.meeting_id === undefined
      ? yield* access.visibleMeetingIds(principal)
      : [(yield* access.readable(principal, filter.meeting_id)).id]
    const slice = yield* store.list(principal.workspace_id, { meetingIds, status: filter.status }, page)
    return toList(slice, page)
  })

  const get = fn("ActionItems.get")(function*(principal: Principal, id: ActionItemId) {
    yield* requireScope(principal, "action-items:read")
    return yield* find(principal, id)
  })

  const create = fn("ActionItems.create")(function*(principal: Principal, input: CreateActionItem) {
    yield* requireScope(principal, "action-items:write")
    const meeting = yield* access.readable(principal, input.meeting_id)
    const assignee = input.assigned_to_user_id ?? null
    const agendaItemId = input.agenda_item_id ?? null
    yield* checkReferences(principal, meeting.id, assignee, agendaItemId)
    const at = yield* now
    const status = input.status ?? "needs_review"
    const item = validated(ActionItem, {
      id: ActionItemId.make(yield* crypto.randomUUID),
      workspace_id: principal.workspace_id,
      meeting_id: meeting.id,
      agenda_item_id: agendaItemId,
      assigned_to_user_id: assignee,
      title: input.title,
      description: input.description ?? null,
      due_date: input.due_date ?? null,
      status,
      is_completed: status === "completed",
      completed_at: status === "completed" ? at : null,
      created_at: at,
      updated_at: at
    })
    yield* transactor.withTransaction(Effect.zipRight(store.insert(item), recordItem(principal, "action_item.created", item)))
    return item
  })

  const update = fn("ActionItems.update")(function*(principal: Principal, id: ActionItemId, input: UpdateActionItem) {
    yield* requireScope(principal, "action-items:write")
    const current = yield* find(principal, id)
    const status = input.status ?? current.status
    if (!canMove(current.status, status)) {
      return yield* Effect.fail(new Conflict({ message: `an action item cannot go from ${current.status} to ${status}` }))
    }
    const assignee = input.assigned_to_user_id === undefined ? current.assigned_to_user_id : input.assigned_to_user_id
    const agendaItemId = input.agenda_item_id === undefined ? current.agenda_item_id : input.agenda_item_id
    yield* checkReferences(
      principal,
      current.meeting_id,
      input.assigned_to_user_id === undefined ? null : assignee,
      input.agenda_item_id === undefined ? null : agendaItemId
    )
    const at = yield* now
    const completedNow = status === "completed"
    const next = validated(ActionItem, {
      ...current,
      title: input.title ?? current.title,
      description: input.description === undefined ? current.description : input.description,
      due_date: input.due_date === undefined ? current.due_date : input.due_date,
      assigned_to_user_id: assignee,
      agenda_item_id: agendaItemId,
      status,
      is_completed: completedNow,
      completed_at: completedNow ? current.completed_at ?? at : null,
      updated_at: at
    })
    // Completing an item is action_item.completed; every other change action_item.updated (one event per change).
    const completed = completedNow && current.status !== "completed"
    yield* transactor.withTransaction(Effect.zipRight(
      store.update(next),
      recordItem(principal, completed ? "action_item.completed" : "action_item.updated", next)
    ))
    return next
  })

  const remove = fn("ActionItems.delete")(function*(principal: Principal, id: ActionItemId) {
    yield* requireScope(principal, "action-items:write")
    const item = yield* find(principal, id)
    yield* transactor.withTransaction(Effect.zipRight(
      store.delete(principal.workspace_id, id),
      events.record(principal, "action_item.deleted", { id, meeting_id: item.meeting_id, workspace_id: principal.workspace_id })
    ))
  })

  /**
   * The item was completed in the external to-do provider `provider` (its name, 1 to 100 characters, as partner
   * apps are told it): completes it as the status machine allows (Conflict otherwise: accept or start it first),
   * with no user, and records `action_item.completed` marked as reconciled from the provider. An item completed
   * already is answered as it is, and nothing is recorded (reporting a completion twice tells nobody twice).
   */
  const reconcileCompletion = fn("ActionItems.reconcileCompletion")(function*(
    workspaceId: WorkspaceId,
    id: ActionItemId,
    provider: string
  ) {
    const name = yield* Schema.decodeUnknown(ProviderName)(provider).pipe(
      Effect.mapError((invalid) => ValidationError.of("provider", ParseResult.TreeFormatter.formatErrorSync(invalid)))
    )
    const current = yield* store.get(workspaceId, id).pipe(orNotFound("action item", id))
    if (current.status === "completed") return current
    if (!canMove(current.status, "completed")) {
      return yield* Effect.fail(new Conflict({ message: `an action item cannot go from ${current.status} to completed` }))
    }
    const at = yield* now
    const next = validated(ActionItem, {
      ...current,
      status: "completed",
      is_completed: true,
      completed_at: at,
      updated_at: at
    })
    yield* transactor.withTransaction(Effect.zipRight(
      store.update(next),
      recordItem({ workspace_id: workspaceId, user_id: null }, "action_item.completed", next, {
        _tag: "ProviderReconciliation",
        provider: name
      })
    ))
    return next
  })

  return { list, get, create, update, delete: remove, reconcileCompletion } as const
})

export class ActionItems extends Context.Tag("@convene/core/ActionItems")<
  ActionItems,
  Effect.Effect.Success<typeof make>
>() {
  static readonly layer: Layer.Layer<
    ActionItems,
    never,
    ActionItemStore | AgendaItemStore | UserStore | MeetingAccess | Crypto | Transactor | Events
  > = Layer.effect(ActionItems, make)
}
