/**
 * The fault-injection suite (suite.ts) on every store: memory, PGlite (a copy of the migrated template cluster, test/support/pglite.ts) and the
 * PostgreSQL server (a throwaway database; DATABASE_URL, else the local server; no server is a failure, never
 * a skip). Each store is built once for its suite and shared by the cases, which make their own workspaces;
 * the PGlite directory and the database are removed after the suite's last case. One file, not three: on two
 * cores Vitest runs one file at a time, and each file pays for its own process and module loading.
 */
import * as StoreMemory from "@convene/store-memory"
import { layerPg, layerPglite } from "@convene/store-pg"
import { Effect, Layer } from "effect"
import { serverDatabase } from "../../packages/store-pg/test/fixtures.js"
import { pgliteMigratedDataDir } from "../support/pglite.js"
import * as Snapshot from "./Snapshot.js"
import { suite } from "./suite.js"

// `StoreMemory.layer` builds its state from `Memory.layer`; naming that layer again in the same build answers
// the same instance (layers are memoized by reference), which the snapshot reads.
suite("memory", Snapshot.memoryLayer.pipe(Layer.provideMerge(Layer.merge(StoreMemory.layer, StoreMemory.Memory.layer))))

suite(
  "PGlite",
  Snapshot.sqlLayer.pipe(
    Layer.provideMerge(Layer.unwrapScoped(Effect.map(pgliteMigratedDataDir, (dataDir) => layerPglite({ dataDir }))))
  )
)

suite(
  "PostgreSQL",
  Snapshot.sqlLayer.pipe(Layer.provideMerge(Layer.unwrapScoped(Effect.map(serverDatabase, (url) => layerPg({ url })))))
)
