/**
 * The partner admin API's IdP configuration (POST, GET, PUT and DELETE /v1/partner/admin/idp), in the admin context:
 * the same authentication (PartnerAdminAuth: X-API-Key and X-Client-ID) and the partner envelope on every failure,
 * with the codes of the partner document's "IdP operation errors" table. The rules are core's (IdpConfigs, whose
 * decisions the descriptions repeat). The routes fail with classes of their own, one per status (the platform encodes
 * a failure with the first schema of the whole API that takes its class), and a body that does not decode is
 * `invalid_request_body` here, not the rest of the partner API's `invalid_request` (`PartnerInvalidCode`).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { CreateIdpConfig, IdpConfigRefused, IdpConfigView, type IdpRefusalCode, MAX_IDP_DOMAINS, MAX_IDP_SCOPES, UpdateIdpConfig } from "@convene/core"
import { Effect, Schema } from "effect"
import { wire } from "./Errors.js"
import {
  PartnerAdminAuth,
  PartnerEnvelope,
  partnerEnvelope,
  PartnerInvalidCode,
  PartnerPayloadTooLarge,
  partnerPrefix,
  PartnerUnsupportedMediaType
} from "./Partner.js"
import { PartnerRateLimited } from "./PartnerLimits.js"

/** The codes of other statuses than 400; every other code of the core's refusals is a 400. */
const otherStatuses = ["idp_config_not_found", "idp_config_exists", "domain_already_claimed", "secrets_key_not_configured"] as const
type BadRequestCode = Exclude<IdpRefusalCode, typeof otherStatuses[number]>
const badRequestCodes = IdpConfigRefused.fields.code.literals.filter((code): code is BadRequestCode =>
  !(otherStatuses as ReadonlyArray<string>).includes(code)
)

/** A refusal of the IdP routes, as each status's class (see the module's comment). */
export class PartnerIdpInvalid extends Schema.TaggedError<PartnerIdpInvalid>()("PartnerIdpInvalid", {
  code: Schema.Literal(...badRequestCodes),
  message: Schema.String
}) {}

export class PartnerIdpMissing extends Schema.TaggedError<PartnerIdpMissing>()("PartnerIdpMissing", {
  message: Schema.String
}) {}

export class PartnerIdpConflict extends Schema.TaggedError<PartnerIdpConflict>()("PartnerIdpConflict", {
  code: Schema.Literal("idp_config_exists", "domain_already_claimed"),
  message: Schema.String
}) {}

export class PartnerIdpUnavailable extends Schema.TaggedError<PartnerIdpUnavailable>()("PartnerIdpUnavailable", {
  message: Schema.String
}) {}

export const PartnerIdpBadRequest = wire(
  PartnerIdpInvalid,
  PartnerEnvelope(
    "PartnerIdpBadRequest",
    badRequestCodes,
    "`invalid_request_body`: the body is not JSON or a field is invalid or unknown (`error` names it, e.g. " +
      "`discovery_url: ...`); `invalid_idp_credentials`: the partner app's own client id, client secret or API key " +
      "given as the IdP's; `invalid_idp`: a public consumer identity provider; `domain_is_generic`: a free e-mail " +
      "domain; `strict_mode_requires_domains`; `domain_not_verified`: a domain the app has not verified; " +
      "`discovery_fetch_failed`: the discovery document could not be fetched or is not valid OIDC metadata"
  ),
  400,
  (error, requestId) => Effect.succeed(partnerEnvelope(error.code, error.message, requestId)),
  (b) => new PartnerIdpInvalid({ code: b.code, message: b.error })
)

export const PartnerIdpNotFound = wire(
  PartnerIdpMissing,
  PartnerEnvelope("PartnerIdpNotFound", ["idp_config_not_found"], "the partner app has no IdP configuration"),
  404,
  (error, requestId) => Effect.succeed(partnerEnvelope("idp_config_not_found", error.message, requestId)),
  (b) => new PartnerIdpMissing({ message: b.error })
)

