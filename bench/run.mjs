// `pnpm bench`: Convene's production build (compiled JavaScript) against its peers doing the same work on the same
// stores: the bare node:http baseline (bench/baseline.mjs), Fastify 5 (bench/fastify.mjs) and Express 5
// (bench/express.mjs), loaded by autocannon from a separate process (bench/load.mjs). For each store, each server is
// started once (Convene first: it provisions the data the peers read), warmed up on every scenario, then measured
// BENCH_RUNS times per scenario; the run with the median req/s is reported. On Convene it also measures memory (RSS),
// idle keep-alive connections, cold start, scaling with connections and (memory and pglite) the list-meetings flood.
// Prints one JSON line per measurement on stdout, and the machine and wall time on stderr.
//
// Options (env):
//   BENCH_QUICK=1          a smoke run under two minutes: stores memory,pg, 1 run of 2 s after 1 s warm-up, settle
//                          5 s, no scaling or flood (unless asked for below)
//   BENCH_STORES=memory,pglite,pg  BENCH_RUNS=3  BENCH_SECONDS=10  BENCH_WARMUP=3  BENCH_CONNECTIONS=50
//   BENCH_SCALING=1        get-meeting on Convene and the baseline at 1, 10, 50 and 200 connections
//   BENCH_FLOOD=1          three BENCH_FLOOD_SECONDS=50 floods of list-meetings at 64 connections (memory, pglite)
//   BENCH_SETTLE=60        seconds after a load before the "after" RSS is read
//   BENCH_IDLE_CONNECTIONS=1000  keep-alive connections opened to measure what an idle one costs
//   BENCH_RATE_LIMITS      Convene's CONVENE_RATE_LIMITS (default: every budget raised, see below)
//   DATABASE_URL           the PostgreSQL server (default the local one); each run makes and drops its own database
import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { once } from "node:events"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { Agent, get } from "node:http"
import { connect } from "node:net"
import { createInterface } from "node:readline"
import { cpus, tmpdir, totalmem } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { freePort, sleep } from "./support.mjs"

const started = performance.now()
const root = fileURLToPath(new URL("..", import.meta.url))
const env = process.env
const quick = env.BENCH_QUICK === "1"
/** A switch: on in the full run and off in the quick one, unless set. */
const enabled = (name) => (env[name] === undefined ? !quick : env[name] === "1")
const stores = (env.BENCH_STORES ?? (quick ? "memory,pg" : "memory,pglite,pg")).split(",")
const runs = Number(env.BENCH_RUNS ?? (quick ? 1 : 3))
const seconds = Number(env.BENCH_SECONDS ?? (quick ? 2 : 10))
const warmup = Number(env.BENCH_WARMUP ?? (quick ? 1 : 3))
const connections = Number(env.BENCH_CONNECTIONS ?? 50)
const settle = Number(env.BENCH_SETTLE ?? (quick ? 5 : 60))
const scaling = enabled("BENCH_SCALING")
const flood = enabled("BENCH_FLOOD")
const floodSeconds = Number(env.BENCH_FLOOD_SECONDS ?? 50)
const idleConnections = Number(env.BENCH_IDLE_CONNECTIONS ?? 1000)
const serverUrl = env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
const scenarios = ["get-meeting", "create-action-item", "list-meetings"]
const peers = { baseline: "bench/baseline.mjs", fastify: "bench/fastify.mjs", express: "bench/express.mjs" }
const OPERATOR = randomUUID()

/**
 * The load spends tens of thousands of requests a minute with one credential, far past every plan's budget (1200 a
 * minute for ENTERPRISE): the bench raises the budgets instead of turning them off, so every request still takes
 * its unit (the counting is part of what is measured: in the process, or one upsert in PostgreSQL).
 */
const unlimitedBudgets = "FREE=100000000,PRO=100000000,ELITE=100000000,ENTERPRISE=100000000,ANONYMOUS=100000000"

const print = (line) => console.log(JSON.stringify(line))
const mib = (kib) => Math.round(kib / 102.4) / 10

/** Resident memory of a process in KiB, as the kernel counts it. */
const rss = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1])

