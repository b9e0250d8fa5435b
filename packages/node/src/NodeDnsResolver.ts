/**
 * node:dns behind the core's DnsResolver port: TXT lookups for domain verification, through the system's resolver
 * or through the servers the operator names (CONVENE_DNS_SERVERS).
 *
 * - Each record's chunks are joined (a TXT record longer than 255 bytes comes as several strings).
 * - NXDOMAIN (ENOTFOUND) and NODATA (ENODATA) are definitive: no record, an empty list.
 * - Every other failure (ETIMEOUT, ESERVFAIL, EREFUSED, ECONNREFUSED, a malformed answer...) is DnsTemporaryFailure:
 *   it says nothing about the name, so core never holds it against a domain.
 * - Each lookup has its own resolver (cancelled when the lookup is interrupted), with a per-try timeout and a
 *   number of tries (node's c-ares doubles the timeout on each retry).
 */
import { DnsResolver, DnsTemporaryFailure } from "@convene/core"
import { Effect, Either, Layer } from "effect"
import * as Dns from "node:dns"
import * as Net from "node:net"

export interface Options {
  /**
   * The servers to ask, each `ip` or `ip:port` (IPv6 as `[ip]:port`); empty or left out: the system's resolver
   * (/etc/resolv.conf).
   */
  readonly servers?: ReadonlyArray<string> | undefined
  /** How long one try waits for an answer, in milliseconds. Default 2500. */
  readonly timeoutMs?: number | undefined
  /** How many tries a lookup makes. Default 2. */
  readonly tries?: number | undefined
}

export const defaultTimeoutMs = 2_500
export const defaultTries = 2

/**
 * Reads a server list such as `10.0.0.53, 10.0.0.54:5353, [fd00::53]:53`: answers the entries as node:dns takes
 * them, or the first entry that is not an IP address with an optional port from 1 to 65535.
 */
export const parseServers = (text: string): Either.Either<ReadonlyArray<string>, string> => {
  const entries = text.split(",").map((entry) => entry.trim()).filter((entry) => entry.length > 0)
  for (const entry of entries) {
    const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(entry)
    const v4 = /^([0-9.]+)(?::(\d{1,5}))?$/.exec(entry)
    const [address, port] = bracketed !== null
      ? [bracketed[1]!, bracketed[2]]
      : v4 !== null
      ? [v4[1]!, v4[2]]
      : [entry, undefined]
    const family = Net.isIP(address)
    const portOk = port === undefined || (Number(port) >= 1 && Number(port) <= 65_535)
    const formOk = bracketed !== null ? family === 6 : v4 !== null ? family === 4 : family === 6
    if (!formOk || !portOk) return Either.left(entry)
  }
  return Either.right(entries)
}

/** The errors that are a definitive answer: the name does not exist, or has no record of the type. */
const definitive = new Set<string>([Dns.NOTFOUND, Dns.NODATA])

const codeOf = (error: unknown): string =>
  typeof error === "object" && error !== null && typeof (error as { code?: unknown }).code === "string"
    ? (error as { code: string }).code
    : "unknown"

export const make = (options: Options = {}) => {
  const servers = options.servers ?? []
  const timeout = options.timeoutMs ?? defaultTimeoutMs
  const tries = options.tries ?? defaultTries
  return DnsResolver.of({
    resolveTxt: (name) =>
      Effect.async<ReadonlyArray<string>, DnsTemporaryFailure>((resume) => {
        const resolver = new Dns.promises.Resolver({ timeout, tries })
        if (servers.length > 0) resolver.setServers([...servers])
        resolver.resolveTxt(name).then(
          (records) => resume(Effect.succeed(records.map((chunks) => chunks.join("")))),
          (error: unknown) => {
            const code = codeOf(error)
            resume(
              definitive.has(code)
                ? Effect.succeed([])
                : Effect.fail(new DnsTemporaryFailure({ message: `the DNS lookup failed temporarily (${code})` }))
            )
          }
        )
        return Effect.sync(() => resolver.cancel())
      }).pipe(Effect.withSpan("NodeDnsResolver.resolveTxt"))
  })
}

export const layer = (options: Options = {}): Layer.Layer<DnsResolver> => Layer.succeed(DnsResolver, make(options))
