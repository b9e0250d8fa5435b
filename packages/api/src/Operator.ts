/**
 * The operator API: provisioning and day-to-day administration for self-hosters, enabled by
 * CONVENE_OPERATOR_TOKEN. Workspaces, their users, tokens and API keys: create, list, read, change, revoke and
 * delete them. The rules are core's (Workspaces, Users, Tokens); this is the contract.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import {
  CreateApiKey,
  CreatedClient,
  CreateFirstPartyClient,
  CreateUser,
  CreateWorkspace,
  CredentialId,
  CredentialView,
  Email,
  IssuedApiKey,
  IssuedToken,
  IssueToken,
  Pagination,
  UpdateUser,
  UpdateWorkspace,
  UserId,
  UserView,
  Workspace,
  WorkspaceId,
  WorkspaceOverview
} from "@convene/core"
import { Schema } from "effect"
import { Missing, PlanGate, StateConflict } from "./Errors.js"
import * as PartnerApps from "./OperatorPartnerApps.js"
import { PageParams } from "./Query.js"
import { OperatorAuth } from "./Security.js"

const WorkspacePath = Schema.Struct({ id: WorkspaceId })

/** The new signing key's id (its RFC 7638 thumbprint, the `kid` of the tokens it signs). */
export class RotatedSigningKey extends Schema.Class<RotatedSigningKey>("RotatedSigningKey")({ kid: Schema.String }) {}
const UserPath = Schema.Struct({ id: UserId })
const TokenPath = Schema.Struct({ id: CredentialId })

export const WorkspaceList = Pagination.ListOf(WorkspaceOverview).annotations({ identifier: "WorkspaceList" })
export const UserList = Pagination.ListOf(UserView).annotations({ identifier: "UserList" })
export const CredentialList = Pagination.ListOf(CredentialView).annotations({ identifier: "CredentialList" })

const counts = "`counts`: `users` (every user), `meetings` (every meeting, whatever its status), `tokens` (tokens its " +
  "users hold that authenticate now: not revoked, not expired; personal access, short-lived and OAuth tokens) and " +
  "`api_keys` (API keys that authenticate now)."

const liveOnly = "Only credentials that authenticate now are listed (neither revoked nor expired), newest first; " +
  "never the token or its hash. `scopes` are those the credential authenticates with now: a user's token keeps only " +
  "the scopes the user's current role grants."

