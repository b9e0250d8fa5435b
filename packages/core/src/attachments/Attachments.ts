/**
 * Meeting attachments: files kept on a meeting byte for byte as uploaded. They follow their meeting as agenda
 * items do: whoever sees the meeting lists, reads and downloads them (meetings:read), whoever may change it
 * uploads and deletes them (meetings:write).
 *
 * Where the bytes are, and how records and bytes stay together:
 * - The bytes go to the BlobStore (under the attachment's id) first, streamed, hashed as they pass; only when
 *   every byte is stored is the record inserted, with attachment.uploaded, in one transaction. Whatever fails
 *   after the bytes are stored (or interrupts the upload) deletes them again. So no record ever points at bytes
 *   that are not (all) there.
 * - Deleting an attachment deletes its record first (committed), then its bytes. Deleting a meeting or a
 *   workspace deletes the records in that transaction (Contents.ts) and leaves the bytes to `sweep`.
 * - `sweep` (run by the host every few minutes) deletes the bytes no record points at once they are older than
 *   `orphanGrace` (so an upload between storing its bytes and committing its record is never swept). No bytes are
 *   left behind for longer than that grace plus the sweep's interval.
 *
 * SHA-256: computed while the upload streams to the store and kept on the record. A whole download is hashed as it
 * streams: when the bytes turn out not to match the record (size or hash), the stream fails before its end, so the
 * client sees the response cut off, never a corrupted file presented as complete. A range is checked only against
 * the stored size (hashing it would mean reading the whole file); a client checks what it put together against
 * `sha256`.
 */
import { Context, DateTime, Duration, Effect, Exit, Layer, Option, Schema, Stream } from "effect"
import { requireScope } from "../identity/Access.js"
import type { Principal } from "../identity/Identity.js"
import { Events } from "../events/Events.js"
import { MeetingAccess } from "../meetings/MeetingAccess.js"
import { MeetingStore } from "../meetings/MeetingStore.js"
import { Crypto } from "../ports/Crypto.js"
import { Transactor } from "../ports/Transactor.js"
import { NotFound, orNotFound } from "../shared/Errors.js"
import type { MeetingId, WorkspaceId } from "../shared/Ids.js"
import { clamp, type PageRequest, toList } from "../shared/Pagination.js"
import { now } from "../shared/Time.js"
import { trusted } from "../shared/Trusted.js"
import { Attachment, attachmentFileName, AttachmentId, AttachmentRow, sanitizeContentType } from "./Attachment.js"
import { AttachmentStore } from "./AttachmentStore.js"
import { BlobStore, Digests } from "./BlobStore.js"
import { fn } from "../shared/Span.js"

/** An upload as the host reads it: the file's name and declared media type, and its bytes as they arrive. */
export interface AttachmentUpload<E> {
  readonly fileName: string
  readonly contentType: string | undefined
  readonly content: Stream.Stream<Uint8Array, E>
}

/** How old bytes without a record must be before the sweep deletes them. */
export const orphanGrace = Duration.hours(1)

const isAttachmentId = Schema.is(AttachmentId)

/** How many keys the sweep looks at per round trip. */
const sweepPage = 500

/** A byte range of an attachment: [offset, end), within its size. */
export interface ByteRange {
  readonly offset: number
  readonly end: number
}

/** The bytes of a stored attachment do not match its record: a store lost or changed them (a 500, logged). */
export class BlobMismatch extends Error {
  constructor(readonly id: AttachmentId, readonly reason: string) {
    super(`the stored bytes of attachment ${id} ${reason}`)
    this.name = "BlobMismatch"
  }
}

