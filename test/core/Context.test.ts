/**
 * Meeting context in core: uploads detected, normalised and scrubbed (PDF and DOCX through a stand-in
 * TextExtractor: the real one is tested in test/node/extractors.test.ts), transcripts feeding the meeting's
 * transcript, access as agenda items have it, the event, and the cascades.
 */
import {
  AddParticipants,
  ContextForPrompt,
  ContextItems,
  ContextNormalize,
  ContextPreparation,
  ContextStore,
  type ContextUpload,
  Convene,
  CreateMeeting,
  EventLog,
  ExtractionFailed,
  type MeetingId,
  Meetings,
  ParticipantEntry,
  Participants,
  type Principal,
  TextExtractor,
  Transcripts,
  type UserId,
  Workspaces
} from "@convene/core"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Either, FastCheck, Layer } from "effect"
import { CoreLive, principalFor } from "./fixtures.js"

/** A stand-in extractor: a PDF or DOCX "holds" the text after its signature; `broken`/`sheet` fail. */
const StubExtractor = Layer.succeed(
  TextExtractor,
  TextExtractor.of({
    extract: (format, bytes) => {
      const body = new TextDecoder().decode(bytes.slice(format === "pdf" ? 5 : 4))
      if (body.startsWith("broken")) return Effect.fail(new ExtractionFailed({ unsupported: false, reason: "the PDF could not be read" }))
      if (body.startsWith("sheet")) return Effect.fail(new ExtractionFailed({ unsupported: true, reason: "a ZIP without a Word document" }))
      return Effect.succeed(`${format}:${body}`)
    }
  })
)

const TestLive = Convene.contextLayer.pipe(
  Layer.provide(ContextPreparation.inProcess),
  Layer.provide(StubExtractor),
  Layer.provideMerge(CoreLive)
)

const bytes = (text: string) => new TextEncoder().encode(text)

const upload = (fileName: string, content: string | Uint8Array, options: { contentType?: string; kind?: string } = {}) =>
  Effect.succeed<ContextUpload>({
    fileName,
    contentType: options.contentType,
    bytes: typeof content === "string" ? bytes(content) : content,
    kind: options.kind
  })

const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0])

/** A member with a meeting of theirs. */
const setup = Effect.gen(function*() {
  const { principal, workspace } = yield* principalFor()
  const meeting = yield* (yield* Meetings).create(principal, CreateMeeting.make({ title: "Planning" }))
  return { principal, workspace, meeting }
})

const errorOf = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.flip(effect)

