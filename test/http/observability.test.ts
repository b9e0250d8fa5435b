/**
 * What an operator sees of a running server: one access line per request (Logging.ts, Lifecycle.ts), the
 * Prometheus metrics at /metrics (Telemetry.ts, http/Metrics.ts), and spans exported over OTLP/HTTP to a
 * collector, here a real HTTP endpoint started by the test.
 */
import { MeetingStore, type StorePorts } from "@convene/core"
import { ConveneWith, defaultLimits, type HostConfig, Logging } from "@convene/http"
import * as StoreMemory from "@convene/store-memory"
import * as StorePg from "@convene/store-pg"
import { Context, Effect, Exit, Fiber, Layer, Logger, Option, Redacted, Scope } from "effect"
import { once } from "node:events"
import { createServer } from "node:http"
import { createServer as createHttpsServer } from "node:https"
import { describe, expect, it } from "vitest"
import { serverDatabase } from "../../packages/store-pg/test/fixtures.js"
import { freePort, startServerProcess } from "../support/process.js"
import { OPERATOR_TOKEN, provision } from "../support/server.js"
import { makeTestTls } from "../support/tls.js"

interface Launched {
  readonly url: string
  readonly stop: () => Promise<void>
}

/** The server on a free port with the given logger and telemetry, as main.ts composes it. */
const launch = async (options: {
  readonly store?: Layer.Layer<StorePorts, unknown>
  readonly lines?: Array<string>
  readonly operator?: boolean
  readonly traces?: boolean
}): Promise<Launched> => {
  const port = await freePort()
  const config: HostConfig = {
    port,
    host: "127.0.0.1",
    baseUrl: `http://127.0.0.1:${port}`,
    operatorToken: options.operator === false ? Option.none() : Option.some(Redacted.make(OPERATOR_TOKEN)),
    accessLog: true,
    tracing: false,
    limits: defaultLimits,
    telemetry: { traces: options.traces ?? false, metricsPort: Option.none() }
  }
  const logger = options.lines === undefined
    ? Logger.remove(Logger.defaultLogger)
    : Logger.replace(Logger.defaultLogger, Logging.collecting("json", options.lines))
  const fiber = Effect.runFork(
    Layer.launch(ConveneWith(config, options.store ?? StoreMemory.layer).pipe(Layer.provide(logger)))
  )
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 400; i++) {
    if (await fetch(`${url}/readyz`).then((r) => r.status === 200, () => false)) break
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  return { url, stop: () => Effect.runPromise(Effect.asVoid(Fiber.interrupt(fiber))) }
}

const parsed = (lines: ReadonlyArray<string>) => lines.map((line) => JSON.parse(line) as Record<string, unknown>)

describe("access log", () => {
  it("writes one JSON line per request with the request id, route template, status, duration and caller", async () => {
    const lines: Array<string> = []
    const server = await launch({ lines })
    try {
      const { api, token, workspaceId } = await provision(server.url)
      const created = await api.post("/v1/meetings", { title: "Logged" })
      const missing = await api.get(`/v1/meetings/${crypto.randomUUID()}`)
      lines.length = 0
      const read = await api.get(`/v1/meetings/${created.body.id}`)
      await api.get(`/v1/meetings/${crypto.randomUUID()}`)
      await fetch(`${server.url}/no/such/path`)
      await new Promise((resolve) => setTimeout(resolve, 50))

      const requests = parsed(lines).filter((line) => line.msg === "request")
      expect(requests).toHaveLength(3)
      const [ok, notFound, unmatched] = requests
      expect(ok).toMatchObject({
        level: "info",
        request_id: read.headers.get("x-request-id"),
        method: "GET",
        route: "/v1/meetings/:id",
        status: 200,
        credential_kind: "personal_access_token",
        workspace_id: workspaceId
      })
      expect(typeof ok!.credential_id).toBe("string")
      expect(typeof ok!.duration_ms).toBe("number")
      expect(Date.parse(String(ok!.time))).not.toBeNaN()
      // A client error is a warning, without a stack trace.
      expect(notFound).toMatchObject({ level: "warn", status: 404, route: "/v1/meetings/:id" })
      expect(notFound).not.toHaveProperty("error")
      expect(unmatched).toMatchObject({ level: "warn", status: 404, route: null, credential_kind: null })
      // Never the token, never a raw id in the route.
      for (const line of lines) expect(line).not.toContain(token)
      expect(missing.status).toBe(404)
    } finally {
      await server.stop()
    }
  })

  it("writes a 5xx as an error line with its cause, and tells the client nothing of it", async () => {
    const lines: Array<string> = []
    const broken = Layer.map(StoreMemory.layer, (context) =>
      Context.add(context, MeetingStore, {
        ...Context.get(context, MeetingStore),
        list: () => Effect.die(new Error("disk on fire under /var/lib/convene"))
      }))
    const server = await launch({ store: broken, lines })
    try {
      const { api } = await provision(server.url)
      const answer = await api.get("/v1/meetings")
      expect(answer.status).toBe(500)
      expect(answer.text).not.toContain("disk on fire")
      await new Promise((resolve) => setTimeout(resolve, 50))
      const failed = parsed(lines).filter((line) => line.msg === "request" && line.status === 500)
      expect(failed).toHaveLength(1)
      expect(failed[0]).toMatchObject({ level: "error", route: "/v1/meetings", request_id: answer.body.request_id })
      expect(String(failed[0]!.error)).toContain("disk on fire under /var/lib/convene")
    } finally {
      await server.stop()
    }
  })
})

