import { Workspace, WorkspaceId, WorkspaceStore } from "@convene/core"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Context, DateTime, Effect, Layer, Option, type Redacted } from "effect"
import { randomUUID } from "node:crypto"
import { layerPg, layerPglite, Migrations, PgliteClient } from "../src/index.js"
import { pgliteDataDir, serverDatabase } from "./fixtures.js"

const migrationRows = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ migration_id: number; name: string }>`SELECT migration_id, name FROM ${sql(Migrations.table)} ORDER BY migration_id`)

/** Runs the migrations through a client (and pool) of its own, as another process would. */
const migrateAlone = (url: Redacted.Redacted) =>
  Effect.scoped(Effect.gen(function*() {
    const context = yield* Layer.build(PgClient.layer({ url, maxConnections: 1 }))
    return yield* Effect.provide(Migrations.run, context)
  }))

const withServerClient = <A, E>(url: Redacted.Redacted, effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.scoped(Effect.flatMap(Layer.build(PgClient.layer({ url })), (context) => Effect.provide(effect, context)))

describe("Migrations on the PostgreSQL server", () => {
  it.scoped("runners starting together on a fresh database all succeed, and each migration runs once", () =>
    Effect.gen(function*() {
      for (let round = 0; round < 3; round++) {
        const url = yield* serverDatabase
        const ran = yield* Effect.all(Array.from({ length: 4 }, () => migrateAlone(url)), { concurrency: "unbounded" })
        expect(ran.filter((migrations) => migrations.length > 0)).toEqual([[[1, "init"]]])
        expect(yield* withServerClient(url, migrationRows)).toEqual([{ migration_id: 1, name: "init" }])
        expect(yield* migrateAlone(url)).toEqual([])
      }
    }), 60_000)

  it.scoped("two adapter layers starting at once on a fresh database both come up and share the schema", () =>
    Effect.gen(function*() {
      const url = yield* serverDatabase
      const [one, two] = yield* Effect.all([Layer.build(layerPg({ url })), Layer.build(layerPg({ url }))], {
        concurrency: "unbounded"
      })
      const now = DateTime.unsafeMake("2026-03-02T09:00:00.000Z")
      const workspace = new Workspace({
        id: WorkspaceId.make(randomUUID()),
        name: "Shared",
        plan: "FREE",
        default_detail_level: "standard",
        default_template_id: null,
        created_at: now,
        updated_at: now
      })
      yield* Context.get(one, WorkspaceStore).insert(workspace)
      expect(yield* Context.get(two, WorkspaceStore).get(workspace.id)).toEqual(Option.some(workspace))
      const input = { workspaceId: workspace.id, counter: "meetings", period: "2026-03", limit: 1 }
      expect(yield* Context.get(two, WorkspaceStore).consume(input)).toBe(true)
      expect(yield* Context.get(one, WorkspaceStore).consume(input)).toBe(false)
    }), 60_000)
})

describe("Migrations on PGlite", () => {
  it.scoped("migrate concurrently on one client, and only once per directory", () =>
    Effect.gen(function*() {
      const dataDir = yield* pgliteDataDir
      const first = yield* Effect.scoped(Effect.gen(function*() {
        const context = yield* Layer.build(PgliteClient.layer({ dataDir }))
        const ran = yield* Effect.provide(
          Effect.all([Migrations.run, Migrations.run, Migrations.run], { concurrency: "unbounded" }),
          context
        )
        return { ran, rows: yield* Effect.provide(migrationRows, context) }
      }))
      expect(first.ran.filter((migrations) => migrations.length > 0)).toEqual([[[1, "init"]]])
      expect(first.rows).toEqual([{ migration_id: 1, name: "init" }])

      // Reopened, the adapter finds the schema in place.
      const again = yield* Effect.scoped(Effect.gen(function*() {
        const context = yield* Layer.build(layerPglite({ dataDir }))
        return yield* Effect.provide(Migrations.run, context)
      }))
      expect(again).toEqual([])
    }), 60_000)
})
