/**
 * PartnerStore on PostgreSQL: `partner_apps` (slug and client id each unique) and `partner_app_workspaces`, the
 * connections (migration 0013). A connection is made in one upsert that answers the instant kept, so of racing
 * connects of one pair exactly one inserts and every one answers the first `connected_at`.
 */
import { ConnectedWorkspace, PartnerApp, PartnerStore } from "@convene/core"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { type Context, DateTime, Effect, Layer, Schema } from "effect"
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

  return PartnerStore.of({
    insert: (app) => uniqueWrite(sql, insertApp(app)),
    update: apps.update,
    get: (id) => apps.find({ id }),
    getByClientId: (clientId) => apps.find({ client_id: clientId }),
    getBySlug: (slug) => apps.find({ slug }),
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
    deleteByWorkspace: (workspaceId) =>
      orDie(sql`DELETE FROM partner_app_workspaces WHERE workspace_id = ${workspaceId}`).pipe(Effect.asVoid)
  })
})

export const layer: Layer.Layer<PartnerStore, never, SqlClient.SqlClient> = Layer.effect(PartnerStore, make)
