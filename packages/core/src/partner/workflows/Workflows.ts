/**
 * Workflow templates and durable workflow runs (decisions.md "Workflow templates", "Workflow run"; partner-api.md
 * Events): a run is a state machine kept in the store and moved one transition per unit of work, each transition
 * writing its events to the one outbox; nothing of a run is held in memory, and nothing outside the database happens
 * except through the outbox (docs/workflow-engine-evaluation.md says why this and not @effect/workflow).
 *
 * How a run moves (every move in one unit of work, the run read with getRunForUpdate):
 * - Created: the run is `running` and enters its first step at once (`workflow.run.started` to its creator).
 * - Entering a `task` or `approval` step: a human task for the step's assignee (the user its role is mapped to, else
 *   the run's creator); step and run `awaiting_review` (`workflow.task.created` to the assignee). It waits as a row,
 *   for days if need be, until the assignee resolves it.
 * - Entering a `webhook` step: one delivery in the outbox to the step's URL (addressee kind `workflow_step`), signed
 *   as the app's webhooks are and carrying `Idempotency-Key`, the same on every attempt; step and run `running`. The
 *   delivery worker sends and retries it (3 attempts, n² minutes) and, in the unit of work recording its outcome, moves
 *   the run: a 2xx completes the step; exhaustion, or a delivery that cannot be sent at all, fails the step and the run
 *   (`workflow.run.failed`). A killed process loses nothing: the delivery's lease expires and it is sent again with the
 *   same key; a move that did not commit is made again from the same stored state.
 * - A step completed (`workflow.step.completed` to the creator): the next step is entered in the same unit of work;
 *   after the last one the run is `completed` (`workflow.run.completed` to the creator).
 * - A task resolved (`workflow.task.resolved` to the reviewer): approve completes the step; reject rejects it, skips
 *   the steps after it and ends the run `rejected`, told as `workflow.run.failed` with `data.status: "rejected"` (the
 *   Events table has no rejected event).
 *
 * Decisions where the documents are silent (repeated in the API's descriptions and the README):
 * - Template ids are derived from the toolkit's id and the template's key (UUID v8 of SHA-256), so they are the same
 *   in every version. A user's templates are those of the calling app's toolkits in use in the user's workspace
 *   (the installed version's); the admin's, those of the app's toolkits' published versions.
 * - The entitlement is the workspace's plan, ELITE or ENTERPRISE (402 `plan_required`, feature `workflow_templates`),
 *   checked before anything else of the body, dry runs included.
 * - Readiness issues: `missing_role_mapping` (a role without a user), `unknown_role` (a mapping of a role the
 *   template does not have), `user_not_in_workspace` (a mapped user who is not a member of the run's workspace),
 *   `webhook_not_configured` (a webhook step while the app has no webhook secret to sign with).
 * - A dry run answers 200 with the run as it would start (status `pending`, every step `pending`, a fresh id that is
 *   not stored) and its readiness issues; it stores and sends nothing.
 * - Only the task's assignee resolves it (else 403 `forbidden`); a task already resolved, or of a run that ended, is
 *   409 `conflict`. Resolving answers the run.
 * - The run's creator may cancel it while it has not ended (cancelRun): `cancelled`, told as `workflow.run.failed` with
 *   `data.status: "cancelled"` (the Events table has no cancelled event either).
 * - Events: `data` is `{run_id, template_id, status, user_id}` (user_id: the addressee the Events table names) with,
 *   per type, `step_key` and `step_type` (step completed), `task_id`, `step_key` and `assignee_user_id` (task
 *   created), `task_id`, `step_key`, `decision` and `comment` (task resolved), `failure` (run failed).
 */
