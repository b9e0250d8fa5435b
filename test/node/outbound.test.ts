/**
 * NodeOutbound against real HTTPS servers on the loopback interface, with certificates made for the run
 * (test/support/tls.ts): answers arrive whole with their status and latency, the request arrives byte for byte,
 * a redirect is an answer and is not followed, the time limit covers waiting and reading, the size cap holds on
 * both a declared and an undeclared length, certificate problems are "tls", a closed port is "connection", an
 * interrupted call closes its connection, keep-alive reuses one connection and closes it with the layer. The
 * address rule refuses every internal address in check and in post, without the server seeing a connection, and
 * lets public literals and allow-listed hosts through; the https rule holds even for allow-listed hosts.
 */
import { Outbound, OutboundFailed, OutboundRefused } from "@convene/core"
import { NodeOutbound } from "@convene/node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Fiber, Layer } from "effect"
import { once } from "node:events"
import * as Https from "node:https"
import type { AddressInfo, Socket } from "node:net"
import * as NodeTls from "node:tls"
import type { PeerCertificate } from "node:tls"
import { afterAll, beforeAll } from "vitest"
import { freePort } from "../support/process.js"
import { makeTestTls, type TestTls } from "../support/tls.js"

interface Hit {
  readonly method: string
  readonly path: string
  readonly rawHeaders: ReadonlyArray<string>
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  readonly body: Buffer
}

interface Connection {
  readonly closed: Promise<void>
  isClosed: boolean
}

/** A request the server received and holds without answering, and whether its connection has closed. */
interface Held {
  readonly seen: Promise<void>
  readonly closed: Promise<void>
}

interface TestServer {
  readonly port: number
  readonly base: string
  readonly hits: Array<Hit>
  readonly connections: Array<Connection>
  /** The next request to /hang or /slow-body. */
  readonly hold: () => Held
  readonly close: () => Promise<void>
}

const bigAnswer = Buffer.alloc(1024 * 1024, "x")

/** An HTTPS server on :: (IPv4 and IPv6) with a route per behaviour; it records every request and connection. */
const startServer = async (tls: Pick<TestTls, "keyPem" | "certPem">): Promise<TestServer> => {
  const hits: Array<Hit> = []
  const connections: Array<Connection> = []
  const sockets = new Set<Socket>()
  let held: { seen: () => void; closed: () => void } | undefined
  const server = Https.createServer({ key: tls.keyPem, cert: tls.certPem, keepAliveTimeout: 10_000 }, (req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "https://server")
      hits.push({ method: req.method ?? "", path: url.pathname, rawHeaders: req.rawHeaders, headers: req.headers, body: Buffer.concat(chunks) })
      switch (url.pathname) {
        case "/ok":
          return res.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end("thanks, Zoë 🎉")
        case "/slow":
          return setTimeout(() => res.writeHead(202).end("later"), Number(url.searchParams.get("ms") ?? "0"))
        case "/redirect":
          return res.writeHead(302, { location: `https://127.0.0.1:${port}/target` }).end("moved")
        case "/target":
          return res.writeHead(200).end("target")
        case "/error":
          return res.writeHead(500).end("boom")
        case "/hang":
        case "/slow-body": {
          const waiter = held
          held = undefined
          req.socket.once("close", () => waiter?.closed())
          if (url.pathname === "/slow-body") res.writeHead(200).write("partial")
          return waiter?.seen()
        }
        case "/cut":
          // Promises 100 bytes, sends 7 and closes the connection.
          res.writeHead(200, { "content-length": "100" }).write("partial")
          return setTimeout(() => res.socket?.destroy(), 20)
        case "/big":
          return res.writeHead(200, { "content-length": String(bigAnswer.length) }).end(bigAnswer)
        case "/big-undeclared": {
          // Written in chunks without a content-length: the cap must hold while reading.
          res.writeHead(200)
          for (let offset = 0; offset < bigAnswer.length; offset += 16 * 1024) res.write(bigAnswer.subarray(offset, offset + 16 * 1024))
          return res.end()
        }
        case "/size": {
          const size = Number(url.searchParams.get("n"))
          res.writeHead(200)
          res.write(Buffer.alloc(Math.floor(size / 2), "a"))
          return res.end(Buffer.alloc(size - Math.floor(size / 2), "b"))
        }
        default:
          return res.writeHead(404).end()
      }
    })
  })
  server.on("connection", (socket: Socket) => {
    sockets.add(socket)
    const connection: Connection = {
      isClosed: false,
      closed: once(socket, "close").then(() => {
        connection.isClosed = true
        sockets.delete(socket)
      })
    }
    connections.push(connection)
  })
  server.listen(0, "::")
  await once(server, "listening")
  const port = (server.address() as AddressInfo).port
  return {
    port,
    base: `https://127.0.0.1:${port}`,
    hits,
    connections,
    hold: () => {
      let seen!: () => void
      let closed!: () => void
      const promises = { seen: new Promise<void>((resolve) => (seen = resolve)), closed: new Promise<void>((resolve) => (closed = resolve)) }
      held = { seen, closed }
      return promises
    },
    close: async () => {
      for (const socket of sockets) socket.destroy()
      server.close()
      await once(server, "close")
    }
  }
}

