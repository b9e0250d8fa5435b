/**
 * Workspace webhooks end to end, as an operator runs them: the compiled server in its own process on a real
 * PostgreSQL server, trusting the test's certificate authority through NODE_EXTRA_CA_CERTS, allowed to call
 * 127.0.0.1 through CONVENE_OUTBOUND_ALLOW_HOSTS, delivering to HTTPS receivers in this process that verify each
 * signature with `@octokit/webhooks-methods` (the same `sha256=<hex>` scheme). Also: the challenge and its echo,
 * redirects never followed, a failing receiver's retry schedule in the delivery log, the input rules, and a
 * server killed between the change and its delivery delivering it after its restart.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { verify } from "@octokit/webhooks-methods"
import { Effect, Exit, Redacted, Scope } from "effect"
import { once } from "node:events"
import { createServer, type Server } from "node:https"
import { serverDatabase } from "../packages/store-pg/test/fixtures.js"
import { type ServerProcess, startServerProcess } from "./support/process.js"
import { client, OPERATOR_TOKEN, provision } from "./support/server.js"
import { makeTestTls, type TestTls } from "./support/tls.js"

const scope = Effect.runSync(Scope.make())

interface Received {
  readonly path: string
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: string
  readonly at: number
}

let tls: TestTls
let receiver: Server
let receiverUrl: string
const received: Array<Received> = []

let databaseUrl: string
let server: ServerProcess
const serverEnv = () => ({
  DATABASE_URL: databaseUrl,
  NODE_EXTRA_CA_CERTS: tls.caFile,
  CONVENE_OUTBOUND_ALLOW_HOSTS: "127.0.0.1"
})

beforeAll(async () => {
  tls = await makeTestTls()
  receiver = createServer({ key: tls.keyPem, cert: tls.certPem }, (request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8")
      const path = request.url ?? ""
      received.push({ path, headers: request.headers, body, at: Date.now() })
      // Challenges are echoed; besides, `/ok` answers 200, `/fail` 500, `/redirect` 302 to /ok.
      const envelope = JSON.parse(body) as { event_type: string; data: { verification_token?: string } }
      if (path === "/redirect") {
        response.writeHead(302, { location: `${receiverUrl}/ok` }).end()
      } else if (envelope.event_type === "webhook.verification") {
        response.writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ verification_token: envelope.data.verification_token }))
      } else if (path === "/fail") {
        response.writeHead(500).end("down for maintenance")
      } else {
        response.writeHead(200).end("ok")
      }
    })
  })
  receiver.listen(0, "127.0.0.1")
  await once(receiver, "listening")
  const address = receiver.address()
  if (address === null || typeof address === "string") throw new Error("no port")
  receiverUrl = `https://127.0.0.1:${address.port}`
  databaseUrl = Redacted.value(await Effect.runPromise(Scope.extend(serverDatabase, scope)))
  server = await startServerProcess(serverEnv())
}, 120_000)

afterAll(async () => {
  await server?.stop()
  receiver?.close()
  await tls?.cleanup()
  await Effect.runPromise(Scope.close(scope, Exit.void))
}, 60_000)

const waitFor = async <A>(probe: () => A | undefined | Promise<A | undefined>, what: string, ms = 15_000): Promise<A> => {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const header = (message: Received, name: string) => {
  const value = message.headers[name]
  return Array.isArray(value) ? value.join(",") : value
}

const deliveredTo = (path: string, type: string, id?: string) =>
  received.filter((message) =>
    message.path === path && header(message, "x-svc-event-type") === type &&
    (id === undefined || (JSON.parse(message.body) as { data: { id?: string } }).data.id === id)
  )

/** An ENTERPRISE workspace (no endpoint cap) with an admin. */
const workspace = () => provision(server.url, { plan: "ENTERPRISE", role: "ADMIN" })

const createEndpoint = async (api: Awaited<ReturnType<typeof workspace>>["api"], path: string, events = ["meeting.created"]) => {
  const created = await api.post("/v1/workspace/webhooks", { url: `${receiverUrl}${path}`, subscribed_events: events })
  expect(created.status).toBe(201)
  return created.body as { signing_secret: string; verification_token: string; webhook: { id: string } }
}

const endpointOf = async (api: Awaited<ReturnType<typeof workspace>>["api"], id: string) => {
  const list = await api.get("/v1/workspace/webhooks?limit=100")
  return (list.body.items as Array<Record<string, unknown>>).find((endpoint) => endpoint.id === id)
}