layer(TestLive)("ContextItems", (it) => {
  it.effect("a text upload is normalised and scrubbed; the item describes it; ContextForPrompt reads the text", () =>
    Effect.gen(function*() {
      const { meeting, principal } = yield* setup
      const items = yield* ContextItems
      const prompt = yield* ContextForPrompt
      const raw = "\uFEFFAgenda\r\n\r\n\r\n  - Cafe\u0301 budget\t\tnotes   \r\nMail alice@example.com or call +44 20 7946 0958\r\n\r\n"
      const item = yield* items.upload(principal, meeting.id, upload("dir/notes.txt", raw, { contentType: "text/plain; charset=utf-8" }))
      const expected = "Agenda\n\n  - Café budget notes\nMail [EMAIL] or call [PHONE]\n"
      expect(item).toMatchObject({ meeting_id: meeting.id, kind: "document", file_name: "notes.txt", content_type: "text/plain" })
      expect(item.size).toBe(new TextEncoder().encode(expected).length)
      expect(yield* prompt.text(principal, meeting.id, item.id)).toBe(expected)
      expect(yield* items.get(principal, meeting.id, item.id)).toEqual(item)
      const listed = yield* items.list(principal, meeting.id, {})
      expect(listed.items).toEqual([item])
      expect(listed.total).toBe(1)
      const context = yield* prompt.forMeeting(principal, meeting.id)
      expect(context).toEqual([{ item, text: expected }])
    }))

  it.effect("records context.uploaded with the item, in the log", () =>
    Effect.gen(function*() {
      const { meeting, principal, workspace } = yield* setup
      const item = yield* (yield* ContextItems).upload(principal, meeting.id, upload("a.md", "# Title\n", { kind: "notes" }))
      const logged = yield* (yield* EventLog).after(workspace.id, 0, 100)
      const event = logged.map((entry) => entry.event).find((e) => e.type === "context.uploaded")
      expect(event?.data).toEqual({
        id: item.id,
        meeting_id: meeting.id,
        kind: "notes",
        file_name: "a.md",
        content_type: "text/markdown",
        size: 8,
        created_at: expect.any(String)
      })
      expect(event?.actor_user_id).toBe(principal.user_id)
    }))

  it.effect("kind defaults to document; another value is 400 naming kind", () =>
    Effect.gen(function*() {
      const { meeting, principal } = yield* setup
      const items = yield* ContextItems
      const error = yield* errorOf(items.upload(principal, meeting.id, upload("a.txt", "x", { kind: "slides" })))
      expect(error).toMatchObject({ _tag: "ValidationError", field: "kind" })
      expect((yield* items.list(principal, meeting.id, {})).total).toBe(0)
    }))

  it.effect("refuses images, binaries, non-UTF-8 text and declared media types (415)", () =>
    Effect.gen(function*() {
      const { meeting, principal } = yield* setup
      const items = yield* ContextItems
      const refused = (fileName: string, content: string | Uint8Array, contentType?: string) =>
        errorOf(items.upload(principal, meeting.id, upload(fileName, content, contentType === undefined ? {} : { contentType })))
      expect(yield* refused("photo.txt", png, "text/plain")).toMatchObject({ _tag: "UnsupportedUpload" })
      expect((yield* refused("photo.png", png, "image/png")).message).toContain("a PNG image")
      expect(yield* refused("draw.svg", "<svg></svg>", "image/svg+xml")).toMatchObject({ _tag: "UnsupportedUpload" })
      expect(yield* refused("latin1.txt", new Uint8Array([0x43, 0x61, 0x66, 0xe9]))).toMatchObject({ _tag: "UnsupportedUpload" })
      expect(yield* refused("nul.txt", "a\u0000b")).toMatchObject({ _tag: "UnsupportedUpload" })
      expect(yield* refused("utf16.txt", new Uint8Array([0xff, 0xfe, 0x41, 0x00]))).toMatchObject({ _tag: "UnsupportedUpload" })
      expect(yield* refused("sheet.xlsx", bytes("PK\u0003\u0004sheet"))).toMatchObject({ _tag: "UnsupportedUpload" })
      expect((yield* items.list(principal, meeting.id, {})).total).toBe(0)
    }))

  it.effect("PDF and DOCX go through the TextExtractor, then the same rules; an unreadable one is 400", () =>
    Effect.gen(function*() {
      const { meeting, principal } = yield* setup
      const items = yield* ContextItems
      const prompt = yield* ContextForPrompt
      const pdf = yield* items.upload(principal, meeting.id, upload("deck", "%PDF-Slides  for\r\nbob@example.com"))
      expect(pdf.content_type).toBe("application/pdf")
      expect(yield* prompt.text(principal, meeting.id, pdf.id)).toBe("pdf:Slides for\n[EMAIL]\n")
      const docx = yield* items.upload(principal, meeting.id, upload("agenda.docx", "PK\u0003\u0004Plan", { contentType: "application/octet-stream" }))
      expect(docx.content_type).toBe("application/vnd.openxmlformats-officedocument.wordprocessingml.document")
      expect(yield* prompt.text(principal, meeting.id, docx.id)).toBe("docx:Plan\n")
      const broken = yield* errorOf(items.upload(principal, meeting.id, upload("x.pdf", "%PDF-broken")))
      expect(broken).toMatchObject({ _tag: "ValidationError", field: "file", message: "file: the PDF could not be read" })
    }))

  it.effect("an upload without text is 400", () =>
    Effect.gen(function*() {
      const { meeting, principal } = yield* setup
      const error = yield* errorOf((yield* ContextItems).upload(principal, meeting.id, upload("blank.txt", " \r\n\t\n")))
      expect(error).toMatchObject({ _tag: "ValidationError", field: "file" })
    }))

  it.effect("a WebVTT transcript feeds the meeting's transcript, speakers from voice tags, scrubbed", () =>
    Effect.gen(function*() {
      const { meeting, principal } = yield* setup
      const items = yield* ContextItems
      const vtt = "WEBVTT\n\n00:00:01.000 --> 00:00:04.000\n<v Alice>Welcome, mail me at alice@example.com\n\n" +
        "00:01:05.500 --> 00:01:08.000\n<v.loud Bob>Thanks <b>Alice</b> &amp; all\ncontinued here\n"
      const item = yield* items.upload(principal, meeting.id, upload("standup.vtt", vtt, { kind: "transcript" }))
      expect(item).toMatchObject({ kind: "transcript", content_type: "text/vtt" })
      const exported = yield* (yield* Meetings).exportTranscript(principal, meeting.id)
      expect(exported).toBe("[00:00:01] Alice: Welcome, mail me at [EMAIL]\n[00:01:05] Bob: Thanks Alice & all continued here\n")
      expect(yield* (yield* ContextForPrompt).text(principal, meeting.id, item.id)).toBe(exported)
    }))

  it.effect("an SRT transcript with `Speaker: text` lines appends after what is there", () =>
    Effect.gen(function*() {
      const { meeting, principal } = yield* setup
      const items = yield* ContextItems
      const srt = "1\r\n00:00:02,000 --> 00:00:03,000\r\nDana: Hello\r\n\r\n2\r\n00:00:05,000 --> 00:00:06,000\r\nNo speaker here\r\n"
      yield* items.upload(principal, meeting.id, upload("call.srt", srt, { kind: "transcript" }))
      yield* items.upload(principal, meeting.id, upload("more.srt", "1\n00:00:03,000 --> 00:00:04,000\nEve: Hi (415) 555-2671\n", { kind: "transcript" }))
      expect(yield* (yield* Meetings).exportTranscript(principal, meeting.id)).toBe(
        "[00:00:02] Dana: Hello\n[00:00:03] Eve: Hi [PHONE]\n[00:00:05] Unknown speaker: No speaker here\n"
      )
    }))

  it.effect("a transcript that is not WebVTT or SRT is 400, and nothing is stored", () =>
    Effect.gen(function*() {
      const { meeting, principal } = yield* setup
      const items = yield* ContextItems
      const refused = (fileName: string, content: string) =>
        errorOf(items.upload(principal, meeting.id, upload(fileName, content, { kind: "transcript" })))
      expect(yield* refused("notes.txt", "just some notes")).toMatchObject({ _tag: "ValidationError", field: "file" })
      expect(yield* refused("notes.md", "# Notes")).toMatchObject({ _tag: "ValidationError", field: "file" })
      expect(yield* refused("empty.vtt", "WEBVTT\n\n")).toMatchObject({ _tag: "ValidationError", field: "file" })
      expect(yield* errorOf(items.upload(principal, meeting.id, upload("x.pdf", "%PDF-text", { kind: "transcript" }))))
        .toMatchObject({ _tag: "ValidationError", field: "file" })
      expect((yield* items.list(principal, meeting.id, {})).total).toBe(0)
      expect(yield* (yield* Meetings).exportTranscript(principal, meeting.id)).toBe("")
    }))

  it.effect("access follows the meeting: a viewer reads but cannot upload or delete; others get 404", () =>
    Effect.gen(function*() {
      const { meeting, principal, workspace } = yield* setup
      const items = yield* ContextItems
      const prompt = yield* ContextForPrompt
      const item = yield* items.upload(principal, meeting.id, upload("a.txt", "hello"))
      const viewer = yield* principalFor({ workspaceId: workspace.id })
      const outsider = yield* principalFor({ workspaceId: workspace.id })
      const stranger = yield* principalFor()
      yield* addParticipant(principal, meeting.id, viewer.principal.user_id!, "VIEWER")
      expect((yield* items.get(viewer.principal, meeting.id, item.id)).id).toBe(item.id)
      expect(yield* prompt.text(viewer.principal, meeting.id, item.id)).toBe("hello\n")
      let read = false
      const reading = Effect.sync(() => {
        read = true
      }).pipe(Effect.zipRight(upload("b.txt", "x")))
      expect(yield* errorOf(items.upload(viewer.principal, meeting.id, reading))).toMatchObject({ _tag: "InsufficientScope" })
      expect(read).toBe(false)
      expect(yield* errorOf(items.delete(viewer.principal, meeting.id, item.id))).toMatchObject({ _tag: "InsufficientScope" })
      for (const other of [outsider.principal, stranger.principal]) {
        expect(yield* errorOf(items.list(other, meeting.id, {}))).toMatchObject({ _tag: "NotFound" })
        expect(yield* errorOf(items.get(other, meeting.id, item.id))).toMatchObject({ _tag: "NotFound" })
        expect(yield* errorOf(prompt.text(other, meeting.id, item.id))).toMatchObject({ _tag: "NotFound" })
        expect(yield* errorOf(items.upload(other, meeting.id, reading))).toMatchObject({ _tag: "NotFound" })
      }
      expect(read).toBe(false)
    }))

  it.effect("scopes: meetings:read to read, meetings:write to upload and delete", () =>
    Effect.gen(function*() {
      const { meeting, principal, workspace } = yield* setup
      const items = yield* ContextItems
      const item = yield* items.upload(principal, meeting.id, upload("a.txt", "hello"))
      const admin = yield* principalFor({ workspaceId: workspace.id, role: "ADMIN", scopes: ["meetings:read"] })
      const writer = yield* principalFor({ workspaceId: workspace.id, role: "ADMIN", scopes: ["meetings:write"] })
      expect((yield* items.get(admin.principal, meeting.id, item.id)).id).toBe(item.id)
      expect(yield* errorOf(items.upload(admin.principal, meeting.id, upload("b.txt", "x")))).toMatchObject({ _tag: "InsufficientScope" })
      expect(yield* errorOf(items.delete(admin.principal, meeting.id, item.id))).toMatchObject({ _tag: "InsufficientScope" })
      expect(yield* errorOf(items.list(writer.principal, meeting.id, {}))).toMatchObject({ _tag: "InsufficientScope" })
      expect(yield* errorOf((yield* ContextForPrompt).text(writer.principal, meeting.id, item.id))).toMatchObject({
        _tag: "InsufficientScope"
      })
    }))

  it.effect("an item is found only under its own meeting; delete makes it 404", () =>
    Effect.gen(function*() {
      const { meeting, principal } = yield* setup
      const items = yield* ContextItems
      const prompt = yield* ContextForPrompt
      const other = yield* (yield* Meetings).create(principal, CreateMeeting.make({ title: "Other" }))
      const item = yield* items.upload(principal, meeting.id, upload("a.txt", "hello"))
      expect(yield* errorOf(items.get(principal, other.id, item.id))).toMatchObject({ _tag: "NotFound" })
      expect(yield* errorOf(prompt.text(principal, other.id, item.id))).toMatchObject({ _tag: "NotFound" })
      expect(yield* errorOf(items.delete(principal, other.id, item.id))).toMatchObject({ _tag: "NotFound" })
      yield* items.delete(principal, meeting.id, item.id)
      expect(yield* errorOf(items.get(principal, meeting.id, item.id))).toMatchObject({ _tag: "NotFound" })
      expect(yield* errorOf(prompt.text(principal, meeting.id, item.id))).toMatchObject({ _tag: "NotFound" })
      expect(yield* errorOf(items.delete(principal, meeting.id, item.id))).toMatchObject({ _tag: "NotFound" })
    }))

  it.effect("deleting the meeting, or the workspace, deletes its context items", () =>
    Effect.gen(function*() {
      const { meeting, principal, workspace } = yield* setup
      const items = yield* ContextItems
      const store = yield* ContextStore
      const kept = yield* (yield* Meetings).create(principal, CreateMeeting.make({ title: "Kept" }))
      const gone = yield* items.upload(principal, meeting.id, upload("a.txt", "hello"))
      const stays = yield* items.upload(principal, kept.id, upload("b.txt", "world"))
      yield* (yield* Meetings).delete(principal, meeting.id)
      expect((yield* store.get(workspace.id, gone.id))._tag).toBe("None")
      expect((yield* store.get(workspace.id, stays.id))._tag).toBe("Some")
      yield* (yield* Workspaces).delete(workspace.id)
      expect((yield* store.get(workspace.id, stays.id))._tag).toBe("None")
    }))
})

