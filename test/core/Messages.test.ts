/**
 * What a client reads in a domain error: the `resource` and `id` of a NotFound, the `field` of a
 * ValidationError, the `required` of an InsufficientScope, the `feature` of a PlanRequired, and each `message`.
 * The HTTP host passes these through as they are, so each one is part of the API.
 */
import {
  ActionItemId,
  ActionItems,
  AddParticipants,
  AgendaItemId,
  AgendaItems,
  ChangeRole,
  CreateActionItem,
  CreateAgendaItem,
  CreateMeeting,
  CreateUser,
  CredentialId,
  IssuePersonalAccessToken,
  IssueToken,
  MeetingId,
  Meetings,
  ParticipantEntry,
  Participants,
  type Scope,
  foldCase,
  Tokens,
  UpdateMeeting,
  UserId,
  Users
} from "@convene/core"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Either, ParseResult, Schema, TestClock } from "effect"
import { apiKeyFor, CoreLive, freshEmail, principalFor } from "./fixtures.js"

/** The fields of `NotFound.of(resource, id)`. */
const notFound = (resource: string, id: string) => ({
  _tag: "NotFound",
  resource,
  id,
  message: `${resource} ${id} was not found`
})

/** The fields of `ValidationError.of(field, problem)`. */
const invalid = (field: string, problem: string) => ({ _tag: "ValidationError", field, message: `${field}: ${problem}` })

/** The path and message of each issue of a decode failure (none when it decodes). */
const issuesOf = <A, I>(schema: Schema.Schema<A, I>, input: unknown) =>
  Either.match(Schema.decodeUnknownEither(schema)(input), {
    onLeft: (error) => ParseResult.ArrayFormatter.formatErrorSync(error).map(({ message, path }) => ({ path, message })),
    onRight: () => []
  })

const randomId = () => crypto.randomUUID()

describe("request bodies name the offending field", () => {
  it("CreateUser: a password of 8 to 1024 characters", () => {
    const body = { email: "ann@example.com", name: "Ann", role: "MEMBER" }
    // The field is optional, so the issues also say it could have been left out.
    expect(issuesOf(CreateUser, { ...body, password: "1234567" }))
      .toContainEqual({ path: ["password"], message: "must be at least 8 characters" })
    expect(issuesOf(CreateUser, { ...body, password: "x".repeat(1025) }))
      .toContainEqual({ path: ["password"], message: "must be at most 1024 characters" })
    expect(issuesOf(CreateUser, { ...body, password: "12345678" })).toEqual([])
    expect(issuesOf(CreateUser, { ...body, password: "x".repeat(1024) })).toEqual([])
  })

  it("IssueToken and IssuePersonalAccessToken: at least one scope", () => {
    expect(issuesOf(IssueToken, { kind: "short_lived", scopes: [], expiry_hours: 1 })).toEqual([
      { path: ["scopes"], message: "must name at least one scope" }
    ])
    expect(issuesOf(IssuePersonalAccessToken, { name: "laptop", scopes: [], expiry_days: 30 })).toEqual([
      { path: ["scopes"], message: "must name at least one scope" }
    ])
  })

  it("AddParticipants: 1 to 100 participants", () => {
    const entry = { role: "VIEWER", guest_email: "guest@example.com" }
    expect(issuesOf(AddParticipants, { participants: [] })).toEqual([
      { path: ["participants"], message: "must hold at least one participant" }
    ])
    expect(issuesOf(AddParticipants, { participants: Array(101).fill(entry) })).toEqual([
      { path: ["participants"], message: "must hold at most 100 participants" }
    ])
    expect(issuesOf(AddParticipants, { participants: Array(100).fill(entry) })).toEqual([])
  })
})

describe("foldCase: the form in which title search compares text", () => {
  it("lower-cases each code point, astral ones included, and folds the final sigma to sigma", () => {
    expect(foldCase("Quarterly PLANNING")).toBe("quarterly planning")
    expect(foldCase("ΟΔΟΣ ΣΟΦΙΑΣ")).toBe("οδοσ σοφιασ")
    expect(foldCase("οδός")).toBe("οδόσ")
    expect(foldCase("\u{10400}\u{10401}")).toBe("\u{10428}\u{10429}")
    expect(foldCase("Straße")).toBe("straße")
  })

  it("composes first (NFC), so that both spellings of an accented letter compare equal", () => {
    expect(foldCase("CAFE\u0301")).toBe("caf\u00e9")
    expect(foldCase("Caf\u00e9")).toBe("caf\u00e9")
  })
})