export const PartnerIdpConflicting = wire(
  PartnerIdpConflict,
  PartnerEnvelope(
    "PartnerIdpConflict",
    ["idp_config_exists", "domain_already_claimed"],
    "`idp_config_exists`: the app has one already (one per app); `domain_already_claimed`: another partner app holds " +
      "a listed domain verified or lists it in its own configuration"
  ),
  409,
  (error, requestId) => Effect.succeed(partnerEnvelope(error.code, error.message, requestId)),
  (b) => new PartnerIdpConflict({ code: b.code, message: b.error })
)

export const PartnerIdpKeyMissing = wire(
  PartnerIdpUnavailable,
  PartnerEnvelope(
    "PartnerIdpUnavailable",
    ["secrets_key_not_configured"],
    "the server has no CONVENE_SECRETS_KEY, so an IdP client secret cannot be stored encrypted; its operator must set it"
  ),
  503,
  (error, requestId) => Effect.succeed(partnerEnvelope("secrets_key_not_configured", error.message, requestId)),
  (b) => new PartnerIdpUnavailable({ message: b.error })
)

/** The partner wire class of a core refusal. */
export const asPartnerIdpFailure = (
  refused: IdpConfigRefused
): PartnerIdpInvalid | PartnerIdpMissing | PartnerIdpConflict | PartnerIdpUnavailable => {
  switch (refused.code) {
    case "idp_config_not_found":
      return new PartnerIdpMissing({ message: refused.message })
    case "idp_config_exists":
    case "domain_already_claimed":
      return new PartnerIdpConflict({ code: refused.code, message: refused.message })
    case "secrets_key_not_configured":
      return new PartnerIdpUnavailable({ message: refused.message })
    default:
      return new PartnerIdpInvalid({ code: refused.code, message: refused.message })
  }
}

const authentication = "Authenticated as the other admin routes (X-API-Key and X-Client-ID: 401 `missing_api_key`, " +
  "`missing_client_id` or `invalid_credentials`, 403 `partner_app_inactive`)."

const answer = "Answers `{id, partner_app_id, name, type (always oidc), discovery_url, idp_client_id, scopes, " +
  "claim_mappings, mode, allowed_email_domains, is_active, issuer, authorization_endpoint, token_endpoint, " +
  "userinfo_endpoint (null when the document has none), jwks_uri, discovery_last_fetched_at, created_at, updated_at}`; " +
  "never the secret."

const fields = "`name` 1 to 255 characters (trimmed); `discovery_url` an absolute HTTPS URL ending in " +
  "`/.well-known/openid-configuration`, without user information, query or fragment, whose host the outbound rules let " +
  "the server call (else 400 `invalid_request_body` naming it); `idp_client_id` (1 to 512 characters) and " +
  "`idp_client_secret` (1 to 2048), the IdP's own (the partner app's client id, client secret or API key: " +
  "`invalid_idp_credentials`); `scopes` 1 to " + MAX_IDP_SCOPES + " OAuth scope tokens including `openid` (default " +
  "`[openid, email, profile]`; each kept once); `claim_mappings` `{email, name?, given_name?, family_name?}`, each the " +
  "name of an ID-token claim (default `{email: email, name: name}`; no other key); `mode` `strict` or " +
  "`partner_managed`; `allowed_email_domains` up to " + MAX_IDP_DOMAINS + " domains (lower-cased, each kept once), " +
  "required and non-empty in strict mode (`strict_mode_requires_domains`), optional in partner_managed mode (empty: " +
  "the identity provider decides who signs in). Every listed domain, in either mode, must be no free e-mail domain " +
  "(`domain_is_generic`), held verified by no other partner app nor listed in another app's configuration (409 " +
  "`domain_already_claimed`), and verified by this app (`domain_not_verified`: see /v1/partner/admin/idp/domains). " +
  "A public consumer identity provider (Microsoft personal accounts, Apple, Facebook, Yahoo, Amazon and others) " +
  "is `invalid_idp`, by its discovery URL and by the issuer its document names; Google (personal and Workspace " +
  "accounts alike) is accepted in `strict` mode only (else `invalid_idp`, also for a PUT leaving strict), and each " +
  "sign-in through it must carry the `hd` claim equal to the e-mail's domain (a personal account: " +
  "`domain_not_allowed`). The discovery document is fetched " +
  "under the outbound rules (HTTPS, no private address unless CONVENE_OUTBOUND_ALLOW_HOSTS allows the host, no " +
  "redirect, 10 s, 64 KiB) and must be OIDC metadata whose `issuer` is the discovery URL without " +
  "`/.well-known/openid-configuration`, with HTTPS `authorization_endpoint`, `token_endpoint`, `jwks_uri` (and " +
  "`userinfo_endpoint` when present), and `response_types_supported` (when present) listing `code`; otherwise " +
  "`discovery_fetch_failed`. Its endpoints are cached and fetched again every 24 hours in the background (a failure " +
  "keeps them). Unknown fields are `invalid_request_body`."

