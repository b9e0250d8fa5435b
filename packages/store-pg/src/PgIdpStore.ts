/**
 * IdpStore on PostgreSQL: `partner_idp_configs` (migration 0018), one row per app (the app's id is the key, so a
 * second insert for an app does nothing), the claim mappings as JSON text, the allowed domains as a text array that
 * a GIN index serves to `claimingApps`. `storeDiscovery` is one conditional UPDATE, so a background refresh never
 * overwrites a change made meanwhile by a PUT (of this process or another sharing the database).
 */
import { ClaimMappings, IdpConfig, IdpStore, PartnerAppId } from "@convene/core"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { type Context, DateTime, Effect, Layer, Schema } from "effect"
import { orDie, recordTable, rowOf } from "./internal/sql.js"

/** A `partner_idp_configs` row, decoded to (and encoded from) an `IdpConfig`. */
export const IdpConfigRecord = rowOf(IdpConfig, { claim_mappings: Schema.parseJson(ClaimMappings) })

const AppIds = Schema.Array(Schema.Struct({ partner_app_id: PartnerAppId }))

export const make: Effect.Effect<Context.Tag.Service<typeof IdpStore>, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const configs = recordTable(sql, { table: "partner_idp_configs", row: IdpConfigRecord, key: ["partner_app_id"] })
  const insertConfig = SqlSchema.findAll({
    Request: IdpConfigRecord,
    Result: Schema.Struct({ id: Schema.String }),
    execute: (row) => sql`INSERT INTO partner_idp_configs ${sql.insert(row)} ON CONFLICT (partner_app_id) DO NOTHING RETURNING id`
  })
  const updateConfig = SqlSchema.void({
    Request: IdpConfigRecord,
    execute: (row) =>
      sql`UPDATE partner_idp_configs SET ${sql.update(row, ["partner_app_id", "id"])}
          WHERE partner_app_id = ${row.partner_app_id} AND id = ${row.id}`
  })
  const stale = SqlSchema.findAll({
    Request: Schema.Struct({ before: Schema.DateTimeUtcFromDate, limit: Schema.Int }),
    Result: IdpConfigRecord,
    execute: ({ before, limit }) =>
      sql`SELECT * FROM partner_idp_configs WHERE is_active AND discovery_last_fetched_at < ${before}
          ORDER BY discovery_last_fetched_at, id LIMIT ${limit}`
  })

  const pageAfter = SqlSchema.findAll({
    Request: Schema.Struct({ after: Schema.NullOr(Schema.String), limit: Schema.Int }),
    Result: IdpConfigRecord,
    execute: ({ after, limit }) =>
      after === null
        ? sql`SELECT * FROM partner_idp_configs ORDER BY id LIMIT ${limit}`
        : sql`SELECT * FROM partner_idp_configs WHERE id > ${after} ORDER BY id LIMIT ${limit}`
  })

  return IdpStore.of({
    getByApp: (appId) => configs.find({ partner_app_id: appId }),
    getByAppForUpdate: (appId) =>
      orDie(Effect.flatMap(
        sql`SELECT * FROM partner_idp_configs WHERE partner_app_id = ${appId} FOR UPDATE`,
        (rows) => rows.length === 0 ? Effect.succeedNone : Effect.asSome(Schema.decodeUnknown(IdpConfigRecord)(rows[0]))
      )),
    insert: (config) => orDie(insertConfig(config)).pipe(Effect.map((rows) => rows.length > 0)),
    update: (config) => orDie(updateConfig(config)),
    deleteByApp: (appId) =>
      orDie(sql`DELETE FROM partner_idp_configs WHERE partner_app_id = ${appId} RETURNING id`).pipe(
        Effect.map((rows) => rows.length > 0)
      ),
    claimingApps: (domain, except) =>
      orDie(Effect.flatMap(
        sql`SELECT partner_app_id FROM partner_idp_configs
            WHERE allowed_email_domains @> ARRAY[${domain}]::text[] AND partner_app_id <> ${except}
            ORDER BY partner_app_id`,
        Schema.decodeUnknown(AppIds)
      )).pipe(Effect.map((rows) => rows.map((row) => row.partner_app_id))),
    staleDiscovery: (before, limit) => orDie(stale({ before, limit })),
    storeDiscovery: (id, discoveryUrl, endpoints, fetchedAt) =>
      orDie(sql`UPDATE partner_idp_configs SET
          issuer = ${endpoints.issuer},
          authorization_endpoint = ${endpoints.authorization_endpoint},
          token_endpoint = ${endpoints.token_endpoint},
          userinfo_endpoint = ${endpoints.userinfo_endpoint},
          jwks_uri = ${endpoints.jwks_uri},
          discovery_last_fetched_at = ${DateTime.toDateUtc(fetchedAt)}
        WHERE id = ${id} AND discovery_url = ${discoveryUrl} RETURNING id`).pipe(Effect.map((rows) => rows.length > 0)),
    page: (after, limit) => orDie(pageAfter({ after: after ?? null, limit })),
    replaceSealedSecret: (id, expected, sealed) =>
      orDie(sql`UPDATE partner_idp_configs SET sealed_client_secret = ${sealed}
        WHERE id = ${id} AND sealed_client_secret = ${expected} RETURNING id`).pipe(Effect.map((rows) => rows.length > 0))
  })
})

export const layer: Layer.Layer<IdpStore, never, SqlClient.SqlClient> = Layer.effect(IdpStore, make)
