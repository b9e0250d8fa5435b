/**
 * Databases for the store-pg tests.
 *
 * - `pgliteDataDir`: a fresh PGlite data directory, copied from a template cluster. Creating a cluster takes
 *   several seconds, so the template is created once per machine (in the OS temp directory, keyed by the
 *   PGlite version) under a lock that other test processes wait on, then copied per use.
 * - `serverDatabase`: a throwaway database on the PostgreSQL server named by DATABASE_URL (default
 *   postgres://postgres@127.0.0.1:5432/postgres), dropped afterwards. No server means failure, never a skip.
 */
import { PGlite } from "@electric-sql/pglite"
import { SqlClient, type SqlError } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Clock, Context, Effect, Layer, Redacted, Schedule, type Scope } from "effect"
import { randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Os from "node:os"
import * as Path from "node:path"
import { DataDirectoryLock } from "../src/index.js"

const pgliteVersion = (): string => {
  const require = createRequire(import.meta.url)
  let dir = Path.dirname(require.resolve("@electric-sql/pglite"))
  while (!Fs.existsSync(Path.join(dir, "package.json"))) dir = Path.dirname(dir)
  return (JSON.parse(Fs.readFileSync(Path.join(dir, "package.json"), "utf8")) as { version: string }).version
}

/** Where the tests keep the template cluster and their scratch directories. */
export const scratchRoot = Path.join(Os.tmpdir(), "convene-store-pg-tests")

const templateDir = Path.join(scratchRoot, `pglite-${pgliteVersion()}-template`)
const isReady = () => Fs.existsSync(Path.join(templateDir, "PG_VERSION"))

/** The template cluster's directory, created (once per machine, under a lock) if missing. */
export const pgliteTemplate: Effect.Effect<string> = Effect.gen(function*() {
  if (isReady()) return templateDir
  yield* Effect.scoped(Effect.gen(function*() {
    // The retry waits on the live clock: under a TestClock (inside @effect/vitest's `layer(...)`, where the
    // template is first asked for) the 200 ms would never pass, and a second test process would wait forever.
    yield* DataDirectoryLock.acquire(`${templateDir}.lock`).pipe(
      Effect.retry({ while: (error) => error._tag === "DataDirectoryLocked", schedule: Schedule.spaced("200 millis") }),
      Effect.withClock(Clock.make())
    )
    if (isReady()) return
    const building = `${templateDir}.building`
    Fs.rmSync(building, { recursive: true, force: true })
    yield* Effect.promise(async () => {
      const db = await PGlite.create({ dataDir: building })
      await db.close()
    })
    Fs.renameSync(building, templateDir)
  }))
  return templateDir
}).pipe(Effect.orDie)

/** A scratch directory that is removed when the scope closes. */
export const scratchDir = (prefix: string): Effect.Effect<string, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      Fs.mkdirSync(scratchRoot, { recursive: true })
      return Fs.mkdtempSync(Path.join(scratchRoot, `${prefix}-`))
    }),
    (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
  )

/** A fresh PGlite data directory (a copy of the template), removed when the scope closes. */
export const pgliteDataDir: Effect.Effect<string, never, Scope.Scope> = Effect.gen(function*() {
  const template = yield* pgliteTemplate
  const dir = Path.join(yield* scratchDir("pglite"), "data")
  // A copy-on-write clone where the filesystem offers one, else a plain copy.
  Fs.cpSync(template, dir, { recursive: true, mode: Fs.constants.COPYFILE_FICLONE })
  return dir
})

/** The server the tests use: DATABASE_URL, else the local server with trust auth. */
export const serverUrl = (): string => process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

/** `serverUrl()` pointed at another database. */
export const databaseUrl = (database: string): Redacted.Redacted => {
  const url = new URL(serverUrl())
  url.pathname = `/${database}`
  return Redacted.make(url.toString())
}

/**
 * Creates an empty database `convene_test_<random>` on the server and answers its URL; the database is
 * dropped (with any connections left) when the scope closes.
 */
export const serverDatabase: Effect.Effect<Redacted.Redacted, SqlError.SqlError, Scope.Scope> = Effect.gen(function*() {
  const admin = yield* Layer.build(PgClient.layer({ url: Redacted.make(serverUrl()), maxConnections: 1 }))
  const sql = Context.get(admin, SqlClient.SqlClient)
  const name = `convene_test_${randomUUID().replaceAll("-", "").slice(0, 20)}`
  yield* Effect.acquireRelease(
    sql`CREATE DATABASE ${sql(name)}`,
    () => Effect.orDie(sql`DROP DATABASE IF EXISTS ${sql(name)} WITH (FORCE)`)
  )
  return databaseUrl(name)
})