let tls: TestTls
let server: TestServer
/** A server whose certificate, signed by the trusted authority, names another host only. */
let wrongName: TestServer
let wrongNameTls: TestTls

beforeAll(async () => {
  tls = await makeTestTls()
  server = await startServer(tls)
  wrongNameTls = await makeTestTls({ dnsNames: ["wrong.example"], ipAddresses: [] })
  wrongName = await startServer(wrongNameTls)
})

afterAll(async () => {
  await server?.close()
  await wrongName?.close()
  await tls?.cleanup()
  await wrongNameTls?.cleanup()
})

/** Outbound that trusts the test authority and lets the loopback server through. */
const trusting = (options: Partial<NodeOutbound.Options> = {}) =>
  NodeOutbound.layer({ allowHosts: ["127.0.0.1", "localhost", "::1"], ca: tls.caPem, ...options })

const request = (url: string, body = "{}") => ({ url, headers: { "content-type": "application/json" }, body })

const postFailure = (url: string) =>
  Effect.gen(function*() {
    const outbound = yield* Outbound
    return yield* Effect.flip(outbound.post(request(url)))
  })

const checkFailure = (url: string) =>
  Effect.gen(function*() {
    const outbound = yield* Outbound
    return yield* Effect.flip(outbound.check(url))
  })

/** Waits (a little) for a promise; fails the test if it does not settle in time. */
const within = <A>(promise: Promise<A>, millis = 2_000) =>
  Effect.promise(() => promise).pipe(Effect.timeoutFail({ duration: millis, onTimeout: () => new Error(`not within ${millis} ms`) }))

