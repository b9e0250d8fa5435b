/**
 * Attachments in core: records and bytes stay together (a failed upload leaves neither; deleting a meeting or a
 * workspace takes the records in its transaction and the sweep the bytes, after the grace), downloads are checked
 * against the recorded size and SHA-256, uploads record attachment.uploaded, names and media types are cleaned.
 */
import {
  attachmentFileName,
  Attachments,
  AttachmentStore,
  BlobStore,
  Convene,
  CreateMeeting,
  EventLog,
  Meetings,
  NotFound,
  orphanGrace,
  sanitizeContentType,
  Workspaces
} from "@convene/core"
import { NodeDigests } from "@convene/node"
import { describe, expect, it, layer } from "@effect/vitest"
import { Chunk, DateTime, Duration, Effect, Exit, Layer, Option, Stream, TestClock } from "effect"
import { createHash } from "node:crypto"
import { CoreLive, principalFor } from "./fixtures.js"

/** An instant after everything the tests store. */
const DateTimeFar = DateTime.unsafeMake("3000-01-01T00:00:00Z")

const AttachmentsLive = Convene.attachmentsLayer.pipe(Layer.provideMerge(CoreLive), Layer.provide(NodeDigests.layer))

const bytesOf = (size: number, seed = 0) => Uint8Array.from({ length: size }, (_, index) => (index * 13 + seed) & 0xff)

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

const collect = (stream: Stream.Stream<Uint8Array>) =>
  Effect.map(Stream.runCollect(stream), (chunks) => Buffer.concat(Chunk.toReadonlyArray(chunks).map((piece) => Buffer.from(piece))))

/** A member with a meeting of theirs, and an upload of `bytes` to it in pieces. */
const setup = Effect.gen(function*() {
  const { principal, workspace } = yield* principalFor()
  const meeting = yield* (yield* Meetings).create(principal, CreateMeeting.make({ title: "Review" }))
  const attachments = yield* Attachments
  const upload = <E>(content: Stream.Stream<Uint8Array, E>, name = "file.bin", contentType: string | undefined = "application/pdf") =>
    attachments.upload(principal, meeting.id, Effect.succeed({ fileName: name, contentType, content }))
  return { principal, workspace, meeting, attachments, upload }
})

