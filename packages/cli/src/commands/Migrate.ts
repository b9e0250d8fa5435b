/**
 * `convene migrate [--check]`: the schema of the store the server's configuration names (DATABASE_URL, else
 * the embedded database in CONVENE_DATA_DIR), brought up to date and exit; with `--check`, only told.
 *
 * - `migrate` applies what is pending (as the server does at start, under the same lock, so it is safe beside
 *   a starting server) and exits 0.
 * - `migrate --check` applies nothing: it lists the pending migrations and exits 1 when there are some, 0 when
 *   there are none. On an embedded data directory that holds no database yet it does not create one.
 * - CONVENE_STORE=memory has no schema: nothing to do, exit 0.
 * - PostgreSQL that cannot be reached is exit 3 (not retried: run it again); a refused password, a missing
 *   database, or an embedded directory in use by a running server is exit 1, in one line.
 *
 * Loaded only when `migrate` runs (it brings the store drivers).
 */
import { describeConfigError, Store, storeChoice, type StoreChoice } from "@convene/http"
import { clientPg, Migrations, PgliteClient } from "@convene/store-pg"
import type { Migrator, SqlClient, SqlError } from "@effect/sql"
import { Console, Effect, Layer, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { CommandFailed, connectionFailure } from "../Failure.js"

type Migration = readonly [id: number, name: string]

/** As the migration is named in the code and in the migrations table: `0004_operator_administration`. */
const label = ([id, name]: Migration) => `${String(id).padStart(4, "0")}_${name}`

const plural = (n: number) => (n === 1 ? "1 migration" : `${n} migrations`)

/** Lists what is pending on standard output; exit 1 when anything is. */
const reportPending = (where: string, pending: ReadonlyArray<Migration>) =>
  Effect.gen(function*() {
    if (pending.length === 0) {
      yield* Console.log(`No migrations pending on ${where}: the schema is up to date.`)
      return
    }
    yield* Console.log(`${plural(pending.length)} pending on ${where}:\n${pending.map((m) => `  ${label(m)}`).join("\n")}`)
    return yield* CommandFailed.failed(`${plural(pending.length)} pending: run \`convene migrate\` to apply them`)
  })

const apply = (where: string) =>
  Effect.gen(function*() {
    const ran = yield* Migrations.run
    yield* Console.log(
      ran.length === 0
        ? `No migrations to apply on ${where}: the schema is up to date.`
        : `Applied ${plural(ran.length)} on ${where}:\n${ran.map((m) => `  ${label(m)}`).join("\n")}`
    )
  })

const messageOf = (cause: unknown): string =>
  typeof cause === "object" && cause !== null && "message" in cause && typeof cause.message === "string"
    ? cause.message
    : String(cause)

/** The SqlClient on the configured database, or the reason it cannot be opened. */
const client = (choice: Exclude<StoreChoice, { _tag: "memory" }>): Layer.Layer<SqlClient.SqlClient, CommandFailed> => {
  if (choice._tag === "embedded") {
    return PgliteClient.layer({ dataDir: choice.dataDir, thread: choice.thread ?? "worker" }).pipe(
      Layer.catchAll((error) =>
        Layer.fail(CommandFailed.failed(
          error._tag === "SqlError"
            ? `error: the embedded database in ${Path.resolve(choice.dataDir)} cannot be opened: ${messageOf(error.cause)}`
            : `error: ${error.message}`
        ))
      )
    )
  }
  const url = Redacted.value(choice.url)
  return clientPg({ url: choice.url, maxConnections: 1, applicationName: "convene migrate" }).pipe(
    Layer.catchAll((error) => {
      const failure = Store.classify(url, error)
      return Layer.fail(
        failure._tag === "Transient"
          ? CommandFailed.unreachable(
            `error: cannot reach PostgreSQL at ${Store.describeUrl(url)}: ${connectionFailure([failure.reason]) ?? failure.reason}`
          )
          : CommandFailed.failed(`error: ${failure.message}`)
      )
    })
  )
}

/** Has PGlite created its cluster in this directory? */
const isCreated = (dataDir: string) => Fs.existsSync(Path.join(dataDir, "PG_VERSION"))

export const migrate = (check: boolean): Effect.Effect<void, CommandFailed> =>
  Effect.gen(function*() {
    const choice = yield* Effect.mapError(storeChoice, (error) => CommandFailed.usage(describeConfigError(error)))
    if (choice._tag === "memory") {
      yield* Console.log("CONVENE_STORE=memory keeps everything in memory: there is no schema to migrate.")
      return
    }
    const where = Store.describe(choice)
    if (choice._tag === "embedded" && !isCreated(choice.dataDir)) {
      const all = yield* Effect.orDie(Migrations.all)
      if (check) return yield* reportPending(`${where} (no database there yet)`, all)
      yield* Console.error(`creating the embedded database in ${Path.resolve(choice.dataDir)} (first time only; it takes a few seconds)`)
    }
    const work: Effect.Effect<void, CommandFailed | Migrator.MigrationError | SqlError.SqlError, SqlClient.SqlClient> = check
      ? Effect.flatMap(Migrations.pending, (pending) => reportPending(where, pending))
      : apply(where)
    yield* work.pipe(
      Effect.catchTags({
        SqlError: (error) => Effect.fail(CommandFailed.failed(`error: migrating ${where} failed: ${messageOf(error.cause)}`)),
        MigrationError: (error) => Effect.fail(CommandFailed.failed(`error: migrating ${where} failed: ${error.message}`))
      }),
      Effect.provide(client(choice))
    )
  })
