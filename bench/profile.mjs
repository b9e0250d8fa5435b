// `pnpm bench:profile [scenario] [store]`: a flame graph of Convene's compiled server under load. 0x runs the server
// (memory store by default, default configuration, access log to a pipe 0x drains), this script seeds it and loads
// one scenario (bench/load.mjs, its own process); 0x then writes reports/flamegraph/flamegraph.html, and headless
// Chromium (Debian's package, through playwright-core) saves a picture of it as docs/flamegraph-<scenario>.png.
//
// Inside 0x's run the same script is the load (`--on-port`): `node bench/profile.mjs --load <port> <scenario>`.
import { execFileSync, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { mkdirSync, readdirSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { caller, freePort, provision } from "./support.mjs"

const root = fileURLToPath(new URL("..", import.meta.url))
const OPERATOR = process.env.BENCH_OPERATOR_TOKEN ?? randomUUID()
const unlimitedBudgets = "FREE=100000000,PRO=100000000,ELITE=100000000,ENTERPRISE=100000000,ANONYMOUS=100000000"

if (process.argv[2] === "--load") {
  // Run by 0x once the server listens: seed, then load (warm-up included), then exit so that 0x stops the server.
  const [, , , port, scenario] = process.argv
  const url = `http://127.0.0.1:${port}`
  for (;;) {
    if (await fetch(`${url}/readyz`).then((r) => r.status === 200, () => false)) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const call = caller(url)
  const { token } = await provision(call, OPERATOR, ["meetings:read", "meetings:write", "action-items:read", "action-items:write"])
  let first
  for (let i = 0; i < 120; i++) {
    first ??= await call("POST", "/v1/meetings", token, { title: `Meeting ${i}`, start_time: "2026-12-01T09:00:00Z" })
  }
  const seconds = process.env.BENCH_SECONDS ?? "10"
  process.stdout.write(execFileSync(process.execPath, [join(root, "bench/load.mjs"), url, scenario, token, first.id, seconds, "3", "50", "1"], {
    encoding: "utf8"
  }))
  process.exit(0)
}

const scenario = process.argv[2] ?? "get-meeting"
const store = process.argv[3] ?? "memory"
const port = await freePort()
const out = join(root, "reports/flamegraph")
rmSync(out, { recursive: true, force: true })
mkdirSync(out, { recursive: true })
const env = {
  ...process.env,
  PORT: String(port),
  HOST: "127.0.0.1",
  CONVENE_OPERATOR_TOKEN: OPERATOR,
  BENCH_OPERATOR_TOKEN: OPERATOR,
  CONVENE_RATE_LIMITS: unlimitedBudgets,
  ...(store === "memory" ? { CONVENE_STORE: "memory" } : {}),
  ...(store === "pglite" ? { CONVENE_DATA_DIR: join(out, "data") } : {})
}
const zeroX = join(root, "node_modules/.bin/0x")
const child = spawn(zeroX, [
  "--output-dir", out,
  "--output-html", join(out, "flamegraph.html"),
  "--on-port", `node ${join(root, "bench/profile.mjs")} --load ${port} ${scenario}`,
  "--", process.execPath, join(root, "packages/http/dist/main.js")
], { cwd: root, env, stdio: ["ignore", "ignore", "inherit"] })
const code = await new Promise((resolve) => child.on("exit", resolve))
if (code !== 0) throw new Error(`0x exited with ${code}`)
console.error(`flame graph: ${join(out, "flamegraph.html")} (${readdirSync(out).join(", ")})`)

// playwright-core is the test package's dependency (the browser tests use it).
const { chromium } = createRequire(join(root, "test/package.json"))("playwright-core")
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium" })
try {
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } })
  await page.goto(`file://${join(out, "flamegraph.html")}`)
  await page.waitForTimeout(1500)
  const picture = join(root, `docs/flamegraph-${scenario}.png`)
  await page.screenshot({ path: picture, fullPage: true })
  console.error(`picture: ${picture}`)
} finally {
  await browser.close()
}
