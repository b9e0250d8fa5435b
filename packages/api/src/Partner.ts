/**
 * The partner API (/v1/partner), first part: the admin context, which a partner app calls server to server with
 * `X-API-Key` and `X-Client-ID` (its app info and its connected workspaces). Every failure of /v1/partner/* answers
 * the partner envelope `{error, code, request_id}` (no `message`), with the partner document's codes; the host
 * answers its own failures there (404, 405, 400 `invalid_request`, 500) in the same envelope.
 *
 * The admin key and first-party tokens are not interchangeable: a bearer token is no credential here (the headers
 * are missing: 401 `missing_api_key`), and a partner API key is none on /v1 (401 `invalid_token` as a bearer token,
 * 401 `unauthorized` as an X-API-Key header, which /v1 does not read).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as OpenApi from "@effect/platform/OpenApi"
import {
  ConnectedWorkspace,
  Pagination,
  type PartnerApp,
  PartnerAppInactive,
  PartnerAppView,
  PartnerCredentialsRefused
} from "@convene/core"
import { Context, Effect, Schema } from "effect"
import { envelope, wire } from "./Errors.js"
import * as PartnerLimits from "./PartnerLimits.js"
import { PageParams } from "./Query.js"

/** Where the partner API lives: every path under it answers failures in the partner envelope. */
export const partnerPrefix = "/v1/partner"

/** Whether a request path is the partner API's. */
export const isPartnerPath = (path: string): boolean => path === partnerPrefix || path.startsWith(`${partnerPrefix}/`)

/** The partner envelope of a status, with the codes it can carry. */
export const PartnerEnvelope = <const Codes extends ReadonlyArray<string>>(identifier: string, codes: Codes, description: string) =>
  Schema.Struct({
    error: Schema.String.annotations({ description: "human-readable description of the failure" }),
    code: Schema.Literal(...codes).annotations({ description: "stable identifier: branch on this and the status" }),
    request_id: Schema.String.annotations({ description: "the id also sent as the X-Request-Id header" })
  }).annotations({ identifier, description })

export interface PartnerEnvelopeBody<Code extends string = string> {
  readonly error: string
  readonly code: Code
  readonly request_id: string
}

export const partnerEnvelope = <const Code extends string>(code: Code, text: string, requestId: string): PartnerEnvelopeBody<Code> => ({
  error: text,
  code,
  request_id: requestId
})

/**
 * The envelope of a failure the host answers itself to a request for `url` (the API's own failures, and those Node,
 * the start-up and the drain answer before or beside it): the partner envelope with the partner codes under
 * /v1/partner, the first-party envelope elsewhere (and when the request's path is not known).
 */
export const envelopeFor = (url: string | undefined, code: string, text: string, requestId: string) => {
  const query = url === undefined ? -1 : url.indexOf("?")
  const path = url === undefined ? undefined : query === -1 ? url : url.slice(0, query)
  return path !== undefined && isPartnerPath(path) ? partnerEnvelope(partnerCodeOf(code), text, requestId) : envelope(code, text, requestId)
}

/**
 * The partner codes of the host's own failures where the first-party API has others: a body that cannot be read
 * and a field that does not decode are both `invalid_request` (the partner document's 400).
 */
export const partnerCodeOf = (code: string): string =>
  code === "bad_request" || code === "validation_error" ? "invalid_request" : code

/**
 * The code a partner group (or endpoint) answers a body that is not JSON or a field that does not decode with, where
 * its document says other than `invalid_request` (the IdP routes: `invalid_request_body`). The host reads it from the
 * route table (http/Routes.ts).
 */
export class PartnerInvalidCode extends Context.Tag("@convene/api/PartnerInvalidCode")<PartnerInvalidCode, string>() {}

/**
 * A GET whose reading changes state (it uses up what it answers: an SSO callback, a session's outcome). The host
 * answers HEAD there with 405 instead of running the GET without its body, so that a link checker or a prefetcher
 * sending HEAD cannot use it up unseen (http/Routes.ts).
 */
export class NoHead extends Context.Tag("@convene/api/NoHead")<NoHead, boolean>() {}

export const PartnerUnauthorized = wire(
  PartnerCredentialsRefused,
  PartnerEnvelope(
    "PartnerUnauthorized",
    ["missing_api_key", "missing_client_id", "invalid_credentials"],
    "no valid API-key credentials: `missing_api_key` without X-API-Key (checked first), `missing_client_id` without " +
      "X-Client-ID, `invalid_credentials` when the client id is unknown or the key is not the app's"
  ),
  401,
  (error, requestId) => Effect.succeed(partnerEnvelope(error.code, error.message, requestId)),
  (b) => new PartnerCredentialsRefused({ code: b.code, message: b.error })
)

