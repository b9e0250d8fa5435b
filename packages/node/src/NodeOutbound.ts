/**
 * node:https behind the core's Outbound port: the calls this server makes to URLs its users gave it.
 *
 * The safety rules, in one place:
 * - only `https:` URLs without credentials (`user:pass@`);
 * - the host must resolve, and every address it resolves to must be a public unicast address (ipaddr.js's
 *   "unicast" range; for IPv6 also inside 2000::/3, the global unicast space): loopback, private, link-local
 *   (cloud metadata at 169.254.169.254), unique-local, carrier-grade NAT, reserved, multicast, unspecified,
 *   IPv4-mapped/compatible IPv6 and the 6to4/Teredo/NAT64 tunnels are refused, unless the operator allow-listed
 *   the host (`allowHosts`: an exact host name or IP literal, case-insensitive; the https rule still applies);
 * - the same rule is applied again to the address actually connected to (a custom `lookup` on the socket), so a
 *   name that resolved to a public address when checked and to an internal one at the call (DNS rebinding) is
 *   refused at the call;
 * - redirects are never followed (a 3xx is an answer), every call has an overall time limit (connect, TLS,
 *   waiting and reading) and the answer a size cap.
 *
 * Messages name the host the user gave, never an address it resolved to (with split-horizon DNS that would tell
 * the user something about this server's network) nor any other detail of this server.
 */
import {
  Outbound,
  OutboundFailed,
  type OutboundGet,
  OutboundRefused,
  type OutboundRequest,
  type OutboundResponse
} from "@convene/core"
import { Duration, Effect, Either, Layer } from "effect"
import ipaddr from "ipaddr.js"
import * as Dns from "node:dns"
import type * as Http from "node:http"
import * as Https from "node:https"
import * as Net from "node:net"
import * as Tls from "node:tls"

export interface Options {
  /**
   * Hosts exempt from the address rule (not from the https rule): exact host names or IP literals, compared
   * case-insensitively (`"hooks.internal.example"`, `"10.0.0.5"`, `"::1"` or `"[::1]"`). For receivers on the
   * operator's own network.
   */
  readonly allowHosts: ReadonlyArray<string>
  /** The time limit of one call: connect, TLS, waiting for and reading the answer. Default 10 seconds. */
  readonly timeout?: Duration.DurationInput
  /** The largest answer body read, in bytes; a longer answer fails "too_large". Default 64 KiB. */
  readonly maxResponseBytes?: number
  /**
   * Extra certificate authorities (PEM) trusted besides Node's default store: for tests and for embedders whose
   * receivers use a private CA. A separate server process trusts a private CA through NODE_EXTRA_CA_CERTS instead.
   */
  readonly ca?: string | ReadonlyArray<string>
  /**
   * Keep connections open between calls to the same receiver (one https.Agent per layer, idle sockets closed
   * after 4 seconds, all closed when the layer's scope ends). Default true: a delivery to a receiver already
   * connected skips the TCP and TLS handshakes.
   */
  readonly keepAlive?: boolean
}

export const defaultTimeout = Duration.seconds(10)
export const defaultMaxResponseBytes = 64 * 1024

/** Idle keep-alive sockets are closed before the usual server-side idle limit (Node's is 5 s). */
const idleSocketMillis = 4_000

// ---------------------------------------------------------------------------------------------------------------
// The address rule

const globalUnicast = ipaddr.IPv6.parseCIDR("2000::/3")

/** Whether `address` (as resolved, or an IP literal) is a public unicast address. */
export const isPublicAddress = (address: string): boolean => {
  if (!ipaddr.isValid(address)) return false
  // process() turns an IPv4-mapped IPv6 address (::ffff:127.0.0.1) into the IPv4 address it carries.
  const parsed = ipaddr.process(address)
  if (parsed.range() !== "unicast") return false
  return parsed.kind() === "ipv4" || parsed.match(globalUnicast)
}

/** A host as compared with allowHosts: lower case, no IPv6 brackets, no trailing dot, IPv6 in one spelling. */
const normalizeHost = (host: string): string => {
  const bare = host.toLowerCase().replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "")
  return Net.isIPv6(bare) ? ipaddr.IPv6.parse(bare).toRFC5952String() : bare
}