describe("Attachments", () => {
  layer(AttachmentsLive)((it) => {
    it.effect("an upload stores the bytes under the id, records size and SHA-256, and logs attachment.uploaded", () =>
      Effect.gen(function*() {
        const { attachments, meeting, principal, upload } = yield* setup
        const bytes = bytesOf(300_000)
        const attachment = yield* upload(Stream.fromIterable([bytes.subarray(0, 1000), bytes.subarray(1000)]))
        expect(attachment).toMatchObject({ meeting_id: meeting.id, size: bytes.length, sha256: sha256(bytes), content_type: "application/pdf" })
        expect(yield* (yield* BlobStore).size(attachment.id)).toEqual(Option.some(bytes.length))
        const { content } = yield* attachments.download(principal, meeting.id, attachment.id)
        expect((yield* collect(content())).equals(Buffer.from(bytes))).toBe(true)
        expect((yield* collect(content({ offset: 10, end: 20 }))).equals(Buffer.from(bytes.subarray(10, 20)))).toBe(true)
        const logged = yield* (yield* EventLog).after(principal.workspace_id, 0, 100)
        const uploaded = logged.filter((entry) => entry.event.type === "attachment.uploaded")
        expect(uploaded.map((entry) => entry.event.data)).toEqual([{ ...attachment, created_at: expect.any(String) }])
      }))

    it.effect("a failed upload stream leaves no record and no bytes; the error is the stream's", () =>
      Effect.gen(function*() {
        const { attachments, meeting, principal, upload } = yield* setup
        const blobs = yield* BlobStore
        const keysBefore = yield* blobs.keysCreatedBefore(DateTimeFar, undefined, 100_000)
        const failed = yield* Effect.flip(upload(Stream.concat(Stream.make(bytesOf(5000)), Stream.fail("too large" as const))))
        expect(failed).toBe("too large")
        expect((yield* attachments.list(principal, meeting.id, {})).total).toBe(0)
        expect(yield* blobs.keysCreatedBefore(DateTimeFar, undefined, 100_000)).toEqual(keysBefore)
      }))

    it.effect("an upload to a meeting deleted while the bytes were arriving is 404 and keeps no bytes", () =>
      Effect.gen(function*() {
        const { meeting, principal, upload } = yield* setup
        const blobs = yield* BlobStore
        const keysBefore = yield* blobs.keysCreatedBefore(DateTimeFar, undefined, 100_000)
        const deleteMeetingMidway = Stream.fromEffect(
          Effect.as((yield* Meetings).delete(principal, meeting.id).pipe(Effect.orDie), bytesOf(10))
        )
        const exit = yield* Effect.exit(upload(Stream.concat(Stream.make(bytesOf(10)), deleteMeetingMidway)))
        expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error instanceof NotFound).toBe(true)
        expect(yield* blobs.keysCreatedBefore(DateTimeFar, undefined, 100_000)).toEqual(keysBefore)
      }))

    it.effect("deleting the meeting deletes the records at once and the sweep the bytes after the grace", () =>
      Effect.gen(function*() {
        const { attachments, meeting, principal, upload } = yield* setup
        const blobs = yield* BlobStore
        const store = yield* AttachmentStore
        const gone = yield* upload(Stream.make(bytesOf(100)))
        const other = yield* (yield* Meetings).create(principal, CreateMeeting.make({ title: "Kept" }))
        const kept = yield* attachments.upload(principal, other.id, Effect.succeed({ fileName: "k", contentType: undefined, content: Stream.make(bytesOf(7)) }))
        yield* (yield* Meetings).delete(principal, meeting.id)
        expect(Option.isNone(yield* store.get(principal.workspace_id, gone.id))).toBe(true)
        // Within the grace the bytes stay (an upload may be between its bytes and its record).
        yield* attachments.sweep()
        expect(Option.isSome(yield* blobs.size(gone.id))).toBe(true)
        yield* TestClock.adjust(Duration.sum(orphanGrace, Duration.minutes(1)))
        expect(yield* attachments.sweep()).toBeGreaterThanOrEqual(1)
        expect(Option.isNone(yield* blobs.size(gone.id))).toBe(true)
        // No record is left pointing at missing bytes: the kept attachment still downloads whole.
        const { content } = yield* attachments.download(principal, other.id, kept.id)
        expect((yield* collect(content())).equals(Buffer.from(bytesOf(7)))).toBe(true)
      }))

    it.effect("deleting the workspace deletes its records; the sweep then deletes the bytes", () =>
      Effect.gen(function*() {
        const { attachments, upload, workspace } = yield* setup
        const store = yield* AttachmentStore
        const blobs = yield* BlobStore
        const attachment = yield* upload(Stream.make(bytesOf(50)))
        yield* (yield* Workspaces).delete(workspace.id)
        expect(yield* store.existing([attachment.id])).toEqual(new Set())
        yield* TestClock.adjust(Duration.sum(orphanGrace, Duration.minutes(1)))
        yield* attachments.sweep()
        expect(Option.isNone(yield* blobs.size(attachment.id))).toBe(true)
      }))

    it.effect("deleting an attachment deletes its record and its bytes", () =>
      Effect.gen(function*() {
        const { attachments, meeting, principal, upload } = yield* setup
        const attachment = yield* upload(Stream.make(bytesOf(50)))
        yield* attachments.delete(principal, meeting.id, attachment.id)
        expect(Option.isNone(yield* (yield* BlobStore).size(attachment.id))).toBe(true)
        const missing = yield* Effect.flip(attachments.get(principal, meeting.id, attachment.id))
        expect(missing._tag).toBe("NotFound")
      }))

    it.effect("a download whose stored bytes do not match the SHA-256 fails before its end; a range is checked by size", () =>
      Effect.gen(function*() {
        const { attachments, meeting, principal, upload } = yield* setup
        const attachment = yield* upload(Stream.make(bytesOf(1000)))
        // The store's bytes change behind the record's back (same size, other bytes).
        yield* (yield* BlobStore).put(attachment.id, Stream.make(bytesOf(1000, 1)))
        const { content } = yield* attachments.download(principal, meeting.id, attachment.id)
        const whole = yield* Effect.exit(collect(content()))
        expect(Exit.isFailure(whole) && String(Exit.isFailure(whole) ? whole.cause : "")).toContain("SHA-256")
        expect((yield* collect(content({ offset: 0, end: 10 }))).length).toBe(10)
        // A blob of another size is refused before any byte is sent.
        yield* (yield* BlobStore).put(attachment.id, Stream.make(bytesOf(999)))
        const sized = yield* Effect.exit(attachments.download(principal, meeting.id, attachment.id))
        expect(Exit.isFailure(sized)).toBe(true)
      }))
  })
})

describe("names and media types", () => {
  it("keeps a valid media type as declared, else application/octet-stream", () => {
    expect(sanitizeContentType("text/plain; charset=utf-8")).toBe("text/plain; charset=utf-8")
    expect(sanitizeContentType(" image/PNG ")).toBe("image/PNG")
    expect(sanitizeContentType("text/plain;charset=\"a;b\"")).toBe("text/plain;charset=\"a;b\"")
    for (const bad of [undefined, "", "text", "text/", "/plain", "text/plain;", "text/plain; a", "text/pl ain", "a/b\r\nX: y", "x/€", `a/${"b".repeat(300)}`]) {
      expect([bad, sanitizeContentType(bad)]).toEqual([bad, "application/octet-stream"])
    }
  })

  it("keeps the last path segment of a name, without controls or bidirectional overrides, at most 255 characters", () => {
    expect(attachmentFileName("C:\\Users\\ann\\plan.pdf")).toBe("plan.pdf")
    expect(attachmentFileName("../../etc/passwd")).toBe("passwd")
    expect(attachmentFileName("a\r\nb\u0000c\u202Egpj.exe")).toBe("abcgpj.exe")
    expect(attachmentFileName("   ")).toBe("attachment")
    expect(attachmentFileName("x/")).toBe("attachment")
    expect([...attachmentFileName("📅".repeat(300))].length).toBe(255)
    expect(attachmentFileName("Bericht über \"Q3\".pdf")).toBe("Bericht über \"Q3\".pdf")
  })
})
