/**
 * The partner admin API's domain verification (/v1/partner/admin/idp/domains/{domain}/verify, GET .../{domain},
 * .../{domain}/check), in the admin context: the same authentication (PartnerAdminAuth: X-API-Key and X-Client-ID) and
 * the partner envelope on every failure. The rules are core's (DomainVerifications, whose decisions this describes);
 * the routes fail with wires of their own (the platform encodes a failure with the first schema of the whole API that
 * takes its class).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import {
  DomainCheck,
  DomainCheckUnavailable,
  DomainIsGeneric,
  DomainVerificationNotFound,
  DomainVerificationView,
  DomainVerifiedByAnotherApp,
  EmailDomain
} from "@convene/core"
import { Effect, Schema } from "effect"
import { wire } from "./Errors.js"
import { PartnerAdminAuth, PartnerEnvelope, partnerEnvelope, PartnerInvalidRequest, partnerPrefix } from "./Partner.js"
import { PartnerRateLimited } from "./PartnerLimits.js"

/**
 * The answer of a verify that issued the first challenge of the domain (201; a later verify answers the record, 200).
 * The two share their fields, so the handler answers the 201 itself (the platform encodes with the first that fits).
 */
export class StartedDomainVerification extends Schema.Class<StartedDomainVerification>("StartedDomainVerification")(
  DomainVerificationView.fields
) {}

export const DomainAlreadyClaimed = wire(
  DomainVerifiedByAnotherApp,
  PartnerEnvelope("PartnerDomainAlreadyClaimed", ["domain_already_claimed"], "another partner app holds the domain verified"),
  409,
  (error, requestId) => Effect.succeed(partnerEnvelope("domain_already_claimed", error.message, requestId)),
  (b) => new DomainVerifiedByAnotherApp({ domain: "", message: b.error })
)

export const DomainGeneric = wire(
  DomainIsGeneric,
  PartnerEnvelope(
    "PartnerDomainIsGeneric",
    ["domain_is_generic"],
    "a generic e-mail domain (gmail.com, outlook.com, ...): no IdP configuration may claim it, so it is not verified"
  ),
  400,
  (error, requestId) => Effect.succeed(partnerEnvelope("domain_is_generic", error.message, requestId)),
  (b) => new DomainIsGeneric({ domain: "", message: b.error })
)

export const DomainVerificationMissing = wire(
  DomainVerificationNotFound,
  PartnerEnvelope(
    "PartnerDomainVerificationNotFound",
    ["not_found"],
    "the app has not started a verification of the domain (the partner document's 404 `not_found`)"
  ),
  404,
  (error, requestId) => Effect.succeed(partnerEnvelope("not_found", error.message, requestId)),
  (b) => new DomainVerificationNotFound({ domain: "", message: b.error })
)

export const DnsTemporarilyUnavailable = wire(
  DomainCheckUnavailable,
  PartnerEnvelope(
    "PartnerDnsTemporaryFailure",
    ["dns_temporary_failure"],
    "the DNS lookup failed temporarily (a timeout, SERVFAIL, REFUSED, no server reachable); nothing changed and no " +
      "event was sent: check again later"
  ),
  503,
  (error, requestId) => Effect.succeed(partnerEnvelope("dns_temporary_failure", error.message, requestId)),
  (b) => new DomainCheckUnavailable({ domain: "", message: b.error })
)

const DomainPath = Schema.Struct({
  domain: EmailDomain.annotations({ description: "the domain, e.g. example.com (case-insensitive; subdomains are separate)" })
})

const authentication = "Authenticated as the other admin routes (X-API-Key and X-Client-ID: 401 `missing_api_key`, " +
  "`missing_client_id` or `invalid_credentials`, 403 `partner_app_inactive`)."

const invalidDomain = "A path segment that is not a domain name (lower-cased: letters, digits and hyphens in at least " +
  "two dot-separated labels, at most 253 characters, no IP address) is 400 `invalid_request` naming `domain`."

const record = "The record is `{domain, status, txt_record_name, txt_record_value, expires_at, verified_at, " +
  "last_checked_at}`: `status` is `pending`, `verified`, `expired` or `revoked`; publish a TXT record at " +
  "`txt_record_name` (`_convene-challenge.<domain>`) carrying `txt_record_value`."