describe("a verified endpoint", () => {
  it("is challenged at once, verified by the echo, then gets each subscribed event signed, with every header", async () => {
    const admin = await workspace()
    const created = await createEndpoint(admin.api, "/ok", ["meeting.created", "meeting.updated"])
    expect(created.signing_secret).toMatch(/^whsec_/)
    expect(created.verification_token).toMatch(/^whvt_/)
    expect(created.webhook).toMatchObject({ status: "pending", verification_state: "verifying", consecutive_failure_count: 0 })
    expect(JSON.stringify(created.webhook)).not.toContain(created.signing_secret)

    const challenge = await waitFor(
      () => received.find((message) => JSON.parse(message.body).data?.endpoint_id === created.webhook.id),
      "the challenge"
    )
    expect(JSON.parse(challenge.body)).toMatchObject({
      event_type: "webhook.verification",
      workspace_id: admin.workspaceId,
      data: { verification_token: created.verification_token, endpoint_id: created.webhook.id }
    })
    expect(await verify(created.signing_secret, challenge.body, header(challenge, "x-svc-signature")!)).toBe(true)
    const verified = await waitFor(async () => {
      const endpoint = await endpointOf(admin.api, created.webhook.id)
      return endpoint?.verification_state === "verified" ? endpoint : undefined
    }, "the endpoint to be verified")
    expect(verified).toMatchObject({ status: "verified", verification_attempt_count: 1 })
    expect(JSON.stringify(verified)).not.toContain(created.verification_token)

    const meeting = await admin.api.post("/v1/meetings", { title: "Webhooked", start_time: "2026-12-01T09:00:00Z" })
    expect(meeting.status).toBe(201)
    const [delivery] = await waitFor(() => {
      const found = deliveredTo("/ok", "meeting.created", meeting.body.id)
      return found.length > 0 ? found : undefined
    }, "the delivery")
    const body = JSON.parse(delivery!.body) as Record<string, unknown>
    expect(body).toEqual({
      event_type: "meeting.created",
      event_id: expect.any(String),
      timestamp: expect.any(String),
      workspace_id: admin.workspaceId,
      actor_user_id: admin.userId,
      data: expect.objectContaining({ id: meeting.body.id, title: "Webhooked" })
    })
    expect(await verify(created.signing_secret, delivery!.body, header(delivery!, "x-svc-signature")!)).toBe(true)
    expect(await verify("whsec_another", delivery!.body, header(delivery!, "x-svc-signature")!)).toBe(false)
    expect(header(delivery!, "content-type")).toBe("application/json")
    expect(header(delivery!, "user-agent")).toBe("Svc-Webhook/1.0")
    expect(header(delivery!, "x-svc-event-type")).toBe("meeting.created")
    expect(header(delivery!, "x-svc-event-id")).toBe(body.event_id)
    expect(header(delivery!, "x-svc-timestamp")).toBe(String(Math.floor(Date.parse(String(body.timestamp)) / 1000)))
    expect(header(delivery!, "x-svc-idempotency-key")!.length).toBeLessThanOrEqual(64)
    expect(header(delivery!, "x-svc-delivery-id")).toMatch(/^[0-9a-f-]{36}$/)
    expect(header(delivery!, "x-svc-retry-count")).toBeUndefined()
    // Not subscribed: nothing is sent for it.
    await admin.api.post("/v1/action-items", { meeting_id: meeting.body.id, title: "Not subscribed", due_date: "2026-12-24" })

    const log = await waitFor(async () => {
      const page = await admin.api.get(`/v1/workspace/webhooks/${created.webhook.id}/deliveries`)
      const items = page.body.items as Array<Record<string, unknown>>
      return items.some((item) => item.state === "delivered" && item.event_id === body.event_id) ? items : undefined
    }, "the delivery log")
    const entry = log.find((item) => item.event_id === body.event_id)!
    expect(entry).toMatchObject({ event_type: "meeting.created", attempt_count: 1, id: header(delivery!, "x-svc-delivery-id") })
    expect(entry.attempts).toEqual([
      { number: 1, at: expect.any(String), status_code: 200, latency_ms: expect.any(Number), error: null }
    ])
    expect(deliveredTo("/ok", "action_item.created")).toEqual([])

    // Rotating the secret: the old one no longer signs.
    const rotated = await admin.api.post(`/v1/workspace/webhooks/${created.webhook.id}/rotate-secret`)
    expect(rotated.status).toBe(200)
    expect(rotated.body.signing_secret).not.toBe(created.signing_secret)
    await admin.api.patch(`/v1/meetings/${meeting.body.id}`, { title: "Webhooked, renamed" })
    const [updated] = await waitFor(() => {
      const found = deliveredTo("/ok", "meeting.updated", meeting.body.id)
      return found.length > 0 ? found : undefined
    }, "the update's delivery")
    expect(await verify(rotated.body.signing_secret, updated!.body, header(updated!, "x-svc-signature")!)).toBe(true)
    expect(await verify(created.signing_secret, updated!.body, header(updated!, "x-svc-signature")!)).toBe(false)

    // Redelivery: a new delivery id, the same event and idempotency key.
    const again = await admin.api.post(`/v1/workspace/webhooks/${created.webhook.id}/deliveries/${entry.id}/redeliver`)
    expect(again.status).toBe(201)
    const copies = await waitFor(() => {
      const found = deliveredTo("/ok", "meeting.created", meeting.body.id)
      return found.length === 2 ? found : undefined
    }, "the redelivery")
    expect(header(copies[1]!, "x-svc-event-id")).toBe(header(copies[0]!, "x-svc-event-id"))
    expect(header(copies[1]!, "x-svc-idempotency-key")).toBe(header(copies[0]!, "x-svc-idempotency-key"))
    expect(header(copies[1]!, "x-svc-delivery-id")).not.toBe(header(copies[0]!, "x-svc-delivery-id"))

    // Resend on a verified endpoint, re-enable on one that is not disabled.
    const resend = await admin.api.post(`/v1/workspace/webhooks/${created.webhook.id}/resend-verification`)
    expect(resend.status).toBe(409)
    expect(resend.body).toMatchObject({ code: "endpoint_not_pending" })
    const reEnable = await admin.api.post(`/v1/workspace/webhooks/${created.webhook.id}/re-enable`)
    expect(reEnable.status).toBe(409)
    expect(reEnable.body).toMatchObject({ code: "conflict" })

    // Deleted: nothing more is sent, it leaves the list, deleting again is harmless.
    expect((await admin.api.delete(`/v1/workspace/webhooks/${created.webhook.id}`)).status).toBe(204)
    expect((await admin.api.delete(`/v1/workspace/webhooks/${created.webhook.id}`)).status).toBe(204)
    expect(await endpointOf(admin.api, created.webhook.id)).toBeUndefined()
    const after = await admin.api.post("/v1/meetings", { title: "After the delete", start_time: "2026-12-01T09:00:00Z" })
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    expect(deliveredTo("/ok", "meeting.created", after.body.id)).toEqual([])
  }, 90_000)
})

