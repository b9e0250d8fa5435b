/**
 * The stores an end-to-end suite runs on, each as a layer built in the suite's scope: the in-memory store, the
 * embedded default (PGlite, in a migrated copy of the template data directory) and a PostgreSQL server (a fresh
 * database of the local server, dropped with the scope).
 */
import type { StorePorts } from "@convene/core"
import * as StoreMemory from "@convene/store-memory"
import * as StorePg from "@convene/store-pg"
import { Effect, Layer, Scope } from "effect"
import { serverDatabase } from "../../packages/store-pg/test/fixtures.js"
import { pgliteMigratedDataDir } from "./pglite.js"

export interface StoreUnderTest {
  readonly name: "memory" | "PGlite" | "PostgreSQL"
  readonly layer: (scope: Scope.Scope) => Layer.Layer<StorePorts, unknown>
}

export const memoryStore: StoreUnderTest = { name: "memory", layer: () => StoreMemory.layer }

export const pgliteStore: StoreUnderTest = {
  name: "PGlite",
  layer: (scope) =>
    Layer.unwrapEffect(Effect.map(Scope.extend(pgliteMigratedDataDir, scope), (dataDir) => StorePg.layerPglite({ dataDir })))
}

export const postgresStore: StoreUnderTest = {
  name: "PostgreSQL",
  layer: (scope) => Layer.unwrapEffect(Effect.map(Scope.extend(serverDatabase, scope), (url) => StorePg.layerPg({ url })))
}

/** The three, for `describe.each`. */
export const everyStore: ReadonlyArray<StoreUnderTest> = [memoryStore, pgliteStore, postgresStore]
