/**
 * Meeting context end to end: multipart uploads of text, Markdown, a real PDF and a real DOCX come back as
 * normalised, scrubbed text; images are 415 and oversized uploads 413; WebVTT and SRT transcripts feed the
 * transcript export; access, scopes, deletion and the context.uploaded event.
 */
import * as Fs from "node:fs"
import { describe, expect, it } from "vitest"
import type { client } from "../support/server.js"
import {
  addParticipant,
  createMeeting,
  expectError,
  expectList,
  expectValidation,
  member,
  type Response,
  streamedEvent,
  TIMESTAMP,
  useServer,
  UUID
} from "./fixtures.js"

const server = useServer()

const DOCUMENTED_FIELDS = ["content_type", "created_at", "file_name", "id", "kind", "meeting_id", "size"]

const fixture = (name: string) => new Uint8Array(Fs.readFileSync(new URL(`../fixtures/context/${name}`, import.meta.url)))

interface FilePart {
  readonly name: string
  readonly type?: string
  readonly content: string | Uint8Array
}

/** POSTs a multipart upload (the file in `file`, plus text fields) and answers like the test client. */
const upload = async (
  token: string,
  meetingId: string,
  file: FilePart,
  fields: Record<string, string> = {},
  headers: Record<string, string> = {}
): Promise<Response> => {
  const form = new FormData()
  for (const [name, value] of Object.entries(fields)) form.append(name, value)
  form.append("file", new Blob([file.content], file.type === undefined ? {} : { type: file.type }), file.name)
  const response = await fetch(`${server.url}/v1/meetings/${meetingId}/context`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, ...headers },
    body: form
  })
  const text = await response.text()
  const json = (response.headers.get("content-type") ?? "").includes("application/json") && text.length > 0
  return { status: response.status, headers: response.headers, body: json ? JSON.parse(text) : text, text }
}

/** A member with a meeting of theirs. */
const setup = async () => {
  const { api, user, ws } = await member(server.url)
  const meeting = await createMeeting(api)
  return { api, user, ws, meeting, token: user.token }
}

const content = (api: ReturnType<typeof client>, meetingId: string, id: string) =>
  api.get(`/v1/meetings/${meetingId}/context/${id}/content`)

