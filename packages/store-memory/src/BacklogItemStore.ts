import { type BacklogItemId, BacklogItemRow, BacklogItemStore, closedAt, Pagination, trusted } from "@convene/core"
import { Effect, HashMap, Layer, Option } from "effect"
import { getRow, mapRows, Memory, oldestFirst, putRow, rowsOf } from "./Memory.js"

type TalkingPoints = HashMap.HashMap<BacklogItemId, HashMap.HashMap<string, ReadonlyArray<string>>>

/** The instant a closed row was closed, in epoch milliseconds. */
const closedMillis = (row: BacklogItemRow): number => closedAt(row)?.epochMillis ?? 0

/** Most recently closed first, then id descending. */
const recentlyClosedFirst = (a: BacklogItemRow, b: BacklogItemRow): number =>
  closedMillis(b) - closedMillis(a) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)

export const layer: Layer.Layer<BacklogItemStore, never, Memory> = Layer.effect(
  BacklogItemStore,
  Effect.gen(function*() {
    const memory = yield* Memory

    const pointsOf = (table: TalkingPoints, itemId: BacklogItemId) =>
      Option.getOrElse(HashMap.get(table, itemId), () => HashMap.empty<string, ReadonlyArray<string>>())

    return BacklogItemStore.of({
      insert: Effect.fnUntraced(function*(row) {
        yield* memory.modify((state) => [undefined, {
          ...state,
          backlogItems: putRow(state.backlogItems, row.workspace_id, row.id, row)
        }])
      }),

      update: Effect.fnUntraced(function*(row) {
        return yield* memory.modify((state) => {
          const stored = getRow(state.backlogItems, row.workspace_id, row.id)
          if (Option.isNone(stored) || stored.value.status !== "open") return [false, state]
          return [true, { ...state, backlogItems: putRow(state.backlogItems, row.workspace_id, row.id, row) }]
        })
      }),

      get: Effect.fnUntraced(function*(workspaceId, id) {
        const state = yield* memory.read
        return getRow(state.backlogItems, workspaceId, id)
      }),

      listOpen: Effect.fnUntraced(function*(workspaceId, page) {
        const state = yield* memory.read
        const rows = HashMap.toValues(rowsOf(state.backlogItems, workspaceId)).filter((row) => row.status === "open")
        return Pagination.sliceOf(rows.sort(oldestFirst), page)
      }),

      listClosed: Effect.fnUntraced(function*(workspaceId, page) {
        const state = yield* memory.read
        const rows = HashMap.toValues(rowsOf(state.backlogItems, workspaceId)).filter((row) => row.status !== "open")
        return Pagination.sliceOf(rows.sort(recentlyClosedFirst), page)
      }),

      deleteByWorkspace: Effect.fnUntraced(function*(workspaceId) {
        yield* memory.modify((state) => {
          const gone = [...HashMap.keys(rowsOf(state.backlogItems, workspaceId))]
          return [undefined, {
            ...state,
            backlogItems: HashMap.remove(state.backlogItems, workspaceId),
            backlogTalkingPoints: HashMap.removeMany(state.backlogTalkingPoints, gone)
          }]
        })
      }),

      removePresenter: Effect.fnUntraced(function*(workspaceId, userId) {
        yield* memory.modify((state) => [undefined, {
          ...state,
          backlogItems: mapRows(
            state.backlogItems,
            workspaceId,
            HashMap.map((row) =>
              row.presenters.includes(userId)
                ? new BacklogItemRow({ ...row, presenters: row.presenters.filter((id) => id !== userId) }, trusted)
                : row
            )
          )
        }])
      }),

      talkingPoints: Effect.fnUntraced(function*(itemIds, subject) {
        const state = yield* memory.read
        const found = new Map<BacklogItemId, ReadonlyArray<string>>()
        for (const itemId of itemIds) {
          const points = HashMap.get(pointsOf(state.backlogTalkingPoints, itemId), subject)
          if (Option.isSome(points)) found.set(itemId, points.value)
        }
        return found
      }),

      talkingPointsOfEveryone: Effect.fnUntraced(function*(itemId) {
        const state = yield* memory.read
        return new Map(pointsOf(state.backlogTalkingPoints, itemId))
      }),

      setTalkingPoints: Effect.fnUntraced(function*(itemId, subject, points) {
        yield* memory.modify((state) => {
          const bySubject = pointsOf(state.backlogTalkingPoints, itemId)
          const next = points.length === 0 ? HashMap.remove(bySubject, subject) : HashMap.set(bySubject, subject, [...points])
          return [undefined, {
            ...state,
            backlogTalkingPoints: HashMap.isEmpty(next)
              ? HashMap.remove(state.backlogTalkingPoints, itemId)
              : HashMap.set(state.backlogTalkingPoints, itemId, next)
          }]
        })
      }),

      deleteTalkingPointsOf: Effect.fnUntraced(function*(workspaceId, subject) {
        yield* memory.modify((state) => {
          const items = new Set<BacklogItemId>(HashMap.keys(rowsOf(state.backlogItems, workspaceId)))
          const backlogTalkingPoints = HashMap.filterMap(state.backlogTalkingPoints, (bySubject, itemId) => {
            if (!items.has(itemId)) return Option.some(bySubject)
            const kept = HashMap.remove(bySubject, subject)
            return HashMap.isEmpty(kept) ? Option.none() : Option.some(kept)
          })
          return [undefined, { ...state, backlogTalkingPoints }]
        })
      })
    })
  })
)