/** The value of the sample of `name` with `labels` in a Prometheus text (0 when there is none). */
const sample = (text: string, name: string, labels: Record<string, string>) => {
  const line = text.split("\n").find((line) =>
    line.startsWith(`${name}{`) && Object.entries(labels).every(([key, value]) => line.includes(`${key}="${value}"`))
  )
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1))
}

describe("metrics", () => {
  it("serves request counts and latency histograms by route and status behind the operator token", async () => {
    const server = await launch({})
    const scrape = async () => {
      const scraped = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } })
      expect(scraped.status).toBe(200)
      expect(scraped.headers.get("content-type")).toContain("text/plain")
      return scraped.text()
    }
    try {
      const { api } = await provision(server.url)
      // Metrics are the process's: other servers in this file count too, so the test reads differences.
      const before = await scrape()
      const created = await api.post("/v1/meetings", { title: "Counted" }, { "idempotency-key": "counted-1" })
      await api.post("/v1/meetings", { title: "Counted" }, { "idempotency-key": "counted-1" })
      await api.get(`/v1/meetings/${created.body.id}`)
      await api.get(`/v1/meetings/${crypto.randomUUID()}`)

      const anonymous = await fetch(`${server.url}/metrics`)
      expect(anonymous.status).toBe(401)
      expect(await anonymous.json()).toMatchObject({ code: "unauthorized" })
      const wrong = await fetch(`${server.url}/metrics`, { headers: { authorization: "Bearer not-the-operator-token" } })
      expect([wrong.status, ((await wrong.json()) as { code: string }).code]).toEqual([401, "invalid_token"])

      const text = await scrape()
      const delta = (name: string, labels: Record<string, string>) => sample(text, name, labels) - sample(before, name, labels)
      expect(delta("convene_http_requests_total", { method: "GET", route: "/v1/meetings/:id", status: "200" })).toBe(1)
      expect(delta("convene_http_requests_total", { method: "GET", route: "/v1/meetings/:id", status: "404" })).toBe(1)
      expect(delta("convene_http_requests_total", { method: "POST", route: "/v1/meetings", status: "201" })).toBe(2)
      expect(delta("convene_http_request_duration_seconds_bucket", { route: "/v1/meetings", status: "201", le: "+Inf" }))
        .toBe(2)
      expect(delta("convene_http_request_duration_seconds_count", { route: "/v1/meetings/:id", status: "200" })).toBe(1)
      expect(delta("convene_idempotency_requests_total", { outcome: "stored" })).toBe(1)
      expect(delta("convene_idempotency_requests_total", { outcome: "replayed" })).toBe(1)
      // Labels are templates: no id of any meeting appears.
      expect(text).not.toContain(created.body.id)
    } finally {
      await server.stop()
    }
  })

  it("serves the PostgreSQL pool's occupancy: its size, connections in use and idle, queries waiting", async () => {
    const scope = Effect.runSync(Scope.make())
    const url = await Effect.runPromise(Scope.extend(serverDatabase, scope))
    const server = await launch({ store: StorePg.layerPg({ url, maxConnections: 7 }) })
    try {
      const { api } = await provision(server.url)
      await Promise.all(Array.from({ length: 20 }, (_, i) => api.post("/v1/meetings", { title: `Pooled ${i}` })))
      // The gauges are sampled every second, not per query.
      await new Promise((resolve) => setTimeout(resolve, 1_100))
      const text = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } })
        .then((response) => response.text())
      for (const name of ["convene_store_pool_max", "convene_store_pool_connections", "convene_store_pool_waiting"]) {
        expect(text).toContain(`# TYPE ${name} gauge`)
      }
      expect(sample(text, "convene_store_pool_max", {})).toBe(7)
      const inUse = sample(text, "convene_store_pool_connections", { state: "in_use" })
      const idle = sample(text, "convene_store_pool_connections", { state: "idle" })
      // Twenty concurrent requests opened more than one connection, and never more than the pool's size; between
      // requests they are back in the pool (but for the one the webhook worker may be using for its claim).
      expect(inUse + idle).toBeGreaterThan(1)
      expect(inUse + idle).toBeLessThanOrEqual(7)
      expect(inUse).toBeLessThanOrEqual(1)
      expect(sample(text, "convene_store_pool_waiting", {})).toBe(0)
    } finally {
      await server.stop()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })

  it("has no /metrics on the main port when the operator API is off", async () => {
    const server = await launch({ operator: false })
    try {
      expect((await fetch(`${server.url}/metrics`)).status).toBe(404)
    } finally {
      await server.stop()
    }
  })
})

