/**
 * PGlite on a worker thread (`PgliteClient`, `thread: "worker"`, the default) against PGlite on the calling thread
 * (`thread: "inline"`): the same values and the same errors cross the thread; the main thread's event loop stays
 * free while a statement runs; a worker that dies fails the statements instead of hanging them; an idle worker
 * never keeps the process alive. The store contract suites run on the default (the worker) in store-pg.test.ts;
 * two of them run here on the inline client, to keep that path tested.
 */
import { DataDirectoryLock, layerPglite, PgliteClient } from "@convene/store-pg"
import { assert, describe, expect, it, layer } from "@effect/vitest"
import { Cause, Context, Deferred, Effect, Exit, Fiber, Layer, Scope } from "effect"
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import type { Worker } from "node:worker_threads"
import { pgliteDataDir, scratchDir } from "../packages/store-pg/test/fixtures.js"
import * as TransactorContract from "./contract/Transactor.js"
import * as WorkspaceStoreContract from "./contract/WorkspaceStore.js"

/**
 * @effect/sql's SqlClient, as store-pg's client provides it (the test package does not depend on @effect/sql itself:
 * the tag is rebuilt from its key, with the very service type the client's layer outputs).
 */
type SqlClient = Layer.Layer.Success<ReturnType<typeof PgliteClient.layer>>
const SqlClient = Context.GenericTag<SqlClient>("@effect/sql/SqlClient")
type SqlError = Layer.Layer.Error<ReturnType<typeof PgliteClient.layer>>

const isSqlError = (error: unknown): error is Extract<SqlError, { readonly _tag: "SqlError" }> =>
  typeof error === "object" && error !== null && (error as { _tag?: unknown })._tag === "SqlError"

class OnWorker extends Context.Tag("test/OnWorker")<OnWorker, SqlClient>() {}
class Inline extends Context.Tag("test/Inline")<Inline, SqlClient>() {}

const clientOn = (thread: "worker" | "inline") =>
  Layer.unwrapScoped(Effect.map(pgliteDataDir, (dataDir) => PgliteClient.layer({ dataDir, thread })))

const both = Layer.merge(
  Layer.effect(OnWorker, SqlClient).pipe(Layer.provide(clientOn("worker"))),
  Layer.effect(Inline, SqlClient).pipe(Layer.provide(clientOn("inline")))
)

/** Runs `f` on each client: [on the worker, inline]. */
const onBoth = <A, E>(f: (sql: SqlClient) => Effect.Effect<A, E>) =>
  Effect.all([Effect.flatMap(OnWorker, f), Effect.flatMap(Inline, f)])

/**
 * A statement PGlite works on for a while, answering one row: 2 million rows take about 0.6 s on a shared 2-core
 * machine, 0.2 s on a fast one.
 */
const slowStatement = (sql: SqlClient, rows: number) =>
  sql<{ total: string }>`SELECT sum(i)::text AS total FROM generate_series(1, ${rows}::int) AS i`

/** How many times a 10 ms interval timer fires while `effect` runs. */
const ticksDuring = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const counter = { ticks: 0 }
      const timer = setInterval(() => counter.ticks++, 10)
      return { counter, timer }
    }),
    ({ counter }) => Effect.map(effect, (value) => ({ value, ticks: counter.ticks })),
    ({ timer }) => Effect.sync(() => clearInterval(timer))
  )

