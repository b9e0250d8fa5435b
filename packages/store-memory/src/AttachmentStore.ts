import { type AttachmentId, type AttachmentRow, AttachmentStore, Pagination } from "@convene/core"
import { Effect, HashMap, Layer, Option } from "effect"
import { getRow, Memory, oldestFirst, putRow, removeRow, rowsOf } from "./Memory.js"

export const layer: Layer.Layer<AttachmentStore, never, Memory> = Layer.effect(
  AttachmentStore,
  Effect.gen(function*() {
    const memory = yield* Memory

    const rowsOfMeeting = (rows: HashMap.HashMap<AttachmentId, AttachmentRow>, meetingId: string) =>
      HashMap.toValues(rows).filter((row) => row.meeting_id === meetingId)

    return AttachmentStore.of({
      insert: Effect.fnUntraced(function*(row) {
        yield* memory.modify((state) => [undefined, {
          ...state,
          attachments: putRow(state.attachments, row.workspace_id, row.id, row)
        }])
      }),

      get: Effect.fnUntraced(function*(workspaceId, id) {
        const state = yield* memory.read
        return getRow(state.attachments, workspaceId, id)
      }),

      list: Effect.fnUntraced(function*(workspaceId, meetingId, page) {
        const state = yield* memory.read
        return Pagination.sliceOf(rowsOfMeeting(rowsOf(state.attachments, workspaceId), meetingId).sort(oldestFirst), page)
      }),

      delete: Effect.fnUntraced(function*(workspaceId, id) {
        return yield* memory.modify((state) =>
          Option.isNone(getRow(state.attachments, workspaceId, id))
            ? [false, state]
            : [true, { ...state, attachments: removeRow(state.attachments, workspaceId, id) }]
        )
      }),

      deleteByMeeting: Effect.fnUntraced(function*(workspaceId, meetingId) {
        yield* memory.modify((state) => {
          const rows = rowsOf(state.attachments, workspaceId)
          const gone = rowsOfMeeting(rows, meetingId).map((row) => row.id)
          return [undefined, { ...state, attachments: HashMap.set(state.attachments, workspaceId, HashMap.removeMany(rows, gone)) }]
        })
      }),

      deleteByWorkspace: Effect.fnUntraced(function*(workspaceId) {
        yield* memory.modify((state) => [undefined, { ...state, attachments: HashMap.remove(state.attachments, workspaceId) }])
      }),

      existing: Effect.fnUntraced(function*(ids) {
        const state = yield* memory.read
        const wanted = new Set<string>(ids)
        const found = new Set<AttachmentId>()
        for (const rows of HashMap.values(state.attachments)) {
          for (const id of HashMap.keys(rows)) if (wanted.has(id)) found.add(id)
        }
        return found
      })
    })
  })
)
