// `pnpm bench:webhooks`: the outbox, the delivery worker and the event stream of one server process (the compiled
// server, default configuration, on a throwaway database of the PostgreSQL server) against an HTTPS receiver in
// this process that answers every delivery 200. Prints one JSON line per measure:
// - latency: meetings created one after another (20 a second); from each 201 (the change committed) to the
//   receiver holding its delivery: p50, p99, max.
// - throughput: 10 endpoints subscribed to meeting.created, so each create makes 10 deliveries; 16 clients create
//   meetings for BENCH_SECONDS; deliveries received per second over the run, and those still owed at its end.
// - streams: resident memory of the server process before and after opening BENCH_STREAMS idle event streams.
// Options (env): BENCH_SECONDS=10 BENCH_STREAMS=10000 DATABASE_URL (server; default the local one), BENCH_SERVER_ARGS,
// BENCH_ONLY (a comma-separated list of latency, throughput, streams: runs only those measures, in a fresh server).
import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { once } from "node:events"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { request as httpRequest, Agent } from "node:http"
import { createServer } from "node:https"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { generate } from "selfsigned"
import { caller, freePort, provision, sleep, waitReady } from "./support.mjs"

const root = fileURLToPath(new URL("..", import.meta.url))
const seconds = Number(process.env.BENCH_SECONDS ?? "10")
const streamCount = Number(process.env.BENCH_STREAMS ?? "10000")
const serverUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
const OPERATOR = randomUUID()
const only = process.env.BENCH_ONLY?.split(",").map((measure) => measure.trim())
const runs = (measure) => only === undefined || only.includes(measure)

// A certificate authority and a certificate for 127.0.0.1 it signed; the server trusts it via NODE_EXTRA_CA_CERTS.
const validity = { notBeforeDate: new Date(Date.now() - 3_600_000), notAfterDate: new Date(Date.now() + 86_400_000) }
const ca = await generate([{ name: "commonName", value: "Convene bench CA" }], {
  keyType: "ec",
  algorithm: "sha256",
  ...validity,
  extensions: [
    { name: "basicConstraints", cA: true, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true }
  ]
})
const leaf = await generate([{ name: "commonName", value: "127.0.0.1" }], {
  keyType: "ec",
  algorithm: "sha256",
  ...validity,
  ca: { key: ca.private, cert: ca.cert },
  extensions: [
    { name: "basicConstraints", cA: false, critical: true },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "extKeyUsage", serverAuth: true },
    { name: "subjectAltName", altNames: [{ type: 7, ip: "127.0.0.1" }] }
  ]
})
const scratch = mkdtempSync(join(tmpdir(), "convene-bench-webhooks-"))
const caFile = join(scratch, "ca.pem")
writeFileSync(caFile, ca.cert)

// The receiver: echoes challenges, answers 200, notes when each meeting's delivery arrived (per path).
const arrivals = new Map()
let received = 0
const receiver = createServer({ key: leaf.private, cert: leaf.cert }, (request, response) => {
  const chunks = []
  request.on("data", (chunk) => chunks.push(chunk))
  request.on("end", () => {
    const envelope = JSON.parse(Buffer.concat(chunks).toString("utf8"))
    if (envelope.event_type === "webhook.verification") {
      response.end(envelope.data.verification_token)
      return
    }
    received++
    const key = `${request.url} ${envelope.data.id}`
    if (!arrivals.has(key)) arrivals.set(key, performance.now())
    response.end("ok")
  })
})
receiver.listen(0, "127.0.0.1")
await once(receiver, "listening")
const receiverUrl = `https://127.0.0.1:${receiver.address().port}`

// A throwaway database on the PostgreSQL server.
const database = `convene_bench_${randomUUID().replaceAll("-", "").slice(0, 16)}`
const admin = new pg.Client({ connectionString: serverUrl })
await admin.connect()
await admin.query(`CREATE DATABASE ${database}`)
const databaseUrl = new URL(serverUrl)
databaseUrl.pathname = `/${database}`

const port = await freePort()
// BENCH_SERVER_ARGS: node flags for the server process (say `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it).
const serverArgs = (process.env.BENCH_SERVER_ARGS ?? "").split(" ").filter((arg) => arg !== "")
const child = spawn(process.execPath, [...serverArgs, join(root, "packages/http/dist/main.js")], {
  cwd: root,
  env: {
    ...process.env,
    PORT: String(port),
    HOST: "127.0.0.1",
    DATABASE_URL: databaseUrl.toString(),
    CONVENE_OPERATOR_TOKEN: OPERATOR,
    NODE_EXTRA_CA_CERTS: caFile,
    CONVENE_OUTBOUND_ALLOW_HOSTS: "127.0.0.1",
    // The streams measure holds many connections of one credential.
    CONVENE_MAX_CONNECTIONS: String(streamCount + 200),
    CONVENE_STREAMS_PER_CREDENTIAL: String(streamCount),
    // The load creates thousands of meetings a minute with one credential, past every plan's budget: budgets raised
    // so that every request is still counted (in PostgreSQL here) but none refused.
    CONVENE_RATE_LIMITS: "FREE=100000000,PRO=100000000,ELITE=100000000,ENTERPRISE=100000000,ANONYMOUS=100000000"
  },
  stdio: ["ignore", "pipe", "pipe"]
})
let output = ""
child.stdout.on("data", (chunk) => (output = (output + chunk).slice(-16_384)))
child.stderr.on("data", (chunk) => (output = (output + chunk).slice(-16_384)))
const url = `http://127.0.0.1:${port}`