export const PartnerInactive = wire(
  PartnerAppInactive,
  PartnerEnvelope("PartnerAppInactive", ["partner_app_inactive"], "the credentials are the app's, and the app is suspended"),
  403,
  (error, requestId) => Effect.succeed(partnerEnvelope("partner_app_inactive", error.message, requestId)),
  (b) => new PartnerAppInactive({ message: b.error })
)

/** A request to the partner API whose parameters do not decode (the host's answer, in the partner envelope). */
export class PartnerRequestInvalid extends Schema.TaggedError<PartnerRequestInvalid>()("PartnerRequestInvalid", {
  message: Schema.String
}) {}

export const PartnerInvalidRequest = wire(
  PartnerRequestInvalid,
  PartnerEnvelope("PartnerInvalidRequest", ["invalid_request"], "malformed or missing parameters; `error` names the parameter"),
  400,
  (error, requestId) => Effect.succeed(partnerEnvelope("invalid_request", error.message, requestId)),
  (b) => new PartnerRequestInvalid({ message: b.error })
)

/**
 * A body the host or an upload cannot take (too large, of another media type), as a partner path answers it: in the
 * partner envelope. The platform encodes a failure with the first schema of the API that takes its class, so the
 * partner routes fail with these classes of their own.
 */
export class PartnerBodyTooLarge extends Schema.TaggedError<PartnerBodyTooLarge>()("PartnerBodyTooLarge", {
  message: Schema.String
}) {}

export class PartnerMediaTypeUnsupported extends Schema.TaggedError<PartnerMediaTypeUnsupported>()("PartnerMediaTypeUnsupported", {
  message: Schema.String
}) {}

export const PartnerPayloadTooLarge = wire(
  PartnerBodyTooLarge,
  PartnerEnvelope(
    "PartnerPayloadTooLarge",
    ["payload_too_large"],
    "the request body is larger than the server takes (1 MiB for JSON, CONVENE_MAX_UPLOAD_BYTES for an upload)"
  ),
  413,
  (error, requestId) => Effect.succeed(partnerEnvelope("payload_too_large", error.message, requestId)),
  (b) => new PartnerBodyTooLarge({ message: b.error })
)

export const PartnerUnsupportedMediaType = wire(
  PartnerMediaTypeUnsupported,
  PartnerEnvelope(
    "PartnerUnsupportedMediaType",
    ["unsupported_media_type"],
    "the body's Content-Type is not the endpoint's (application/json, or multipart/form-data for an upload)"
  ),
  415,
  (error, requestId) => Effect.succeed(partnerEnvelope("unsupported_media_type", error.message, requestId)),
  (b) => new PartnerMediaTypeUnsupported({ message: b.error })
)

/** The partner app the request's API key and client id authenticate as. */
export class CurrentPartnerApp extends Context.Tag("@convene/api/CurrentPartnerApp")<CurrentPartnerApp, PartnerApp>() {}

/** The security scheme of the client id, which goes with `partnerApiKey` in every requirement (see `transform`). */
const clientIdScheme = "partnerClientId"
const apiKeyScheme = "partnerApiKey"

/**
 * `X-API-Key: <api key>` with `X-Client-ID: <client id>`, both required (OpenAPI: one requirement naming both
 * schemes). The middleware reads X-Client-ID itself; the core decides (PartnerApps.authenticateAdmin).
 */
export class PartnerAdminAuth extends HttpApiMiddleware.Tag<PartnerAdminAuth>()("PartnerAdminAuth", {
  failure: Schema.Union(PartnerUnauthorized, PartnerInactive),
  provides: CurrentPartnerApp,
  security: {
    [apiKeyScheme]: HttpApiSecurity.apiKey({ key: "X-API-Key", in: "header" }).pipe(
      HttpApiSecurity.annotate(
        OpenApi.Description,
        "The partner app's API key (svc_pak_v1_...), shown once when the operator created the app; sent with X-Client-ID"
      )
    )
  }
}) {}

export const ConnectedWorkspaceList = Pagination.ListOf(ConnectedWorkspace).annotations({ identifier: "ConnectedWorkspaceList" })

const authentication = "Authenticated by `X-API-Key` and `X-Client-ID` (both required): 401 `missing_api_key` without the " +
  "key (checked first), 401 `missing_client_id` without the client id, 401 `invalid_credentials` for an unknown client " +
  "id or a key that is not the app's (compared in constant time; an empty header counts as absent), 403 " +
  "`partner_app_inactive` when the app is suspended. A bearer token is no credential here."

