/**
 * Meeting context: uploads normalised to text (Normalize.ts, with PDF and DOCX read through the TextExtractor
 * port), PII-scrubbed (Scrubber.ts) and stored as text only (Preparation.ts, run where the ContextPreparation port
 * says); the upload itself is never stored. Items follow
 * their meeting as agenda items do: whoever sees the meeting lists and reads them (meetings:read), whoever may
 * change it uploads and deletes them (meetings:write). A `transcript` upload (WebVTT or SRT) also appends its
 * cues, scrubbed the same way, to the meeting's transcript in the same transaction. The stored text is read only
 * through ContextForPrompt.
 */
import { Context, Effect, Either, Layer, Schema } from "effect"
import { requireScope } from "../identity/Access.js"
import type { Principal } from "../identity/Identity.js"
import { Events } from "../events/Events.js"
import { TranscriptSegment } from "../meetings/Meeting.js"
import { MeetingAccess } from "../meetings/MeetingAccess.js"
import { MeetingStore } from "../meetings/MeetingStore.js"
import { Crypto } from "../ports/Crypto.js"
import { Transactor } from "../ports/Transactor.js"
import { NotFound, orNotFound, ValidationError } from "../shared/Errors.js"
import type { MeetingId } from "../shared/Ids.js"
import { clamp, type PageRequest, toList } from "../shared/Pagination.js"
import { now } from "../shared/Time.js"
import { trusted } from "../shared/Trusted.js"
import { ContextItem, ContextItemId, ContextItemRow, ContextKind } from "./ContextItem.js"
import { ContextStore } from "./ContextStore.js"
import { ContextPreparation, ContextSource } from "./Preparation.js"
import { utf8Length } from "./Utf8.js"
import { fn } from "../shared/Span.js"

/** An upload as the host read it: the one file and the optional `kind` field. */
export interface ContextUpload {
  readonly fileName: string
  readonly contentType: string | undefined
  readonly bytes: Uint8Array
  /** The `kind` form field as sent (undefined: `document`). */
  readonly kind: string | undefined
}

/** How many transcript segments are appended at once. */
const transcriptBatch = 1000

const decodeKind = Schema.decodeUnknownEither(ContextKind)

const make = Effect.gen(function*() {
  const store = yield* ContextStore
  const meetings = yield* MeetingStore
  const access = yield* MeetingAccess
  const preparation = yield* ContextPreparation
  const crypto = yield* Crypto
  const transactor = yield* Transactor
  const events = yield* Events
  const recordItem = events.recordOf(ContextItem)

  /** The item, if it is on the meeting (which the caller has been found to see). */
  const find = (principal: Principal, meetingId: MeetingId, id: ContextItemId) =>
    store.get(principal.workspace_id, id).pipe(
      orNotFound("context item", id),
      Effect.filterOrFail((row) => row.meeting_id === meetingId, () => NotFound.of("context item", id))
    )

  const list = fn("ContextItems.list")(function*(principal: Principal, meetingId: MeetingId, request: PageRequest) {
    yield* requireScope(principal, "meetings:read")
    const meeting = yield* access.readable(principal, meetingId)
    const page = clamp(request)
    const slice = yield* store.list(principal.workspace_id, meeting.id, page)
    return toList({ items: slice.items.map(ContextItem.of), total: slice.total }, page)
  })

  const get = fn("ContextItems.get")(function*(principal: Principal, meetingId: MeetingId, id: ContextItemId) {
    yield* requireScope(principal, "meetings:read")
    const meeting = yield* access.readable(principal, meetingId)
    return ContextItem.of(yield* find(principal, meeting.id, id))
  })

  /**
   * Checks the caller may change the meeting, then reads the upload (`read`: the host's reader, run only then, so
   * a caller without access is refused before any of the body is read), normalises and scrubs it, and stores the
   * item with its text (and, for a transcript, appends its segments to the meeting's transcript) and records
   * context.uploaded, in one transaction.
   */
  const upload = <E, R>(principal: Principal, meetingId: MeetingId, read: Effect.Effect<ContextUpload, E, R>) =>
    Effect.gen(function*() {
      yield* requireScope(principal, "meetings:write")
      const meeting = yield* access.writable(principal, meetingId)
      const input = yield* read
      const kind = yield* Either.mapLeft(
        decodeKind(input.kind ?? "document"),
        () => ValidationError.of("kind", "must be one of document, notes, transcript")
      )
      const prepared = yield* preparation.prepare(
        new ContextSource({ fileName: input.fileName, contentType: input.contentType, bytes: input.bytes, kind })
      )
      const at = yield* now
      const row = new ContextItemRow({
        id: ContextItemId.make(yield* crypto.randomUUID),
        workspace_id: principal.workspace_id,
        meeting_id: meeting.id,
        kind,
        file_name: prepared.fileName,
        content_type: prepared.mediaType,
        size: utf8Length(prepared.text),
        created_at: at
      }, trusted)
      yield* transactor.withTransaction(Effect.gen(function*() {
        yield* store.insert(row, prepared.text)
        // In batches, in order: one statement per batch keeps a long transcript within what one SQL statement takes.
        for (let from = 0; from < prepared.spoken.length; from += transcriptBatch) {
          yield* meetings.appendTranscript(
            principal.workspace_id,
            prepared.spoken.slice(from, from + transcriptBatch).map((line) =>
              new TranscriptSegment({ meeting_id: meeting.id, ...line, created_at: at }, trusted)
            )
          )
        }
        yield* recordItem(principal, "context.uploaded", ContextItem.of(row))
      }))
      return ContextItem.of(row)
    }).pipe(Effect.withSpan("ContextItems.upload"))

  /** Deletes the item and its text. What a transcript upload appended to the meeting's transcript stays. */
  const remove = fn("ContextItems.delete")(function*(principal: Principal, meetingId: MeetingId, id: ContextItemId) {
    yield* requireScope(principal, "meetings:write")
    const meeting = yield* access.writable(principal, meetingId)
    yield* find(principal, meeting.id, id)
    yield* store.delete(principal.workspace_id, id)
  })

  return { list, get, upload, delete: remove } as const
})

export class ContextItems extends Context.Tag("@convene/core/ContextItems")<
  ContextItems,
  Effect.Effect.Success<typeof make>
>() {
  static readonly layer: Layer.Layer<
    ContextItems,
    never,
    ContextStore | MeetingStore | MeetingAccess | ContextPreparation | Transactor | Crypto | Events
  > = Layer.effect(ContextItems, make)
}
