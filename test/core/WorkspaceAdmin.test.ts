/**
 * Workspace administration in core: the role rules as values (Administration: who may grant, change or take the
 * OWNER role; the last OWNER stays), and the service (WorkspaceAdmin) with the scope and role checks, the settings
 * and what a new meeting takes from them, members and API keys.
 */
import {
  actsAsOwner,
  ChangeMemberRole,
  CreateMeeting,
  CredentialId,
  Meetings,
  Principal,
  removalRefusal,
  type Role,
  roleChangeRefusal,
  TemplateId,
  UpdateWorkspaceSettings,
  UserId,
  Users,
  WorkspaceAdmin,
  WorkspaceId
} from "@convene/core"
import { layerPg } from "@convene/store-pg"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Exit, FastCheck as fc, Layer, Option } from "effect"
import { serverDatabase } from "../../packages/store-pg/test/fixtures.js"
import { apiKeyFor, CoreLive, coreOver, principalFor } from "./fixtures.js"

const RETROSPECTIVE = TemplateId.make("6a1f3c1e-0b6e-4a53-9d1e-1c5d8f0a0003")
const ALL = ["meetings:read", "meetings:write", "workspace:read", "workspace:write"] as const
const roles: ReadonlyArray<Role> = ["OWNER", "ADMIN", "MEMBER"]

const caller = (who: Role | "api_key") =>
  new Principal({
    credential_id: CredentialId.make(crypto.randomUUID()),
    kind: who === "api_key" ? "api_key" : "personal_access_token",
    workspace_id: WorkspaceId.make(crypto.randomUUID()),
    user_id: who === "api_key" ? null : UserId.make(crypto.randomUUID()),
    role: who === "api_key" ? null : who,
    scopes: [...ALL],
    client_id: null,
    expires_at: null
  })

const tagOf = <A extends { readonly _tag: string }>(refusal: Option.Option<A>) => Option.getOrUndefined(Option.map(refusal, (r) => r._tag))

describe("the role rules", () => {
  const arbitraries = {
    actor: fc.constantFrom<Role | "api_key">("OWNER", "ADMIN", "api_key"),
    from: fc.constantFrom(...roles),
    to: fc.constantFrom(...roles),
    owners: fc.integer({ min: 1, max: 4 })
  }

  it.prop("a role change that is allowed leaves an OWNER, and only an OWNER or an API key touches the OWNER role", arbitraries, ({ actor, from, owners, to }) => {
    const refusal = roleChangeRefusal(caller(actor), { role: from }, to, owners)
    const touchesOwner = from === "OWNER" || to === "OWNER"
    if (Option.isNone(refusal)) {
      expect(owners - (from === "OWNER" && to !== "OWNER" ? 1 : 0)).toBeGreaterThanOrEqual(1)
      if (touchesOwner) expect(actsAsOwner(caller(actor))).toBe(true)
    } else if (tagOf(refusal) === "InsufficientScope") {
      expect(actor).toBe("ADMIN")
      expect(touchesOwner).toBe(true)
    } else {
      expect({ from, to, owners }).toMatchObject({ from: "OWNER", owners: 1 })
      expect(to).not.toBe("OWNER")
    }
  })

  it.prop("a removal that is allowed leaves an OWNER, and only an OWNER or an API key removes an OWNER", arbitraries, ({ actor, from, owners }) => {
    const refusal = removalRefusal(caller(actor), { role: from }, owners)
    if (Option.isNone(refusal)) {
      expect(owners - (from === "OWNER" ? 1 : 0)).toBeGreaterThanOrEqual(1)
      if (from === "OWNER") expect(actor).not.toBe("ADMIN")
    } else {
      expect(from).toBe("OWNER")
      expect(tagOf(refusal)).toBe(actor === "ADMIN" ? "InsufficientScope" : "Conflict")
    }
  })

  it("refuses an ADMIN before it counts OWNERs (403 comes before 409)", () => {
    expect(tagOf(roleChangeRefusal(caller("ADMIN"), { role: "OWNER" }, "ADMIN", 1))).toBe("InsufficientScope")
    expect(tagOf(removalRefusal(caller("ADMIN"), { role: "OWNER" }, 1))).toBe("InsufficientScope")
    expect(tagOf(roleChangeRefusal(caller("ADMIN"), { role: "MEMBER" }, "OWNER", 3))).toBe("InsufficientScope")
    expect(tagOf(roleChangeRefusal(caller("ADMIN"), { role: "ADMIN" }, "MEMBER", 1))).toBeUndefined()
    expect(tagOf(roleChangeRefusal(caller("OWNER"), { role: "OWNER" }, "OWNER", 1))).toBeUndefined()
  })
})

/** Two OWNERs of one workspace demote each other at the same time: one wins, one OWNER is left. */
const demotingEachOther = Effect.gen(function*() {
  const admin = yield* WorkspaceAdmin
  const users = yield* Users
  const first = yield* principalFor({ role: "OWNER", scopes: ALL, kind: "personal_access_token" })
  const second = yield* principalFor({ role: "OWNER", scopes: ALL, kind: "personal_access_token", workspaceId: first.workspace.id })
  const results = yield* Effect.all([
    Effect.exit(admin.changeRole(first.principal, second.user.id, ChangeMemberRole.make({ role: "ADMIN" }))),
    Effect.exit(admin.changeRole(second.principal, first.user.id, ChangeMemberRole.make({ role: "ADMIN" })))
  ], { concurrency: "unbounded" })
  expect(results.filter(Exit.isSuccess)).toHaveLength(1)
  const owners = (yield* users.list({ workspaceId: first.workspace.id }, {})).items.filter((u) => u.role === "OWNER")
  expect(owners).toHaveLength(1)
})

