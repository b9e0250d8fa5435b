import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const root = fileURLToPath(new URL("..", import.meta.url))

export default defineConfig({
  root,
  resolve: { conditions: ["@convene/source"] },
  ssr: { resolve: { conditions: ["@convene/source"] } },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Vitest's default is one worker per core less one: a single worker on a 2-core machine, which leaves a core
    // idle while a file imports its modules or waits on the processes it started (servers, the CLI, npm).
    maxWorkers: 2,
    // The JSON report lets .ci/run print the plain "N passed, N failed" closing line.
    reporters: ["default", "json"],
    outputFile: { json: "node_modules/.cache/vitest-report.json" },
    projects: [
      {
        extends: true,
        test: { name: "all", include: ["test/**/*.test.ts", "packages/*/test/**/*.test.ts"] }
      },
      {
        // The HTTP end-to-end suites once more, on the embedded default store (PGlite).
        extends: true,
        test: {
          name: "http-on-pglite",
          include: ["test/http/**/*.test.ts"],
          // Not the store's business, so run once (in memory): the pages in a browser (the reference, the sign-in
          // pages; the OAuth flow over HTTP runs here in flow.test.ts), the attacker's probes of the OAuth input rules,
          // the log format, the store's wording, and the host's own rules that answer before any store is asked (the
          // contract fuzzer's input rules, limits and timeouts, the gate and drain, request checks, documents,
          // metrics and traces, validation wording, the OpenAPI lint).
          exclude: [
            "test/http/docs.test.ts",
            "test/http/pages.test.ts",
            "test/http/oauth/browser.test.ts",
            "test/http/oauth/attacks.test.ts",
            "test/http/logging.test.ts",
            "test/http/store-choice.test.ts",
            "test/http/fuzz.test.ts",
            "test/http/limits.test.ts",
            "test/http/lifecycle.test.ts",
            "test/http/host.test.ts",
            "test/http/documents.test.ts",
            "test/http/observability.test.ts",
            "test/http/validation-messages.test.ts",
            "test/http/openapi-lint.test.ts"
          ],
          env: { CONVENE_TEST_STORE: "pglite" }
        }
      }
    ]
  }
})