import { Context, DateTime, Effect, Either, Layer, Option, Schema } from "effect"
import { requireScope } from "../../identity/Access.js"
import type { Principal } from "../../identity/Identity.js"
import { UserStore } from "../../identity/IdentityStore.js"
import { Crypto } from "../../ports/Crypto.js"
import { Transactor } from "../../ports/Transactor.js"
import { Conflict, InsufficientScope, NotFound, orNotFound, PlanRequired } from "../../shared/Errors.js"
import type { UserId, WorkspaceId } from "../../shared/Ids.js"
import { clamp, type PageRequest, sliceOf, toList } from "../../shared/Pagination.js"
import { fn } from "../../shared/Span.js"
import { derivedUuid } from "../../shared/DerivedId.js"
import { now } from "../../shared/Time.js"
import { trusted } from "../../shared/Trusted.js"
import { EventId } from "../../events/Event.js"
import type { Delivery } from "../../webhooks/Webhook.js"
import { pendingDelivery } from "../../webhooks/WebhookFanOut.js"
import { WebhookStore } from "../../webhooks/WebhookStore.js"
import { atLeast } from "../../workspaces/Plans.js"
import { WorkspaceStore } from "../../workspaces/WorkspaceStore.js"
import type { PartnerApp, PartnerAppId } from "../PartnerApp.js"
import { type PartnerEventType, tellApp } from "../PartnerEvents.js"
import { PartnerStore } from "../PartnerStore.js"
import type { ManifestWorkflowTemplate } from "../toolkits/Manifest.js"
import type { ToolkitId } from "../toolkits/Toolkit.js"
import { ToolkitStore } from "../toolkits/ToolkitStore.js"
import { ToolkitRefused, Toolkits } from "../toolkits/Toolkits.js"
import {
  type CreateWorkflowRun,
  finalStatuses,
  ReadinessIssue,
  type ResolveTask,
  RunFailure,
  type RunStatus,
  WorkflowRun,
  WorkflowRunId,
  WorkflowRunStep,
  WorkflowRunView,
  WorkflowTask,
  WorkflowTaskId,
  WorkflowTemplate,
  WorkflowTemplateId
} from "./WorkflowRun.js"
import { WorkflowRunStore } from "./WorkflowRunStore.js"

/** The plan from which a workspace may run workflows (decisions.md: ELITE or ENTERPRISE). */
export const workflowsFrom = "ELITE" as const

/** A real run whose configuration has problems (400 `invalid_request` carrying them). */
export class WorkflowNotReady extends Schema.TaggedError<WorkflowNotReady>()("WorkflowNotReady", {
  readiness_issues: Schema.Array(ReadinessIssue),
  message: Schema.String
}) {}

/** The addressee kind of a webhook step's delivery (its addressee id is the run's). */
export const workflowStepAddressee = "workflow_step" as const

/** The id of the toolkit's workflow template with this key, the same in every version of the toolkit. */
export const workflowTemplateId = (toolkitId: ToolkitId, key: string): Effect.Effect<WorkflowTemplateId, never, Crypto> =>
  Effect.map(derivedUuid(`workflow_template:${toolkitId}:${key}`), (id) => WorkflowTemplateId.make(id))

/** The workflow templates of one toolkit's manifest. */
const templatesOf = (toolkitId: ToolkitId, templates: ReadonlyArray<ManifestWorkflowTemplate>) =>
  Effect.forEach(templates, (template) =>
    Effect.map(workflowTemplateId(toolkitId, template.key), (id) =>
      new WorkflowTemplate({
        id,
        key: template.key,
        name: template.name,
        description: template.description ?? null,
        roles: template.roles,
        steps: template.steps,
        toolkit_id: toolkitId
      }, trusted)))

/** The steps of a run of `template` before it starts. */
const pendingSteps = (template: ManifestWorkflowTemplate) =>
  template.steps.map((step) =>
    new WorkflowRunStep({
      key: step.key,
      type: step.type,
      title: step.title,
      status: "pending",
      assignee_user_id: null,
      task_id: null,
      started_at: null,
      completed_at: null
    }, trusted)
  )

/** The step a run is at (running or awaiting review), by index; -1 when none is. */
const currentStep = (run: WorkflowRun) => run.steps.findIndex((step) => step.status === "running" || step.status === "awaiting_review")

/** The run with step `index` replaced by `change` applied to it. */
const withStep = (run: WorkflowRun, index: number, change: Partial<WorkflowRunStep>): ReadonlyArray<WorkflowRunStep> =>
  run.steps.map((step, at) => (at === index ? new WorkflowRunStep({ ...step, ...change }, trusted) : step))

