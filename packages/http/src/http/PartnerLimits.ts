/**
 * The partner API's budgets per client address (partner-api.md, "Limits"), applied by path prefix before any routing:
 * /v1/partner/user, /v1/partner/admin, /oauth2 and /v1/partner/sso/info, the prefix itself and every path under it,
 * whoever serves it and whatever it answers (a 404 too), so a route added under a prefix is counted from its first
 * request. The core's RateLimits decides the budgets and windows and keeps the counters (shared by every process on
 * one PostgreSQL); the host tells it which part a request is for and who the client is:
 *
 * - the socket's peer, unless the peer is one of the trusted proxies (CONVENE_TRUSTED_PROXIES): then
 *   X-Forwarded-For is read from the right (the hop nearest to this server first), past the trusted proxies, and the
 *   first address that is not one is the client. An entry that is not an address stops the walk at the last trusted
 *   hop, which is then the client (what is left of the header was written by someone no trusted proxy vouches for);
 *   when every hop is trusted, the left-most is the client. The left-most entry, which any client can write, is never
 *   believed unless a trusted proxy put it there.
 * - IPv4-mapped IPv6 addresses (::ffff:127.0.0.1) are the IPv4 address they carry; an IPv6 client is counted by its
 *   /64 network (one host usually has a whole /64 to itself, so counting single addresses would give it 2^64 budgets).
 *
 * Over budget, the request is answered 429 with Retry-After and the partner body (@convene/api/PartnerLimits) and
 * goes no further.
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { type PartnerScope, RateLimits, refusal } from "@convene/core"
import { Context, Effect, Either, Layer, Option } from "effect"
import ipaddr from "ipaddr.js"
import { partnerRateLimited } from "@convene/api/PartnerLimits"
import type { HostConfig } from "../Config.js"

/** The parts of the partner API with a budget, by path prefix. */
const prefixes: ReadonlyArray<readonly [prefix: string, scope: PartnerScope]> = [
  ["/v1/partner/user", "partner_user"],
  ["/v1/partner/admin", "partner_admin"],
  ["/v1/partner/sso/info", "sso_info"],
  ["/oauth2", "oauth"]
]

/** The part of the partner API a request path (without its query) is for: the prefix itself or a path under it. */
export const scopeOf = (path: string): PartnerScope | undefined => {
  for (const [prefix, scope] of prefixes) {
    if (path.startsWith(prefix) && (path.length === prefix.length || path[prefix.length] === "/")) return scope
  }
  return undefined
}

type Address = ipaddr.IPv4 | ipaddr.IPv6

/** A range of addresses: an address and how many of its leading bits the range fixes. */
type Range = readonly [Address, number]

/**
 * An address as text: IPv4 in four decimal parts (no `127.1`, no octal or hexadecimal parts), or IPv6; an IPv4-mapped
 * IPv6 address is the IPv4 address it carries (`mapped` says it was one).
 */
const parseAddress = (text: string): { readonly address: Address; readonly mapped: boolean } | undefined => {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return { address: ipaddr.IPv4.parse(text), mapped: false }
  if (!ipaddr.IPv6.isValid(text)) return undefined
  const address = ipaddr.IPv6.parse(text)
  return address.isIPv4MappedAddress() ? { address: address.toIPv4Address(), mapped: true } : { address, mapped: false }
}

/** An address or a CIDR range as CONVENE_TRUSTED_PROXIES lists them (`::ffff:10.0.0.0/104` is `10.0.0.0/8`). */
const parseRange = (text: string): Range | undefined => {
  const [address, bits, ...rest] = text.split("/")
  const parsed = parseAddress(address ?? "")
  if (parsed === undefined || rest.length > 0) return undefined
  const width = parsed.address.kind() === "ipv4" ? 32 : 128
  if (bits === undefined) return [parsed.address, width]
  if (!/^\d{1,3}$/.test(bits)) return undefined
  const fixed = Number(bits) - (parsed.mapped ? 96 : 0)
  return fixed >= 0 && fixed <= width ? [parsed.address, fixed] : undefined
}

/** The proxies whose X-Forwarded-For is believed. */
export interface TrustedProxies {
  readonly ranges: ReadonlyArray<Range>
}

export const noTrustedProxies: TrustedProxies = { ranges: [] }

/** The entries of a comma list (CONVENE_TRUSTED_PROXIES), without blanks. */
export const listOf = (text: string): ReadonlyArray<string> =>
  text.split(",").map((entry) => entry.trim()).filter((entry) => entry.length > 0)

/**
 * Trusted proxies from IP addresses and CIDR ranges, IPv4 or IPv6 (`10.0.0.0/8`, `192.168.1.10`, `fd00::/8`, `::1`);
 * the problem with the first entry that is neither, otherwise.
 */
