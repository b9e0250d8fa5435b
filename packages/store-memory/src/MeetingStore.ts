import {
  type Meeting,
  type MeetingFilter,
  type MeetingOrder,
  MeetingStore,
  normalizeEmail,
  Pagination,
  type ParticipantRow
} from "@convene/core"
import { DateTime, Effect, HashMap, Layer, Option } from "effect"
import { type Compare, getRow, mapRows, Memory, newestFirst, oldestFirst, type MeetingEntry, putRow, removeRow, rowsOf, type State } from "./Memory.js"

/** start_time asc; meetings without one come last, where PostgreSQL puts NULL in an ascending order. */
const startTime: Compare<Meeting> = (a, b) =>
  a.start_time === null
    ? (b.start_time === null ? 0 : 1)
    : b.start_time === null
    ? -1
    : a.start_time.epochMillis - b.start_time.epochMillis

const orders: Record<MeetingOrder, Compare<Meeting>> = {
  created_desc: newestFirst,
  start_asc: (a, b) => startTime(a, b) || oldestFirst(a, b)
}

const notOver = (meeting: Meeting, start: DateTime.Utc, at: DateTime.Utc): boolean =>
  meeting.end_time !== null
    ? DateTime.greaterThanOrEqualTo(meeting.end_time, at)
    : meeting.status === "in_progress" || DateTime.greaterThanOrEqualTo(start, at)

const matches = (filter: MeetingFilter) => {
  const title = filter.titleContains?.toLowerCase()
  return ({ meeting, participants }: MeetingEntry): boolean => {
    const start = meeting.start_time
    return (filter.visibleTo === undefined || participants.some((p) => p.user_id === filter.visibleTo)) &&
      (title === undefined || meeting.title.toLowerCase().includes(title)) &&
      (filter.statuses === undefined || filter.statuses.includes(meeting.status)) &&
      (filter.startFrom === undefined || (start !== null && DateTime.greaterThanOrEqualTo(start, filter.startFrom))) &&
      (filter.startBefore === undefined || (start !== null && DateTime.lessThan(start, filter.startBefore))) &&
      (filter.notOverAt === undefined || (start !== null && notOver(meeting, start, filter.notOverAt)))
  }
}

/** The same person: the same user, or the same guest address compared case-insensitively. */
const samePerson = (a: ParticipantRow, b: ParticipantRow): boolean =>
  a.user_id !== null
    ? a.user_id === b.user_id
    : b.user_id === null && a.guest_email !== null && b.guest_email !== null &&
      normalizeEmail(a.guest_email) === normalizeEmail(b.guest_email)

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

      delete: Effect.fnUntraced(function*(workspaceId, meetingId) {
        return yield* memory.modify((state) => {
          if (Option.isNone(getRow(state.meetings, workspaceId, meetingId))) return [false, state]
          const agendaItems = rowsOf(state.agendaItems, workspaceId)
          const gone = HashMap.toValues(agendaItems).filter((item) => item.meeting_id === meetingId).map((item) => item.id)
          return [true, {
            ...state,
            meetings: removeRow(state.meetings, workspaceId, meetingId),
            agendaItems: HashMap.set(state.agendaItems, workspaceId, HashMap.removeMany(agendaItems, gone)),
            talkingPoints: HashMap.removeMany(state.talkingPoints, gone),
            actionItems: mapRows(state.actionItems, workspaceId, HashMap.filter((item) => item.meeting_id !== meetingId))
          }]
        })
      }),

      list: Effect.fnUntraced(function*(workspaceId, filter, order, page) {
        const state = yield* memory.read
        const keep = matches(filter)
        const meetings: Array<Meeting> = []
        for (const entry of HashMap.values(rowsOf(state.meetings, workspaceId))) {
          if (keep(entry)) meetings.push(entry.meeting)
        }
        return Pagination.sliceOf(meetings.sort(orders[order]), page)
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
