/**
 * Workspace administration for the workspace's own administrators: its settings, its members and its API keys.
 * Who may: scope workspace:read (the reads) or workspace:write (the changes), and the ADMIN or OWNER role (a
 * workspace API key acts as the workspace); the role rules are Administration.ts's. The work is the operator's
 * services' (Workspaces, Users, Tokens): a member is removed with the operator's user deletion cascade, an API key
 * is revoked as the operator revokes one (soft delete: the row stays, revoked).
 *
 * Decisions where the documents are silent:
 * - an unknown `default_template_id` is 404 `not_found`, as for a meeting's `template_id` (a template of a toolkit
 *   installed in the workspace counts; one its installed version no longer has is unknown: Templates.ts);
 * - a member of another workspace, or an unknown user, is 404; so is an API key of another workspace, a revoked
 *   (deleted) one (a repeated DELETE is 404) and the id of a user's token (this is for API keys only);
 * - the members list and the API key list are newest first; the API key list shows live keys only.
 */
import { Context, Effect, Layer, Option } from "effect"
import { requireScope, requireWorkspaceAdmin } from "../identity/Access.js"
import { isFirstPartyScope, type Principal } from "../identity/Identity.js"
import { CredentialStore, UserStore } from "../identity/IdentityStore.js"
import { Tokens } from "../identity/Tokens.js"
import { UpdateUser, Users } from "../identity/Users.js"
import { templateCatalog } from "../meetings/Templates.js"
import type { Crypto } from "../ports/Crypto.js"
import { Transactor } from "../ports/Transactor.js"
import { NotFound } from "../shared/Errors.js"
import type { CredentialId, UserId } from "../shared/Ids.js"
import { clamp, type PageRequest, toList } from "../shared/Pagination.js"
import { trusted } from "../shared/Trusted.js"
import { Workspaces } from "../workspaces/Workspaces.js"
import { WorkspaceStore } from "../workspaces/WorkspaceStore.js"
import {
  ApiKeyView,
  type ChangeMemberRole,
  Member,
  removalRefusal,
  roleChangeRefusal,
  type UpdateWorkspaceSettings
} from "./Administration.js"
import { fn } from "../shared/Span.js"
import { ToolkitUpdates } from "../partner/toolkits/Toolkit.js"
import { ToolkitStore } from "../partner/toolkits/ToolkitStore.js"