// Without the test services: the tests count real time.
layer(both, { timeout: "120 seconds", excludeTestServices: true })("PgliteClient on a worker thread and inline", (it) => {
  it.effect("answers the same values for every column type the store uses", () =>
    Effect.gen(function*() {
      const at = new Date("2026-03-02T09:15:30.123Z")
      const bytes = new Uint8Array([0, 1, 2, 127, 128, 254, 255])
      const doc = { a: [1, 2.5, "x"], b: { c: null, d: true }, e: "ünïcode ✓" }
      const [worker, inline] = yield* onBoth((sql) =>
        Effect.gen(function*() {
          yield* sql`CREATE TABLE every_type (
            id uuid PRIMARY KEY, label text NOT NULL, n integer NOT NULL, big bigint NOT NULL, huge bigint NOT NULL,
            at timestamptz NOT NULL, sequence numeric NOT NULL, doc jsonb NOT NULL, data bytea NOT NULL,
            points text[] NOT NULL, scope text[], yes boolean NOT NULL, nothing text,
            seq bigint GENERATED ALWAYS AS IDENTITY
          )`
          yield* sql`INSERT INTO every_type ${
            sql.insert({
              id: "6a1f3c1e-0b6e-4a53-9d1e-1c5d8f0a0001",
              label: "O'Brien \"quoted\" ✓",
              n: -42,
              big: 1_700_000_000_123,
              huge: "9007199254740993",
              at,
              sequence: "1.50000000000000000001",
              doc: JSON.stringify(doc),
              data: bytes,
              points: ["a", "b,c", "d\"e", ""],
              scope: null,
              yes: true,
              nothing: null
            })
          }`
          const rows = yield* sql`SELECT * FROM every_type`
          const values = yield* sql`SELECT id, at, data, points FROM every_type`.values
          const raw = (yield* sql`UPDATE every_type SET n = n + 1`.raw) as { affectedRows?: number }
          const unprepared = yield* sql.unsafe(`SELECT 1 AS one; SELECT 'two'::text AS two, now() > '2000-01-01' AS later`)
            .unprepared
          const ids = yield* sql`SELECT ${["6a1f3c1e-0b6e-4a53-9d1e-1c5d8f0a0001"]}::uuid[] AS ids, ${bytes}::bytea AS echo`
          return { rows, values, affected: raw.affectedRows, unprepared, ids }
        })
      )
      expect(worker).toEqual(inline)
      expect(worker.rows).toEqual([{
        id: "6a1f3c1e-0b6e-4a53-9d1e-1c5d8f0a0001",
        label: "O'Brien \"quoted\" ✓",
        n: -42,
        big: 1_700_000_000_123,
        huge: 9007199254740993n,
        at,
        sequence: "1.50000000000000000001",
        doc,
        data: bytes,
        points: ["a", "b,c", "d\"e", ""],
        scope: null,
        yes: true,
        nothing: null,
        seq: 1
      }])
      const row = worker.rows[0]!
      assert(row.at instanceof Date)
      assert(row.data instanceof Uint8Array)
      expect(worker.values).toEqual([["6a1f3c1e-0b6e-4a53-9d1e-1c5d8f0a0001", at, bytes, ["a", "b,c", "d\"e", ""]]])
      expect(worker.affected).toBe(1)
      expect(worker.unprepared).toEqual([[{ one: 1 }], [{ two: "two", later: true }]])
      expect(worker.ids).toEqual([{ ids: ["6a1f3c1e-0b6e-4a53-9d1e-1c5d8f0a0001"], echo: bytes }])
    }))

  it.effect("PostgreSQL's errors cross with their fields: a unique violation is 23505 with its constraint", () =>
    Effect.gen(function*() {
      const [worker, inline] = yield* onBoth((sql) =>
        Effect.gen(function*() {
          yield* sql`CREATE TABLE unique_things (id integer PRIMARY KEY, name text NOT NULL CONSTRAINT unique_things_name UNIQUE)`
          yield* sql`INSERT INTO unique_things VALUES (1, 'one')`
          const error = yield* Effect.flip(sql`INSERT INTO unique_things VALUES (2, 'one')`)
          // The session is usable afterwards, in a transaction too.
          yield* sql.withTransaction(sql`INSERT INTO unique_things VALUES (3, 'three')`)
          const [{ n }] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM unique_things`
          expect(n).toBe(2)
          return error
        })
      )
      assert(isSqlError(worker))
      assert(worker.cause instanceof Error)
      expect(worker.cause).toMatchObject({
        code: "23505",
        constraint: "unique_things_name",
        table: "unique_things",
        schema: "public",
        severity: "ERROR",
        detail: "Key (name)=(one) already exists."
      })
      expect(worker.cause.message).toBe("duplicate key value violates unique constraint \"unique_things_name\"")
      // Every field PGlite's error has in this thread, the rebuilt one has: name, code, detail, file, line, query…
      assert(isSqlError(inline))
      assert(inline.cause instanceof Error)
      expect({ ...worker.cause }).toEqual({ ...inline.cause })
      expect(worker.cause.name).toBe(inline.cause.name)
    }))

  it.effect("a transaction has the session to itself: what others send meanwhile runs after its end, in order", () =>
    Effect.gen(function*() {
      const [worker, inline] = yield* onBoth((sql) =>
        Effect.gen(function*() {
          yield* sql`CREATE TABLE held (n integer NOT NULL)`
          const inside = yield* Deferred.make<void>()
          // A transaction that inserts, waits (holding the session) and then fails: its insert is rolled back.
          const rolledBack = yield* Effect.fork(Effect.exit(sql.withTransaction(Effect.gen(function*() {
            yield* sql`INSERT INTO held VALUES (1)`
            yield* Deferred.succeed(inside, undefined)
            yield* Effect.sleep("300 millis")
            return yield* Effect.fail("rolled back" as const)
          }))))
          yield* Deferred.await(inside)
          // Sent while the transaction holds the session: had they run inside it, the count would see its row (and
          // the later insert would be rolled back with it).
          const outside = yield* Effect.all([
            sql<{ n: number }>`SELECT count(*)::int AS n FROM held`,
            sql`INSERT INTO held VALUES (2)`,
            sql<{ n: number }>`SELECT count(*)::int AS n FROM held`
          ], { concurrency: "unbounded" })
          const exit = yield* Fiber.join(rolledBack)
          // A committed transaction next, and many statements at once around it.
          const [committed, many] = yield* Effect.all([
            sql.withTransaction(Effect.zipRight(sql`INSERT INTO held VALUES (3)`, sql<{ n: number }>`SELECT count(*)::int AS n FROM held`)),
            Effect.all(Array.from({ length: 20 }, (_, i) => sql<{ i: number }>`SELECT ${i}::int AS i`), { concurrency: "unbounded" })
          ], { concurrency: "unbounded" })
          const rows = yield* sql<{ n: number }>`SELECT n FROM held ORDER BY n`
          return { outside: [outside[0], outside[2]], failed: Exit.isFailure(exit), committed, many, rows }
        })
      )
      expect(worker).toEqual(inline)
      expect(worker.failed).toBe(true)
      expect(worker.outside).toEqual([[{ n: 0 }], [{ n: 1 }]])
      expect(worker.committed).toEqual([{ n: 2 }])
      expect(worker.many).toEqual(Array.from({ length: 20 }, (_, i) => [{ i }]))
      expect(worker.rows).toEqual([{ n: 2 }, { n: 3 }])
    }))

  it.effect("the main thread's event loop runs while a statement runs on the worker, not while one runs inline", () =>
    Effect.gen(function*() {
      const [worker, inline] = yield* onBoth((sql) => ticksDuring(slowStatement(sql, 2_000_000)))
      expect(worker.value).toEqual(inline.value)
      expect(worker.value).toEqual([{ total: "2000001000000" }])
      expect(worker.ticks).toBeGreaterThanOrEqual(5)
      expect(inline.ticks).toBeLessThanOrEqual(1)
    }))
})

/** The next worker thread this process starts. */
const nextWorker = Effect.async<Worker>((resume) => {
  const listener = (worker: Worker) => resume(Effect.succeed(worker))
  process.once("worker", listener)
  return Effect.sync(() => process.off("worker", listener))
})

describe("PgliteClient's worker thread", () => {
  const hung = () => "hung" as const

  it.scopedLive("if the worker dies, the pending statement and every later one fail with a SqlError", () =>
    Effect.gen(function*() {
      const dataDir = yield* pgliteDataDir
      const started = yield* Effect.fork(nextWorker)
      const scope = yield* Scope.make()
      const sql = Context.get(yield* Scope.extend(Layer.build(PgliteClient.layer({ dataDir })), scope), SqlClient)
      const worker = yield* Fiber.join(started)
      expect(yield* sql`SELECT 1 AS one`).toEqual([{ one: 1 }])

      const pending = yield* Effect.fork(slowStatement(sql, 5_000_000))
      yield* Effect.sleep("100 millis")
      yield* Effect.promise(() => worker.terminate())
      const error = yield* Effect.flip(Fiber.join(pending)).pipe(Effect.timeoutFail({ duration: "5 seconds", onTimeout: hung }))
      assert(isSqlError(error))
      expect((error.cause as Error).message).toMatch(/worker thread exited/)

      const later = yield* Effect.flip(sql`SELECT 1`).pipe(Effect.timeoutFail({ duration: "5 seconds", onTimeout: hung }))
      assert(isSqlError(later))
      // A transaction's BEGIN fails, and so does its ROLLBACK, which @effect/sql turns into a defect.
      const inTransaction = yield* Effect.exit(sql.withTransaction(sql`SELECT 1`)).pipe(
        Effect.timeoutFail({ duration: "5 seconds", onTimeout: hung })
      )
      assert(Exit.isFailure(inTransaction))
      assert(isSqlError(Cause.squash(inTransaction.cause)))

      // Closing the client still ends, and frees the directory.
      yield* Scope.close(scope, Exit.void).pipe(Effect.timeoutFail({ duration: "10 seconds", onTimeout: hung }))
      yield* Effect.scoped(DataDirectoryLock.acquire(dataDir))
    }), 120_000)

  it.scopedLive("PGlite failing to open the directory in the worker fails the client with a SqlError", () =>
    Effect.gen(function*() {
      const dataDir = Path.join(yield* scratchDir("pglite-broken"), "data")
      Fs.mkdirSync(dataDir)
      Fs.writeFileSync(Path.join(dataDir, "PG_VERSION"), "not a version\n")
      const error = yield* Effect.flip(Effect.scoped(Layer.build(PgliteClient.layer({ dataDir }))))
      assert(isSqlError(error))
      expect(error.message).toContain(dataDir)
      assert(error.cause instanceof Error)
      expect(error.cause.message).toMatch(/PGlite/)
      // The directory was freed.
      yield* Effect.scoped(DataDirectoryLock.acquire(dataDir))
    }), 120_000)

  it.scopedLive("an idle worker never keeps the process alive, and a pending statement is waited for", () =>
    Effect.gen(function*() {
      const dataDir = yield* pgliteDataDir
      // A client that is never closed, and a statement awaited at the top level with nothing else to keep the
      // process alive: the process prints the answer, then ends by itself. (From the package's directory, the
      // package resolves itself to its dist.)
      const script = `
        import { PgliteClient } from "@convene/store-pg"
        import { SqlClient } from "@effect/sql"
        import { Context, Effect, Layer, Scope } from "effect"
        const scope = Effect.runSync(Scope.make())
        const context = await Effect.runPromise(Scope.extend(Layer.build(PgliteClient.layer({ dataDir: ${JSON.stringify(dataDir)} })), scope))
        const sql = Context.get(context, SqlClient.SqlClient)
        const rows = await Effect.runPromise(sql\`SELECT count(*)::int AS n FROM generate_series(1, 300000)\`)
        console.log(JSON.stringify(rows))
      `
      const root = fileURLToPath(new URL("..", import.meta.url))
      const result = yield* Effect.async<{ readonly code: unknown; readonly stdout: string; readonly stderr: string }>(
        (resume) => {
          const child = execFile(
            process.execPath,
            ["--input-type=module", "-e", script],
            { cwd: Path.join(root, "packages", "store-pg"), timeout: 60_000 },
            (error, stdout, stderr) =>
              resume(Effect.succeed({ code: error === null ? 0 : error.killed ? "killed" : error.code, stdout, stderr }))
          )
          return Effect.sync(() => child.kill())
        }
      )
      expect({ ...result, stdout: result.stdout.trim() }).toEqual({ code: 0, stdout: "[{\"n\":300000}]", stderr: "" })
    }), 120_000)
})

// Part of the store contract on the inline client (store-pg.test.ts runs all of it on the default, the worker).
const inlineStore = Layer.unwrapScoped(Effect.map(pgliteDataDir, (dataDir) => layerPglite({ dataDir, thread: "inline" })))
WorkspaceStoreContract.suite("PGlite inline", inlineStore)
TransactorContract.suite("PGlite inline", inlineStore)