describe("POST /v1/meetings/{id}/context", () => {
  it("uploads plain text: 201 with the documented fields; /content answers the normalised, scrubbed text", async () => {
    const { api, meeting, token } = await setup()
    const raw = "Agenda\r\n\r\n\r\n  - Cafe\u0301   budget\t\r\nMail alice@example.com, call (415) 555-2671.\r\n"
    const created = await upload(token, meeting.id, { name: "notes.txt", type: "text/plain", content: raw })
    expect(created.status).toBe(201)
    expect(Object.keys(created.body).sort()).toEqual(DOCUMENTED_FIELDS)
    const expected = "Agenda\n\n  - Café budget\nMail [EMAIL], call [PHONE].\n"
    expect(created.body).toMatchObject({
      meeting_id: meeting.id,
      kind: "document",
      file_name: "notes.txt",
      content_type: "text/plain",
      size: Buffer.byteLength(expected)
    })
    expect(created.body.id).toMatch(UUID)
    expect(created.body.created_at).toMatch(TIMESTAMP)
    const text = await content(api, meeting.id, created.body.id)
    expect(text.status).toBe(200)
    expect(text.headers.get("content-type")).toBe("text/plain; charset=utf-8")
    expect(text.text).toBe(expected)
    const got = await api.get(`/v1/meetings/${meeting.id}/context/${created.body.id}`)
    expect(got.status).toBe(200)
    expect(got.body).toEqual(created.body)
  })

  it("scrubs the file name like the text", async () => {
    const { meeting, token } = await setup()
    const created = await upload(token, meeting.id, { name: "notes for alice@example.com, 415-555-2671.txt", content: "hello" })
    expect(created.status).toBe(201)
    expect(created.body.file_name).toBe("notes for [EMAIL], [PHONE].txt")
  })

  it("uploads Markdown as it is, kind notes", async () => {
    const { api, meeting, token } = await setup()
    const created = await upload(token, meeting.id, { name: "minutes.md", type: "text/markdown", content: "# Minutes\n\n* one\n    code block\n" }, {
      kind: "notes"
    })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ kind: "notes", content_type: "text/markdown", file_name: "minutes.md" })
    expect((await content(api, meeting.id, created.body.id)).text).toBe("# Minutes\n\n* one\n    code block\n")
  })

  it("reads a real PDF", async () => {
    const { api, meeting, token } = await setup()
    const created = await upload(token, meeting.id, { name: "plan.pdf", type: "application/pdf", content: fixture("plan.pdf") })
    expect(created.status).toBe(201)
    expect(created.body.content_type).toBe("application/pdf")
    expect((await content(api, meeting.id, created.body.id)).text).toBe("Launch plan for Q3\nContact: [EMAIL] or [PHONE]\n")
  })

  it("reads a real DOCX, whatever type it was declared with", async () => {
    const { api, meeting, token } = await setup()
    const created = await upload(token, meeting.id, { name: "agenda.docx", type: "application/octet-stream", content: fixture("agenda.docx") })
    expect(created.status).toBe(201)
    expect(created.body.content_type).toBe("application/vnd.openxmlformats-officedocument.wordprocessingml.document")
    expect((await content(api, meeting.id, created.body.id)).text).toBe(
      "Quarterly planning\n\nOwner: [EMAIL]\n\nBudget review for Q3\n\nCafé notes\n"
    )
  })

  it("refuses an image (even one named .txt), a ZIP that is not a DOCX, and non-UTF-8 text: 415", async () => {
    const { api, meeting, token } = await setup()
    expectError(await upload(token, meeting.id, { name: "pixel.png", type: "image/png", content: fixture("pixel.png") }), 415, "unsupported_media_type")
    expectError(await upload(token, meeting.id, { name: "pixel.txt", type: "text/plain", content: fixture("pixel.png") }), 415, "unsupported_media_type")
    expectError(await upload(token, meeting.id, { name: "archive.zip", content: fixture("archive.zip") }), 415, "unsupported_media_type")
    expectError(
      await upload(token, meeting.id, { name: "latin1.txt", content: new Uint8Array([0x43, 0x61, 0x66, 0xe9]) }),
      415,
      "unsupported_media_type"
    )
    expectList(await api.get(`/v1/meetings/${meeting.id}/context`), { total: 0 })
  })

  it("refuses a damaged PDF, an empty file and an unknown kind: 400 validation_error", async () => {
    const { meeting, token } = await setup()
    expectValidation(await upload(token, meeting.id, { name: "broken.pdf", content: fixture("broken.pdf") }), "file")
    expectValidation(await upload(token, meeting.id, { name: "empty.txt", content: " \n\n" }), "file")
    expectValidation(await upload(token, meeting.id, { name: "a.txt", content: "x" }, { kind: "slides" }), "kind")
  })

  it("takes multipart/form-data only (415), with a file in `file` (400)", async () => {
    const { api, meeting, token } = await setup()
    expectError(await api.post(`/v1/meetings/${meeting.id}/context`, { file: "x" }), 415, "unsupported_media_type")
    const form = new FormData()
    form.append("kind", "notes")
    const response = await fetch(`${server.url}/v1/meetings/${meeting.id}/context`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
      body: form
    })
    const body = (await response.json()) as { readonly code: string; readonly error: string }
    expect(response.status).toBe(400)
    expect(body.code).toBe("validation_error")
    expect(body.error).toContain("file")
  })

  it("does not honour Idempotency-Key: the same upload twice makes two items", async () => {
    const { api, meeting, token } = await setup()
    const key = { "idempotency-key": `key-${crypto.randomUUID()}` }
    const first = await upload(token, meeting.id, { name: "a.txt", content: "same" }, {}, key)
    const second = await upload(token, meeting.id, { name: "a.txt", content: "same" }, {}, key)
    expect([first.status, second.status]).toEqual([201, 201])
    expect(second.body.id).not.toBe(first.body.id)
    expect(second.headers.get("idempotent-replayed")).toBeNull()
    expectList(await api.get(`/v1/meetings/${meeting.id}/context`), { total: 2 })
  })

  it("caps uploads at 25 MiB: 413 payload_too_large", async () => {
    const { api, meeting, token } = await setup()
    const big = new Uint8Array(27 * 1024 * 1024).fill(0x61)
    expectError(await upload(token, meeting.id, { name: "big.txt", type: "text/plain", content: big }), 413, "payload_too_large")
    expectList(await api.get(`/v1/meetings/${meeting.id}/context`), { total: 0 })
  })

  it("holds at most 5 MiB of text: a longer text file is 413 payload_too_large, one of 5 MiB is taken", async () => {
    const { api, meeting, token } = await setup()
    const line = "Plans for the next quarter.\n"
    const fits = line.repeat(Math.floor((5 * 1024 * 1024) / line.length))
    const refused = await upload(token, meeting.id, { name: "long.txt", type: "text/plain", content: `${fits}${line}` })
    expectError(refused, 413, "payload_too_large")
    expect(refused.body.error).toContain("5 MiB")
    expectList(await api.get(`/v1/meetings/${meeting.id}/context`), { total: 0 })
    expect((await upload(token, meeting.id, { name: "long.txt", type: "text/plain", content: fits })).status).toBe(201)
  })
})

