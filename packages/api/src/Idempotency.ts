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

/** The endpoint, honouring Idempotency-Key. */
export const idempotent = <
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
    .addError(InvalidIdempotencyKey)
    .addError(InFlight)
    .addError(KeyReuse)
    .annotate(Idempotent, true)
