// The load generator, in its own process: autocannon against one scenario, after a warm-up.
//   node bench/load.mjs <baseUrl> <scenario> <token> <meetingId> <seconds> <warmupSeconds> <connections>
// Prints one JSON object: { rps, p50, p99, errors, non2xx, requests }.
import autocannon from "autocannon"
import { randomUUID } from "node:crypto"

const [url, scenario, token, meetingId, seconds, warmup, connections] = process.argv.slice(2)
const auth = { authorization: `Bearer ${token}` }

const requests = {
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
}[scenario]

const run = (duration) =>
  autocannon({ url, connections: Number(connections), pipelining: 1, duration, requests })

await run(Number(warmup))
const result = await run(Number(seconds))
console.log(JSON.stringify({
  rps: Math.round(result.requests.average),
  p50: result.latency.p50,
  p99: result.latency.p99,
  errors: result.errors + result.timeouts,
  non2xx: result.non2xx,
  requests: result.requests.total
}))
