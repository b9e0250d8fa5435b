/**
 * The errors of the OAuth endpoints, in RFC 6749's words (section 5.2, and 4.1.2.1 for the authorization
 * endpoint; RFC 7591 3.2.2 for registration). The host answers them as `{error, error_description}`, not in the
 * API's envelope: that is the shape OAuth clients read.
 */
import { Schema } from "effect"

export const OAuthErrorCode = Schema.Literal(
  "invalid_request",
  "invalid_client",
  "invalid_grant",
  "unauthorized_client",
  "unsupported_grant_type",
  "unsupported_response_type",
  "invalid_scope",
  "access_denied",
  "invalid_token",
  "invalid_redirect_uri",
  "invalid_client_metadata",
  "temporarily_unavailable"
)
export type OAuthErrorCode = typeof OAuthErrorCode.Type

export class OAuthError extends Schema.TaggedError<OAuthError>()("OAuthError", {
  error: OAuthErrorCode,
  error_description: Schema.String
}) {
  static readonly of = (error: OAuthErrorCode, description: string) =>
    new OAuthError({ error, error_description: description })
}
