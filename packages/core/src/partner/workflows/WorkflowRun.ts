/**
 * Workflow templates and runs (decisions.md "Workflow templates", "Workflow run"): the records as stored, and as the
 * partner API shows them.
 *
 * A run keeps the template as it was when the run was created (`template`): a toolkit version published meanwhile
 * changes the runs created after it, never one in progress. Its steps are kept with it, in the template's order, each
 * with its state; a task or approval step that has been entered has a human task (`WorkflowTask`) of its own.
 */
import { Schema } from "effect"
import { UserId, Uuid, WorkspaceId } from "../../shared/Ids.js"
import { LongText, requestBody } from "../../shared/Text.js"
import { Timestamp } from "../../shared/Time.js"
import { trusted } from "../../shared/Trusted.js"
import { PartnerAppId } from "../PartnerApp.js"
import { ManifestKey, ManifestWorkflowStep, ManifestWorkflowTemplate, MAX_WORKFLOW_ROLES, WorkflowStepType } from "../toolkits/Manifest.js"
import { ToolkitId } from "../toolkits/Toolkit.js"

export const WorkflowTemplateId = Uuid.pipe(Schema.brand("WorkflowTemplateId"))
export type WorkflowTemplateId = typeof WorkflowTemplateId.Type

export const WorkflowRunId = Uuid.pipe(Schema.brand("WorkflowRunId"))
export type WorkflowRunId = typeof WorkflowRunId.Type

export const WorkflowTaskId = Uuid.pipe(Schema.brand("WorkflowTaskId"))
export type WorkflowTaskId = typeof WorkflowTaskId.Type

/** A workflow template of an installed toolkit's manifest (decisions.md), its id stable across the toolkit's versions. */
export class WorkflowTemplate extends Schema.Class<WorkflowTemplate>("WorkflowTemplate")({
  id: WorkflowTemplateId.annotations({
    description: "derived from the toolkit's id and the template's key: the same in every version of the toolkit"
  }),
  key: ManifestKey,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  roles: Schema.Array(Schema.String),
  steps: Schema.Array(ManifestWorkflowStep),
  toolkit_id: ToolkitId
}) {}

export const RunStatus = Schema.Literal("pending", "running", "awaiting_review", "completed", "failed", "rejected", "cancelled")
  .annotations({ identifier: "WorkflowRunStatus" })
export type RunStatus = typeof RunStatus.Type

/** The statuses a run does not leave. */
export const finalStatuses: ReadonlySet<RunStatus> = new Set(["completed", "failed", "rejected", "cancelled"])

export const StepStatus = Schema.Literal("pending", "running", "awaiting_review", "completed", "failed", "rejected", "skipped")
  .annotations({ identifier: "WorkflowStepStatus" })
export type StepStatus = typeof StepStatus.Type

/** One step of a run as the API shows it (decisions.md, with `title` and `task_id`). */
const stepFields = {
  key: ManifestKey,
  type: WorkflowStepType,
  title: Schema.String,
  status: StepStatus,
  assignee_user_id: Schema.NullOr(UserId).annotations({
    description: "who resolves a task or approval step: the user its role is mapped to, else the run's creator; null " +
      "for a webhook step"
  }),
  task_id: Schema.NullOr(WorkflowTaskId).annotations({
    description: "the human task of a task or approval step once the run has reached it (resolve it at " +
      "/workflow-runs/{id}/tasks/{task_id}/resolve); null otherwise"
  }),
  started_at: Schema.NullOr(Timestamp),
  completed_at: Schema.NullOr(Timestamp)
}

export class WorkflowRunStep extends Schema.Class<WorkflowRunStep>("WorkflowRunStep")(stepFields) {}

/** A configuration problem of a run (decisions.md `readiness_issues`). */
export class ReadinessIssue extends Schema.Class<ReadinessIssue>("WorkflowReadinessIssue")({
  code: Schema.String.annotations({
    description: "`missing_role_mapping`, `unknown_role`, `user_not_in_workspace`, `webhook_not_configured`"
  }),
  message: Schema.String,
  role: Schema.optional(Schema.String)
}) {}

/** Why a run failed: the step and the cause. */
export class RunFailure extends Schema.Class<RunFailure>("WorkflowRunFailure")({
  code: Schema.String.annotations({ description: "`step_delivery_failed`, `step_not_sent`" }),
  message: Schema.String,
  step_key: Schema.NullOr(Schema.String)
}) {}

