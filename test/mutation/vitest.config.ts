/**
 * The Vitest configuration Stryker runs (`pnpm mutate`, see docs/quality.md): the fast in-memory suites only,
 * one project, no PostgreSQL or PGlite.
 *
 * Stryker copies the repository into a sandbox (.stryker-tmp/sandbox-*) and mutates the copies there, but it
 * symlinks every node_modules folder back to the original one, so `@convene/core` resolved through
 * node_modules would land on the ORIGINAL, unmutated packages/core/src. Each workspace package is therefore
 * aliased to its `@convene/source` entry relative to this file, that is inside the sandbox.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const root = fileURLToPath(new URL("../..", import.meta.url))

/** `@convene/x` → <root>/packages/x/src/index.ts (its "@convene/source" export), for packages/* and examples/*. */
const sourceAliases = ["packages", "examples"].flatMap((parent) =>
  readdirSync(join(root, parent), { withFileTypes: true }).flatMap((entry) => {
    if (!entry.isDirectory()) return []
    const dir = join(root, parent, entry.name)
    let manifest: { name?: string; exports?: Record<string, Record<string, string>> }
    try {
      manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"))
    } catch {
      return []
    }
    const source = manifest.exports?.["."]?.["@convene/source"]
    if (manifest.name === undefined || source === undefined) return []
    const escaped = manifest.name.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")
    return [{ find: new RegExp(`^${escaped}$`), replacement: join(dir, source) }]
  })
)

// The HTTP suites run on the memory store unless CONVENE_TEST_STORE=pglite: never here.
delete process.env.CONVENE_TEST_STORE

export default defineConfig({
  root,
  resolve: { conditions: ["@convene/source"], alias: sourceAliases },
  ssr: { resolve: { conditions: ["@convene/source"] } },
  test: {
    name: "mutation",
    include: [
      "test/core/**/*.test.ts",
      "test/store-memory.test.ts",
      "test/examples.test.ts",
      "test/http/**/*.test.ts"
    ],
    // The HTTP fuzz suite draws random requests (fast-check, a new seed each run), so it would kill a mutant
    // in one run and not in the next, and it takes longer (27 s) than every other suite here together.
    exclude: ["test/http/fuzz.test.ts", "**/node_modules/**"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    isolate: false,
    poolOptions: { threads: { isolate: false }, forks: { isolate: false } },
    setupFiles: ["test/mutation/fresh-sources.ts"]
  }
})
