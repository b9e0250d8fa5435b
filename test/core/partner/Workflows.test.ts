/**
 * Workflow templates and runs through the real services (Toolkits, Workflows, PartnerApps, DeliveryWorker) on the
 * memory store, with the scripted Outbound of the webhook tests: the templates of published and installed toolkits,
 * the entitlement, readiness issues and dry runs, a run through its task, approval and webhook steps with every event
 * to its addressee, rejection, a webhook step that fails for good or cannot be sent, and who may resolve a task.
 */
import {
  Convene,
  CreatePartnerApp,
  CreateToolkit,
  CreateToolkitVersion,
  CreateWorkflowRun,
  DeliveryWorker,
  type PartnerApp,
  PartnerApps,
  PartnerStore,
  type Plan,
  Principal,
  PublishToolkitVersion,
  ResolveTask,
  Scopes,
  Toolkits,
  trusted,
  UpdatePartnerApp,
  type WorkflowRunView,
  Workflows,
  type WorkflowTaskId,
  type WorkflowTemplateId
} from "@convene/core"
import { describe, expect, it } from "@effect/vitest"
import { verify } from "@octokit/webhooks-methods"
import { Duration, Effect, Layer, Option, TestClock } from "effect"
import { principalFor } from "../fixtures.js"
import { answered, answerWith, freshUrl, takeRequests, WebhooksLive, type WebhooksServices } from "../webhooks/fixtures.js"

const WorkflowsLive = Convene.partnerLayer.pipe(Layer.provideMerge(WebhooksLive))
type Services = Layer.Layer.Success<typeof WorkflowsLive> | WebhooksServices

/** A test on a store of its own (the worker claims across the whole store). */
const test = <E>(name: string, body: () => Effect.Effect<void, E, Services>) =>
  it.effect(name, () => Effect.provide(body(), WorkflowsLive))

const workflowScopes = ["partner-api/workflows:read", "partner-api/workflows:write"] as const

/** A user of a workspace of `plan` acting through a partner token with the workflow scopes (or `scopes`). */
const partnerUser = (options: { readonly plan?: Plan; readonly workspaceId?: Principal["workspace_id"]; readonly scopes?: Principal["scopes"] } = {}) =>
  Effect.gen(function*() {
    const made = yield* principalFor({
      plan: options.plan ?? "ELITE",
      role: "MEMBER",
      kind: "short_lived",
      ...(options.workspaceId === undefined ? {} : { workspaceId: options.workspaceId })
    })
    const principal = new Principal({ ...made.principal, scopes: options.scopes ?? [...Scopes.slice(0, 4), ...workflowScopes] }, trusted)
    return { ...made, principal }
  })

const stepUrl = freshUrl()

/** The step's URL answers `status`; every other URL (the app's webhooks) 200. */
const stepAnswers = (status: number) => answerWith((request) => answered(request.url === stepUrl ? status : 200))

const manifest = (steps: ReadonlyArray<Record<string, unknown>>, name = "Deals", key = "deal") => ({
  schema_version: 1,
  name,
  workflow_templates: [{ key, name: "Deal review", description: "Review a deal", roles: ["lead", "reviewer"], steps }]
})

const fullSteps = [
  { key: "draft", type: "task", title: "Draft the deal", role: "lead" },
  { key: "approve", type: "approval", title: "Approve it", role: "reviewer" },
  { key: "notify", type: "webhook", title: "Tell the CRM", url: stepUrl }
]

