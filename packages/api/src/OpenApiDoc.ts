/**
 * Finishing touches on the generated OpenAPI documents: the API-wide rules that no single endpoint states, the
 * license, the server of this installation, and the removal of the platform's own decode-error shape (decode
 * failures answer our envelope instead).
 */
import type { OpenApi } from "@effect/platform"

/**
 * The project's license, by its SPDX identifier (OpenAPI 3.1 `license.identifier`; the platform's type knows only
 * `name` and `url`, and 3.1 allows one of `url` and `identifier`).
 */
const apache2 = { name: "Apache-2.0", identifier: "Apache-2.0" }
export const license: OpenApi.OpenAPISpecLicense = apache2

export const description = `
Convene implements the Meeting Workspace API (first-party /v1) for teams that host it themselves.

**Authentication.** Every /v1 path takes \`Authorization: Bearer <token>\`: an OAuth access token (svc_at_v1_),
a personal access token (svc_pat_v1_), a short-lived token (svc_slt_v1_) or a workspace API key (svc_wk_v1_).
401 \`unauthorized\` when no token is sent, 401 \`invalid_token\` when it is malformed, unknown, expired or revoked,
403 \`insufficient_scope\` when it lacks the endpoint's scope or role. Tokens are stored only as SHA-256 hashes.

**Visibility.** Every resource belongs to the credential's workspace; another workspace's resource answers 404.
Workspace API keys and OWNER/ADMIN users see every meeting of the workspace; MEMBERs see the meetings they take
part in (404 otherwise) and change them as the meeting's OWNER or an EDITOR (a VIEWER gets 403). Action items
follow the visibility of their meeting; talking points are private to whoever wrote them. The calendar is narrower
than visibility: it holds the meetings the caller takes part in (every meeting of the workspace for an API key).

**Errors.** Every failure answers \`{error, code, request_id, message}\` (\`message\` is a deprecated mirror of
\`error\`); the request id is also the \`X-Request-Id\` header of every response. Decode and validation failures
are 400 \`validation_error\` naming the field, a body that is not valid JSON (or not UTF-8) is 400 \`bad_request\`, an
unknown path 404 \`not_found\`, a known path with another method 405 \`method_not_allowed\` with an Allow header, and an
unexpected failure 500 \`internal_server_error\` without internals. The 402 plan gate adds
\`feature, current_plan, required_plan\` (code \`plan_required\`).

**Requests.** Paths are matched exactly: case-sensitive, no empty segments, no trailing slash, no \`;\` parameters and
no percent-encoded letters, digits or slashes (404 otherwise), so a proxy rule on a path prefix cannot be bypassed.
A JSON body is sent as \`application/json\` (with \`charset=utf-8\` or no charset; anything else is 415
\`unsupported_media_type\`), holds at most 1 MiB (413 \`payload_too_large\`, also for chunked bodies) and names only
the fields the operation documents: an unknown field is 400 \`validation_error\` naming it. Text may not contain
U+0000 or unpaired UTF-16 surrogates (400 naming the field). E-mail addresses are kept trimmed and lower-cased.
The server gives a client 10 s to send its headers and 30 s to send its whole request (408 \`request_timeout\`),
closes idle keep-alive connections after 65 s and serves at most 1024 connections at once (all configurable).

**Pagination.** Lists answer \`{items, total, limit, offset}\`. \`limit\` defaults to 20 (25 for calendar events); above
100 it becomes 100; missing or non-positive it becomes the default. \`offset\` defaults to 0 (negative reads as 0); past
the end the page is empty. A non-integer limit or offset is 400.

**Idempotency.** POST /v1/meetings, /v1/action-items, /v1/agenda-items and /v1/meetings/{id}/participants take an
optional \`Idempotency-Key\` (1 to 255 printable ASCII characters, else 400 \`idempotency_key_invalid\`). Keys are
scoped to the credential. The first 2xx answer is stored in the same transaction as the resource and replayed
byte for byte, with \`Idempotent-Replayed: true\`, to an identical repeat (same method, path, query and JSON body, key
order and white space aside) for 24 hours. The same key with another body or path is 422
\`idempotency_key_reuse\`; a repeat while the first is in flight is 409 \`idempotency_conflict\` with Retry-After;
a request that failed releases its key; a claim left by a crashed request frees after 5 minutes.

**Rate limits.** Every request of a credential takes one unit of its budget, whatever the answer (a replay of an
idempotent request too): per minute, FREE 60, PRO 300, ELITE 600, ENTERPRISE 1200 (the workspace's plan; a plan
change applies within 5 seconds). Requests that present no valid credential are counted per client address, 300 a
minute. The budget is counted in windows of one clock minute (it is whole again when the minute turns) and shared by
every server process of the installation; where several processes share it, each takes units in blocks of 1% of the
budget (at most 100), and units a process reserved but did not use by the minute's end count as spent, so a budget
may run out up to one block per process early, never late. Every response of a /v1 path that takes a bearer token carries
\`X-RateLimit-Limit\` (the budget), \`X-RateLimit-Remaining\` (units left in this minute) and \`X-RateLimit-Reset\`
(when the minute ends, in seconds since the epoch); but for a body refused by its Content-Length (413), which is
answered before the credential is read. Over budget: 429 with the compact body \`{code: "rate_limit_exceeded",
message, request_id}\` (no \`error\` field) and \`Retry-After\` in seconds; the request does nothing. OAuth, the
documents, health checks and the operator API are outside the budgets. Operators set the budgets with
CONVENE_RATE_LIMITS (\`off\`, or e.g. \`FREE=120,ANONYMOUS=600\`).

**Time.** Timestamps are RFC 3339 in UTC with a Z offset; request timestamps without an offset are read as UTC.
Dates are YYYY-MM-DD.

**This document.** Served at /v1/openapi.json and as a browsable reference at /docs, both entirely from this
server (no fonts, scripts or telemetry from elsewhere). The operator API, which provisions workspaces, users and
tokens, is described in a document of its own, served to the operator only.
`.trim()

