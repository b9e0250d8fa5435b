/**
 * A meeting's participants. Adding someone already on the meeting is a no-op for that entry; the owner can
 * be neither removed nor demoted; a participant is addressed by user id (or, for a guest, participant id).
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { requireScope } from "../identity/Access.js"
import type { Principal, User } from "../identity/Identity.js"
import { UserStore } from "../identity/IdentityStore.js"
import { Events } from "../events/Events.js"
import { Crypto } from "../ports/Crypto.js"
import { Transactor } from "../ports/Transactor.js"
import { Conflict, NotFound, ValidationError } from "../shared/Errors.js"
import { type MeetingId, ParticipantId, UserId } from "../shared/Ids.js"
import { clamp, type PageRequest, sliceOf, toList } from "../shared/Pagination.js"
import { Email, requestBody } from "../shared/Text.js"
import { now } from "../shared/Time.js"
import { trusted } from "../shared/Trusted.js"
import { Participant, ParticipantRow } from "./Meeting.js"
import { MeetingAccess } from "./MeetingAccess.js"
import { MeetingStore } from "./MeetingStore.js"
import { fn } from "../shared/Span.js"

export const AssignableRole = Schema.Literal("EDITOR", "VIEWER").annotations({ identifier: "AssignableRole" })
export type AssignableRole = typeof AssignableRole.Type

export class ParticipantEntry extends Schema.Class<ParticipantEntry>("ParticipantEntry")({
  role: AssignableRole,
  user_id: Schema.optional(UserId),
  guest_email: Schema.optional(Email)
}, requestBody) {}

export class AddParticipants extends Schema.Class<AddParticipants>("AddParticipants")({
  participants: Schema.Array(ParticipantEntry).pipe(
    Schema.minItems(1, { message: () => "must hold at least one participant" }),
    Schema.maxItems(100, { message: () => "must hold at most 100 participants" })
  )
}, requestBody) {}

export class ChangeRole extends Schema.Class<ChangeRole>("ChangeRole")({
  role: AssignableRole
}, requestBody) {}

const make = Effect.gen(function*() {
  const store = yield* MeetingStore
  const users = yield* UserStore
  const access = yield* MeetingAccess
  const crypto = yield* Crypto
  const transactor = yield* Transactor
  const events = yield* Events
  const recordParticipant = events.recordOf(ParticipantRow)

  /** Rows as the API shows them: names and e-mails from the current user records. */
  /** The current user records of the rows' users, by id. */
  const peopleOf = (principal: Principal, rows: ReadonlyArray<ParticipantRow>) =>
    Effect.gen(function*() {
      const ids = rows.flatMap((row) => (row.user_id === null ? [] : [row.user_id]))
      const people = ids.length === 0 ? [] : yield* users.getMany(principal.workspace_id, ids)
      return new Map<string, User>(people.map((user) => [user.id, user]))
    })

  /** A row as the API shows it: name and e-mail from the current user record (or the guest address). */
  const present = (row: ParticipantRow, people: ReadonlyMap<string, User>) => {
    const user = row.user_id === null ? undefined : people.get(row.user_id)
    const email = user?.email ?? row.guest_email ?? ""
    return new Participant({
      id: row.id,
      meeting_id: row.meeting_id,
      user_id: row.user_id,
      name: user?.name ?? email,
      email,
      role: row.role,
      is_attended: row.is_attended,
      created_at: row.created_at,
      updated_at: row.updated_at
    }, trusted)
  }

  const view = (principal: Principal, rows: ReadonlyArray<ParticipantRow>) =>
    Effect.map(peopleOf(principal, rows), (people) => rows.map((row) => present(row, people)))

  const viewOne = (principal: Principal, row: ParticipantRow) =>
    Effect.map(peopleOf(principal, [row]), (people) => present(row, people))

  const list = fn("Participants.list")(function*(principal: Principal, meetingId: MeetingId, request: PageRequest) {
    yield* requireScope(principal, "meetings:read")
    yield* access.readable(principal, meetingId)
    const page = clamp(request)
    const slice = sliceOf(yield* store.listParticipants(principal.workspace_id, meetingId), page)
    return toList({ items: yield* view(principal, slice.items), total: slice.total }, page)
  })

  const add = fn("Participants.add")(function*(principal: Principal, meetingId: MeetingId, input: AddParticipants) {
    yield* requireScope(principal, "meetings:write")
    yield* access.writable(principal, meetingId)
    const entries = input.participants
    for (const [index, entry] of entries.entries()) {
      if ((entry.user_id === undefined) === (entry.guest_email === undefined)) {
        return yield* Effect.fail(
          ValidationError.of(`participants[${index}]`, "give exactly one of user_id and guest_email")
        )
      }
    }
    const userIds = entries.flatMap((entry) => (entry.user_id === undefined ? [] : [entry.user_id]))
    const known = new Set((yield* users.getMany(principal.workspace_id, userIds)).map((user) => user.id))
    for (const [index, entry] of entries.entries()) {
      if (entry.user_id !== undefined && !known.has(entry.user_id)) {
        return yield* Effect.fail(
          new NotFound({
            resource: "user",
            id: entry.user_id,
            message: `participants[${index}].user_id: user ${entry.user_id} was not found in this workspace`
          })
        )
      }
    }
    const at = yield* now
    const rows = yield* Effect.forEach(entries, (entry) =>
      Effect.map(crypto.randomUUID, (id) =>
        new ParticipantRow({
          id: ParticipantId.make(id),
          workspace_id: principal.workspace_id,
          meeting_id: meetingId,
          user_id: entry.user_id ?? null,
          guest_email: entry.guest_email ?? null,
          role: entry.role,
          is_attended: false,
          created_at: at,
          updated_at: at
        })))
    const added = yield* transactor.withTransaction(Effect.gen(function*() {
      const added = yield* store.addParticipants(rows)
      for (const row of added) yield* recordParticipant(principal, "participant.added", row)
      return added
    }))
    return yield* view(principal, added)
  })

  /** The participant addressed by `who`: a user id, or a participant id (how guests are addressed). */
  const find = (principal: Principal, meetingId: MeetingId, who: string) =>
    Effect.gen(function*() {
      const byUser = yield* store.findParticipant(principal.workspace_id, meetingId, UserId.make(who))
      if (Option.isSome(byUser)) return byUser.value
      const all = yield* store.listParticipants(principal.workspace_id, meetingId)
      const byId = all.find((row) => row.id === who)
      if (byId === undefined) return yield* Effect.fail(NotFound.of("participant", who))
      return byId
    })

  const remove = fn("Participants.remove")(function*(principal: Principal, meetingId: MeetingId, who: string) {
    yield* requireScope(principal, "meetings:write")
    yield* access.writable(principal, meetingId)
    const row = yield* find(principal, meetingId, who)
    if (row.role === "OWNER") {
      return yield* Effect.fail(new Conflict({ message: "the meeting's owner cannot be removed" }))
    }
    yield* transactor.withTransaction(Effect.zipRight(
      store.removeParticipant(principal.workspace_id, row.id),
      recordParticipant(principal, "participant.removed", row)
    ))
  })

  const changeRole = fn("Participants.changeRole")(function*(
    principal: Principal,
    meetingId: MeetingId,
    who: string,
    input: ChangeRole
  ) {
    yield* requireScope(principal, "meetings:write")
    yield* access.writable(principal, meetingId)
    const row = yield* find(principal, meetingId, who)
    if (row.role === "OWNER") {
      return yield* Effect.fail(new Conflict({ message: "the meeting owner's role cannot be changed" }))
    }
    const next = row.role === input.role ? row : new ParticipantRow({ ...row, role: input.role, updated_at: yield* now })
    if (next !== row) yield* store.updateParticipant(next)
    return yield* viewOne(principal, next)
  })

  return { list, add, remove, changeRole } as const
})

export class Participants extends Context.Tag("@convene/core/Participants")<
  Participants,
  Effect.Effect.Success<typeof make>
>() {
  static readonly layer: Layer.Layer<
    Participants,
    never,
    MeetingStore | UserStore | MeetingAccess | Crypto | Transactor | Events
  > = Layer
    .effect(Participants, make)
}
