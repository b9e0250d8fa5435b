/**
 * PartnerStore on PostgreSQL: `partner_apps` (slug and client id each unique; the sealed webhook secret of migration
 * 0014, which only setWebhookSecret writes) and `partner_app_workspaces`, the connections (migration 0013). A
 * connection is made in one upsert that answers the instant kept, so of racing connects of one pair exactly one
 * inserts and every one answers the first `connected_at`.
 */
import { ConnectedWorkspace, PartnerApp, PartnerStore, WorkspaceId } from "@convene/core"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { type Context, DateTime, Effect, Layer, Option, Schema } from "effect"
import { DbTimestamp, orDie, page, recordTable, rowOf, uniqueWrite } from "./internal/sql.js"

/** A `partner_apps` row, decoded to (and encoded from) a `PartnerApp`. */
export const PartnerAppRecord = rowOf(PartnerApp, {})

/** A connected workspace as the list's join reads it. */
export const ConnectedWorkspaceRow = rowOf(ConnectedWorkspace, {})

const ConnectedAt = Schema.Array(Schema.Struct({ connected_at: DbTimestamp }))

export const make: Effect.Effect<Context.Tag.Service<typeof PartnerStore>, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const apps = recordTable(sql, { table: "partner_apps", row: PartnerAppRecord, key: ["id"] })
  const insertApp = SqlSchema.void({
    Request: PartnerAppRecord,
    execute: (row) => sql`INSERT INTO partner_apps ${sql.insert(row)}`
  })
  // Every column but the key and the webhook secret, which only setWebhookSecret writes.
  const updateApp = SqlSchema.void({
    Request: PartnerAppRecord,
    execute: (row) => sql`UPDATE partner_apps SET ${sql.update(row, ["id", "sealed_webhook_secret"])} WHERE id = ${row.id}`
  })
  const connectedApps = SqlSchema.findAll({
    Request: WorkspaceId,
    Result: PartnerAppRecord,
    execute: (workspaceId) => sql`
      SELECT a.* FROM partner_app_workspaces c JOIN partner_apps a ON a.id = c.partner_app_id
      WHERE c.workspace_id = ${workspaceId}
      ORDER BY c.connected_at, c.partner_app_id`
  })

  return PartnerStore.of({
    insert: (app) => uniqueWrite(sql, insertApp(app)),
    update: (app) => orDie(updateApp(app)),
    setWebhookSecret: (id, sealed, at) =>
      orDie(sql<{ readonly id: string }>`UPDATE partner_apps SET sealed_webhook_secret = ${sealed}, updated_at = ${DateTime.toDateUtc(at)}
        WHERE id = ${id} RETURNING id`).pipe(Effect.map((rows) => rows.length > 0)),
    get: (id) => apps.find({ id }),
    getByClientId: (clientId) => apps.find({ client_id: clientId }),
    getBySlug: (slug) => apps.find({ slug }),
    getByClientIdFor: (clientId, workspaceId) =>
      orDie(Effect.gen(function*() {
        const rows = yield* sql<Record<string, unknown>>`SELECT a.*, EXISTS (SELECT 1 FROM partner_app_workspaces c
          WHERE c.partner_app_id = a.id AND c.workspace_id = ${workspaceId}) AS connected
          FROM partner_apps a WHERE a.client_id = ${clientId}`
        const row = rows[0]
        if (row === undefined) return Option.none()
        const app = yield* Schema.decodeUnknown(PartnerAppRecord)(row)
        return Option.some({ app, connected: row["connected"] === true })
      })),
    list: (request) =>
      orDie(page(sql, {
        row: PartnerAppRecord,
        columns: sql`a.*`,
        from: sql`FROM partner_apps a`,
        order: sql.literal("a.created_at DESC, a.id DESC"),
        page: request
      })),
    // The no-op update makes the conflicting row answer RETURNING with the instant it keeps.
    connect: ({ appId, at, workspaceId }) =>
      orDie(
        Effect.flatMap(
          sql`
            INSERT INTO partner_app_workspaces (partner_app_id, workspace_id, connected_at)
            VALUES (${appId}, ${workspaceId}, ${DateTime.toDateUtc(at)})
            ON CONFLICT (partner_app_id, workspace_id)
            DO UPDATE SET connected_at = partner_app_workspaces.connected_at
            RETURNING connected_at`,
          Schema.decodeUnknown(ConnectedAt)
        )
      ).pipe(Effect.map((rows) => rows[0]?.connected_at ?? at)),
    listWorkspaces: (appId, request) =>
      orDie(page(sql, {
        row: ConnectedWorkspaceRow,
        columns: sql`w.id, w.name, w.plan, c.connected_at`,
        from: sql`FROM partner_app_workspaces c JOIN workspaces w ON w.id = c.workspace_id WHERE c.partner_app_id = ${appId}`,
        order: sql.literal("c.connected_at DESC, c.workspace_id DESC"),
        page: request
      })),
    connectedApps: (workspaceId) => orDie(connectedApps(workspaceId)),
    deleteByWorkspace: (workspaceId) =>
      orDie(sql`DELETE FROM partner_app_workspaces WHERE workspace_id = ${workspaceId}`).pipe(Effect.asVoid)
  })
})

export const layer: Layer.Layer<PartnerStore, never, SqlClient.SqlClient> = Layer.effect(PartnerStore, make)
