/**
 * An @effect/sql `SqlClient` over PGlite: PostgreSQL compiled to WebAssembly, running in this process on a
 * data directory. No TCP listener is opened.
 *
 * PGlite is a single session: a statement outside a transaction runs alone, and a transaction has the session
 * from BEGIN to COMMIT or ROLLBACK (nested transactions are savepoints on the same connection), the other statements
 * waiting meanwhile. Code inside a transaction must never wait on another connection of this client
 * (`sql.reserve`, or a statement run without the transaction's context): it would wait for itself.
 *
 * PGlite runs its WebAssembly on the thread that calls it. By default (`thread: "worker"`) it runs on a worker
 * thread of its own (see `PgliteWorker`): each statement is a message to the worker and its rows a message back,
 * and the main thread's event loop stays free while PostgreSQL works. The worker orders the statements itself (a
 * transaction is a numbered session there), so the main thread sends each statement as soon as it has it and PGlite
 * goes from one to the next without waiting for the main thread. `thread: "inline"` runs it on the calling thread, as
 * embedders without threads may want, with the order kept by a `Semaphore(1)` that a statement holds while it runs
 * and a transaction from BEGIN to its end. Both answer the same values and the same errors; across the
 * thread an error is rebuilt as an `Error` with the PostgreSQL fields of PGlite's (`code`, `constraint`, `detail`…).
 * The worker never keeps the process alive while no statement is running, and if it dies, every statement
 * pending or to come fails with a `SqlError`.
 *
 * The data directory is locked for the client's lifetime (see `DataDirectoryLock`). SQL is compiled with
 * @effect/sql-pg's compiler, so statements, placeholders and helpers behave as with `PgClient`. Values come
 * back as PGlite parses them: timestamptz as `Date`, numeric as string, jsonb parsed, arrays as arrays.
 */
import type { Results } from "@electric-sql/pglite"
import { PGlite } from "@electric-sql/pglite"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlError from "@effect/sql/SqlError"
import type * as SqlConnection from "@effect/sql/SqlConnection"
import * as PgClient from "@effect/sql-pg/PgClient"
import { Effect, Layer, type Scope, Stream } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { Worker } from "node:worker_threads"
import * as DataDirectoryLock from "./DataDirectoryLock.js"
import type * as PgliteWorker from "./PgliteWorker.js"
import * as Reactivity from "@effect/experimental/Reactivity"

/** Where PGlite keeps its files, and on which thread it runs. */
export interface PgliteClientConfig {
  /** A relative path is resolved against the working directory. */
  readonly dataDir: string
  /**
   * `worker` (the default): PGlite runs on a worker thread of its own, and the event loop stays free while it works.
   * `inline`: on the calling thread.
   */
  readonly thread?: "worker" | "inline" | undefined
  /**
   * PostgreSQL's `shared_buffers` (its own page cache; the operating system caches the files as well): 16MB by default,
   * not PostgreSQL's 128MB, which PGlite keeps resident in the process once touched.
   */
  readonly sharedBuffers?: string | undefined
}

/**
 * How PGlite starts PostgreSQL for an embedded cluster: its own parameters, and a smaller page cache than a server's
 * (see `sharedBuffers`), given on the command line so that the cluster's postgresql.conf is left as it is.
 */
export const startParamsOf = (config: Pick<PgliteClientConfig, "sharedBuffers">): Array<string> => [
  ...PGlite.defaultStartParams,
  "-c",
  `shared_buffers=${config.sharedBuffers ?? "16MB"}`
]

