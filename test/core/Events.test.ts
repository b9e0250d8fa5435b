/**
 * The outbox: every change the documents name as an event records exactly that event, with the actor and the
 * resource as the API shows it, in the same unit of work as the change; a change that fails records nothing.
 */
import { describe, expect, layer } from "@effect/vitest"
import {
  ActionItems,
  AgendaItems,
  CreateActionItem,
  CreateAgendaItem,
  CreateMeeting,
  EventEnvelope,
  EventLog,
  MeetingId,
  Meetings,
  ParticipantEntry,
  Participants,
  AddParticipants,
  UpdateActionItem,
  UpdateAgendaItem,
  UpdateMeeting,
  type WorkspaceId
} from "@convene/core"
import { DateTime, Effect, Schema } from "effect"
import { apiKeyFor, CoreLive, freshEmail, principalFor } from "./fixtures.js"

/** The events of the workspace recorded after `position`, as (type, actor, data) triples. */
const since = (workspaceId: WorkspaceId, position: number) =>
  Effect.map(Effect.flatMap(EventLog, (log) => log.after(workspaceId, position, 100)), (logged) =>
    logged.map(({ event }) => ({ type: event.type, actor: event.actor_user_id, data: event.data })))

const headOf = (workspaceId: WorkspaceId) => Effect.flatMap(EventLog, (log) => log.head(workspaceId))

describe("events recorded with their change", () => {
  layer(CoreLive)((it) => {
    it.effect("meetings: created, updated, ended and deleted, each once, with the meeting as the API shows it", () =>
      Effect.gen(function*() {
        const { principal, user, workspace } = yield* principalFor({ role: "OWNER" })
        const meetings = yield* Meetings
        const start = yield* headOf(workspace.id)
        const meeting = yield* meetings.create(principal, CreateMeeting.make({ title: "Weekly" }))
        yield* meetings.update(principal, meeting.id, UpdateMeeting.make({ title: "Weekly sync" }))
        yield* meetings.update(principal, meeting.id, UpdateMeeting.make({ status: "in_progress" }))
        const ended = yield* meetings.update(principal, meeting.id, UpdateMeeting.make({ status: "ended" }))
        yield* meetings.delete(principal, meeting.id)
        const recorded = yield* since(workspace.id, start)
        expect(recorded.map((event) => event.type)).toEqual([
          "meeting.created",
          "meeting.updated",
          "meeting.updated",
          "meeting.ended",
          "meeting.deleted"
        ])
        expect(recorded.every((event) => event.actor === user.id)).toBe(true)
        expect(recorded[0]!.data).toMatchObject({ id: meeting.id, title: "Weekly", status: "scheduled" })
        // As on the wire: plain JSON, timestamps as RFC 3339 text.
        expect(JSON.parse(JSON.stringify(recorded[3]!.data))).toEqual(recorded[3]!.data)
        expect(recorded[3]!.data).toMatchObject({ title: "Weekly sync", status: "ended", end_time: DateTime.formatIso(ended.end_time!) })
        expect(recorded[4]!.data).toEqual({ id: meeting.id, workspace_id: workspace.id })
      }))

    it.effect("agenda items, action items and participants record theirs; talking points never travel in an event", () =>
      Effect.gen(function*() {
        const { principal, workspace } = yield* principalFor({ role: "OWNER" })
        const meeting = yield* (yield* Meetings).create(principal, CreateMeeting.make({ title: "Plan" }))
        const start = yield* headOf(workspace.id)
        const agenda = yield* AgendaItems
        const item = yield* agenda.create(principal, CreateAgendaItem.make({ meeting_id: meeting.id, title: "Budget", talking_points: ["secret note"] }))
        yield* agenda.update(principal, item.id, UpdateAgendaItem.make({ title: "Budget 2027" }))
        const actions = yield* ActionItems
        const action = yield* actions.create(principal, CreateActionItem.make({ meeting_id: meeting.id, title: "Send numbers", status: "accepted" }))
        yield* actions.update(principal, action.id, UpdateActionItem.make({ title: "Send the numbers" }))
        yield* actions.update(principal, action.id, UpdateActionItem.make({ status: "completed" }))
        yield* actions.delete(principal, action.id)
        yield* agenda.delete(principal, item.id)
        const participants = yield* Participants
        const [guest] = yield* participants.add(principal, meeting.id, AddParticipants.make({
          participants: [ParticipantEntry.make({ guest_email: freshEmail("guest"), role: "VIEWER" })]
        }))
        yield* participants.remove(principal, meeting.id, guest!.id)

        const recorded = yield* since(workspace.id, start)
        expect(recorded.map((event) => event.type)).toEqual([
          "agenda_item.created",
          "agenda_item.updated",
          "action_item.created",
          "action_item.updated",
          "action_item.completed",
          "action_item.deleted",
          "agenda_item.deleted",
          "participant.added",
          "participant.removed"
        ])
        expect(JSON.stringify(recorded)).not.toContain("secret note")
        expect(recorded[0]!.data).toMatchObject({ id: item.id, meeting_id: meeting.id, title: "Budget" })
        expect(recorded[4]!.data).toMatchObject({ id: action.id, status: "completed", is_completed: true })
        expect(recorded[5]!.data).toEqual({ id: action.id, meeting_id: meeting.id, workspace_id: workspace.id })
        expect(recorded[7]!.data).toMatchObject({ meeting_id: meeting.id, role: "VIEWER" })
      }))

    it.effect("a change that fails records nothing: the 21st meeting of a FREE month, a refused move", () =>
      Effect.gen(function*() {
        const { principal, workspace } = yield* principalFor({ plan: "FREE", role: "OWNER" })
        const meetings = yield* Meetings
        for (let i = 0; i < 20; i++) yield* meetings.create(principal, CreateMeeting.make({ title: `M${i}` }))
        const before = yield* headOf(workspace.id)
        const refused = yield* Effect.flip(meetings.create(principal, CreateMeeting.make({ title: "One too many" })))
        expect(refused._tag).toBe("PlanRequired")
        const first = MeetingId.make(String((yield* since(workspace.id, 0))[0]!.data["id"]))
        yield* meetings.update(principal, first, UpdateMeeting.make({ status: "ended" }))
        const afterEnd = yield* headOf(workspace.id)
        expect(yield* Effect.flip(meetings.update(principal, first, UpdateMeeting.make({ status: "scheduled" })))).toMatchObject({ _tag: "Conflict" })
        expect(afterEnd).toBeGreaterThan(before)
        expect(yield* headOf(workspace.id)).toBe(afterEnd)
        expect((yield* since(workspace.id, before)).map((event) => event.type)).toEqual(["meeting.ended"])
      }))

    it.effect("a workspace API key's changes have no actor; the envelope says so with an empty actor_user_id", () =>
      Effect.gen(function*() {
        const { workspace } = yield* principalFor({ plan: "PRO" })
        const key = yield* apiKeyFor(workspace.id)
        const start = yield* headOf(workspace.id)
        yield* (yield* Meetings).create(key, CreateMeeting.make({ title: "From CI" }))
        const [logged] = yield* Effect.flatMap(EventLog, (log) => log.after(workspace.id, start, 10))
        expect(logged!.event.actor_user_id).toBeNull()
        const envelope = Schema.encodeSync(EventEnvelope)(EventEnvelope.of(logged!.event))
        expect(envelope).toMatchObject({ event_type: "meeting.created", actor_user_id: "", workspace_id: workspace.id })
        expect(envelope.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/)
      }))
  })
})
