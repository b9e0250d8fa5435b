/**
 * An HTTPS receiver of webhooks for end-to-end tests: a node:https server on 127.0.0.1 with the test's certificate
 * (./tls.ts), which records every request it is sent and answers as the test says; and the helpers the webhook tests
 * share to wait for what it received and to read a request's headers.
 */
import { once } from "node:events"
import type { ServerResponse } from "node:http"
import { createServer } from "node:https"
import type { TestTls } from "./tls.js"

export interface Received {
  readonly path: string
  readonly headers: Record<string, string | Array<string> | undefined>
  /** The exact bytes received, as text. */
  readonly body: string
  /** When it arrived (Date.now()). */
  readonly at: number
}

export interface Receiver {
  /** `https://127.0.0.1:<port>`. */
  readonly url: string
  /** Every request received so far, in order. */
  readonly received: Array<Received>
  readonly close: () => Promise<void>
}

/** Starts a receiver: each request, read whole, is recorded, then `answer` writes its response. */
export const startReceiver = async (tls: TestTls, answer: (message: Received, response: ServerResponse) => void): Promise<Receiver> => {
  const received: Array<Received> = []
  const server = createServer({ key: tls.keyPem, cert: tls.certPem }, (request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const message = { path: request.url ?? "", headers: request.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() }
      received.push(message)
      answer(message, response)
    })
  })
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("no port")
  return {
    url: `https://127.0.0.1:${address.port}`,
    received,
    close: async () => {
      server.closeAllConnections()
      server.close()
      await once(server, "close")
    }
  }
}

/** A header of a received request, its values joined. */
export const header = (message: Received, name: string): string | undefined => {
  const value = message.headers[name]
  return Array.isArray(value) ? value.join(",") : value
}

/** Polls `probe` until it answers something, for at most `ms` (then fails naming `what`). */
export const waitFor = async <A>(probe: () => A | undefined | Promise<A | undefined>, what: string, ms = 15_000): Promise<A> => {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
