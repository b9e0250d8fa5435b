/**
 * The partner admin API's refusals, with the partner document's codes (its "Authentication error codes" table).
 * The HTTP host maps the tags to statuses; no message ever holds a credential or says whether a client id exists.
 */
import { Schema } from "effect"

/**
 * No valid API-key credentials (401): `missing_api_key` when X-API-Key is absent (checked first),
 * `missing_client_id` when X-Client-ID is, `invalid_credentials` when the client id is unknown or the key is not
 * the app's (the two are not told apart).
 */
export class PartnerCredentialsRefused extends Schema.TaggedError<PartnerCredentialsRefused>()("PartnerCredentialsRefused", {
  code: Schema.Literal("missing_api_key", "missing_client_id", "invalid_credentials"),
  message: Schema.String
}) {
  static readonly missingApiKey = () =>
    new PartnerCredentialsRefused({ code: "missing_api_key", message: "the X-API-Key header is required" })
  static readonly missingClientId = () =>
    new PartnerCredentialsRefused({ code: "missing_client_id", message: "the X-Client-ID header is required" })
  static readonly invalid = () =>
    new PartnerCredentialsRefused({ code: "invalid_credentials", message: "the API key or the client id is not valid" })
}

/** The credentials are the app's, and the app is suspended (403 `partner_app_inactive`). */
export class PartnerAppInactive extends Schema.TaggedError<PartnerAppInactive>()("PartnerAppInactive", {
  message: Schema.String
}) {
  static readonly of = () => new PartnerAppInactive({ message: "the partner app is suspended" })
}