export class PartnerAdminApi extends HttpApiGroup.make("partnerAdmin")
  .add(
    HttpApiEndpoint.get("getApp", "/app")
      .addSuccess(PartnerAppView)
      .annotate(OpenApi.Summary, "Get the partner app")
      .annotate(
        OpenApi.Description,
        `The app the credentials belong to: \`{id, name, slug, status, webhook_enabled, webhook_url, co_brand_name, ` +
          `co_brand_logo_url, client_id, redirect_uris, created_at, updated_at}\`; never the API key or the client ` +
          `secret. ${authentication}`
      )
  )
  .add(
    HttpApiEndpoint.get("listWorkspaces", "/workspaces")
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(ConnectedWorkspaceList)
      .addError(PartnerInvalidRequest)
      .annotate(OpenApi.Summary, "List the connected workspaces")
      .annotate(
        OpenApi.Description,
        "The workspaces connected to the app (by the operator, or by a user approving it at /oauth2/authorize), `{id, name, plan, " +
          "connected_at}`, newest connection first, in the list envelope `{items, total, limit, offset}` (limit 20 by " +
          "default, at most 100). `connected_at` is when the workspace was first connected; a deleted workspace " +
          `leaves the list with its connection. ${authentication}`
      )
  )
  .middleware(PartnerAdminAuth)
  .addError(PartnerLimits.PartnerRateLimited)
  .prefix(`${partnerPrefix}/admin`)
  .annotate(OpenApi.Title, "Partner admin")
  .annotate(
    OpenApi.Description,
    "The partner API's admin context: a partner app administers its own integration with its API key. Every failure " +
      "answers the partner envelope `{error, code, request_id}`."
  )
{}

type JsonObject = { readonly [key: string]: unknown }

const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value)

/** The fields of the partner envelope, in order; and those of the partner 429 (PartnerLimits.ts). */
const partnerEnvelopeFields = ["code", "error", "request_id"].join()
/** The partner 402 (PartnerUser.ts): the envelope with the plan the feature needs. */
const partnerPlanFields = ["code", "current_plan", "error", "feature", "request_id", "required_plan"].join()
/** A toolkit version's 409 (PartnerToolkits.ts): the envelope with the version's conflicts. */
const partnerConflictFields = ["code", "conflicts", "error", "request_id"].join()
// A workflow run refused for its configuration (PartnerWorkflows.PartnerNotReady).
const partnerNotReadyFields = ["code", "error", "readiness_issues", "request_id"].join()
const partnerBodies = [partnerEnvelopeFields, PartnerLimits.fields, partnerPlanFields, partnerConflictFields, partnerNotReadyFields]

/** Whether `schema` refers to a partner envelope among `schemas` (the document's components): a partner failure. */
const isPartnerFailure = (schemas: JsonObject) => (schema: unknown): boolean => {
  if (!isObject(schema) || typeof schema.$ref !== "string") return false
  const component = schemas[schema.$ref.split("/").pop() ?? ""]
  return isObject(component) && isObject(component.properties) &&
    partnerBodies.includes(Object.keys(component.properties).sort().join())
}

/**
 * A failure response of a partner operation with only the partner envelopes it may answer (the first-party API's
 * shared failures are added to every operation by the platform); none left: the response is not documented here.
 */
const partnerResponse = (schemas: JsonObject, status: string, response: unknown): unknown => {
  if (!isObject(response) || !isObject(response.content)) return response
  const json = response.content["application/json"]
  if (!isObject(json) || !isObject(json.schema)) return response
  const members = Array.isArray(json.schema.anyOf) ? json.schema.anyOf : [json.schema]
  const kept = members.filter(isPartnerFailure(schemas))
  if (kept.length === 0) return undefined
  const schema = kept.length === 1 ? kept[0] : { anyOf: kept }
  const codes = kept.flatMap((member) => {
    const component = isObject(member) && typeof member.$ref === "string" ? schemas[member.$ref.split("/").pop() ?? ""] : undefined
    const code = isObject(component) && isObject(component.properties) ? component.properties.code : undefined
    return isObject(code) && Array.isArray(code.enum) ? code.enum.map(String) : []
  })
  // The IdP routes answer invalid_request_body (PartnerInvalidCode) where the others answer invalid_request.
  const invalid = codes.includes("invalid_request_body") ? "invalid_request_body" : "invalid_request"
  const described = status === "400" ? { description: `${invalid} naming the parameter, or another code of the list` } : {}
  return { ...response, ...described, content: { ...response.content, "application/json": { ...json, schema } } }
}

