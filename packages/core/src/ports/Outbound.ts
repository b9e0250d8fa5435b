/**
 * Port: calls this server makes to addresses its users gave it (webhook endpoints, automations' actions, an identity
 * provider's discovery document, token endpoint and keys). The adapter owns the outbound safety rules: the host is resolved and refused when any of its
 * addresses is loopback, private, link-local or otherwise internal (unless the operator allow-listed the host),
 * redirects are never followed, every call has a time limit and the answer a size cap.
 * Adapter: @convene/node (NodeOutbound).
 */
import { Context, Effect, Schema } from "effect"
import { ValidationError } from "../shared/Errors.js"
import { httpsUrlProblem } from "../shared/Url.js"

/** The URL may not be called: not HTTPS, a host that does not resolve, or one that resolves to an internal address. */
export class OutboundRefused extends Schema.TaggedError<OutboundRefused>()("OutboundRefused", {
  /** Safe to show to the user who gave the URL: names the host, never an internal detail of this server. */
  message: Schema.String
}) {}

/** The call was made (or tried) and did not produce an answer. */
export class OutboundFailed extends Schema.TaggedError<OutboundFailed>()("OutboundFailed", {
  reason: Schema.Literal("refused", "timeout", "connection", "tls", "too_large"),
  message: Schema.String
}) {}

export interface OutboundRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  /** The exact bytes sent (signatures are computed over them). */
  readonly body: string
}

export interface OutboundGet {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
}

export interface OutboundResponse {
  readonly status: number
  /** The answer's body as text, at most the adapter's size cap (a longer answer is OutboundFailed "too_large"). */
  readonly body: string
  /** Milliseconds from the start of the call to the end of the answer. */
  readonly latencyMs: number
  /** The answer's Content-Type header, when it had one (as sent, parameters included). */
  readonly contentType?: string | undefined
}

export class Outbound extends Context.Tag("@convene/core/Outbound")<Outbound, {
  /** Whether `url` may be called now (HTTPS, resolves, no internal address): checked when a user gives a URL. */
  readonly check: (url: string) => Effect.Effect<void, OutboundRefused>
  /** POSTs the request; a 3xx is an answer like any other (never followed). */
  readonly post: (request: OutboundRequest) => Effect.Effect<OutboundResponse, OutboundFailed>
  /** GETs the URL with these headers, under the same rules; a 3xx is an answer like any other (never followed). */
  readonly get: (request: OutboundGet) => Effect.Effect<OutboundResponse, OutboundFailed>
}>() {}

/**
 * Whether `url`, given to this server to call later (a webhook, an automation's action), may be: an absolute HTTPS URL
 * without a user name or password whose host the outbound rules let this server call now. ValidationError naming
 * `field` otherwise, in words safe to show to whoever gave the URL.
 */
export const checkCallableUrl = (field: string, url: string): Effect.Effect<void, ValidationError, Outbound> => {
  const problem = httpsUrlProblem(url)
  if (problem !== undefined) return Effect.fail(ValidationError.of(field, problem))
  return Effect.flatMap(Outbound, (outbound) =>
    outbound.check(url).pipe(Effect.mapError((refused) => ValidationError.of(field, refused.message))))
}
