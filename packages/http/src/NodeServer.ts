/**
 * Node's HTTP server as Convene runs it: its limits (ServerLimits) set, and the failures Node answers by
 * itself before any request reaches the app (a malformed request, headers too large, a request that took
 * longer than its timeout) answered in the documented envelope instead of Node's bare status lines.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { Duplex } from "node:stream"
import { envelopeFor } from "@convene/api/Partner"
import type { ServerLimits } from "./Config.js"

const reasons: Record<number, string> = {
  400: "Bad Request",
  408: "Request Timeout",
  431: "Request Header Fields Too Large"
}

/** A complete HTTP/1.1 response in the envelope, for writing straight to a socket. */
export const rawFailure = (status: 400 | 408 | 431, code: string, text: string, requestId: string, url?: string): string => {
  const body = JSON.stringify(envelopeFor(url, code, text, requestId))
  return [
    `HTTP/1.1 ${status} ${reasons[status]}`,
    "content-type: application/json",
    `content-length: ${Buffer.byteLength(body)}`,
    `x-request-id: ${requestId}`,
    "connection: close",
    "",
    body
  ].join("\r\n")
}

/**
 * How a client error Node detected is answered: in the envelope of the request's API when its path is known (a
 * request past its timeout after its headers came), else the first-party envelope.
 */
const answerFor = (error: Error & { readonly code?: string }, requestId: string, url: string | undefined): string => {
  switch (error.code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return rawFailure(408, "request_timeout", "the request was not received in time; send it again faster", requestId, url)
    case "HPE_HEADER_OVERFLOW":
      return rawFailure(431, "request_header_fields_too_large", "the request's headers are too large", requestId, url)
    default:
      return rawFailure(400, "bad_request", "the request is not valid HTTP/1.1", requestId, url)
  }
}

/**
 * A Node HTTP server with the limits set and client errors answered in the envelope. `requestId` makes the
 * ids of those answers (the host passes the Crypto port's UUIDs).
 */
export const make = (limits: ServerLimits, requestId: () => string): Server => {
  const server = createServer({
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // Node looks for requests past their timeouts every 30 s by default, which would let a slow client keep its
    // connection up to 30 s longer than its limit; look a few times per headers timeout instead (at most 1 s).
    connectionsCheckingInterval: Math.max(25, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4)))
  })
  server.maxConnections = limits.maxConnections
  // The response in flight on each socket: once the app has sent its headers, nothing else may be written.
  const responses = new WeakMap<Duplex, ServerResponse>()
  server.on("request", (request: IncomingMessage, response: ServerResponse) => {
    responses.set(request.socket, response)
  })
  server.on("clientError", (error: Error & { readonly code?: string }, socket: Duplex) => {
    const response = responses.get(socket)
    if (error.code === "ECONNRESET" || !socket.writable || response?.headersSent === true) {
      socket.destroy()
      return
    }
    socket.end(answerFor(error, requestId(), response?.req?.url))
  })
  return server
}
