/**
 * The partner API's answer to a client over its budget (partner-api.md, "Limits" and "Errors"): 429 with
 * `Retry-After` and the body the document gives, `{error: "rate_limit_exceeded", error_description}`, with the `code`
 * and `request_id` every other partner failure carries (decisions.md: a request id in every error body). The same body
 * on /v1/partner/* and /oauth2/*, whose budgets are counted per client address before any routing (the host's
 * PartnerLimits.ts answers it; this is its contract and its words for the OpenAPI document).
 */
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Schema } from "effect"
import { wire } from "./Errors.js"

const code = "rate_limit_exceeded" as const

/** What the document says of the partner budgets and their 429. */
export const description = "Budgets per client address: /v1/partner/user/* 1000 requests per 5 minutes, " +
  "/v1/partner/admin/* 500 per 5 minutes, /oauth2/* 100 per 5 minutes and /v1/partner/sso/info/{slug} 30 a minute, " +
  "counted in fixed windows aligned to the clock, every request (a 404 included) taking one unit. Over budget: 429 " +
  "with `Retry-After` (seconds until the window ends) and `{error: \"rate_limit_exceeded\", error_description, code: " +
  "\"rate_limit_exceeded\", request_id}`: the document's OAuth-style body with the `code` and `request_id` of every " +
  "partner failure."

export const PartnerRateLimitedBody = Schema.Struct({
  error: Schema.Literal(code).annotations({ description: "RFC 6749 style error code" }),
  error_description: Schema.String.annotations({ description: "the budget, and when to retry" }),
  code: Schema.Literal(code).annotations({ description: "stable identifier, as in every partner failure" }),
  request_id: Schema.String.annotations({ description: "the id also sent as the X-Request-Id header" })
}).annotations({ identifier: "PartnerRateLimited", description })

export type PartnerRateLimitedBody = typeof PartnerRateLimitedBody.Type

/** The fields of the body, sorted (what the OpenAPI post-processing recognises it by). */
export const fields: string = Object.keys(PartnerRateLimitedBody.fields).sort().join()

export const partnerRateLimited = (text: string, requestId: string): PartnerRateLimitedBody => ({
  error: code,
  error_description: text,
  code,
  request_id: requestId
})

/**
 * A request to a part of the partner API over its client's budget: the core's RateLimited in the partner body (a
 * class of its own, so that the document does not mistake it for the first-party 429 of the same core error).
 */
export class PartnerRateLimitExceeded extends Schema.TaggedError<PartnerRateLimitExceeded>()("PartnerRateLimitExceeded", {
  retry_after_seconds: Schema.Int,
  message: Schema.String
}) {}

/** The 429 of a partner path or /oauth2 path over its budget, with Retry-After. */
export const PartnerRateLimited = wire(
  PartnerRateLimitExceeded,
  PartnerRateLimitedBody,
  429,
  (error, requestId) =>
    Effect.as(
      HttpApp.appendPreResponseHandler((_, response) =>
        Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(error.retry_after_seconds)))
      ),
      partnerRateLimited(error.message, requestId)
    ),
  (body) => new PartnerRateLimitExceeded({ retry_after_seconds: 0, message: body.error_description })
)