const addParticipant = (principal: Principal, meetingId: MeetingId, userId: UserId, role: "EDITOR" | "VIEWER") =>
  Effect.flatMap(Participants, (participants) =>
    participants.add(principal, meetingId, AddParticipants.make({ participants: [ParticipantEntry.make({ role, user_id: userId })] })))

describe("normalizeText", () => {
  it("applies NFC, folds line endings, white space and blank lines, keeps indentation", () => {
    expect(ContextNormalize.normalizeText("a\r\nb\rc\u2028d\fe")).toBe("a\nb\nc\nd\ne\n")
    expect(ContextNormalize.normalizeText("Cafe\u0301")).toBe("Café\n")
    expect(ContextNormalize.normalizeText("x \t\u00A0 y   \n")).toBe("x y\n")
    expect(ContextNormalize.normalizeText("\n\n\na\n\n\n\nb\n\n")).toBe("a\n\nb\n")
    expect(ContextNormalize.normalizeText("\tcode  here\n  - item")).toBe("    code here\n  - item\n")
    expect(ContextNormalize.normalizeText("bell\u0007 and \uFEFFbom")).toBe("bell and bom\n")
    expect(ContextNormalize.normalizeText(" \n\t\n")).toBe("")
  })

  it("is idempotent", () => {
    const once = ContextNormalize.normalizeText(" a\r\n\r\n\r\n\tb  c \n")
    expect(ContextNormalize.normalizeText(once)).toBe(once)
  })
})

