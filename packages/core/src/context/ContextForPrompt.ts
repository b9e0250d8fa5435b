/**
 * The one reader of meeting context text. What it answers is what a prompt may see: the normalised, scrubbed
 * text stored at upload (raw uploads are never stored, so there is nothing else to read). The /content endpoint
 * reads through it too, so a user downloads exactly what an AI prompt would be given.
 */
import { Context, Effect, Layer } from "effect"
import { requireScope } from "../identity/Access.js"
import type { Principal } from "../identity/Identity.js"
import { MeetingAccess } from "../meetings/MeetingAccess.js"
import { NotFound, orNotFound } from "../shared/Errors.js"
import type { MeetingId } from "../shared/Ids.js"
import { ContextItem, type ContextItemId } from "./ContextItem.js"
import { ContextStore } from "./ContextStore.js"
import { fn } from "../shared/Span.js"

/** The most items one prompt reads (oldest first). */
export const maxPromptItems = 100

const make = Effect.gen(function*() {
  const store = yield* ContextStore
  const access = yield* MeetingAccess

  /** The stored text of one item of a meeting the caller sees. */
  const text = fn("ContextForPrompt.text")(function*(principal: Principal, meetingId: MeetingId, id: ContextItemId) {
    yield* requireScope(principal, "meetings:read")
    const meeting = yield* access.readable(principal, meetingId)
    const row = yield* store.get(principal.workspace_id, id).pipe(orNotFound("context item", id))
    if (row.meeting_id !== meeting.id) return yield* Effect.fail(NotFound.of("context item", id))
    return yield* store.text(principal.workspace_id, id).pipe(orNotFound("context item", id))
  })

  /** Every item of the meeting with its text, oldest first (at most `maxPromptItems`): a prompt's context. */
  const forMeeting = fn("ContextForPrompt.forMeeting")(function*(principal: Principal, meetingId: MeetingId) {
    yield* requireScope(principal, "meetings:read")
    const meeting = yield* access.readable(principal, meetingId)
    const slice = yield* store.list(principal.workspace_id, meeting.id, { limit: maxPromptItems, offset: 0 })
    return yield* Effect.forEach(slice.items, (row) =>
      Effect.map(store.text(principal.workspace_id, row.id), (stored) => ({
        item: ContextItem.of(row),
        text: stored._tag === "Some" ? stored.value : ""
      })))
  })

  return { text, forMeeting } as const
})

export class ContextForPrompt extends Context.Tag("@convene/core/ContextForPrompt")<
  ContextForPrompt,
  Effect.Effect.Success<typeof make>
>() {
  static readonly layer: Layer.Layer<ContextForPrompt, never, ContextStore | MeetingAccess> = Layer.effect(
    ContextForPrompt,
    make
  )
}
