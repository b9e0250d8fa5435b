/**
 * Workspace administration as its administrators see it (the first-party document's /v1/workspace,
 * /v1/workspace/members and /v1/workspace/api-keys): the schemas, and the rules about roles as values.
 *
 * The rules (decisions where the documents are silent):
 * - only an OWNER (or a workspace API key, which acts as the workspace) may grant the OWNER role, or change or
 *   remove a member who is an OWNER; an ADMIN manages MEMBERs and ADMINs (themself included): 403
 *   `insufficient_scope` otherwise;
 * - a workspace always keeps an OWNER: demoting or removing its last OWNER is 409 `conflict`, whoever asks
 *   (the operator API, which provisions workspaces, may still delete a last OWNER).
 */
import { Option, Schema } from "effect"
import { type Principal, Role, Scope, type User } from "../identity/Identity.js"
import { Conflict, InsufficientScope } from "../shared/Errors.js"
import { CredentialId, TemplateId, UserId, WorkspaceId } from "../shared/Ids.js"
import { Email, requestBody } from "../shared/Text.js"
import { Timestamp } from "../shared/Time.js"
import { trusted } from "../shared/Trusted.js"
import { DetailLevel, WorkspaceName } from "../workspaces/Workspace.js"

/** PATCH /v1/workspace: what the request leaves out is kept; `default_template_id: null` clears the default. */
export class UpdateWorkspaceSettings extends Schema.Class<UpdateWorkspaceSettings>("UpdateWorkspaceSettings")({
  name: Schema.optional(WorkspaceName),
  default_detail_level: Schema.optional(DetailLevel).annotations({
    description: "the detail level of a new meeting whose request names none and whose template (if any) does not set one"
  }),
  default_template_id: Schema.optional(Schema.NullOr(TemplateId)).annotations({
    description: "the template of a new meeting whose request names none (GET /v1/meeting-templates; unknown: 404); null clears it"
  })
}, requestBody) {}

/** A member of the workspace: one of its users, with their role. */
export class Member extends Schema.Class<Member>("Member")({
  id: UserId.annotations({ description: "the user's id: the {userID} of /v1/workspace/members/{userID}" }),
  workspace_id: WorkspaceId,
  email: Email,
  name: Schema.String,
  role: Role,
  created_at: Timestamp.annotations({ description: "when the user joined the workspace" }),
  updated_at: Timestamp.annotations({ description: "when the user's name or role last changed" })
}) {
  static readonly of = (user: User) =>
    new Member({
      id: user.id,
      workspace_id: user.workspace_id,
      email: user.email,
      name: user.name,
      role: user.role,
      created_at: user.created_at,
      updated_at: user.updated_at
    }, trusted)
}

/** PATCH /v1/workspace/members/{userID}. */
export class ChangeMemberRole extends Schema.Class<ChangeMemberRole>("ChangeMemberRole")({
  role: Role
}, requestBody) {}

/** A workspace API key as its administrators list it: never the key, nor its hash. */
export class ApiKeyView extends Schema.Class<ApiKeyView>("ApiKeyView")({
  id: CredentialId,
  workspace_id: WorkspaceId,
  name: Schema.NullOr(Schema.String),
  scopes: Schema.Array(Scope).annotations({ description: "what the key may do: a workspace API key holds every scope" }),
  created_at: Timestamp
}) {}

/** An OWNER, or a workspace API key (which acts as the workspace): who may grant, change or take the OWNER role. */
export const actsAsOwner = (principal: Principal): boolean => principal.kind === "api_key" || principal.role === "OWNER"

const ownerOnly = (what: string) =>
  new InsufficientScope({ required: "OWNER role", message: `only an OWNER may ${what}` })

/**
 * Why `principal` may not change `target`'s role to `to` while the workspace has `owners` OWNERs; none when it
 * may. Setting the role a member already has is no change and is always allowed to an administrator who may
 * manage that member.
 */
export const roleChangeRefusal = (
  principal: Principal,
  target: Pick<User, "role">,
  to: Role,
  owners: number
): Option.Option<InsufficientScope | Conflict> => {
  if (!actsAsOwner(principal)) {
    if (target.role === "OWNER") return Option.some(ownerOnly("change the role of an OWNER"))
    if (to === "OWNER") return Option.some(ownerOnly("grant the OWNER role"))
  }
  if (target.role === "OWNER" && to !== "OWNER" && owners <= 1) {
    return Option.some(
      new Conflict({ message: "this is the workspace's last OWNER: make another member OWNER before changing this one's role" })
    )
  }
  return Option.none()
}

/** Why `principal` may not remove `target` while the workspace has `owners` OWNERs; none when it may. */
export const removalRefusal = (
  principal: Principal,
  target: Pick<User, "role">,
  owners: number
): Option.Option<InsufficientScope | Conflict> => {
  if (target.role === "OWNER" && !actsAsOwner(principal)) return Option.some(ownerOnly("remove an OWNER"))
  if (target.role === "OWNER" && owners <= 1) {
    return Option.some(
      new Conflict({ message: "this is the workspace's last OWNER: make another member OWNER before removing this one" })
    )
  }
  return Option.none()
}
