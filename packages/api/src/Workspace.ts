/** The workspace administration group: the workspace's settings, its members and its API keys. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import {
  ApiKeyView,
  ChangeMemberRole,
  CredentialId,
  Member,
  Pagination,
  ToolkitUpdates,
  UpdateWorkspaceSettings,
  UserId,
  Workspace
} from "@convene/core"
import { Schema } from "effect"
import { Forbidden, Missing, StateConflict } from "./Errors.js"
import { PageParams } from "./Query.js"
import { Authenticate } from "./Security.js"

const MemberPath = Schema.Struct({ userID: UserId })
const ApiKeyPath = Schema.Struct({ id: CredentialId })

export const MemberList = Pagination.ListOf(Member).annotations({ identifier: "MemberList" })
export const ApiKeyList = Pagination.ListOf(ApiKeyView).annotations({ identifier: "ApiKeyList" })

const admin = "Workspace API keys and OWNER or ADMIN users (a MEMBER gets 403 `insufficient_scope`)"

const ownerRule = "Only an OWNER (or a workspace API key, which acts as the workspace) may grant the OWNER role or change or " +
  "remove an OWNER; an ADMIN manages MEMBERs and ADMINs, themself included (403 `insufficient_scope` otherwise). A workspace " +
  "always keeps an OWNER: demoting or removing its last OWNER is 409 `conflict`."

export class WorkspaceApi extends HttpApiGroup.make("workspace")
  .add(
    HttpApiEndpoint.get("getSettings", "/workspace")
      .addSuccess(Workspace)
      .annotate(OpenApi.Summary, "Get the workspace's settings")
      .annotate(
        OpenApi.Description,
        "The caller's workspace: `{id, name, plan, default_detail_level, default_template_id, created_at, updated_at}`. " +
          `${admin}; scope workspace:read.`
      )
  )
  .add(
    HttpApiEndpoint.patch("updateSettings", "/workspace")
      .setPayload(UpdateWorkspaceSettings)
      .addSuccess(Workspace)
      .annotate(OpenApi.Summary, "Change the workspace's settings")
      .annotate(
        OpenApi.Description,
        "Changes the workspace's `name`, `default_detail_level` (`brief`, `standard` or `detailed`) or " +
          "`default_template_id` (a template of GET /v1/meeting-templates; null clears it); what the request leaves out is " +
          "kept, and the plan is the operator's to change (an unknown field, `plan` included, is 400). An unknown template " +
          "is 404 `not_found`, as for a meeting's `template_id` (a toolkit's template counts while the version installed " +
          "in the workspace has it; the setting is kept if it later goes, and a new meeting then starts with no " +
          "template until a version bringing it back is installed). A new meeting whose request names no template takes the " +
          "default template; its detail level is the request's, else its template's (the request's or the default one), " +
          `else the workspace's default_detail_level. Meetings that exist keep theirs. ${admin}; scope workspace:write.`
      )
  )
  .add(
    HttpApiEndpoint.get("getToolkitUpdates", "/workspace/toolkit-updates")
      .addSuccess(ToolkitUpdates)
      .annotate(OpenApi.Summary, "Get whether partner toolkits update themselves")
      .annotate(
        OpenApi.Description,
        "`{auto_updates}`: true (the default) when new versions of the partner toolkits installed in the workspace are " +
          "installed as their partner app publishes them; false when the workspace opted out of automatic toolkit " +
          "updates: it keeps the version it has (the partner sees the installation `outdated`) unless the partner " +
          `forces the update (a publish with \`propagation: force\`). ${admin}; scope workspace:read.`
      )
  )
  .add(
    HttpApiEndpoint.put("setToolkitUpdates", "/workspace/toolkit-updates")
      .setPayload(ToolkitUpdates)
      .addSuccess(ToolkitUpdates)
      .annotate(OpenApi.Summary, "Opt in or out of partner toolkits' automatic updates")
      .annotate(
        OpenApi.Description,
        "Takes `{auto_updates}` (a boolean; false opts the workspace out of automatic toolkit updates, true opts it " +
          "back in) and answers it. It applies to the publishes that follow; an update already queued is installed. " +
          `${admin}; scope workspace:write.`
      )
  )
  .add(
    HttpApiEndpoint.get("listMembers", "/workspace/members")
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(MemberList)
      .annotate(OpenApi.Summary, "List the workspace's members")
      .annotate(
        OpenApi.Description,
        "The workspace's users with their roles, newest first: `{id, workspace_id, email, name, role, created_at, " +
          `updated_at}\` (\`id\` is the user's id, the {userID} of the member paths). ${admin}; scope workspace:read.`
      )
  )
  .add(
    HttpApiEndpoint.patch("changeMemberRole", "/workspace/members/:userID")
      .setPath(MemberPath)
      .setPayload(ChangeMemberRole)
      .addSuccess(Member)
      .addError(StateConflict)
      .annotate(OpenApi.Summary, "Change a member's role")
      .annotate(
        OpenApi.Description,
        "Sets the member's role (`OWNER`, `ADMIN` or `MEMBER`) and answers the member. The new role applies to the " +
          "member's existing tokens at once: a token authenticates with the scopes it was issued with that the role " +
          "grants (a MEMBER's tokens lose workspace:read and workspace:write). Setting the role the member has is a no-op " +
          `(200). ${ownerRule} An unknown user or one of another workspace is 404. ${admin}; scope workspace:write.`
      )
  )
  .add(
    HttpApiEndpoint.del("removeMember", "/workspace/members/:userID")
      .setPath(MemberPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(StateConflict)
      .annotate(OpenApi.Summary, "Remove a member")
      .annotate(
        OpenApi.Description,
        "Removes the user from the workspace, as the operator deletes a user, in one transaction: their tokens are " +
          "deleted (each answers 401 from then on); their participant rows and talking points are deleted; meetings they " +
          "own stay, without an owner; they leave the presenters of agenda items; action items assigned to them stay, " +
          `unassigned. 204 with no body. ${ownerRule} An unknown user, one of another workspace or one already removed is ` +
          `404. ${admin}; scope workspace:write.`
      )
  )
  .add(
    HttpApiEndpoint.get("listApiKeys", "/workspace/api-keys")
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(ApiKeyList)
      .annotate(OpenApi.Summary, "List the workspace's API keys")
      .annotate(
        OpenApi.Description,
        "The workspace's API keys that authenticate now (deleted ones are left out), newest first: `{id, workspace_id, " +
          "name, scopes, created_at}`; never the key itself. Keys are issued by the installation's operator. " +
          `${admin}; scope workspace:read.`
      )
  )
  .add(
    HttpApiEndpoint.del("deleteApiKey", "/workspace/api-keys/:id")
      .setPath(ApiKeyPath)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "Delete an API key")
      .annotate(
        OpenApi.Description,
        "Soft-deletes the API key: it is revoked (answers 401 from the next request on, a key deleting itself included) " +
          "and leaves the list; 204 with no body. An API key of another workspace, a deleted one (a repeated DELETE) or " +
          `an id that is no API key (a user's token) is 404. No plan gates API keys, so 402 is never answered. ${admin}; ` +
          "scope workspace:write."
      )
  )
  .middleware(Authenticate)
  .addError(Forbidden)
  .addError(Missing)
  .prefix("/v1")
  .annotate(OpenApi.Title, "Workspace")
  .annotate(
    OpenApi.Description,
    "Administration of the caller's workspace: its settings, members and API keys (webhooks have their own group). " +
      `Scope workspace:read for the reads and workspace:write for the changes, and the ADMIN or OWNER role. ${ownerRule}`
  )
{}
