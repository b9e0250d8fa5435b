/** The core wired to the in-memory store and node:crypto, and helpers that make principals through the real services. */
import {
  Authentication,
  Convene,
  CreateUser,
  CreateWorkspace,
  IssueToken,
  type Plan,
  type Role,
  type Scope,
  Tokens,
  Users,
  Workspaces
} from "@convene/core"
import { NodeCrypto } from "@convene/node"
import * as StoreMemory from "@convene/store-memory"
import { Effect, Layer, Redacted } from "effect"

export const CoreLive = Convene.layer.pipe(
  Layer.provideMerge(StoreMemory.layer),
  Layer.provideMerge(NodeCrypto.layer)
)

const memberScopes: ReadonlyArray<Scope> = ["meetings:read", "meetings:write", "action-items:read", "action-items:write"]

/** A workspace with one user and a principal authenticated from a real token of theirs. */
export const principalFor = (options: {
  readonly plan?: Plan
  readonly role?: Role
  readonly scopes?: ReadonlyArray<Scope>
  readonly workspaceId?: string
} = {}) =>
  Effect.gen(function*() {
    const workspaces = yield* Workspaces
    const users = yield* Users
    const tokens = yield* Tokens
    const authentication = yield* Authentication
    const workspace = options.workspaceId === undefined
      ? yield* workspaces.create(new CreateWorkspace({ name: "Acme", plan: options.plan ?? "PRO" }))
      : yield* workspaces.get(options.workspaceId as never)
    const user = yield* users.create(
      workspace.id,
      CreateUser.make({ email: `u-${crypto.randomUUID()}@example.com`, name: "Ann", role: options.role ?? "MEMBER" })
    )
    const issued = yield* tokens.issue(
      user.id,
      new IssueToken({ kind: "short_lived", scopes: options.scopes ?? memberScopes, expiry_hours: 6 })
    )
    const principal = yield* authentication.authenticate(Redacted.make(issued.token))
    return { workspace, user, token: issued.token, principal }
  }).pipe(Effect.orDie)
