/** The core wired to the in-memory store and node:crypto, and helpers that make principals through the real services. */
import {
  Authentication,
  Convene,
  CreateApiKey,
  CreateUser,
  CreateWorkspace,
  Email,
  IssueToken,
  type Plan,
  type Role,
  type Scope,
  type StorePorts,
  Tokens,
  Users,
  type WorkspaceId,
  Workspaces
} from "@convene/core"
import { NodeCrypto } from "@convene/node"
import * as StoreMemory from "@convene/store-memory"
import { Effect, Layer, Redacted, Tracer } from "effect"

/**
 * The core over `store` (every storage port) and node:crypto, with the ports exposed too so that tests can
 * look at what was stored.
 */
export const coreOver = (store: Layer.Layer<StorePorts>) =>
  Convene.layer.pipe(
    Layer.provideMerge(store),
    Layer.provideMerge(NodeCrypto.layer)
  )

/** The core on the in-memory store. */
export const CoreLive = coreOver(StoreMemory.layer)

const memberScopes: ReadonlyArray<Scope> = ["meetings:read", "meetings:write", "action-items:read", "action-items:write"]

/** A fresh, unique e-mail address. */
export const freshEmail = (tag = "u"): Email => Email.make(`${tag}-${crypto.randomUUID()}@example.com`)

/**
 * A workspace (or the given one) with one user and a principal authenticated from a real token of theirs:
 * short-lived unless `kind` says personal_access_token (which needs a paid plan).
 */
export const principalFor = (options: {
  readonly plan?: Plan
  readonly role?: Role
  readonly scopes?: ReadonlyArray<Scope>
  readonly workspaceId?: WorkspaceId
  readonly kind?: "short_lived" | "personal_access_token"
} = {}) =>
  Effect.gen(function*() {
    const workspaces = yield* Workspaces
    const users = yield* Users
    const tokens = yield* Tokens
    const authentication = yield* Authentication
    const workspace = options.workspaceId === undefined
      ? yield* workspaces.create(new CreateWorkspace({ name: "Acme", plan: options.plan ?? "PRO" }))
      : yield* workspaces.get(options.workspaceId)
    const user = yield* users.create(
      workspace.id,
      CreateUser.make({ email: freshEmail(), name: "Ann", role: options.role ?? "MEMBER" })
    )
    const scopes = options.scopes ?? memberScopes
    const issued = yield* tokens.issue(
      user.id,
      options.kind === "personal_access_token"
        ? new IssueToken({ kind: "personal_access_token", scopes, expiry_days: 30 })
        : new IssueToken({ kind: "short_lived", scopes, expiry_hours: 6 })
    )
    const principal = yield* authentication.authenticate(Redacted.make(issued.token))
    return { workspace, user, token: issued.token, principal }
  }).pipe(Effect.orDie)

/** A principal authenticated from a new workspace API key of the workspace. */
export const apiKeyFor = (workspaceId: WorkspaceId) =>
  Effect.gen(function*() {
    const key = yield* (yield* Tokens).issueApiKey(workspaceId, CreateApiKey.make({ name: "CI" }))
    return yield* (yield* Authentication).authenticate(Redacted.make(key.key))
  }).pipe(Effect.orDie)

/** Runs `effect` under a tracer that records the names of the spans it opens, in order, with how it ended. */
export const spansOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const names: Array<string> = []
    const native = yield* Effect.tracer
    const recording = Tracer.make({
      span: (name, parent, context, links, startTime, kind, options) => {
        names.push(name)
        return native.span(name, parent, context, links, startTime, kind, options)
      },
      context: native.context
    })
    const exit = yield* Effect.exit(Effect.withTracer(effect, recording))
    return { names, exit }
  })
