/**
 * The partner API's workflows: the workflow templates of the app's toolkits in the admin context
 * (/v1/partner/admin/workflow-templates), and the runs in the user context (/v1/partner/user/workflow-runs), with the
 * human review of their tasks. The rules are core's (Workflows, whose decisions the descriptions repeat).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import {
  CreateWorkflowRun,
  Pagination,
  ReadinessIssue,
  ResolveTask,
  RunStatus,
  WorkflowRunId,
  WorkflowRunView,
  WorkflowTaskId,
  WorkflowTemplate,
  WorkflowTemplateId
} from "@convene/core"
import { Effect, Schema } from "effect"
import { wire } from "./Errors.js"
import {
  PartnerAdminAuth,
  partnerEnvelope,
  PartnerInvalidRequest,
  PartnerPayloadTooLarge,
  partnerPrefix,
  PartnerUnsupportedMediaType
} from "./Partner.js"
import { PartnerRateLimited } from "./PartnerLimits.js"
import { PartnerToolkitNotFound } from "./PartnerToolkits.js"
import {
  idempotent,
  PartnerConflict,
  PartnerForbidden,
  PartnerMissing,
  PartnerPlanGate,
  PartnerUserAuth,
  PartnerValidation
} from "./PartnerUser.js"
import { PageParams } from "./Query.js"

// ------------------------------------------------------------------------------------------------------ errors

/** A real run whose configuration has problems, as the workflow routes' own class. */
export class PartnerRunNotReady extends Schema.TaggedError<PartnerRunNotReady>()("PartnerRunNotReady", {
  readiness_issues: Schema.Array(Schema.Struct(ReadinessIssue.fields)),
  message: Schema.String
}) {}

export const PartnerNotReady = wire(
  PartnerRunNotReady,
  Schema.Struct({
    error: Schema.String,
    code: Schema.Literal("invalid_request"),
    request_id: Schema.String,
    readiness_issues: Schema.Array(ReadinessIssue)
  }).annotations({
    identifier: "PartnerWorkflowNotReady",
    description: "the run's configuration has problems: `readiness_issues` lists them `[{code, message, role?}]` " +
      "(send `dry_run: true` to see them without starting anything)"
  }),
  400,
  (error, requestId) =>
    Effect.succeed({ ...partnerEnvelope("invalid_request", error.message, requestId), readiness_issues: error.readiness_issues }),
  (b) => new PartnerRunNotReady({ readiness_issues: b.readiness_issues, message: b.error })
)

// ------------------------------------------------------------------------------------------------ templates

export const WorkflowTemplateList = Pagination.ListOf(WorkflowTemplate).annotations({ identifier: "WorkflowTemplateList" })

const templateAnswer = "A template is `{id, key, name, description, roles, steps: [{key, type, title, role?, url?}], " +
  "toolkit_id}`; its id is derived from the toolkit's id and the template's key, so it is the same in every version " +
  "of the toolkit."

const adminAuthentication = "Authenticated as the other admin routes (X-API-Key and X-Client-ID: 401 `missing_api_key`, " +
  "`missing_client_id` or `invalid_credentials`, 403 `partner_app_inactive`)."

export class PartnerWorkflowTemplatesApi extends HttpApiGroup.make("partnerWorkflowTemplates")
  .add(
    HttpApiEndpoint.get("listWorkflowTemplates", "/workflow-templates")
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(WorkflowTemplateList)
      .annotate(OpenApi.Summary, "List the workflow templates")
      .annotate(
        OpenApi.Description,
        "The `workflow_templates` of the published versions of the app's toolkits (the versions installed, or being " +
          "installed, in its workspaces), oldest toolkit first, in manifest order, in the list envelope `{items, " +
          `total, limit, offset}\`. ${templateAnswer} ${adminAuthentication}`
      )
  )
  .add(
    HttpApiEndpoint.get("getWorkflowTemplate", "/workflow-templates/:id")
      .setPath(Schema.Struct({ id: WorkflowTemplateId }))
      .addSuccess(WorkflowTemplate)
      .annotate(OpenApi.Summary, "Get a workflow template")
      .annotate(
        OpenApi.Description,
        `One of the templates the list shows; any other id is 404 \`not_found\`. ${templateAnswer} ${adminAuthentication}`
      )
  )
  .addError(PartnerToolkitNotFound)
  .addError(PartnerInvalidRequest)
  .middleware(PartnerAdminAuth)
  .addError(PartnerRateLimited)
  .prefix(`${partnerPrefix}/admin`)
  .annotate(OpenApi.Title, "Partner workflow templates")
  .annotate(OpenApi.Description, "The workflow templates the app's toolkits bring, in the admin context.")
{}

