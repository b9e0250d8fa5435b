/**
 * Every public operation of the core records a span named `Service.method` (STYLE: named spans), so that a
 * trace shows what the domain did. Each operation below runs under a tracer that records span names; the
 * outermost span must be the operation's own.
 */
import {
  ActionItems,
  AgendaItems,
  Authentication,
  Calendar,
  CalendarEventId,
  CreateActionItem,
  CreateAgendaItem,
  ChangeMemberRole,
  CreateApiKey,
  CreateMeeting,
  CreateUser,
  CreateWorkspace,
  Idempotency,
  IssuePersonalAccessToken,
  IssueToken,
  Meetings,
  Participants,
  StoredResponse,
  AddParticipants,
  ChangeRole,
  ParticipantEntry,
  Tokens,
  TranscriptLine,
  UpdateActionItem,
  UpdateAgendaItem,
  UpdateMeeting,
  UpdateUser,
  UpdateWorkspace,
  UpdateWorkspaceSettings,
  WorkspaceAdmin,
  Users,
  Workspaces
} from "@convene/core"
import { describe, expect, layer } from "@effect/vitest"
import { DateTime, Effect, Exit, Redacted } from "effect"
import { CoreLive, freshEmail, principalFor, spansOf } from "./fixtures.js"

const expectSpan = <A, E, R>(name: string, effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const { exit, names } = yield* spansOf(effect)
    expect(Exit.isSuccess(exit), `${name} succeeds`).toBe(true)
    expect(names[0], `the outermost span of ${name}`).toBe(name)
  })

