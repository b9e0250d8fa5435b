import {
  type AgendaItemFilter,
  type AgendaItemId,
  AgendaItemRow,
  AgendaItemStore,
  compareSequence,
  Pagination,
  type Sequence,
  trusted
} from "@convene/core"
import { BigDecimal, Effect, HashMap, Layer, Option } from "effect"
import { getRow, mapRows, Memory, oldestFirst, putRow, removeRow, rowsOf } from "./Memory.js"

/**
 * By the numeric value of sequence (as `compareSequence` orders them), then created_at, then id. Each
 * sequence is parsed once per list rather than once per comparison.
 */
const inAgendaOrder = (rows: ReadonlyArray<AgendaItemRow>): ReadonlyArray<AgendaItemRow> =>
  rows
    .map((row) => ({ row, sequence: Option.getOrThrow(BigDecimal.fromString(row.sequence)) }))
    .sort((a, b) => BigDecimal.Order(a.sequence, b.sequence) || oldestFirst(a.row, b.row))
    .map(({ row }) => row)

const matches = (filter: AgendaItemFilter) => (row: AgendaItemRow): boolean =>
  filter.meetingIds === undefined || filter.meetingIds.includes(row.meeting_id)

export const layer: Layer.Layer<AgendaItemStore, never, Memory> = Layer.effect(
  AgendaItemStore,
  Effect.gen(function*() {
    const memory = yield* Memory

    return AgendaItemStore.of({
      insert: Effect.fnUntraced(function*(row) {
        yield* memory.modify((state) => [undefined, {
          ...state,
          agendaItems: putRow(state.agendaItems, row.workspace_id, row.id, row)
        }])
      }),

      update: Effect.fnUntraced(function*(row) {
        yield* memory.modify((state) => [
          undefined,
          Option.isSome(getRow(state.agendaItems, row.workspace_id, row.id))
            ? { ...state, agendaItems: putRow(state.agendaItems, row.workspace_id, row.id, row) }
            : state
        ])
      }),

      get: Effect.fnUntraced(function*(workspaceId, id) {
        const state = yield* memory.read
        return getRow(state.agendaItems, workspaceId, id)
      }),

      delete: Effect.fnUntraced(function*(workspaceId, id) {
        return yield* memory.modify((state) => {
          if (Option.isNone(getRow(state.agendaItems, workspaceId, id))) return [false, state]
          return [true, {
            ...state,
            agendaItems: removeRow(state.agendaItems, workspaceId, id),
            talkingPoints: HashMap.remove(state.talkingPoints, id)
          }]
        })
      }),

      deleteByMeeting: Effect.fnUntraced(function*(workspaceId, meetingId) {
        yield* memory.modify((state) => {
          const gone = HashMap.toValues(rowsOf(state.agendaItems, workspaceId))
            .filter((item) => item.meeting_id === meetingId)
            .map((item) => item.id)
          return [undefined, {
            ...state,
            agendaItems: mapRows(state.agendaItems, workspaceId, HashMap.removeMany(gone)),
            talkingPoints: HashMap.removeMany(state.talkingPoints, gone)
          }]
        })
      }),

      deleteByWorkspace: Effect.fnUntraced(function*(workspaceId) {
        yield* memory.modify((state) => {
          const gone = HashMap.toValues(rowsOf(state.agendaItems, workspaceId)).map((item) => item.id)
          return [undefined, {
            ...state,
            agendaItems: HashMap.remove(state.agendaItems, workspaceId),
            talkingPoints: HashMap.removeMany(state.talkingPoints, gone)
          }]
        })
      }),

      removePresenter: Effect.fnUntraced(function*(workspaceId, userId) {
        yield* memory.modify((state) => [undefined, {
          ...state,
          agendaItems: mapRows(
            state.agendaItems,
            workspaceId,
            HashMap.map((row) =>
              row.presenters.includes(userId)
                ? new AgendaItemRow({ ...row, presenters: row.presenters.filter((id) => id !== userId) }, trusted)
                : row
            )
          )
        }])
      }),

      deleteTalkingPointsOf: Effect.fnUntraced(function*(workspaceId, subject) {
        yield* memory.modify((state) => {
          const items = new Set<AgendaItemId>(HashMap.keys(rowsOf(state.agendaItems, workspaceId)))
          const talkingPoints = HashMap.filterMap(state.talkingPoints, (bySubject, itemId) => {
            if (!items.has(itemId)) return Option.some(bySubject)
            const kept = HashMap.remove(bySubject, subject)
            return HashMap.isEmpty(kept) ? Option.none() : Option.some(kept)
          })
          return [undefined, { ...state, talkingPoints }]
        })
      }),

      list: Effect.fnUntraced(function*(workspaceId, filter, page) {
        const state = yield* memory.read
        const rows = HashMap.toValues(rowsOf(state.agendaItems, workspaceId)).filter(matches(filter))
        return Pagination.sliceOf(inAgendaOrder(rows), page)
      }),

      listByMeeting: Effect.fnUntraced(function*(workspaceId, meetingId) {
        const state = yield* memory.read
        return inAgendaOrder(
          HashMap.toValues(rowsOf(state.agendaItems, workspaceId)).filter((row) => row.meeting_id === meetingId)
        )
      }),

      lastSequence: Effect.fnUntraced(function*(workspaceId, meetingId) {
        const state = yield* memory.read
        let last: Option.Option<Sequence> = Option.none()
        for (const row of HashMap.values(rowsOf(state.agendaItems, workspaceId))) {
          if (row.meeting_id !== meetingId) continue
          if (Option.isNone(last) || compareSequence(row.sequence, last.value) > 0) last = Option.some(row.sequence)
        }
        return last
      }),

      talkingPoints: Effect.fnUntraced(function*(itemIds, subject) {
        const state = yield* memory.read
        const found = new Map<AgendaItemId, ReadonlyArray<string>>()
        for (const itemId of itemIds) {
          const points = HashMap.get(state.talkingPoints, itemId).pipe(Option.flatMap(HashMap.get(subject)))
          if (Option.isSome(points)) found.set(itemId, points.value)
        }
        return found
      }),

      setTalkingPoints: Effect.fnUntraced(function*(itemId, subject, points) {
        yield* memory.modify((state) => {
          const bySubject = Option.getOrElse(HashMap.get(state.talkingPoints, itemId), () => HashMap.empty<string, ReadonlyArray<string>>())
          const next = points.length === 0 ? HashMap.remove(bySubject, subject) : HashMap.set(bySubject, subject, [...points])
          return [undefined, {
            ...state,
            talkingPoints: HashMap.isEmpty(next) ? HashMap.remove(state.talkingPoints, itemId) : HashMap.set(state.talkingPoints, itemId, next)
          }]
        })
      })
    })
  })
)