/** Samples a process's RSS every 250 ms; `stop()` answers the peak in KiB. */
const sampleRss = (pid) => {
  let peak = rss(pid)
  const timer = setInterval(() => (peak = Math.max(peak, rss(pid))), 250)
  return { stop: () => (clearInterval(timer), Math.max(peak, rss(pid))) }
}

/**
 * Spawns a server and waits until it answers /readyz: Convene 200 once its store is open, a peer anything below 500
 * once it listens (it has no such route). `readyMs` is the time from spawn to that answer.
 */
const start = async (args, extraEnv, ready) => {
  const port = await freePort()
  const spawned = performance.now()
  const child = spawn(process.execPath, args(port), {
    cwd: root,
    // The default configuration, as users run it: JSON access lines on standard output (a pipe here).
    env: {
      ...env,
      PORT: String(port),
      HOST: "127.0.0.1",
      CONVENE_OPERATOR_TOKEN: OPERATOR,
      CONVENE_RATE_LIMITS: env.BENCH_RATE_LIMITS ?? unlimitedBudgets,
      ...extraEnv
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  // The last 16 KiB of output, for the error message if the server dies (the access lines are many).
  let output = ""
  const keep = (c) => (output = (output + c).slice(-16_384))
  child.stdout.on("data", keep)
  child.stderr.on("data", keep)
  const url = `http://127.0.0.1:${port}`
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${args(port)[0]} exited: ${output}`)
    if (await fetch(`${url}/readyz`).then((r) => ready(r.status), () => false)) break
    if (performance.now() - spawned > 120_000) throw new Error(`${args(port)[0]} not up after 120 s: ${output}`)
    await sleep(20)
  }
  return {
    url,
    pid: child.pid,
    readyMs: Math.round(performance.now() - spawned),
    stop: async () => {
      if (child.exitCode === null) {
        child.kill("SIGTERM")
        await once(child, "exit")
      }
    }
  }
}

const startConvene = (storeEnv) => start(() => [join(root, "packages/http/dist/main.js")], storeEnv, (status) => status === 200)
const startPeer = (file, store, seedFile, target) =>
  start((port) => [join(root, file), store, String(port), seedFile, target], {}, (status) => status < 500)

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

/** Provisions through Convene's operator API and creates 120 meetings; answers what the peers need. */
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

/**
 * Runs bench/load.mjs (its own process, so the load does not share this one's CPU time) and answers one result per
 * run. `onPhase` hears its markers as they come: after the warm-ups (the load waits until it returns) and before each
 * scenario's runs.
 */
const load = async (url, data, scenarioList, options, onPhase = () => {}) => {
  const { seconds: s = seconds, warmup: w = warmup, connections: c = connections, runs: n = runs } = options
  const args = [url, scenarioList.join(","), data.token, data.meetings[0].id, s, w, c, n].map(String)
  const child = spawn(process.execPath, [join(root, "bench/load.mjs"), ...args], { stdio: ["pipe", "pipe", "inherit"] })
  const results = []
  createInterface({ input: child.stdout }).on("line", (text) => {
    const line = JSON.parse(text)
    if (line.phase) onPhase(line)
    if (line.phase === "warmed") child.stdin.end("go\n")
    if (!line.phase) results.push(line)
  })
  // "close", not "exit": every line has been read by then.
  const [code] = await once(child, "close")
  onPhase({ phase: "end" })
  if (code !== 0) throw new Error(`load.mjs ${scenarioList} exited with ${code}`)
  return results
}

/** The run with the median req/s (the lower middle one for an even count), the spread, and the failures of all runs. */
const summarize = (results) => {
  const sorted = [...results].sort((a, b) => a.rps - b.rps)
  const median = sorted[Math.floor((sorted.length - 1) / 2)]
  const sum = (key) => results.reduce((n, r) => n + r[key], 0)
  return {
    rps: median.rps,
    p50: median.p50,
    p99: median.p99,
    min: sorted[0].rps,
    max: sorted.at(-1).rps,
    errors: sum("errors"),
    timeouts: sum("timeouts"),
    non2xx: sum("non2xx"),
    requests: sum("requests"),
    runs: results.length
  }
}

/**
 * Warms up on every scenario, then measures each BENCH_RUNS times. With `pid` (Convene) it also reads RSS: after the
 * warm-up, at its peak during the list-meetings runs, and BENCH_SETTLE seconds after them.
 */
const measure = async (server, data, pid) => {
  const memory = {}
  let sampler
  const onPhase = (line) => {
    if (!pid) return
    if (line.phase === "warmed") memory.after_warmup = mib(rss(pid))
    if (sampler) memory.peak_list_meetings = mib(sampler.stop())
    sampler = line.phase === "start" && line.scenario === "list-meetings" ? sampleRss(pid) : undefined
  }
  const all = await load(server.url, data, scenarios, {}, onPhase)
  const results = Object.fromEntries(scenarios.map((scenario) => [scenario, summarize(all.filter((r) => r.scenario === scenario))]))
  if (pid) {
    await sleep(settle * 1000)
    memory.after_settle = mib(rss(pid))
  }
  return { results, memory }
}

/** get-meeting at growing connection counts, one run each after a 1 s warm-up at that count. */
const scale = async (server, data) => {
  const out = {}
  for (const c of [1, 10, 50, 200]) {
    const [r] = await load(server.url, data, ["get-meeting"], { connections: c, warmup: 1, runs: 1 })
    out[c] = { rps: r.rps, p99: r.p99, errors: r.errors, timeouts: r.timeouts, non2xx: r.non2xx }
  }
  return out
}

/**
 * What an idle keep-alive connection costs the server: `n` raw sockets each send one GET /healthz and stay open after
 * the answer; the RSS delta over `n`. Opened 100 at a time so the accept backlog does not overflow.
 */
const idleConnectionCost = async (server, n) => {
  const { port } = new URL(server.url)
  await sleep(1000)
  const before = rss(server.pid)
  const sockets = []
  for (let i = 0; i < n; i += 100) {
    await Promise.all(Array.from({ length: Math.min(100, n - i) }, () => new Promise((resolve, reject) => {
      const socket = connect(Number(port), "127.0.0.1", () => socket.write("GET /healthz HTTP/1.1\r\nhost: bench\r\n\r\n"))
      socket.once("data", resolve)
      socket.once("error", reject)
      sockets.push(socket)
    })))
  }
  await sleep(1000)
  const open = rss(server.pid)
  const stillOpen = sockets.filter((s) => !s.destroyed && s.readyState === "open").length
  for (const s of sockets) s.destroy()
  return {
    connections: n,
    still_open: stillOpen,
    rss_before_mib: mib(before),
    rss_open_mib: mib(open),
    bytes_per_connection: Math.round(((open - before) * 1024) / n)
  }
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]

/** One client asking GET /v1/me every 100 ms on its own keep-alive connection; `stop()` answers its latencies. */
const probe = (url, token) => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const ask = () => new Promise((resolve) => {
    const t0 = performance.now()
    get(`${url}/v1/me`, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.resume()
      res.on("end", () => resolve({ ok: res.statusCode === 200, ms: performance.now() - t0 }))
    }).on("error", () => resolve({ ok: false, ms: performance.now() - t0 }))
  })
  let running = true
  const samples = []
  const loop = (async () => {
    while (running) {
      const sample = await ask()
      samples.push(sample)
      await sleep(Math.max(0, 100 - sample.ms))
    }
  })()
  return {
    stop: async () => {
      running = false
      await loop
      agent.destroy()
      const ms = samples.map((s) => s.ms).sort((a, b) => a - b)
      const round = (v) => Math.round(v * 10) / 10
      return { requests: samples.length, failed: samples.filter((s) => !s.ok).length, p50: round(percentile(ms, 50)), p99: round(percentile(ms, 99)), max: round(ms.at(-1)) }
    }
  }
}

/**
 * The flood: three back-to-back floods of list-meetings at 64 connections while one small client reads
 * GET /v1/me every 100 ms (are small requests starved by large ones?), and whether the memory comes back after.
 */
const floodTest = async (server, data) => {
  const idle = rss(server.pid)
  const me = probe(server.url, data.token)
  const floods = []
  let peak = idle
  for (let i = 0; i < 3; i++) {
    const sampler = sampleRss(server.pid)
    const [r] = await load(server.url, data, ["list-meetings"], { seconds: floodSeconds, warmup: 0, connections: 64, runs: 1 })
    const floodPeak = sampler.stop()
    peak = Math.max(peak, floodPeak)
    floods.push({ rps: r.rps, p99: r.p99, errors: r.errors, timeouts: r.timeouts, non2xx: r.non2xx, peak_rss_mib: mib(floodPeak) })
  }
  const small = await me.stop()
  await sleep(settle * 1000)
  const after = rss(server.pid)
  return {
    connections: 64,
    seconds: floodSeconds,
    floods,
    me: small,
    rss_idle_mib: mib(idle),
    rss_peak_mib: mib(peak),
    rss_after_mib: mib(after),
    after_to_idle: Math.round((after / idle) * 100) / 100
  }
}

/** A fresh store for one run: the store's Convene environment, the peers' target, and how to drop it. */
const makeTarget = async (store, dir) => {
  if (store === "memory") return { env: { CONVENE_STORE: "memory" }, target: "", cleanup: async () => {} }
  if (store === "pglite") {
    const target = join(dir, "pglite")
    return { env: { CONVENE_DATA_DIR: target }, target, cleanup: async () => {} }
  }
  const name = `convene_bench_${randomUUID().replaceAll("-", "").slice(0, 16)}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return {
    env: { DATABASE_URL: url.toString() },
    target: url.toString(),
    cleanup: async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await admin.end()
    }
  }
}

const ratio = (a, b) => Number((a.rps / b.rps).toFixed(3))

const benchStore = async (store, dir) => {
  const { env: storeEnv, target, cleanup } = await makeTarget(store, dir)
  try {
    const convene = await startConvene(storeEnv)
    const data = await seed(convene.url)
    // On the fresh server, before the load leaves garbage whose collection would blur the delta.
    const idle = await idleConnectionCost(convene, idleConnections)
    const conveneRun = await measure(convene, data, convene.pid)
    print({ store, memory_mib: { ...conveneRun.memory, settle_s: settle } })
    print({ store, idle_connections: idle })
    // The case is the embedded store (and memory, which holds everything in the process); right after the
    // settle, so that its "idle" reading is one.
    if (flood && store !== "pg") print({ store, flood: await floodTest(convene, data) })
    const scaled = scaling ? { convene: await scale(convene, data) } : undefined
    await convene.stop()
    // The embedded store is started again on its data directory: no initdb the second time.
    const cold = { first_start_ms: convene.readyMs }
    if (store === "pglite") {
      const again = await startConvene(storeEnv)
      cold.second_start_ms = again.readyMs
      await again.stop()
    }
    print({ store, cold_start: cold })

    const seedFile = join(dir, `seed-${store}.json`)
    writeFileSync(seedFile, JSON.stringify(data))
    const peerResults = {}
    for (const [name, file] of Object.entries(peers)) {
      const server = await startPeer(file, store, seedFile, target)
      peerResults[name] = (await measure(server, data)).results
      if (scaled && name === "baseline") scaled.baseline = await scale(server, data)
      await server.stop()
    }
    for (const scenario of scenarios) {
      const c = conveneRun.results[scenario]
      const [baseline, fastify, express] = Object.keys(peers).map((name) => peerResults[name][scenario])
      print({
        store,
        scenario,
        convene: c,
        baseline,
        fastify,
        express,
        ratio: ratio(c, baseline),
        ratio_fastify: ratio(c, fastify),
        ratio_express: ratio(c, express)
      })
    }
    if (scaled) {
      const levels = Object.keys(scaled.convene)
      print({ store, scaling: Object.fromEntries(levels.map((c) => [c, { convene: scaled.convene[c], baseline: scaled.baseline[c] }])) })
    }
  } finally {
    await cleanup()
  }
}

const dir = mkdtempSync(join(tmpdir(), "convene-bench-"))
try {
  for (const store of stores) await benchStore(store, dir)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
const wall = Math.round((performance.now() - started) / 1000)
console.error(
  `machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), ${Math.round(totalmem() / 2 ** 30)} GiB, node ${process.version}; ` +
    `${connections} connections, ${runs} run(s) of ${seconds} s after ${warmup} s warm-up per scenario${quick ? " (quick)" : ""}; ` +
    `wall time ${wall} s`
)