type TransformRows = (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined

/**
 * One PGlite session, on this thread or on a worker's: what the connections run their statements on. `transaction`
 * numbers the statements of one transaction, for the worker to run them with the session to themselves
 * (`PgliteWorker`); the inline session runs what it is given, the client's semaphore keeping the order.
 */
interface Session {
  /**
   * `signal` withdraws a statement the worker has not started yet (its answer is then an error); one it has started
   * runs to its end, and the promise waits for it.
   */
  readonly query: (
    sql: string,
    params: ReadonlyArray<unknown>,
    rowMode?: "array",
    transaction?: number,
    signal?: AbortSignal
  ) => Promise<Results<object>>
  readonly exec: (sql: string, transaction?: number, signal?: AbortSignal) => Promise<Array<Results>>
  /** The transaction has ended: the worker may run the others' statements again. */
  readonly release: (transaction: number) => Promise<void>
  readonly close: () => Promise<void>
}

const statementError = (cause: unknown) => new SqlError.SqlError({ cause, message: "Failed to execute statement" })

const inlineSession = async (dataDir: string, startParams: Array<string>): Promise<Session> => {
  const db = await PGlite.create({ dataDir, startParams })
  return {
    query: (sql, params, rowMode) =>
      db.query<object>(sql, params as Array<unknown>, rowMode === undefined ? undefined : { rowMode }),
    exec: (sql) => db.exec(sql),
    release: async () => {},
    close: () => db.close()
  }
}

/**
 * The worker's script: `PgliteWorker.js` beside this module. Run from the TypeScript sources (the tests, through the
 * "@convene/source" export condition), that is the compiled one in the package's `dist`, which `pnpm build` writes.
 */
const workerScript = (): URL => {
  const here = new URL("./PgliteWorker.js", import.meta.url)
  return import.meta.url.endsWith(".ts") ? new URL("../dist/PgliteWorker.js", import.meta.url) : here
}

/** An `Error` with the properties the worker's error had (`code`, `constraint`, `detail`…). */
const rebuildError = ({ fields, message, name, stack }: PgliteWorker.SerializedError): Error => {
  const error = Object.assign(new Error(message), fields)
  if (error.name !== name) Object.defineProperty(error, "name", { value: name, writable: true, configurable: true })
  if (stack !== undefined) Object.defineProperty(error, "stack", { value: stack, writable: true, configurable: true })
  return error
}

/**
 * Starts PGlite's worker thread on `dataDir` and answers its session once PGlite is open; fails with the worker's
 * error if PGlite cannot open the directory or the worker cannot start.
 */
const workerSession = (dataDir: string, startParams: Array<string>): Promise<Session> =>
  new Promise<Session>((resolveStart, rejectStart) => {
    const script = workerScript()
    if (!Fs.existsSync(script)) {
      return rejectStart(new Error(`PGlite's worker script is missing: ${fileURLToPath(script)} (run \`pnpm build\`)`))
    }
    const workerData: PgliteWorker.WorkerData = { pgliteWorker: true, dataDir, startParams }
    // Not the process's own flags (a worker refuses some, such as --input-type): PGlite needs none.
    const execArgv = process.execArgv.filter((flag) => flag === "--enable-source-maps")
    const worker = new Worker(script, { workerData, execArgv })
    const pending = new Map<number, { readonly resolve: (value: never) => void; readonly reject: (error: Error) => void }>()
    let nextId = 1
    let started = false
    /** Why the worker answers no more (it died, or was closed): every pending and later call fails with it. */
    let gone: Error | undefined

    const fail = (error: Error) => {
      if (gone !== undefined) return
      gone = error
      if (!started) rejectStart(error)
      for (const call of pending.values()) call.reject(error)
      pending.clear()
    }

    worker.on("message", (reply: PgliteWorker.Reply) => {
      if (reply.id === 0) {
        if (reply.ok) {
          started = true
          // Unreferenced while no call is pending: an idle worker never keeps the process alive.
          worker.unref()
          resolveStart(session)
        } else {
          fail(rebuildError(reply.error))
          void worker.terminate()
        }
        return
      }
      const call = pending.get(reply.id)
      if (call === undefined) return
      pending.delete(reply.id)
      if (pending.size === 0) worker.unref()
      if (reply.ok) call.resolve(reply.result as never)
      else call.reject(rebuildError(reply.error))
    })
    worker.on("error", (cause) => fail(new Error(`PGlite's worker thread failed: ${cause.message}`, { cause })))
    worker.on("messageerror", (cause) => fail(new Error(`PGlite's worker thread sent an unreadable message`, { cause })))
    worker.on("exit", (code) => fail(new Error(`PGlite's worker thread exited (code ${code})`)))

    const send = <A>(request: Exclude<PgliteWorker.Request, { readonly op: "cancel" }>, signal?: AbortSignal) =>
      new Promise<A>((resolve, reject) => {
        if (gone !== undefined) return reject(gone)
        try {
          worker.postMessage(request)
        } catch (error) {
          // A parameter that a structured clone cannot carry (a function, a symbol): nothing was sent.
          return reject(error instanceof Error ? error : new Error(String(error)))
        }
        // Referenced while a call is pending, so that the process waits for its answer.
        if (pending.size === 0) worker.ref()
        pending.set(request.id, { resolve, reject })
        signal?.addEventListener("abort", () => {
          if (gone === undefined && pending.has(request.id)) worker.postMessage({ op: "cancel", target: request.id })
        }, { once: true })
      })

    const session: Session = {
      query: (sql, params, rowMode, transaction, signal) =>
        send({
          id: nextId++,
          op: "query",
          sql,
          params,
          ...(rowMode === undefined ? {} : { rowMode }),
          ...(transaction === undefined ? {} : { session: transaction })
        }, signal),
      exec: (sql, transaction, signal) =>
        send({ id: nextId++, op: "exec", sql, ...(transaction === undefined ? {} : { session: transaction }) }, signal),
      release: (transaction) => send({ id: nextId++, op: "release", session: transaction }),
      close: async () => {
        if (gone !== undefined) return
        try {
          await send<void>({ id: nextId++, op: "close" })
        } finally {
          fail(new Error("PGlite's worker thread is closed"))
          await worker.terminate()
        }
      }
    }
  })

/**
 * Opens PGlite on `config.dataDir` (creating the cluster on first use, which takes several seconds) and
 * builds a `SqlClient` over it. The directory stays locked and the database open until the scope closes.
 */
export const make = (
  config: PgliteClientConfig
): Effect.Effect<
  SqlClient.SqlClient,
  SqlError.SqlError | DataDirectoryLock.DataDirectoryLocked | DataDirectoryLock.DataDirectoryError,
  Scope.Scope | Effect.Effect.Context<ReturnType<typeof SqlClient.make>>
> =>
  Effect.gen(function*() {
    const dataDir = Path.resolve(config.dataDir)
    const thread = config.thread ?? "worker"
    yield* DataDirectoryLock.acquire(dataDir)
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => {
          const startParams = startParamsOf(config)
          return thread === "worker" ? workerSession(dataDir, startParams) : inlineSession(dataDir, startParams)
        },
        catch: (cause) => new SqlError.SqlError({ cause, message: `PgliteClient: cannot open ${dataDir}` })
      }),
      (db) => Effect.promise(() => db.close().catch(() => undefined))
    )

    // A PGlite call is never abandoned half way: interrupting the caller waits for the statement to finish, so that
    // the session is only ever handed on when it is idle. On the worker, a statement that has not started yet is
    // withdrawn instead (it may wait there behind a transaction); inline, one waiting for the semaphore never started.
    const call = <A>(f: (signal?: AbortSignal) => Promise<A>): Effect.Effect<A, SqlError.SqlError> =>
      thread === "inline"
        ? Effect.uninterruptible(Effect.tryPromise({ try: () => f(), catch: statementError }))
        : Effect.async<A, SqlError.SqlError>((resume) => {
          const controller = new AbortController()
          const running = f(controller.signal)
          running.then((value) => resume(Effect.succeed(value)), (cause) => resume(Effect.fail(statementError(cause))))
          return Effect.promise(() => {
            controller.abort()
            return running.then(() => undefined, () => undefined)
          })
        })

    const transform = (rows: ReadonlyArray<object>, transformRows: TransformRows) =>
      transformRows === undefined ? rows : transformRows(rows)

    /**
     * A connection whose statements run through `guard` (the inline session's semaphore, or nothing), as part of
     * `transaction` (a transaction's number on the worker) or standing alone.
     */
    const makeConnection = (
      guard: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>,
      transaction?: number
    ) => {
      const query = (sql: string, params: ReadonlyArray<unknown>, rowMode?: "array") =>
        call((signal) => db.query(sql, params, rowMode, transaction, signal))
      const execute = (sql: string, params: ReadonlyArray<unknown>, transformRows: TransformRows) =>
        guard(Effect.map(query(sql, params), (result) => transform(result.rows, transformRows)))
      const connection: SqlConnection.Connection = {
        execute,
        executeRaw: (sql, params) => guard(query(sql, params)),
        executeValues: (sql, params) =>
          guard(Effect.map(query(sql, params, "array"), (result) => result.rows as ReadonlyArray<ReadonlyArray<unknown>>)),
        // Without parameters this is the simple protocol, which accepts several statements (like node-postgres).
        executeUnprepared: (sql, params, transformRows) =>
          params.length > 0
            ? execute(sql, params, transformRows)
            : guard(Effect.map(call((signal) => db.exec(sql, transaction, signal)), (results: Array<Results>) =>
              results.length === 1
                ? transform(results[0]!.rows, transformRows)
                : results.map((result) => transform(result.rows, transformRows)))),
        executeStream: (sql, params, transformRows) =>
          Stream.flatMap(Stream.fromEffect(execute(sql, params, transformRows)), Stream.fromIterable)
      }
      return connection
    }

    const unguarded = <A, E, R>(effect: Effect.Effect<A, E, R>) => effect
    let acquirer: SqlConnection.Connection.Acquirer
    let transactionAcquirer: SqlConnection.Connection.Acquirer
    if (thread === "worker") {
      // The worker keeps the order: a statement is sent at once; a transaction is numbered, and released at its end.
      acquirer = Effect.succeed(makeConnection(unguarded))
      let transactions = 0
      transactionAcquirer = Effect.acquireRelease(
        Effect.sync(() => ++transactions),
        (transaction) => Effect.promise(() => db.release(transaction).catch(() => undefined))
      ).pipe(Effect.map((transaction) => makeConnection(unguarded, transaction)))
    } else {
      const semaphore = yield* Effect.makeSemaphore(1)
      acquirer = Effect.succeed(makeConnection(semaphore.withPermits(1)))
      const exclusive = makeConnection(unguarded)
      transactionAcquirer = Effect.uninterruptibleMask((restore) =>
        Effect.zipRight(restore(semaphore.take(1)), Effect.addFinalizer(() => semaphore.release(1)))
      ).pipe(Effect.as(exclusive))
    }

    return yield* SqlClient.make({
      acquirer,
      transactionAcquirer,
      compiler: PgClient.makeCompiler(),
      spanAttributes: [
        ["db.system.name", "postgresql"],
        ["db.namespace", "postgres"],
        ["convene.pglite.data_dir", dataDir],
        ["convene.pglite.thread", thread]
      ]
    })
  })

/** A `SqlClient` over PGlite on `config.dataDir`, open (and the directory locked) while the layer lives. */
export const layer = (
  config: PgliteClientConfig
): Layer.Layer<
  SqlClient.SqlClient,
  SqlError.SqlError | DataDirectoryLock.DataDirectoryLocked | DataDirectoryLock.DataDirectoryError
> => Layer.scoped(SqlClient.SqlClient, make(config)).pipe(Layer.provide(Reactivity.layer))
