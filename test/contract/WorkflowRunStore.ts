import {
  Contents,
  ManifestWorkflowStep,
  ManifestWorkflowTemplate,
  type PartnerAppId,
  PartnerStore,
  RunFailure,
  type StorePorts,
  ToolkitId,
  Transactor,
  UserId,
  WorkflowRun,
  WorkflowRunId,
  WorkflowRunStep,
  WorkflowRunStore,
  WorkflowTask,
  WorkflowTaskId,
  WorkflowTemplateId,
  WorkspaceContents,
  type WorkspaceId,
  WorkspaceStore
} from "@convene/core"
import { addEqualityTesters, expect, layer } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber, type Layer, Option } from "effect"
import { minutes, rolledBack, seedWorkspace, uuid } from "./fixtures.js"
import { partnerApp } from "./PartnerStore.js"

/** A template with two roles and a task, an approval and a webhook step (`description` left out when null). */
const template = (description: string | null = "Closes a deal") =>
  new ManifestWorkflowTemplate({
    key: "deal",
    name: "Deal",
    ...(description === null ? {} : { description }),
    roles: ["owner", "reviewer"],
    steps: [
      new ManifestWorkflowStep({ key: "prepare", type: "task", title: "Prepare", role: "owner" }),
      new ManifestWorkflowStep({ key: "sign-off", type: "approval", title: "Sign off", role: "reviewer" }),
      new ManifestWorkflowStep({ key: "notify", type: "webhook", title: "Notify", url: "https://hooks.example.com/deal" })
    ]
  })

const userId = () => UserId.make(uuid())

/** A run of `template()` in `workspaceId`: its first step done, the second awaiting review, the third pending. */
const run = (appId: PartnerAppId, workspaceId: WorkspaceId, fields: Partial<WorkflowRun> = {}): WorkflowRun => {
  const owner = userId()
  const reviewer = userId()
  return new WorkflowRun({
    id: WorkflowRunId.make(uuid()),
    partner_app_id: appId,
    workspace_id: workspaceId,
    toolkit_id: ToolkitId.make(uuid()),
    template_id: WorkflowTemplateId.make(uuid()),
    template: template(),
    status: "awaiting_review",
    role_mappings: { owner, reviewer },
    steps: [
      new WorkflowRunStep({
        key: "prepare",
        type: "task",
        title: "Prepare",
        status: "completed",
        assignee_user_id: owner,
        task_id: WorkflowTaskId.make(uuid()),
        started_at: minutes(0),
        completed_at: minutes(1)
      }),
      new WorkflowRunStep({
        key: "sign-off",
        type: "approval",
        title: "Sign off",
        status: "awaiting_review",
        assignee_user_id: reviewer,
        task_id: WorkflowTaskId.make(uuid()),
        started_at: minutes(1),
        completed_at: null
      }),
      new WorkflowRunStep({
        key: "notify",
        type: "webhook",
        title: "Notify",
        status: "pending",
        assignee_user_id: null,
        task_id: null,
        started_at: null,
        completed_at: null
      })
    ],
    failure: null,
    created_by_user_id: owner,
    created_at: minutes(0),
    updated_at: minutes(1),
    ...fields
  })
}

const task = (of: WorkflowRun, fields: Partial<WorkflowTask> = {}): WorkflowTask =>
  new WorkflowTask({
    id: WorkflowTaskId.make(uuid()),
    run_id: of.id,
    step_key: "prepare",
    assignee_user_id: userId(),
    status: "open",
    comment: null,
    resolved_by_user_id: null,
    created_at: minutes(0),
    resolved_at: null,
    ...fields
  })

/** A new partner app and workspace. */
const seedScope = Effect.gen(function*() {
  const app = partnerApp()
  yield* (yield* PartnerStore).insert(app)
  const workspace = yield* seedWorkspace()
  return { appId: app.id, workspaceId: workspace.id }
})

/** A stored run in a new app and workspace. */
const seedRun = (fields: Partial<WorkflowRun> = {}) =>
  Effect.gen(function*() {
    const { appId, workspaceId } = yield* seedScope
    const row = run(appId, workspaceId, fields)
    yield* (yield* WorkflowRunStore).insertRun(row)
    return row
  })