/** An app with a webhook URL, connected to the workspace, with a toolkit of `steps` published and installed there. */
const installedApp = (workspaceId: Principal["workspace_id"], steps: ReadonlyArray<Record<string, unknown>> = fullSteps, key = "deal") =>
  Effect.gen(function*() {
    const apps = yield* PartnerApps
    const toolkits = yield* Toolkits
    const created = yield* apps.create(CreatePartnerApp.make({ name: "Acme Deals", webhook_url: freshUrl() }))
    yield* apps.connectWorkspace(created.id, workspaceId)
    const app: PartnerApp = Option.getOrThrow(yield* (yield* PartnerStore).get(created.id))
    const toolkit = yield* toolkits.create(app, new CreateToolkit({ manifest: manifest(steps, "Deals", key) }))
    yield* toolkits.patch(app, toolkit.id, { auto_install_on_new_workspaces: true })
    yield* toolkits.publish(app, toolkit.id, toolkit.latest_version_id, new PublishToolkitVersion({ propagation: "normal" }))
    yield* toolkits.installPending()
    const [template] = (yield* (yield* Workflows).listTemplates(app, {})).items
    return { app, secret: created.webhook_secret, toolkit, template: template! }
  })

/** A run of `template` whose roles are all the owner's. */
const soloRun = (owner: { readonly user: { readonly id: Principal["user_id"] & string } }, template: { readonly id: WorkflowTemplateId }) =>
  new CreateWorkflowRun({ template_id: template.id, role_mappings: { lead: owner.user.id, reviewer: owner.user.id } })

const runOnce = Effect.flatMap(DeliveryWorker, (worker) => worker.runOnce({ limit: 1000 }))

/** The app's events delivered so far (type, data), in order; they are forgotten. */
const eventsTo = (app: PartnerApp) =>
  Effect.gen(function*() {
    yield* runOnce
    return (yield* takeRequests(app.webhook_url!)).map((request) => JSON.parse(request.body) as { event_type: string; data: Record<string, unknown> })
  })

/**
 * The events are `expected` (in any order: one transition's events are sent concurrently, and receivers do not rely on
 * the order of deliveries).
 */
const expectEvents = (actual: ReadonlyArray<{ event_type: string; data: Record<string, unknown> }>, expected: ReadonlyArray<Record<string, unknown>>) => {
  expect(actual).toHaveLength(expected.length)
  expect(actual).toEqual(expect.arrayContaining(expected.map((event) => expect.objectContaining({
    ...event,
    data: expect.objectContaining(event["data"] as Record<string, unknown>)
  }))))
}

const taskOf = (run: WorkflowRunView, key: string) => run.steps.find((step) => step.key === key)!.task_id as WorkflowTaskId

describe("workflow templates", () => {
  test("are the published toolkits' workflow templates, with an id stable across versions; another is not found", () =>
    Effect.gen(function*() {
      const { workspace } = yield* partnerUser()
      const { app, template, toolkit } = yield* installedApp(workspace.id)
      const workflows = yield* Workflows
      const toolkits = yield* Toolkits
      expect(template).toMatchObject({ key: "deal", name: "Deal review", description: "Review a deal", roles: ["lead", "reviewer"], toolkit_id: toolkit.id })
      expect(template.steps.map((step) => step.key)).toEqual(["draft", "approve", "notify"])
      expect(yield* workflows.getTemplate(app, template.id)).toEqual(template)
      const next = yield* toolkits.createVersion(app, toolkit.id, new CreateToolkitVersion({ manifest: manifest(fullSteps.slice(0, 1), "Deals 2") }))
      yield* toolkits.publish(app, toolkit.id, next.id, new PublishToolkitVersion({ propagation: "normal" }))
      const again = yield* workflows.getTemplate(app, template.id)
      expect(again.id).toBe(template.id)
      expect(again.steps.map((step) => step.key)).toEqual(["draft"])
      const other = (yield* (yield* PartnerApps).create(CreatePartnerApp.make({ name: "Other" })))
      const otherApp = Option.getOrThrow(yield* (yield* PartnerStore).get(other.id))
      expect(yield* Effect.flip(workflows.getTemplate(otherApp, template.id))).toMatchObject({ code: "not_found" })
      expect((yield* workflows.listTemplates(otherApp, {})).total).toBe(0)
    }))
})