describe("domain errors: resource, id, field and message", () => {
  layer(CoreLive)((it) => {
    it.effect("Users: an unknown user, and a workspace API key asking who it is", () =>
      Effect.gen(function*() {
        const users = yield* Users
        const id = UserId.make(randomId())
        expect(yield* Effect.flip(users.get(id))).toMatchObject(notFound("user", id))

        const { workspace } = yield* principalFor()
        const key = yield* apiKeyFor(workspace.id)
        expect(yield* Effect.flip(users.me(key))).toMatchObject({
          _tag: "NotFound",
          resource: "user",
          id: key.credential_id,
          message: "a workspace API key acts as the workspace and has no user identity; see GET /v1/auth/introspect"
        })
      }))

    it.effect("Tokens.issue: scopes the role does not grant, and workspace scopes on a short-lived token", () =>
      Effect.gen(function*() {
        const tokens = yield* Tokens
        const { user: member } = yield* principalFor({ role: "MEMBER" })
        const { user: admin } = yield* principalFor({ role: "ADMIN" })
        const shortLived = (scopes: ReadonlyArray<Scope>) => IssueToken.make({ kind: "short_lived", scopes, expiry_hours: 1 })

        expect(yield* Effect.flip(tokens.issue(member.id, shortLived(["workspace:read", "meetings:read", "workspace:write"]))))
          .toMatchObject(invalid("scopes", "workspace:read, workspace:write not granted to the role MEMBER"))
        expect(yield* Effect.flip(tokens.issue(admin.id, shortLived(["meetings:read", "workspace:read"]))))
          .toMatchObject(invalid("scopes", "a short-lived token cannot carry workspace scopes"))
      }))

    it.effect("Tokens.issue: expiry_days and expiry_hours each belong to one kind, and each kind needs its own", () =>
      Effect.gen(function*() {
        const tokens = yield* Tokens
        const { user } = yield* principalFor({ plan: "PRO" })
        const scopes: ReadonlyArray<Scope> = ["meetings:read"]
        const refusal = (input: IssueToken) => Effect.flip(tokens.issue(user.id, input))

        expect(yield* refusal(IssueToken.make({ kind: "personal_access_token", scopes, expiry_days: 30, expiry_hours: 1 })))
          .toMatchObject(invalid("expiry_hours", "only short-lived tokens take expiry_hours; use expiry_days"))
        expect(yield* refusal(IssueToken.make({ kind: "personal_access_token", scopes })))
          .toMatchObject(invalid("expiry_days", "is required for a personal access token (30, 60, 90, 180 or 365)"))
        expect(yield* refusal(IssueToken.make({ kind: "short_lived", scopes, expiry_days: 30, expiry_hours: 1 })))
          .toMatchObject(invalid("expiry_days", "only personal access tokens take expiry_days; use expiry_hours"))
        expect(yield* refusal(IssueToken.make({ kind: "short_lived", scopes })))
          .toMatchObject(invalid("expiry_hours", "is required for a short-lived token (1, 2, 4 or 6)"))
      }))

    it.effect("Tokens.issue: a personal access token on the FREE plan names the feature and the plans", () =>
      Effect.gen(function*() {
        const tokens = yield* Tokens
        const { user } = yield* principalFor({ plan: "FREE" })
        const refused = yield* Effect.flip(
          tokens.issue(user.id, IssueToken.make({ kind: "personal_access_token", scopes: ["meetings:read"], expiry_days: 30 }))
        )
        expect(refused).toMatchObject({
          _tag: "PlanRequired",
          feature: "personal_access_tokens",
          current_plan: "FREE",
          required_plan: "PRO",
          message: "personal access tokens need the PRO plan or higher"
        })
      }))

    it.effect("Tokens.issueForCaller: scopes beyond the calling credential's are named", () =>
      Effect.gen(function*() {
        const tokens = yield* Tokens
        const { principal } = yield* principalFor({ plan: "PRO", kind: "personal_access_token", scopes: ["meetings:read"] })
        const request = IssuePersonalAccessToken.make({
          name: "laptop",
          scopes: ["meetings:read", "meetings:write", "action-items:read"],
          expiry_days: 30
        })
        expect(yield* Effect.flip(tokens.issueForCaller(principal, request)))
          .toMatchObject(invalid("scopes", "meetings:write, action-items:read not held by this credential"))
      }))

    it.effect("Tokens.revokeForCaller: an unknown token is NotFound, another user's needs its owner", () =>
      Effect.gen(function*() {
        const tokens = yield* Tokens
        const ann = yield* principalFor({ plan: "PRO", kind: "personal_access_token" })
        const bob = yield* principalFor({ workspaceId: ann.workspace.id, kind: "personal_access_token" })
        const unknown = CredentialId.make(randomId())
        expect(yield* Effect.flip(tokens.revokeForCaller(ann.principal, unknown))).toMatchObject(notFound("token", unknown))
        expect(yield* Effect.flip(tokens.revokeForCaller(ann.principal, bob.principal.credential_id))).toMatchObject({
          _tag: "InsufficientScope",
          required: "owner",
          message: "only the token's owner can delete it"
        })
      }))

    it.effect("MeetingAccess: a missing meeting and one the caller does not take part in are the same NotFound", () =>
      Effect.gen(function*() {
        const meetings = yield* Meetings
        const { principal: owner, workspace } = yield* principalFor()
        const { principal: outsider } = yield* principalFor({ workspaceId: workspace.id })
        const meeting = yield* meetings.create(owner, CreateMeeting.make({ title: "Private" }))
        const missing = MeetingId.make(randomId())

        expect(yield* Effect.flip(meetings.get(owner, missing))).toMatchObject(notFound("meeting", missing))
        expect(yield* Effect.flip(meetings.update(owner, missing, UpdateMeeting.make({ title: "x" }))))
          .toMatchObject(notFound("meeting", missing))
        expect(yield* Effect.flip(meetings.get(outsider, meeting.id))).toMatchObject(notFound("meeting", meeting.id))
        expect(yield* Effect.flip(meetings.update(outsider, meeting.id, UpdateMeeting.make({ title: "x" }))))
          .toMatchObject(notFound("meeting", meeting.id))
      }))

    it.effect("MeetingAccess: a viewer cannot change the meeting, an editor cannot delete it; each says what it needs", () =>
      Effect.gen(function*() {
        const meetings = yield* Meetings
        const participants = yield* Participants
        const { principal: owner, workspace } = yield* principalFor()
        const viewer = yield* principalFor({ workspaceId: workspace.id })
        const editor = yield* principalFor({ workspaceId: workspace.id })
        const meeting = yield* meetings.create(owner, CreateMeeting.make({ title: "Shared" }))
        yield* participants.add(owner, meeting.id, AddParticipants.make({
          participants: [
            ParticipantEntry.make({ role: "VIEWER", user_id: viewer.user.id }),
            ParticipantEntry.make({ role: "EDITOR", user_id: editor.user.id })
          ]
        }))

        expect(yield* Effect.flip(meetings.update(viewer.principal, meeting.id, UpdateMeeting.make({ title: "x" })))).toMatchObject({
          _tag: "InsufficientScope",
          required: "meeting editor",
          message: "your role on this meeting (VIEWER) cannot change it"
        })
        expect(yield* Effect.flip(meetings.delete(editor.principal, meeting.id))).toMatchObject({
          _tag: "InsufficientScope",
          required: "meeting owner",
          message: "only the meeting's owner (or a workspace admin) can do this"
        })
      }))

    it.effect("Participants: an entry with both or neither of user_id and guest_email, an unknown user, an unknown participant", () =>
      Effect.gen(function*() {
        const meetings = yield* Meetings
        const participants = yield* Participants
        const { principal } = yield* principalFor()
        const meeting = yield* meetings.create(principal, CreateMeeting.make({ title: "Guests" }))
        const guest = ParticipantEntry.make({ role: "VIEWER", guest_email: freshEmail("guest") })
        const stranger = UserId.make(randomId())

        for (const entry of [ParticipantEntry.make({ role: "VIEWER" }), ParticipantEntry.make({ role: "VIEWER", user_id: stranger, guest_email: freshEmail() })]) {
          expect(yield* Effect.flip(participants.add(principal, meeting.id, AddParticipants.make({ participants: [guest, entry] }))))
            .toMatchObject(invalid("participants[1]", "give exactly one of user_id and guest_email"))
        }
        expect(yield* Effect.flip(participants.add(principal, meeting.id, AddParticipants.make({
          participants: [guest, ParticipantEntry.make({ role: "EDITOR", user_id: stranger })]
        })))).toMatchObject({
          _tag: "NotFound",
          resource: "user",
          id: stranger,
          message: `participants[1].user_id: user ${stranger} was not found in this workspace`
        })
        const who = randomId()
        expect(yield* Effect.flip(participants.remove(principal, meeting.id, who))).toMatchObject(notFound("participant", who))
        expect(yield* Effect.flip(participants.changeRole(principal, meeting.id, who, ChangeRole.make({ role: "EDITOR" }))))
          .toMatchObject(notFound("participant", who))
      }))

    it.effect("ActionItems: a missing item and one on a meeting the caller cannot see are NotFound as an action item", () =>
      Effect.gen(function*() {
        const meetings = yield* Meetings
        const actions = yield* ActionItems
        const { principal: owner, workspace } = yield* principalFor()
        const { principal: outsider } = yield* principalFor({ workspaceId: workspace.id })
        const meeting = yield* meetings.create(owner, CreateMeeting.make({ title: "Actions" }))
        const item = yield* actions.create(owner, CreateActionItem.make({ meeting_id: meeting.id, title: "Follow up" }))
        const missing = ActionItemId.make(randomId())

        expect(yield* Effect.flip(actions.get(owner, missing))).toMatchObject(notFound("action item", missing))
        expect(yield* Effect.flip(actions.get(outsider, item.id))).toMatchObject(notFound("action item", item.id))
      }))

    it.effect("ActionItems: an unknown assignee or agenda item names the field; another meeting's agenda item is refused", () =>
      Effect.gen(function*() {
        const meetings = yield* Meetings
        const actions = yield* ActionItems
        const agenda = yield* AgendaItems
        const { principal } = yield* principalFor()
        const meeting = yield* meetings.create(principal, CreateMeeting.make({ title: "Here" }))
        const elsewhere = yield* meetings.create(principal, CreateMeeting.make({ title: "There" }))
        const foreignItem = yield* agenda.create(principal, CreateAgendaItem.make({ meeting_id: elsewhere.id, title: "Topic" }))
        const nobody = UserId.make(randomId())
        const noItem = AgendaItemId.make(randomId())
        const create = (input: Partial<Pick<CreateActionItem, "assigned_to_user_id" | "agenda_item_id">>) =>
          Effect.flip(actions.create(principal, CreateActionItem.make({ meeting_id: meeting.id, title: "Do it", ...input })))

        expect(yield* create({ assigned_to_user_id: nobody })).toMatchObject({
          _tag: "NotFound",
          resource: "user",
          id: nobody,
          message: `assigned_to_user_id: user ${nobody} was not found in this workspace`
        })
        expect(yield* create({ agenda_item_id: noItem })).toMatchObject({
          _tag: "NotFound",
          resource: "agenda item",
          id: noItem,
          message: `agenda_item_id: agenda item ${noItem} was not found`
        })
        expect(yield* create({ agenda_item_id: foreignItem.id })).toMatchObject(invalid("agenda_item_id", "belongs to another meeting"))
      }))

    it.effect("AgendaItems: a missing item and one on a meeting the caller cannot see are NotFound as an agenda item", () =>
      Effect.gen(function*() {
        const meetings = yield* Meetings
        const agenda = yield* AgendaItems
        const { principal: owner, workspace } = yield* principalFor()
        const { principal: outsider } = yield* principalFor({ workspaceId: workspace.id })
        const meeting = yield* meetings.create(owner, CreateMeeting.make({ title: "Agenda" }))
        const item = yield* agenda.create(owner, CreateAgendaItem.make({ meeting_id: meeting.id, title: "Topic" }))
        const missing = AgendaItemId.make(randomId())

        expect(yield* Effect.flip(agenda.get(owner, missing))).toMatchObject(notFound("agenda item", missing))
        expect(yield* Effect.flip(agenda.get(outsider, item.id))).toMatchObject(notFound("agenda item", item.id))
      }))
  })
})

