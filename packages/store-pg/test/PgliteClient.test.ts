import { SqlClient, SqlError } from "@effect/sql"
import { assert, describe, expect, it, layer } from "@effect/vitest"
import { Cause, Chunk, Context, Deferred, Effect, Exit, Fiber, Layer, Option, Stream, TestServices } from "effect"
import { randomUUID } from "node:crypto"
import { PgliteClient } from "../src/index.js"
import { pgliteDataDir } from "./fixtures.js"

const client = Layer.unwrapScoped(Effect.map(pgliteDataDir, (dataDir) => PgliteClient.layer({ dataDir })))

/** Real time passing (the tests run under the TestClock), for PGlite's work to happen meanwhile. */
const pause = (millis: number) => TestServices.provideLive(Effect.sleep(millis))

class Boom {
  readonly _tag = "Boom"
}

/** A table of its own for each test, so that the tests can share one database. */
const freshTable = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const name = `t_${randomUUID().replaceAll("-", "")}`
  yield* sql`CREATE TABLE ${sql(name)} (id integer PRIMARY KEY, label text NOT NULL)`
  return name
})

const labels = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ label: string }>`SELECT label FROM ${sql(table)} ORDER BY id`,
      (rows) => rows.map((row) => row.label)
    ))

layer(client, { timeout: "60 seconds" })("PgliteClient", (it) => {
  it.effect("binds parameters and reads PostgreSQL types back", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const at = new Date("2026-03-02T09:15:30.123Z")
      const [row] = yield* sql`
        SELECT ${"O'Brien ✓"}::text AS text, ${42}::int AS int, ${null}::text AS nothing, ${true}::boolean AS yes,
          ${at}::timestamptz AS at, ${"2.50"}::numeric AS num, ${["a", "b,c", "d\"e"]}::text[] AS list,
          ${JSON.stringify({ a: [1, 2] })}::jsonb AS doc, ${"6a1f3c1e-0b6e-4a53-9d1e-1c5d8f0a0001"}::uuid AS id`
      expect(row).toEqual({
        text: "O'Brien ✓",
        int: 42,
        nothing: null,
        yes: true,
        at,
        num: "2.50",
        list: ["a", "b,c", "d\"e"],
        doc: { a: [1, 2] },
        id: "6a1f3c1e-0b6e-4a53-9d1e-1c5d8f0a0001"
      })
    }))

  it.effect("inserts with the helpers, reads values, raw results and streams", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const table = yield* freshTable
      yield* sql`INSERT INTO ${sql(table)} ${sql.insert([{ id: 1, label: "one" }, { id: 2, label: "two" }])}`
      yield* sql`UPDATE ${sql(table)} SET ${sql.update({ label: "TWO" })} WHERE id = ${2}`
      expect(yield* sql`SELECT id, label FROM ${sql(table)} ORDER BY id`.values).toEqual([[1, "one"], [2, "TWO"]])
      expect(yield* sql`SELECT id FROM ${sql(table)} WHERE ${sql.in("id", [2, 3])}`).toEqual([{ id: 2 }])
      const raw = (yield* sql`DELETE FROM ${sql(table)} WHERE id = ${1}`.raw) as { affectedRows: number }
      expect(raw.affectedRows).toBe(1)
      const streamed = yield* Stream.runCollect(sql<{ label: string }>`SELECT label FROM ${sql(table)}`.stream)
      expect(Chunk.toReadonlyArray(streamed)).toEqual([{ label: "TWO" }])
    }))

  it.effect("runs several statements without parameters in one unprepared call", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const table = yield* freshTable
      const results = yield* sql.unsafe(
        `INSERT INTO ${table} VALUES (1, 'a'); INSERT INTO ${table} VALUES (2, 'b'); SELECT count(*)::int AS n FROM ${table}`
      ).unprepared
      expect(results.at(-1)).toEqual([{ n: 2 }])
      expect(yield* sql.unsafe(`SELECT 1 AS one`).unprepared).toEqual([{ one: 1 }])
    }))

  it.effect("a failed statement is a SqlError carrying PostgreSQL's error, and the session stays usable", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const table = yield* freshTable
      yield* sql`INSERT INTO ${sql(table)} VALUES (1, 'a')`
      const error = yield* Effect.flip(sql`INSERT INTO ${sql(table)} VALUES (1, 'again')`)
      assert(error instanceof SqlError.SqlError)
      expect(error.cause).toMatchObject({ code: "23505", constraint: `${table}_pkey` })
      expect(yield* labels(table)).toEqual(["a"])
    }))

  it.effect("a transaction commits, or rolls back on failure and on defects", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const table = yield* freshTable
      yield* sql.withTransaction(sql`INSERT INTO ${sql(table)} VALUES (1, 'kept')`)
      const failed = yield* Effect.exit(sql.withTransaction(
        Effect.zipRight(sql`INSERT INTO ${sql(table)} VALUES (2, 'failed')`, Effect.fail(new Boom()))
      ))
      expect(Exit.isFailure(failed) && Cause.failureOption(failed.cause)).toEqual(Option.some(new Boom()))
      const died = yield* Effect.exit(sql.withTransaction(
        Effect.zipRight(sql`INSERT INTO ${sql(table)} VALUES (3, 'died')`, Effect.die("crash"))
      ))
      expect(Exit.isFailure(died)).toBe(true)
      const broken = yield* Effect.exit(sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO ${sql(table)} VALUES (4, 'broken')`
        yield* sql`INSERT INTO ${sql(table)} VALUES (1, 'duplicate')`
      })))
      expect(Exit.isFailure(broken)).toBe(true)
      expect(yield* labels(table)).toEqual(["kept"])
    }))

  it.effect("nested transactions are savepoints: an inner failure undoes only the inner part", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const table = yield* freshTable
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO ${sql(table)} VALUES (1, 'outer')`
        yield* Effect.exit(sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO ${sql(table)} VALUES (2, 'inner, undone')`
          // A failed statement aborts the savepoint, not the outer transaction.
          yield* sql`INSERT INTO ${sql(table)} VALUES (1, 'duplicate')`
        })))
        yield* sql.withTransaction(sql`INSERT INTO ${sql(table)} VALUES (3, 'inner, kept')`)
        yield* sql.withTransaction(sql.withTransaction(sql`INSERT INTO ${sql(table)} VALUES (4, 'deeper')`))
      }))
      expect(yield* labels(table)).toEqual(["outer", "inner, kept", "deeper"])

      yield* Effect.exit(sql.withTransaction(Effect.gen(function*() {
        yield* sql.withTransaction(sql`INSERT INTO ${sql(table)} VALUES (5, 'inner of a failed outer')`)
        return yield* Effect.fail(new Boom())
      })))
      expect(yield* labels(table)).toEqual(["outer", "inner, kept", "deeper"])
    }))

  it.effect("a statement from another fiber waits until the open transaction ends", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const table = yield* freshTable
      const inserted = yield* Deferred.make<void>()
      const finish = yield* Deferred.make<void>()
      const transaction = yield* Effect.fork(sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO ${sql(table)} VALUES (1, 'in the transaction')`
        yield* Deferred.succeed(inserted, undefined)
        yield* Deferred.await(finish)
        yield* sql`INSERT INTO ${sql(table)} VALUES (2, 'still in it')`
      })))
      yield* Deferred.await(inserted)
      const reader = yield* Effect.fork(labels(table))
      const writer = yield* Effect.fork(sql`INSERT INTO ${sql(table)} VALUES (3, 'outside')`)
      yield* pause(50)
      // Both wait for the permit the transaction holds (PGlite has one session).
      expect(Option.isNone(yield* Fiber.poll(reader))).toBe(true)
      expect(Option.isNone(yield* Fiber.poll(writer))).toBe(true)
      yield* Deferred.succeed(finish, undefined)
      yield* Fiber.join(transaction)
      yield* Fiber.join(writer)
      // The reader saw the transaction whole (it ran after the commit; the writer may have gone first).
      expect((yield* Fiber.join(reader)).slice(0, 2)).toEqual(["in the transaction", "still in it"])
      expect(yield* labels(table)).toEqual(["in the transaction", "still in it", "outside"])
    }))

  it.effect("many concurrent statements and transactions are serialised without losing writes", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const table = yield* freshTable
      yield* Effect.all(
        Array.from({ length: 60 }, (_, i) =>
          i % 3 === 0
            ? sql`INSERT INTO ${sql(table)} VALUES (${i}, ${`plain ${i}`})`
            : Effect.exit(sql.withTransaction(Effect.gen(function*() {
              yield* sql`INSERT INTO ${sql(table)} VALUES (${i}, ${`unit ${i}`})`
              yield* Effect.yieldNow()
              if (i % 3 === 2) return yield* Effect.fail(new Boom())
            })))),
        { concurrency: "unbounded" }
      )
      const [{ n }] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(table)}`
      expect(n).toBe(40)
    }))

  it.effect("interrupting a fiber that waits for the session leaves the client usable", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const table = yield* freshTable
      const finish = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(sql.withTransaction(Effect.zipRight(
        sql`INSERT INTO ${sql(table)} VALUES (1, 'held')`,
        Deferred.await(finish)
      )))
      yield* pause(20)
      const waiter = yield* Effect.fork(sql`INSERT INTO ${sql(table)} VALUES (2, 'never')`)
      yield* pause(20)
      yield* Fiber.interrupt(waiter)
      yield* Deferred.succeed(finish, undefined)
      yield* Fiber.join(holder)
      expect(yield* labels(table)).toEqual(["held"])
    }))
})

describe("PgliteClient data directory", () => {
  it.live("a second client on the same directory fails at start with a clear message until the first closes", () =>
    Effect.gen(function*() {
      const dataDir = yield* pgliteDataDir
      const first = yield* Effect.scoped(Effect.gen(function*() {
        const sql = Context.get(yield* Layer.build(PgliteClient.layer({ dataDir })), SqlClient.SqlClient)
        yield* sql`CREATE TABLE survives (note text)`
        yield* sql`INSERT INTO survives VALUES ('written by the first client')`
        const second = yield* Effect.flip(Effect.scoped(Layer.build(PgliteClient.layer({ dataDir }))))
        return second
      }))
      expect(first._tag).toBe("DataDirectoryLocked")
      expect(first.message).toContain(dataDir)
      expect(first.message).toContain(`process ${process.pid}`)

      // Closed, the directory opens again, with the data.
      const notes = yield* Effect.scoped(Effect.gen(function*() {
        const sql = Context.get(yield* Layer.build(PgliteClient.layer({ dataDir })), SqlClient.SqlClient)
        return yield* sql<{ note: string }>`SELECT note FROM survives`
      }))
      expect(notes).toEqual([{ note: "written by the first client" }])
    }).pipe(Effect.scoped), 60_000)
})
