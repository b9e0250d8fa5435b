import { Authentication, CredentialStore, IssueToken, Tokens, Users } from "@convene/core"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option, Redacted, TestClock } from "effect"
import { createHash } from "node:crypto"
import { CoreLive, principalFor } from "./fixtures.js"

describe("Tokens and authentication", () => {
  layer(CoreLive)((it) => {
    it.effect("mints prefixed 256-bit tokens and stores only their SHA-256", () =>
      Effect.gen(function*() {
        const { token, principal } = yield* principalFor()
        expect(token).toMatch(/^svc_slt_v1_[A-Za-z0-9_-]{43}$/)
        const store = yield* CredentialStore
        const stored = Option.getOrThrow(yield* store.get(principal.workspace_id, principal.credential_id))
        expect(stored.token_hash).toBe(createHash("sha256").update(token).digest("hex"))
        expect(JSON.stringify(stored)).not.toContain(token.slice(11))
      }))

    it.effect("rejects missing, malformed and unknown tokens", () =>
      Effect.gen(function*() {
        const authentication = yield* Authentication
        const reasons = yield* Effect.forEach(
          ["", "abc", "svc_pat_v1_short", `svc_pat_v1_${"A".repeat(43)}`, `svc_rt_v1_${"A".repeat(43)}`],
          (token) => Effect.flip(authentication.authenticate(Redacted.make(token))).pipe(Effect.map((e) => e.reason))
        )
        expect(reasons).toEqual(["missing", "malformed", "malformed", "unknown", "malformed"])
      }))

    it.effect("expires a short-lived token after its hours", () =>
      Effect.gen(function*() {
        const { user } = yield* principalFor()
        const tokens = yield* Tokens
        const authentication = yield* Authentication
        const issued = yield* tokens.issue(user.id, new IssueToken({ kind: "short_lived", scopes: ["meetings:read"], expiry_hours: 1 }))
        yield* TestClock.adjust("59 minutes")
        expect((yield* authentication.authenticate(Redacted.make(issued.token))).scopes).toEqual(["meetings:read"])
        yield* TestClock.adjust("1 minute")
        expect((yield* Effect.flip(authentication.authenticate(Redacted.make(issued.token)))).reason).toBe("expired")
      }))

    it.effect("expires a personal access token after its days, and a revoked one answers revoked", () =>
      Effect.gen(function*() {
        const { principal, user } = yield* principalFor({ plan: "PRO" })
        const tokens = yield* Tokens
        const authentication = yield* Authentication
        const pat = yield* tokens.issue(user.id, new IssueToken({ kind: "personal_access_token", scopes: ["meetings:read"], expiry_days: 30 }))
        yield* TestClock.adjust("29 days")
        const caller = yield* authentication.authenticate(Redacted.make(pat.token))
        expect(caller.kind).toBe("personal_access_token")
        yield* tokens.revokeForCaller(caller, pat.id)
        expect((yield* Effect.flip(authentication.authenticate(Redacted.make(pat.token)))).reason).toBe("revoked")
        const other = yield* tokens.issue(user.id, new IssueToken({ kind: "personal_access_token", scopes: ["meetings:read"], expiry_days: 30 }))
        yield* TestClock.adjust("30 days")
        expect((yield* Effect.flip(authentication.authenticate(Redacted.make(other.token)))).reason).toBe("expired")
        expect(principal.kind).toBe("short_lived")
      }))

    it.effect("gates personal access tokens on the plan and scopes on the role and kind", () =>
      Effect.gen(function*() {
        const tokens = yield* Tokens
        const free = yield* principalFor({ plan: "FREE" })
        const gate = yield* Effect.flip(
          tokens.issue(free.user.id, new IssueToken({ kind: "personal_access_token", scopes: ["meetings:read"], expiry_days: 30 }))
        )
        expect(gate).toMatchObject({ _tag: "PlanRequired", current_plan: "FREE", required_plan: "PRO" })
        const member = yield* principalFor({ plan: "PRO", role: "MEMBER" })
        const beyondRole = yield* Effect.flip(
          tokens.issue(member.user.id, new IssueToken({ kind: "personal_access_token", scopes: ["workspace:read"], expiry_days: 30 }))
        )
        expect(beyondRole).toMatchObject({ _tag: "ValidationError", field: "scopes" })
        const admin = yield* principalFor({ plan: "PRO", role: "ADMIN" })
        const shortWithWorkspace = yield* Effect.flip(
          tokens.issue(admin.user.id, new IssueToken({ kind: "short_lived", scopes: ["workspace:read"], expiry_hours: 2 }))
        )
        expect(shortWithWorkspace).toMatchObject({ _tag: "ValidationError", field: "scopes" })
        const adminPat = yield* tokens.issue(
          admin.user.id,
          new IssueToken({ kind: "personal_access_token", scopes: ["workspace:write", "meetings:read"], expiry_days: 90 })
        )
        expect(adminPat.scopes).toEqual(["meetings:read", "workspace:write"])
        const wrongExpiry = yield* Effect.flip(
          tokens.issue(admin.user.id, new IssueToken({ kind: "personal_access_token", scopes: ["meetings:read"], expiry_hours: 2 }))
        )
        expect(wrongExpiry).toMatchObject({ _tag: "ValidationError", field: "expiry_hours" })
      }))

    it.effect("lets a workspace API key act as the workspace with every scope", () =>
      Effect.gen(function*() {
        const { workspace } = yield* principalFor()
        const tokens = yield* Tokens
        const authentication = yield* Authentication
        const key = yield* tokens.issueApiKey(workspace.id, { name: "CI" } as never)
        expect(key.key).toMatch(/^svc_wk_v1_[A-Za-z0-9_-]{43}$/)
        const principal = yield* authentication.authenticate(Redacted.make(key.key))
        expect(principal).toMatchObject({ kind: "api_key", user_id: null, workspace_id: workspace.id, expires_at: null })
        expect(principal.scopes).toHaveLength(7)
        expect(authentication.introspect(principal)).toMatchObject({ active: true, kind: "api_key", token_id: key.id })
      }))

    it.effect("verifies passwords with scrypt and says nothing about which part was wrong", () =>
      Effect.gen(function*() {
        const users = yield* Users
        const { workspace } = yield* principalFor()
        const email = `p-${crypto.randomUUID()}@example.com`
        yield* users.create(workspace.id, { email, name: "Pat", role: "MEMBER", password: "hunter2hunter2" } as never)
        expect(Option.isSome(yield* users.verifyPassword(email.toUpperCase(), "hunter2hunter2"))).toBe(true)
        expect(Option.isNone(yield* users.verifyPassword(email, "wrong-password"))).toBe(true)
        expect(Option.isNone(yield* users.verifyPassword("nobody@example.com", "hunter2hunter2"))).toBe(true)
      }))
  })
})
