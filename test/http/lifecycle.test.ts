/**
 * The server's life on a real socket (packages/http/src/Lifecycle.ts): it listens before its store is ready
 * (liveness 200, readiness and the API 503), serves once the store is open, and on shutdown finishes the
 * requests in flight, answers 503 to those still running when the drain time is up, and stops within it. A request
 * whose client goes away is finished all the same.
 */
import { MeetingStore, type StorePorts } from "@convene/core"
import { ConveneWith, defaultLimits, type HostConfig } from "@convene/http"
import * as StoreMemory from "@convene/store-memory"
import { Context, Deferred, Effect, Fiber, Layer, Option, Redacted } from "effect"
import { once } from "node:events"
import { connect, type Socket } from "node:net"
import { describe, expect, it } from "vitest"
import { freePort } from "../support/process.js"
import { OPERATOR_TOKEN, provision } from "../support/server.js"

/** Launches the server (as main.ts does, without signals) on a free port; `stop` interrupts it, which drains. */
const launch = async (store: Layer.Layer<StorePorts, unknown>, shutdownTimeoutMs = 10_000) => {
  const port = await freePort()
  const config: HostConfig = {
    port,
    host: "127.0.0.1",
    baseUrl: `http://127.0.0.1:${port}`,
    operatorToken: Option.some(Redacted.make(OPERATOR_TOKEN)),
    accessLog: false,
    tracing: false,
    limits: { ...defaultLimits, shutdownTimeoutMs }
  }
  const fiber = Effect.runFork(Layer.launch(ConveneWith(config, store)))
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 200; i++) {
    if (await fetch(`${url}/healthz`).then(() => true, () => false)) break
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  return { url, port, stop: () => Effect.runPromise(Fiber.interrupt(fiber)) }
}

const waitForReady = async (url: string) => {
  for (let i = 0; i < 400; i++) {
    if ((await fetch(`${url}/readyz`)).status === 200) return
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error("never ready")
}

/** A raw HTTP/1.1 exchange on its own socket, so that a test controls when each byte is sent. */
const rawRequest = async (port: number) => {
  const socket: Socket = connect(port, "127.0.0.1")
  await once(socket, "connect")
  let received = ""
  socket.on("data", (chunk) => (received += chunk.toString("utf8")))
  const ended = new Promise<string>((resolve) => {
    socket.on("close", () => resolve(received))
    socket.on("error", () => {})
  })
  return {
    send: (text: string) => new Promise<void>((resolve) => socket.write(text, () => resolve())),
    /** Everything the server sent, once it closed the connection. */
    ended,
    destroy: () => socket.destroy()
  }
}

const statusOf = (response: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1] ?? 0)
const bodyOf = (response: string) => JSON.parse(response.slice(response.indexOf("\r\n\r\n") + 4)) as Record<string, unknown>

describe("starting", () => {
  it("answers liveness at once, readiness and the API 503 until the store is open, then serves", async () => {
    const open = Effect.runSync(Deferred.make<void>())
    const slowStore = Layer.unwrapEffect(Effect.as(Deferred.await(open), StoreMemory.layer))
    const server = await launch(slowStore)
    try {
      const live = await fetch(`${server.url}/healthz`)
      expect([live.status, await live.json()]).toEqual([200, { status: "ok" }])
      const ready = await fetch(`${server.url}/readyz`)
      expect([ready.status, await ready.json(), ready.headers.get("retry-after")]).toEqual([503, { status: "starting" }, "1"])
      const api = await fetch(`${server.url}/v1/meetings`, { headers: { authorization: "Bearer x" } })
      const body = await api.json() as { code: string; message: string; request_id: string }
      expect(api.status).toBe(503)
      expect(api.headers.get("retry-after")).toBe("1")
      expect(body.code).toBe("service_unavailable")
      expect(body.message).toContain("not ready yet")
      expect(api.headers.get("x-request-id")).toBe(body.request_id)
      // Under /v1/partner, the partner envelope.
      const partner = await fetch(`${server.url}/v1/partner/admin/app`)
      const partnerBody = await partner.json() as Record<string, unknown>
      expect(partner.status).toBe(503)
      expect(Object.keys(partnerBody).sort()).toEqual(["code", "error", "request_id"])
      expect(partnerBody.code).toBe("service_unavailable")

      Effect.runSync(Deferred.succeed(open, undefined))
      await waitForReady(server.url)
      expect(await (await fetch(`${server.url}/readyz`)).json()).toEqual({ status: "ready" })
      const { api: client } = await provision(server.url)
      expect((await client.get("/v1/meetings")).status).toBe(200)
    } finally {
      Effect.runSync(Deferred.succeed(open, undefined))
      await server.stop()
    }
  })

  it("stops at once when told to while the store is not open yet", async () => {
    const never = Layer.unwrapEffect(Effect.as(Effect.never, StoreMemory.layer))
    const server = await launch(never)
    const started = Date.now()
    await server.stop()
    expect(Date.now() - started).toBeLessThan(2_000)
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow()
  })
})

