/**
 * WebhookStore on PostgreSQL: `webhook_endpoints`, `deliveries` and `delivery_attempts` (migration 0007).
 *
 * - Claims are one `UPDATE ... WHERE id IN (SELECT ... FOR UPDATE SKIP LOCKED) RETURNING *`: several server
 *   processes claim at once without waiting on each other, and a row locked by one claimer is skipped by the others
 *   (a row another claimer just committed is re-checked against the lease and left alone). On PGlite, one session,
 *   nothing runs concurrently anyway.
 * - The cap on active endpoints is counted and the insert made under a transaction-scoped advisory lock on the
 *   workspace, so two racing creates never pass it together.
 * - An endpoint is written only if its stored revision is the one before (compare-and-set); core retries.
 */
import {
  Delivery,
  DeliveryAttempt,
  type DeliveryRecord,
  WebhookEndpoint,
  WebhookStore
} from "@convene/core"
import * as SqlClient from "@effect/sql/SqlClient"
import type * as SqlError from "@effect/sql/SqlError"
import { type Context, DateTime, Effect, Layer, Option, Schema } from "effect"
import { orDie, page, recordTable, rowOf } from "./internal/sql.js"

/** A `webhook_endpoints` row, decoded to (and encoded from) a `WebhookEndpoint`. */
export const WebhookEndpointRecord = rowOf(WebhookEndpoint, {})

/** A `deliveries` row, decoded to (and encoded from) a `Delivery`. */
export const DeliveryRecordRow = rowOf(Delivery, {})

/** A `delivery_attempts` row, decoded to (and encoded from) a `DeliveryAttempt`. */
export const DeliveryAttemptRecord = rowOf(DeliveryAttempt, {})

const Count = Schema.Struct({ count: Schema.Int })

/** Whether PostgreSQL refused a statement for a reference to a row that is not there (SQLSTATE 23503). */
const isForeignKeyViolation = (error: SqlError.SqlError): boolean =>
  typeof error.cause === "object" && error.cause !== null && "code" in error.cause && error.cause.code === "23503"

/** The advisory lock space of endpoint inserts (the second key is the workspace's hash). */
const lockSpace = 0x636e7768 // "cnwh"

