// @ts-check
/**
 * StrykerJS configuration for `pnpm mutate` (test/mutation/run.mjs runs it; see docs/quality.md).
 * Paths are relative to the repository root, where run.mjs starts Stryker.
 */

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  mutate: ["packages/core/src/**/*.ts", "packages/store-memory/src/**/*.ts"],

  // pnpm keeps each package's dependencies beside it, so Stryker's default plugin glob (next to
  // @stryker-mutator/core) finds no runner: load the two plugins from the root node_modules explicitly.
  plugins: [
    import.meta.resolve("@stryker-mutator/vitest-runner"),
    import.meta.resolve("@stryker-mutator/typescript-checker")
  ],

  testRunner: "vitest",
  vitest: { configFile: "test/mutation/vitest.config.ts", related: true },
  coverageAnalysis: "perTest",
  // A static mutant acts only while a module loads (a schema, an annotation, a constant, a tag), so no
  // per-test coverage exists for it and Stryker runs every test against it: 38% of the mutants, 87% of the
  // test time, about two hours here. They are reported as "Ignored" and leave the score unless
  // `pnpm mutate --with-static` (which sets MUTATE_WITH_STATIC=1) asks for them.
  ignoreStatic: process.env.MUTATE_WITH_STATIC !== "1",

  checkers: ["typescript"],
  tsconfigFile: "test/mutation/tsconfig.json",
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },

  concurrency: 2,
  timeoutMS: 10_000,

  reporters: ["progress", "clear-text", "json", "html"],
  clearTextReporter: { reportMutants: false, reportTests: false, allowEmojis: false },
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  htmlReporter: { fileName: "reports/mutation/mutation.html" },
  thresholds: { high: 80, low: 60, break: null },

  // Only tests and checker compile files in the sandbox: skip what neither needs.
  ignorePatterns: ["dist", "coverage", "/.convene", "/docs", "/bench", "/reports"],
  disableTypeChecks: false,
  tempDirName: ".stryker-tmp",
  incrementalFile: "node_modules/.cache/stryker/incremental.json"
}
