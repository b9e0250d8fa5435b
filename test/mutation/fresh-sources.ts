/**
 * Setup file of the mutation config (test/mutation/vitest.config.ts). The test worker is kept between test
 * files and between Stryker's runs (`isolate: false`), so effect, @effect/platform and the other
 * dependencies are loaded once per worker instead of once per test file; resetting the module registry here,
 * before each test file, still evaluates every source module afresh for each file, so a mutant that only
 * acts while a module loads (a "static" mutant: a schema, a constant, a layer) is active in every file.
 * The dependencies, loaded by Node itself, stay cached.
 */
import { vi } from "vitest"

vi.resetModules()
