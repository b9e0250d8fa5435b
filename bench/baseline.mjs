// The bare node:http baseline: the same work as Convene for the benchmarked endpoints, with nothing else. For each
// request: parse the bearer token, hash it and look the hash up, check expiry/revocation, read (or write) the rows,
// write the JSON. No framework, no schemas, no tracing, no error envelope beyond a status. The store work is
// bench/stores.mjs, shared with the Fastify and Express peers.
//
//   node bench/baseline.mjs <memory|pglite|pg> <port> <seed.json> [dataDir | databaseUrl]
import { createServer } from "node:http"
import { authenticate, bodies, fingerprint, isMeetingId, pageLimit, fromArgs } from "./stores.mjs"

const { mode, port, store } = await fromArgs(process.argv.slice(2))

const send = (res, status, body, headers = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers })
  res.end(body)
}

const readBody = (req) =>
  new Promise((resolve, reject) => {
    let data = ""
    req.setEncoding("utf8")
    req.on("data", (chunk) => (data += chunk))
    req.on("end", () => resolve(data))
    req.on("error", reject)
  })

createServer(async (req, res) => {
  try {
    const { principal, error } = await authenticate(store, req.headers.authorization)
    if (error) return send(res, 401, error)
    const url = new URL(req.url, "http://x")
    if (req.method === "GET" && url.pathname === "/v1/meetings") {
      const limit = pageLimit(url.searchParams.get("limit") ?? undefined)
      const page = await store.meetings(principal.workspace_id, limit)
      return send(res, 200, JSON.stringify({ items: page.items, total: page.total, limit, offset: 0 }))
    }
    const id = url.pathname.startsWith("/v1/meetings/") ? url.pathname.slice("/v1/meetings/".length) : ""
    if (req.method === "GET" && isMeetingId(id)) {
      const meeting = await store.meeting(principal.workspace_id, id)
      return meeting ? send(res, 200, JSON.stringify(meeting)) : send(res, 404, bodies.notFound)
    }
    if (req.method === "POST" && url.pathname === "/v1/action-items") {
      const body = JSON.parse(await readBody(req))
      const outcome = await store.createAction(principal, req.headers["idempotency-key"], fingerprint(req.url, body), body)
      if (outcome.created) return send(res, 201, outcome.created)
      if (outcome.replay) return send(res, 201, outcome.replay, { "idempotent-replayed": "true" })
      if (outcome.reuse) return send(res, 422, bodies.keyReuse)
      return send(res, 404, bodies.notFound)
    }
    send(res, 404, bodies.notFound)
  } catch (error) {
    send(res, 500, bodies.internal(error))
  }
}).listen(port, "127.0.0.1", () => console.log(`baseline ${mode} listening on ${port}`))
