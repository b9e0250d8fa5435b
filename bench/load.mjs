// The load generator, in its own process: autocannon against each scenario, all warm-ups first, then `runs`
// measured runs of each scenario in turn.
//   node bench/load.mjs <baseUrl> <scenario[,scenario…]> <token> <meetingId> <seconds> <warmupSeconds> <connections> [runs=1]
// Prints JSON lines: {"phase":"warmed"} after the warm-ups, then waits for a line (or the end) on standard input, so
// that the runner reads the server's idle memory first; {"phase":"start","scenario":…} before each scenario's runs;
// and one { scenario, rps, p50, p99, errors, timeouts, non2xx, requests } per measured run (errors include timeouts).
import autocannon from "autocannon"
import { randomUUID } from "node:crypto"
import { once } from "node:events"

const [url, scenarios, token, meetingId, seconds, warmup, connections, runs = "1"] = process.argv.slice(2)
const auth = { authorization: `Bearer ${token}` }

const requestsOf = (scenario) => ({
  "get-meeting": [{ method: "GET", path: `/v1/meetings/${meetingId}`, headers: auth }],
  "list-meetings": [{ method: "GET", path: "/v1/meetings?limit=100", headers: auth }],
  "create-action-item": [{
    method: "POST",
    path: "/v1/action-items",
    setupRequest: (request) => ({
      ...request,
      headers: { ...auth, "content-type": "application/json", "idempotency-key": randomUUID() },
      body: JSON.stringify({ meeting_id: meetingId, title: "Benchmark follow-up" })
    })
  }]
}[scenario])

const run = (scenario, duration) =>
  autocannon({ url, connections: Number(connections), pipelining: 1, duration, requests: requestsOf(scenario) })

const list = scenarios.split(",")
if (Number(warmup) > 0) for (const scenario of list) await run(scenario, Number(warmup))
console.log(JSON.stringify({ phase: "warmed" }))
await Promise.race([once(process.stdin, "data"), once(process.stdin, "end")])
process.stdin.destroy()
for (const scenario of list) {
  console.log(JSON.stringify({ phase: "start", scenario }))
  for (let i = 0; i < Number(runs); i++) {
    const result = await run(scenario, Number(seconds))
    console.log(JSON.stringify({
      scenario,
      rps: Math.round(result.requests.average),
      p50: result.latency.p50,
      p99: result.latency.p99,
      errors: result.errors + result.timeouts,
      timeouts: result.timeouts,
      non2xx: result.non2xx,
      requests: result.requests.total
    }))
  }
}