export const RoleMappings = Schema.Record({ key: Schema.String, value: UserId })
export type RoleMappings = typeof RoleMappings.Type

/** A create's `role_mappings`: at most as many entries as a template has roles, each role named in at most 100 characters. */
const RoleMappingsInput = Schema.Record({
  key: Schema.String.pipe(Schema.maxLength(100, { message: () => "a role is at most 100 characters" })),
  value: UserId
}).pipe(Schema.filter((mappings) =>
  Object.keys(mappings).length <= MAX_WORKFLOW_ROLES || `may map at most ${MAX_WORKFLOW_ROLES} roles (a template has at most ${MAX_WORKFLOW_ROLES})`
))

const runFields = {
  id: WorkflowRunId,
  template_id: WorkflowTemplateId,
  status: RunStatus,
  dry_run: Schema.Boolean,
  role_mappings: RoleMappings,
  steps: Schema.Array(WorkflowRunStep),
  readiness_issues: Schema.Array(ReadinessIssue),
  failure: Schema.NullOr(RunFailure).annotations({ description: "why the run failed; null otherwise" }),
  created_by_user_id: UserId,
  created_at: Timestamp,
  updated_at: Timestamp
}

export class WorkflowRunView extends Schema.Class<WorkflowRunView>("WorkflowRun")(runFields) {}

/**
 * A run as stored: beside what the API shows (`dry_run` false and no readiness issues, which a stored run cannot
 * have), its app, its workspace, the toolkit and the template as they were at creation.
 */
export class WorkflowRun extends Schema.Class<WorkflowRun>("WorkflowRunRecord")({
  id: WorkflowRunId,
  partner_app_id: PartnerAppId,
  workspace_id: WorkspaceId,
  toolkit_id: ToolkitId,
  template_id: WorkflowTemplateId,
  template: ManifestWorkflowTemplate,
  status: RunStatus,
  role_mappings: RoleMappings,
  steps: Schema.Array(WorkflowRunStep),
  failure: Schema.NullOr(RunFailure),
  created_by_user_id: UserId,
  created_at: Timestamp,
  updated_at: Timestamp
}) {
  get view(): WorkflowRunView {
    return new WorkflowRunView({
      id: this.id,
      template_id: this.template_id,
      status: this.status,
      dry_run: false,
      role_mappings: this.role_mappings,
      steps: this.steps,
      readiness_issues: [],
      failure: this.failure,
      created_by_user_id: this.created_by_user_id,
      created_at: this.created_at,
      updated_at: this.updated_at
    }, trusted)
  }
}

export const TaskStatus = Schema.Literal("open", "approved", "rejected", "cancelled")
export type TaskStatus = typeof TaskStatus.Type

export const Decision = Schema.Literal("approve", "reject")
export type Decision = typeof Decision.Type

/** The human task of a run's task or approval step (at most one per run and step). */
export class WorkflowTask extends Schema.Class<WorkflowTask>("WorkflowTask")({
  id: WorkflowTaskId,
  run_id: WorkflowRunId,
  step_key: ManifestKey,
  assignee_user_id: UserId,
  status: TaskStatus,
  comment: Schema.NullOr(Schema.String),
  resolved_by_user_id: Schema.NullOr(UserId),
  created_at: Timestamp,
  resolved_at: Schema.NullOr(Timestamp)
}) {}

/** POST /v1/partner/user/workflow-runs (decisions.md). */
export class CreateWorkflowRun extends Schema.Class<CreateWorkflowRun>("CreateWorkflowRun")({
  template_id: WorkflowTemplateId,
  role_mappings: Schema.optionalWith(RoleMappingsInput, { default: () => ({}) }).annotations({
    description: "the user each of the template's roles is given to: `{role: user_id}`"
  }),
  dry_run: Schema.optionalWith(Schema.Boolean, { default: () => false }).annotations({
    description: "true: check the configuration and answer the run as it would start (200, with its " +
      "`readiness_issues`), storing and sending nothing"
  })
}, requestBody) {}

/** POST /v1/partner/user/workflow-runs/{id}/tasks/{task_id}/resolve (decisions.md). */
export class ResolveTask extends Schema.Class<ResolveTask>("ResolveWorkflowTask")({
  decision: Decision,
  comment: Schema.optional(LongText(2000))
}, requestBody) {}