describe("transcripts", () => {
  it("a WebVTT transcript feeds GET /v1/meetings/{id}/transcript/export, speakers from voice tags, scrubbed", async () => {
    const { api, meeting, token } = await setup()
    const vtt = "WEBVTT\n\n00:00:01.000 --> 00:00:04.000\n<v Alice>Welcome all, ping me at alice@example.com\n\n" +
      "00:01:02.000 --> 00:01:05.000\n<v Bob>Card 4111 1111 1111 1111 is on file</v>\n"
    const created = await upload(token, meeting.id, { name: "standup.vtt", type: "text/vtt", content: vtt }, { kind: "transcript" })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ kind: "transcript", content_type: "text/vtt" })
    const exported = await api.get(`/v1/meetings/${meeting.id}/transcript/export`)
    expect(exported.status).toBe(200)
    expect(exported.text).toBe("[00:00:01] Alice: Welcome all, ping me at [EMAIL]\n[00:01:02] Bob: Card [CARD] is on file\n")
    expect((await content(api, meeting.id, created.body.id)).text).toBe(exported.text)
  })

  it("an SRT transcript with `Speaker: text` lines feeds it too", async () => {
    const { api, meeting, token } = await setup()
    const srt = "1\r\n00:00:02,000 --> 00:00:03,500\r\nDana: Kick-off\r\n\r\n2\r\n00:00:10,000 --> 00:00:12,000\r\nEve: Call +44 20 7946 0958\r\n"
    const created = await upload(token, meeting.id, { name: "call.srt", content: srt }, { kind: "transcript" })
    expect(created.status).toBe(201)
    expect(created.body.content_type).toBe("application/x-subrip")
    expect((await api.get(`/v1/meetings/${meeting.id}/transcript/export`)).text).toBe(
      "[00:00:02] Dana: Kick-off\n[00:00:10] Eve: Call [PHONE]\n"
    )
  })

  it("a long transcript (12,000 cues) is appended whole, in order", async () => {
    const { api, meeting, token } = await setup()
    const clock = (s: number) => `${String(Math.floor(s / 3600)).padStart(2, "0")}:${String(Math.floor(s / 60) % 60).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}`
    const cues = Array.from({ length: 12_000 }, (_, i) => `${clock(i)}.000 --> ${clock(i)}.900\n<v Speaker ${i % 3}>Line ${i}\n`)
    const created = await upload(token, meeting.id, { name: "long.vtt", content: `WEBVTT\n\n${cues.join("\n")}` }, { kind: "transcript" })
    expect(created.status).toBe(201)
    const lines = (await api.get(`/v1/meetings/${meeting.id}/transcript/export`)).text.trimEnd().split("\n")
    expect(lines.length).toBe(12_000)
    expect(lines[0]).toBe("[00:00:00] Speaker 0: Line 0")
    expect(lines[11_999]).toBe(`[${clock(11_999)}] Speaker 2: Line 11999`)
  })

  it("a transcript that does not parse is 400 validation_error and changes nothing", async () => {
    const { api, meeting, token } = await setup()
    expectValidation(await upload(token, meeting.id, { name: "notes.txt", content: "not subtitles" }, { kind: "transcript" }), "file")
    expectValidation(await upload(token, meeting.id, { name: "agenda.docx", content: fixture("agenda.docx") }, { kind: "transcript" }), "file")
    expect((await api.get(`/v1/meetings/${meeting.id}/transcript/export`)).text).toBe("")
    expectList(await api.get(`/v1/meetings/${meeting.id}/context`), { total: 0 })
  })
})

