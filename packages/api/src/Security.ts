/** The two credentials the host accepts: first-party bearer tokens on /v1, and the operator token on /operator. */
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as OpenApi from "@effect/platform/OpenApi"
import type { Principal } from "@convene/core"
import { Context, Schema } from "effect"
import { Missing, RateLimitExceeded, Unauthorized } from "./Errors.js"

/** The principal the request's bearer token authenticates as. */
export class CurrentPrincipal extends Context.Tag("@convene/api/CurrentPrincipal")<CurrentPrincipal, Principal>() {}

/**
 * `Authorization: Bearer <token>` with a first-party token (svc_at_, svc_pat_, svc_slt_ or svc_wk_). It also takes
 * the request's unit of its rate limit (429 `rate_limit_exceeded` over budget).
 */
export class Authenticate extends HttpApiMiddleware.Tag<Authenticate>()("Authenticate", {
  failure: Schema.Union(Unauthorized, RateLimitExceeded),
  provides: CurrentPrincipal,
  security: {
    bearer: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(
        OpenApi.Description,
        "A first-party token: OAuth access token, personal access token, short-lived token or workspace API key"
      )
    )
  }
}) {}

/** `Authorization: Bearer $CONVENE_OPERATOR_TOKEN`. With no operator token configured every operator path is 404. */
export class OperatorAuth extends HttpApiMiddleware.Tag<OperatorAuth>()("OperatorAuth", {
  failure: Schema.Union(Unauthorized, Missing),
  security: { operator: HttpApiSecurity.bearer }
}) {}