describe("metrics of the webhook outbox, on a port of their own", () => {
  // The compiled server in its own process: it trusts the receiver's test authority only through NODE_EXTRA_CA_CERTS,
  // which Node reads at start, and its metrics are its own (no other server of this file counts in them).
  it("counts deliveries by outcome, exports the outbox's gauges, and serves /metrics without a token on CONVENE_METRICS_PORT", async () => {
    const tls = await makeTestTls()
    const paths: Array<string> = []
    // Challenges are echoed; a delivery to /fail answers 500, any other 200.
    const receiver = createHttpsServer({ key: tls.keyPem, cert: tls.certPem }, (request, response) => {
      let body = ""
      request.on("data", (chunk) => (body += chunk))
      request.on("end", () => {
        const envelope = JSON.parse(body) as { event_type: string; data: { verification_token?: string } }
        if (envelope.event_type === "webhook.verification") {
          response.writeHead(200, { "content-type": "application/json" })
            .end(JSON.stringify({ verification_token: envelope.data.verification_token }))
          return
        }
        paths.push(request.url ?? "")
        response.writeHead(request.url === "/fail" ? 500 : 200).end()
      })
    })
    receiver.listen(0, "127.0.0.1")
    await once(receiver, "listening")
    const address = receiver.address()
    if (address === null || typeof address === "string") throw new Error("no address")
    const metricsPort = await freePort()
    const server = await startServerProcess({
      CONVENE_STORE: "memory",
      NODE_EXTRA_CA_CERTS: tls.caFile,
      CONVENE_OUTBOUND_ALLOW_HOSTS: "127.0.0.1",
      CONVENE_METRICS_PORT: String(metricsPort)
    })
    const scrape = async () => {
      const scraped = await fetch(`http://127.0.0.1:${metricsPort}/metrics`)
      expect(scraped.status).toBe(200)
      return scraped.text()
    }
    try {
      // The port serves the metrics to anyone who reaches it (a scraper on a private network), and nothing else.
      const first = await scrape()
      for (const name of ["convene_webhook_outbox_pending", "convene_webhook_outbox_lag_seconds"]) {
        expect(first).toContain(`# TYPE ${name} gauge`)
        expect(first).toMatch(new RegExp(`^${name}(\\{[^}]*\\})? 0$`, "m"))
      }
      expect((await fetch(`http://127.0.0.1:${metricsPort}/v1/meetings`)).status).toBe(404)
      // The main port still wants the operator token.
      expect((await fetch(`${server.url}/metrics`)).status).toBe(401)

      const { api } = await provision(server.url, { plan: "ENTERPRISE", role: "ADMIN" })
      const endpoints: Array<string> = []
      for (const path of ["/ok", "/fail"]) {
        const created = await api.post("/v1/workspace/webhooks", {
          url: `https://127.0.0.1:${address.port}${path}`,
          subscribed_events: ["meeting.created"]
        })
        expect(created.status).toBe(201)
        endpoints.push(created.body.webhook.id)
      }
      const deadline = Date.now() + 20_000
      const until = async (done: () => boolean | Promise<boolean>, what: string) => {
        while (!(await done())) {
          if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
      }
      await until(async () => {
        const list = await api.get("/v1/workspace/webhooks?limit=100")
        return (list.body.items as Array<{ verification_state: string }>).every((endpoint) => endpoint.verification_state === "verified")
      }, "both endpoints to be verified")
      expect((await api.post("/v1/meetings", { title: "Delivered" })).status).toBe(201)
      await until(() => paths.includes("/ok") && paths.includes("/fail"), "both deliveries")
      // Counted once the attempt is written, just after the receiver answered.
      await until(async () => sample(await scrape(), "convene_webhook_delivery_attempts_total", { outcome: "retry_scheduled" }) === 1, "the counts")

      const text = await scrape()
      expect(text).toContain("# TYPE convene_webhook_delivery_attempts_total counter")
      expect(sample(text, "convene_webhook_delivery_attempts_total", { outcome: "delivered" })).toBe(1)
      expect(sample(text, "convene_webhook_delivery_attempts_total", { outcome: "retry_scheduled" })).toBe(1)
      expect(sample(text, "convene_webhook_delivery_attempts_total", { outcome: "exhausted" })).toBe(0)
      // The failed delivery waits for its retry a minute later: pending, not yet due again. The gauges are sampled
      // every 5 seconds.
      await until(async () => sample(await scrape(), "convene_webhook_outbox_pending", {}) === 1, "the pending gauge")
      expect(sample(await scrape(), "convene_webhook_outbox_lag_seconds", {})).toBe(0)
      // The same registry behind the operator token on the main port.
      const main = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } })
      expect(sample(await main.text(), "convene_webhook_delivery_attempts_total", { outcome: "delivered" })).toBe(1)
    } finally {
      await server.stop()
      receiver.close()
      await tls.cleanup()
    }
  }, 60_000)
})

