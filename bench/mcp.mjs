// The MCP endpoint (issue 15) against the REST endpoint it wraps, on the same server in the default configuration but
// for the request budgets (CONVENE_RATE_LIMITS=off: one load generator would otherwise measure 429s):
//   get_meeting over /mcp (tools/call in a session: the meeting, its participants, agenda and action items) against
//   GET /v1/meetings/{id} + /participants + /v1/agenda-items + /v1/action-items (the four REST calls it stands for),
//   each made one after another by `sessions` clients at once (each MCP client in a session of its own), for
//   BENCH_SECONDS; and the cost of starting a session (initialize + notifications/initialized).
// Raw JSON-RPC over fetch (what any MCP client sends), the answers read whole (the transport answers a POST as an
// event stream). Prints one JSON line per run. `pnpm bench:mcp` (BENCH_STORES=memory,pglite, BENCH_SECONDS=10,
// BENCH_SESSIONS=8, BENCH_RUNS=3).
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { caller, provision, startBenchServer } from "./support.mjs"

const env = process.env
const stores = (env.BENCH_STORES ?? "memory,pglite").split(",")
const seconds = Number(env.BENCH_SECONDS ?? 10)
const runs = Number(env.BENCH_RUNS ?? 3)
const sessions = Number(env.BENCH_SESSIONS ?? 8)
const OPERATOR = randomUUID()


/** A JSON-RPC exchange at /mcp: the answer's message (read from the event stream or the JSON body) and headers. */
const rpc = async (url, token, session, message) => {
  const response = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(session === undefined ? {} : { "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" })
    },
    body: JSON.stringify(message)
  })
  const text = await response.text()
  if (response.status >= 300) throw new Error(`${message.method}: ${response.status} ${text}`)
  const data = text.split("\n").find((line) => line.startsWith("data: "))
  return { headers: response.headers, message: text === "" ? undefined : JSON.parse(data === undefined ? text : data.slice(6)) }
}

const startSession = async (url, token) => {
  const opened = await rpc(url, token, undefined, {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } }
  })
  const session = opened.headers.get("mcp-session-id")
  await rpc(url, token, session, { jsonrpc: "2.0", method: "notifications/initialized" })
  return session
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]

/** `clients` loops, each calling `call(client)` one after another for `seconds`: rate and latencies. */
const measure = async (clients, call) => {
  const latencies = []
  const deadline = performance.now() + seconds * 1000
  await Promise.all(clients.map(async (client) => {
    while (performance.now() < deadline) {
      const started = performance.now()
      await call(client)
      latencies.push(performance.now() - started)
    }
  }))
  latencies.sort((a, b) => a - b)
  return {
    perSecond: Math.round(latencies.length / seconds),
    p50: +percentile(latencies, 50).toFixed(1),
    p99: +percentile(latencies, 99).toFixed(1)
  }
}

for (const store of stores) {
  const dir = mkdtempSync(join(tmpdir(), "convene-bench-mcp-"))
  const server = await startBenchServer(OPERATOR, store === "memory" ? { CONVENE_STORE: "memory" } : { CONVENE_DATA_DIR: dir })
  try {
    const call = caller(server.url)
    const { token } = await provision(call, OPERATOR, ["meetings:read", "meetings:write", "action-items:read", "action-items:write"])
    const meeting = await call("POST", "/v1/meetings", token, { title: "Bench" })
    for (let i = 0; i < 10; i++) {
      await call("POST", "/v1/agenda-items", token, { meeting_id: meeting.id, title: `Item ${i}` })
      await call("POST", "/v1/action-items", token, { meeting_id: meeting.id, title: `Action ${i}` })
    }
    const ids = await Promise.all(Array.from({ length: sessions }, () => startSession(server.url, token)))
    let next = 100
    const viaMcp = (session) =>
      rpc(server.url, token, session, {
        jsonrpc: "2.0",
        id: next++,
        method: "tools/call",
        params: { name: "get_meeting", arguments: { id: meeting.id } }
      }).then(({ message }) => {
        if (message.result?.isError !== false && message.result?.isError !== undefined) throw new Error(JSON.stringify(message))
      })
    const viaRest = () =>
      Promise.all([
        call("GET", `/v1/meetings/${meeting.id}`, token),
        call("GET", `/v1/meetings/${meeting.id}/participants`, token),
        call("GET", `/v1/agenda-items?meeting_id=${meeting.id}&limit=100`, token),
        call("GET", `/v1/action-items?meeting_id=${meeting.id}&limit=100`, token)
      ])
    await viaMcp(ids[0])
    for (let run = 0; run < runs; run++) {
      console.log(JSON.stringify({ store, scenario: "get_meeting over /mcp", sessions, run, ...(await measure(ids, viaMcp)) }))
      console.log(JSON.stringify({ store, scenario: "the same four REST reads", clients: sessions, run, ...(await measure(ids, viaRest)) }))
    }
    const opened = []
    const started = performance.now()
    while (performance.now() - started < 2000) opened.push(await startSession(server.url, token))
    console.log(JSON.stringify({ store, scenario: "session start (sequential)", perSecond: Math.round(opened.length / 2), meanMs: +(2000 / opened.length).toFixed(2) }))
  } finally {
    await server.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}
