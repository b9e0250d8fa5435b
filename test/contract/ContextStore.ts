import {
  ContextItemId,
  ContextItemRow,
  type ContextKind,
  ContextStore,
  type Meeting,
  MeetingStore,
  type StorePorts,
  Transactor,
  TranscriptSegment
} from "@convene/core"
import { addEqualityTesters, expect, layer } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import { ids, minutes, seedMeeting, seedMeetingInNewWorkspace, sortedIds, T0, uuid } from "./fixtures.js"

const everything = { limit: 100, offset: 0 }

const contextItem = (
  of: Meeting,
  fields: Partial<{
    id: string
    kind: ContextKind
    file_name: string
    content_type: string
    size: number
    created_at: typeof T0
  }> = {}
): ContextItemRow =>
  new ContextItemRow({
    id: ContextItemId.make(fields.id ?? uuid()),
    workspace_id: of.workspace_id,
    meeting_id: of.id,
    kind: fields.kind ?? "document",
    file_name: fields.file_name ?? "notes.md",
    content_type: fields.content_type ?? "text/markdown",
    size: fields.size ?? 6,
    created_at: fields.created_at ?? T0
  })

const seedItem = (of: Meeting, text = "hello\n", fields: Parameters<typeof contextItem>[1] = {}) =>
  Effect.gen(function*() {
    const row = contextItem(of, fields)
    yield* (yield* ContextStore).insert(row, text)
    return row
  })