export const operatorDescription = `
The operator API administers this installation: workspaces and their plans, users, their tokens, the
workspaces' API keys, and the partner apps with the workspaces connected to them. It is for the people who run the server, not for the users of the first-party API
(\`/v1/openapi.json\` describes that one).

**On and off.** The operator API is on only when \`CONVENE_OPERATOR_TOKEN\` is set (at least 32 characters).
When it is off, every /operator path, this document included, answers 404 as if it did not exist.

**Authentication.** Every path takes \`Authorization: Bearer $CONVENE_OPERATOR_TOKEN\` (compared in constant
time): 401 \`unauthorized\` without it, 401 \`invalid_token\` with another value. The token guards every
workspace: keep it out of shell histories, and keep /operator off the public network (paths are matched
exactly, so a reverse-proxy rule on the /operator/ prefix cannot be bypassed).

**Requests and errors.** As on the first-party API: JSON bodies of at most 1 MiB sent as
\`application/json\` (415 otherwise), unknown fields refused (400 \`validation_error\` naming them), every failure
in the envelope \`{error, code, request_id, message}\` with the request id also in the \`X-Request-Id\` header,
lists as \`{items, total, limit, offset}\` (limit 20 by default, at most 100), timestamps in RFC 3339 UTC.
`.trim()

/** The document as this installation serves it: its base URL (CONVENE_BASE_URL) as the one server. */
export const forInstallation = (spec: OpenApi.OpenAPISpec, baseUrl: string): OpenApi.OpenAPISpec => ({
  ...spec,
  servers: [{ url: baseUrl, description: "this installation (CONVENE_BASE_URL)" }]
})

const dropped = ["HttpApiDecodeError", "Issue", "PropertyKey"]

type JsonObject = { readonly [key: string]: unknown }

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const isDecodeErrorRef = (value: unknown) =>
  isObject(value) && typeof value.$ref === "string" && value.$ref.endsWith("/HttpApiDecodeError")

/** The node without references to the platform's decode-error shape (a one-member anyOf left behind collapses). */
const stripDecodeError = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.filter((item) => !isDecodeErrorRef(item)).map(stripDecodeError)
  if (!isObject(node)) return node
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(node)) out[key] = stripDecodeError(value)
  const anyOf = out.anyOf
  if (Array.isArray(anyOf) && anyOf.length === 1 && isObject(anyOf[0])) {
    delete out.anyOf
    Object.assign(out, anyOf[0])
  }
  return out
}

const badRequest = "validation_error naming the field, bad_request for a body that is not valid JSON (or not UTF-8)"

/** Every operation's 400 described as the host answers it. */
const describeBadRequests = (paths: unknown): unknown => {
  if (!isObject(paths)) return paths
  const out: Record<string, unknown> = {}
  for (const [path, operations] of Object.entries(paths)) {
    if (!isObject(operations)) {
      out[path] = operations
      continue
    }
    const described: Record<string, unknown> = {}
    for (const [method, operation] of Object.entries(operations)) {
      const responses = isObject(operation) ? operation.responses : undefined
      const bad = isObject(responses) ? responses["400"] : undefined
      described[method] = isObject(operation) && isObject(responses) && isObject(bad)
        ? { ...operation, responses: { ...responses, "400": { ...bad, description: badRequest } } }
        : operation
    }
    out[path] = described
  }
  return out
}

export const transform = (spec: Record<string, unknown>): Record<string, unknown> => {
  const stripped = stripDecodeError(spec)
  if (!isObject(stripped)) return spec
  const components = isObject(stripped.components) ? stripped.components : {}
  const schemas = isObject(components.schemas) ? { ...components.schemas } : {}
  for (const name of dropped) delete schemas[name]
  return {
    ...stripped,
    paths: describeBadRequests(stripped.paths ?? {}),
    components: { ...components, schemas }
  }
}
