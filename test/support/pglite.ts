/**
 * PGlite data directories with the schema already in place, for the tests that run the store (or the server) on
 * PGlite but do not test migrating: a copy of a second template cluster, the empty template of
 * packages/store-pg/test/fixtures.ts with every migration applied.
 *
 * Migrating a fresh PGlite cluster takes seconds of CPU, which every such PGlite store paid again at start
 * (in the test process or in the server process it spawned). The migrated template is made once per machine and
 * set of migrations: its name carries a hash of the PGlite template's name (its version) and of
 * packages/store-pg/src/Migrations.ts, so a changed or added migration makes a new one. It is built in a
 * directory of its own and renamed into place (atomic: a process that sees it sees it whole; two processes that
 * build it at once both succeed, and one copy is dropped). The store opened on a copy still runs
 * `Migrations.run` at start, which then finds nothing to apply.
 *
 * Migrating itself stays tested on fresh clusters: packages/store-pg/test/Migrations.test.ts, test/cli/migrate.test.ts,
 * the first start in test/shutdown.test.ts, and test/pglite-worker.test.ts.
 */
import { Migrations, PgliteClient } from "@convene/store-pg"
import { Effect, Layer, type Scope } from "effect"
import { createHash, randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { pgliteTemplate, scratchDir, scratchRoot } from "../../packages/store-pg/test/fixtures.js"

const migrationsSource = fileURLToPath(new URL("../../packages/store-pg/src/Migrations.ts", import.meta.url))

let ready: string | undefined

/** The migrated template cluster's directory, made (once per machine and set of migrations) if missing. */
export const pgliteMigratedTemplate: Effect.Effect<string> = Effect.gen(function*() {
  if (ready !== undefined) return ready
  const empty = yield* pgliteTemplate
  const key = createHash("sha256")
    .update(Path.basename(empty))
    .update(Fs.readFileSync(migrationsSource))
    .digest("hex")
    .slice(0, 16)
  const dir = Path.join(scratchRoot, `${Path.basename(empty)}-migrated-${key}`)
  if (!Fs.existsSync(Path.join(dir, "PG_VERSION"))) {
    const building = `${dir}.building-${randomUUID()}`
    Fs.cpSync(empty, building, { recursive: true })
    yield* Effect.scoped(
      Effect.flatMap(
        Layer.build(PgliteClient.layer({ dataDir: building, thread: "inline" })),
        (context) => Effect.provide(Migrations.run, context)
      )
    ).pipe(
      // Another process may have put its copy in place meanwhile: then the rename fails, and that copy serves.
      Effect.andThen(() => {
        try {
          Fs.renameSync(building, dir)
        } catch (error) {
          if (!Fs.existsSync(Path.join(dir, "PG_VERSION"))) throw error
        }
      }),
      Effect.ensuring(Effect.sync(() => Fs.rmSync(building, { recursive: true, force: true })))
    )
  }
  ready = dir
  return dir
}).pipe(Effect.orDie)

/** A fresh PGlite data directory with the schema migrated (a copy of the migrated template), removed when the scope closes. */
export const pgliteMigratedDataDir: Effect.Effect<string, never, Scope.Scope> = Effect.gen(function*() {
  const template = yield* pgliteMigratedTemplate
  const dir = Path.join(yield* scratchDir("pglite"), "data")
  Fs.cpSync(template, dir, { recursive: true, mode: Fs.constants.COPYFILE_FICLONE })
  return dir
})