/** The step key a webhook step's delivery was made for (its body's `data.step_key`). */
const stepKeyOf = (delivery: Delivery): string | undefined => {
  try {
    const body: unknown = JSON.parse(delivery.body)
    const data: unknown = typeof body === "object" && body !== null ? (body as Record<string, unknown>)["data"] : undefined
    const key: unknown = typeof data === "object" && data !== null ? (data as Record<string, unknown>)["step_key"] : undefined
    return typeof key === "string" ? key : undefined
  } catch {
    return undefined
  }
}

/** One event a transition tells: its type and its data beyond the common fields. */
interface Told {
  readonly type: PartnerEventType
  readonly to: UserId
  readonly extra: Record<string, unknown>
}

/** What a transition wrote: the run after it and the events it tells. */
interface Moved {
  readonly run: WorkflowRun
  readonly told: ReadonlyArray<Told>
  readonly deliveries: ReadonlyArray<Delivery>
}

const make = Effect.gen(function*() {
  const store = yield* WorkflowRunStore
  const toolkits = yield* Toolkits
  const toolkitStore = yield* ToolkitStore
  const users = yield* UserStore
  const workspaces = yield* WorkspaceStore
  const partners = yield* PartnerStore
  const outbox = yield* WebhookStore
  const crypto = yield* Crypto
  const transactor = yield* Transactor
  const withCrypto = Effect.provideService(Crypto, crypto)

  // ------------------------------------------------------------------------------------------ templates

  /** The app's workflow templates (admin): those of its toolkits' published versions, oldest toolkit first. */
  const publishedTemplates = (app: PartnerApp) =>
    Effect.gen(function*() {
      const published = (yield* toolkitStore.toolkitsOf(app.id)).filter((toolkit) => toolkit.published_version_id !== null)
      const versions = yield* toolkitStore.versionsOf(published.flatMap((toolkit) => toolkit.published_version_id ?? []))
      const found: Array<WorkflowTemplate> = []
      for (const toolkit of published) {
        const version = versions.find((candidate) => candidate.id === toolkit.published_version_id)
        if (version !== undefined) found.push(...(yield* withCrypto(templatesOf(toolkit.id, version.manifest.workflow_templates ?? []))))
      }
      return found
    })

  const listTemplates = fn("Workflows.listTemplates")(function*(app: PartnerApp, request: PageRequest) {
    const page = clamp(request)
    return toList(sliceOf(yield* publishedTemplates(app), page), page)
  })

  const getTemplate = fn("Workflows.getTemplate")(function*(app: PartnerApp, id: WorkflowTemplateId) {
    const found = (yield* publishedTemplates(app)).find((template) => template.id === id)
    if (found === undefined) return yield* Effect.fail(new ToolkitRefused({ code: "not_found", message: "workflow template not found" }))
    return found
  })

  /**
   * The template `id` if a user of the workspace may run it for the app (one of the app's toolkits in use there), with
   * its manifest entry as installed.
   */
  const usableTemplate = (workspaceId: WorkspaceId, appId: PartnerAppId, id: WorkflowTemplateId) =>
    Effect.gen(function*() {
      for (const { manifest, toolkit_id } of yield* toolkits.installedIn(workspaceId, appId)) {
        for (const entry of manifest.workflow_templates ?? []) {
          if ((yield* withCrypto(workflowTemplateId(toolkit_id, entry.key))) !== id) continue
          const [template] = yield* withCrypto(templatesOf(toolkit_id, [entry]))
          return { template: template!, entry }
        }
      }
      return yield* Effect.fail(NotFound.of("workflow template", id))
    })

  // ------------------------------------------------------------------------------------------ events

  /** Enqueues one event about `run` to its app, if the app is told (PartnerEvents.tellApp). */
  const tell = (app: PartnerApp, run: WorkflowRun, told: Told, at: DateTime.Utc) =>
    Effect.gen(function*() {
      yield* tellApp(app, {
        type: told.type,
        id: EventId.make(yield* crypto.randomUUID),
        workspaceId: run.workspace_id,
        occurredAt: at,
        data: { run_id: run.id, template_id: run.template_id, status: run.status, user_id: told.to, ...told.extra }
      })
    }).pipe(Effect.provideService(Crypto, crypto), Effect.provideService(WebhookStore, outbox))

  /** Stores a transition: the run, and its events and deliveries in the outbox. */
  const commit = (moved: Moved, at: DateTime.Utc) =>
    Effect.gen(function*() {
      yield* store.updateRun(moved.run)
      if (moved.deliveries.length > 0) yield* outbox.enqueue(moved.deliveries)
      const app = yield* partners.get(moved.run.partner_app_id)
      if (Option.isSome(app)) for (const told of moved.told) yield* tell(app.value, moved.run, told, at)
      return moved.run
    })

  // ------------------------------------------------------------------------------------------ transitions

  /** The body of a webhook step's call (see the module's decisions). */
  const stepBody = (run: WorkflowRun, index: number, eventId: EventId, at: DateTime.Utc) =>
    JSON.stringify({
      event_id: eventId,
      event_type: "workflow.step.webhook",
      occurred_at: DateTime.formatIso(at),
      partner_app_id: run.partner_app_id,
      workspace_id: run.workspace_id,
      data: {
        run_id: run.id,
        template_id: run.template_id,
        step_key: run.template.steps[index]!.key,
        step_title: run.template.steps[index]!.title,
        role_mappings: run.role_mappings,
        created_by_user_id: run.created_by_user_id
      }
    })

  /** Enters step `index` of the run (or completes the run after its last step). */
  const enter = (run: WorkflowRun, index: number, at: DateTime.Utc, told: ReadonlyArray<Told>): Effect.Effect<Moved> =>
    Effect.gen(function*() {
      const step = run.template.steps[index]
      if (step === undefined) {
        const done = new WorkflowRun({ ...run, status: "completed", updated_at: at }, trusted)
        return { run: done, told: [...told, { type: "workflow.run.completed", to: run.created_by_user_id, extra: {} }], deliveries: [] }
      }
      if (step.type === "webhook") {
        const eventId = EventId.make(yield* crypto.randomUUID)
        const moved = new WorkflowRun({
          ...run,
          status: "running",
          steps: withStep(run, index, { status: "running", started_at: at }),
          updated_at: at
        }, trusted)
        const delivery = yield* withCrypto(pendingDelivery({
          addressee: { kind: workflowStepAddressee, id: run.id },
          workspaceId: run.workspace_id,
          eventId,
          eventType: "workflow.step.webhook",
          occurredAt: at,
          body: stepBody(run, index, eventId, at)
        }))
        return { run: moved, told, deliveries: [delivery] }
      }
      const assignee = step.role === undefined ? run.created_by_user_id : run.role_mappings[step.role] ?? run.created_by_user_id
      const task = new WorkflowTask({
        id: WorkflowTaskId.make(yield* crypto.randomUUID),
        run_id: run.id,
        step_key: step.key,
        assignee_user_id: assignee,
        status: "open",
        comment: null,
        resolved_by_user_id: null,
        created_at: at,
        resolved_at: null
      }, trusted)
      yield* store.insertTask(task)
      const moved = new WorkflowRun({
        ...run,
        status: "awaiting_review",
        steps: withStep(run, index, { status: "awaiting_review", assignee_user_id: assignee, task_id: task.id, started_at: at }),
        updated_at: at
      }, trusted)
      return {
        run: moved,
        told: [...told, {
          type: "workflow.task.created",
          to: assignee,
          extra: { task_id: task.id, step_key: step.key, assignee_user_id: assignee }
        }],
        deliveries: []
      }
    })

  /** Completes the run's current step `index` and enters the next. */
  const complete = (run: WorkflowRun, index: number, at: DateTime.Utc, told: ReadonlyArray<Told>) => {
    const step = run.steps[index]!
    const advanced = new WorkflowRun({
      ...run,
      status: "running",
      steps: withStep(run, index, { status: "completed", completed_at: at }),
      updated_at: at
    }, trusted)
    return enter(advanced, index + 1, at, [
      ...told,
      { type: "workflow.step.completed", to: run.created_by_user_id, extra: { step_key: step.key, step_type: step.type } }
    ])
  }

  /** Ends the run at step `index` with `status` (failed or rejected), skipping the steps after it. */
  const end = (
    run: WorkflowRun,
    index: number,
    status: Extract<RunStatus, "failed" | "rejected">,
    failure: RunFailure | null,
    at: DateTime.Utc,
    told: ReadonlyArray<Told>
  ): Moved => {
    const steps = run.steps.map((step, at_) =>
      at_ === index
        ? new WorkflowRunStep({ ...step, status: status === "rejected" ? "rejected" : "failed", completed_at: at }, trusted)
        : at_ > index
        ? new WorkflowRunStep({ ...step, status: "skipped" }, trusted)
        : step
    )
    const ended = new WorkflowRun({ ...run, status, steps, failure, updated_at: at }, trusted)
    return {
      run: ended,
      told: [...told, {
        type: "workflow.run.failed",
        to: run.created_by_user_id,
        extra: failure === null ? {} : { failure: { code: failure.code, message: failure.message, step_key: failure.step_key } }
      }],
      deliveries: []
    }
  }

  // ------------------------------------------------------------------------------------------ user context

  /** The run of the caller's app in the caller's workspace, or 404. */
  const runOf = (principal: Principal, appId: PartnerAppId, id: WorkflowRunId) =>
    store.getRun(appId, principal.workspace_id, id).pipe(orNotFound("workflow run", id))

  const userOf = (principal: Principal) =>
    principal.user_id === null
      ? Effect.fail(new InsufficientScope({ required: "user", message: "workflow runs are created by a user" }))
      : Effect.succeed(principal.user_id)

  /** The configuration problems of a run of `template` with `mappings` for `app` in the workspace. */
  const readinessOf = (app: PartnerApp, workspaceId: WorkspaceId, template: WorkflowTemplate, mappings: Record<string, UserId>) =>
    Effect.gen(function*() {
      const issues: Array<ReadinessIssue> = []
      for (const role of template.roles) {
        if (mappings[role] === undefined) {
          issues.push(new ReadinessIssue({ code: "missing_role_mapping", message: `role "${role}" is not mapped to a user`, role }, trusted))
        }
      }
      const roles = Object.keys(mappings)
      for (const role of roles) {
        if (!template.roles.includes(role)) {
          issues.push(new ReadinessIssue({ code: "unknown_role", message: `"${role}" is not one of the template's roles`, role }, trusted))
        }
      }
      const mapped = [...new Set(Object.values(mappings))]
      const members = new Set((yield* users.getMany(workspaceId, mapped)).map((user) => user.id))
      for (const role of roles) {
        const user = mappings[role]!
        if (template.roles.includes(role) && !members.has(user)) {
          issues.push(
            new ReadinessIssue({ code: "user_not_in_workspace", message: `the user mapped to role "${role}" is not a member of the workspace`, role }, trusted)
          )
        }
      }
      if (template.steps.some((step) => step.type === "webhook") && app.sealed_webhook_secret === null) {
        issues.push(
          new ReadinessIssue({ code: "webhook_not_configured", message: "the template has webhook steps and the app has no webhook secret to sign them with" }, trusted)
        )
      }
      return issues
    })

  /** Creates a run (or checks one: dry_run); see the module's decisions. */
  const createRun = fn("Workflows.createRun")(function*(principal: Principal, app: PartnerApp, input: CreateWorkflowRun) {
    yield* requireScope(principal, "partner-api/workflows:write")
    const userId = yield* userOf(principal)
    const workspace = yield* workspaces.get(principal.workspace_id).pipe(orNotFound("workspace", principal.workspace_id))
    if (!atLeast(workspace.plan, workflowsFrom)) {
      return yield* Effect.fail(
        new PlanRequired({
          feature: "workflow_templates",
          current_plan: workspace.plan,
          required_plan: workflowsFrom,
          message: `workflow runs need the ${workflowsFrom} plan or higher`
        })
      )
    }
    const { entry: manifestTemplate, template } = yield* usableTemplate(workspace.id, app.id, input.template_id)
    const issues = yield* readinessOf(app, workspace.id, template, input.role_mappings)
    const at = yield* now
    const run = new WorkflowRun({
      id: WorkflowRunId.make(yield* crypto.randomUUID),
      partner_app_id: app.id,
      workspace_id: workspace.id,
      toolkit_id: template.toolkit_id,
      template_id: template.id,
      template: manifestTemplate,
      status: "pending",
      role_mappings: input.role_mappings,
      steps: pendingSteps(manifestTemplate),
      failure: null,
      created_by_user_id: userId,
      created_at: at,
      updated_at: at
    }, trusted)
    if (input.dry_run) {
      return { created: false, run: new WorkflowRunView({ ...run.view, dry_run: true, readiness_issues: issues }, trusted) } as const
    }
    if (issues.length > 0) {
      return yield* Effect.fail(
        new WorkflowNotReady({ readiness_issues: issues, message: `the run is not ready: ${issues.map((issue) => issue.message).join("; ")}` })
      )
    }
    const started = yield* transactor.withTransaction(Effect.gen(function*() {
      const running = new WorkflowRun({ ...run, status: "running" }, trusted)
      // The run's row first: the task its first step may make refers to it (a foreign key on PostgreSQL).
      yield* store.insertRun(running)
      const moved = yield* enter(running, 0, at, [{ type: "workflow.run.started", to: userId, extra: {} }])
      return yield* commit(moved, at)
    }))
    return { created: true, run: started.view } as const
  })

  const listRuns = fn("Workflows.listRuns")(function*(
    principal: Principal,
    appId: PartnerAppId,
    request: PageRequest & { readonly status?: RunStatus | undefined }
  ) {
    yield* requireScope(principal, "partner-api/workflows:read")
    const page = clamp(request)
    const slice = yield* store.listRuns(appId, principal.workspace_id, page, request.status)
    return toList({ items: slice.items.map((run) => run.view), total: slice.total }, page)
  })

  const getRun = fn("Workflows.getRun")(function*(principal: Principal, appId: PartnerAppId, id: WorkflowRunId) {
    yield* requireScope(principal, "partner-api/workflows:read")
    return (yield* runOf(principal, appId, id)).view
  })

  /** Records the assignee's decision on a task of the run (see the module's decisions); answers the run. */
  const resolveTask = fn("Workflows.resolveTask")(function*(
    principal: Principal,
    appId: PartnerAppId,
    id: WorkflowRunId,
    taskId: WorkflowTaskId,
    input: ResolveTask
  ) {
    yield* requireScope(principal, "partner-api/workflows:write")
    const userId = yield* userOf(principal)
    yield* runOf(principal, appId, id)
    return yield* transactor.withTransaction(Effect.gen(function*() {
      const run = yield* store.getRunForUpdate(id).pipe(orNotFound("workflow run", id))
      const task = yield* store.getTask(run.id, taskId).pipe(orNotFound("task", taskId))
      if (task.assignee_user_id !== userId) {
        return yield* Effect.fail(new InsufficientScope({ required: "assignee", message: "only the task's assignee may resolve it" }))
      }
      if (task.status !== "open") return yield* Effect.fail(new Conflict({ message: `the task is already ${task.status}` }))
      const index = run.steps.findIndex((step) => step.task_id === task.id)
      if (finalStatuses.has(run.status) || index === -1 || run.steps[index]!.status !== "awaiting_review") {
        return yield* Effect.fail(new Conflict({ message: `the run is ${run.status}` }))
      }
      const at = yield* now
      const approved = input.decision === "approve"
      yield* store.updateTask(
        new WorkflowTask({
          ...task,
          status: approved ? "approved" : "rejected",
          comment: input.comment ?? null,
          resolved_by_user_id: userId,
          resolved_at: at
        }, trusted)
      )
      const resolved: Told = {
        type: "workflow.task.resolved",
        to: userId,
        extra: { task_id: task.id, step_key: task.step_key, decision: input.decision, comment: input.comment ?? null }
      }
      const moved = approved ? yield* complete(run, index, at, [resolved]) : end(run, index, "rejected", null, at, [resolved])
      return (yield* commit(moved, at)).view
    }))
  })

  /**
   * Cancels the run (its creator only, while it has not ended): the open task is cancelled, the step the run is at and
   * the later ones are skipped, and the run is told ended as `workflow.run.failed` with `data.status: "cancelled"`. A
   * webhook step's call still waiting in the outbox is not sent.
   */
  const cancelRun = fn("Workflows.cancelRun")(function*(principal: Principal, appId: PartnerAppId, id: WorkflowRunId) {
    yield* requireScope(principal, "partner-api/workflows:write")
    const userId = yield* userOf(principal)
    yield* runOf(principal, appId, id)
    return yield* transactor.withTransaction(Effect.gen(function*() {
      const run = yield* store.getRunForUpdate(id).pipe(orNotFound("workflow run", id))
      if (run.created_by_user_id !== userId) {
        return yield* Effect.fail(new InsufficientScope({ required: "run creator", message: "only the run's creator may cancel it" }))
      }
      if (finalStatuses.has(run.status)) return yield* Effect.fail(new Conflict({ message: `the run is already ${run.status}` }))
      const at = yield* now
      for (const task of yield* store.tasksOf(run.id)) {
        if (task.status === "open") yield* store.updateTask(new WorkflowTask({ ...task, status: "cancelled", resolved_at: at }, trusted))
      }
      const steps = run.steps.map((step) =>
        step.status === "completed" ? step : new WorkflowRunStep({ ...step, status: "skipped" }, trusted)
      )
      const cancelled = new WorkflowRun({ ...run, status: "cancelled", steps, updated_at: at }, trusted)
      const told: Told = { type: "workflow.run.failed", to: run.created_by_user_id, extra: {} }
      return (yield* commit({ run: cancelled, told: [told], deliveries: [] }, at)).view
    }))
  })

  // ------------------------------------------------------------------------------------------ webhook steps

  /**
   * The run of a webhook step's delivery and the step it is at, when that step is the delivery's and still waits for
   * its outcome; none otherwise (the run ended, or was moved already).
   */
  const waitingStep = (delivery: Delivery) =>
    Effect.map(store.getRunForUpdate(WorkflowRunId.make(delivery.addressee_id)), (found) =>
      Option.flatMap(found, (run) => {
        const index = currentStep(run)
        const step = index === -1 ? undefined : run.steps[index]
        return step !== undefined && step.type === "webhook" && step.status === "running" && !finalStatuses.has(run.status) &&
            step.key === stepKeyOf(delivery)
          ? Option.some({ run, index })
          : Option.none()
      }))

  /** A webhook step's delivery was answered 2xx (in the unit of work recording it): the step is completed. */
  const stepDelivered = (delivery: Delivery, at: DateTime.Utc) =>
    Effect.gen(function*() {
      const found = yield* waitingStep(delivery)
      if (Option.isNone(found)) return
      yield* commit(yield* complete(found.value.run, found.value.index, at, []), at)
    })

  /** A webhook step's delivery failed for good or could not be sent (in the unit of work recording it): the run fails. */
  const stepFailed = (delivery: Delivery, at: DateTime.Utc, code: "step_delivery_failed" | "step_not_sent", message: string) =>
    Effect.gen(function*() {
      const found = yield* waitingStep(delivery)
      if (Option.isNone(found)) return
      const { index, run } = found.value
      const failure = new RunFailure({ code, message, step_key: run.steps[index]!.key }, trusted)
      yield* commit(end(run, index, "failed", failure, at, []), at)
    })

  /** Where a webhook step's delivery goes now: the step's URL and the run's app while the run waits for it, or why not. */
  const stepTarget = (delivery: Delivery) =>
    Effect.map(store.getRunForUpdate(WorkflowRunId.make(delivery.addressee_id)), (found) => {
      if (Option.isNone(found)) return Either.left("not sent: the workflow run no longer exists")
      const run = found.value
      const index = currentStep(run)
      const step = index === -1 ? undefined : run.template.steps[index]
      if (finalStatuses.has(run.status) || step?.type !== "webhook" || step.url === undefined || step.key !== stepKeyOf(delivery)) {
        return Either.left(`not sent: the workflow run is ${run.status} and no longer waits for this step`)
      }
      return Either.right({ url: step.url, appId: run.partner_app_id })
    })

  return {
    listTemplates,
    getTemplate,
    createRun,
    listRuns,
    getRun,
    resolveTask,
    cancelRun,
    stepDelivered,
    stepFailed,
    stepTarget
  } as const
})

export class Workflows extends Context.Tag("@convene/core/Workflows")<Workflows, Effect.Effect.Success<typeof make>>() {
  static readonly layer: Layer.Layer<
    Workflows,
    never,
    WorkflowRunStore | Toolkits | ToolkitStore | UserStore | WorkspaceStore | PartnerStore | WebhookStore | Crypto | Transactor
  > = Layer.effect(Workflows, make)
}