describe("NodeOutbound.post against a real HTTPS server", () => {
  it.live("a 200 answer comes back with its body (UTF-8) and the latency of the call", () =>
    Effect.gen(function*() {
      const outbound = yield* Outbound
      const answer = yield* outbound.post(request(`${server.base}/ok`))
      expect(answer.status).toBe(200)
      expect(answer.body).toBe("thanks, Zoë 🎉")
      expect(answer.latencyMs).toBeGreaterThanOrEqual(0)
      const slow = yield* outbound.post(request(`${server.base}/slow?ms=120`))
      expect(slow).toMatchObject({ status: 202, body: "later" })
      expect(slow.latencyMs).toBeGreaterThanOrEqual(110)
      expect(slow.latencyMs).toBeLessThan(5_000)
      const failing = yield* outbound.post(request(`${server.base}/error`))
      expect(failing).toMatchObject({ status: 500, body: "boom" })
    }).pipe(Effect.provide(trusting())))

  it.live("the method, path, query, headers and body arrive byte for byte, with the body's length in bytes", () =>
    Effect.gen(function*() {
      const outbound = yield* Outbound
      const body = JSON.stringify({ event: "meeting.created", name: "Zoë 会議 🎉", text: "line\nbreak \"quoted\"" })
      const before = server.hits.length
      yield* outbound.post({
        url: `${server.base}/ok?delivery=d-1&x=%20y`,
        headers: { "Content-Type": "application/json", "X-Svc-Signature": "sha256=0123abcd", "User-Agent": "Convene-Webhooks/1" },
        body
      })
      const hits = server.hits.slice(before)
      expect(hits).toHaveLength(1)
      const hit = hits[0]!
      expect(hit.method).toBe("POST")
      expect(hit.path).toBe("/ok")
      expect(hit.body.equals(Buffer.from(body, "utf8"))).toBe(true)
      expect(hit.headers["content-length"]).toBe(String(Buffer.byteLength(body)))
      expect(Buffer.byteLength(body)).toBeGreaterThan(body.length)
      expect(hit.headers["content-type"]).toBe("application/json")
      expect(hit.headers["x-svc-signature"]).toBe("sha256=0123abcd")
      expect(hit.headers["user-agent"]).toBe("Convene-Webhooks/1")
      // The names go out as given.
      expect(hit.rawHeaders).toContain("X-Svc-Signature")
    }).pipe(Effect.provide(trusting())))

  it.live("a 302 is returned as the answer and its Location is not requested", () =>
    Effect.gen(function*() {
      const outbound = yield* Outbound
      const targetHits = () => server.hits.filter((hit) => hit.path === "/target").length
      const before = targetHits()
      const answer = yield* outbound.post(request(`${server.base}/redirect`))
      expect(answer).toMatchObject({ status: 302, body: "moved" })
      // A moment for a follow-up request, were one sent.
      yield* Effect.sleep("100 millis")
      expect(targetHits()).toBe(before)
    }).pipe(Effect.provide(trusting())))

  it.live("a server that never answers: timeout within the configured limit, and the connection is closed", () =>
    Effect.gen(function*() {
      const outbound = yield* Outbound
      const held = server.hold()
      const started = Date.now()
      const error = yield* Effect.flip(outbound.post(request(`${server.base}/hang`)))
      const elapsed = Date.now() - started
      expect(error).toBeInstanceOf(OutboundFailed)
      expect(error.reason).toBe("timeout")
      expect(error.message).toContain("127.0.0.1")
      expect(elapsed).toBeGreaterThanOrEqual(290)
      expect(elapsed).toBeLessThan(2_000)
      yield* within(held.seen)
      yield* within(held.closed)
    }).pipe(Effect.provide(trusting({ timeout: "300 millis" }))))

  it.live("the time limit covers reading the body: a body that stalls half-way is a timeout", () =>
    Effect.gen(function*() {
      const outbound = yield* Outbound
      const held = server.hold()
      const error = yield* Effect.flip(outbound.post(request(`${server.base}/slow-body`)))
      expect(error.reason).toBe("timeout")
      yield* within(held.closed)
    }).pipe(Effect.provide(trusting({ timeout: "300 millis" }))))

  it.live("a 1 MB answer is too_large, whether its length is declared or not", () =>
    Effect.gen(function*() {
      const declared = yield* postFailure(`${server.base}/big`)
      expect(declared.reason).toBe("too_large")
      const undeclared = yield* postFailure(`${server.base}/big-undeclared`)
      expect(undeclared.reason).toBe("too_large")
      expect(undeclared.message).toContain(String(NodeOutbound.defaultMaxResponseBytes))
    }).pipe(Effect.provide(trusting())))

  it.live("an answer of exactly the cap is read whole; one byte more is too_large", () =>
    Effect.gen(function*() {
      const outbound = yield* Outbound
      const whole = yield* outbound.post(request(`${server.base}/size?n=1000`))
      expect(whole.body).toHaveLength(1000)
      expect(whole.body).toBe("a".repeat(500) + "b".repeat(500))
      const over = yield* Effect.flip(outbound.post(request(`${server.base}/size?n=1001`)))
      expect(over.reason).toBe("too_large")
    }).pipe(Effect.provide(trusting({ maxResponseBytes: 1000 }))))

  it.live("a certificate from an authority the process does not trust is a tls failure", () =>
    Effect.gen(function*() {
      const before = server.hits.length
      const error = yield* postFailure(`${server.base}/ok`)
      expect(error.reason).toBe("tls")
      expect(error.message).toContain("not signed by a trusted certificate authority")
      expect(server.hits.length).toBe(before)
    }).pipe(Effect.provide(NodeOutbound.layer({ allowHosts: ["127.0.0.1"] }))))

  it.live("a trusted certificate for another host name is a tls failure", () =>
    Effect.gen(function*() {
      const error = yield* postFailure(`${wrongName.base}/ok`)
      expect(error.reason).toBe("tls")
      expect(error.message).toContain("not for this host name")
      expect(wrongName.hits).toHaveLength(0)
    }).pipe(Effect.provide(NodeOutbound.layer({ allowHosts: ["127.0.0.1"], ca: wrongNameTls.caPem }))))

  it.live("a closed port is a connection failure", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(freePort)
      const error = yield* postFailure(`https://127.0.0.1:${port}/ok`)
      expect(error.reason).toBe("connection")
      expect(error.message).toBe("127.0.0.1 refused the connection")
    }).pipe(Effect.provide(trusting())))

  it.live("an answer cut off before its end is a connection failure", () =>
    Effect.gen(function*() {
      const error = yield* postFailure(`${server.base}/cut`)
      expect(error.reason).toBe("connection")
      expect(error.message).toBe("127.0.0.1 closed the connection before the answer was complete")
    }).pipe(Effect.provide(trusting())))

  it.live("a header Node cannot send (a line break in its value) is refused before anything is sent", () =>
    Effect.gen(function*() {
      const outbound = yield* Outbound
      const connections = server.connections.length
      const error = yield* Effect.flip(
        outbound.post({ url: `${server.base}/ok`, headers: { "x-injected": "a\r\nx-evil: 1" }, body: "{}" })
      )
      expect(error.reason).toBe("refused")
      expect(error.message).toContain("The request cannot be sent")
      expect(server.connections.length).toBe(connections)
    }).pipe(Effect.provide(trusting())))

  it.live("interrupting the call aborts the request: the server sees its connection close", () =>
    Effect.gen(function*() {
      const outbound = yield* Outbound
      const held = server.hold()
      const fiber = yield* Effect.fork(outbound.post(request(`${server.base}/hang`)))
      yield* within(held.seen)
      yield* Fiber.interrupt(fiber)
      yield* within(held.closed)
    }).pipe(Effect.provide(trusting())))

  it.live("keep-alive: calls to one receiver share a connection, closed when the layer's scope ends", () =>
    Effect.gen(function*() {
      const first = server.connections.length
      yield* Effect.scoped(
        Effect.gen(function*() {
          const outbound = yield* Outbound
          for (let i = 0; i < 3; i++) expect((yield* outbound.post(request(`${server.base}/ok`))).status).toBe(200)
          expect(server.connections.length - first).toBe(1)
          expect(server.connections[first]!.isClosed).toBe(false)
        }).pipe(Effect.provide(Layer.fresh(trusting())))
      )
      yield* within(server.connections[first]!.closed)

      const again = server.connections.length
      yield* Effect.gen(function*() {
        const outbound = yield* Outbound
        for (let i = 0; i < 3; i++) yield* outbound.post(request(`${server.base}/ok`))
      }).pipe(Effect.provide(trusting({ keepAlive: false })))
      expect(server.connections.length - again).toBe(3)
    }))
})

