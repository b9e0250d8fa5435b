// `node bench/cost.mjs <store> <scenario[,scenario…]> [requests]`: what a request costs the server, in CPU microseconds
// (user + system, every thread of the process, read from /proc before and after), for a fixed number of requests at
// BENCH_CONNECTIONS (default 50) after a warm-up of a quarter as many. Unlike req/s this hardly moves with what else
// the machine runs, so one change can be weighed against another (docs/benchmarks.md, "Cost per request").
// Scenarios: healthz, me, get-meeting, list-meetings, create-action-item. Stores: memory, pglite, pg (a database made
// for the run on the server DATABASE_URL names, default the local one, and dropped after it). BENCH_ROOT runs another
// checkout's compiled server (an older commit).
import autocannon from "autocannon"
import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import pg from "pg"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { caller, freePort, provision, waitReady } from "./support.mjs"

const [store = "memory", scenarioList = "get-meeting", count = "20000"] = process.argv.slice(2)
const root = process.env.BENCH_ROOT ?? fileURLToPath(new URL("..", import.meta.url))
const connections = Number(process.env.BENCH_CONNECTIONS ?? "50")
const OPERATOR = randomUUID()
const dataDir = mkdtempSync(join(tmpdir(), "convene-cost-"))
const port = await freePort()
const env = {
  ...process.env,
  PORT: String(port),
  HOST: "127.0.0.1",
  CONVENE_OPERATOR_TOKEN: OPERATOR,
  CONVENE_RATE_LIMITS: "FREE=100000000,PRO=100000000,ELITE=100000000,ENTERPRISE=100000000,ANONYMOUS=100000000",
  ...(store === "memory" ? { CONVENE_STORE: "memory" } : {}),
  ...(store === "pglite" ? { CONVENE_DATA_DIR: join(dataDir, "data") } : {})
}
const serverUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
const database = `convene_cost_${randomUUID().replaceAll("-", "").slice(0, 12)}`
if (store === "pg") {
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${database}`)
  await admin.end()
  const url = new URL(serverUrl)
  url.pathname = `/${database}`
  env.DATABASE_URL = url.href
}
const child = spawn(process.execPath, [join(root, "packages/http/dist/main.js")], { env, stdio: ["ignore", "ignore", "inherit"] })
const url = `http://127.0.0.1:${port}`

/** CPU microseconds the server has used so far (utime + stime are in clock ticks of 10 ms). */
const cpu = () => {
  const fields = readFileSync(`/proc/${child.pid}/stat`, "utf8").split(") ")[1].split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10_000
}

try {
  await waitReady(url, child, () => "")
  const call = caller(url)
  const { token } = await provision(call, OPERATOR, ["meetings:read", "meetings:write", "action-items:read", "action-items:write"])
  // 120 meetings, as the bench makes (list-meetings reads 100 of them).
  let first
  for (let i = 0; i < 120; i++) {
    const meeting = await call("POST", "/v1/meetings", token, { title: `Meeting ${i}`, start_time: "2026-12-01T09:00:00Z" })
    first ??= meeting
  }
  const auth = { authorization: `Bearer ${token}` }
  const requests = {
    healthz: [{ method: "GET", path: "/healthz" }],
    me: [{ method: "GET", path: "/v1/me", headers: auth }],
    "get-meeting": [{ method: "GET", path: `/v1/meetings/${first.id}`, headers: auth }],
    "list-meetings": [{ method: "GET", path: "/v1/meetings?limit=100", headers: auth }],
    "create-action-item": [{
      method: "POST",
      path: "/v1/action-items",
      setupRequest: (request) => ({
        ...request,
        headers: { ...auth, "content-type": "application/json", "idempotency-key": randomUUID() },
        body: JSON.stringify({ meeting_id: first.id, title: "Benchmark follow-up" })
      })
    }]
  }
  const load = (scenario, amount) => autocannon({ url, connections, amount, requests: requests[scenario] })
  for (const scenario of scenarioList.split(",")) {
    await load(scenario, Math.round(Number(count) / 4))
    const before = cpu()
    const result = await load(scenario, Number(count))
    const used = cpu() - before
    console.log(JSON.stringify({
      store,
      scenario,
      cpu_us_per_request: Math.round(used / result.requests.total),
      rps: Math.round(result.requests.average),
      p99: result.latency.p99,
      non2xx: result.non2xx,
      errors: result.errors + result.timeouts
    }))
  }
} finally {
  child.kill("SIGTERM")
  await new Promise((resolve) => child.on("exit", resolve))
  rmSync(dataDir, { recursive: true, force: true })
  if (store === "pg") {
    const admin = new pg.Client({ connectionString: serverUrl })
    await admin.connect()
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
    await admin.end()
  }
}