describe("receivers that do not answer as they should", () => {
  it("a redirect is not followed and verifies nothing; resend-verification says so within the request", async () => {
    const admin = await workspace()
    const created = await createEndpoint(admin.api, "/redirect")
    await waitFor(() => received.find((message) => message.path === "/redirect" && JSON.parse(message.body).data?.endpoint_id === created.webhook.id), "the challenge")
    const resent = await admin.api.post(`/v1/workspace/webhooks/${created.webhook.id}/resend-verification`)
    expect(resent.status).toBe(200)
    expect(resent.body).toMatchObject({ status: "pending", verification_state: "verifying", verification_attempt_count: 1 })
    await new Promise((resolve) => setTimeout(resolve, 500))
    const followed = received.filter((message) => message.path === "/ok" && JSON.parse(message.body).data?.endpoint_id === created.webhook.id)
    expect(followed).toEqual([])
  })

  it("a failing receiver's delivery is retried on the schedule, its attempts in the delivery log", async () => {
    const admin = await workspace()
    const created = await createEndpoint(admin.api, "/fail")
    await waitFor(async () => (await endpointOf(admin.api, created.webhook.id))?.verification_state === "verified" ? true : undefined, "verified")
    const meeting = await admin.api.post("/v1/meetings", { title: "To a failing receiver", start_time: "2026-12-01T09:00:00Z" })
    const entry = await waitFor(async () => {
      const page = await admin.api.get(`/v1/workspace/webhooks/${created.webhook.id}/deliveries`)
      return (page.body.items as Array<Record<string, unknown>>).find((item) => item.attempt_count === 1)
    }, "the first attempt in the log")
    expect(deliveredTo("/fail", "meeting.created", meeting.body.id)).toHaveLength(1)
    expect(entry).toMatchObject({ state: "pending", attempts: [{ number: 1, status_code: 500, error: null }] })
    const attempted = Date.parse(String((entry.attempts as Array<{ at: string }>)[0]!.at))
    expect(Date.parse(String(entry.next_attempt_at)) - attempted).toBe(60_000)
    const endpoint = await endpointOf(admin.api, created.webhook.id)
    expect(endpoint).toMatchObject({ verification_state: "verified", consecutive_failure_count: 0 })
  })
})