export class PartnerIdpApi extends HttpApiGroup.make("partnerIdp")
  .add(
    HttpApiEndpoint.post("createIdpConfig", "/idp")
      .setPayload(CreateIdpConfig)
      .addSuccess(IdpConfigView, { status: 201 })
      .addError(PartnerPayloadTooLarge)
      .addError(PartnerUnsupportedMediaType)
      .annotate(OpenApi.Summary, "Create the IdP configuration")
      .annotate(
        OpenApi.Description,
        "Creates the app's identity-provider configuration (one per app: 409 `idp_config_exists` when it has one), " +
          `active. ${fields} The client secret is stored encrypted (AES-256-GCM under CONVENE_SECRETS_KEY; without ` +
          "that key the server answers 503 `secrets_key_not_configured`) and is in no answer and no log. " +
          `Checked in this order: the fields, one exists, the key, strict without domains, the credentials, the discovery URL, the ` +
          `domains, the discovery document. ${answer} ${authentication}`
      )
  )
  .add(
    HttpApiEndpoint.get("getIdpConfig", "/idp")
      .addSuccess(IdpConfigView)
      .annotate(OpenApi.Summary, "Get the IdP configuration")
      .annotate(OpenApi.Description, `The app's configuration; 404 \`idp_config_not_found\` when it has none. ${answer} ${authentication}`)
  )
  .add(
    HttpApiEndpoint.put("updateIdpConfig", "/idp")
      .setPayload(UpdateIdpConfig)
      .addSuccess(IdpConfigView)
      .addError(PartnerPayloadTooLarge)
      .addError(PartnerUnsupportedMediaType)
      .annotate(OpenApi.Summary, "Change the IdP configuration")
      .annotate(
        OpenApi.Description,
        "Changes what the body names (every field of create, all optional, plus `is_active`: false switches the " +
          "configuration off, true on); what it leaves out stays, and `claim_mappings` given replaces the whole " +
          "mapping. The same rules as create for what is given. The domain rules run again when `mode` or " +
          "`allowed_email_domains` is given or `is_active` turns true, so switching off, renaming or changing the " +
          "secret never fails because a domain lost its verification meanwhile. A `discovery_url` given, even the " +
          "current one, fetches the discovery document again: this is the on-demand refresh of the cached endpoints. " +
          "404 `idp_config_not_found` when the app has none; a new secret without CONVENE_SECRETS_KEY is 503 " +
          `\`secrets_key_not_configured\`. A refused change changes nothing. ${answer} ${authentication}`
      )
  )
  .add(
    HttpApiEndpoint.del("deleteIdpConfig", "/idp")
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "Delete the IdP configuration")
      .annotate(
        OpenApi.Description,
        "Deletes the app's configuration for good (its encrypted secret with it); 204, or 404 `idp_config_not_found` " +
          "when it has none. The app's domain verifications stay. The app may create a new configuration afterwards. " +
          authentication
      )
  )
  .addError(PartnerIdpBadRequest)
  .addError(PartnerIdpNotFound)
  .addError(PartnerIdpConflicting)
  .addError(PartnerIdpKeyMissing)
  .middleware(PartnerAdminAuth)
  .addError(PartnerRateLimited)
  .prefix(`${partnerPrefix}/admin`)
  .annotate(PartnerInvalidCode, "invalid_request_body")
  .annotate(OpenApi.Title, "Partner IdP configuration")
  .annotate(
    OpenApi.Description,
    "The partner app's identity-provider (OIDC) configuration, in the admin context: the provider its users sign in " +
      "with through /v1/partner/sso, and which e-mail domains may."
  )
{}
