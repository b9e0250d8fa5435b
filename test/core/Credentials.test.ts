/**
 * The operator's view of credentials (identity/Tokens.ts): the tokens of a workspace's users, its API keys and
 * one user's tokens, listed live only (neither revoked nor expired, on the clock), newest first, never with the
 * token or its hash, with the scopes they authenticate with now; and revoking any of them, which takes effect at
 * once.
 */
import {
  Authentication,
  CreateApiKey,
  CredentialView,
  IssueToken,
  Scopes,
  Tokens,
  UpdateUser,
  UserId,
  Users,
  WorkspaceId,
  CredentialId
} from "@convene/core"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Redacted, Schema, TestClock } from "effect"
import { CoreLive, principalFor } from "./fixtures.js"

const idsOf = (list: { readonly items: ReadonlyArray<{ readonly id: string }> }) => list.items.map((item) => item.id)

describe("Tokens (operator)", () => {
  layer(CoreLive)((it) => {
    it.effect("lists the workspace's users' tokens, its API keys and a user's tokens: live ones only, newest first", () =>
      Effect.gen(function*() {
        const tokens = yield* Tokens
        const admin = yield* principalFor({ plan: "PRO", role: "ADMIN", scopes: Scopes, kind: "personal_access_token" })
        const workspaceId = admin.workspace.id
        yield* TestClock.adjust("1 minute")
        const member = yield* principalFor({ workspaceId })
        yield* TestClock.adjust("1 minute")
        const key = yield* tokens.issueApiKey(workspaceId, CreateApiKey.make({ name: "CI" }))
        yield* TestClock.adjust("1 minute")
        const revokedKey = yield* tokens.issueApiKey(workspaceId, CreateApiKey.make({ name: "old" }))
        yield* tokens.revoke(revokedKey.id)
        yield* TestClock.adjust("1 minute")
        const hourly = yield* tokens.issue(member.user.id, IssueToken.make({ kind: "short_lived", scopes: ["meetings:read"], expiry_hours: 1 }))
        const revoked = yield* tokens.issue(member.user.id, IssueToken.make({ kind: "short_lived", scopes: ["meetings:read"], expiry_hours: 1 }))
        yield* tokens.revoke(revoked.id)
        // Another workspace's credentials are never listed.
        const stranger = yield* principalFor({ plan: "PRO" })
        yield* tokens.issueApiKey(stranger.workspace.id, CreateApiKey.make({ name: "theirs" }))

        const held = yield* tokens.listForWorkspace(workspaceId, {})
        expect(idsOf(held)).toEqual([hourly.id, member.principal.credential_id, admin.principal.credential_id])
        expect(held).toMatchObject({ total: 3, limit: 20, offset: 0 })
        expect(held.items[0]).toEqual(new CredentialView({
          id: hourly.id,
          workspace_id: workspaceId,
          user_id: member.user.id,
          kind: "short_lived",
          name: null,
          scopes: ["meetings:read"],
          client_id: null,
          expires_at: hourly.expires_at,
          created_at: hourly.created_at
        }))
        // Never the token nor its hash, on the wire either.
        const encoded = JSON.stringify(Schema.encodeSync(Schema.Array(CredentialView))(held.items))
        for (const t of [admin.token, member.token, hourly.token]) expect(encoded).not.toContain(t.slice(-20))
        expect(encoded).not.toContain("token_hash")
        expect(Object.keys(Schema.encodeSync(CredentialView)(held.items[0]!)).sort()).toEqual(
          ["client_id", "created_at", "expires_at", "id", "kind", "name", "scopes", "user_id", "workspace_id"]
        )

        const keys = yield* tokens.listApiKeys(workspaceId, {})
        expect(idsOf(keys)).toEqual([key.id])
        expect(keys.items[0]).toMatchObject({ kind: "api_key", user_id: null, name: "CI", scopes: Scopes, expires_at: null })
        expect(idsOf(yield* tokens.listForUser(member.user.id, {}))).toEqual([hourly.id, member.principal.credential_id])
        expect(idsOf(yield* tokens.listForUser(admin.user.id, {}))).toEqual([admin.principal.credential_id])
        expect(yield* tokens.listForWorkspace(workspaceId, { limit: 1, offset: 1 })).toMatchObject({
          items: [{ id: member.principal.credential_id }],
          total: 3,
          limit: 1,
          offset: 1
        })

        // At its expiry instant a token is gone from the lists.
        yield* TestClock.adjust("1 hour")
        expect(idsOf(yield* tokens.listForUser(member.user.id, {}))).toEqual([member.principal.credential_id])
        expect(idsOf(yield* tokens.listForWorkspace(workspaceId, {}))).toEqual([member.principal.credential_id, admin.principal.credential_id])
      }))

    it.effect("a listed user's token shows the scopes the user's current role grants", () =>
      Effect.gen(function*() {
        const tokens = yield* Tokens
        const admin = yield* principalFor({ plan: "PRO", role: "ADMIN", scopes: ["meetings:read", "workspace:read"], kind: "personal_access_token" })
        expect((yield* tokens.listForUser(admin.user.id, {})).items[0]?.scopes).toEqual(["meetings:read", "workspace:read"])
        yield* (yield* Users).update(admin.user.id, UpdateUser.make({ role: "MEMBER" }))
        expect((yield* tokens.listForWorkspace(admin.workspace.id, {})).items[0]?.scopes).toEqual(["meetings:read"])
      }))

    it.effect("lists of an unknown workspace or user are NotFound", () =>
      Effect.gen(function*() {
        const tokens = yield* Tokens
        const workspace = WorkspaceId.make(crypto.randomUUID())
        const user = UserId.make(crypto.randomUUID())
        expect(yield* Effect.flip(tokens.listForWorkspace(workspace, {}))).toMatchObject({ _tag: "NotFound", resource: "workspace", id: workspace })
        expect(yield* Effect.flip(tokens.listApiKeys(workspace, {}))).toMatchObject({ _tag: "NotFound", resource: "workspace", id: workspace })
        expect(yield* Effect.flip(tokens.listForUser(user, {}))).toMatchObject({ _tag: "NotFound", resource: "user", id: user })
      }))

    it.effect("revoke: a user's token or an API key stops authenticating at once; again, or unknown, is NotFound", () =>
      Effect.gen(function*() {
        const tokens = yield* Tokens
        const authentication = yield* Authentication
        const { principal, token, workspace } = yield* principalFor()
        const key = yield* tokens.issueApiKey(workspace.id, CreateApiKey.make({ name: "CI" }))
        for (const [id, presented] of [[principal.credential_id, token], [key.id, key.key]] as const) {
          yield* authentication.authenticate(Redacted.make(presented))
          yield* tokens.revoke(id)
          expect(yield* Effect.flip(authentication.authenticate(Redacted.make(presented)))).toMatchObject({ reason: "revoked" })
          expect(yield* Effect.flip(tokens.revoke(id))).toMatchObject({ _tag: "NotFound", resource: "token", id })
        }
        const unknown = CredentialId.make(crypto.randomUUID())
        expect(yield* Effect.flip(tokens.revoke(unknown))).toMatchObject({ _tag: "NotFound", resource: "token", id: unknown })
        expect((yield* tokens.listApiKeys(workspace.id, {})).total).toBe(0)
      }))
  })
})