const partnerOperation = (schemas: JsonObject, operation: unknown): unknown => {
  if (!isObject(operation)) return operation
  const responses: Record<string, unknown> = {}
  for (const [status, response] of Object.entries(isObject(operation.responses) ? operation.responses : {})) {
    const kept = Number(status) < 400 ? response : partnerResponse(schemas, status, response)
    if (kept !== undefined) responses[status] = kept
  }
  const security = Array.isArray(operation.security)
    ? operation.security.map((requirement) =>
      isObject(requirement) && apiKeyScheme in requirement ? { ...requirement, [clientIdScheme]: [] } : requirement
    )
    : operation.security
  return { ...operation, responses, security }
}

const clientIdSecurity: OpenApi.OpenAPISecurityScheme = {
  type: "apiKey",
  name: "X-Client-ID",
  in: "header",
  description: "The partner app's client_id (cvp_...), sent with X-API-Key"
}

/** What the document's description says of the partner API. */
export const description = `

**Partner API.** Paths under /v1/partner are the partner API. Its admin context (/v1/partner/admin) takes
\`X-API-Key\` and \`X-Client-ID\`, the credentials the operator gave the partner app when creating it; a
first-party token is no credential there, and a partner API key is none on the first-party paths. Every failure of a
/v1/partner path answers \`{error, code, request_id}\` (no \`message\`) with the partner codes: 400 \`invalid_request\`,
401 \`missing_api_key\`, \`missing_client_id\` or \`invalid_credentials\`, 403 \`partner_app_inactive\`, 404 \`not_found\`,
405 \`method_not_allowed\`, 500 \`internal_server_error\`. Lists answer \`{items, total, limit, offset}\` as above.

Its user context (/v1/partner/user) takes \`Authorization: Bearer <access token>\` of the partner OAuth 2.0 server:
GET /oauth2/authorize (\`response_type=code\`, \`client_id\`, \`redirect_uri\` equal to a registered one, \`scope\`,
\`state\` required, PKCE S256 optional and enforced when sent; the user signs in and approves on a consent page, which
connects their workspace to the app) and POST /oauth2/token (the app's client id and secret in HTTP Basic, or
\`client_secret_post\`; codes 5 minutes and single use, access tokens 24 hours, refresh tokens 30 days, rotated, a
replay revoking the grant; RFC 6749 error bodies \`{error, error_description}\`, \`invalid_client\` 401 with
\`WWW-Authenticate: Basic\`). Metadata: /.well-known/oauth-authorization-server/oauth2. Scopes: openid, profile,
meetings:read, meetings:write, action-items:read, action-items:write, partner-api/workflows:read,
partner-api/workflows:write. User-context codes: 401 \`missing_authorization\`, \`invalid_authorization_format\`,
\`unauthorized\`; 403 \`insufficient_scope\`, \`forbidden\`, \`partner_app_inactive\`; 400 \`invalid_item_type\`;
402 \`plan_required\`; opt-in Idempotency-Key on writes (\`idempotency_key_invalid\`, 409 \`idempotency_conflict\`,
422 \`idempotency_key_reuse\`; replays carry \`Idempotent-Replayed: true\`).
${PartnerLimits.description}`

/**
 * The partner paths of the generated document as the host answers them: the client id's scheme beside the API key's
 * (both in one requirement: both headers are needed), and only the partner envelope among the failures.
 */
export const transform = (spec: Record<string, unknown>): Record<string, unknown> => {
  const info = isObject(spec.info) ? spec.info : {}
  const components = isObject(spec.components) ? spec.components : {}
  const schemas = isObject(components.schemas) ? components.schemas : {}
  const schemes = isObject(components.securitySchemes) ? components.securitySchemes : {}
  const paths: Record<string, unknown> = {}
  for (const [path, item] of Object.entries(isObject(spec.paths) ? spec.paths : {})) {
    if (!isPartnerPath(path) || !isObject(item)) {
      paths[path] = item
      continue
    }
    const operations: Record<string, unknown> = {}
    for (const [method, operation] of Object.entries(item)) operations[method] = partnerOperation(schemas, operation)
    paths[path] = operations
  }
  return {
    ...spec,
    info: { ...info, description: `${typeof info.description === "string" ? info.description : ""}${description}` },
    paths,
    components: {
      ...components,
      securitySchemes: apiKeyScheme in schemes ? { ...schemes, [clientIdScheme]: clientIdSecurity } : schemes
    }
  }
}