describe("properties", () => {
  const text = FastCheck.array(
    FastCheck.oneof(
      FastCheck.fullUnicode(),
      FastCheck.constantFrom("\r\n", "\r", "\n", "\t", " ", "\u00A0", "\u2028", "e\u0301", "\uFEFF", "\u0007")
    ),
    { maxLength: 80 }
  ).map((parts) => parts.join(""))

  it.prop("normalizeText is idempotent and leaves no CR, no trailing white space, no double blank line, only NFC", [text], ([input]) => {
    const once = ContextNormalize.normalizeText(input)
    expect(ContextNormalize.normalizeText(once)).toBe(once)
    expect(once).not.toMatch(/\r|[ \t]\n|\n\n\n/)
    expect(once.normalize("NFC")).toBe(once)
    expect(once === "" || once.endsWith("\n")).toBe(true)
  })

  it.prop("decodeUtf8 agrees with the platform's strict decoder on any bytes", [FastCheck.uint8Array({ maxLength: 64 })], ([bytes]) => {
    let expected: string | undefined
    try {
      expected = new TextDecoder("utf-8", { fatal: true }).decode(bytes)
    } catch {
      expected = undefined
    }
    expect(ContextNormalize.decodeUtf8(bytes)).toBe(expected)
  })

  it.prop("decodeUtf8 reads back any encoded text, and utf8Length is its encoded length", [FastCheck.string({ unit: "grapheme", maxLength: 40 })], ([s]) => {
    const encoded = new TextEncoder().encode(s)
    expect(ContextNormalize.decodeUtf8(encoded)).toBe(s.replace(/^\uFEFF/, ""))
    expect(ContextNormalize.utf8Length(s)).toBe(encoded.length)
  })
})

