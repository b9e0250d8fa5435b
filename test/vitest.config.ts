import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const root = fileURLToPath(new URL("..", import.meta.url))

/** The suites run without isolation between files (see the "core" project). */
const coreWithoutIsolation = ["test/core/*.test.ts", "test/store-memory.test.ts"]

/**
 * The HTTP end-to-end suites on the in-memory store that also run without isolation (see the "http" project). Not
 * the two that read /metrics (the registry every server of a module graph shares: observability, events-stream),
 * nor the OAuth suites (test/http/oauth), which stay isolated as the core's do.
 */
const httpWithoutIsolation = ["test/http/*.test.ts"]
const httpIsolated = ["test/http/observability.test.ts", "test/http/events-stream.test.ts"]

export default defineConfig({
  root,
  resolve: { conditions: ["@convene/source"] },
  ssr: { resolve: { conditions: ["@convene/source"] } },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Only the "core" project runs on threads (a pool's isolation is set once for all projects that use it).
    poolOptions: { threads: { isolate: false } },
    // Vitest's default is one worker per core less one: a single worker on a 2-core machine, which leaves a core
    // idle while a file imports its modules or waits on the processes it started (servers, the CLI, npm).
    maxWorkers: 2,
    // The JSON report lets .ci/run print the plain "N passed, N failed" closing line.
    reporters: ["default", "json"],
    outputFile: { json: "node_modules/.cache/vitest-report.json" },
    projects: [
      {
        extends: true,
        test: {
          name: "all",
          include: ["test/**/*.test.ts", "packages/*/test/**/*.test.ts"],
          exclude: [...coreWithoutIsolation, ...httpWithoutIsolation, "**/node_modules/**"]
        }
      },
      {
        // The HTTP suites that stay isolated (see httpIsolated), as in "all".
        extends: true,
        test: { name: "http-isolated", include: httpIsolated }
      },
      {
        // The HTTP suites on the in-memory store share one module graph per worker thread, as the core's do (see
        // "core"): each starts its own servers on their own layers, and loading effect, the core and the HTTP layer
        // once per worker instead of once per file saves seconds a file.
        extends: true,
        test: { name: "http", include: httpWithoutIsolation, exclude: [...httpIsolated, "**/node_modules/**"], pool: "threads" }
      },
      {
        // The core's own suites on the in-memory store keep no state outside what each test builds, so they share
        // one module graph per worker thread: loading effect and the core once instead of once per file saves most of
        // their time. (The OAuth and webhook suites stay isolated: run in one graph, the webhook suite read times the
        // OAuth suites' test clocks had reached; why is not understood yet. The HTTP suites lose the same ~90% of
        // their module loading this way, but the metrics test reads a registry every file's server shares.)
        extends: true,
        test: { name: "core", include: coreWithoutIsolation, pool: "threads" }
      },
      {
        // The HTTP end-to-end suites that lean on the store most, once more on the embedded default store (PGlite,
        // one session in process: transactions, concurrency and idempotency behave differently there than in
        // memory). The rest of the HTTP suites answer the same whatever the store (the host's rules, the pages,
        // the fuzzer); the store contract suites, durability, startup and the CLI run on PGlite on their own, and so
        // does the event log under the event stream.
        extends: true,
        test: {
          name: "http-on-pglite",
          include: [
            "test/http/meetings.test.ts",
            "test/http/action-items.test.ts",
            "test/http/backlog.test.ts",
            "test/http/context.test.ts",
            "test/http/idempotency.test.ts",
            "test/http/identity-deletion.test.ts",
            "test/http/partner-admin.test.ts",
            "test/http/oauth/flow.test.ts",
            "test/http/oauth/partner.test.ts"
          ],
          env: { CONVENE_TEST_STORE: "pglite" }
        }
      }
    ]
  }
})