export class OperatorApi extends HttpApiGroup.make("operator")
  .add(
    HttpApiEndpoint.get("listWorkspaces", "/workspaces")
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(WorkspaceList)
      .annotate(OpenApi.Summary, "List workspaces")
      .annotate(OpenApi.Description, `Every workspace of the installation with its counts, newest first. ${counts}`)
  )
  .add(
    HttpApiEndpoint.post("createWorkspace", "/workspaces")
      .setPayload(CreateWorkspace)
      .addSuccess(Workspace, { status: 201 })
      .annotate(OpenApi.Summary, "Create a workspace")
      .annotate(OpenApi.Description, "Creates a workspace with a plan: FREE, PRO, ELITE or ENTERPRISE.")
  )
  .add(
    HttpApiEndpoint.get("getWorkspace", "/workspaces/:id")
      .setPath(WorkspacePath)
      .addSuccess(WorkspaceOverview)
      .annotate(OpenApi.Summary, "Get a workspace")
      .annotate(OpenApi.Description, `The workspace with its counts (404 when unknown). ${counts}`)
  )
  .add(
    HttpApiEndpoint.patch("updateWorkspace", "/workspaces/:id")
      .setPath(WorkspacePath)
      .setPayload(UpdateWorkspace)
      .addSuccess(Workspace)
      .annotate(OpenApi.Summary, "Change a workspace")
      .annotate(OpenApi.Description, "Changes the workspace's name or plan; what the request leaves out is kept.")
  )
  .add(
    HttpApiEndpoint.del("deleteWorkspace", "/workspaces/:id")
      .setPath(WorkspacePath)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "Delete a workspace")
      .annotate(
        OpenApi.Description,
        "Deletes the workspace with everything in it, in one transaction: its users, their tokens, its API keys, its " +
          "meetings with their participants, transcripts, agenda items (and talking points) and action items, the " +
          "idempotency records of its credentials, its usage counters and its connections to partner apps (the apps " +
          "stay). Every credential of the workspace answers 401 from then on. 204; 404 when unknown. Cannot be undone."
      )
  )
  .add(
    HttpApiEndpoint.get("listWorkspaceUsers", "/workspaces/:id/users")
      .setPath(WorkspacePath)
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(UserList)
      .annotate(OpenApi.Summary, "List a workspace's users")
      .annotate(OpenApi.Description, "The users of the workspace, newest first (404 when the workspace is unknown).")
  )
  .add(
    HttpApiEndpoint.post("createUser", "/workspaces/:id/users")
      .setPath(WorkspacePath)
      .setPayload(CreateUser)
      .addSuccess(UserView, { status: 201 })
      .addError(StateConflict)
      .annotate(OpenApi.Summary, "Create a user")
      .annotate(
        OpenApi.Description,
        "Creates a user with a role (OWNER, ADMIN or MEMBER); e-mail addresses are kept trimmed and lower-cased and are " +
          "unique across the installation (409). Passwords are stored as scrypt hashes."
      )
  )
  .add(
    HttpApiEndpoint.get("listUsers", "/users")
      .setUrlParams(Schema.Struct({
        email: Schema.optional(Email).annotations({
          description: "only the user with this address (compared trimmed and lower-cased): 0 or 1 item"
        }),
        ...PageParams
      }))
      .addSuccess(UserList)
      .annotate(OpenApi.Summary, "List or find users")
      .annotate(
        OpenApi.Description,
        "Every user of the installation, newest first; with `email`, the one user who has that address (addresses are " +
          "unique across the installation), or an empty list. A malformed address is 400."
      )
  )
  .add(
    HttpApiEndpoint.get("getUser", "/users/:id")
      .setPath(UserPath)
      .addSuccess(UserView)
      .annotate(OpenApi.Summary, "Get a user")
      .annotate(OpenApi.Description, "The user (404 when unknown).")
  )
  .add(
    HttpApiEndpoint.patch("updateUser", "/users/:id")
      .setPath(UserPath)
      .setPayload(UpdateUser)
      .addSuccess(UserView)
      .annotate(OpenApi.Summary, "Change a user")
      .annotate(
        OpenApi.Description,
        "Changes the user's name, role or password (8 to 1024 characters, stored as a scrypt hash); what the request " +
          "leaves out is kept, and the e-mail address cannot be changed. A new role applies to the user's existing " +
          "tokens at once: a token authenticates with the scopes it was issued with that the current role grants (a " +
          "MEMBER's tokens lose workspace:read and workspace:write; promoted again, they get back no more than they " +
          "were issued with). Tokens stay valid when the password changes; revoke them with DELETE /operator/v1/tokens/{id}."
      )
  )
  .add(
    HttpApiEndpoint.del("deleteUser", "/users/:id")
      .setPath(UserPath)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "Delete a user")
      .annotate(
        OpenApi.Description,
        "Deletes the user in one transaction. Their tokens are deleted (each answers 401 from then on), with the " +
          "idempotency records kept for them; their participant rows and their private talking points are deleted; " +
          "meetings they own stay, without an owner (like a meeting created with a workspace API key: workspace " +
          "admins and API keys still see and change them); they are removed from the presenters of agenda items; " +
          "action items assigned to them stay, unassigned. 204; 404 when unknown. The operator may delete a " +
          "workspace's last OWNER."
      )
  )
  .add(
    HttpApiEndpoint.get("listUserTokens", "/users/:id/tokens")
      .setPath(UserPath)
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(CredentialList)
      .annotate(OpenApi.Summary, "List a user's tokens")
      .annotate(OpenApi.Description, `The user's tokens of every kind (404 when the user is unknown). ${liveOnly}`)
  )
  .add(
    HttpApiEndpoint.post("issueToken", "/users/:id/tokens")
      .setPath(UserPath)
      .setPayload(IssueToken)
      .addSuccess(IssuedToken, { status: 201 })
      .addError(PlanGate)
      .annotate(OpenApi.Summary, "Issue a token to a user")
      .annotate(
        OpenApi.Description,
        "Issues a personal access token (expiry_days 30, 60, 90, 180 or 365; PRO plan and higher, else 402) or a short-lived " +
          "token (expiry_hours 1, 2, 4 or 6; no workspace scopes). Scopes must be granted by the user's role. The token " +
          "is shown once."
      )
  )
  .add(
    HttpApiEndpoint.get("listWorkspaceTokens", "/workspaces/:id/tokens")
      .setPath(WorkspacePath)
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(CredentialList)
      .annotate(OpenApi.Summary, "List a workspace's user tokens")
      .annotate(
        OpenApi.Description,
        `The tokens the workspace's users hold, every kind but API keys (404 when the workspace is unknown). ${liveOnly}`
      )
  )
  .add(
    HttpApiEndpoint.get("listApiKeys", "/workspaces/:id/api-keys")
      .setPath(WorkspacePath)
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(CredentialList)
      .annotate(OpenApi.Summary, "List a workspace's API keys")
      .annotate(OpenApi.Description, `The workspace's API keys (404 when the workspace is unknown). ${liveOnly}`)
  )
  .add(
    HttpApiEndpoint.post("createApiKey", "/workspaces/:id/api-keys")
      .setPath(WorkspacePath)
      .setPayload(CreateApiKey)
      .addSuccess(IssuedApiKey, { status: 201 })
      .annotate(OpenApi.Summary, "Create a workspace API key")
      .annotate(OpenApi.Description, "Issues a workspace API key (svc_wk_v1_...), which acts as the workspace with every scope. Shown once.")
  )
  .add(
    HttpApiEndpoint.del("revokeToken", "/tokens/:id")
      .setPath(TokenPath)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "Revoke a token or API key")
      .annotate(
        OpenApi.Description,
        "Revokes any credential by id, a user's token or a workspace API key: it answers 401 from the next request on. " +
          "204; 404 when unknown or already revoked."
      )
  )
  .add(
    HttpApiEndpoint.post("createOAuthClient", "/oauth-clients")
      .setPayload(CreateFirstPartyClient)
      .addSuccess(CreatedClient, { status: 201 })
      .annotate(OpenApi.Summary, "Create a first-party OAuth client")
      .annotate(
        OpenApi.Description,
        "Adds a first-party public client besides the built-in `convene-cli`: PKCE (S256) without a secret, loopback " +
          "redirect URIs only (`http://127.0.0.1:<port>/...` or `http://localhost:<port>/...`; a listed URI matches on " +
          "any port; none listed: any loopback URI), approved without a consent page, and it may be granted the " +
          "workspace scopes the user's role holds. 201 `{client_id, name, redirect_uris, created_at}`."
      )
  )
  .add(
    HttpApiEndpoint.post("rotateSigningKey", "/signing-keys/rotate")
      .addSuccess(RotatedSigningKey)
      .annotate(OpenApi.Summary, "Rotate the token signing key")
      .annotate(
        OpenApi.Description,
        "Retires the RS256 key that signs ID tokens and makes a new one, which signs from now on. The retired key stays " +
          "in /v1/oauth/.well-known/jwks.json for one hour (the longest a token it signed lives), then leaves it. " +
          "200 `{kid}`: the new key's id."
      )
  )
  .add(PartnerApps.listPartnerApps)
  .add(PartnerApps.createPartnerApp)
  .add(PartnerApps.getPartnerApp)
  .add(PartnerApps.updatePartnerApp)
  .add(PartnerApps.rotatePartnerAppWebhookSecret)
  .add(PartnerApps.connectPartnerAppWorkspace)
  .middleware(OperatorAuth)
  .addError(Missing)
  .prefix("/operator/v1")
  .annotate(OpenApi.Title, "Operator")
  .annotate(OpenApi.Description, "Provisioning for self-hosters. `Authorization: Bearer $CONVENE_OPERATOR_TOKEN`; every path is 404 when no operator token is configured.")
{}