export const parseTrustedProxies = (entries: ReadonlyArray<string>): Either.Either<TrustedProxies, string> => {
  const ranges: Array<Range> = []
  for (const entry of entries) {
    const range = parseRange(entry.trim())
    if (range === undefined) {
      return Either.left(
        `expected a comma list of IP addresses and CIDR ranges, IPv4 or IPv6 (for example 10.0.0.0/8,192.168.1.10,fd00::/8), not ${JSON.stringify(entry)}`
      )
    }
    ranges.push(range)
  }
  return Either.right({ ranges })
}

const isTrusted = (trusted: TrustedProxies, address: Address): boolean =>
  trusted.ranges.some(([range, bits]) => range.kind() === address.kind() && address.match(range, bits))

/** One hop of X-Forwarded-For: an address, also `1.2.3.4:port`, `[2001:db8::1]` or `[2001:db8::1]:port`. */
const parseHop = (entry: string): Address | undefined => {
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(entry)
  const withPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(entry)
  return parseAddress(bracketed?.[1] ?? withPort?.[1] ?? entry)?.address
}

/**
 * The client of a request (see the module's comment): the socket's peer, or, when the peer is a trusted proxy, the
 * first address of X-Forwarded-For from the right that is not one. None when the peer is not an IP address.
 */
export const clientAddress = (
  trusted: TrustedProxies,
  peer: string | undefined,
  forwardedFor: string | undefined
): Address | undefined => {
  let client = peer === undefined ? undefined : parseAddress(peer)?.address
  if (client === undefined || !isTrusted(trusted, client) || forwardedFor === undefined) return client
  const hops = forwardedFor.split(",")
  for (let index = hops.length - 1; index >= 0; index--) {
    const hop = parseHop(hops[index]!.trim())
    // Not an address: the rest of the header is nobody's word; the last trusted hop is the client.
    if (hop === undefined) return client
    client = hop
    if (!isTrusted(trusted, hop)) return hop
  }
  return client
}

/** What a client is counted under: its IPv4 address, or its IPv6 /64 network. */
export const clientKey = (address: Address | undefined): string => {
  if (address === undefined) return "unknown"
  if (address.kind() === "ipv4") return address.toString()
  const network = new ipaddr.IPv6([...(address as ipaddr.IPv6).parts.slice(0, 4), 0, 0, 0, 0])
  return `${network.toRFC5952String()}/64`
}

/** The host's side of the partner budgets: answers a request over its part's budget before it is routed. */
export class PartnerLimiter extends Context.Tag("@convene/http/PartnerLimiter")<PartnerLimiter, {
  /** Takes the request's unit of its client's budget when `path` is in a part of the partner API; the 429 when over. */
  readonly refuse: (
    request: HttpServerRequest.HttpServerRequest,
    path: string,
    requestId: string
  ) => Effect.Effect<Option.Option<HttpServerResponse.HttpServerResponse>>
}>() {}

const notRefused = Effect.succeed(Option.none<HttpServerResponse.HttpServerResponse>())

/**
 * The limiter of a configuration: its trusted proxies (a list that does not parse stops the server at start) and the
 * core's RateLimits, whose policy has the budgets (none when the rate limits are off: nothing is counted).
 */
export const layer = (config: HostConfig): Layer.Layer<PartnerLimiter> =>
  Layer.effect(
    PartnerLimiter,
    Effect.gen(function*() {
      const trusted = yield* Either.match(parseTrustedProxies(config.trustedProxies ?? []), {
        onLeft: (problem) => Effect.dieMessage(`trusted proxies (CONVENE_TRUSTED_PROXIES): ${problem}`),
        onRight: Effect.succeed
      })
      const limits = yield* Effect.serviceOption(RateLimits)
      if (Option.isNone(limits)) return { refuse: () => notRefused }
      const { partnerBudgets, take } = limits.value
      return {
        refuse: (request, path, requestId) => {
          const scope = scopeOf(path)
          if (scope === undefined) return notRefused
          const client = clientAddress(trusted, Option.getOrUndefined(request.remoteAddress), request.headers["x-forwarded-for"])
          return Effect.map(take({ _tag: "PartnerAddress", scope, address: clientKey(client) }), (state) => {
            if (!state.exceeded) return Option.none()
            const error = refusal(state, partnerBudgets[scope].windowMs)
            return Option.some(HttpServerResponse.unsafeJson(partnerRateLimited(error.message, requestId), {
              status: 429,
              headers: { "retry-after": String(error.retry_after_seconds), "x-request-id": requestId }
            }))
          })
        }
      }
    })
  )
