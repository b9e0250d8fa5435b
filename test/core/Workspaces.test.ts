/**
 * Provisioning workspaces (workspaces/Workspaces.ts): what create sets, what update changes and keeps, NotFound;
 * the operator's list and overview with their counts, and the delete of a workspace with everything in it.
 */
import {
  Authentication,
  CreateApiKey,
  CreateMeeting,
  CreateUser,
  CreateWorkspace,
  IssueToken,
  Meetings,
  Tokens,
  UpdateMeeting,
  UpdateWorkspace,
  Users,
  WorkspaceId,
  Workspaces,
  WorkspaceStore
} from "@convene/core"
import { describe, expect, layer } from "@effect/vitest"
import { DateTime, Effect, Option, Redacted, TestClock } from "effect"
import { CoreLive, freshEmail } from "./fixtures.js"
import { CoreWithSnapshots, furnishedWorkspace, rowsNaming } from "./furnished.js"

describe("Workspaces", () => {
  layer(CoreLive)((it) => {
    it.effect("create stores the name and plan with the default settings, created and updated now", () =>
      Effect.gen(function*() {
        yield* TestClock.adjust("1 hour")
        const workspaces = yield* Workspaces
        const created = yield* workspaces.create(CreateWorkspace.make({ name: "Acme", plan: "ELITE" }))
        expect(created).toMatchObject({ name: "Acme", plan: "ELITE", default_detail_level: "standard", default_template_id: null })
        expect(DateTime.toEpochMillis(created.created_at)).toBe(3_600_000)
        expect(created.updated_at).toEqual(created.created_at)
        expect(yield* workspaces.get(created.id)).toEqual(created)
      }))

    it.effect("update changes the name and the plan, keeps everything else, and stores the result", () =>
      Effect.gen(function*() {
        const workspaces = yield* Workspaces
        const created = yield* workspaces.create(CreateWorkspace.make({ name: "Acme", plan: "FREE" }))
        yield* TestClock.adjust("2 minutes")
        const updated = yield* workspaces.update(created.id, UpdateWorkspace.make({ name: "Acme Corp", plan: "PRO" }))
        expect(updated).toEqual({
          ...created,
          name: "Acme Corp",
          plan: "PRO",
          updated_at: DateTime.add(created.updated_at, { minutes: 2 })
        })
        expect(yield* workspaces.get(created.id)).toEqual(updated)
        expect(yield* (yield* WorkspaceStore).get(created.id)).toEqual(Option.some(updated))
      }))

    it.effect("update keeps what the request leaves out", () =>
      Effect.gen(function*() {
        const workspaces = yield* Workspaces
        const created = yield* workspaces.create(CreateWorkspace.make({ name: "Acme", plan: "FREE" }))
        const planOnly = yield* workspaces.update(created.id, UpdateWorkspace.make({ plan: "ENTERPRISE" }))
        expect([planOnly.name, planOnly.plan]).toEqual(["Acme", "ENTERPRISE"])
        const nameOnly = yield* workspaces.update(created.id, UpdateWorkspace.make({ name: "Renamed" }))
        expect([nameOnly.name, nameOnly.plan]).toEqual(["Renamed", "ENTERPRISE"])
        const nothing = yield* workspaces.update(created.id, UpdateWorkspace.make({}))
        expect([nothing.name, nothing.plan]).toEqual(["Renamed", "ENTERPRISE"])
      }))

    it.effect("get and update of an unknown workspace are NotFound naming the workspace and its id", () =>
      Effect.gen(function*() {
        const workspaces = yield* Workspaces
        const id = WorkspaceId.make(crypto.randomUUID())
        const expected = { _tag: "NotFound", resource: "workspace", id, message: `workspace ${id} was not found` }
        expect(yield* Effect.flip(workspaces.get(id))).toMatchObject(expected)
        expect(yield* Effect.flip(workspaces.update(id, UpdateWorkspace.make({ name: "Ghost" })))).toMatchObject(expected)
        expect(Option.isNone(yield* (yield* WorkspaceStore).get(id))).toBe(true)
      }))

    it.effect("list answers every workspace with its counts, newest first, in pages of the usual rules", () =>
      Effect.gen(function*() {
        const workspaces = yield* Workspaces
        // Later than every other workspace of this layer.
        yield* TestClock.adjust("3650 days")
        const before = (yield* workspaces.list({ limit: 1 })).total
        const older = yield* workspaces.create(CreateWorkspace.make({ name: "Older", plan: "FREE" }))
        yield* TestClock.adjust("1 minute")
        const newer = yield* workspaces.create(CreateWorkspace.make({ name: "Newer", plan: "ENTERPRISE" }))

        const page = yield* workspaces.list({ limit: 2 })
        expect(page).toEqual({
          items: [
            { ...newer, counts: { users: 0, meetings: 0, tokens: 0, api_keys: 0 } },
            { ...older, counts: { users: 0, meetings: 0, tokens: 0, api_keys: 0 } }
          ],
          total: before + 2,
          limit: 2,
          offset: 0
        })
        expect(yield* workspaces.list({ limit: 1, offset: 1 })).toMatchObject({ items: [{ id: older.id }], limit: 1, offset: 1 })
        expect(yield* workspaces.list({ limit: 500, offset: -3 })).toMatchObject({ limit: 100, offset: 0 })
        expect((yield* workspaces.list({ offset: before + 2 })).items).toEqual([])
      }))

    it.effect("counts users, meetings whatever their status, users' tokens and API keys that authenticate now", () =>
      Effect.gen(function*() {
        const workspaces = yield* Workspaces
        const tokens = yield* Tokens
        // Two users with a six-hour token each, an API key, two meetings.
        const { member, owner, ownersMeeting, workspace } = yield* furnishedWorkspace()
        const countsNow = Effect.map(workspaces.overview(workspace.id), (overview) => overview.counts)
        expect(yield* countsNow).toEqual({ users: 2, meetings: 2, tokens: 2, api_keys: 1 })

        const revokedKey = yield* tokens.issueApiKey(workspace.id, CreateApiKey.make({ name: "old" }))
        yield* tokens.revoke(revokedKey.id)
        const revokedToken = yield* tokens.issue(member.user.id, IssueToken.make({ kind: "short_lived", scopes: ["meetings:read"], expiry_hours: 6 }))
        yield* tokens.revoke(revokedToken.id)
        yield* tokens.issue(member.user.id, IssueToken.make({ kind: "short_lived", scopes: ["meetings:read"], expiry_hours: 1 }))
        yield* (yield* Meetings).update(owner.principal, ownersMeeting.id, UpdateMeeting.make({ status: "cancelled" }))
        yield* (yield* Users).create(workspace.id, CreateUser.make({ email: freshEmail(), name: "No token", role: "MEMBER" }))
        expect(yield* countsNow).toEqual({ users: 3, meetings: 2, tokens: 3, api_keys: 1 })

        // At its expiry instant a token no longer authenticates, and no longer counts.
        yield* TestClock.adjust("1 hour")
        expect(yield* countsNow).toEqual({ users: 3, meetings: 2, tokens: 2, api_keys: 1 })
        yield* TestClock.adjust("5 hours")
        expect(yield* countsNow).toEqual({ users: 3, meetings: 2, tokens: 0, api_keys: 1 })
        const listed = (yield* workspaces.list({ limit: 100 })).items.find((overview) => overview.id === workspace.id)
        expect(listed?.counts).toEqual({ users: 3, meetings: 2, tokens: 0, api_keys: 1 })
      }))

    it.effect("overview and delete of an unknown workspace are NotFound naming the workspace", () =>
      Effect.gen(function*() {
        const workspaces = yield* Workspaces
        const id = WorkspaceId.make(crypto.randomUUID())
        const expected = { _tag: "NotFound", resource: "workspace", id }
        expect(yield* Effect.flip(workspaces.overview(id))).toMatchObject(expected)
        expect(yield* Effect.flip(workspaces.delete(id))).toMatchObject(expected)
      }))
  })

  layer(CoreWithSnapshots)((it) => {
    it.effect("delete leaves no row of any table naming the workspace or what was in it; its credentials stop authenticating", () =>
      Effect.gen(function*() {
        const workspaces = yield* Workspaces
        const authentication = yield* Authentication
        // FREE: the meetings took units of the monthly allowance, which go with the workspace too.
        const doomed = yield* furnishedWorkspace("FREE")
        const kept = yield* furnishedWorkspace("FREE")
        const idsOf = (f: typeof doomed) => [
          f.workspace.id,
          f.owner.user.id,
          f.member.user.id,
          f.owner.principal.credential_id,
          f.member.principal.credential_id,
          f.apiKey.id,
          f.membersMeeting.id,
          f.ownersMeeting.id,
          f.item.id,
          f.membersTask.id,
          f.ownersTask.id
        ]
        const doomedRows = yield* rowsNaming(idsOf(doomed))
        for (const table of ["workspaces", "workspace_usage", "users", "credentials", "meetings", "participants", "transcript_segments", "agenda_items", "talking_points", "action_items", "idempotency_records", "webhook_endpoints"]) {
          expect(doomedRows.some((row) => row.startsWith(`${table}: `)), table).toBe(true)
        }
        const keptRows = yield* rowsNaming(idsOf(kept))

        yield* workspaces.delete(doomed.workspace.id)

        expect(yield* rowsNaming(idsOf(doomed))).toEqual([])
        expect(yield* rowsNaming(idsOf(kept))).toEqual(keptRows)
        for (const token of [doomed.owner.token, doomed.member.token, doomed.apiKey.key]) {
          expect(yield* Effect.flip(authentication.authenticate(Redacted.make(token)))).toMatchObject({ reason: "unknown" })
        }
        expect((yield* authentication.authenticate(Redacted.make(kept.apiKey.key))).workspace_id).toBe(kept.workspace.id)
        expect(yield* Effect.flip(workspaces.get(doomed.workspace.id))).toMatchObject({ _tag: "NotFound" })
        expect(yield* Effect.flip(workspaces.delete(doomed.workspace.id))).toMatchObject({ _tag: "NotFound" })
        // The addresses are free again.
        const users = yield* Users
        yield* users.create(kept.workspace.id, CreateUser.make({ email: doomed.owner.user.email, name: "Again", role: "MEMBER" }))
        expect((yield* (yield* Meetings).list(kept.owner.principal, {}, {})).total).toBe(2)
        yield* (yield* Meetings).create(kept.owner.principal, CreateMeeting.make({ title: "Still works" }))
      }))
  })
})