describe("traces", () => {
  it("exports a span per request and per core operation over OTLP/HTTP, without the bearer token", async () => {
    const received: Array<unknown> = []
    const collector = createServer((request, response) => {
      let body = ""
      request.on("data", (chunk) => (body += chunk))
      request.on("end", () => {
        if (request.url === "/v1/traces") received.push(JSON.parse(body))
        response.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    collector.listen(0, "127.0.0.1")
    await once(collector, "listening")
    const address = collector.address()
    if (address === null || typeof address === "string") throw new Error("no address")
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${address.port}`
    process.env.OTEL_BSP_SCHEDULE_DELAY = "50"
    const server = await launch({ traces: true })
    try {
      const { api, token } = await provision(server.url)
      const created = await api.post("/v1/meetings", { title: "Traced" })
      expect(created.status).toBe(201)
      type Span = { name: string; traceId: string; attributes: Array<{ key: string; value: Record<string, unknown> }> }
      const spans = (): Array<Span> =>
        received.flatMap((payload) =>
          (payload as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<Span> }> }> }).resourceSpans
            .flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans))
        )
      for (let i = 0; i < 100 && !spans().some((span) => span.name === "Meetings.create"); i++) {
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      const create = spans().find((span) => span.name === "Meetings.create")
      expect(create).toBeDefined()
      const request = spans().find((span) => span.traceId === create!.traceId && span.name.startsWith("http.server POST"))
      expect(request).toBeDefined()
      expect(JSON.stringify(received)).not.toContain(token)
      const resource = JSON.stringify((received[0] as { resourceSpans: Array<{ resource: unknown }> }).resourceSpans[0]!.resource)
      expect(resource).toContain("convene")
    } finally {
      await server.stop()
      collector.close()
    }
  })
})