describe("NodeOutbound's address rule (no allow-listed host)", () => {
  const strict = () => NodeOutbound.layer({ allowHosts: [], ca: tls.caPem })

  it.live("loopback, private, link-local, IPv4-mapped and unspecified targets are refused by check and by post; the server sees nothing", () =>
    Effect.gen(function*() {
      const port = server.port
      const targets = [
        `https://127.0.0.1:${port}/ok`,
        `https://localhost:${port}/ok`,
        `https://LocalHost:${port}/ok`,
        `https://10.0.0.1/hook`,
        `https://169.254.169.254/latest/meta-data/`,
        `https://[::1]:${port}/ok`,
        `https://[::ffff:127.0.0.1]:${port}/ok`,
        `https://0.0.0.0:${port}/ok`,
        // Other spellings of 127.0.0.1 that URL parsers accept.
        `https://2130706433:${port}/ok`,
        `https://0x7f.1:${port}/ok`
      ]
      const connections = server.connections.length
      const hits = server.hits.length
      for (const url of targets) {
        const refused = yield* checkFailure(url)
        expect(refused, url).toBeInstanceOf(OutboundRefused)
        expect(refused.message, url).toMatch(/is not a public address|resolves to an address that is not public/)
        const failed = yield* postFailure(url)
        expect(failed.reason, url).toBe("refused")
        expect(failed.message, url).toBe(refused.message)
      }
      expect(server.connections.length).toBe(connections)
      expect(server.hits.length).toBe(hits)
    }).pipe(Effect.provide(strict())))

  it.live("the refusal names the host and no address it resolved to", () =>
    Effect.gen(function*() {
      const refused = yield* checkFailure(`https://localhost:${server.port}/ok`)
      expect(refused.message).toContain("localhost")
      expect(refused.message).not.toContain("127.0.0.1")
    }).pipe(Effect.provide(strict())))

  it.live("every internal range is refused and public literals pass check (no network needed)", () =>
    Effect.gen(function*() {
      const outbound = yield* Outbound
      const internal = [
        "192.168.1.10", "172.16.0.1", "172.31.255.255", "100.64.0.1", "127.255.255.254", "224.0.0.1",
        "255.255.255.255", "192.0.2.1", "198.18.0.1", "240.0.0.1", "0.1.2.3",
        "[fe80::1]", "[fc00::1]", "[fd12:3456::1]", "[ff02::1]", "[::]", "[2001:db8::1]", "[64:ff9b::7f00:1]",
        "[2002:7f00:1::1]", "[2001::1]", "[::7f00:1]", "[::ffff:10.0.0.1]", "[fec0::1]", "[100::1]"
      ]
      for (const host of internal) {
        const refused = yield* checkFailure(`https://${host}/hook`)
        expect(refused.message, host).toContain("is not a public address")
      }
      for (const host of ["93.184.216.34", "1.1.1.1", "8.8.8.8", "[2606:4700:4700::1111]", "[2a00:1450:4001:81c::200e]"]) {
        expect(Either.isRight(yield* Effect.either(outbound.check(`https://${host}/hook`))), host).toBe(true)
      }
    }).pipe(Effect.provide(strict())))

  it.live("a host that does not resolve is refused by check and fails post as a connection failure", () =>
    Effect.gen(function*() {
      const refused = yield* checkFailure("https://nonexistent.invalid/hook")
      expect(refused.message).toBe("The host nonexistent.invalid does not resolve")
      const failed = yield* postFailure("https://nonexistent.invalid/hook")
      expect(failed.reason).toBe("connection")
      expect(failed.message).toBe("The host nonexistent.invalid does not resolve")
    }).pipe(Effect.provide(strict())))

  it.live("only https URLs without credentials: http, other schemes, user:pass@ and non-URLs are refused", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [string, string]> = [
        ["http://93.184.216.34/hook", "The URL must use https (not http)"],
        ["ftp://93.184.216.34/hook", "The URL must use https (not ftp)"],
        ["https://user:secret@93.184.216.34/hook", "The URL must not contain credentials (user:password@)"],
        ["https://user@93.184.216.34/hook", "The URL must not contain credentials (user:password@)"],
        ["not a url", "The URL is not a valid absolute URL"],
        ["/relative/path", "The URL is not a valid absolute URL"]
      ]
      for (const [url, message] of cases) {
        expect((yield* checkFailure(url)).message, url).toBe(message)
        const failed = yield* postFailure(url)
        expect(failed.reason, url).toBe("refused")
        expect(failed.message, url).toBe(message)
        expect(failed.message).not.toContain("secret")
      }
    }).pipe(Effect.provide(strict())))
})