describe("list, get, delete", () => {
  it("lists the meeting's items oldest first, paged", async () => {
    const { api, meeting, token } = await setup()
    const first = (await upload(token, meeting.id, { name: "1.txt", content: "one" })).body
    const second = (await upload(token, meeting.id, { name: "2.txt", content: "two" })).body
    const all = await api.get(`/v1/meetings/${meeting.id}/context`)
    expectList(all, { total: 2 })
    expect(all.body.items.map((item: { id: string }) => item.id)).toEqual([first.id, second.id])
    const page = await api.get(`/v1/meetings/${meeting.id}/context?limit=1&offset=1`)
    expectList(page, { total: 2, limit: 1, offset: 1 })
    expect(page.body.items[0]).toEqual(second)
  })

  it("delete answers 204 with no body; then the item and its content are 404", async () => {
    const { api, meeting, token } = await setup()
    const created = (await upload(token, meeting.id, { name: "a.txt", content: "hello" })).body
    const deleted = await api.delete(`/v1/meetings/${meeting.id}/context/${created.id}`)
    expect(deleted.status).toBe(204)
    expect(deleted.text).toBe("")
    expectError(await api.get(`/v1/meetings/${meeting.id}/context/${created.id}`), 404, "not_found")
    expectError(await content(api, meeting.id, created.id), 404, "not_found")
    expectError(await api.delete(`/v1/meetings/${meeting.id}/context/${created.id}`), 404, "not_found")
    expectList(await api.get(`/v1/meetings/${meeting.id}/context`), { total: 0 })
  })

  it("another workspace's meeting or item is 404 on every operation", async () => {
    const { api, meeting, token } = await setup()
    const created = (await upload(token, meeting.id, { name: "a.txt", content: "secret plans" })).body
    const stranger = await setup()
    const paths = [`/v1/meetings/${meeting.id}/context`, `/v1/meetings/${meeting.id}/context/${created.id}`]
    expectError(await stranger.api.get(paths[0]!), 404, "not_found")
    expectError(await stranger.api.get(paths[1]!), 404, "not_found")
    expectError(await content(stranger.api, meeting.id, created.id), 404, "not_found")
    expectError(await stranger.api.delete(paths[1]!), 404, "not_found")
    expectError(await upload(stranger.token, meeting.id, { name: "b.txt", content: "x" }), 404, "not_found")
    // Their own meeting does not reach our item either.
    expectError(await stranger.api.get(`/v1/meetings/${stranger.meeting.id}/context/${created.id}`), 404, "not_found")
    expectError(await content(stranger.api, stranger.meeting.id, created.id), 404, "not_found")
    expect((await content(api, meeting.id, created.id)).text).toBe("secret plans\n")
  })

  it("scopes and roles: meetings:read to read, meetings:write to upload and delete; a VIEWER only reads", async () => {
    const { api, meeting, token, ws } = await setup()
    const created = (await upload(token, meeting.id, { name: "a.txt", content: "hello" })).body
    const reader = await ws.addUser({ role: "ADMIN", scopes: ["meetings:read"] })
    const writer = await ws.addUser({ role: "ADMIN", scopes: ["meetings:write"] })
    expect((await reader.api.get(`/v1/meetings/${meeting.id}/context/${created.id}`)).status).toBe(200)
    expectError(await upload(reader.token, meeting.id, { name: "b.txt", content: "x" }), 403, "insufficient_scope")
    expectError(await reader.api.delete(`/v1/meetings/${meeting.id}/context/${created.id}`), 403, "insufficient_scope")
    expectError(await writer.api.get(`/v1/meetings/${meeting.id}/context`), 403, "insufficient_scope")
    expectError(await content(writer.api, meeting.id, created.id), 403, "insufficient_scope")
    const viewer = await ws.addUser()
    await addParticipant(api, meeting.id, viewer.userId, "VIEWER")
    expect((await content(viewer.api, meeting.id, created.id)).text).toBe("hello\n")
    expectError(await upload(viewer.token, meeting.id, { name: "b.txt", content: "x" }), 403, "insufficient_scope")
    expectError(await viewer.api.delete(`/v1/meetings/${meeting.id}/context/${created.id}`), 403, "insufficient_scope")
  })

  it("a refused caller gets 403 or 404 (checked before the body is read), however large the upload", async () => {
    const { meeting, ws } = await setup()
    const reader = await ws.addUser({ role: "ADMIN", scopes: ["meetings:read"] })
    const big = new Uint8Array(27 * 1024 * 1024).fill(0x61)
    expectError(await upload(reader.token, meeting.id, { name: "big.txt", content: big }), 403, "insufficient_scope")
    const stranger = await setup()
    expectError(await upload(stranger.token, meeting.id, { name: "big.txt", content: big }), 404, "not_found")
    expect((await reader.api.get(`/v1/meetings/${meeting.id}/context`)).status).toBe(200)
    expectList(await stranger.api.get(`/v1/meetings/${stranger.meeting.id}/context`), { total: 0 })
  })

  it("deleting the meeting deletes its context", async () => {
    const { api, meeting, token } = await setup()
    const created = (await upload(token, meeting.id, { name: "a.txt", content: "hello" })).body
    expect((await api.delete(`/v1/meetings/${meeting.id}`)).status).toBe(204)
    expectError(await api.get(`/v1/meetings/${meeting.id}/context/${created.id}`), 404, "not_found")
  })
})

describe("events", () => {
  it("an upload records context.uploaded with the item, seen on the caller's event stream", async () => {
    const { meeting, token } = await setup()
    const { envelope, made } = await streamedEvent(
      server.url,
      token,
      "context.uploaded",
      async () => (await upload(token, meeting.id, { name: "a.txt", content: "hello" })).body
    )
    expect(envelope).toMatchObject({ event_type: "context.uploaded", data: made })
  })
})
