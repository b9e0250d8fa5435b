import {
  Meeting,
  MeetingFilters,
  type MeetingOrder,
  MeetingStore,
  Pagination,
  type ParticipantRow,
  trusted,
  type WorkspaceId
} from "@convene/core"
import { Effect, HashMap, Layer, Option } from "effect"
import {
  type Compare,
  getRow,
  mapRows,
  Memory,
  newestFirst,
  oldestFirst,
  type MeetingEntry,
  putRow,
  removeRow,
  rowsOf,
  type State
} from "./Memory.js"

/** start_time asc; meetings without one come last, where PostgreSQL puts NULL in an ascending order. */
const startTime: Compare<Meeting> = (a, b) =>
  a.start_time === null
    ? (b.start_time === null ? 0 : 1)
    : b.start_time === null
    ? -1
    : a.start_time.epochMillis - b.start_time.epochMillis

const byId: Compare<Meeting> = (a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

const orders: Record<MeetingOrder, Compare<Meeting>> = {
  created_desc: newestFirst,
  start_asc: (a, b) => startTime(a, b) || oldestFirst(a, b),
  start_id_asc: (a, b) => startTime(a, b) || byId(a, b),
  // The exact reverse, as PostgreSQL reads `start_time DESC, id DESC` (NULL first).
  start_id_desc: (a, b) => startTime(b, a) || byId(b, a)
}

/** The same person: the same user, or the same guest address (core keeps addresses normalised). */
const samePerson = (a: ParticipantRow, b: ParticipantRow): boolean =>
  a.user_id !== null ? a.user_id === b.user_id : b.user_id === null && a.guest_email === b.guest_email

/** Replaces the entry of one meeting (when it exists in the workspace). */
const mapEntry = (
  state: State,
  workspaceId: Meeting["workspace_id"],
  meetingId: Meeting["id"],
  f: (entry: MeetingEntry) => MeetingEntry
): State =>
  Option.match(getRow(state.meetings, workspaceId, meetingId), {
    onNone: () => state,
    onSome: (entry) => ({ ...state, meetings: putRow(state.meetings, workspaceId, meetingId, f(entry)) })
  })

export const layer: Layer.Layer<MeetingStore, never, Memory> = Layer.effect(
  MeetingStore,
  Effect.gen(function*() {
    const memory = yield* Memory

    const entry = (workspaceId: Meeting["workspace_id"], meetingId: Meeting["id"]) =>
      Effect.map(memory.read, (state) => getRow(state.meetings, workspaceId, meetingId))

    return MeetingStore.of({
      insert: Effect.fnUntraced(function*(meeting) {
        yield* memory.modify((state) => [undefined, {
          ...state,
          meetings: putRow(state.meetings, meeting.workspace_id, meeting.id, { meeting, participants: [], transcript: [] })
        }])
      }),

      update: Effect.fnUntraced(function*(meeting) {
        yield* memory.modify((state) => [
          undefined,
          mapEntry(state, meeting.workspace_id, meeting.id, (entry) => ({ ...entry, meeting }))
        ])
      }),

      get: Effect.fnUntraced(function*(workspaceId, id) {
        return Option.map(yield* entry(workspaceId, id), (entry) => entry.meeting)
      }),

      // The entry holds the meeting's participants and transcript: they go with it.
      delete: Effect.fnUntraced(function*(workspaceId, meetingId) {
        return yield* memory.modify((state) =>
          Option.isNone(getRow(state.meetings, workspaceId, meetingId))
            ? [false, state]
            : [true, { ...state, meetings: removeRow(state.meetings, workspaceId, meetingId) }]
        )
      }),

      // The entries hold the meetings' participants and transcripts: they go with them.
      deleteByWorkspace: Effect.fnUntraced(function*(workspaceId) {
        yield* memory.modify((state) => [undefined, { ...state, meetings: HashMap.remove(state.meetings, workspaceId) }])
      }),

      countByWorkspace: Effect.fnUntraced(function*(workspaceIds) {
        const state = yield* memory.read
        const counts = new Map<WorkspaceId, number>()
        for (const workspaceId of new Set(workspaceIds)) {
          const size = HashMap.size(rowsOf(state.meetings, workspaceId))
          if (size > 0) counts.set(workspaceId, size)
        }
        return counts
      }),

      detachOwner: Effect.fnUntraced(function*(workspaceId, userId) {
        yield* memory.modify((state) => [undefined, {
          ...state,
          meetings: mapRows(
            state.meetings,
            workspaceId,
            HashMap.map((entry) =>
              entry.meeting.owner_user_id === userId
                ? { ...entry, meeting: new Meeting({ ...entry.meeting, owner_user_id: null }, trusted) }
                : entry
            )
          )
        }])
      }),

      list: Effect.fnUntraced(function*(workspaceId, filter, order, page) {
        const state = yield* memory.read
        const meetings: Array<Meeting> = []
        for (const { meeting, participants } of HashMap.values(rowsOf(state.meetings, workspaceId))) {
          if (MeetingFilters.matches(filter, meeting, participants)) meetings.push(meeting)
        }
        return Pagination.sliceOf(meetings.sort(orders[order]), page)
      }),

      meetingIdsOf: Effect.fnUntraced(function*(workspaceId, userId) {
        const state = yield* memory.read
        const ids: Array<Meeting["id"]> = []
        for (const { meeting, participants } of HashMap.values(rowsOf(state.meetings, workspaceId))) {
          if (participants.some((participant) => participant.user_id === userId)) ids.push(meeting.id)
        }
        return ids
      }),

      addParticipants: Effect.fnUntraced(function*(rows) {
        return yield* memory.modify((state) => {
          let next = state
          const stored = rows.map((row) => {
            const existing = getRow(next.meetings, row.workspace_id, row.meeting_id).pipe(
              Option.flatMap((entry) => Option.fromNullable(entry.participants.find((p) => samePerson(row, p))))
            )
            if (Option.isSome(existing)) return existing.value
            next = mapEntry(next, row.workspace_id, row.meeting_id, (entry) => ({
              ...entry,
              participants: [...entry.participants, row]
            }))
            return row
          })
          return [stored, next]
        })
      }),

      listParticipants: Effect.fnUntraced(function*(workspaceId, meetingId) {
        return Option.match(yield* entry(workspaceId, meetingId), {
          onNone: () => [],
          onSome: (entry) => [...entry.participants].sort(oldestFirst)
        })
      }),

      findParticipant: Effect.fnUntraced(function*(workspaceId, meetingId, userId) {
        return (yield* entry(workspaceId, meetingId)).pipe(
          Option.flatMap((entry) => Option.fromNullable(entry.participants.find((p) => p.user_id === userId)))
        )
      }),

      updateParticipant: Effect.fnUntraced(function*(row) {
        yield* memory.modify((state) => [
          undefined,
          mapEntry(state, row.workspace_id, row.meeting_id, (entry) => ({
            ...entry,
            participants: entry.participants.map((p) => p.id === row.id ? row : p)
          }))
        ])
      }),

      removeParticipant: Effect.fnUntraced(function*(workspaceId, participantId) {
        return yield* memory.modify((state) => {
          const holder = HashMap.findFirst(
            rowsOf(state.meetings, workspaceId),
            (entry) => entry.participants.some((p) => p.id === participantId)
          )
          if (Option.isNone(holder)) return [false, state]
          const [meetingId, entry] = holder.value
          return [true, {
            ...state,
            meetings: putRow(state.meetings, workspaceId, meetingId, {
              ...entry,
              participants: entry.participants.filter((p) => p.id !== participantId)
            })
          }]
        })
      }),

      removeUserParticipants: Effect.fnUntraced(function*(workspaceId, userId) {
        yield* memory.modify((state) => [undefined, {
          ...state,
          meetings: mapRows(
            state.meetings,
            workspaceId,
            HashMap.map((entry) =>
              entry.participants.some((p) => p.user_id === userId)
                ? { ...entry, participants: entry.participants.filter((p) => p.user_id !== userId) }
                : entry
            )
          )
        }])
      }),

      appendTranscript: Effect.fnUntraced(function*(workspaceId, segments) {
        yield* memory.modify((state) => [
          undefined,
          segments.reduce(
            (next, segment) =>
              mapEntry(next, workspaceId, segment.meeting_id, (entry) => ({
                ...entry,
                transcript: [...entry.transcript, segment]
              })),
            state
          )
        ])
      }),

      transcript: Effect.fnUntraced(function*(workspaceId, meetingId) {
        return Option.match(yield* entry(workspaceId, meetingId), {
          onNone: () => [],
          // Array.prototype.sort is stable, so equal offsets keep their insertion order.
          onSome: (entry) => [...entry.transcript].sort((a, b) => a.offset_ms - b.offset_ms)
        })
      })
    })
  })
)
