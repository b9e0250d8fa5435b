// The Fastify 5 peer: the baseline's work (bench/stores.mjs) served the way a Fastify user would write it: the
// token checked in an onRequest hook, routes with parameters, the JSON body parsed by the framework, and answers
// through reply.code().header().send(). Logging off, as Fastify's default.
//
//   node bench/fastify.mjs <memory|pglite|pg> <port> <seed.json> [dataDir | databaseUrl]
import Fastify from "fastify"
import { authenticate, bodies, fingerprint, isMeetingId, pageLimit, fromArgs } from "./stores.mjs"

const { mode, port, store } = await fromArgs(process.argv.slice(2))
const json = "application/json"
const app = Fastify()

app.decorateRequest("principal", null)
app.addHook("onRequest", async (request, reply) => {
  const { principal, error } = await authenticate(store, request.headers.authorization)
  if (error) return reply.code(401).header("content-type", json).send(error)
  request.principal = principal
})

app.get("/v1/meetings", async (request, reply) => {
  const limit = pageLimit(request.query.limit)
  const page = await store.meetings(request.principal.workspace_id, limit)
  return reply.code(200).header("content-type", json).send({ items: page.items, total: page.total, limit, offset: 0 })
})

app.get("/v1/meetings/:id", async (request, reply) => {
  const meeting = isMeetingId(request.params.id) ? await store.meeting(request.principal.workspace_id, request.params.id) : undefined
  return meeting
    ? reply.code(200).header("content-type", json).send(meeting)
    : reply.code(404).header("content-type", json).send(bodies.notFound)
})

app.post("/v1/action-items", async (request, reply) => {
  const body = request.body
  const outcome = await store.createAction(request.principal, request.headers["idempotency-key"], fingerprint(request.url, body), body)
  reply.header("content-type", json)
  if (outcome.created) return reply.code(201).send(outcome.created)
  if (outcome.replay) return reply.code(201).header("idempotent-replayed", "true").send(outcome.replay)
  if (outcome.reuse) return reply.code(422).send(bodies.keyReuse)
  return reply.code(404).send(bodies.notFound)
})

app.setNotFoundHandler((request, reply) => reply.code(404).header("content-type", json).send(bodies.notFound))
// As the baseline: a body that is not JSON is a 500 there too.
app.setErrorHandler((error, request, reply) => reply.code(500).header("content-type", json).send(bodies.internal(error)))

await app.listen({ port, host: "127.0.0.1" })
console.log(`fastify ${mode} listening on ${port}`)
