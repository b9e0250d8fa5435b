import {
  Authentication,
  CreateApiKey,
  CreateUser,
  Credential,
  CredentialId,
  CredentialStore,
  IssuePersonalAccessToken,
  IssueToken,
  Principal,
  type Scope,
  Tokens,
  tokenIssuers,
  UserId,
  Users
} from "@convene/core"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option, Redacted, Schema, TestClock } from "effect"
import { createHash } from "node:crypto"
import { apiKeyFor, CoreLive, freshEmail, principalFor } from "./fixtures.js"

const patRequest = (scopes: ReadonlyArray<Scope> = ["meetings:read"]) =>
  IssuePersonalAccessToken.make({ name: "laptop", scopes, expiry_days: 30 })

/** The ids of the user's credentials, newest first. */
const credentialsOf = (userId: UserId) =>
  Effect.map(Effect.flatMap(CredentialStore, (store) => store.listByUser(userId)), (list) => list.map((c) => c.id))

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
        const key = yield* tokens.issueApiKey(workspace.id, CreateApiKey.make({ name: "CI" }))
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
        const email = freshEmail("p")
        yield* users.create(workspace.id, CreateUser.make({ email, name: "Pat", role: "MEMBER", password: "hunter2hunter2" }))
        expect(Option.isSome(yield* users.verifyPassword(` ${email.toUpperCase()} `, "hunter2hunter2"))).toBe(true)
        expect(Option.isNone(yield* users.verifyPassword(email, "wrong-password"))).toBe(true)
        expect(Option.isNone(yield* users.verifyPassword("nobody@example.com", "hunter2hunter2"))).toBe(true)
        expect(Option.isNone(yield* users.verifyPassword("not an address", "hunter2hunter2"))).toBe(true)
      }))

    it.effect("keeps a user's e-mail as decoded: trimmed and lower-cased; the same address in another case is taken (409)", () =>
      Effect.gen(function*() {
        const users = yield* Users
        const { workspace } = yield* principalFor()
        const local = `Mixed.${crypto.randomUUID()}`
        const input = yield* Schema.decodeUnknown(CreateUser)({ email: `  ${local}@Example.COM `, name: "Max", role: "MEMBER" })
        const user = yield* users.create(workspace.id, input)
        expect(user.email).toBe(`${local.toLowerCase()}@example.com`)
        const again = yield* Schema.decodeUnknown(CreateUser)({ email: `${local.toUpperCase()}@EXAMPLE.com`, name: "Max", role: "MEMBER" })
        const refused = yield* Effect.flip(users.create(workspace.id, again))
        expect(refused).toMatchObject({ _tag: "Conflict" })
      }))

    it.effect("issueForCaller: a personal access token may issue one to its user, within its own scopes", () =>
      Effect.gen(function*() {
        const tokens = yield* Tokens
        const authentication = yield* Authentication
        const { principal, user } = yield* principalFor({ plan: "PRO", kind: "personal_access_token", scopes: ["meetings:read", "meetings:write"] })
        expect(principal.kind).toBe("personal_access_token")
        const before = yield* credentialsOf(user.id)
        // Later than the caller's own token, so that it lists first.
        yield* TestClock.adjust("1 minute")
        const issued = yield* tokens.issueForCaller(principal, patRequest(["meetings:write"]))
        expect(issued).toMatchObject({ kind: "personal_access_token", name: "laptop", scopes: ["meetings:write"] })
        expect(yield* credentialsOf(user.id)).toEqual([issued.id, ...before])
        const caller = yield* authentication.authenticate(Redacted.make(issued.token))
        expect(caller).toMatchObject({ kind: "personal_access_token", user_id: user.id, scopes: ["meetings:write"] })

        const beyond = yield* Effect.flip(tokens.issueForCaller(principal, patRequest(["meetings:read", "action-items:read"])))
        expect(beyond).toMatchObject({ _tag: "ValidationError", field: "scopes" })
        expect(beyond.message).toContain("action-items:read")
        expect(yield* credentialsOf(user.id)).toEqual([issued.id, ...before])
      }))

    it.effect("issueForCaller: an OAuth access token may too (tokenIssuers)", () =>
      Effect.gen(function*() {
        const { principal, user } = yield* principalFor({ plan: "PRO" })
        expect(tokenIssuers).toEqual(["personal_access_token", "access_token", "session"])
        // The principal an OAuth access token authenticates as (the OAuth server's own tests mint real ones).
        const oauth = new Principal({ ...principal, credential_id: CredentialId.make(crypto.randomUUID()), kind: "access_token", client_id: "app" })
        const issued = yield* (yield* Tokens).issueForCaller(oauth, patRequest())
        expect(issued.kind).toBe("personal_access_token")
        expect(yield* credentialsOf(user.id)).toContain(issued.id)
      }))

    it.effect("issueForCaller: a short-lived token and a workspace API key get InsufficientScope naming their kind, and nothing is issued", () =>
      Effect.gen(function*() {
        const tokens = yield* Tokens
        const { principal, user, workspace } = yield* principalFor({ plan: "PRO" })
        expect(principal.kind).toBe("short_lived")
        const before = yield* credentialsOf(user.id)

        const shortLived = yield* Effect.flip(tokens.issueForCaller(principal, patRequest()))
        expect(shortLived).toMatchObject({ _tag: "InsufficientScope", required: "personal_access_token access_token session" })
        expect(shortLived.message).toMatch(/^a short-lived token cannot issue tokens/)

        const apiKey = yield* apiKeyFor(workspace.id)
        const keyRefused = yield* Effect.flip(tokens.issueForCaller(apiKey, patRequest()))
        expect(keyRefused).toMatchObject({ _tag: "InsufficientScope" })
        expect(keyRefused.message).toMatch(/^a workspace API key cannot issue tokens/)
        // Not even when it names a user (a key never does; the kind decides).
        const keyWithUser = new Principal({ ...apiKey, user_id: user.id, role: "OWNER" })
        expect((yield* Effect.flip(tokens.issueForCaller(keyWithUser, patRequest())))._tag).toBe("InsufficientScope")

        expect(yield* credentialsOf(user.id)).toEqual(before)
      }))
  })
})