layer(CoreLive)("WorkspaceAdmin", (it) => {
  it.effect("checks the scope, then the role: a MEMBER or a token without the workspace scope gets InsufficientScope", () =>
    Effect.gen(function*() {
      const admin = yield* WorkspaceAdmin
      const member = yield* principalFor({ role: "MEMBER" })
      const reader = yield* principalFor({ role: "OWNER", scopes: ["workspace:read"], kind: "personal_access_token" })
      const memberGet = yield* Effect.exit(admin.getSettings(member.principal))
      expect(memberGet).toMatchObject({ _tag: "Failure" })
      expect(Exit.isFailure(memberGet) && JSON.stringify(memberGet.cause)).toContain("InsufficientScope")
      expect((yield* admin.getSettings(reader.principal)).id).toBe(reader.workspace.id)
      const write = yield* Effect.flip(admin.updateSettings(reader.principal, UpdateWorkspaceSettings.make({ name: "x" })))
      expect(write).toMatchObject({ _tag: "InsufficientScope", required: "workspace:write" })
    }))

  it.effect("keeps the settings it is given, refuses an unknown template, and a new meeting takes the defaults", () =>
    Effect.gen(function*() {
      const admin = yield* WorkspaceAdmin
      const meetings = yield* Meetings
      const { principal } = yield* principalFor({ role: "ADMIN", scopes: ALL, kind: "personal_access_token" })
      const unknown = yield* Effect.flip(
        admin.updateSettings(principal, UpdateWorkspaceSettings.make({ default_template_id: TemplateId.make(crypto.randomUUID()) }))
      )
      expect(unknown).toMatchObject({ _tag: "NotFound", resource: "meeting template" })
      const brief = yield* admin.updateSettings(principal, UpdateWorkspaceSettings.make({ default_detail_level: "brief" }))
      expect(brief).toMatchObject({ default_detail_level: "brief", default_template_id: null })
      expect(yield* meetings.create(principal, CreateMeeting.make({ title: "Plain" }))).toMatchObject({ detail_level: "brief", template_id: null })
      yield* admin.updateSettings(principal, UpdateWorkspaceSettings.make({ default_template_id: RETROSPECTIVE }))
      expect(yield* meetings.create(principal, CreateMeeting.make({ title: "Retro" }))).toMatchObject({
        detail_level: "detailed",
        template_id: RETROSPECTIVE
      })
      expect(yield* meetings.create(principal, CreateMeeting.make({ title: "Chosen", detail_level: "standard" }))).toMatchObject({
        detail_level: "standard",
        template_id: RETROSPECTIVE
      })
    }))

  it.effect("never lets two OWNERs demote each other at once into a workspace without one", () => demotingEachOther)


  it.effect("removes a member of its own workspace only, and revokes only its own live API keys", () =>
    Effect.gen(function*() {
      const admin = yield* WorkspaceAdmin
      const owner = yield* principalFor({ role: "OWNER", scopes: ALL, kind: "personal_access_token" })
      const stranger = yield* principalFor({ role: "OWNER", scopes: ALL, kind: "personal_access_token" })
      expect(yield* Effect.flip(admin.removeMember(owner.principal, stranger.user.id))).toMatchObject({ _tag: "NotFound" })
      const plain = yield* principalFor({ role: "MEMBER", workspaceId: owner.workspace.id })
      yield* admin.removeMember(owner.principal, plain.user.id)
      expect((yield* admin.listMembers(owner.principal, {})).total).toBe(1)
      const key = yield* apiKeyFor(owner.workspace.id)
      const foreignKey = yield* apiKeyFor(stranger.workspace.id)
      expect(yield* Effect.flip(admin.revokeApiKey(owner.principal, foreignKey.credential_id))).toMatchObject({ _tag: "NotFound" })
      expect(yield* Effect.flip(admin.revokeApiKey(owner.principal, owner.principal.credential_id))).toMatchObject({ _tag: "NotFound" })
      expect((yield* admin.listApiKeys(owner.principal, {})).items.map((k) => k.id)).toEqual([key.credential_id])
      yield* admin.revokeApiKey(owner.principal, key.credential_id)
      expect(yield* Effect.flip(admin.revokeApiKey(owner.principal, key.credential_id))).toMatchObject({ _tag: "NotFound" })
      expect((yield* admin.listApiKeys(owner.principal, {})).total).toBe(0)
      expect((yield* admin.listApiKeys(stranger.principal, {})).total).toBe(1)
    }))
})

/** On the PostgreSQL server, where two transactions really overlap (the memory store and PGlite serve them in turn). */
const OnServer = coreOver(Layer.orDie(Layer.unwrapScoped(Effect.map(serverDatabase, (url) => layerPg({ url })))))

layer(OnServer, { timeout: "60 seconds" })("WorkspaceAdmin on PostgreSQL", (it) => {
  it.effect("never lets two OWNERs demote each other at once into a workspace without one", () =>
    Effect.gen(function*() {
      for (let round = 0; round < 5; round++) yield* demotingEachOther
    }))
})