describe("Participants.changeRole", () => {
  layer(CoreLive)((it) => {
    it.effect("to the role the participant already has changes nothing, not even updated_at", () =>
      Effect.gen(function*() {
        const meetings = yield* Meetings
        const participants = yield* Participants
        const { principal, workspace } = yield* principalFor()
        const colleague = yield* principalFor({ workspaceId: workspace.id })
        const meeting = yield* meetings.create(principal, CreateMeeting.make({ title: "Roles" }))
        const [added] = yield* participants.add(principal, meeting.id, AddParticipants.make({
          participants: [ParticipantEntry.make({ role: "EDITOR", user_id: colleague.user.id })]
        }))
        yield* TestClock.adjust("1 minute")
        const same = yield* participants.changeRole(principal, meeting.id, colleague.user.id, ChangeRole.make({ role: "EDITOR" }))
        expect(same).toEqual(added)
        const listed = yield* participants.list(principal, meeting.id, {})
        expect(listed.items.find((p) => p.user_id === colleague.user.id)).toEqual(added)

        const changed = yield* participants.changeRole(principal, meeting.id, colleague.user.id, ChangeRole.make({ role: "VIEWER" }))
        expect(changed.role).toBe("VIEWER")
        expect(changed.updated_at).not.toEqual(added?.updated_at)
        expect(changed.created_at).toEqual(added?.created_at)
      }))
  })
})