export class PartnerDomainsApi extends HttpApiGroup.make("partnerDomains")
  .add(
    HttpApiEndpoint.post("verifyDomain", "/idp/domains/:domain/verify")
      .setPath(DomainPath)
      .addSuccess(DomainVerificationView)
      .addSuccess(StartedDomainVerification, { status: 201 })
      .addError(DomainAlreadyClaimed)
      .addError(DomainGeneric)
      .annotate(OpenApi.Summary, "Start or rotate a domain's DNS challenge")
      .annotate(
        OpenApi.Description,
        "Issues a DNS TXT challenge proving that the app controls the domain: a unique value " +
          "(`convene-verification=` and 32 random bytes in base64url), pending for 7 days. No body. The first call " +
          "for a domain answers 201 with the record; a call on a pending record rotates the challenge (the old value " +
          "no longer counts; the 7 days start again), one on an expired or revoked record starts over, both 200; a " +
          "call on the app's own verified domain changes nothing and answers 200 with the record (keep the TXT record " +
          "published: the domain is re-validated every 24 hours). When another partner app holds the domain verified " +
          "it is 409 `domain_already_claimed` (verification belongs to the app that completed it; domains match " +
          `exactly, so \`eu.example.com\` is verified on its own). A generic e-mail domain (gmail.com, outlook.com, ` +
          "...: the list no IdP configuration may claim) is 400 `domain_is_generic`. " +
          `${record} ${invalidDomain} ${authentication}`
      )
  )
  .add(
    HttpApiEndpoint.get("getDomainVerification", "/idp/domains/:domain")
      .setPath(DomainPath)
      .addSuccess(DomainVerificationView)
      .addError(DomainVerificationMissing)
      .annotate(OpenApi.Summary, "Read a domain's verification status")
      .annotate(
        OpenApi.Description,
        `The app's verification of the domain. ${record} A domain the app never started is 404 ` +
          `\`not_found\`. ${invalidDomain} ${authentication}`
      )
  )
  .add(
    HttpApiEndpoint.post("checkDomain", "/idp/domains/:domain/check")
      .setPath(DomainPath)
      .addSuccess(DomainCheck)
      .addError(DomainVerificationMissing)
      .addError(DomainAlreadyClaimed)
      .addError(DnsTemporarilyUnavailable)
      .annotate(OpenApi.Summary, "Check a domain's DNS proof now")
      .annotate(
        OpenApi.Description,
        "Looks up the TXT records at `_convene-challenge.<domain>` and answers 200 with the record after the check and " +
          "`check {result, message}`. Pending: the current challenge among the values (other values may stand beside " +
          "it) makes the domain `verified` (`result: verified`, event `partner.idp.domain_verified`); otherwise it " +
          "stays pending (`token_mismatch`, event `partner.idp.domain_verification_failed` with status pending); a " +
          "challenge past `expires_at` becomes `expired` without a lookup (`token_expired`, the failed event with " +
          "status expired). Verified: a re-validation now (`verified`, or `proof_missing` while the proof has been " +
          "absent for less than 72 hours, or `revoked` with event `partner.idp.domain_revoked` once it has been " +
          "absent at lookups 72 hours apart). Expired or revoked: nothing is looked up (`token_expired` or `revoked`; " +
          "start again with .../verify). A temporary DNS failure (timeout, SERVFAIL, REFUSED) changes nothing, sends " +
          "no event and is 503 `dns_temporary_failure`. When another app completed the domain meanwhile it is 409 " +
          `\`domain_already_claimed\`; a domain never started is 404 \`not_found\`. ${invalidDomain} ` +
          authentication
      )
  )
  .middleware(PartnerAdminAuth)
  .addError(PartnerInvalidRequest)
  .addError(PartnerRateLimited)
  .prefix(`${partnerPrefix}/admin`)
  .annotate(OpenApi.Title, "Partner domain verification")
  .annotate(
    OpenApi.Description,
    "DNS TXT proof that the partner app controls an e-mail domain (used by its IdP configuration's strict mode). " +
      "Pending challenges expire after 7 days (`partner.idp.domain_verification_failed`); verified domains are " +
      "re-validated every 24 hours and revoked (`partner.idp.domain_revoked`) only when the proof is found absent " +
      "at lookups at least 72 hours apart with none finding it in between; temporary DNS failures never count " +
      "against a domain and send nothing. The three `partner.idp.domain_*` events go to the app's webhook_url " +
      "even when no workspace is connected, as `{event_id, event_type, occurred_at, partner_app_id, workspace_id: " +
      "null, data: {domain, status, occurred_at}}` (never the challenge), unless the app's webhook filter " +
      "(`webhook_events`, set by the operator) leaves their type out."
  )
{}
