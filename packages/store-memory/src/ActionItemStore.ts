import { ActionItem, type ActionItemFilter, ActionItemStore, Pagination, trusted } from "@convene/core"
import { Effect, HashMap, Layer, Option } from "effect"
import { getRow, mapRows, Memory, newestFirst, putRow, removeRow, rowsOf } from "./Memory.js"

const matches = (filter: ActionItemFilter) => (item: ActionItem): boolean =>
  (filter.meetingIds === undefined || filter.meetingIds.includes(item.meeting_id)) &&
  (filter.status === undefined || item.status === filter.status)

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

      deleteByMeeting: Effect.fnUntraced(function*(workspaceId, meetingId) {
        yield* memory.modify((state) => [undefined, {
          ...state,
          actionItems: mapRows(state.actionItems, workspaceId, HashMap.filter((item) => item.meeting_id !== meetingId))
        }])
      }),

      deleteByWorkspace: Effect.fnUntraced(function*(workspaceId) {
        yield* memory.modify((state) => [undefined, { ...state, actionItems: HashMap.remove(state.actionItems, workspaceId) }])
      }),

      unassignUser: Effect.fnUntraced(function*(workspaceId, userId) {
        yield* memory.modify((state) => [undefined, {
          ...state,
          actionItems: mapRows(
            state.actionItems,
            workspaceId,
            HashMap.map((item) =>
              item.assigned_to_user_id === userId ? new ActionItem({ ...item, assigned_to_user_id: null }, trusted) : item
            )
          )
        }])
      }),

      detachAgendaItem: Effect.fnUntraced(function*(workspaceId, agendaItemId) {
        yield* memory.modify((state) => [undefined, {
          ...state,
          actionItems: mapRows(
            state.actionItems,
            workspaceId,
            HashMap.map((item) =>
              item.agenda_item_id === agendaItemId ? new ActionItem({ ...item, agenda_item_id: null }, trusted) : item
            )
          )
        }])
      }),

      list: Effect.fnUntraced(function*(workspaceId, filter, page) {
        const state = yield* memory.read
        const items = HashMap.toValues(rowsOf(state.actionItems, workspaceId)).filter(matches(filter))
        return Pagination.sliceOf(items.sort(newestFirst), page)
      })
    })
  })
)
