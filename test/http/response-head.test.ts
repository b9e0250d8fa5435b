/**
 * An answer whose head Node would refuse (Lifecycle.ts): a header value with CR LF or a character beyond
 * Latin-1 makes Node throw while the platform writes the head, after the gate has already returned. The gate
 * checks the head with Node's own validators first, so such an answer is a 500 in the envelope with an error
 * line and its cause, like any other unexpected failure, instead of an empty 500 that nobody hears of.
 */
import { Lifecycle, Logging } from "@convene/http"
import { NodeCrypto } from "@convene/node"
import { HttpServer, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, Logger, ManagedRuntime, Option } from "effect"
import { createServer } from "node:http"
import { describe, expect, it } from "vitest"

/** The gate on a real Node server on a free port, serving `app`, its log lines collected in `lines`. */
const serve = async (app: Effect.Effect<HttpServerResponse.HttpServerResponse>, lines: Array<string>) => {
  const node = createServer()
  const gate = Lifecycle.layer(node, { accessLog: false, metrics: Option.none() }).pipe(
    Layer.provide(NodeHttpServer.layer(() => node, { port: 0, host: "127.0.0.1" }))
  )
  const served = HttpServer.serve(app).pipe(Layer.provideMerge(gate))
  const runtime = ManagedRuntime.make(
    served.pipe(
      Layer.provide(NodeCrypto.layer),
      Layer.provide(Logger.replace(Logger.defaultLogger, Logging.collecting("json", lines)))
    )
  )
  const server = await runtime.runPromise(HttpServer.HttpServer)
  if (server.address._tag !== "TcpAddress") throw new Error("not a TCP server")
  return { url: `http://127.0.0.1:${server.address.port}`, close: () => runtime.dispose() }
}

describe("an answer Node cannot write", () => {
  it("is a 500 in the envelope with an error line that names the header, not an empty 500 without a line", async () => {
    const lines: Array<string> = []
    const app = Effect.succeed(HttpServerResponse.empty({ status: 302, headers: { location: "http://127.0.0.1:8000/cb\r\nSet-Cookie: pwn=1" } }))
    const server = await serve(app, lines)
    try {
      const response = await fetch(`${server.url}/anything`, { redirect: "manual" })
      expect(response.status).toBe(500)
      expect(response.headers.get("location")).toBeNull()
      expect(response.headers.getSetCookie()).toEqual([])
      const body = await response.json() as { code: string; request_id: string }
      expect(body.code).toBe("internal_server_error")
      expect(response.headers.get("x-request-id")).toBe(body.request_id)
      await new Promise((resolve) => setTimeout(resolve, 50))
      const failed = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.msg === "request")
      expect(failed).toHaveLength(1)
      expect(failed[0]).toMatchObject({ level: "error", status: 500 })
      expect(String(failed[0]!.error)).toMatch(/location/i)
    } finally {
      await server.close()
    }
  })

  it("leaves a head Node accepts alone", async () => {
    const lines: Array<string> = []
    const app = Effect.succeed(HttpServerResponse.empty({ status: 302, headers: { location: "http://127.0.0.1:8000/cb?x=%0D%0A" } }))
    const server = await serve(app, lines)
    try {
      const response = await fetch(`${server.url}/anything`, { redirect: "manual" })
      expect(response.status).toBe(302)
      expect(response.headers.get("location")).toBe("http://127.0.0.1:8000/cb?x=%0D%0A")
      expect(lines.filter((line) => line.includes("\"level\":\"error\""))).toEqual([])
    } finally {
      await server.close()
    }
  })
})