/** False on Node releases whose checkServerIdentity never matches an IPv6 host (22.23; fixed in 24.x by #64145). */
const nodeMatchesIpv6Sans = NodeTls.checkServerIdentity("::1", { subject: {}, subjectaltname: "IP Address:::1" } as PeerCertificate) ===
  undefined

describe("NodeOutbound's allow-list", () => {
  it.live("an allow-listed host skips the address rule (case-insensitive, IPv6 with or without brackets)", () =>
    Effect.gen(function*() {
      const outbound = yield* Outbound
      yield* outbound.check(`https://localhost:${server.port}/ok`)
      yield* outbound.check(`https://[::1]:${server.port}/ok`)
      expect((yield* outbound.post(request(`https://localhost:${server.port}/ok`))).status).toBe(200)
      const ipv6 = yield* Effect.either(outbound.post(request(`https://[::1]:${server.port}/ok`)))
      if (nodeMatchesIpv6Sans) expect(Either.getOrThrow(ipv6).status).toBe(200)
      // Node 22.23 (nodejs/node#64032) fails every IPv6 IP-Address SAN: the call went out and failed at TLS.
      else expect(Either.isLeft(ipv6) && ipv6.left.reason).toBe("tls")
      // Not allow-listed: still refused.
      expect((yield* postFailure(`${server.base}/ok`)).reason).toBe("refused")
    }).pipe(Effect.provide(NodeOutbound.layer({ allowHosts: ["LOCALHOST", "[::1]"], ca: tls.caPem }))))

  it.live("the https rule still holds for an allow-listed host", () =>
    Effect.gen(function*() {
      expect((yield* checkFailure(`http://127.0.0.1:${server.port}/ok`)).message).toBe("The URL must use https (not http)")
      expect((yield* postFailure(`http://127.0.0.1:${server.port}/ok`)).reason).toBe("refused")
    }).pipe(Effect.provide(trusting())))
})