describe("workflow runs", () => {
  test("a run goes through its task, approval and webhook steps, each event to its addressee, the step called once with its key", () =>
    Effect.gen(function*() {
      const owner = yield* partnerUser()
      const reviewer = yield* partnerUser({ workspaceId: owner.workspace.id })
      const { app, secret, template } = yield* installedApp(owner.workspace.id)
      const workflows = yield* Workflows
      yield* eventsTo(app)
      const created = yield* workflows.createRun(
        owner.principal,
        app,
        new CreateWorkflowRun({ template_id: template.id, role_mappings: { lead: owner.user.id, reviewer: reviewer.user.id } })
      )
      expect(created.created).toBe(true)
      const run = created.run
      expect(run).toMatchObject({ status: "awaiting_review", dry_run: false, readiness_issues: [], created_by_user_id: owner.user.id, failure: null })
      expect(run.steps.map((step) => [step.key, step.status, step.assignee_user_id])).toEqual([
        ["draft", "awaiting_review", owner.user.id],
        ["approve", "pending", null],
        ["notify", "pending", null]
      ])
      expectEvents(yield* eventsTo(app), [
        { event_type: "workflow.run.started", data: { run_id: run.id, template_id: template.id, user_id: owner.user.id } },
        { event_type: "workflow.task.created", data: { user_id: owner.user.id, step_key: "draft", task_id: taskOf(run, "draft") } }
      ])
      // Only the assignee resolves a task.
      expect(yield* Effect.flip(workflows.resolveTask(reviewer.principal, app.id, run.id, taskOf(run, "draft"), new ResolveTask({ decision: "approve" }))))
        .toMatchObject({ _tag: "InsufficientScope", required: "assignee" })
      const drafted = yield* workflows.resolveTask(owner.principal, app.id, run.id, taskOf(run, "draft"), new ResolveTask({ decision: "approve", comment: "done" }))
      expect(drafted.status).toBe("awaiting_review")
      expect(drafted.steps.map((step) => step.status)).toEqual(["completed", "awaiting_review", "pending"])
      expectEvents(yield* eventsTo(app), [
        { event_type: "workflow.task.resolved", data: { user_id: owner.user.id, decision: "approve", comment: "done", step_key: "draft" } },
        { event_type: "workflow.step.completed", data: { user_id: owner.user.id, step_key: "draft", step_type: "task" } },
        { event_type: "workflow.task.created", data: { user_id: reviewer.user.id, assignee_user_id: reviewer.user.id, step_key: "approve" } }
      ])
      // A resolved task is not resolved again.
      expect(yield* Effect.flip(workflows.resolveTask(owner.principal, app.id, run.id, taskOf(run, "draft"), new ResolveTask({ decision: "reject" }))))
        .toMatchObject({ _tag: "Conflict" })

      // The webhook step's URL fails once: the retry carries the same key; the second answer completes the run.
      yield* stepAnswers(500)
      const approved = yield* workflows.resolveTask(reviewer.principal, app.id, run.id, taskOf(drafted, "approve"), new ResolveTask({ decision: "approve" }))
      expect(approved.status).toBe("running")
      expect(approved.steps.map((step) => step.status)).toEqual(["completed", "completed", "running"])
      yield* runOnce
      const [first] = yield* takeRequests(stepUrl)
      expect(first).toBeDefined()
      const body = JSON.parse(first!.body)
      expect(body).toMatchObject({ event_type: "workflow.step.webhook", partner_app_id: app.id, data: { run_id: run.id, step_key: "notify" } })
      expect(first!.headers["Idempotency-Key"]).toMatch(/^[0-9a-f]{64}$/)
      expect(yield* Effect.promise(() => verify(secret, first!.body, first!.headers["X-Svc-Signature"]!))).toBe(true)
      expect((yield* workflows.getRun(owner.principal, app.id, run.id)).status).toBe("running")
      yield* stepAnswers(200)
      yield* TestClock.adjust(Duration.minutes(2))
      yield* runOnce
      const [second] = yield* takeRequests(stepUrl)
      expect(second!.headers["Idempotency-Key"]).toBe(first!.headers["Idempotency-Key"])
      expect(second!.body).toBe(first!.body)
      const done = yield* workflows.getRun(owner.principal, app.id, run.id)
      expect(done.status).toBe("completed")
      expect(done.steps.every((step) => step.status === "completed" && step.completed_at !== null)).toBe(true)
      expectEvents(yield* eventsTo(app), [
        { event_type: "workflow.task.resolved", data: { user_id: reviewer.user.id, decision: "approve", step_key: "approve" } },
        { event_type: "workflow.step.completed", data: { step_key: "approve", step_type: "approval", user_id: owner.user.id } },
        { event_type: "workflow.step.completed", data: { step_key: "notify", step_type: "webhook", user_id: owner.user.id } },
        { event_type: "workflow.run.completed", data: { status: "completed", user_id: owner.user.id } }
      ])
      // Nothing more is called, however often the worker runs.
      yield* TestClock.adjust(Duration.minutes(30))
      yield* runOnce
      expect(yield* takeRequests(stepUrl)).toEqual([])
      expect((yield* workflows.listRuns(owner.principal, app.id, { status: "completed" })).items.map((item) => item.id)).toEqual([run.id])
    }))

  test("a rejection ends the run rejected, skips the rest, and is told as workflow.run.failed with status rejected", () =>
    Effect.gen(function*() {
      const owner = yield* partnerUser()
      const { app, template } = yield* installedApp(owner.workspace.id)
      const workflows = yield* Workflows
      const { run } = yield* workflows.createRun(owner.principal, app, soloRun(owner, template))
      yield* eventsTo(app)
      const rejected = yield* workflows.resolveTask(owner.principal, app.id, run.id, taskOf(run, "draft"), new ResolveTask({ decision: "reject", comment: "no" }))
      expect(rejected.status).toBe("rejected")
      expect(rejected.steps.map((step) => step.status)).toEqual(["rejected", "skipped", "skipped"])
      expectEvents(yield* eventsTo(app), [
        { event_type: "workflow.task.resolved", data: { decision: "reject", comment: "no", user_id: owner.user.id } },
        { event_type: "workflow.run.failed", data: { status: "rejected", user_id: owner.user.id } }
      ])
      yield* runOnce
      expect(yield* takeRequests(stepUrl)).toEqual([])
    }))

  test("a webhook step that fails its 3 attempts fails the run; one that cannot be sent fails it at once", () =>
    Effect.gen(function*() {
      const owner = yield* partnerUser()
      const { app, template } = yield* installedApp(owner.workspace.id, [fullSteps[2]!])
      const workflows = yield* Workflows
      yield* stepAnswers(503)
      const mappings = { lead: owner.user.id, reviewer: owner.user.id }
      const { run } = yield* workflows.createRun(owner.principal, app, new CreateWorkflowRun({ template_id: template.id, role_mappings: mappings }))
      expect(run.status).toBe("running")
      for (const wait of [0, 1, 4]) {
        yield* TestClock.adjust(Duration.minutes(wait))
        yield* runOnce
      }
      expect(yield* takeRequests(stepUrl)).toHaveLength(3)
      const failed = yield* workflows.getRun(owner.principal, app.id, run.id)
      expect(failed).toMatchObject({ status: "failed", failure: { code: "step_delivery_failed", step_key: "notify" } })
      expect(failed.steps[0]!.status).toBe("failed")
      expectEvents(yield* eventsTo(app), [
        { event_type: "workflow.run.started", data: { status: "running" } },
        { event_type: "workflow.run.failed", data: { status: "failed", failure: expect.objectContaining({ code: "step_delivery_failed" }) } }
      ])

      // The app suspended after the run started: its step is not sent, and the run fails.
      const second = yield* workflows.createRun(owner.principal, app, new CreateWorkflowRun({ template_id: template.id, role_mappings: mappings }))
      yield* (yield* PartnerApps).update(app.id, UpdatePartnerApp.make({ status: "suspended" }))
      yield* runOnce
      expect(yield* takeRequests(stepUrl)).toEqual([])
      expect(yield* workflows.getRun(owner.principal, app.id, second.run.id)).toMatchObject({
        status: "failed",
        failure: { code: "step_not_sent", step_key: "notify", message: "not sent: the partner app is suspended" }
      })
    }))

  test("the entitlement, the template and the readiness issues are checked; a dry run stores and sends nothing", () =>
    Effect.gen(function*() {
      const owner = yield* partnerUser()
      const { app, template } = yield* installedApp(owner.workspace.id)
      const workflows = yield* Workflows
      const stranger = yield* partnerUser()
      yield* eventsTo(app)
      const mappings = { lead: owner.user.id, ghost: owner.user.id, reviewer: stranger.user.id }
      const dry = yield* workflows.createRun(owner.principal, app, new CreateWorkflowRun({ template_id: template.id, role_mappings: mappings, dry_run: true }))
      expect(dry.created).toBe(false)
      expect(dry.run).toMatchObject({ status: "pending", dry_run: true, template_id: template.id })
      expect(dry.run.steps.every((step) => step.status === "pending")).toBe(true)
      expect(dry.run.readiness_issues.map((issue) => [issue.code, issue.role])).toEqual([
        ["unknown_role", "ghost"],
        ["user_not_in_workspace", "reviewer"]
      ])
      const missing = yield* workflows.createRun(owner.principal, app, new CreateWorkflowRun({ template_id: template.id, dry_run: true }))
      expect(missing.run.readiness_issues.map((issue) => [issue.code, issue.role])).toEqual([
        ["missing_role_mapping", "lead"],
        ["missing_role_mapping", "reviewer"]
      ])
      expect(yield* Effect.flip(workflows.getRun(owner.principal, app.id, dry.run.id))).toMatchObject({ _tag: "NotFound" })
      const refused = yield* Effect.flip(workflows.createRun(owner.principal, app, new CreateWorkflowRun({ template_id: template.id, role_mappings: mappings })))
      expect(refused).toMatchObject({ _tag: "WorkflowNotReady" })
      expect((yield* workflows.listRuns(owner.principal, app.id, {})).total).toBe(0)
      expect(yield* eventsTo(app)).toEqual([])

      // Plans below ELITE are refused before anything else; an unknown template is not found.
      const pro = yield* partnerUser({ plan: "PRO" })
      yield* (yield* PartnerApps).connectWorkspace(app.id, pro.workspace.id)
      expect(yield* Effect.flip(workflows.createRun(pro.principal, app, new CreateWorkflowRun({ template_id: template.id, dry_run: true }))))
        .toMatchObject({ _tag: "PlanRequired", feature: "workflow_templates", required_plan: "ELITE", current_plan: "PRO" })
      const unknown = "00000000-0000-4000-8000-000000000000" as WorkflowTemplateId
      expect(yield* Effect.flip(workflows.createRun(owner.principal, app, new CreateWorkflowRun({ template_id: unknown }))))
        .toMatchObject({ _tag: "NotFound" })
      // A token without the scopes.
      const reader = yield* partnerUser({ workspaceId: owner.workspace.id, scopes: ["meetings:read", "partner-api/workflows:read"] })
      expect(yield* Effect.flip(workflows.createRun(reader.principal, app, new CreateWorkflowRun({ template_id: template.id }))))
        .toMatchObject({ _tag: "InsufficientScope", required: "partner-api/workflows:write" })
      const writerOnly = yield* partnerUser({ workspaceId: owner.workspace.id, scopes: ["meetings:read"] })
      expect(yield* Effect.flip(workflows.listRuns(writerOnly.principal, app.id, {})))
        .toMatchObject({ _tag: "InsufficientScope", required: "partner-api/workflows:read" })
    }))

  test("its creator cancels a run: the open task is cancelled, the rest skipped, a waiting webhook call not sent", () =>
    Effect.gen(function*() {
      const owner = yield* partnerUser()
      const other = yield* partnerUser({ workspaceId: owner.workspace.id })
      const { app, template } = yield* installedApp(owner.workspace.id, [fullSteps[2]!, fullSteps[1]!])
      const workflows = yield* Workflows
      yield* stepAnswers(503)
      const { run } = yield* workflows.createRun(owner.principal, app, soloRun(owner, template))
      yield* runOnce
      expect(yield* takeRequests(stepUrl)).toHaveLength(1)
      yield* eventsTo(app)
      expect(yield* Effect.flip(workflows.cancelRun(other.principal, app.id, run.id))).toMatchObject({ _tag: "InsufficientScope", required: "run creator" })
      const cancelled = yield* workflows.cancelRun(owner.principal, app.id, run.id)
      expect(cancelled.status).toBe("cancelled")
      expect(cancelled.steps.map((step) => step.status)).toEqual(["skipped", "skipped"])
      expectEvents(yield* eventsTo(app), [{ event_type: "workflow.run.failed", data: { status: "cancelled", user_id: owner.user.id } }])
      // The retry that was due is given up without a call; the run stays cancelled.
      yield* TestClock.adjust(Duration.minutes(2))
      yield* runOnce
      expect(yield* takeRequests(stepUrl)).toEqual([])
      expect((yield* workflows.getRun(owner.principal, app.id, run.id)).status).toBe("cancelled")
      expect(yield* Effect.flip(workflows.cancelRun(owner.principal, app.id, run.id))).toMatchObject({ _tag: "Conflict" })

      // At a review: the task is cancelled and can no longer be resolved.
      const { app: second, template: review } = yield* installedApp(owner.workspace.id, [fullSteps[0]!], "review")
      const waiting = yield* workflows.createRun(owner.principal, second, soloRun(owner, review))
      yield* workflows.cancelRun(owner.principal, second.id, waiting.run.id)
      expect(yield* Effect.flip(workflows.resolveTask(owner.principal, second.id, waiting.run.id, taskOf(waiting.run, "draft"), new ResolveTask({ decision: "approve" }))))
        .toMatchObject({ _tag: "Conflict", message: "the task is already cancelled" })
    }))

  test("a run started goes on with its template when the toolkit is deleted; new runs of it are not found", () =>
    Effect.gen(function*() {
      const owner = yield* partnerUser()
      const { app, template, toolkit } = yield* installedApp(owner.workspace.id, [fullSteps[0]!])
      const workflows = yield* Workflows
      const { run } = yield* workflows.createRun(owner.principal, app, soloRun(owner, template))
      yield* (yield* Toolkits).remove(app, toolkit.id)
      expect(yield* Effect.flip(workflows.createRun(owner.principal, app, soloRun(owner, template)))).toMatchObject({ _tag: "NotFound" })
      const done = yield* workflows.resolveTask(owner.principal, app.id, run.id, taskOf(run, "draft"), new ResolveTask({ decision: "approve" }))
      expect(done.status).toBe("completed")
    }))

  test("a run is the app's and the workspace's: another workspace's user does not find it", () =>
    Effect.gen(function*() {
      const owner = yield* partnerUser()
      const { app, template } = yield* installedApp(owner.workspace.id)
      const workflows = yield* Workflows
      const { run } = yield* workflows.createRun(owner.principal, app, soloRun(owner, template))
      const elsewhere = yield* partnerUser()
      yield* (yield* PartnerApps).connectWorkspace(app.id, elsewhere.workspace.id)
      expect(yield* Effect.flip(workflows.getRun(elsewhere.principal, app.id, run.id))).toMatchObject({ _tag: "NotFound" })
      expect(yield* Effect.flip(workflows.resolveTask(elsewhere.principal, app.id, run.id, taskOf(run, "draft"), new ResolveTask({ decision: "approve" }))))
        .toMatchObject({ _tag: "NotFound" })
      expect((yield* workflows.listRuns(elsewhere.principal, app.id, {})).total).toBe(0)
    }))
})
