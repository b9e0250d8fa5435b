/**
 * Partner single sign-on (/v1/partner/sso): public routes, without credentials, that a partner app's sign-in page and
 * its users' browsers call. The rules are core's (PartnerSso, whose decisions are summed up here for the document);
 * every failure answers the partner envelope `{error, code, request_id}`.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { InitiatedSso, PartnerAppInactive, SsoInfo, type SsoRefused, SsoSessionStatus } from "@convene/core"
import { Effect, Schema } from "effect"
import { wire } from "./Errors.js"
import { NoHead, PartnerEnvelope, partnerEnvelope, PartnerInactive, partnerPrefix } from "./Partner.js"
import { PartnerRateLimited } from "./PartnerLimits.js"
import { PartnerMissing, PartnerNotFound } from "./PartnerUser.js"

/** A bad SSO request (400): the partner's own class, so that only this envelope encodes it. */
export class PartnerSsoInvalid extends Schema.TaggedError<PartnerSsoInvalid>()("PartnerSsoInvalid", {
  code: Schema.Literal("invalid_request", "sso_not_configured", "invalid_state"),
  message: Schema.String
}) {}

/** A callback for a session already finished (409). */
export class PartnerSsoProcessed extends Schema.TaggedError<PartnerSsoProcessed>()("PartnerSsoProcessed", {
  message: Schema.String
}) {}

export const PartnerSsoBadRequest = wire(
  PartnerSsoInvalid,
  PartnerEnvelope(
    "PartnerSsoBadRequest",
    ["invalid_request", "sso_not_configured", "invalid_state"],
    "`invalid_request`: a parameter is missing or invalid (`error` names it); `sso_not_configured`: the app has no " +
      "active IdP configuration; `invalid_state`: a callback whose state is missing or matches no sign-in"
  ),
  400,
  (error, requestId) => Effect.succeed(partnerEnvelope(error.code, error.message, requestId)),
  (b) => new PartnerSsoInvalid({ code: b.code, message: b.error })
)

export const PartnerSsoAlreadyProcessed = wire(
  PartnerSsoProcessed,
  PartnerEnvelope(
    "PartnerSsoAlreadyProcessed",
    ["session_already_processed"],
    "the callback's sign-in was already processed (a replayed callback)"
  ),
  409,
  (error, requestId) => Effect.succeed(partnerEnvelope("session_already_processed", error.message, requestId)),
  (b) => new PartnerSsoProcessed({ message: b.error })
)

/** The partner form of a refusal of info or session polling (both refuse only with `not_found`). */
export const lookupFailureOf = (refused: SsoRefused) => new PartnerNotFound({ message: refused.message })

/** The partner form of a refusal of initiate. */
export const initiateFailureOf = (refused: SsoRefused) => {
  switch (refused.code) {
    case "not_found":
      return new PartnerNotFound({ message: refused.message })
    case "partner_app_inactive":
      // 403 partner_app_inactive: the admin context's class and envelope (PartnerInactive).
      return new PartnerAppInactive({ message: refused.message })
    default:
      return new PartnerSsoInvalid({ code: refused.code === "sso_not_configured" ? refused.code : "invalid_request", message: refused.message })
  }
}

/** The partner form of a refusal of the callback. */
export const callbackFailureOf = (refused: SsoRefused) =>
  refused.code === "session_already_processed"
    ? new PartnerSsoProcessed({ message: refused.message })
    : new PartnerSsoInvalid({ code: "invalid_state", message: refused.message })

const Slug = Schema.String.annotations({ description: "the partner app's slug" })

/** `true` or `false`, as a query parameter. */
const BooleanParam = Schema.Literal("true", "false")

const target = "`target` is `web` (the default) or `desktop`. After the IdP, the browser goes to the target: `web` " +
  "is a 302 to the app's first registered redirect URI with `sso_session_id=<id>` (and `error=<code>` when the " +
  "sign-in failed), where the partner's back end reads the outcome with GET /v1/partner/sso/session/{session_id}; " +
  "`desktop` is a Convene page telling the user to return to the app, which polls that session meanwhile."

const outcome = "A completed session hands the partner `user {user_id, email, name, workspace_id}` (never a token of " +
  "the IdP); a failed one `error` with one of `idp_error`, `issuer_mismatch` (the callback's RFC 9207 `iss` names " +
  "another issuer than the configuration's), `invalid_callback`, `token_exchange_failed`, " +
  "`invalid_id_token`, `email_missing`, `email_not_verified`, `domain_not_allowed`, `domain_not_verified`, " +
  "`no_prior_connection` (no Convene user with this e-mail has connected the app through its OAuth consent: an " +
  "unknown e-mail answers the same), `sso_not_configured` (the configuration changed meanwhile)."

