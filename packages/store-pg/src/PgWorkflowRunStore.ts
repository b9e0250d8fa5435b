/**
 * WorkflowRunStore on PostgreSQL (migration 0021): `workflow_runs` (the template as it was at creation, the role
 * mappings, the steps and the failure as jsonb, read back as text and decoded with the records' schemas) and
 * `workflow_tasks` (at most one per run and step: a second one breaks the unique constraint, a defect). A run is held
 * for its unit of work with SELECT ... FOR UPDATE.
 */
import {
  ManifestWorkflowTemplate,
  RoleMappings,
  RunFailure,
  WorkflowRun,
  WorkflowRunStep,
  WorkflowRunStore,
  WorkflowTask
} from "@convene/core"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { type Context, Effect, Layer, Schema } from "effect"
import { orDie, page, recordTable, rowOf } from "./internal/sql.js"

const RunRecord = rowOf(WorkflowRun, {
  template: Schema.parseJson(ManifestWorkflowTemplate),
  role_mappings: Schema.parseJson(RoleMappings),
  steps: Schema.parseJson(Schema.Array(WorkflowRunStep)),
  failure: Schema.NullOr(Schema.parseJson(RunFailure))
})
const TaskRecord = rowOf(WorkflowTask, {})

/** The drivers parse jsonb; the JSON columns are read as text, which the records' `parseJson` schemas decode. */
const runColumns = "id, partner_app_id, workspace_id, toolkit_id, template_id, template::text AS template, status, " +
  "role_mappings::text AS role_mappings, steps::text AS steps, failure::text AS failure, created_by_user_id, " +
  "created_at, updated_at"

export const make: Effect.Effect<Context.Tag.Service<typeof WorkflowRunStore>, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const runs = recordTable(sql, { table: "workflow_runs", row: RunRecord, key: ["id"], columns: runColumns })
  const tasks = recordTable(sql, { table: "workflow_tasks", row: TaskRecord, key: ["id"] })

  const getRunForUpdate = SqlSchema.findOne({
    Request: Schema.String,
    Result: RunRecord,
    execute: (id) => sql`SELECT ${sql.literal(runColumns)} FROM workflow_runs WHERE id = ${id} FOR UPDATE`
  })
  const tasksOf = SqlSchema.findAll({
    Request: Schema.String,
    Result: TaskRecord,
    execute: (runId) => sql`SELECT * FROM workflow_tasks WHERE run_id = ${runId} ORDER BY created_at, id`
  })

  return WorkflowRunStore.of({
    insertRun: runs.insert,
    updateRun: runs.update,
    getRun: (appId, workspaceId, id) => runs.find({ id, partner_app_id: appId, workspace_id: workspaceId }),
    getRunForUpdate: (id) => orDie(getRunForUpdate(id)),
    listRuns: (appId, workspaceId, request, status) =>
      orDie(page(sql, {
        row: RunRecord,
        columns: sql.literal(runColumns),
        from: status === undefined
          ? sql`FROM workflow_runs WHERE partner_app_id = ${appId} AND workspace_id = ${workspaceId}`
          : sql`FROM workflow_runs WHERE partner_app_id = ${appId} AND workspace_id = ${workspaceId} AND status = ${status}`,
        order: sql`created_at DESC, id DESC`,
        page: request
      })),
    insertTask: tasks.insert,
    updateTask: tasks.update,
    getTask: (runId, id) => tasks.find({ id, run_id: runId }),
    tasksOf: (runId) => orDie(tasksOf(runId)),
    // The foreign keys cascade too; deleted here so that the workspace's row goes last, as on every store.
    deleteByWorkspace: (workspaceId) => orDie(sql`DELETE FROM workflow_runs WHERE workspace_id = ${workspaceId}`)
  })
})

export const layer: Layer.Layer<WorkflowRunStore, never, SqlClient.SqlClient> = Layer.effect(WorkflowRunStore, make)
