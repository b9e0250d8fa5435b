/** The operator API: provisioning for self-hosters, enabled by CONVENE_OPERATOR_TOKEN. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import {
  CreateApiKey,
  CreateUser,
  CreateWorkspace,
  IssuedApiKey,
  IssuedToken,
  IssueToken,
  UpdateWorkspace,
  UserId,
  UserView,
  Workspace,
  WorkspaceId
} from "@convene/core"
import { Schema } from "effect"
import { Missing, PlanGate, StateConflict } from "./Errors.js"
import { OperatorAuth } from "./Security.js"

const WorkspacePath = Schema.Struct({ id: WorkspaceId })

export class OperatorApi extends HttpApiGroup.make("operator")
  .add(
    HttpApiEndpoint.post("createWorkspace", "/workspaces")
      .setPayload(CreateWorkspace)
      .addSuccess(Workspace, { status: 201 })
  )
  .add(
    HttpApiEndpoint.patch("updateWorkspace", "/workspaces/:id")
      .setPath(WorkspacePath)
      .setPayload(UpdateWorkspace)
      .addSuccess(Workspace)
  )
  .add(
    HttpApiEndpoint.post("createUser", "/workspaces/:id/users")
      .setPath(WorkspacePath)
      .setPayload(CreateUser)
      .addSuccess(UserView, { status: 201 })
      .addError(StateConflict)
      .annotate(OpenApi.Description, "Creates a user; e-mail addresses are unique across the installation (409). Passwords are stored as scrypt hashes.")
  )
  .add(
    HttpApiEndpoint.post("issueToken", "/users/:id/tokens")
      .setPath(Schema.Struct({ id: UserId }))
      .setPayload(IssueToken)
      .addSuccess(IssuedToken, { status: 201 })
      .addError(PlanGate)
      .annotate(
        OpenApi.Description,
        "Issues a personal access token (expiry_days 30, 60, 90, 180 or 365; PRO plan and higher, else 402) or a short-lived " +
          "token (expiry_hours 1, 2, 4 or 6; no workspace scopes). Scopes must be granted by the user's role."
      )
  )
  .add(
    HttpApiEndpoint.post("createApiKey", "/workspaces/:id/api-keys")
      .setPath(WorkspacePath)
      .setPayload(CreateApiKey)
      .addSuccess(IssuedApiKey, { status: 201 })
      .annotate(OpenApi.Description, "Issues a workspace API key (svc_wk_v1_...), which acts as the workspace with every scope. Shown once.")
  )
  .middleware(OperatorAuth)
  .addError(Missing)
  .prefix("/operator/v1")
  .annotate(OpenApi.Title, "Operator")
  .annotate(OpenApi.Description, "Provisioning for self-hosters. `Authorization: Bearer $CONVENE_OPERATOR_TOKEN`; every path is 404 when no operator token is configured.")
{}