const finish = async () => {
  child.kill("SIGTERM")
  await once(child, "exit").catch(() => {})
  receiver.close()
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => {})
  await admin.end()
  rmSync(scratch, { recursive: true, force: true })
}

try {
  await waitReady(url, child, () => output)
  const call = caller(url)
  const { token } = await provision(call, OPERATOR, ["meetings:read", "meetings:write", "workspace:read", "workspace:write"])
  const createEndpoint = async (path) => {
    const created = await call("POST", "/v1/workspace/webhooks", token, {
      url: `${receiverUrl}${path}`,
      subscribed_events: ["meeting.created"]
    })
    for (;;) {
      const list = await call("GET", "/v1/workspace/webhooks?limit=100", token)
      if (list.items.find((endpoint) => endpoint.id === created.webhook.id)?.verification_state === "verified") return
      await sleep(50)
    }
  }
  const createMeeting = (title) => call("POST", "/v1/meetings", token, { title, start_time: "2026-12-01T09:00:00Z" })
  const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]

  // Latency: one endpoint, 200 creates at 20 a second.
  if (runs("latency")) {
    await createEndpoint("/latency")
    const committed = new Map()
    for (let i = 0; i < 200; i++) {
      const meeting = await createMeeting(`latency ${i}`)
      committed.set(meeting.id, performance.now())
      await sleep(50)
    }
    const deadline = Date.now() + 30_000
    while ([...committed.keys()].some((id) => !arrivals.has(`/latency ${id}`)) && Date.now() < deadline) await sleep(50)
    const latencies = [...committed].map(([id, at]) => (arrivals.get(`/latency ${id}`) ?? Infinity) - at).sort((a, b) => a - b)
    console.log(JSON.stringify({
      measure: "commit-to-receiver latency (ms), first attempt",
      deliveries: latencies.length,
      p50: Math.round(percentile(latencies, 50)),
      p99: Math.round(percentile(latencies, 99)),
      max: Math.round(latencies[latencies.length - 1])
    }))
  }

  // Throughput: 10 more endpoints; the latency endpoint gets its share too (11 deliveries per create).
  if (runs("throughput")) {
    if (!runs("latency")) await createEndpoint("/latency")
    for (let e = 0; e < 10; e++) await createEndpoint(`/throughput-${e}`)
    const before = received
    let creates = 0
    const started = performance.now()
    const stopAt = Date.now() + seconds * 1000
    await Promise.all(Array.from({ length: 16 }, async (_, w) => {
      for (let i = 0; Date.now() < stopAt; i++) {
        await createMeeting(`throughput ${w}-${i}`)
        creates++
      }
    }))
    const loadEnded = performance.now()
    const owed = creates * 11
    const receivedDuringLoad = received - before
    const drainDeadline = Date.now() + 120_000
    while (received - before < owed && Date.now() < drainDeadline) await sleep(20)
    const drained = performance.now()
    console.log(JSON.stringify({
      measure: "delivery throughput (one process, 11 endpoints)",
      seconds,
      creates_per_second: Math.round(creates / ((loadEnded - started) / 1000)),
      deliveries_owed: owed,
      deliveries_per_second_during_load: Math.round(receivedDuringLoad / ((loadEnded - started) / 1000)),
      deliveries_per_second_overall: Math.round((received - before) / ((drained - started) / 1000)),
      seconds_to_deliver_all: Number(((drained - started) / 1000).toFixed(1)),
      delivered: received - before
    }))
  }

  // Idle event streams: resident memory of the server process.
  if (runs("streams")) {
    const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))[1]) / 1024
    await sleep(1_000)
    const rssBefore = rss()
    const agent = new Agent({ keepAlive: true, maxSockets: Infinity })
    const streams = []
    let opened = 0
    const open = () =>
      new Promise((resolve, reject) => {
        const request = httpRequest(`${url}/v1/user/events`, { agent, headers: { authorization: `Bearer ${token}` } }, (response) => {
          if (response.statusCode !== 200) reject(new Error(`stream ${response.statusCode}`))
          response.once("data", () => {
            opened++
            resolve()
          })
          response.on("data", () => {})
        })
        request.on("error", reject)
        streams.push(request)
        request.end()
      })
    const openStarted = performance.now()
    for (let i = 0; i < streamCount; i += 200) {
      await Promise.all(Array.from({ length: Math.min(200, streamCount - i) }, open))
    }
    const openSeconds = (performance.now() - openStarted) / 1000
    await sleep(3_000)
    const rssAfter = rss()
    console.log(JSON.stringify({
      measure: "idle event streams (one process)",
      streams: opened,
      seconds_to_open: Number(openSeconds.toFixed(1)),
      rss_before_mb: Math.round(rssBefore),
      rss_after_mb: Math.round(rssAfter),
      rss_per_stream_kb: Number((((rssAfter - rssBefore) * 1024) / opened).toFixed(1))
    }))
    for (const request of streams) request.destroy()
    agent.destroy()
  }
} finally {
  await finish()
}
