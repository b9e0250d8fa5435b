// `pnpm bench`: Convene's production build (compiled JavaScript) against the bare node:http baseline
// (bench/baseline.mjs), on each store, for three scenarios, loaded by autocannon from a separate process.
// Prints one JSON line per scenario and store. Options (env): BENCH_STORES=memory,pglite,pg BENCH_RATE_LIMITS
// BENCH_SECONDS=10 BENCH_WARMUP=3 BENCH_CONNECTIONS=50 DATABASE_URL (server; default the local one).
import { execFileSync, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { once } from "node:events"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { cpus, tmpdir, totalmem } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"

const root = fileURLToPath(new URL("..", import.meta.url))
const stores = (process.env.BENCH_STORES ?? "memory,pglite,pg").split(",")
const seconds = process.env.BENCH_SECONDS ?? "10"
const warmup = process.env.BENCH_WARMUP ?? "3"
const connections = process.env.BENCH_CONNECTIONS ?? "50"
const serverUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
const scenarios = ["get-meeting", "create-action-item", "list-meetings"]
const OPERATOR = randomUUID()

const freePort = async () => {
  const server = createServer().listen(0, "127.0.0.1")
  await once(server, "listening")
  const { port } = server.address()
  server.close()
  return port
}

/**
 * The load spends tens of thousands of requests a minute with one credential, far past every plan's budget (1200 a
 * minute for ENTERPRISE): the bench raises the budgets instead of turning them off, so every request still takes
 * its unit (the counting is part of what is measured: in the process, or one upsert in PostgreSQL).
 */
const unlimitedBudgets = "FREE=100000000,PRO=100000000,ELITE=100000000,ENTERPRISE=100000000,ANONYMOUS=100000000"

const start = async (args, env) => {
  const port = await freePort()
  const child = spawn(process.execPath, args(port), {
    cwd: root,
    // The default configuration, as users run it: JSON access lines on standard output (a pipe here).
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      CONVENE_OPERATOR_TOKEN: OPERATOR,
      // BENCH_RATE_LIMITS=off measures without the counting, for comparison.
      CONVENE_RATE_LIMITS: process.env.BENCH_RATE_LIMITS ?? unlimitedBudgets,
      ...env
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  // The last 16 KiB of output, for the error message if the server dies (the access lines are many).
  let output = ""
  const keep = (c) => (output = (output + c).slice(-16_384))
  child.stdout.on("data", keep)
  child.stderr.on("data", keep)
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`exited: ${output}`)
    // Convene answers /readyz 503 until its store is open; the baseline 404 once it listens.
    const up = await fetch(`${url}/readyz`).then((r) => r.status < 500, () => false)
    if (up) break
    if (i > 1200) throw new Error(`not up after 60 s: ${output}`)
    await new Promise((r) => setTimeout(r, 50))
  }
  return {
    url,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill("SIGTERM")
        await once(child, "exit")
      }
    }
  }
}

const call = async (url, method, path, token, body) => {
  const response = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  const json = await response.json()
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`)
  return json
}

/** Provisions through Convene's operator API and creates 120 meetings; answers what the baseline needs. */
const seed = async (url) => {
  const ws = await call(url, "POST", "/operator/v1/workspaces", OPERATOR, { name: "Bench", plan: "ENTERPRISE" })
  const user = await call(url, "POST", `/operator/v1/workspaces/${ws.id}/users`, OPERATOR, {
    email: `bench-${randomUUID()}@example.com`, name: "Bench", role: "OWNER"
  })
  const pat = await call(url, "POST", `/operator/v1/users/${user.id}/tokens`, OPERATOR, {
    kind: "personal_access_token", scopes: ["meetings:read", "meetings:write", "action-items:read", "action-items:write"], expiry_days: 30
  })
  for (let i = 0; i < 120; i += 10) {
    await Promise.all(Array.from({ length: 10 }, (_, j) =>
      call(url, "POST", "/v1/meetings", pat.token, { title: `Meeting ${i + j}`, start_time: "2026-12-01T09:00:00Z" })))
  }
  const first = await call(url, "GET", "/v1/meetings?limit=100", pat.token)
  const rest = await call(url, "GET", "/v1/meetings?limit=100&offset=100", pat.token)
  return { token: pat.token, workspaceId: ws.id, userId: user.id, meetings: [...first.items, ...rest.items] }
}

const load = (url, scenario, token, meetingId) => {
  const out = execFileSync(process.execPath, [join(root, "bench/load.mjs"), url, scenario, token, meetingId, seconds, warmup, connections], {
    encoding: "utf8"
  })
  return JSON.parse(out.trim().split("\n").pop())
}

const measure = (url, data) =>
  Object.fromEntries(scenarios.map((scenario) => [scenario, load(url, scenario, data.token, data.meetings[0].id)]))

const dir = mkdtempSync(join(tmpdir(), "convene-bench-"))
const results = []
try {
  for (const store of stores) {
    let env = {}
    let target = ""
    let cleanup = async () => {}
    if (store === "memory") env = { CONVENE_STORE: "memory" }
    if (store === "pglite") {
      target = join(dir, "pglite")
      env = { CONVENE_DATA_DIR: target }
    }
    if (store === "pg") {
      const name = `convene_bench_${randomUUID().replaceAll("-", "").slice(0, 16)}`
      const admin = new pg.Client({ connectionString: serverUrl })
      await admin.connect()
      await admin.query(`CREATE DATABASE ${name}`)
      const url = new URL(serverUrl)
      url.pathname = `/${name}`
      target = url.toString()
      env = { DATABASE_URL: target }
      cleanup = async () => {
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
        await admin.end()
      }
    }
    try {
      const convene = await start(() => [join(root, "packages/http/dist/main.js")], env)
      const data = await seed(convene.url)
      const conveneResults = measure(convene.url, data)
      await convene.stop()
      const seedFile = join(dir, `seed-${store}.json`)
      writeFileSync(seedFile, JSON.stringify(data))
      const baseline = await start((port) => [join(root, "bench/baseline.mjs"), store, String(port), seedFile, target], {})
      const baselineResults = measure(baseline.url, data)
      await baseline.stop()
      for (const scenario of scenarios) {
        const line = {
          store,
          scenario,
          convene: conveneResults[scenario],
          baseline: baselineResults[scenario],
          ratio: Number((conveneResults[scenario].rps / baselineResults[scenario].rps).toFixed(3))
        }
        results.push(line)
        console.log(JSON.stringify(line))
      }
    } finally {
      await cleanup()
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
console.error(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), ${Math.round(totalmem() / 2 ** 30)} GiB, node ${process.version}; ${connections} connections, ${seconds} s after ${warmup} s warm-up`)