const seedTask = (of: WorkflowRun, fields: Partial<WorkflowTask> = {}) =>
  Effect.gen(function*() {
    const row = task(of, fields)
    yield* (yield* WorkflowRunStore).insertTask(row)
    return row
  })

export const suite = (name: string, storeLayer: Layer.Layer<StorePorts, unknown>) => {
  addEqualityTesters()

  layer(storeLayer)(`WorkflowRunStore (${name})`, (it) => {
    it.effect("a run reads back whole (template, role mappings, steps, failure), only for its app and workspace", () =>
      Effect.gen(function*() {
        const store = yield* WorkflowRunStore
        const failed = yield* seedRun({
          status: "failed",
          failure: new RunFailure({ code: "step_delivery_failed", message: "the hook answered 500", step_key: "notify" })
        })
        expect(yield* store.getRun(failed.partner_app_id, failed.workspace_id, failed.id)).toEqual(Option.some(failed))
        const plain = yield* seedRun({
          template: template(null),
          role_mappings: {},
          failure: new RunFailure({ code: "step_not_sent", message: "not sent", step_key: null })
        })
        expect(yield* store.getRun(plain.partner_app_id, plain.workspace_id, plain.id)).toEqual(Option.some(plain))
        const other = yield* seedScope
        expect(yield* store.getRun(other.appId, failed.workspace_id, failed.id)).toEqual(Option.none())
        expect(yield* store.getRun(failed.partner_app_id, other.workspaceId, failed.id)).toEqual(Option.none())
        expect(yield* store.getRun(failed.partner_app_id, failed.workspace_id, WorkflowRunId.make(uuid()))).toEqual(Option.none())
      }))

    it.effect("updateRun replaces the run's status, steps, failure and updated_at", () =>
      Effect.gen(function*() {
        const store = yield* WorkflowRunStore
        const stored = yield* seedRun()
        const kept = yield* seedRun()
        const steps = stored.steps.map((step) =>
          new WorkflowRunStep({ ...step, status: step.type === "webhook" ? "failed" : "completed", completed_at: minutes(5) })
        )
        const changed = new WorkflowRun({
          ...stored,
          status: "failed",
          steps,
          failure: new RunFailure({ code: "step_delivery_failed", message: "refused", step_key: "notify" }),
          updated_at: minutes(5)
        })
        yield* store.updateRun(changed)
        expect(yield* store.getRun(stored.partner_app_id, stored.workspace_id, stored.id)).toEqual(Option.some(changed))
        const cleared = new WorkflowRun({ ...changed, status: "completed", failure: null, updated_at: minutes(6) })
        yield* store.updateRun(cleared)
        expect(yield* store.getRun(stored.partner_app_id, stored.workspace_id, stored.id)).toEqual(Option.some(cleared))
        expect(yield* store.getRun(kept.partner_app_id, kept.workspace_id, kept.id)).toEqual(Option.some(kept))
      }))

    it.effect("listRuns: the app's runs in the workspace, newest first (id desc on a tie), paged, filtered by status, with the total", () =>
      Effect.gen(function*() {
        const store = yield* WorkflowRunStore
        const { appId, workspaceId } = yield* seedScope
        const [tieLow, tieHigh] = [uuid(), uuid()].sort()
        const rows = [
          run(appId, workspaceId, { created_at: minutes(0), status: "completed" }),
          run(appId, workspaceId, { id: WorkflowRunId.make(tieLow!), created_at: minutes(1), status: "running" }),
          run(appId, workspaceId, { id: WorkflowRunId.make(tieHigh!), created_at: minutes(1), status: "completed" }),
          run(appId, workspaceId, { created_at: minutes(2), status: "awaiting_review" })
        ]
        for (const row of rows) yield* store.insertRun(row)
        const other = yield* seedScope
        yield* store.insertRun(run(other.appId, workspaceId, { created_at: minutes(3) }))
        yield* store.insertRun(run(appId, other.workspaceId, { created_at: minutes(3) }))
        const [oldest, low, high, newest] = rows as [WorkflowRun, WorkflowRun, WorkflowRun, WorkflowRun]

        expect(yield* store.listRuns(appId, workspaceId, { limit: 10, offset: 0 })).toEqual({
          items: [newest, high, low, oldest],
          total: 4
        })
        expect(yield* store.listRuns(appId, workspaceId, { limit: 2, offset: 0 })).toEqual({ items: [newest, high], total: 4 })
        expect(yield* store.listRuns(appId, workspaceId, { limit: 2, offset: 2 })).toEqual({ items: [low, oldest], total: 4 })
        expect(yield* store.listRuns(appId, workspaceId, { limit: 2, offset: 9 })).toEqual({ items: [], total: 4 })
        expect(yield* store.listRuns(appId, workspaceId, { limit: 1, offset: 0 }, "completed")).toEqual({
          items: [high],
          total: 2
        })
        expect(yield* store.listRuns(appId, workspaceId, { limit: 10, offset: 1 }, "completed")).toEqual({
          items: [oldest],
          total: 2
        })
        expect(yield* store.listRuns(appId, workspaceId, { limit: 10, offset: 0 }, "cancelled")).toEqual({ items: [], total: 0 })
      }))

    it.effect("tasks: insert, get (only under their run), update, and tasksOf oldest first (id on a tie)", () =>
      Effect.gen(function*() {
        const store = yield* WorkflowRunStore
        const owner = yield* seedRun()
        const [idLow, idHigh] = [uuid(), uuid()].sort()
        const later = yield* seedTask(owner, { step_key: "sign-off", created_at: minutes(2), id: WorkflowTaskId.make(idHigh!) })
        const tied = yield* seedTask(owner, { step_key: "prepare", created_at: minutes(2), id: WorkflowTaskId.make(idLow!) })
        const first = yield* seedTask(owner, { step_key: "notify", created_at: minutes(1) })
        const elsewhere = yield* seedRun()
        const foreign = yield* seedTask(elsewhere)
        expect(yield* store.getTask(owner.id, tied.id)).toEqual(Option.some(tied))
        expect(yield* store.getTask(elsewhere.id, tied.id)).toEqual(Option.none())
        expect(yield* store.getTask(owner.id, WorkflowTaskId.make(uuid()))).toEqual(Option.none())
        expect(yield* store.tasksOf(owner.id)).toEqual([first, tied, later])
        expect(yield* store.tasksOf(WorkflowRunId.make(uuid()))).toEqual([])

        const resolved = new WorkflowTask({
          ...later,
          status: "approved",
          comment: "Looks right",
          resolved_by_user_id: userId(),
          resolved_at: minutes(7)
        })
        yield* store.updateTask(resolved)
        expect(yield* store.getTask(owner.id, later.id)).toEqual(Option.some(resolved))
        expect(yield* store.tasksOf(elsewhere.id)).toEqual([foreign])
      }))

    it.effect("a second task for the same run and step is a defect and leaves the first; the same step of another run is fine", () =>
      Effect.gen(function*() {
        const store = yield* WorkflowRunStore
        const owner = yield* seedRun()
        const first = yield* seedTask(owner, { step_key: "sign-off" })
        const exit = yield* Effect.exit(store.insertTask(task(owner, { step_key: "sign-off", created_at: minutes(3) })))
        expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
        expect(yield* store.tasksOf(owner.id)).toEqual([first])
        const other = yield* seedRun()
        const same = yield* seedTask(other, { step_key: "sign-off" })
        expect(yield* store.tasksOf(other.id)).toEqual([same])
      }))

    it.effect("getRunForUpdate finds a run by id alone and holds it: a second unit of work asking for it waits and reads what the first committed", () =>
      Effect.gen(function*() {
        const store = yield* WorkflowRunStore
        const { withTransaction } = yield* Transactor
        const stored = yield* seedRun()
        expect(yield* store.getRunForUpdate(stored.id)).toEqual(Option.some(stored))
        expect(yield* store.getRunForUpdate(WorkflowRunId.make(uuid()))).toEqual(Option.none())

        const held = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const first = yield* Effect.fork(withTransaction(Effect.gen(function*() {
          const read = yield* store.getRunForUpdate(stored.id)
          yield* Deferred.succeed(held, undefined)
          yield* Deferred.await(release)
          yield* store.updateRun(new WorkflowRun({ ...Option.getOrThrow(read), status: "completed", updated_at: minutes(9) }))
        })))
        yield* Deferred.await(held)
        const second = yield* Effect.fork(withTransaction(
          Effect.map(store.getRunForUpdate(stored.id), Option.map((read) => read.status))
        ))
        // The second is now waiting (for the row, or for the store's one unit of work at a time).
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 150)))
        expect(second.unsafePoll()).toBeNull()
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(first)
        expect(yield* Fiber.join(second)).toEqual(Option.some("completed"))
      }))

    it.effect("writes join the unit of work: rolled-back run and task inserts, updates and a workspace's deletion leave nothing behind", () =>
      Effect.gen(function*() {
        const store = yield* WorkflowRunStore
        const stored = yield* seedRun()
        const storedTask = yield* seedTask(stored)
        const added = run(stored.partner_app_id, stored.workspace_id, { created_at: minutes(4) })
        const addedTask = task(stored, { step_key: "sign-off" })
        yield* rolledBack(Effect.gen(function*() {
          yield* store.insertRun(added)
          yield* store.updateRun(new WorkflowRun({ ...stored, status: "cancelled", updated_at: minutes(8) }))
          yield* store.insertTask(addedTask)
          yield* store.updateTask(new WorkflowTask({ ...storedTask, status: "cancelled" }))
          expect(yield* store.tasksOf(stored.id)).toHaveLength(2)
          yield* store.deleteByWorkspace(stored.workspace_id)
          expect(yield* store.getRunForUpdate(stored.id)).toEqual(Option.none())
        }))
        expect(yield* store.getRun(stored.partner_app_id, stored.workspace_id, added.id)).toEqual(Option.none())
        expect(yield* store.getRun(stored.partner_app_id, stored.workspace_id, stored.id)).toEqual(Option.some(stored))
        expect(yield* store.tasksOf(stored.id)).toEqual([storedTask])
      }))

    it.effect("deleteByWorkspace deletes the workspace's runs and their tasks, not another workspace's", () =>
      Effect.gen(function*() {
        const store = yield* WorkflowRunStore
        const gone = yield* seedRun()
        const goneTwo = run(gone.partner_app_id, gone.workspace_id, { created_at: minutes(2) })
        yield* store.insertRun(goneTwo)
        const goneTask = yield* seedTask(gone)
        yield* seedTask(goneTwo)
        const kept = yield* seedRun()
        const keptTask = yield* seedTask(kept)
        yield* store.deleteByWorkspace(gone.workspace_id)
        expect(yield* store.listRuns(gone.partner_app_id, gone.workspace_id, { limit: 10, offset: 0 })).toEqual({ items: [], total: 0 })
        expect(yield* store.getRunForUpdate(gone.id)).toEqual(Option.none())
        expect(yield* store.tasksOf(gone.id)).toEqual([])
        expect(yield* store.tasksOf(goneTwo.id)).toEqual([])
        expect(yield* store.getTask(gone.id, goneTask.id)).toEqual(Option.none())
        expect(yield* store.getRun(kept.partner_app_id, kept.workspace_id, kept.id)).toEqual(Option.some(kept))
        expect(yield* store.tasksOf(kept.id)).toEqual([keptTask])
      }))

    it.effect("deleting a workspace (its contents, then the workspace, in one unit of work) deletes its runs and their tasks", () =>
      Effect.gen(function*() {
        const store = yield* WorkflowRunStore
        const gone = yield* seedRun()
        yield* seedTask(gone)
        const kept = yield* seedRun()
        const keptTask = yield* seedTask(kept)
        const contents = yield* Effect.provide(WorkspaceContents, Contents.workspaceContents)
        const workspaces = yield* WorkspaceStore
        const deleted = yield* (yield* Transactor).withTransaction(
          Effect.zipRight(contents.deleteAll(gone.workspace_id), workspaces.delete(gone.workspace_id))
        )
        expect(deleted).toBe(true)
        expect(yield* store.getRunForUpdate(gone.id)).toEqual(Option.none())
        expect(yield* store.tasksOf(gone.id)).toEqual([])
        expect(yield* store.getRun(kept.partner_app_id, kept.workspace_id, kept.id)).toEqual(Option.some(kept))
        expect(yield* store.tasksOf(kept.id)).toEqual([keptTask])
      }))
  })
}