// ------------------------------------------------------------------------------------------------ runs

/** The answer to a run that was created (201), beside a dry run's answer (200). */
export class StartedWorkflowRun extends Schema.Class<StartedWorkflowRun>("StartedWorkflowRun")(WorkflowRunView.fields) {}

export const WorkflowRunList = Pagination.ListOf(WorkflowRunView).annotations({ identifier: "WorkflowRunList" })

const runPath = Schema.Struct({ id: WorkflowRunId })
const taskPath = Schema.Struct({ id: WorkflowRunId, task_id: WorkflowTaskId })

const read = "Needs the scope `partner-api/workflows:read` (else 403 `insufficient_scope`)."
const write = "Needs the scope `partner-api/workflows:write` (else 403 `insufficient_scope`)."

const runAnswer = "A run is `{id, template_id, status, dry_run, role_mappings, steps: [{key, type, title, status, " +
  "assignee_user_id, task_id, started_at, completed_at}], readiness_issues, failure, created_by_user_id, created_at, " +
  "updated_at}`. Run statuses: `pending` (a dry run's answer), `running`, `awaiting_review` (a task or approval step " +
  "waits for its assignee), `completed`, `failed` (`failure {code, message, step_key}`: a webhook step's URL did not " +
  "answer 2xx after 3 attempts, or could not be called), `rejected` (a reviewer rejected a task), `cancelled` (its creator " +
  "cancelled it). Step statuses: `pending`, `running` (a webhook step's call is under way), " +
  "`awaiting_review`, `completed`, `failed`, `rejected`, `skipped` (after a failed or rejected step)."