const make = Effect.gen(function*() {
  const store = yield* AttachmentStore
  const blobs = yield* BlobStore
  const digests = yield* Digests
  const meetings = yield* MeetingStore
  const access = yield* MeetingAccess
  const crypto = yield* Crypto
  const transactor = yield* Transactor
  const events = yield* Events
  const recordAttachment = events.recordOf(Attachment)

  /** The attachment, if it is on the meeting (which the caller has been found to see). */
  const find = (principal: Principal, meetingId: MeetingId, id: AttachmentId) =>
    store.get(principal.workspace_id, id).pipe(
      orNotFound("attachment", id),
      Effect.filterOrFail((row) => row.meeting_id === meetingId, () => NotFound.of("attachment", id))
    )

  const list = fn("Attachments.list")(function*(principal: Principal, meetingId: MeetingId, request: PageRequest) {
    yield* requireScope(principal, "meetings:read")
    const meeting = yield* access.readable(principal, meetingId)
    const page = clamp(request)
    const slice = yield* store.list(principal.workspace_id, meeting.id, page)
    return toList({ items: slice.items.map(Attachment.of), total: slice.total }, page)
  })

  const get = fn("Attachments.get")(function*(principal: Principal, meetingId: MeetingId, id: AttachmentId) {
    yield* requireScope(principal, "meetings:read")
    const meeting = yield* access.readable(principal, meetingId)
    return Attachment.of(yield* find(principal, meeting.id, id))
  })

  /**
   * Checks the caller may change the meeting, then opens the upload (`open`: the host's reader, run only then, so a
   * caller without access is refused before any of the body is read), streams its bytes to the BlobStore while
   * hashing them, and inserts the record with attachment.uploaded in one transaction (404 when the meeting was
   * deleted meanwhile). Any failure after the bytes are stored deletes them.
   */
  const upload = <E, R>(principal: Principal, meetingId: MeetingId, open: Effect.Effect<AttachmentUpload<E>, E, R>) =>
    Effect.gen(function*() {
      yield* requireScope(principal, "meetings:write")
      const meeting = yield* access.writable(principal, meetingId)
      const input = yield* open
      const id = AttachmentId.make(yield* crypto.randomUUID)
      const digest = yield* digests.sha256
      const hashed = Stream.mapChunks(input.content, (chunk) => {
        for (const bytes of chunk) digest.update(bytes)
        return chunk
      })
      return yield* Effect.gen(function*() {
        const size = yield* blobs.put(id, hashed)
        const row = new AttachmentRow({
          id,
          workspace_id: principal.workspace_id,
          meeting_id: meeting.id,
          file_name: attachmentFileName(input.fileName),
          content_type: sanitizeContentType(input.contentType),
          size,
          sha256: digest.digest(),
          created_at: yield* now
        }, trusted)
        const attachment = Attachment.of(row)
        yield* transactor.withTransaction(Effect.gen(function*() {
          // The meeting may have gone while the bytes were on their way.
          yield* meetings.get(principal.workspace_id, meeting.id).pipe(orNotFound("meeting", meeting.id))
          yield* store.insert(row)
          yield* recordAttachment(principal, "attachment.uploaded", attachment)
        }))
        return attachment
      }).pipe(
        Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : blobs.delete(id)))
      )
    }).pipe(Effect.withSpan("Attachments.upload"))

  /**
   * The attachment and its bytes (all of them, or `range`), checked against the record: the stored size always,
   * the SHA-256 when the whole file is read (see the module's comment). The stream fails with a BlobMismatch
   * defect when they do not match.
   */
  const download = fn("Attachments.download")(function*(
    principal: Principal,
    meetingId: MeetingId,
    id: AttachmentId
  ) {
    yield* requireScope(principal, "meetings:read")
    const meeting = yield* access.readable(principal, meetingId)
    return yield* contentOf(yield* find(principal, meeting.id, id))
  })

  /**
   * The attachment and its bytes for a download link that was checked already (a pre-signed URL: it names the
   * workspace, the meeting and the attachment, and its signature stands for the caller's access). 404 when the
   * attachment is gone or no longer on that meeting.
   */
  const downloadLinked = fn("Attachments.downloadLinked")(function*(workspaceId: WorkspaceId, meetingId: MeetingId, id: AttachmentId) {
    const row = yield* store.get(workspaceId, id).pipe(
      orNotFound("attachment", id),
      Effect.filterOrFail((found) => found.meeting_id === meetingId, () => NotFound.of("attachment", id))
    )
    return yield* contentOf(row)
  })

  const contentOf = (row: AttachmentRow) => Effect.gen(function*() {
    const id = row.id
    const stored = yield* blobs.size(id)
    if (Option.isNone(stored)) return yield* Effect.die(new BlobMismatch(id, "are missing"))
    if (stored.value !== row.size) {
      return yield* Effect.die(new BlobMismatch(id, `are ${stored.value} bytes, not the ${row.size} recorded`))
    }
    const whole = (): Stream.Stream<Uint8Array> =>
      Stream.unwrap(Effect.map(digests.sha256, (digest) => {
        let size = 0
        const checked = Stream.mapChunks(blobs.read(id), (chunk) => {
          for (const bytes of chunk) {
            digest.update(bytes)
            size += bytes.length
          }
          return chunk
        })
        return Stream.concat(
          checked,
          Stream.suspend(() => {
            if (size !== row.size) return Stream.die(new BlobMismatch(id, `came to ${size} bytes, not the ${row.size} recorded`))
            const actual = digest.digest()
            return actual === row.sha256
              ? Stream.empty
              : Stream.die(new BlobMismatch(id, `do not match the recorded SHA-256 (read ${actual})`))
          })
        )
      }))
    const part = (range: ByteRange): Stream.Stream<Uint8Array> => {
      let size = 0
      return Stream.concat(
        Stream.mapChunks(blobs.read(id, range), (chunk) => {
          for (const bytes of chunk) size += bytes.length
          return chunk
        }),
        Stream.suspend(() =>
          size === range.end - range.offset
            ? Stream.empty
            : Stream.die(new BlobMismatch(id, `gave ${size} bytes for a range of ${range.end - range.offset}`))
        )
      )
    }
    return {
      attachment: Attachment.of(row),
      /** The bytes: all of them (hash-checked), or those in the range (which must lie within the size). */
      content: (range?: ByteRange): Stream.Stream<Uint8Array> =>
        range === undefined || (range.offset === 0 && range.end === row.size) ? whole() : part(range)
    }
  })

  /** Deletes the record (committed first), then the bytes; a failure to delete them leaves them to `sweep`. */
  const remove = fn("Attachments.delete")(function*(principal: Principal, meetingId: MeetingId, id: AttachmentId) {
    yield* requireScope(principal, "meetings:write")
    const meeting = yield* access.writable(principal, meetingId)
    yield* find(principal, meeting.id, id)
    yield* transactor.withTransaction(store.delete(principal.workspace_id, id))
    yield* blobs.delete(id).pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("the bytes of a deleted attachment are left to the sweep", cause))
    )
  })

  /**
   * Deletes the stored bytes no record points at (those of deleted meetings and workspaces, of uploads cut off by
   * a crash) once they are older than `orphanGrace`. Answers how many it deleted.
   */
  const sweep = fn("Attachments.sweep")(function*() {
    const before = DateTime.subtractDuration(yield* now, orphanGrace)
    let after: string | undefined = undefined
    let deleted = 0
    for (;;) {
      const keys: ReadonlyArray<string> = yield* blobs.keysCreatedBefore(before, after, sweepPage)
      if (keys.length === 0) return deleted
      const ids = keys.filter(isAttachmentId)
      const kept = yield* store.existing(ids)
      for (const key of keys) {
        if (isAttachmentId(key) && kept.has(key)) continue
        yield* blobs.delete(key)
        deleted += 1
      }
      after = keys[keys.length - 1]
    }
  })

  return { list, get, upload, download, downloadLinked, delete: remove, sweep } as const
})

export class Attachments extends Context.Tag("@convene/core/Attachments")<
  Attachments,
  Effect.Effect.Success<typeof make>
>() {
  static readonly layer: Layer.Layer<
    Attachments,
    never,
    AttachmentStore | BlobStore | Digests | MeetingStore | MeetingAccess | Transactor | Crypto | Events
  > = Layer.effect(Attachments, make)
}
