/**
 * DomainVerificationStore on PostgreSQL: `partner_domain_verifications`, one row per app and domain (migration 0017).
 * `put` is one upsert; `lockDomain` takes the domain's rows `FOR UPDATE` in app order (so two units of work deciding
 * about one domain queue up without deadlocking, and the second reads what the first committed); a partial unique
 * index keeps a domain verified by at most one app, as core already ensures.
 */
import { DomainVerification, DomainVerificationStore } from "@convene/core"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { type Context, DateTime, Effect, Layer, Option, Schema } from "effect"
import { DbTimestampOrNull, orDie, rowOf } from "./internal/sql.js"

/**
 * A `partner_domain_verifications` row, decoded to (and encoded from) a `DomainVerification` (`proof_missing_since`, a
 * field with a default, named as the column it is).
 */
export const DomainVerificationRecord = rowOf(DomainVerification, { proof_missing_since: DbTimestampOrNull })

const Key = Schema.Struct({ appId: Schema.String, domain: Schema.String })

export const make: Effect.Effect<Context.Tag.Service<typeof DomainVerificationStore>, never, SqlClient.SqlClient> = Effect
  .gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const put = SqlSchema.void({
      Request: DomainVerificationRecord,
      execute: (row) =>
        sql`INSERT INTO partner_domain_verifications ${sql.insert(row)}
            ON CONFLICT (partner_app_id, domain) DO UPDATE SET ${sql.update(row, ["partner_app_id", "domain"])}`
    })

    const get = SqlSchema.findOne({
      Request: Key,
      Result: DomainVerificationRecord,
      execute: ({ appId, domain }) =>
        sql`SELECT * FROM partner_domain_verifications WHERE partner_app_id = ${appId} AND domain = ${domain}`
    })

    const lockDomain = SqlSchema.findAll({
      Request: Schema.String,
      Result: DomainVerificationRecord,
      execute: (domain) =>
        sql`SELECT * FROM partner_domain_verifications WHERE domain = ${domain} ORDER BY partner_app_id FOR UPDATE`
    })

    const verifiedOwner = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ partner_app_id: DomainVerification.fields.partner_app_id }),
      execute: (domain) =>
        sql`SELECT partner_app_id FROM partner_domain_verifications WHERE domain = ${domain} AND status = 'verified'`
    })

    const due = SqlSchema.findAll({
      Request: Schema.Struct({ expiringBy: Schema.DateFromSelf, checkedBy: Schema.DateFromSelf, limit: Schema.Int }),
      Result: DomainVerificationRecord,
      execute: ({ checkedBy, expiringBy, limit }) =>
        sql`SELECT * FROM (
              (SELECT *, 0 AS sweep, expires_at AS waiting FROM partner_domain_verifications
                WHERE status = 'pending' AND expires_at <= ${expiringBy}
                ORDER BY expires_at, partner_app_id, domain LIMIT ${limit})
              UNION ALL
              (SELECT *, 1 AS sweep, last_checked_at AS waiting FROM partner_domain_verifications
                WHERE status = 'verified' AND (last_checked_at IS NULL OR last_checked_at <= ${checkedBy})
                ORDER BY last_checked_at NULLS FIRST, partner_app_id, domain LIMIT ${limit})
            ) due
            ORDER BY sweep, waiting NULLS FIRST, partner_app_id, domain LIMIT ${limit}`
    })

    return DomainVerificationStore.of({
      get: (appId, domain) => orDie(get({ appId, domain })),
      put: (verification) => orDie(put(verification)),
      verifiedOwner: (domain) =>
        orDie(verifiedOwner(domain)).pipe(Effect.map(Option.map((row) => row.partner_app_id))),
      lockDomain: (domain) => orDie(lockDomain(domain)),
      due: ({ checkedBy, expiringBy, limit }) =>
        orDie(due({ expiringBy: DateTime.toDateUtc(expiringBy), checkedBy: DateTime.toDateUtc(checkedBy), limit }))
    })
  })

export const layer: Layer.Layer<DomainVerificationStore, never, SqlClient.SqlClient> = Layer.effect(
  DomainVerificationStore,
  make
)
