/**
 * ToolkitStore on PostgreSQL (migration 0020): `partner_toolkits`, `partner_toolkit_versions` (the manifest as JSON
 * text), `partner_toolkit_installations` (one row per workspace and toolkit; the pending rows are the distribution's
 * queue, claimed with FOR UPDATE SKIP LOCKED so that two workers never take the same one) and
 * `workspace_toolkit_opt_outs` (a row per workspace that opted out of automatic updates).
 */
import { Manifest, Toolkit, ToolkitId, ToolkitInstallation, ToolkitStore, ToolkitVersion } from "@convene/core"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { type Context, Effect, Layer, Schema } from "effect"
import { orDie, page, recordTable, rowOf } from "./internal/sql.js"

const ToolkitRecord = rowOf(Toolkit, {})
const VersionRecord = rowOf(ToolkitVersion, { manifest: Schema.parseJson(Manifest) })
const InstallationRecord = rowOf(ToolkitInstallation, {})

export const make: Effect.Effect<Context.Tag.Service<typeof ToolkitStore>, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const toolkits = recordTable(sql, { table: "partner_toolkits", row: ToolkitRecord, key: ["id"] })
  const versions = recordTable(sql, { table: "partner_toolkit_versions", row: VersionRecord, key: ["id"] })

  const toolkitsOf = SqlSchema.findAll({
    Request: Schema.Struct({ appId: Schema.String, ids: Schema.NullOr(Schema.Array(ToolkitId)) }),
    Result: ToolkitRecord,
    execute: ({ appId, ids }) =>
      ids === null
        ? sql`SELECT * FROM partner_toolkits WHERE partner_app_id = ${appId} ORDER BY created_at, id`
        : sql`SELECT * FROM partner_toolkits WHERE partner_app_id = ${appId} AND id = ANY(${ids}::uuid[]) ORDER BY created_at, id`
  })
  const versionsOf = SqlSchema.findAll({
    Request: Schema.Array(Schema.String),
    Result: VersionRecord,
    execute: (ids) => sql`SELECT * FROM partner_toolkit_versions WHERE id = ANY(${ids}::uuid[])`
  })
  const putInstallation = SqlSchema.void({
    Request: InstallationRecord,
    execute: (row) =>
      sql`INSERT INTO partner_toolkit_installations ${sql.insert(row)}
          ON CONFLICT (workspace_id, toolkit_id) DO UPDATE SET ${sql.update(row, ["workspace_id", "toolkit_id"])}`
  })
  const installationsOf = SqlSchema.findAll({
    Request: Schema.String,
    Result: InstallationRecord,
    execute: (toolkitId) => sql`SELECT * FROM partner_toolkit_installations WHERE toolkit_id = ${toolkitId} ORDER BY workspace_id`
  })
  const installationsIn = SqlSchema.findAll({
    Request: Schema.String,
    Result: InstallationRecord,
    execute: (workspaceId) =>
      sql`SELECT * FROM partner_toolkit_installations WHERE workspace_id = ${workspaceId} ORDER BY toolkit_id`
  })
  const claimPending = SqlSchema.findAll({
    Request: Schema.Int,
    Result: InstallationRecord,
    execute: (limit) =>
      sql`SELECT * FROM partner_toolkit_installations WHERE status = 'pending'
          ORDER BY updated_at, workspace_id, toolkit_id LIMIT ${limit} FOR UPDATE SKIP LOCKED`
  })

  return ToolkitStore.of({
    insertToolkit: toolkits.insert,
    updateToolkit: toolkits.update,
    getToolkit: (appId, id) => toolkits.find({ id, partner_app_id: appId }),
    getToolkitForUpdate: (appId, id) =>
      orDie(Effect.flatMap(
        sql`SELECT * FROM partner_toolkits WHERE id = ${id} AND partner_app_id = ${appId} FOR UPDATE`,
        (rows) => rows.length === 0 ? Effect.succeedNone : Effect.asSome(Schema.decodeUnknown(ToolkitRecord)(rows[0]))
      )),
    listToolkits: (appId, request) =>
      orDie(page(sql, {
        row: ToolkitRecord,
        columns: sql`*`,
        from: sql`FROM partner_toolkits WHERE partner_app_id = ${appId}`,
        order: sql`created_at DESC, id DESC`,
        page: request
      })),
    toolkitsOf: (appId, ids) => orDie(toolkitsOf({ appId, ids: ids ?? null })),
    deleteToolkit: (id) => orDie(sql`DELETE FROM partner_toolkits WHERE id = ${id}`),
    insertVersion: versions.insert,
    updateVersion: versions.update,
    getVersion: (toolkitId, id) => versions.find({ id, toolkit_id: toolkitId }),
    versionsOf: (ids) => ids.length === 0 ? Effect.succeed([]) : orDie(versionsOf(ids)),
    listVersions: (toolkitId, request) =>
      orDie(page(sql, {
        row: VersionRecord,
        columns: sql`*`,
        from: sql`FROM partner_toolkit_versions WHERE toolkit_id = ${toolkitId}`,
        order: sql`number DESC`,
        page: request
      })),
    putInstallation: (installation) => orDie(putInstallation(installation)),
    installationsOf: (toolkitId) => orDie(installationsOf(toolkitId)),
    installationsIn: (workspaceId) => orDie(installationsIn(workspaceId)),
    claimPending: (limit) => orDie(claimPending(limit)),
    autoUpdates: (workspaceId) =>
      orDie(sql`SELECT 1 FROM workspace_toolkit_opt_outs WHERE workspace_id = ${workspaceId}`).pipe(
        Effect.map((rows) => rows.length === 0)
      ),
    setAutoUpdates: (workspaceId, enabled) =>
      orDie(
        enabled
          ? sql`DELETE FROM workspace_toolkit_opt_outs WHERE workspace_id = ${workspaceId}`
          : sql`INSERT INTO workspace_toolkit_opt_outs (workspace_id) VALUES (${workspaceId}) ON CONFLICT DO NOTHING`
      ),
    // The foreign keys cascade too; deleted here so that the workspace's row goes last, as on every store.
    deleteByWorkspace: (workspaceId) =>
      orDie(Effect.zipRight(
        sql`DELETE FROM partner_toolkit_installations WHERE workspace_id = ${workspaceId}`,
        sql`DELETE FROM workspace_toolkit_opt_outs WHERE workspace_id = ${workspaceId}`
      ))
  })
})

export const layer: Layer.Layer<ToolkitStore, never, SqlClient.SqlClient> = Layer.effect(ToolkitStore, make)