describe("detect", () => {
  const detect = (fileName: string, content: string | Uint8Array, contentType?: string) =>
    ContextNormalize.detect({ fileName, contentType, bytes: typeof content === "string" ? bytes(content) : content })

  it("reads the type from the first bytes, then the name and declared type for text flavours", () => {
    expect(Either.getOrThrow(detect("x.bin", "%PDF-1.7"))).toMatchObject({ _tag: "Binary", format: "pdf" })
    expect(Either.getOrThrow(detect("x.pdf", "PK\u0003\u0004"))).toMatchObject({ _tag: "Binary", format: "docx" })
    expect(Either.getOrThrow(detect("x.md", "# a"))).toMatchObject({ _tag: "Text", flavour: "markdown", mediaType: "text/markdown" })
    expect(Either.getOrThrow(detect("x", "a", "text/markdown; charset=utf-8"))).toMatchObject({ flavour: "markdown" })
    expect(Either.getOrThrow(detect("x.txt", "WEBVTT\n\n"))).toMatchObject({ flavour: "webvtt", mediaType: "text/vtt" })
    expect(Either.getOrThrow(detect("x.srt", "1"))).toMatchObject({ flavour: "srt", mediaType: "application/x-subrip" })
    expect(Either.getOrThrow(detect("x.txt", "\uFEFFplain"))).toMatchObject({ flavour: "plain", text: "plain" })
  })

  it("refuses binary signatures and declared media types", () => {
    expect(Either.isLeft(detect("x.txt", png))).toBe(true)
    expect(Either.isLeft(detect("x.gif", "GIF89a"))).toBe(true)
    expect(Either.isLeft(detect("x.txt", "hello", "audio/mpeg"))).toBe(true)
    expect(Either.isLeft(detect("x.txt", new Uint8Array([0xc3, 0x28])))).toBe(true)
    expect(Either.isLeft(detect("x.txt", new Uint8Array([0xed, 0xa0, 0x80])))).toBe(true)
  })

  it("keeps the last segment of the file name", () => {
    expect(ContextNormalize.fileNameOf("C:\\Users\\me\\plan.docx")).toBe("plan.docx")
    expect(ContextNormalize.fileNameOf("  ")).toBe("upload")
  })
})

describe("parseTranscript", () => {
  it("takes speakers from voice tags and prefixes, drops markup, keeps start times", () => {
    const parsed = Either.getOrThrow(Transcripts.parseTranscript(
      "WEBVTT\n\n00:00:00.500 --> 00:00:01.000\n<v Ann>one</v>\n<v Ben>two\n\n00:00:02.000 --> 00:00:03.000\n<i>Carl: three</i>\n"
    ))
    expect(parsed).toEqual([
      { offset_ms: 500, speaker: "Ann", text: "one" },
      { offset_ms: 500, speaker: "Ben", text: "two" },
      { offset_ms: 2000, speaker: "Carl", text: "three" }
    ])
  })

  it("refuses what it cannot read", () => {
    expect(Either.isLeft(Transcripts.parseTranscript("hello world"))).toBe(true)
    expect(Either.isLeft(Transcripts.parseTranscript("1\n00:00:01,000 --> 00:00:02,000\n\n"))).toBe(true)
  })
})