describe("spans", () => {
  layer(CoreLive)((it) => {
    it.effect("every public operation records a span named Service.method", () =>
      Effect.gen(function*() {
        const meetings = yield* Meetings
        const participants = yield* Participants
        const agenda = yield* AgendaItems
        const actions = yield* ActionItems
        const tokens = yield* Tokens
        const users = yield* Users
        const workspaces = yield* Workspaces
        const authentication = yield* Authentication
        const idempotency = yield* Idempotency
        const { principal, token, user, workspace } = yield* principalFor({ plan: "PRO", role: "OWNER", kind: "personal_access_token" })
        const colleague = yield* users.create(workspace.id, CreateUser.make({ email: freshEmail(), name: "Col", role: "MEMBER" }))
        const meeting = yield* meetings.create(principal, CreateMeeting.make({ title: "Traced" }))
        const item = yield* agenda.create(principal, CreateAgendaItem.make({ meeting_id: meeting.id, title: "Topic" }))
        const action = yield* actions.create(principal, CreateActionItem.make({ meeting_id: meeting.id, title: "Do" }))
        const page = { limit: 5 }

        yield* expectSpan("Meetings.list", meetings.list(principal, {}, page))
        yield* expectSpan("Meetings.search", meetings.search(principal, { q: "trace" }, page))
        yield* expectSpan("Meetings.upcoming", meetings.upcoming(principal, page))
        yield* expectSpan("Meetings.get", meetings.get(principal, meeting.id))
        yield* expectSpan("Meetings.create", meetings.create(principal, CreateMeeting.make({ title: "Another" })))
        // MeetingAccess is the services' own: its spans nest inside theirs.
        const member = yield* principalFor({ workspaceId: workspace.id })
        expect((yield* spansOf(meetings.get(principal, meeting.id))).names).toContain("MeetingAccess.readable")
        expect((yield* spansOf(meetings.update(principal, meeting.id, UpdateMeeting.make({})))).names)
          .toContain("MeetingAccess.writable")
        expect((yield* spansOf(agenda.list(member.principal, {}, page))).names).toContain("MeetingAccess.visibleMeetingIds")
        yield* expectSpan("Meetings.update", meetings.update(principal, meeting.id, UpdateMeeting.make({ title: "Renamed" })))
        yield* expectSpan("Meetings.contacts", meetings.contacts(principal, meeting.id, page))
        yield* expectSpan(
          "Meetings.appendTranscript",
          meetings.appendTranscript(principal, meeting.id, [TranscriptLine.make({ offset_ms: 0, speaker: "Ann", text: "Hi" })])
        )
        yield* expectSpan("Meetings.exportTranscript", meetings.exportTranscript(principal, meeting.id))
        yield* expectSpan("Meetings.templates", meetings.templates(principal, page))
        yield* expectSpan("Participants.list", participants.list(principal, meeting.id, page))
        yield* expectSpan(
          "Participants.add",
          participants.add(principal, meeting.id, AddParticipants.make({ participants: [ParticipantEntry.make({ role: "VIEWER", user_id: colleague.id })] }))
        )
        yield* expectSpan("Participants.changeRole", participants.changeRole(principal, meeting.id, colleague.id, ChangeRole.make({ role: "EDITOR" })))
        yield* expectSpan("Participants.remove", participants.remove(principal, meeting.id, colleague.id))
        yield* expectSpan("AgendaItems.list", agenda.list(principal, {}, page))
        yield* expectSpan("AgendaItems.get", agenda.get(principal, item.id))
        yield* expectSpan("AgendaItems.create", agenda.create(principal, CreateAgendaItem.make({ meeting_id: meeting.id, title: "More" })))
        yield* expectSpan("AgendaItems.update", agenda.update(principal, item.id, UpdateAgendaItem.make({ title: "Topic 2" })))
        yield* expectSpan("ActionItems.list", actions.list(principal, {}, page))
        yield* expectSpan("ActionItems.get", actions.get(principal, action.id))
        yield* expectSpan("ActionItems.create", actions.create(principal, CreateActionItem.make({ meeting_id: meeting.id, title: "More" })))
        yield* expectSpan("ActionItems.update", actions.update(principal, action.id, UpdateActionItem.make({ title: "Done soon" })))
        yield* expectSpan("ActionItems.delete", actions.delete(principal, action.id))
        const calendar = yield* Calendar
        const attendee = yield* principalFor({ workspaceId: workspace.id, scopes: ["meetings:write", "calendar:read"] })
        const scheduled = yield* meetings.create(attendee.principal, CreateMeeting.make({ title: "On the calendar", start_time: DateTime.unsafeMake("2031-01-01T09:00:00Z") }))
        const window = { start_date: DateTime.unsafeMake("2031-01-01T00:00:00Z"), end_date: DateTime.unsafeMake("2031-01-02T00:00:00Z") }
        yield* expectSpan("Calendar.list", calendar.list(attendee.principal, window, page))
        yield* expectSpan("Calendar.get", calendar.get(attendee.principal, CalendarEventId.make(scheduled.id)))
        yield* expectSpan("AgendaItems.delete", agenda.delete(principal, item.id))
        yield* expectSpan("Meetings.delete", meetings.delete(principal, meeting.id))
        yield* expectSpan("Authentication.authenticate", authentication.authenticate(Redacted.make(token)))
        yield* expectSpan("Tokens.issue", tokens.issue(user.id, IssueToken.make({ kind: "short_lived", scopes: ["meetings:read"], expiry_hours: 1 })))
        yield* expectSpan(
          "Tokens.issueForCaller",
          tokens.issueForCaller(principal, IssuePersonalAccessToken.make({ name: "t", scopes: ["meetings:read"], expiry_days: 30 }))
        )
        yield* expectSpan("Tokens.issueApiKey", tokens.issueApiKey(workspace.id, CreateApiKey.make({ name: "k" })))
        yield* expectSpan("Tokens.listForCaller", tokens.listForCaller(principal, page))
        yield* expectSpan("Tokens.revokeForCaller", tokens.revokeForCaller(principal, principal.credential_id))
        yield* expectSpan("Users.create", users.create(workspace.id, CreateUser.make({ email: freshEmail(), name: "N", role: "MEMBER" })))
        yield* expectSpan("Users.get", users.get(user.id))
        yield* expectSpan("Users.me", users.me(principal))
        yield* expectSpan("Users.verifyPassword", users.verifyPassword("nobody@example.com", "password"))
        yield* expectSpan("Workspaces.get", workspaces.get(workspace.id))
        yield* expectSpan("Workspaces.create", workspaces.create(CreateWorkspace.make({ name: "W", plan: "FREE" })))
        yield* expectSpan("Workspaces.update", workspaces.update(workspace.id, UpdateWorkspace.make({ name: "W2" })))
        yield* expectSpan("Workspaces.list", workspaces.list(page))
        yield* expectSpan("Workspaces.overview", workspaces.overview(workspace.id))
        yield* expectSpan("Users.list", users.list({ workspaceId: workspace.id }, page))
        yield* expectSpan("Users.update", users.update(colleague.id, UpdateUser.make({ name: "Colleague" })))
        yield* expectSpan("Tokens.listForWorkspace", tokens.listForWorkspace(workspace.id, page))
        yield* expectSpan("Tokens.listApiKeys", tokens.listApiKeys(workspace.id, page))
        yield* expectSpan("Tokens.listForUser", tokens.listForUser(user.id, page))
        const revocable = yield* tokens.issueApiKey(workspace.id, CreateApiKey.make({ name: "r" }))
        yield* expectSpan("Tokens.revoke", tokens.revoke(revocable.id))
        const workspaceAdmin = yield* WorkspaceAdmin
        const administrator = yield* principalFor({
          workspaceId: workspace.id,
          role: "OWNER",
          scopes: ["workspace:read", "workspace:write"],
          kind: "personal_access_token"
        })
        yield* expectSpan("Workspaces.updateSettings", workspaces.updateSettings(workspace.id, { default_detail_level: "brief" }))
        yield* expectSpan("WorkspaceAdmin.getSettings", workspaceAdmin.getSettings(administrator.principal))
        yield* expectSpan(
          "WorkspaceAdmin.updateSettings",
          workspaceAdmin.updateSettings(administrator.principal, UpdateWorkspaceSettings.make({ name: "W3" }))
        )
        yield* expectSpan("WorkspaceAdmin.listMembers", workspaceAdmin.listMembers(administrator.principal, page))
        yield* expectSpan(
          "WorkspaceAdmin.changeRole",
          workspaceAdmin.changeRole(administrator.principal, colleague.id, ChangeMemberRole.make({ role: "ADMIN" }))
        )
        yield* expectSpan("WorkspaceAdmin.listApiKeys", workspaceAdmin.listApiKeys(administrator.principal, page))
        const unwanted = yield* tokens.issueApiKey(workspace.id, CreateApiKey.make({ name: "u" }))
        yield* expectSpan("WorkspaceAdmin.revokeApiKey", workspaceAdmin.revokeApiKey(administrator.principal, unwanted.id))
        const leaving = yield* users.create(workspace.id, CreateUser.make({ email: freshEmail(), name: "L", role: "MEMBER" }))
        yield* expectSpan("WorkspaceAdmin.removeMember", workspaceAdmin.removeMember(administrator.principal, leaving.id))
        yield* expectSpan("Users.delete", users.delete(colleague.id))
        yield* expectSpan("Workspaces.delete", workspaces.delete(workspace.id))
        yield* expectSpan(
          "Idempotency.run",
          idempotency.run(
            { scope: "s", key: "k", method: "POST", path: "/x", query: [], body: {} },
            Effect.succeed(new StoredResponse({ status: 201, body: "{}" }))
          )
        )
        yield* expectSpan("Idempotency.purgeExpired", idempotency.purgeExpired())
      }))
  })
})