export const suite = (name: string, storeLayer: Layer.Layer<StorePorts, unknown>) => {
  addEqualityTesters()

  layer(storeLayer)(`ContextStore (${name})`, (it) => {
    it.effect("insert then get answers every field, and text answers the text as stored", () =>
      Effect.gen(function*() {
        const store = yield* ContextStore
        const m = yield* seedMeetingInNewWorkspace()
        const text = "Café ✓ naïve\n[EMAIL] and 🎉 emoji\n"
        const row = contextItem(m, {
          kind: "transcript",
          file_name: "Stand-up 📅.vtt",
          content_type: "text/vtt",
          size: 1234,
          created_at: minutes(3)
        })
        yield* store.insert(row, text)
        expect(yield* store.get(m.workspace_id, row.id)).toEqual(Option.some(row))
        expect(yield* store.text(m.workspace_id, row.id)).toEqual(Option.some(text))
        expect(Option.isNone(yield* store.get(m.workspace_id, ContextItemId.make(uuid())))).toBe(true)
        expect(Option.isNone(yield* store.text(m.workspace_id, ContextItemId.make(uuid())))).toBe(true)
      }))

    it.effect("reads are scoped by workspace: another workspace's id finds nothing, and cannot delete it", () =>
      Effect.gen(function*() {
        const store = yield* ContextStore
        const m = yield* seedMeetingInNewWorkspace()
        const other = yield* seedMeetingInNewWorkspace()
        const row = yield* seedItem(m)
        expect(Option.isNone(yield* store.get(other.workspace_id, row.id))).toBe(true)
        expect(Option.isNone(yield* store.text(other.workspace_id, row.id))).toBe(true)
        expect(yield* store.delete(other.workspace_id, row.id)).toBe(false)
        expect((yield* store.list(other.workspace_id, m.id, everything)).total).toBe(0)
        expect(Option.isSome(yield* store.get(m.workspace_id, row.id))).toBe(true)
      }))

    it.effect("list answers the meeting's items oldest first (ties by id), paged, with the total", () =>
      Effect.gen(function*() {
        const store = yield* ContextStore
        const m = yield* seedMeetingInNewWorkspace()
        const elsewhere = yield* seedMeeting(m.workspace_id)
        const [a, b, c] = sortedIds(3)
        const later = yield* seedItem(m, "3\n", { id: a!, created_at: minutes(5) })
        const tieSecond = yield* seedItem(m, "2\n", { id: c!, created_at: minutes(1) })
        const tieFirst = yield* seedItem(m, "1\n", { id: b!, created_at: minutes(1) })
        yield* seedItem(elsewhere)
        const all = yield* store.list(m.workspace_id, m.id, everything)
        expect(ids(all.items)).toEqual([tieFirst.id, tieSecond.id, later.id])
        expect(all.total).toBe(3)
        expect(all.items[0]).toEqual(tieFirst)
        const second = yield* store.list(m.workspace_id, m.id, { limit: 1, offset: 1 })
        expect(ids(second.items)).toEqual([tieSecond.id])
        expect(second.total).toBe(3)
        const past = yield* store.list(m.workspace_id, m.id, { limit: 10, offset: 10 })
        expect(past.items).toEqual([])
        expect(past.total).toBe(3)
      }))

    it.effect("delete removes the item with its text and answers whether it existed", () =>
      Effect.gen(function*() {
        const store = yield* ContextStore
        const m = yield* seedMeetingInNewWorkspace()
        const gone = yield* seedItem(m)
        const kept = yield* seedItem(m)
        expect(yield* store.delete(m.workspace_id, gone.id)).toBe(true)
        expect(yield* store.delete(m.workspace_id, gone.id)).toBe(false)
        expect(Option.isNone(yield* store.get(m.workspace_id, gone.id))).toBe(true)
        expect(Option.isNone(yield* store.text(m.workspace_id, gone.id))).toBe(true)
        expect(ids((yield* store.list(m.workspace_id, m.id, everything)).items)).toEqual([kept.id])
      }))

    it.effect("deleteByMeeting removes that meeting's items only; then the meeting itself can go", () =>
      Effect.gen(function*() {
        const store = yield* ContextStore
        const meetings = yield* MeetingStore
        const { withTransaction } = yield* Transactor
        const m = yield* seedMeetingInNewWorkspace()
        const sibling = yield* seedMeeting(m.workspace_id)
        yield* seedItem(m)
        yield* seedItem(m)
        const kept = yield* seedItem(sibling)
        yield* withTransaction(Effect.zipRight(store.deleteByMeeting(m.workspace_id, m.id), meetings.delete(m.workspace_id, m.id)))
        expect((yield* store.list(m.workspace_id, m.id, everything)).total).toBe(0)
        expect(ids((yield* store.list(m.workspace_id, sibling.id, everything)).items)).toEqual([kept.id])
      }))

    it.effect("deleteByWorkspace removes every item of the workspace and nothing else", () =>
      Effect.gen(function*() {
        const store = yield* ContextStore
        const m = yield* seedMeetingInNewWorkspace()
        const other = yield* seedMeetingInNewWorkspace()
        const gone = yield* seedItem(m)
        const kept = yield* seedItem(other)
        yield* store.deleteByWorkspace(m.workspace_id)
        expect(Option.isNone(yield* store.get(m.workspace_id, gone.id))).toBe(true)
        expect(Option.isSome(yield* store.get(other.workspace_id, kept.id))).toBe(true)
        // Idempotent.
        yield* store.deleteByWorkspace(m.workspace_id)
      }))

    it.effect("the transcript a transcript upload feeds reads in numeric order of offset_ms (10 s after 2 s)", () =>
      Effect.gen(function*() {
        const meetings = yield* MeetingStore
        const m = yield* seedMeetingInNewWorkspace()
        const at = (offset_ms: number, speaker: string) =>
          new TranscriptSegment({ meeting_id: m.id, offset_ms, speaker, text: "x", created_at: T0 })
        yield* meetings.appendTranscript(m.workspace_id, [at(10_000, "Eve"), at(2_000, "Dana"), at(100_000, "Fay"), at(9_000, "Gus")])
        expect((yield* meetings.transcript(m.workspace_id, m.id)).map((s) => s.speaker)).toEqual(["Dana", "Gus", "Eve", "Fay"])
      }))

    it.effect("an insert inside a transaction that fails is rolled back with it", () =>
      Effect.gen(function*() {
        const store = yield* ContextStore
        const { withTransaction } = yield* Transactor
        const m = yield* seedMeetingInNewWorkspace()
        const row = contextItem(m)
        const failed = yield* withTransaction(Effect.zipRight(store.insert(row, "text\n"), Effect.fail("boom" as const))).pipe(Effect.flip)
        expect(failed).toBe("boom")
        expect(Option.isNone(yield* store.get(m.workspace_id, row.id))).toBe(true)
        expect(Option.isNone(yield* store.text(m.workspace_id, row.id))).toBe(true)
      }))
  })
}
