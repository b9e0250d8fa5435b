/**
 * The operator's users (identity/Users.ts): list and find them, change their name, role and password (a new
 * role applies to their tokens at once), and delete one: their tokens stop working, and every other room lets
 * go of them (IdentityReferences, in Contents.ts) in the same transaction, leaving no row that names them.
 */
import {
  ActionItems,
  AgendaItems,
  Authentication,
  CreateUser,
  Email,
  Idempotency,
  IssueToken,
  Meetings,
  Participants,
  type Scope,
  Scopes,
  StoredResponse,
  Tokens,
  UpdateMeeting,
  UpdateUser,
  UserId,
  Users,
  UserView,
  WorkspaceId
} from "@convene/core"
import { describe, expect, layer } from "@effect/vitest"
import { DateTime, Effect, Option, Redacted, Schema, TestClock } from "effect"
import { CoreLive, freshEmail, principalFor } from "./fixtures.js"
import { CoreWithSnapshots, furnishedWorkspace, rowsNaming } from "./furnished.js"

const everyScope: ReadonlyArray<Scope> = Scopes

describe("Users (operator)", () => {
  layer(CoreLive)((it) => {
    it.effect("list answers a workspace's users newest first, in pages; an unknown workspace is NotFound", () =>
      Effect.gen(function*() {
        const users = yield* Users
        const owner = yield* principalFor({ role: "OWNER" })
        yield* TestClock.adjust("1 minute")
        const member = yield* principalFor({ workspaceId: owner.workspace.id })
        yield* principalFor()

        expect(yield* users.list({ workspaceId: owner.workspace.id }, {})).toEqual({
          items: [UserView.of(member.user), UserView.of(owner.user)],
          total: 2,
          limit: 20,
          offset: 0
        })
        expect(yield* users.list({ workspaceId: owner.workspace.id }, { limit: 1, offset: 1 })).toEqual({
          items: [UserView.of(owner.user)],
          total: 2,
          limit: 1,
          offset: 1
        })
        const unknown = WorkspaceId.make(crypto.randomUUID())
        expect(yield* Effect.flip(users.list({ workspaceId: unknown }, {}))).toMatchObject({ _tag: "NotFound", resource: "workspace", id: unknown })
      }))

    it.effect("list without a workspace answers the installation's users; with an e-mail, the one user who has it", () =>
      Effect.gen(function*() {
        const users = yield* Users
        yield* TestClock.adjust("3650 days")
        const first = yield* principalFor()
        yield* TestClock.adjust("1 minute")
        const second = yield* principalFor()
        expect((yield* users.list({}, { limit: 2 })).items).toEqual([UserView.of(second.user), UserView.of(first.user)])

        const typed = Schema.decodeUnknownSync(Email)(`  ${first.user.email.toUpperCase()} `)
        expect(yield* users.list({ email: typed }, {})).toEqual({ items: [UserView.of(first.user)], total: 1, limit: 20, offset: 0 })
        expect(yield* users.list({ email: typed, workspaceId: first.workspace.id }, {})).toMatchObject({ total: 1 })
        expect(yield* users.list({ email: typed, workspaceId: second.workspace.id }, {})).toMatchObject({ items: [], total: 0 })
        expect(yield* users.list({ email: freshEmail("nobody") }, {})).toEqual({ items: [], total: 0, limit: 20, offset: 0 })
        expect(yield* users.list({ email: typed }, { offset: 1 })).toEqual({ items: [], total: 1, limit: 20, offset: 1 })
      }))

    it.effect("update changes name, role and password, keeps what the request leaves out, and the address", () =>
      Effect.gen(function*() {
        const users = yield* Users
        const { user, workspace } = yield* principalFor({ role: "ADMIN" })
        yield* TestClock.adjust("2 minutes")
        const updated = yield* users.update(user.id, UpdateUser.make({ name: "Renamed", role: "OWNER", password: "a new passphrase" }))
        expect(updated).toMatchObject({ id: user.id, workspace_id: workspace.id, email: user.email, name: "Renamed", role: "OWNER" })
        expect(updated.created_at).toEqual(user.created_at)
        expect(updated.updated_at).toEqual(DateTime.add(user.updated_at, { minutes: 2 }))
        expect(yield* users.get(user.id)).toEqual(updated)
        expect(Option.map(yield* users.verifyPassword(user.email, "a new passphrase"), (u) => u.id)).toEqual(Option.some(user.id))

        yield* TestClock.adjust("1 minute")
        const renamedOnly = yield* users.update(user.id, UpdateUser.make({ name: "Again" }))
        expect(renamedOnly).toMatchObject({ name: "Again", role: "OWNER", password_hash: updated.password_hash })
        const nothing = yield* users.update(user.id, UpdateUser.make({}))
        expect(nothing).toMatchObject({ name: "Again", role: "OWNER", password_hash: updated.password_hash })
        yield* users.update(user.id, UpdateUser.make({ password: "another passphrase" }))
        expect(Option.isNone(yield* users.verifyPassword(user.email, "a new passphrase"))).toBe(true)
        expect(Option.isSome(yield* users.verifyPassword(user.email, "another passphrase"))).toBe(true)

        const unknown = UserId.make(crypto.randomUUID())
        expect(yield* Effect.flip(users.update(unknown, UpdateUser.make({ name: "Ghost" })))).toMatchObject({ _tag: "NotFound", resource: "user", id: unknown })
      }))

    it.effect("a new role applies to the user's tokens at once: lowered, they lose what it no longer grants; raised, they get back no more than issued", () =>
      Effect.gen(function*() {
        const users = yield* Users
        const tokens = yield* Tokens
        const authentication = yield* Authentication
        const { token, user } = yield* principalFor({ plan: "PRO", role: "ADMIN", scopes: everyScope, kind: "personal_access_token" })
        yield* TestClock.adjust("1 minute")
        const narrow = yield* tokens.issue(user.id, IssueToken.make({ kind: "personal_access_token", scopes: ["meetings:read", "workspace:read"], expiry_days: 30 }))
        const scopesOf = (presented: string) => Effect.map(authentication.authenticate(Redacted.make(presented)), (p) => p.scopes)
        const listedScopes = Effect.map(tokens.listForUser(user.id, {}), (list) => list.items.map((t) => t.scopes))

        yield* users.update(user.id, UpdateUser.make({ role: "MEMBER" }))
        expect(yield* scopesOf(token)).toEqual(everyScope.filter((s) => !s.startsWith("workspace:")))
        expect(yield* scopesOf(narrow.token)).toEqual(["meetings:read"])
        expect(yield* listedScopes).toEqual([["meetings:read"], everyScope.filter((s) => !s.startsWith("workspace:"))])

        yield* users.update(user.id, UpdateUser.make({ role: "OWNER" }))
        expect(yield* scopesOf(token)).toEqual(everyScope)
        expect(yield* scopesOf(narrow.token)).toEqual(["meetings:read", "workspace:read"])
        expect(yield* listedScopes).toEqual([["meetings:read", "workspace:read"], everyScope])
      }))

    it.effect("delete of an unknown user is NotFound", () =>
      Effect.gen(function*() {
        const unknown = UserId.make(crypto.randomUUID())
        expect(yield* Effect.flip((yield* Users).delete(unknown))).toMatchObject({ _tag: "NotFound", resource: "user", id: unknown })
      }))
  })

  layer(CoreWithSnapshots)((it) => {
    it.effect("delete: their tokens stop working, and no row of any table names them or their tokens afterwards", () =>
      Effect.gen(function*() {
        const users = yield* Users
        const authentication = yield* Authentication
        const f = yield* furnishedWorkspace()
        const theirs = [f.member.user.id, f.member.principal.credential_id]
        expect((yield* rowsNaming(theirs)).length).toBeGreaterThan(0)
        const othersCredentials = [f.owner.principal.credential_id, f.apiKey.id]
        const othersRows = yield* rowsNaming(othersCredentials)

        yield* users.delete(f.member.user.id)

        expect(yield* rowsNaming(theirs)).toEqual([])
        expect(yield* Effect.flip(authentication.authenticate(Redacted.make(f.member.token)))).toMatchObject({ reason: "unknown" })
        expect(yield* Effect.flip(users.get(f.member.user.id))).toMatchObject({ _tag: "NotFound" })
        expect(yield* Effect.flip(users.delete(f.member.user.id))).toMatchObject({ _tag: "NotFound" })
        expect(yield* rowsNaming(othersCredentials)).toEqual(othersRows)
        expect((yield* authentication.authenticate(Redacted.make(f.owner.token))).user_id).toBe(f.owner.user.id)
      }))

    it.effect("delete: owned meetings stay without an owner, presenters and assignees are removed, talking points and idempotency records go", () =>
      Effect.gen(function*() {
        const users = yield* Users
        const meetings = yield* Meetings
        const participants = yield* Participants
        const agenda = yield* AgendaItems
        const actions = yield* ActionItems
        const f = yield* furnishedWorkspace()
        const admin = f.owner.principal

        yield* users.delete(f.member.user.id)

        const ownerless = yield* meetings.get(admin, f.membersMeeting.id)
        expect(ownerless).toEqual({ ...f.membersMeeting, owner_user_id: null })
        expect((yield* participants.list(admin, f.membersMeeting.id, {})).items.map((p) => [p.user_id, p.role])).toEqual([[f.owner.user.id, "EDITOR"]])
        expect((yield* participants.list(admin, f.ownersMeeting.id, {})).items.map((p) => p.user_id)).toEqual([f.owner.user.id])
        const item = yield* agenda.get(admin, f.item.id)
        expect(item.presenters).toEqual([f.owner.user.id])
        expect(item.talking_points).toEqual(["the owner's"])
        expect(item.updated_at).toEqual(f.item.updated_at)
        expect(yield* actions.get(admin, f.membersTask.id)).toEqual({ ...f.membersTask, assigned_to_user_id: null })
        expect(yield* actions.get(admin, f.ownersTask.id)).toEqual(f.ownersTask)

        // A workspace admin still works on the ownerless meeting and may delete it.
        yield* meetings.update(admin, f.membersMeeting.id, UpdateMeeting.make({ title: "Kept by the team" }))
        // The member's idempotency record went: the same key under their credential starts afresh.
        const again = yield* (yield* Idempotency).run(
          { scope: f.member.principal.credential_id, key: "first", method: "POST", path: "/v1/meetings", query: [], body: { title: "x" } },
          Effect.succeed(new StoredResponse({ status: 201, body: "{\"again\":true}" }))
        )
        expect(again.replayed).toBe(false)
        yield* meetings.delete(admin, f.membersMeeting.id)
        // The address is free again.
        yield* users.create(f.workspace.id, CreateUser.make({ email: f.member.user.email, name: "Back", role: "MEMBER" }))
      }))
  })
})
