/**
 * An @effect/sql `SqlClient` over PGlite: PostgreSQL compiled to WebAssembly, running in this process on a
 * data directory. No TCP listener is opened.
 *
 * PGlite is a single session, so the client has one connection guarded by a `Semaphore(1)`: a statement
 * outside a transaction holds the permit while it runs, and a transaction holds it from BEGIN to COMMIT or
 * ROLLBACK (nested transactions are savepoints on the same connection). Code inside a transaction must never
 * wait on another connection of this client (`sql.reserve`, or a statement run without the transaction's
 * context): it would wait for itself.
 *
 * The data directory is locked for the client's lifetime (see `DataDirectoryLock`). SQL is compiled with
 * @effect/sql-pg's compiler, so statements, placeholders and helpers behave as with `PgClient`. Values come
 * back as PGlite parses them: timestamptz as `Date`, numeric as string, jsonb parsed, arrays as arrays.
 */
import type { Results } from "@electric-sql/pglite"
import { PGlite } from "@electric-sql/pglite"
import { SqlClient, type SqlConnection, SqlError } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, type Scope, Stream } from "effect"
import * as Path from "node:path"
import * as DataDirectoryLock from "./DataDirectoryLock.js"
import { Reactivity } from "@effect/experimental"

/** Where PGlite keeps its files. A relative path is resolved against the working directory. */
export interface PgliteClientConfig {
  readonly dataDir: string
}

type TransformRows = (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined

const statementError = (cause: unknown) => new SqlError.SqlError({ cause, message: "Failed to execute statement" })

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
    yield* DataDirectoryLock.acquire(dataDir)
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => PGlite.create({ dataDir }),
        catch: (cause) => new SqlError.SqlError({ cause, message: `PgliteClient: cannot open ${dataDir}` })
      }),
      (db) => Effect.promise(() => db.close().catch(() => undefined))
    )

    // A PGlite call is never abandoned half way: interrupting the caller waits for the statement to finish,
    // so that the permit is only ever released when the session is idle.
    const call = <A>(f: () => Promise<A>) => Effect.uninterruptible(Effect.tryPromise({ try: f, catch: statementError }))

    const query = (sql: string, params: ReadonlyArray<unknown>, rowMode?: "array") =>
      call(() => db.query<object>(sql, params as Array<unknown>, rowMode === undefined ? undefined : { rowMode }))

    const transform = (rows: ReadonlyArray<object>, transformRows: TransformRows) =>
      transformRows === undefined ? rows : transformRows(rows)

    const makeConnection = (guard: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>) => {
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
            : guard(Effect.map(call(() => db.exec(sql)), (results: Array<Results>) =>
              results.length === 1
                ? transform(results[0]!.rows, transformRows)
                : results.map((result) => transform(result.rows, transformRows)))),
        executeStream: (sql, params, transformRows) =>
          Stream.flatMap(Stream.fromEffect(execute(sql, params, transformRows)), Stream.fromIterable)
      }
      return connection
    }

    const semaphore = yield* Effect.makeSemaphore(1)
    const shared = makeConnection(semaphore.withPermits(1))
    const exclusive = makeConnection((effect) => effect)
    const transactionAcquirer: SqlConnection.Connection.Acquirer = Effect.uninterruptibleMask((restore) =>
      Effect.zipRight(restore(semaphore.take(1)), Effect.addFinalizer(() => semaphore.release(1)))
    ).pipe(Effect.as(exclusive))

    return yield* SqlClient.make({
      acquirer: Effect.succeed(shared),
      transactionAcquirer,
      compiler: PgClient.makeCompiler(),
      spanAttributes: [
        ["db.system.name", "postgresql"],
        ["db.namespace", "postgres"],
        ["convene.pglite.data_dir", dataDir]
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
