/**
 * A raw HTTP/1.1 client for the fuzz tests, on node:http: it sends the path byte for byte (no URL
 * normalisation, unlike fetch), any method, any headers, any bytes as the body, with Content-Length or chunked,
 * and it still reads the answer when the server closes the connection while the body is being sent (as it does
 * after a 413).
 */
import { request as httpRequest } from "node:http"

export type WireBody =
  /** The bytes, sent with Content-Length (unless `chunked`). */
  | { readonly kind: "bytes"; readonly bytes: Buffer; readonly chunked?: boolean }
  /** `size` bytes of `fill`, sent chunked (no Content-Length) in chunks of 64 KiB. */
  | { readonly kind: "stream"; readonly prefix: string; readonly size: number; readonly fill: string; readonly suffix: string }

export interface WireRequest {
  readonly method: string
  /** The request target exactly as sent: path and query. */
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body?: WireBody
}

export interface WireResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  readonly text: string
  /** The body parsed as JSON when it is JSON, else undefined. */
  readonly json: unknown
  /** Milliseconds from the first byte sent to the last byte read. */
  readonly ms: number
  /** A failure while sending (EPIPE, ECONNRESET) that did not stop the answer from arriving. */
  readonly sendError?: string
}

/** Sends one request on a new connection; rejects when no answer arrives within `timeoutMs` (a hang). */
export const send = (baseUrl: string, request: WireRequest, timeoutMs = 15_000): Promise<WireResponse> =>
  new Promise<WireResponse>((resolve, reject) => {
    const url = new URL(baseUrl)
    const started = Date.now()
    let sendError: string | undefined
    let settled = false
    const finish = (outcome: () => void) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      outcome()
    }
    const headers: Record<string, string> = { ...request.headers }
    const body = request.body
    if (body !== undefined && body.kind === "bytes" && body.chunked !== true) headers["content-length"] = String(body.bytes.length)
    const req = httpRequest({
      host: url.hostname,
      port: url.port,
      method: request.method,
      path: request.path,
      headers,
      agent: false,
      // Node would otherwise refuse to send some of the hostile request targets itself.
      insecureHTTPParser: true
    })
    const timer = setTimeout(() => {
      finish(() => reject(new Error(`no answer within ${timeoutMs} ms (the server hangs)`)))
      req.destroy()
    }, timeoutMs)
    req.on("response", (response) => {
      const chunks: Array<Buffer> = []
      // An event stream does not end: its first bytes are its answer, then the request is dropped.
      if (String(response.headers["content-type"] ?? "").startsWith("text/event-stream")) {
        response.once("data", (chunk: Buffer) => {
          finish(() =>
            resolve({
              status: response.statusCode ?? 0,
              headers: response.headers,
              text: chunk.toString("utf8"),
              json: undefined,
              ms: Date.now() - started
            })
          )
          req.destroy()
        })
        return
      }
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("error", (error) => finish(() => reject(error)))
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8")
        let json: unknown = undefined
        if (String(response.headers["content-type"] ?? "").includes("json") && text.length > 0) {
          try {
            json = JSON.parse(text)
          } catch {
            json = undefined
          }
        }
        finish(() =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            text,
            json,
            ms: Date.now() - started,
            ...(sendError === undefined ? {} : { sendError })
          })
        )
        req.destroy()
      })
    })
    req.on("error", (error: Error & { code?: string }) => {
      // Writing may fail once the server has answered and closed; the answer may still be on its way.
      sendError = error.code ?? error.message
      setTimeout(() => finish(() => reject(new Error(`connection failed without an answer: ${sendError}`))), 500)
    })
    if (body === undefined) {
      req.end()
    } else if (body.kind === "bytes" && body.chunked === true) {
      // Written before end(), so Node sends it chunked rather than computing a Content-Length.
      req.write(body.bytes)
      req.end()
    } else if (body.kind === "bytes") {
      req.end(body.bytes)
    } else {
      const chunk = Buffer.from(body.fill.repeat(Math.ceil(65536 / body.fill.length)).slice(0, 65536))
      let left = body.size
      const pump = () => {
        if (settled) return
        req.write(body.prefix)
        const next = () => {
          while (left > 0 && !settled && !req.destroyed) {
            const part = left >= chunk.length ? chunk : chunk.subarray(0, left)
            left -= part.length
            if (!req.write(part)) {
              req.once("drain", next)
              return
            }
          }
          if (!settled && !req.destroyed) req.end(body.suffix)
        }
        next()
      }
      pump()
    }
  })
