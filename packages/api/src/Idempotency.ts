/**
 * Idempotency-Key, declared once per endpoint in the contract: `idempotent` adds the header, the three
 * failures it can cause and the `Idempotent` annotation that the host's idempotency middleware acts on
 * (http/Idempotency.ts). An endpoint without it ignores the header.
 */
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import type * as HttpMethod from "@effect/platform/HttpMethod"
import { Context, Schema } from "effect"
import { InFlight, InvalidIdempotencyKey, KeyReuse } from "./Errors.js"

/** Marks an endpoint that honours Idempotency-Key. */
export class Idempotent extends Context.Tag("@convene/api/Idempotent")<Idempotent, boolean>() {}

export const IdempotencyHeaders = Schema.Struct({
  "idempotency-key": Schema.optional(Schema.String).annotations({
    description: "1 to 255 printable ASCII characters; the first 2xx answer is replayed for 24 hours to an identical repeat"
  })
})

/**
 * The endpoint, honouring Idempotency-Key with the wire schemas of its three refusals (the first-party envelope's, or
 * the partner API's): the header, the failures, and the `Idempotent` annotation the host's middleware acts on.
 */
export const honouringKey = <E1, R1, E2, R2, E3, R3>(refusals: {
  // The encoded side is the schema's own business.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly invalid: Schema.Schema<E1, any, R1>
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly inFlight: Schema.Schema<E2, any, R2>
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly reuse: Schema.Schema<E3, any, R3>
}) =>
<
  Name extends string,
  Method extends HttpMethod.HttpMethod,
  Path,
  UrlParams,
  Payload,
  Headers,
  Success,
  Error,
  R,
  RE
>(endpoint: HttpApiEndpoint.HttpApiEndpoint<Name, Method, Path, UrlParams, Payload, Headers, Success, Error, R, RE>) =>
  endpoint
    .setHeaders(IdempotencyHeaders)
    .addError(refusals.invalid)
    .addError(refusals.inFlight)
    .addError(refusals.reuse)
    .annotate(Idempotent, true)

/** The endpoint, honouring Idempotency-Key (the first-party envelope). */
export const idempotent = honouringKey({ invalid: InvalidIdempotencyKey, inFlight: InFlight, reuse: KeyReuse })