export class PartnerWorkflowRunsApi extends HttpApiGroup.make("partnerWorkflowRuns")
  .add(
    idempotent(
      HttpApiEndpoint.post("createWorkflowRun", "/workflow-runs")
        .setPayload(CreateWorkflowRun)
        .addSuccess(WorkflowRunView)
        .addSuccess(StartedWorkflowRun, { status: 201 })
        .addError(PartnerNotReady)
        .addError(PartnerPlanGate)
        .addError(PartnerPayloadTooLarge)
        .addError(PartnerUnsupportedMediaType)
    )
      .annotate(OpenApi.Summary, "Start a workflow run")
      .annotate(
        OpenApi.Description,
        "Starts a run of `template_id` (one of the workflow templates of the app's toolkits installed in the user's " +
          "workspace; another is 404 `not_found`) with `role_mappings {role: user_id}` (at most 20 entries, a role at most " +
          "100 characters; else 400 `invalid_request`); the only trigger is this " +
          "manual one. The workspace's plan must be ELITE or ENTERPRISE (the Workflow Templates entitlement; else 402 " +
          "`plan_required`, dry runs too). Readiness issues `[{code, message, role?}]`: `missing_role_mapping`, " +
          "`unknown_role`, `user_not_in_workspace`, `webhook_not_configured` (webhook steps while the app has no " +
          "webhook secret). `dry_run: true` answers 200 with the run as it would start (status `pending`, an id that " +
          "is not stored) and its readiness issues, storing and sending nothing; a real run with readiness issues is " +
          "400 `invalid_request` carrying `readiness_issues`. A real run answers 201, already at its first step: a " +
          "task or approval step waits for its assignee (the user mapped to the step's role, else the run's creator), " +
          "a webhook step's URL gets a signed POST `{event_id, event_type: \"workflow.step.webhook\", occurred_at, " +
          "partner_app_id, workspace_id, data: {run_id, template_id, step_key, step_title, role_mappings, " +
          "created_by_user_id}}` with the partner webhook headers plus `Idempotency-Key` (the same on each of its up " +
          "to 3 attempts, n² minutes apart) and `X-Svc-Delivery-ID`; a 2xx completes the step. Runs are durable: " +
          "kept in the store and moved by the outbox, they continue after a restart. Events (to the app's webhook " +
          "URL, `data {run_id, template_id, status, user_id, ...}` with `user_id` the addressee): " +
          "`workflow.run.started` (the creator), `workflow.step.completed` (the creator; `step_key`, `step_type`), " +
          "`workflow.task.created` (the assignee; `task_id`, `step_key`, `assignee_user_id`), `workflow.task.resolved` " +
          "(the reviewer; `task_id`, `step_key`, `decision`, `comment`), `workflow.run.completed` (the creator), " +
          "`workflow.run.failed` (the creator; `failure`, or `status: \"rejected\"` for a rejected run). " +
          `${runAnswer} ${write}`
      )
  )
  .add(
    HttpApiEndpoint.get("listWorkflowRuns", "/workflow-runs")
      .setUrlParams(Schema.Struct({ ...PageParams, status: Schema.optional(RunStatus) }))
      .addSuccess(WorkflowRunList)
      .annotate(OpenApi.Summary, "List workflow runs")
      .annotate(
        OpenApi.Description,
        "The app's runs in the user's workspace (whoever started them), newest first, only those with `status` when " +
          `it is given, in the list envelope \`{items, total, limit, offset}\`. ${read}`
      )
  )
  .add(
    HttpApiEndpoint.get("getWorkflowRun", "/workflow-runs/:id")
      .setPath(runPath)
      .addSuccess(WorkflowRunView)
      .annotate(OpenApi.Summary, "Get a workflow run")
      .annotate(
        OpenApi.Description,
        `The run with each step's current state and the persisted \`role_mappings\`; another app's or workspace's run ` +
          `is 404 \`not_found\`. ${runAnswer} ${read}`
      )
  )
  .add(
    idempotent(
      HttpApiEndpoint.post("resolveWorkflowTask", "/workflow-runs/:id/tasks/:task_id/resolve")
        .setPath(taskPath)
        .setPayload(ResolveTask)
        .addSuccess(WorkflowRunView)
        .addError(PartnerPayloadTooLarge)
        .addError(PartnerUnsupportedMediaType)
    )
      .annotate(OpenApi.Summary, "Resolve a human review task")
      .annotate(
        OpenApi.Description,
        "Records the decision `{decision: approve|reject, comment?}` (comment at most 2000 characters) on the run's " +
          "open task `task_id` (the step's `task_id`). Only the task's assignee may (else 403 `forbidden`); a task " +
          "already resolved, or of a run that has ended, is 409 `conflict`. approve completes the step and the run " +
          "goes on to the next (or completes); reject ends the run `rejected`. Answers the run. " + write
      )
  )
  .add(
    idempotent(HttpApiEndpoint.post("cancelWorkflowRun", "/workflow-runs/:id/cancel").setPath(runPath).addSuccess(WorkflowRunView))
      .annotate(OpenApi.Summary, "Cancel a workflow run")
      .annotate(
        OpenApi.Description,
        "Cancels the run while it has not ended: only its creator may (else 403 `forbidden`); a run that has ended is " +
          "409 `conflict`. Its open task is cancelled, the step it is at and the later ones are `skipped`, a webhook " +
          "step's call still waiting is not sent, and the run is told ended as `workflow.run.failed` with `data.status: " +
          `"cancelled"\` (to its creator). Answers the run. ${write}`
      )
  )
  .middleware(PartnerUserAuth)
  .addError(PartnerForbidden)
  .addError(PartnerMissing)
  .addError(PartnerValidation)
  .addError(PartnerConflict)
  .addError(PartnerInvalidRequest)
  .addError(PartnerRateLimited)
  .prefix(`${partnerPrefix}/user`)
  .annotate(OpenApi.Title, "Partner workflow runs")
  .annotate(
    OpenApi.Description,
    "Workflow runs of the app's toolkits' templates in the user context (the user's partner access token; see Partner " +
      "user context for its 401 and 403 answers)."
  )
{}