describe("Authentication against what the store holds", () => {
  layer(CoreLive)((it) => {
    it.effect("reads a token with white space around it as the token", () =>
      Effect.gen(function*() {
        const { principal, token } = yield* principalFor()
        const padded = yield* (yield* Authentication).authenticate(Redacted.make(`  ${token}\t`))
        expect(padded.credential_id).toBe(principal.credential_id)
      }))

    it.effect("refuses a user's token whose user is gone, or in another workspace, as revoked", () =>
      Effect.gen(function*() {
        const store = yield* CredentialStore
        const { principal, workspace } = yield* principalFor()
        const other = yield* principalFor()
        const authenticate = (yield* Authentication).authenticate
        const stored = Option.getOrThrow(yield* store.get(workspace.id, principal.credential_id))
        for (const [label, userId] of [["gone", UserId.make(crypto.randomUUID())], ["elsewhere", other.user.id]] as const) {
          const token = `svc_slt_v1_${"A".repeat(42)}${label === "gone" ? "g" : "e"}`
          yield* store.insert(new Credential({
            ...stored,
            id: CredentialId.make(crypto.randomUUID()),
            user_id: userId,
            token_hash: createHash("sha256").update(token).digest("hex")
          }))
          expect(yield* Effect.flip(authenticate(Redacted.make(token))), label).toMatchObject({ _tag: "Unauthenticated", reason: "revoked" })
        }
      }))

    it.effect("keeps only the scopes the user's role grants, whatever the credential holds", () =>
      Effect.gen(function*() {
        const store = yield* CredentialStore
        const { principal, workspace } = yield* principalFor({ role: "MEMBER" })
        const stored = Option.getOrThrow(yield* store.get(workspace.id, principal.credential_id))
        const token = `svc_slt_v1_${"B".repeat(43)}`
        yield* store.insert(new Credential({
          ...stored,
          id: CredentialId.make(crypto.randomUUID()),
          scopes: ["meetings:read", "workspace:read", "workspace:write"],
          token_hash: createHash("sha256").update(token).digest("hex")
        }))
        const member = yield* (yield* Authentication).authenticate(Redacted.make(token))
        expect(member.scopes).toEqual(["meetings:read"])
        expect((yield* Authentication).introspect(member).scopes).toEqual(["meetings:read"])
      }))

    it.effect("lists only the caller's live personal access tokens, newest first", () =>
      Effect.gen(function*() {
        const tokens = yield* Tokens
        const { principal, user } = yield* principalFor({ plan: "PRO", kind: "personal_access_token" })
        yield* tokens.issue(user.id, IssueToken.make({ kind: "short_lived", scopes: ["meetings:read"], expiry_hours: 1 }))
        yield* TestClock.adjust("1 minute")
        const second = yield* tokens.issueForCaller(principal, patRequest())
        const listed = yield* tokens.listForCaller(principal, {})
        expect(listed.items.map((t) => t.id)).toEqual([second.id, principal.credential_id])
        expect(listed.items.every((t) => t.kind === "personal_access_token")).toBe(true)
        yield* tokens.revokeForCaller(principal, second.id)
        expect((yield* tokens.listForCaller(principal, {})).items.map((t) => t.id)).toEqual([principal.credential_id])
      }))
  })
})