export class PartnerSsoApi extends HttpApiGroup.make("partnerSso")
  .add(
    HttpApiEndpoint.get("ssoInfo", "/info/:slug")
      .setPath(Schema.Struct({ slug: Slug }))
      .addSuccess(SsoInfo)
      .addError(PartnerMissing)
      .annotate(OpenApi.Summary, "What a sign-in page shows of a partner app")
      .annotate(
        OpenApi.Description,
        "Public, no credentials. `{slug, name, co_brand_name, co_brand_logo_url, has_idp_config, is_active}`: " +
          "`has_idp_config` whether the app has an IdP configuration, `is_active` whether single sign-on can start " +
          "now (the app is active and its configuration is active). An unknown slug is 404 `not_found`. 30 requests " +
          "a minute per client address (429 `rate_limit_exceeded` with Retry-After)."
      )
  )
  .add(
    HttpApiEndpoint.get("ssoInitiate", "/initiate")
      .setUrlParams(Schema.Struct({
        slug: Slug,
        target: Schema.optional(Schema.Literal("web", "desktop")),
        auto: Schema.optional(BooleanParam)
      }))
      .addSuccess(InitiatedSso)
      .addSuccess(HttpApiSchema.Empty(302).annotations({ description: "auto=true: Location is the authorization URL" }))
      .addError(PartnerMissing)
      .addError(PartnerInactive)
      .addError(PartnerSsoBadRequest)
      .annotate(OpenApi.Summary, "Start a single sign-on")
      .annotate(
        OpenApi.Description,
        "Public, no credentials. Starts a sign-in session for the app `slug` at its identity provider and answers " +
          "`{session_id, authorization_url, target, expires_at}`; with `auto=true`, a 302 whose Location is " +
          "`authorization_url` (for a link the user clicks). The URL is the IdP's authorization endpoint with " +
          "response_type=code, the configuration's client id and scopes, redirect_uri {base_url}/v1/partner/sso/" +
          "callback (register it at the IdP), a fresh `state` and `nonce` and a PKCE `code_challenge` (S256). The " +
          `session expires after 10 minutes unless the user signs in. ${target} A partner starting from its back ` +
          "end should keep `session_id` in the user's browser session and check that the `sso_session_id` coming " +
          "back is the same (login CSRF). 404 `not_found` for an unknown slug, 403 `partner_app_inactive` for a " +
          "suspended app, 400 `sso_not_configured` without an active IdP configuration, 400 `invalid_request` for " +
          "`target: web` when the app has no redirect URI, or a parameter that is not valid."
      )
  )
  .add(
    HttpApiEndpoint.get("ssoCallback", "/callback")
      .setUrlParams(Schema.Struct({
        iss: Schema.optional(Schema.String),
        code: Schema.optional(Schema.String),
        state: Schema.optional(Schema.String),
        error: Schema.optional(Schema.String),
        error_description: Schema.optional(Schema.String)
      }))
      .addSuccess(HttpApiSchema.Empty(302).annotations({ description: "web target: to the app's redirect URI" }))
      .addSuccess(
        Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/html" })).annotations({
          description: "desktop target: a page telling the user to return to the app"
        })
      )
      .addError(PartnerSsoBadRequest)
      .addError(PartnerSsoAlreadyProcessed)
      .annotate(NoHead, true)
      .annotate(OpenApi.Summary, "The identity provider's answer")
      .annotate(
        OpenApi.Description,
        "Where the IdP sends the browser back (query `code`, `state`, or `error`, `error_description`). The state " +
          "finds the session; the code is exchanged at the IdP's token endpoint (client_secret_basic, or " +
          "client_secret_post when the IdP refuses that as invalid_client; the PKCE verifier) and the ID token " +
          "verified with the IdP's keys: signature, `iss`, `aud` (the IdP client id), " +
          "`azp` when present, `exp` (60 s of tolerance), `nonce`. The e-mail comes from the claim " +
          "`claim_mappings.email` (`email_verified: false` is refused); its domain must be allowed (strict: among " +
          "`allowed_email_domains` and verified by the app; partner_managed: the same when the list is not empty, " +
          "anyone otherwise), and the Convene user with that e-mail must already have connected the app (a live grant " +
          `of its OAuth server, the workspace still connected). ${target} ${outcome} A state that is missing or ` +
          "matches no session (tampered) is 400 `invalid_state`; a callback for a session already processed (a " +
          "replay) 409 `session_already_processed`; an expired session sends the browser to the target with " +
          "`error=session_expired`."
      )
  )
  .add(
    HttpApiEndpoint.get("ssoSession", "/session/:session_id")
      .setPath(Schema.Struct({ session_id: Schema.String }))
      .addSuccess(SsoSessionStatus)
      .addError(PartnerMissing)
      .annotate(NoHead, true)
      .annotate(OpenApi.Summary, "Poll a single sign-on session")
      .annotate(
        OpenApi.Description,
        "Public: the session id is the credential. `{session_id, status, target, expires_at}` with `status` " +
          "`pending` (waiting for the user), `expired` (not signed in within 10 minutes, or an outcome not read " +
          "within 10 minutes of the callback), `completed` with `user`, or `failed` with `error` and " +
          `\`error_description\`. ${outcome} The outcome is answered once: afterwards (and for an id that never ` +
          "existed) the status is not_found, answered 404 `not_found`."
      )
  )
  .addError(PartnerRateLimited)
  .prefix(`${partnerPrefix}/sso`)
  .annotate(OpenApi.Title, "Partner single sign-on")
  .annotate(
    OpenApi.Description,
    "Single sign-on for a partner app's users at the app's own identity provider (OIDC), public routes without " +
      "credentials. Every failure answers the partner envelope `{error, code, request_id}`."
  )
{}