describe("the input rules", () => {
  it("refuses what the documents refuse, in the envelope", async () => {
    // On FREE a user's token holds no workspace scope; the workspace's API key has them all, and meets the plan gate.
    const free = await provision(server.url, { plan: "FREE", role: "ADMIN" })
    const freeKey = await client(server.url, OPERATOR_TOKEN).post(`/operator/v1/workspaces/${free.workspaceId}/api-keys`, { name: "ops" })
    const onFree = await client(server.url, freeKey.body.key).post("/v1/workspace/webhooks", {
      url: `${receiverUrl}/ok`,
      subscribed_events: ["meeting.created"]
    })
    expect(onFree.status).toBe(402)
    expect(onFree.body).toMatchObject({ feature: "webhooks", current_plan: "FREE", required_plan: "PRO" })
    const pro = await provision(server.url, { plan: "PRO", role: "ADMIN" })
    expect((await pro.api.post("/v1/workspace/webhooks", { url: `${receiverUrl}/ok`, subscribed_events: ["meeting.created"] })).status).toBe(201)
    const second = await pro.api.post("/v1/workspace/webhooks", { url: `${receiverUrl}/ok`, subscribed_events: ["meeting.created"] })
    expect(second.status).toBe(409)
    expect(second.body).toMatchObject({ code: "endpoint_cap_exceeded" })
    const admin = await workspace()
    for (const [body, words] of [
      [{ url: "http://127.0.0.1/ok", subscribed_events: ["meeting.created"] }, "https"],
      [{ url: "https://10.0.0.7/hook", subscribed_events: ["meeting.created"] }, "10.0.0.7"],
      [{ url: "https://localhost:1/hook", subscribed_events: ["meeting.created"] }, "localhost"],
      [{ url: `${receiverUrl}/ok`, subscribed_events: [] }, "subscribed_events"],
      [{ url: `${receiverUrl}/ok`, subscribed_events: ["webhook.verification"] }, "subscribed_events"],
      [{ url: `${receiverUrl}/ok`, subscribed_events: ["meeting.exploded"] }, "subscribed_events"]
    ] as const) {
      const refused = await admin.api.post("/v1/workspace/webhooks", body)
      expect(refused.status, JSON.stringify(body)).toBe(400)
      expect(refused.body.code).toBe("validation_error")
      expect(String(refused.body.error)).toContain(words)
    }
    const member = await provision(server.url, { workspaceId: admin.workspaceId, role: "MEMBER" })
    expect((await member.api.get("/v1/workspace/webhooks")).status).toBe(403)
    const key = await client(server.url, OPERATOR_TOKEN).post(`/operator/v1/workspaces/${admin.workspaceId}/api-keys`, { name: "ops" })
    expect((await client(server.url, key.body.key).get("/v1/workspace/webhooks")).status).toBe(200)
  })
})

describe("durability", () => {
  it("an event committed just before the process is killed is delivered after the restart", async () => {
    const admin = await workspace()
    const created = await createEndpoint(admin.api, "/ok")
    await waitFor(async () => (await endpointOf(admin.api, created.webhook.id))?.verification_state === "verified" ? true : undefined, "verified")
    const port = new URL(server.url).port
    // Kill right after the 201: the worker, which looks every 250 ms, has most likely not sent it yet. Should it
    // have, the attempt proves nothing and another is made.
    for (let attempt = 0; attempt < 5; attempt++) {
      const meeting = await admin.api.post("/v1/meetings", { title: `Killed ${attempt}`, start_time: "2026-12-01T09:00:00Z" })
      expect(meeting.status).toBe(201)
      await server.kill()
      const before = deliveredTo("/ok", "meeting.created", meeting.body.id).length
      server = await startServerProcess({ ...serverEnv(), PORT: port })
      if (before > 0) continue
      await waitFor(() => deliveredTo("/ok", "meeting.created", meeting.body.id).length === 1 ? true : undefined, "the delivery after the restart")
      return
    }
    throw new Error("the worker delivered before every kill; the premise of the test never held")
  }, 120_000)
})
