/**
 * The store contract suites against @convene/store-pg, twice: on PGlite (a copy of the template cluster)
 * and on the PostgreSQL server (a throwaway database; DATABASE_URL, else the local server). The server run
 * fails, never skips, when no server answers.
 */
import { layerPg, layerPglite } from "@convene/store-pg"
import { afterAll } from "@effect/vitest"
import { Effect, Exit, Layer, Scope } from "effect"
import { pgliteDataDir, serverDatabase } from "../packages/store-pg/test/fixtures.js"
import { runContractSuites } from "./contract/index.js"

// Each adapter is built once for the whole file (on first use) and shared by the suites, which create their
// own rows; everything is closed, and the directory and the database removed, after the last suite.
const scope = Effect.runSync(Scope.make())
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)), 60_000)

const sharedLayer = <A, E>(layer: Layer.Layer<A, E>): Layer.Layer<A, E> =>
  Layer.effectContext(Effect.runSync(Effect.cached(Scope.extend(Layer.build(layer), scope))))

const pglite = sharedLayer(Layer.unwrapScoped(Effect.map(pgliteDataDir, (dataDir) => layerPglite({ dataDir }))))
const server = sharedLayer(Layer.unwrapScoped(Effect.map(serverDatabase, (url) => layerPg({ url }))))

runContractSuites("PGlite", pglite)
runContractSuites("PostgreSQL", server)