const make = Effect.gen(function*() {
  const workspaces = yield* Workspaces
  const workspaceStore = yield* WorkspaceStore
  const users = yield* Users
  const userStore = yield* UserStore
  const tokens = yield* Tokens
  const credentials = yield* CredentialStore
  const transactor = yield* Transactor
  const toolkitStore = yield* ToolkitStore
  const catalog = yield* templateCatalog

  const admin = (principal: Principal, scope: "workspace:read" | "workspace:write") =>
    Effect.zipRight(requireScope(principal, scope), requireWorkspaceAdmin(principal))

  const getSettings = fn("WorkspaceAdmin.getSettings")(function*(principal: Principal) {
    yield* admin(principal, "workspace:read")
    return yield* workspaces.get(principal.workspace_id)
  })

  const updateSettings = fn("WorkspaceAdmin.updateSettings")(function*(
    principal: Principal,
    input: UpdateWorkspaceSettings
  ) {
    yield* admin(principal, "workspace:write")
    const templateId = input.default_template_id
    if (templateId !== undefined && templateId !== null && (yield* catalog.find(principal.workspace_id, templateId)) === undefined) {
      return yield* Effect.fail(NotFound.of("meeting template", templateId))
    }
    return yield* workspaces.updateSettings(principal.workspace_id, input)
  })

  /** Whether the workspace takes partner toolkits' updates (see ToolkitUpdates). */
  const toolkitUpdates = fn("WorkspaceAdmin.toolkitUpdates")(function*(principal: Principal) {
    yield* admin(principal, "workspace:read")
    return new ToolkitUpdates({ auto_updates: yield* toolkitStore.autoUpdates(principal.workspace_id) }, trusted)
  })

  const setToolkitUpdates = fn("WorkspaceAdmin.setToolkitUpdates")(function*(principal: Principal, input: ToolkitUpdates) {
    yield* admin(principal, "workspace:write")
    yield* toolkitStore.setAutoUpdates(principal.workspace_id, input.auto_updates)
    return input
  })

  const listMembers = fn("WorkspaceAdmin.listMembers")(function*(principal: Principal, request: PageRequest) {
    yield* admin(principal, "workspace:read")
    const page = clamp(request)
    const slice = yield* userStore.list({ workspaceId: principal.workspace_id }, page)
    return toList({ items: slice.items.map(Member.of), total: slice.total }, page)
  })

  /** The member of the caller's workspace (NotFound for an unknown user or another workspace's). */
  const memberOf = (principal: Principal, id: UserId) =>
    userStore.get(id).pipe(
      Effect.flatMap((found) =>
        Option.match(Option.filter(found, (user) => user.workspace_id === principal.workspace_id), {
          onNone: () => Effect.fail(NotFound.of("member", id)),
          onSome: Effect.succeed
        })
      )
    )

  /**
   * The rule and the change in one transaction that holds the workspace first (WorkspaceStore.lock), so that two
   * administrators changing OWNERs at once are served one after the other and cannot both take away the last but
   * one OWNER.
   */
  const serialized = <A, E, R>(principal: Principal, effect: Effect.Effect<A, E, R>) =>
    transactor.withTransaction(Effect.zipRight(workspaceStore.lock(principal.workspace_id), effect))

  const owners = (principal: Principal) =>
    Effect.map(
      userStore.list({ workspaceId: principal.workspace_id, role: "OWNER" }, { limit: 1, offset: 0 }),
      (slice) => slice.total
    )

  const changeRole = fn("WorkspaceAdmin.changeRole")(function*(
    principal: Principal,
    id: UserId,
    input: ChangeMemberRole
  ) {
    yield* admin(principal, "workspace:write")
    yield* memberOf(principal, id)
    return yield* serialized(
      principal,
      Effect.gen(function*() {
        const target = yield* memberOf(principal, id)
        const refused = roleChangeRefusal(principal, target, input.role, yield* owners(principal))
        if (Option.isSome(refused)) return yield* Effect.fail(refused.value)
        if (target.role === input.role) return Member.of(target)
        return Member.of(yield* users.update(id, new UpdateUser({ role: input.role }, trusted)))
      })
    )
  })

  const removeMember = fn("WorkspaceAdmin.removeMember")(function*(principal: Principal, id: UserId) {
    yield* admin(principal, "workspace:write")
    yield* memberOf(principal, id)
    yield* serialized(
      principal,
      Effect.gen(function*() {
        const target = yield* memberOf(principal, id)
        const refused = removalRefusal(principal, target, yield* owners(principal))
        if (Option.isSome(refused)) return yield* Effect.fail(refused.value)
        yield* users.delete(id)
      })
    )
  })

  const listApiKeys = fn("WorkspaceAdmin.listApiKeys")(function*(principal: Principal, request: PageRequest) {
    yield* admin(principal, "workspace:read")
    const listed = yield* tokens.listApiKeys(principal.workspace_id, request)
    return {
      ...listed,
      items: listed.items.map((key) =>
        new ApiKeyView({ id: key.id, workspace_id: key.workspace_id, name: key.name, scopes: key.scopes.filter(isFirstPartyScope), created_at: key.created_at }, trusted)
      )
    }
  })

  /** Soft-deletes (revokes) one of the workspace's live API keys: it answers 401 from the next request on. */
  const revokeApiKey = fn("WorkspaceAdmin.revokeApiKey")(function*(principal: Principal, id: CredentialId) {
    yield* admin(principal, "workspace:write")
    const found = Option.filter(
      yield* credentials.get(principal.workspace_id, id),
      (credential) => credential.kind === "api_key" && credential.revoked_at === null
    )
    if (Option.isNone(found)) return yield* Effect.fail(NotFound.of("API key", id))
    yield* tokens.revoke(id).pipe(Effect.mapError(() => NotFound.of("API key", id)))
  })

  return {
    getSettings,
    updateSettings,
    toolkitUpdates,
    setToolkitUpdates,
    listMembers,
    changeRole,
    removeMember,
    listApiKeys,
    revokeApiKey
  } as const
})

export class WorkspaceAdmin extends Context.Tag("@convene/core/WorkspaceAdmin")<
  WorkspaceAdmin,
  Effect.Effect.Success<typeof make>
>() {
  static readonly layer: Layer.Layer<
    WorkspaceAdmin,
    never,
    Workspaces | WorkspaceStore | Users | UserStore | Tokens | CredentialStore | Transactor | ToolkitStore | Crypto
  > = Layer.effect(WorkspaceAdmin, make)
}
