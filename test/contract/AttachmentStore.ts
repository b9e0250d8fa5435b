import { AttachmentId, AttachmentRow, AttachmentStore, type Meeting, MeetingStore, type StorePorts, Transactor } from "@convene/core"
import { addEqualityTesters, expect, layer } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import { ids, minutes, seedMeeting, seedMeetingInNewWorkspace, sortedIds, T0, uuid } from "./fixtures.js"

const everything = { limit: 100, offset: 0 }

const attachment = (
  of: Meeting,
  fields: Partial<{ id: string; file_name: string; content_type: string; size: number; sha256: string; created_at: typeof T0 }> = {}
): AttachmentRow =>
  new AttachmentRow({
    id: AttachmentId.make(fields.id ?? uuid()),
    workspace_id: of.workspace_id,
    meeting_id: of.id,
    file_name: fields.file_name ?? "minutes.pdf",
    content_type: fields.content_type ?? "application/pdf",
    size: fields.size ?? 3,
    sha256: fields.sha256 ?? "ab".repeat(32),
    created_at: fields.created_at ?? T0
  })

const seedAttachment = (of: Meeting, fields: Parameters<typeof attachment>[1] = {}) =>
  Effect.gen(function*() {
    const row = attachment(of, fields)
    yield* (yield* AttachmentStore).insert(row)
    return row
  })

export const suite = (name: string, storeLayer: Layer.Layer<StorePorts, unknown>) => {
  addEqualityTesters()

  layer(storeLayer)(`AttachmentStore (${name})`, (it) => {
    it.effect("insert then get answers every field as stored", () =>
      Effect.gen(function*() {
        const store = yield* AttachmentStore
        const m = yield* seedMeetingInNewWorkspace()
        const row = attachment(m, {
          file_name: "Plan \"final\" 📅 ü.bin",
          content_type: "text/plain; charset=\"utf-8\"",
          size: 26 * 1024 * 1024,
          sha256: "0123456789abcdef".repeat(4),
          created_at: minutes(3)
        })
        yield* store.insert(row)
        expect(yield* store.get(m.workspace_id, row.id)).toEqual(Option.some(row))
        expect(Option.isNone(yield* store.get(m.workspace_id, AttachmentId.make(uuid())))).toBe(true)
      }))

    it.effect("reads are scoped by workspace: another workspace's id finds nothing and cannot delete it", () =>
      Effect.gen(function*() {
        const store = yield* AttachmentStore
        const m = yield* seedMeetingInNewWorkspace()
        const other = yield* seedMeetingInNewWorkspace()
        const row = yield* seedAttachment(m)
        expect(Option.isNone(yield* store.get(other.workspace_id, row.id))).toBe(true)
        expect(yield* store.delete(other.workspace_id, row.id)).toBe(false)
        expect((yield* store.list(other.workspace_id, m.id, everything)).total).toBe(0)
        expect(Option.isSome(yield* store.get(m.workspace_id, row.id))).toBe(true)
      }))

    it.effect("list answers the meeting's attachments oldest first (ties by id), paged, with the total", () =>
      Effect.gen(function*() {
        const store = yield* AttachmentStore
        const m = yield* seedMeetingInNewWorkspace()
        const elsewhere = yield* seedMeeting(m.workspace_id)
        const [a, b, c] = sortedIds(3)
        const later = yield* seedAttachment(m, { id: a!, created_at: minutes(5) })
        const tieSecond = yield* seedAttachment(m, { id: c!, created_at: minutes(1) })
        const tieFirst = yield* seedAttachment(m, { id: b!, created_at: minutes(1) })
        yield* seedAttachment(elsewhere)
        const all = yield* store.list(m.workspace_id, m.id, everything)
        expect([ids(all.items), all.total]).toEqual([ids([tieFirst, tieSecond, later]), 3])
        const second = yield* store.list(m.workspace_id, m.id, { limit: 1, offset: 1 })
        expect([ids(second.items), second.total]).toEqual([[tieSecond.id], 3])
        const past = yield* store.list(m.workspace_id, m.id, { limit: 10, offset: 10 })
        expect([past.items, past.total]).toEqual([[], 3])
      }))

    it.effect("delete answers whether it existed; deleteByMeeting and deleteByWorkspace take only their own", () =>
      Effect.gen(function*() {
        const store = yield* AttachmentStore
        const m = yield* seedMeetingInNewWorkspace()
        const sibling = yield* seedMeeting(m.workspace_id)
        const other = yield* seedMeetingInNewWorkspace()
        const gone = yield* seedAttachment(m)
        const onM = yield* seedAttachment(m)
        const onSibling = yield* seedAttachment(sibling)
        const onOther = yield* seedAttachment(other)
        expect(yield* store.delete(m.workspace_id, gone.id)).toBe(true)
        expect(yield* store.delete(m.workspace_id, gone.id)).toBe(false)
        yield* store.deleteByMeeting(m.workspace_id, m.id)
        expect(Option.isNone(yield* store.get(m.workspace_id, onM.id))).toBe(true)
        expect(Option.isSome(yield* store.get(m.workspace_id, onSibling.id))).toBe(true)
        yield* store.deleteByWorkspace(m.workspace_id)
        expect(Option.isNone(yield* store.get(m.workspace_id, onSibling.id))).toBe(true)
        expect(Option.isSome(yield* store.get(other.workspace_id, onOther.id))).toBe(true)
      }))

    it.effect("existing answers which ids have a record, in any workspace", () =>
      Effect.gen(function*() {
        const store = yield* AttachmentStore
        const m = yield* seedMeetingInNewWorkspace()
        const other = yield* seedMeetingInNewWorkspace()
        const a = yield* seedAttachment(m)
        const b = yield* seedAttachment(other)
        const missing = AttachmentId.make(uuid())
        expect([...(yield* store.existing([a.id, missing, b.id]))].sort()).toEqual([a.id, b.id].sort())
        expect((yield* store.existing([])).size).toBe(0)
      }))

    it.effect("a rolled-back insert leaves nothing; a meeting deleted with its attachments in one transaction", () =>
      Effect.gen(function*() {
        const store = yield* AttachmentStore
        const { withTransaction } = yield* Transactor
        const m = yield* seedMeetingInNewWorkspace()
        const row = attachment(m)
        const failed = yield* Effect.either(withTransaction(Effect.zipRight(store.insert(row), Effect.fail("undo"))))
        expect(failed._tag).toBe("Left")
        expect(Option.isNone(yield* store.get(m.workspace_id, row.id))).toBe(true)
        const kept = yield* seedAttachment(m)
        yield* withTransaction(Effect.gen(function*() {
          yield* store.deleteByMeeting(m.workspace_id, m.id)
          yield* (yield* MeetingStore).delete(m.workspace_id, m.id)
        }))
        expect(Option.isNone(yield* store.get(m.workspace_id, kept.id))).toBe(true)
      }))
  })
}
