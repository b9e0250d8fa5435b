/**
 * EventLog on PostgreSQL: `events`, one row per event, its position taken from an identity column at insert.
 *
 * Positions must become visible in order within a workspace (a reader that saw position p must never later find
 * an event below p). Identity values are drawn at insert, but transactions commit in any order, so `append`
 * first takes a transaction-scoped advisory lock on the workspace: a second transaction appending to the same
 * workspace waits until the first has committed or rolled back, and so draws a higher position only after every
 * lower one of the workspace is visible. (The xmin rule of many outboxes, reading only events whose transaction
 * is older than every running one, is not enough with one-number positions: a transaction that took its id
 * early but appends late can still commit an event below one already read.) The lock is held from the append
 * to the end of the transaction; core records events last in a unit of work, so that is short. The lock and the
 * insert are one statement: the row to insert is selected from the lock's result, so its position is drawn only
 * once the lock is held.
 */
import { DomainEvent, EventLog, LoggedEvent, trusted } from "@convene/core"
import * as SqlClient from "@effect/sql/SqlClient"
import type * as SqlError from "@effect/sql/SqlError"
import { type Context, DateTime, Effect, Layer, Option, Schema } from "effect"
import { orDie, rowOf } from "./internal/sql.js"

/** An `events` row's event, decoded to (and encoded from) a `DomainEvent`. */
export const EventRecord = rowOf(DomainEvent, {})

/** A position (bigint), read as text. */
const Position = Schema.Struct({ position: Schema.NumberFromString })

const decodeLogged = (rows: ReadonlyArray<unknown>) =>
  Effect.forEach(rows, (row) =>
    Effect.gen(function*() {
      const { position } = yield* Schema.decodeUnknown(Position)(row)
      const event = yield* Schema.decodeUnknown(EventRecord)(row)
      return new LoggedEvent({ position, event }, trusted)
    }))

export const make: Effect.Effect<Context.Tag.Service<typeof EventLog>, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const encode = Schema.encode(EventRecord)

  /** The advisory lock space of event appends (the second key is the workspace's hash). */
  const lockSpace = 0x636e7665 // "cnve"

  const positionOf = (statement: Effect.Effect<ReadonlyArray<unknown>, SqlError.SqlError>) =>
    orDie(Effect.flatMap(statement, Schema.decodeUnknown(Schema.Array(Position)))).pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => row.position))
    )

  return EventLog.of({
    append: (event) =>
      Effect.gen(function*() {
        const row = yield* encode(event)
        yield* sql`
          WITH locked AS (SELECT pg_advisory_xact_lock(${lockSpace}, hashtext(${row.workspace_id})))
          INSERT INTO events (id, workspace_id, type, actor_user_id, occurred_at, data)
          SELECT ${row.id}::uuid, ${row.workspace_id}::uuid, ${row.type}, ${row.actor_user_id}::uuid,
            ${row.occurred_at}::timestamptz, ${JSON.stringify(row.data)}::jsonb
          FROM locked`
      }).pipe(orDie),

    after: (workspaceId, position, limit) =>
      orDie(Effect.flatMap(
        sql`
          SELECT position::text AS position, id, type, workspace_id, actor_user_id, occurred_at, data FROM events
          WHERE workspace_id = ${workspaceId} AND position > ${position}
          ORDER BY events.position -- the table's bigint, not the text column of the select list
          LIMIT ${Math.max(0, limit)}`,
        decodeLogged
      )),

    positionOf: (workspaceId, id) =>
      positionOf(sql`SELECT position::text AS position FROM events WHERE workspace_id = ${workspaceId} AND id = ${id}`),

    head: (workspaceId) =>
      positionOf(sql`
        SELECT coalesce(max(position), 0)::text AS position FROM events
        WHERE workspace_id = ${workspaceId}`).pipe(Effect.map(Option.getOrElse(() => 0))),

    purge: (before) =>
      orDie(sql`DELETE FROM events WHERE occurred_at < ${DateTime.toDateUtc(before)}`).pipe(Effect.asVoid),

    deleteByWorkspace: (workspaceId) =>
      orDie(sql`DELETE FROM events WHERE workspace_id = ${workspaceId}`).pipe(Effect.asVoid)
  })
})

export const layer: Layer.Layer<EventLog, never, SqlClient.SqlClient> = Layer.effect(EventLog, make)
