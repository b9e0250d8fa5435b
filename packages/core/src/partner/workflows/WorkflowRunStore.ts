import { Context, type Effect, type Option } from "effect"
import type { WorkspaceId } from "../../shared/Ids.js"
import type { Page, Slice } from "../../shared/Pagination.js"
import type { PartnerAppId } from "../PartnerApp.js"
import type { RunStatus, WorkflowRun, WorkflowRunId, WorkflowTask, WorkflowTaskId } from "./WorkflowRun.js"

/**
 * Port: partner apps' workflow runs and their human tasks. Storage only: how a run moves from step to step is core's
 * state machine (Workflows); every move is one unit of work that reads the run with `getRunForUpdate`, so two moves
 * of one run never interleave. Writes join the caller's unit of work (Transactor).
 */
export class WorkflowRunStore extends Context.Tag("@convene/core/WorkflowRunStore")<WorkflowRunStore, {
  /** Stores a new run; its app and workspace exist. */
  readonly insertRun: (run: WorkflowRun) => Effect.Effect<void>
  /** Replaces the stored run with the same id (its steps, status, failure and updated_at). */
  readonly updateRun: (run: WorkflowRun) => Effect.Effect<void>
  /** The app's run with this id in the workspace (none for another app's or another workspace's). */
  readonly getRun: (appId: PartnerAppId, workspaceId: WorkspaceId, id: WorkflowRunId) => Effect.Effect<Option.Option<WorkflowRun>>
  /**
   * The run with this id, held for the caller's unit of work: a concurrent unit of work asking for it waits until
   * this one ends (PostgreSQL: SELECT ... FOR UPDATE).
   */
  readonly getRunForUpdate: (id: WorkflowRunId) => Effect.Effect<Option.Option<WorkflowRun>>
  /**
   * A page of the app's runs in the workspace, newest first (created_at desc, id desc), only those with `status`
   * when it is given; `total` counts them all.
   */
  readonly listRuns: (
    appId: PartnerAppId,
    workspaceId: WorkspaceId,
    page: Page,
    status?: RunStatus
  ) => Effect.Effect<Slice<WorkflowRun>>

  /** Stores a new task; at most one per run and step key (a second one for the same step is a defect). */
  readonly insertTask: (task: WorkflowTask) => Effect.Effect<void>
  /** Replaces the stored task with the same id. */
  readonly updateTask: (task: WorkflowTask) => Effect.Effect<void>
  /** The run's task with this id. */
  readonly getTask: (runId: WorkflowRunId, id: WorkflowTaskId) => Effect.Effect<Option.Option<WorkflowTask>>
  /** The run's tasks, oldest first (created_at, id). */
  readonly tasksOf: (runId: WorkflowRunId) => Effect.Effect<ReadonlyArray<WorkflowTask>>

  /** Deletes the workspace's runs and their tasks (core runs it before it deletes the workspace). */
  readonly deleteByWorkspace: (workspaceId: WorkspaceId) => Effect.Effect<void>
}>() {}