interface Target {
  readonly url: URL
  /** As in the URL for messages (`example.com`, `[::1]`). */
  readonly host: string
  /** Without IPv6 brackets, for DNS and sockets. */
  readonly hostname: string
  /** Whether the host is an IP literal (no lookup happens for it). */
  readonly literal: boolean
  readonly allowed: boolean
}

const parseTarget = (raw: string, allowed: ReadonlySet<string>): Either.Either<Target, string> => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return Either.left("The URL is not a valid absolute URL")
  }
  if (url.protocol !== "https:") {
    return Either.left(`The URL must use https (not ${url.protocol.replace(/:$/, "")})`)
  }
  if (url.username !== "" || url.password !== "") {
    return Either.left("The URL must not contain credentials (user:password@)")
  }
  const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1")
  if (hostname === "") return Either.left("The URL has no host")
  return Either.right({
    url,
    host: url.hostname,
    hostname,
    literal: Net.isIP(hostname) !== 0,
    allowed: allowed.has(normalizeHost(hostname))
  })
}

const internalAddress = (target: Target) =>
  target.literal
    ? `The address ${target.host} is not a public address (loopback, private, link-local and other internal addresses are refused)`
    : `The host ${target.host} resolves to an address that is not public (loopback, private, link-local and other internal addresses are refused)`

const doesNotResolve = (host: string) => `The host ${host} does not resolve`

// ---------------------------------------------------------------------------------------------------------------
// Failures while calling

/** Raised from the socket's lookup when the address rule refuses the connection. */
class AddressRefused extends Error {}

const codeOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined

/** OpenSSL's certificate verification codes as Node reports them, and Node's own TLS codes. */
const tlsCodes = new Set([
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_CRL",
  "UNABLE_TO_DECRYPT_CERT_SIGNATURE",
  "UNABLE_TO_DECRYPT_CRL_SIGNATURE",
  "UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY",
  "CERT_SIGNATURE_FAILURE",
  "CRL_SIGNATURE_FAILURE",
  "CERT_NOT_YET_VALID",
  "CERT_HAS_EXPIRED",
  "CRL_NOT_YET_VALID",
  "CRL_HAS_EXPIRED",
  "ERROR_IN_CERT_NOT_BEFORE_FIELD",
  "ERROR_IN_CERT_NOT_AFTER_FIELD",
  "ERROR_IN_CRL_LAST_UPDATE_FIELD",
  "ERROR_IN_CRL_NEXT_UPDATE_FIELD",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "CERT_CHAIN_TOO_LONG",
  "CERT_REVOKED",
  "INVALID_CA",
  "PATH_LENGTH_EXCEEDED",
  "INVALID_PURPOSE",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "HOSTNAME_MISMATCH",
  // A plain-HTTP or otherwise non-TLS answer on the port ("wrong version number").
  "EPROTO"
])

const isTlsError = (code: string | undefined) =>
  code !== undefined && (tlsCodes.has(code) || code.startsWith("ERR_TLS_") || code.startsWith("ERR_SSL_"))

const failure = (error: unknown, host: string): OutboundFailed => {
  if (error instanceof AddressRefused) return new OutboundFailed({ reason: "refused", message: error.message })
  const code = codeOf(error)
  if (isTlsError(code)) {
    return new OutboundFailed({ reason: "tls", message: `The TLS connection to ${host} failed: ${tlsReason(code)}` })
  }
  switch (code) {
    case "ENOTFOUND":
    case "EAI_AGAIN":
    case "EAI_NONAME":
    case "EAI_NODATA":
    case "EAI_FAIL":
      return new OutboundFailed({ reason: "connection", message: doesNotResolve(host) })
    case "ECONNREFUSED":
      return new OutboundFailed({ reason: "connection", message: `${host} refused the connection` })
    case "ECONNRESET":
    case "EPIPE":
      return new OutboundFailed({ reason: "connection", message: `The connection to ${host} was reset` })
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return new OutboundFailed({ reason: "connection", message: `${host} is unreachable` })
    default:
      return new OutboundFailed({
        reason: "connection",
        message: `The connection to ${host} failed${code === undefined ? "" : ` (${code})`}`
      })
  }
}

