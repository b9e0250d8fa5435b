/**
 * An identity provider's OIDC discovery document (OpenID Connect Discovery 1.0), fetched through the Outbound port
 * (HTTPS, no internal address unless allowed, no redirect, a time limit and a size cap) and validated before its
 * endpoints are cached on the IdP configuration.
 *
 * The document must be a JSON object whose `issuer` is exactly the discovery URL without
 * `/.well-known/openid-configuration` (section 4.3), with `authorization_endpoint`, `token_endpoint` and `jwks_uri`
 * (and `userinfo_endpoint` when present) absolute HTTPS URLs, and `response_types_supported`, when present, listing
 * `code` (the only flow the SSO uses).
 */
import { Effect, Either, ParseResult, Schema } from "effect"
import { Outbound } from "../../ports/Outbound.js"
import { httpsUrlProblem } from "../../shared/Url.js"
import { discoverySuffix, IdpConfigRefused } from "./IdpConfig.js"
import type { DiscoveredEndpoints } from "./IdpStore.js"

const HttpsUrl = Schema.String.pipe(Schema.filter((url) => httpsUrlProblem(url) === undefined || "must be an absolute HTTPS URL"))

/** The members of a discovery document this server reads; any other member is ignored. */
export const OidcMetadata = Schema.Struct({
  issuer: HttpsUrl,
  authorization_endpoint: HttpsUrl,
  token_endpoint: HttpsUrl,
  jwks_uri: HttpsUrl,
  userinfo_endpoint: Schema.optional(Schema.NullOr(HttpsUrl)),
  response_types_supported: Schema.optional(
    Schema.Array(Schema.String).pipe(Schema.filter((types) => types.includes("code") || "must include code"))
  )
}).annotations({ identifier: "OidcMetadata" })

const decodeMetadata = Schema.decodeUnknownEither(Schema.parseJson(OidcMetadata))

const fetchFailed = (problem: string) =>
  new IdpConfigRefused({ code: "discovery_fetch_failed", message: `the discovery document could not be fetched: ${problem}` })

const invalidDocument = (problem: string) =>
  new IdpConfigRefused({ code: "discovery_fetch_failed", message: `the discovery document is not valid OIDC metadata: ${problem}` })

/** The first issue of a decode failure, as `member: problem` (never the document's text). */
const problemOf = (error: ParseResult.ParseError): string => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  if (issue === undefined) return "it does not decode"
  if (issue.path.length === 0) return issue._tag === "Transformation" ? "the answer is not JSON" : "the answer is not a JSON object"
  return `${issue.path.join(".")} ${issue._tag === "Missing" ? "is missing" : issue.message}`
}

/**
 * The endpoints of the discovery document at `url`: IdpConfigRefused `discovery_fetch_failed` when it cannot be
 * fetched (time limit, connection, TLS, too large, not 2xx) or is not valid metadata for that URL, and
 * `invalid_request_body` naming discovery_url when the outbound rules refuse the host.
 */
export const discover = (url: string): Effect.Effect<DiscoveredEndpoints, IdpConfigRefused, Outbound> =>
  Effect.gen(function*() {
    const outbound = yield* Outbound
    const response = yield* outbound.get({ url, headers: { accept: "application/json" } }).pipe(
      Effect.mapError((failed) =>
        failed.reason === "refused"
          ? new IdpConfigRefused({ code: "invalid_request_body", message: `discovery_url: ${failed.message}` })
          : fetchFailed(failed.message)
      )
    )
    if (response.status < 200 || response.status > 299) {
      return yield* fetchFailed(`the identity provider answered HTTP ${response.status}`)
    }
    const metadata = decodeMetadata(response.body)
    if (Either.isLeft(metadata)) return yield* invalidDocument(problemOf(metadata.left))
    const expectedIssuer = url.slice(0, -discoverySuffix.length)
    if (metadata.right.issuer !== expectedIssuer) {
      const named = metadata.right.issuer.length <= 200 ? metadata.right.issuer : `${metadata.right.issuer.slice(0, 200)}…`
      return yield* invalidDocument(`its issuer is ${named}, not ${expectedIssuer} (the discovery URL without ${discoverySuffix})`)
    }
    return {
      issuer: metadata.right.issuer,
      authorization_endpoint: metadata.right.authorization_endpoint,
      token_endpoint: metadata.right.token_endpoint,
      userinfo_endpoint: metadata.right.userinfo_endpoint ?? null,
      jwks_uri: metadata.right.jwks_uri
    }
  })