export const make: Effect.Effect<Context.Tag.Service<typeof WebhookStore>, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const date = DateTime.toDateUtc
  const endpoints = recordTable(sql, { table: "webhook_endpoints", row: WebhookEndpointRecord, key: ["id"] })
  const encodeEndpoint = Schema.encode(WebhookEndpointRecord)
  const encodeDelivery = Schema.encode(DeliveryRecordRow)
  const encodeAttempt = Schema.encode(DeliveryAttemptRecord)
  const decodeEndpoints = Schema.decodeUnknown(Schema.Array(WebhookEndpointRecord))
  const decodeDeliveries = Schema.decodeUnknown(Schema.Array(DeliveryRecordRow))
  const decodeAttempts = Schema.decodeUnknown(Schema.Array(DeliveryAttemptRecord))

  const endpointsOf = (statement: Effect.Effect<ReadonlyArray<unknown>, SqlError.SqlError>) =>
    orDie(Effect.flatMap(statement, decodeEndpoints))

  const countOf = (statement: Effect.Effect<ReadonlyArray<unknown>, SqlError.SqlError>) =>
    orDie(Effect.flatMap(statement, Schema.decodeUnknown(Schema.Array(Count)))).pipe(Effect.map((rows) => rows[0]?.count ?? 0))

  /** The deliveries with their attempts (oldest first), in the order given. */
  const withAttempts = (deliveries: ReadonlyArray<Delivery>) =>
    Effect.gen(function*() {
      if (deliveries.length === 0) return []
      const attempts = yield* Effect.flatMap(
        sql`SELECT * FROM delivery_attempts WHERE delivery_id = ANY(${deliveries.map((d) => d.id)}::uuid[])
          ORDER BY delivery_id, number`,
        decodeAttempts
      )
      return deliveries.map((delivery): DeliveryRecord => ({
        delivery,
        attempts: attempts.filter((attempt) => attempt.delivery_id === delivery.id)
      }))
    })

  /** Active: neither deleted nor disabled (see the port). */
  const active = sql`deleted_at IS NULL AND verification_state <> 'disabled'`

  return WebhookStore.of({
    insertEndpoint: (endpoint, cap) =>
      orDie(sql.withTransaction(Effect.gen(function*() {
        const row = yield* encodeEndpoint(endpoint)
        yield* sql`SELECT pg_advisory_xact_lock(${lockSpace}, hashtext(${row.workspace_id}))`
        if (cap !== undefined) {
          const count = yield* countOf(sql`
            SELECT count(*)::int AS count FROM webhook_endpoints WHERE workspace_id = ${row.workspace_id} AND ${active}`)
          if (count >= cap) return false
        }
        yield* sql`INSERT INTO webhook_endpoints ${sql.insert(row)}`
        return true
      }))),

    getEndpoint: (workspaceId, id) => endpoints.find({ workspace_id: workspaceId, id }),

    updateEndpoint: (endpoint) =>
      orDie(Effect.gen(function*() {
        const row = yield* encodeEndpoint(endpoint)
        const rows = yield* sql`
          UPDATE webhook_endpoints SET ${sql.update(row, ["id"])}
          WHERE id = ${row.id} AND workspace_id = ${row.workspace_id} AND revision = ${row.revision - 1}
          RETURNING id`
        return rows.length > 0
      })),

    listEndpoints: (workspaceId, request) =>
      orDie(page(sql, {
        row: WebhookEndpointRecord,
        columns: sql`e.*`,
        from: sql`FROM webhook_endpoints e WHERE e.workspace_id = ${workspaceId} AND e.deleted_at IS NULL`,
        order: sql.literal("e.created_at DESC, e.id DESC"),
        page: request
      })),

    countActive: (workspaceId) =>
      countOf(sql`SELECT count(*)::int AS count FROM webhook_endpoints WHERE workspace_id = ${workspaceId} AND ${active}`),

    subscribers: (workspaceId, eventType) =>
      endpointsOf(sql`
        SELECT * FROM webhook_endpoints
        WHERE workspace_id = ${workspaceId} AND deleted_at IS NULL AND verification_state = 'verified'
          AND ${eventType}::text = ANY(subscribed_events)
        ORDER BY created_at, id`),

    claimChallenges: ({ leaseUntil, limit, now, sentBefore }) =>
      endpointsOf(sql`
        WITH claimed AS (
          UPDATE webhook_endpoints SET challenge_claimed_until = ${date(leaseUntil)}, revision = revision + 1
          WHERE id IN (
            SELECT id FROM webhook_endpoints
            WHERE verification_state = 'verifying' AND deleted_at IS NULL
              AND (challenge_claimed_until IS NULL OR challenge_claimed_until <= ${date(now)})
              AND (verification_last_sent_at IS NULL OR verification_last_sent_at <= ${date(sentBefore)}
                OR verification_retry_until <= ${date(now)})
            ORDER BY verification_last_sent_at NULLS FIRST, created_at, id
            LIMIT ${Math.max(0, limit)}
            FOR UPDATE SKIP LOCKED
          )
          RETURNING *
        )
        SELECT * FROM claimed ORDER BY verification_last_sent_at NULLS FIRST, created_at, id`),

    detachCreator: (userId) =>
      orDie(sql`UPDATE webhook_endpoints SET created_by = NULL, revision = revision + 1 WHERE created_by = ${userId}`).pipe(
        Effect.asVoid
      ),

    enqueue: (deliveries) =>
      deliveries.length === 0 ? Effect.void : orDie(Effect.gen(function*() {
        const rows = yield* Effect.forEach(deliveries, (delivery) => encodeDelivery(delivery))
        yield* sql`INSERT INTO deliveries ${sql.insert(rows)}`
      })),

    claimDue: ({ leaseUntil, limit, now }) =>
      orDie(Effect.flatMap(
        sql`
          WITH claimed AS (
            UPDATE deliveries SET claimed_until = ${date(leaseUntil)}
            WHERE id IN (
              SELECT id FROM deliveries
              WHERE state = 'pending' AND next_attempt_at <= ${date(now)}
                AND (claimed_until IS NULL OR claimed_until <= ${date(now)})
              ORDER BY next_attempt_at, id
              LIMIT ${Math.max(0, limit)}
              FOR UPDATE SKIP LOCKED
            )
            RETURNING *
          )
          SELECT * FROM claimed ORDER BY next_attempt_at, id`,
        decodeDeliveries
      )),

    // Both from the pending rows only, which the partial index deliveries_due_idx holds in order of due time.
    outbox: (now) =>
      orDie(Effect.map(
        sql<{ readonly pending: number; readonly oldest_due: Date | string | null }>`
          SELECT count(*)::integer AS pending,
            min(next_attempt_at) FILTER (WHERE next_attempt_at <= ${date(now)}) AS oldest_due
          FROM deliveries WHERE state = 'pending'`,
        ([row]) => ({
          pending: row?.pending ?? 0,
          oldestDue: Option.map(Option.fromNullable(row?.oldest_due), DateTime.unsafeMake)
        })
      )),

    // One statement (the worker's most frequent write): the attempt goes in and the delivery changes together. A
    // delivery deleted meanwhile (its workspace was) refuses the attempt's reference to it, and nothing is written.
    recordAttempt: (delivery, attempt) =>
      orDie(Effect.gen(function*() {
        const row = yield* encodeDelivery(delivery)
        if (Option.isNone(attempt)) {
          yield* sql`UPDATE deliveries SET ${sql.update(row, ["id"])} WHERE id = ${row.id}`
          return
        }
        yield* sql`
          WITH attempt AS (INSERT INTO delivery_attempts ${sql.insert(yield* encodeAttempt(attempt.value))})
          UPDATE deliveries SET ${sql.update(row, ["id"])} WHERE id = ${row.id}`.pipe(
          Effect.catchIf(isForeignKeyViolation, () => Effect.void)
        )
      })),

    getDelivery: (workspaceId, id) =>
      orDie(Effect.gen(function*() {
        const rows = yield* Effect.flatMap(
          sql`SELECT * FROM deliveries WHERE id = ${id} AND workspace_id = ${workspaceId}`,
          decodeDeliveries
        )
        const [found] = yield* withAttempts(rows)
        return Option.fromNullable(found)
      })),

    listDeliveries: (addressee, request) =>
      orDie(Effect.gen(function*() {
        const slice = yield* page(sql, {
          row: DeliveryRecordRow,
          columns: sql`d.*`,
          from: sql`FROM deliveries d WHERE d.addressee_kind = ${addressee.kind} AND d.addressee_id = ${addressee.id}`,
          order: sql.literal("d.created_at DESC, d.id DESC"),
          page: request
        })
        return { items: yield* withAttempts(slice.items), total: slice.total }
      })),

    // The attempts go with their deliveries (ON DELETE CASCADE).
    purgeDeliveries: (before) =>
      orDie(sql`DELETE FROM deliveries WHERE state <> 'pending' AND created_at < ${date(before)}`).pipe(Effect.asVoid),

    deleteByWorkspace: (workspaceId) =>
      orDie(sql`
        WITH gone AS (DELETE FROM deliveries WHERE workspace_id = ${workspaceId})
        DELETE FROM webhook_endpoints WHERE workspace_id = ${workspaceId}`).pipe(Effect.asVoid)
  })
})

export const layer: Layer.Layer<WebhookStore, never, SqlClient.SqlClient> = Layer.effect(WebhookStore, make)