describe("draining", () => {
  it("answers every request in flight, 503 for what is still running after the drain time, and stops within it", async () => {
    const drainMs = 2_000
    const server = await launch(StoreMemory.layer, drainMs)
    await waitForReady(server.url)
    const { token } = await provision(server.url)
    const body = JSON.stringify({ title: "Started before the shutdown" })
    const head = [
      "POST /v1/meetings HTTP/1.1",
      "host: localhost",
      `authorization: Bearer ${token}`,
      "content-type: application/json",
      `content-length: ${Buffer.byteLength(body)}`,
      "",
      ""
    ].join("\r\n")
    // Ten creates in flight, each with half of its body sent; three more that will never send the rest; and a
    // readiness probe whose headers are not complete yet.
    const finishing = await Promise.all(Array.from({ length: 10 }, () => rawRequest(server.port)))
    const stuck = await Promise.all(Array.from({ length: 3 }, () => rawRequest(server.port)))
    for (const request of [...finishing, ...stuck]) await request.send(head + body.slice(0, 10))
    const probe = await rawRequest(server.port)
    await probe.send("GET /readyz HTTP/1.1\r\nhost: localhost\r\n")
    await new Promise((resolve) => setTimeout(resolve, 100))

    const started = Date.now()
    const stopped = server.stop().then(() => Date.now() - started)

    // No new connections (fetch would reuse a pooled keep-alive connection, which the grace still serves)...
    const tryConnect = () =>
      new Promise<string>((resolve) => {
        const attempt = connect(server.port, "127.0.0.1")
        attempt.on("connect", () => {
          attempt.destroy()
          resolve("connected")
        })
        attempt.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"))
      })
    // Asked at once and again until the drain has begun (on a busy machine that takes a moment): the rest of the
    // probe must arrive within the grace that follows, not after a fixed wait that a slow machine may overrun.
    let refused = await tryConnect()
    while (refused === "connected" && Date.now() - started < 5_000) refused = await tryConnect()
    expect(refused).toBe("ECONNREFUSED")
    // ...but what was already received is served, and its connection closed after the answer.
    await probe.send("\r\n")
    const probed = await probe.ended
    expect([statusOf(probed), bodyOf(probed)]).toEqual([503, { status: "draining" }])
    for (const request of finishing) await request.send(body.slice(10))
    for (const answer of await Promise.all(finishing.map((request) => request.ended))) {
      expect(statusOf(answer)).toBe(201)
      expect(answer.toLowerCase()).toContain("connection: close")
      expect(bodyOf(answer)).toMatchObject({ title: "Started before the shutdown" })
    }
    // What is still running when the drain time is up is answered 503 in the envelope.
    for (const answer of await Promise.all(stuck.map((request) => request.ended))) {
      expect(statusOf(answer)).toBe(503)
      expect(bodyOf(answer)).toMatchObject({ code: "service_unavailable" })
    }
    const took = await stopped
    expect(took).toBeGreaterThanOrEqual(drainMs - 100)
    expect(took).toBeLessThan(drainMs + 1_500)
  })

  it("closes idle keep-alive connections after a short grace, so an idle client does not hold the shutdown", async () => {
    const server = await launch(StoreMemory.layer, 10_000)
    await waitForReady(server.url)
    const idle = await rawRequest(server.port)
    await idle.send("GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n")
    await new Promise((resolve) => setTimeout(resolve, 100))
    const started = Date.now()
    await server.stop()
    // The grace is 500 ms; the keep-alive timeout (65 s) plays no part.
    expect(Date.now() - started).toBeLessThan(2_000)
    const exchanged = await idle.ended
    expect(statusOf(exchanged)).toBe(200)
  })
})

describe("clients that go away", () => {
  it("leave their request to be finished: what it changes is made whole, and its Idempotency-Key replays the answer", async () => {
    // Interrupting a request when its client leaves would cut a write off half way (and on PostgreSQL make
    // @effect/sql-pg cancel the running statement through another connection of the pool).
    const slow = Layer.map(StoreMemory.layer, (context) =>
      Context.add(context, MeetingStore, {
        ...Context.get(context, MeetingStore),
        insert: (meeting) => Effect.zipRight(Effect.sleep("300 millis"), Context.get(context, MeetingStore).insert(meeting))
      }))
    const server = await launch(slow)
    await waitForReady(server.url)
    try {
      const { api, token } = await provision(server.url)
      const body = JSON.stringify({ title: "Left behind" })
      const leaving = await rawRequest(server.port)
      await leaving.send([
        "POST /v1/meetings HTTP/1.1",
        "host: localhost",
        `authorization: Bearer ${token}`,
        "content-type: application/json",
        "idempotency-key: left-behind",
        `content-length: ${Buffer.byteLength(body)}`,
        "",
        body
      ].join("\r\n"))
      await new Promise((resolve) => setTimeout(resolve, 100))
      leaving.destroy()
      await new Promise((resolve) => setTimeout(resolve, 600))
      const listed = await api.get("/v1/meetings")
      expect(listed.body.items.map((meeting: { title: string }) => meeting.title)).toEqual(["Left behind"])
      const again = await api.post("/v1/meetings", { title: "Left behind" }, { "idempotency-key": "left-behind" })
      expect(again.status).toBe(201)
      expect(again.headers.get("idempotent-replayed")).toBe("true")
      expect(again.body.id).toBe(listed.body.items[0].id)
    } finally {
      await server.stop()
    }
  })
})
