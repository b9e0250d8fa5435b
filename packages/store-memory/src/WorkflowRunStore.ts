/** WorkflowRunStore in memory: partner apps' workflow runs (steps embedded) and their human tasks, in the one state value. */
import { Pagination, type WorkflowTask, WorkflowRunStore } from "@convene/core"
import { Effect, HashMap, Layer, Option } from "effect"
import { Memory, newestFirst, oldestFirst } from "./Memory.js"

const sameStep = (task: WorkflowTask) => (other: WorkflowTask) =>
  other.run_id === task.run_id && other.step_key === task.step_key && other.id !== task.id

export const layer: Layer.Layer<WorkflowRunStore, never, Memory> = Layer.effect(
  WorkflowRunStore,
  Effect.gen(function*() {
    const memory = yield* Memory

    return WorkflowRunStore.of({
      insertRun: (run) =>
        memory.modify((state) => [undefined, { ...state, workflowRuns: HashMap.set(state.workflowRuns, run.id, run) }]),

      updateRun: (run) =>
        memory.modify((state) =>
          HashMap.has(state.workflowRuns, run.id)
            ? [undefined, { ...state, workflowRuns: HashMap.set(state.workflowRuns, run.id, run) }]
            : [undefined, state]
        ),

      getRun: Effect.fnUntraced(function*(appId, workspaceId, id) {
        return HashMap.get((yield* memory.read).workflowRuns, id).pipe(
          Option.filter((run) => run.partner_app_id === appId && run.workspace_id === workspaceId)
        )
      }),

      // Units of work run one at a time on the store's one permit: holding is reading.
      getRunForUpdate: Effect.fnUntraced(function*(id) {
        return HashMap.get((yield* memory.read).workflowRuns, id)
      }),

      listRuns: Effect.fnUntraced(function*(appId, workspaceId, page, status) {
        const rows = HashMap.toValues((yield* memory.read).workflowRuns).filter((run) =>
          run.partner_app_id === appId && run.workspace_id === workspaceId && (status === undefined || run.status === status)
        )
        return Pagination.sliceOf(rows.sort(newestFirst), page)
      }),

      // A second task for the same run and step is a defect, as PostgreSQL's unique constraint makes it.
      insertTask: (task) =>
        memory.modify((state) =>
          HashMap.some(state.workflowTasks, sameStep(task))
            ? [false, state]
            : [true, { ...state, workflowTasks: HashMap.set(state.workflowTasks, task.id, task) }]
        ).pipe(Effect.flatMap((inserted) =>
          inserted ? Effect.void : Effect.dieMessage(`workflow run ${task.run_id} has a task for step "${task.step_key}" already`)
        )),

      updateTask: (task) =>
        memory.modify((state) =>
          HashMap.has(state.workflowTasks, task.id)
            ? [undefined, { ...state, workflowTasks: HashMap.set(state.workflowTasks, task.id, task) }]
            : [undefined, state]
        ),

      getTask: Effect.fnUntraced(function*(runId, id) {
        return HashMap.get((yield* memory.read).workflowTasks, id).pipe(Option.filter((task) => task.run_id === runId))
      }),

      tasksOf: Effect.fnUntraced(function*(runId) {
        return HashMap.toValues((yield* memory.read).workflowTasks).filter((task) => task.run_id === runId).sort(oldestFirst)
      }),

      deleteByWorkspace: (workspaceId) =>
        memory.modify((state) => {
          const gone = new Set<string>(HashMap.keys(HashMap.filter(state.workflowRuns, (run) => run.workspace_id === workspaceId)))
          return [undefined, {
            ...state,
            workflowRuns: HashMap.filter(state.workflowRuns, (run) => !gone.has(run.id)),
            workflowTasks: HashMap.filter(state.workflowTasks, (task) => !gone.has(task.run_id))
          }]
        })
    })
  })
)
