/** Scope and role rules every service applies to the principal before it touches data. */
import { Effect } from "effect"
import { InsufficientScope } from "../shared/Errors.js"
import type { HeldScope, Principal } from "./Identity.js"

export const requireScope = (principal: Principal, scope: HeldScope): Effect.Effect<void, InsufficientScope> =>
  principal.scopes.includes(scope)
    ? Effect.void
    : Effect.fail(new InsufficientScope({ required: scope, message: `this credential lacks the scope ${scope}` }))

/**
 * Workspace API keys act as the workspace, and OWNER and ADMIN users administer it: they see and change
 * every meeting. Members see the meetings they take part in.
 */
export const actsForWorkspace = (principal: Principal): boolean =>
  principal.kind === "api_key" || principal.role === "OWNER" || principal.role === "ADMIN"

/** The key of things that are private per caller (talking points): the user, or the API key itself. */
export const subjectOf = (principal: Principal): string => principal.user_id ?? principal.credential_id

/**
 * Workspace administration (members, API keys, webhooks) is for OWNER and ADMIN users, and for workspace API keys,
 * which act as the workspace; a MEMBER gets 403 whatever the token's scopes.
 */
export const requireWorkspaceAdmin = (principal: Principal): Effect.Effect<void, InsufficientScope> =>
  actsForWorkspace(principal)
    ? Effect.void
    : Effect.fail(new InsufficientScope({ required: "ADMIN or OWNER role", message: "workspace administration needs the ADMIN or OWNER role" }))
