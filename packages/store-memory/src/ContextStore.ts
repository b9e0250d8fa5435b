import { type ContextItemRow, ContextStore, Pagination } from "@convene/core"
import { Effect, HashMap, Layer, Option } from "effect"
import { getRow, Memory, oldestFirst, putRow, removeRow, rowsOf } from "./Memory.js"

export const layer: Layer.Layer<ContextStore, never, Memory> = Layer.effect(
  ContextStore,
  Effect.gen(function*() {
    const memory = yield* Memory

    const rowsOfMeeting = (items: HashMap.HashMap<string, { readonly row: ContextItemRow }>, meetingId: string) =>
      HashMap.toValues(items).map(({ row }) => row).filter((row) => row.meeting_id === meetingId)

    return ContextStore.of({
      insert: Effect.fnUntraced(function*(row, text) {
        yield* memory.modify((state) => [undefined, {
          ...state,
          contextItems: putRow(state.contextItems, row.workspace_id, row.id, { row, text })
        }])
      }),

      get: Effect.fnUntraced(function*(workspaceId, id) {
        const state = yield* memory.read
        return Option.map(getRow(state.contextItems, workspaceId, id), ({ row }) => row)
      }),

      text: Effect.fnUntraced(function*(workspaceId, id) {
        const state = yield* memory.read
        return Option.map(getRow(state.contextItems, workspaceId, id), ({ text }) => text)
      }),

      list: Effect.fnUntraced(function*(workspaceId, meetingId, page) {
        const state = yield* memory.read
        return Pagination.sliceOf(rowsOfMeeting(rowsOf(state.contextItems, workspaceId), meetingId).sort(oldestFirst), page)
      }),

      delete: Effect.fnUntraced(function*(workspaceId, id) {
        return yield* memory.modify((state) =>
          Option.isNone(getRow(state.contextItems, workspaceId, id))
            ? [false, state]
            : [true, { ...state, contextItems: removeRow(state.contextItems, workspaceId, id) }]
        )
      }),

      deleteByMeeting: Effect.fnUntraced(function*(workspaceId, meetingId) {
        yield* memory.modify((state) => {
          const gone = rowsOfMeeting(rowsOf(state.contextItems, workspaceId), meetingId).map((row) => row.id)
          return [undefined, {
            ...state,
            contextItems: HashMap.set(state.contextItems, workspaceId, HashMap.removeMany(rowsOf(state.contextItems, workspaceId), gone))
          }]
        })
      }),

      deleteByWorkspace: Effect.fnUntraced(function*(workspaceId) {
        yield* memory.modify((state) => [undefined, { ...state, contextItems: HashMap.remove(state.contextItems, workspaceId) }])
      })
    })
  })
)
