/**
 * Port: DNS lookups (domain verification reads the TXT records of `_convene-challenge.<domain>`). The adapter tells a
 * definitive answer from a temporary failure: a name that does not exist (NXDOMAIN) or has no TXT record (NODATA) is
 * an empty list, a definitive "no proof"; a timeout, SERVFAIL, REFUSED or a failed connection is DnsTemporaryFailure,
 * which says nothing about the name. Adapter: @convene/node (NodeDnsResolver, on node:dns).
 */
import { Context, type Effect, Schema } from "effect"

/** The lookup did not get a definitive answer (timeout, SERVFAIL, REFUSED, no server reachable). */
export class DnsTemporaryFailure extends Schema.TaggedError<DnsTemporaryFailure>()("DnsTemporaryFailure", {
  /** What went wrong, in words safe to show (the DNS error code, never a server address). */
  message: Schema.String
}) {}

export class DnsResolver extends Context.Tag("@convene/core/DnsResolver")<DnsResolver, {
  /** The TXT values published at `name` (each record's chunks joined into one string); empty when there are none. */
  readonly resolveTxt: (name: string) => Effect.Effect<ReadonlyArray<string>, DnsTemporaryFailure>
}>() {}
