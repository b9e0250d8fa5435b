import { type ActionItem, type ActionItemFilter, ActionItemStore, Pagination } from "@convene/core"
import { Effect, HashMap, Layer, Option } from "effect"
import { getRow, Memory, newestFirst, putRow, removeRow, rowsOf, type State } from "./Memory.js"

const matches = (state: State, filter: ActionItemFilter) => (item: ActionItem): boolean =>
  (filter.meetingId === undefined || item.meeting_id === filter.meetingId) &&
  (filter.status === undefined || item.status === filter.status) &&
  (filter.visibleTo === undefined ||
    getRow(state.meetings, item.workspace_id, item.meeting_id).pipe(
      Option.exists((entry) => entry.participants.some((p) => p.user_id === filter.visibleTo))
    ))

export const layer: Layer.Layer<ActionItemStore, never, Memory> = Layer.effect(
  ActionItemStore,
  Effect.gen(function*() {
    const memory = yield* Memory

    return ActionItemStore.of({
      insert: Effect.fnUntraced(function*(item) {
        yield* memory.modify((state) => [undefined, {
          ...state,
          actionItems: putRow(state.actionItems, item.workspace_id, item.id, item)
        }])
      }),

      update: Effect.fnUntraced(function*(item) {
        yield* memory.modify((state) => [
          undefined,
          Option.isSome(getRow(state.actionItems, item.workspace_id, item.id))
            ? { ...state, actionItems: putRow(state.actionItems, item.workspace_id, item.id, item) }
            : state
        ])
      }),

      get: Effect.fnUntraced(function*(workspaceId, id) {
        const state = yield* memory.read
        return getRow(state.actionItems, workspaceId, id)
      }),

      delete: Effect.fnUntraced(function*(workspaceId, id) {
        return yield* memory.modify((state) =>
          Option.isNone(getRow(state.actionItems, workspaceId, id))
            ? [false, state]
            : [true, { ...state, actionItems: removeRow(state.actionItems, workspaceId, id) }]
        )
      }),

      list: Effect.fnUntraced(function*(workspaceId, filter, page) {
        const state = yield* memory.read
        const items = HashMap.toValues(rowsOf(state.actionItems, workspaceId)).filter(matches(state, filter))
        return Pagination.sliceOf(items.sort(newestFirst), page)
      })
    })
  })
)
