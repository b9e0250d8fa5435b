/**
 * The server's own limits, on real sockets: slow headers and slow bodies are cut off with 408 in the envelope,
 * malformed HTTP and oversized headers are answered in the envelope, idle keep-alive connections close, and
 * connections past the cap are refused. The limits are set small here; their defaults are in Config.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { connect, type Socket } from "node:net"
import { once } from "node:events"
import { startServer, type RunningServer } from "../support/server.js"
import { sleep, UUID } from "./fixtures.js"

const limits = { headersTimeoutMs: 400, requestTimeoutMs: 1000, keepAliveTimeoutMs: 300, maxConnections: 4 }

let server: RunningServer
let port: number
beforeAll(async () => {
  server = await startServer({ limits })
  port = Number(new URL(server.url).port)
})
afterAll(async () => {
  await server.close()
})

/** A raw connection that collects everything the server sends and notes when the server closes it. */
const open = async () => {
  const socket: Socket = connect(port, "127.0.0.1")
  await once(socket, "connect")
  let received = ""
  let closedAt: number | undefined
  socket.setEncoding("utf8")
  socket.on("data", (chunk: string) => (received += chunk))
  socket.on("error", () => {})
  socket.on("close", () => (closedAt = Date.now()))
  return {
    socket,
    received: () => received,
    closed: () => closedAt !== undefined,
    closedAt: () => closedAt,
    /** Waits until the server closes the connection (or `ms` pass). */
    waitClosed: async (ms: number) => {
      const deadline = Date.now() + ms
      while (closedAt === undefined && Date.now() < deadline) await sleep(20)
      return closedAt !== undefined
    }
  }
}

/** The status, headers and JSON body of the first response in `raw`. */
const parse = (raw: string) => {
  const [head = "", body = ""] = raw.split("\r\n\r\n")
  const [statusLine = "", ...headerLines] = head.split("\r\n")
  const headers = Object.fromEntries(headerLines.map((line) => {
    const colon = line.indexOf(":")
    return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()]
  }))
  return { status: Number(statusLine.split(" ")[1]), headers, body: JSON.parse(body) as Record<string, unknown> }
}

const expectEnvelope = (raw: string, status: number, code: string) => {
  const response = parse(raw)
  expect(response.status).toBe(status)
  expect(response.headers["content-type"]).toContain("application/json")
  expect(response.headers["x-request-id"]).toMatch(UUID)
  expect(response.body).toMatchObject({ code, request_id: response.headers["x-request-id"] })
  expect(typeof response.body.error).toBe("string")
  expect(response.body.message).toBe(response.body.error)
}

/** A POST to `path` whose 100-byte body is sent a byte every 150 ms, until the server closes the connection. */
const dripped = async (path: string) => {
  const connection = await open()
  connection.socket.write(`POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`)
  const drip = setInterval(() => {
    if (!connection.closed()) connection.socket.write(" ")
  }, 150)
  try {
    expect(await connection.waitClosed(6000)).toBe(true)
  } finally {
    clearInterval(drip)
  }
  return connection
}

describe("server limits", () => {
  it("answers headers that trickle in past the headers timeout with 408 request_timeout and closes", async () => {
    const connection = await open()
    const started = Date.now()
    connection.socket.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\n")
    expect(await connection.waitClosed(5000)).toBe(true)
    expect(connection.closedAt()! - started).toBeGreaterThanOrEqual(limits.headersTimeoutMs - 50)
    expect(connection.closedAt()! - started).toBeLessThan(limits.headersTimeoutMs + 2000)
    expectEnvelope(connection.received(), 408, "request_timeout")
  })

  it("answers a body sent a byte at a time past the request timeout with 408 request_timeout", async () => {
    const started = Date.now()
    const connection = await dripped("/v1/meetings")
    expect(connection.closedAt()! - started).toBeLessThan(limits.requestTimeoutMs + 2000)
    expectEnvelope(connection.received(), 408, "request_timeout")
  })

  it("answers a partner request whose body is past the request timeout with 408 in the partner envelope", async () => {
    const connection = await dripped("/v1/partner/user/backlog-items")
    const response = parse(connection.received())
    expect(response.status).toBe(408)
    expect(Object.keys(response.body).sort()).toEqual(["code", "error", "request_id"])
    expect(response.body).toMatchObject({ code: "request_timeout", request_id: response.headers["x-request-id"] })
  })

  it("answers a request that is not HTTP with 400 bad_request in the envelope", async () => {
    const connection = await open()
    connection.socket.write("HELLO THERE\r\n\r\n")
    expect(await connection.waitClosed(3000)).toBe(true)
    expectEnvelope(connection.received(), 400, "bad_request")
  })

  it("answers headers larger than Node's limit with 431 in the envelope", async () => {
    const connection = await open()
    connection.socket.write(`GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: ${"a".repeat(32 * 1024)}\r\n\r\n`)
    expect(await connection.waitClosed(3000)).toBe(true)
    expectEnvelope(connection.received(), 431, "request_header_fields_too_large")
  })

  it("closes an idle keep-alive connection after the keep-alive timeout", async () => {
    const connection = await open()
    connection.socket.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
    const started = Date.now()
    expect(await connection.waitClosed(5000)).toBe(true)
    expect(parse(connection.received()).status).toBe(200)
    expect(connection.closedAt()! - started).toBeGreaterThanOrEqual(limits.keepAliveTimeoutMs - 50)
  })

  it("refuses connections past the cap and serves again once one closes", async () => {
    const held = await Promise.all(Array.from({ length: limits.maxConnections }, () => open()))
    const extra = await open()
    extra.socket.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    expect(await extra.waitClosed(3000)).toBe(true)
    expect(extra.received()).toBe("")
    for (const connection of held) connection.socket.destroy()
    await sleep(100)
    const response = await fetch(`${server.url}/healthz`)
    expect(response.status).toBe(200)
  })
})