const tlsReason = (code: string | undefined): string => {
  switch (code) {
    case "ERR_TLS_CERT_ALTNAME_INVALID":
    case "HOSTNAME_MISMATCH":
      return "its certificate is not for this host name"
    case "CERT_HAS_EXPIRED":
      return "its certificate has expired"
    case "CERT_NOT_YET_VALID":
      return "its certificate is not yet valid"
    case "DEPTH_ZERO_SELF_SIGNED_CERT":
    case "SELF_SIGNED_CERT_IN_CHAIN":
    case "UNABLE_TO_GET_ISSUER_CERT":
    case "UNABLE_TO_GET_ISSUER_CERT_LOCALLY":
    case "UNABLE_TO_VERIFY_LEAF_SIGNATURE":
    case "CERT_UNTRUSTED":
      return "its certificate is not signed by a trusted certificate authority"
    case "EPROTO":
      return "it does not speak TLS on this port"
    default:
      return code ?? "handshake failed"
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The adapter

/**
 * The `lookup` given to the socket: resolves like dns.lookup and refuses the connection when any address breaks
 * the address rule (unless the host is allow-listed). Answers in the shape the caller asked for (`all` or not:
 * Node asks for all addresses when it tries IPv4 and IPv6 in turn).
 */
const guardedLookup = (target: Target): Net.LookupFunction => (hostname, options, callback) => {
  Dns.lookup(hostname, { family: options.family ?? 0, hints: options.hints ?? 0, all: true }, (error, addresses) => {
    if (error !== null) return callback(error, "", 0)
    if (!target.allowed && (addresses.length === 0 || !addresses.every((a) => isPublicAddress(a.address)))) {
      return callback(new AddressRefused(internalAddress(target)), "", 0)
    }
    if (options.all === true) {
      return (callback as unknown as (error: null, addresses: ReadonlyArray<Dns.LookupAddress>) => void)(null, addresses)
    }
    const first = addresses[0]!
    return callback(null, first.address, first.family)
  })
}

/** Node's default trust store (with NODE_EXTRA_CA_CERTS where Node exposes it) plus these authorities. */
const trustStore = (extra: ReadonlyArray<string>): ReadonlyArray<string> | undefined => {
  if (extra.length === 0) return undefined
  // tls.getCACertificates("default") (Node 22.15+, 23.5+) includes NODE_EXTRA_CA_CERTS; rootCertificates does not.
  const get = (Tls as { readonly getCACertificates?: (type: string) => ReadonlyArray<string> }).getCACertificates
  return [...(get === undefined ? Tls.rootCertificates : get("default")), ...extra]
}

/** The Outbound service with these options; a keep-alive agent lives as long as the scope. */
export const make = (options: Options) =>
  Effect.gen(function*() {
    const allowed = new Set(options.allowHosts.map(normalizeHost))
    const timeout = Duration.decode(options.timeout ?? defaultTimeout)
    const maxResponseBytes = options.maxResponseBytes ?? defaultMaxResponseBytes
    const ca = trustStore(options.ca === undefined ? [] : typeof options.ca === "string" ? [options.ca] : options.ca)
    // Made once: a context built from ~150 authorities per connection costs tens of milliseconds.
    const secureContext = ca === undefined ? undefined : Tls.createSecureContext({ ca: [...ca] })
    const agent = options.keepAlive === false
      ? false
      : yield* Effect.acquireRelease(
        Effect.sync(() => new Https.Agent({ keepAlive: true, timeout: idleSocketMillis })),
        (agent) => Effect.sync(() => agent.destroy())
      )

    const check = Effect.fn("Outbound.check")(function*(url: string) {
      const target = yield* Either.mapLeft(parseTarget(url, allowed), (message) => new OutboundRefused({ message }))
      if (target.literal) {
        if (!target.allowed && !isPublicAddress(target.hostname)) {
          return yield* new OutboundRefused({ message: internalAddress(target) })
        }
        return
      }
      const addresses = yield* Effect.tryPromise({
        try: () => Dns.promises.lookup(target.hostname, { all: true }),
        catch: () => new OutboundRefused({ message: doesNotResolve(target.host) })
      }).pipe(
        Effect.timeoutFail({
          duration: timeout,
          onTimeout: () => new OutboundRefused({ message: `The host ${target.host} did not resolve within ${Duration.format(timeout)}` })
        })
      )
      if (addresses.length === 0) return yield* new OutboundRefused({ message: doesNotResolve(target.host) })
      if (!target.allowed && !addresses.every((a) => isPublicAddress(a.address))) {
        return yield* new OutboundRefused({ message: internalAddress(target) })
      }
    })

    const call = (target: Target, request: OutboundRequest | OutboundGet, started: number) =>
      Effect.async<OutboundResponse, OutboundFailed>((resume) => {
        const body = "body" in request ? Buffer.from(request.body, "utf8") : undefined
        let settled = false
        const settle = (result: Effect.Effect<OutboundResponse, OutboundFailed>) => {
          if (settled) return
          settled = true
          resume(result)
        }
        const tooLarge = () => {
          req.destroy()
          settle(Effect.fail(
            new OutboundFailed({
              reason: "too_large",
              message: `The answer from ${target.host} is larger than ${maxResponseBytes} bytes`
            })
          ))
        }
        const requestOptions: Https.RequestOptions = {
          method: body === undefined ? "GET" : "POST",
          protocol: "https:",
          hostname: target.hostname,
          port: target.url.port === "" ? 443 : Number(target.url.port),
          path: `${target.url.pathname}${target.url.search}`,
          headers: body === undefined ? { ...request.headers } : { ...request.headers, "content-length": String(body.length) },
          agent,
          // Ignored for IP literals (Node connects without a lookup): those were checked before the call.
          lookup: guardedLookup(target),
          ...(secureContext === undefined ? {} : { secureContext })
        }
        const onResponse = (res: Http.IncomingMessage) => {
          const declared = Number(res.headers["content-length"])
          if (Number.isFinite(declared) && declared > maxResponseBytes) return tooLarge()
          const chunks: Array<Buffer> = []
          let received = 0
          res.on("data", (chunk: Buffer) => {
            received += chunk.length
            if (received > maxResponseBytes) return tooLarge()
            chunks.push(chunk)
          })
          res.on("end", () =>
            settle(Effect.succeed({
              status: res.statusCode ?? 0,
              body: Buffer.concat(chunks).toString("utf8"),
              latencyMs: Math.round(performance.now() - started),
              contentType: res.headers["content-type"]
            })))
          // The answer started and did not finish (Node reports it as an error, or only as a close).
          const cut = () =>
            settle(Effect.fail(
              new OutboundFailed({ reason: "connection", message: `${target.host} closed the connection before the answer was complete` })
            ))
          res.on("error", cut)
          res.on("close", () => {
            if (!res.complete) cut()
          })
        }
        let req: Http.ClientRequest
        try {
          req = Https.request(requestOptions, onResponse)
        } catch (error) {
          // A header name or value Node refuses to send (a line break, a non-token name): nothing was sent.
          settle(Effect.fail(
            new OutboundFailed({ reason: "refused", message: `The request cannot be sent: ${error instanceof Error ? error.message : String(error)}` })
          ))
          return
        }
        req.on("error", (error) => settle(Effect.fail(failure(error, target.host))))
        if (body === undefined) req.end()
        else req.end(body)
        // Interrupted (by the time limit or by the caller): abort the request and close its socket.
        return Effect.sync(() => {
          settled = true
          req.destroy()
        })
      })

    const send = (request: OutboundRequest | OutboundGet) => Effect.gen(function*() {
      const started = performance.now()
      const target = yield* Either.mapLeft(
        parseTarget(request.url, allowed),
        (message) => new OutboundFailed({ reason: "refused", message })
      )
      if (target.literal && !target.allowed && !isPublicAddress(target.hostname)) {
        return yield* new OutboundFailed({ reason: "refused", message: internalAddress(target) })
      }
      return yield* call(target, request, started).pipe(
        Effect.timeoutFail({
          duration: timeout,
          onTimeout: () =>
            new OutboundFailed({
              reason: "timeout",
              message: `${target.host} did not answer within ${Duration.format(timeout)}`
            })
        })
      )
    })

    const post = Effect.fn("Outbound.post")(function*(request: OutboundRequest) {
      return yield* send(request)
    })
    const get = Effect.fn("Outbound.get")(function*(request: OutboundGet) {
      return yield* send(request)
    })

    return Outbound.of({ check, post, get })
  })

/** Outbound on node:https with these rules (see `Options`). */
export const layer = (options: Options): Layer.Layer<Outbound> => Layer.scoped(Outbound, make(options))
