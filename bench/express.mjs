// The Express 5 peer: the baseline's work (bench/stores.mjs) served the way an Express user would write it: the
// token checked in a middleware, express.json() for the body, routes with parameters, async handlers (Express 5
// passes their rejections to the error handler). ETag and X-Powered-By are off so the answers carry the same
// headers and hashing work as the other servers'.
//
//   node bench/express.mjs <memory|pglite|pg> <port> <seed.json> [dataDir | databaseUrl]
import express from "express"
import { authenticate, bodies, fingerprint, isMeetingId, pageLimit, fromArgs } from "./stores.mjs"

const { mode, port, store } = await fromArgs(process.argv.slice(2))
const app = express()
app.set("etag", false)
app.disable("x-powered-by")

// Before the body parser, as the baseline: a request without a valid token is refused unread.
app.use(async (req, res, next) => {
  const { principal, error } = await authenticate(store, req.headers.authorization)
  if (error) return res.status(401).type("json").send(error)
  req.principal = principal
  next()
})
app.use(express.json())

app.get("/v1/meetings", async (req, res) => {
  const limit = pageLimit(req.query.limit)
  const page = await store.meetings(req.principal.workspace_id, limit)
  res.json({ items: page.items, total: page.total, limit, offset: 0 })
})

app.get("/v1/meetings/:id", async (req, res, next) => {
  if (!isMeetingId(req.params.id)) return next()
  const meeting = await store.meeting(req.principal.workspace_id, req.params.id)
  if (meeting) res.json(meeting)
  else res.status(404).type("json").send(bodies.notFound)
})

app.post("/v1/action-items", async (req, res) => {
  const outcome = await store.createAction(req.principal, req.get("idempotency-key"), fingerprint(req.originalUrl, req.body), req.body)
  res.type("json")
  if (outcome.created) res.status(201).send(outcome.created)
  else if (outcome.replay) res.status(201).set("idempotent-replayed", "true").send(outcome.replay)
  else if (outcome.reuse) res.status(422).send(bodies.keyReuse)
  else res.status(404).send(bodies.notFound)
})

app.use((req, res) => res.status(404).type("json").send(bodies.notFound))
app.use((error, req, res, next) => {
  if (res.headersSent) return next(error)
  res.status(500).type("json").send(bodies.internal(error))
})

app.listen(port, "127.0.0.1", () => console.log(`express ${mode} listening on ${port}`))
