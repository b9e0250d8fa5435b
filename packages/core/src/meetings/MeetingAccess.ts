/**
 * Who may see and change a meeting. Workspace API keys and OWNER/ADMIN users see and change every meeting
 * of their workspace. Other users see the meetings they take part in; they change them as the meeting's
 * OWNER or an EDITOR (a VIEWER reads only). A meeting the caller cannot see answers 404, like a missing one.
 */
import { Context, Effect, Layer, Option } from "effect"
import { actsForWorkspace } from "../identity/Access.js"
import type { Principal } from "../identity/Identity.js"
import { InsufficientScope, NotFound, orNotFound } from "../shared/Errors.js"
import type { MeetingId } from "../shared/Ids.js"
import type { Meeting } from "./Meeting.js"
import { MeetingFilter } from "./MeetingFilter.js"
import { MeetingStore } from "./MeetingStore.js"
import { fn } from "../shared/Span.js"

const make = Effect.gen(function*() {
  const store = yield* MeetingStore

  const find = (principal: Principal, id: MeetingId) =>
    store.get(principal.workspace_id, id).pipe(orNotFound("meeting", id))

  const roleOf = (principal: Principal, meeting: Meeting) =>
    principal.user_id === null
      ? Effect.succeed(Option.none())
      : store.findParticipant(principal.workspace_id, meeting.id, principal.user_id).pipe(
        Effect.map(Option.map((row) => row.role))
      )

  /** The meeting, if the caller may see it. */
  const readable = fn("MeetingAccess.readable")(function*(principal: Principal, id: MeetingId) {
    const meeting = yield* find(principal, id)
    if (actsForWorkspace(principal)) return meeting
    const role = yield* roleOf(principal, meeting)
    if (Option.isNone(role)) return yield* Effect.fail(NotFound.of("meeting", id))
    return meeting
  })

  /** The meeting, if the caller may change it. `ownerOnly` narrows to the meeting's owner (deleting it). */
  const writable = fn("MeetingAccess.writable")(function*(
    principal: Principal,
    id: MeetingId,
    options?: { readonly ownerOnly?: boolean }
  ) {
    const meeting = yield* find(principal, id)
    if (actsForWorkspace(principal)) return meeting
    const role = yield* roleOf(principal, meeting)
    if (Option.isNone(role)) return yield* Effect.fail(NotFound.of("meeting", id))
    const allowed = options?.ownerOnly ? role.value === "OWNER" : role.value !== "VIEWER"
    if (!allowed) {
      return yield* Effect.fail(
        new InsufficientScope({
          required: options?.ownerOnly ? "meeting owner" : "meeting editor",
          message: options?.ownerOnly
            ? "only the meeting's owner (or a workspace admin) can do this"
            : `your role on this meeting (${role.value}) cannot change it`
        })
      )
    }
    return meeting
  })

  /** The meetings the caller sees, as a filter: all of the workspace's, or those they take part in. */
  const visibleTo = (principal: Principal): MeetingFilter =>
    actsForWorkspace(principal) || principal.user_id === null
      ? MeetingFilter.All()
      : MeetingFilter.HasParticipant({ userId: principal.user_id })

  /**
   * The ids of the meetings the caller sees, for lists of things kept on meetings: undefined when the caller
   * sees every meeting of the workspace.
   */
  const visibleMeetingIds = fn("MeetingAccess.visibleMeetingIds")(function*(principal: Principal) {
    if (actsForWorkspace(principal) || principal.user_id === null) return undefined
    return yield* store.meetingIdsOf(principal.workspace_id, principal.user_id)
  })

  return { readable, writable, visibleTo, visibleMeetingIds } as const
})

export class MeetingAccess extends Context.Tag("@convene/core/MeetingAccess")<
  MeetingAccess,
  Effect.Effect.Success<typeof make>
>() {
  static readonly layer: Layer.Layer<MeetingAccess, never, MeetingStore> = Layer.effect(MeetingAccess, make)
}
