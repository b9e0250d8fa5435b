/**
 * What every answer must be, whatever was asked, and what a case's own expectation adds:
 * - never a 5xx, never a hang, always an X-Request-Id;
 * - every non-2xx in the envelope `{error, code, request_id, message}` with `message` = `error` (under /v1/partner
 *   the partner envelope `{error, code, request_id}` with the partner codes, and no answer there has a `message`;
 *   its 429 is `{error: "rate_limit_exceeded", error_description, code, request_id}`), `request_id` =
 *   the X-Request-Id header, a `code` that belongs to the status (and, when the request reached its operation,
 *   a status and code the operation documents);
 * - no internals in a message: no schema names, no words of the schema library, no file paths or stack
 *   traces, no echo of a long input, nothing over 1 kB;
 * - a 2xx body fits the documented schema of the answer.
 */
import { type FuzzCase, describeCase } from "./generators.js"
import { type OpenApiDocument, schemaNames, validate } from "./openapi.js"
import type { WireResponse } from "./wire.js"

/** The codes each status may carry anywhere in the API. */
const CODES_BY_STATUS: Readonly<Record<number, ReadonlyArray<string>>> = {
  400: ["validation_error", "bad_request", "idempotency_key_invalid"],
  401: ["unauthorized", "invalid_token"],
  402: ["plan_required"],
  403: ["insufficient_scope"],
  404: ["not_found"],
  405: ["method_not_allowed"],
  408: ["request_timeout"],
  409: ["conflict", "idempotency_conflict"],
  413: ["payload_too_large"],
  415: ["unsupported_media_type"],
  416: ["range_not_satisfiable"],
  422: ["idempotency_key_reuse"],
  431: ["request_header_fields_too_large"]
}

/**
 * The codes each status may carry under /v1/partner, whose failures answer the partner envelope `{error, code,
 * request_id}` (no `message`): the admin context's (X-API-Key and X-Client-ID) and the user context's (a partner
 * access token), the files' and the host's own (404, 405, 408, 413, 415, 431).
 */
const PARTNER_CODES_BY_STATUS: Readonly<Record<number, ReadonlyArray<string>>> = {
  ...CODES_BY_STATUS,
  400: [
    "invalid_request",
    "invalid_item_type",
    "idempotency_key_invalid",
    "sso_not_configured",
    "invalid_state",
    // The IdP configuration's (partner document: "IdP operation errors").
    "invalid_request_body",
    "invalid_idp_credentials",
    "invalid_idp",
    "domain_is_generic",
    "strict_mode_requires_domains",
    "domain_not_verified",
    "discovery_fetch_failed"
  ],
  401: ["missing_api_key", "missing_client_id", "invalid_credentials", "missing_authorization", "invalid_authorization_format", "unauthorized"],
  402: ["plan_required"],
  403: ["partner_app_inactive", "insufficient_scope", "forbidden"],
  404: [...(CODES_BY_STATUS[404] ?? []), "idp_config_not_found"],
  409: ["conflict", "idempotency_conflict", "session_already_processed", "idp_config_exists", "domain_already_claimed"],
  503: [...(CODES_BY_STATUS[503] ?? []), "secrets_key_not_configured"],
  429: ["rate_limit_exceeded"]
}

/**
 * The partner API's 429 (@convene/api/PartnerLimits, answered by the host's http/PartnerLimits.ts): the OAuth-style
 * body with the `code` and `request_id` of every partner failure; `error_description` is its message.
 */
const PARTNER_RATE_LIMITED_KEYS = ["code", "error", "error_description", "request_id"]

/** The partner code of a first-party one: the document's 400 `invalid_request` for a body or a field refused. */
const partnerCodeOf = (code: string) => (code === "bad_request" || code === "validation_error" ? "invalid_request" : code)

/** Whether the request is the partner API's (by its path as sent, as the host decides it). */
const isPartnerRequest = (c: FuzzCase) => {
  const path = c.request.path.split("?")[0] ?? ""
  return path === "/v1/partner" || path.startsWith("/v1/partner/")
}

/** The longest message a client is given. */
export const MAX_MESSAGE = 1024

/** Words of the implementation that no message may contain. */
export const internalWords = (doc: OpenApiDocument): ReadonlyArray<string | RegExp> => [
  // Schema names built of several words (CreateMeeting, UpdateAgendaItem, ParticipantEntry, MeetingStatus, …).
  ...schemaNames(doc).filter((name) => /^[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+$/.test(name)).map((name) => new RegExp(`\\b${name}\\b`)),
  "Encoded side",
  "Type side",
  "Brand<",
  "ReadonlyArray<",
  "readonly [",
  "{ readonly",
  "Schema",
  "Effect",
  "fiber",
  "Fiber",
  "Refinement",
  "Transformation",
  "DateTime.Utc",
  "Unable to decode",
  "Expected ",
  ", actual ",
  "└",
  "HttpApi",
  "RangeError",
  "TypeError",
  "SyntaxError",
  "Maximum call stack",
  "[object Object]",
  "undefined",
  "/tmp/",
  "/work/",
  "node_modules",
  "file://",
  "node:",
  // Stack frames: "    at foo (file.ts:1:2)", "at file:///…", "at async …".
  /\n\s+at\s/,
  /\bat [\w.$<>[\]]+ \([^)]*:\d+:\d+\)/,
  /\bat (?:async )?(?:file|node):/,
  /\.ts:\d+:\d+/
]

export interface Verdict {
  readonly problems: ReadonlyArray<string>
}

const header = (response: WireResponse, name: string): string | undefined => {
  const value = response.headers[name]
  return Array.isArray(value) ? value.join(", ") : (value as string | undefined)
}

const methodsOf = (allow: string | undefined) => (allow ?? "").split(",").map((m) => m.trim()).filter((m) => m !== "").sort()

/** Everything wrong with `response` as the answer to `c` (empty when it is right). */
export const judge = (doc: OpenApiDocument, forbidden: ReadonlyArray<string | RegExp>, c: FuzzCase, response: WireResponse): Array<string> => {
  const problems: Array<string> = []
  const status = response.status
  const requestId = header(response, "x-request-id")
  // A documented 503 is no failure: the IdP configuration refused by a server without CONVENE_SECRETS_KEY (the fuzz server's case).
  const unconfigured = status === 503 && response.text.includes('"secrets_key_not_configured"')
  if (status >= 500 && !unconfigured) problems.push(`answered ${status}: the server failed`)
  if (requestId === undefined || requestId === "") problems.push("no X-Request-Id header")
  // decisions.md: every response of the bearer API tells where the caller's request budget stands; but for a body
  // refused by its Content-Length alone (413), which the host answers before anyone reads the credential.
  if (c.expect.routed && c.op.security === "bearer" && status !== 413) {
    for (const name of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]) {
      if (!/^\d+$/.test(header(response, name) ?? "")) problems.push(`no ${name} header`)
    }
  }
  const body = response.json
  if (status >= 300) {
    if (!(header(response, "content-type") ?? "").includes("application/json")) {
      problems.push(`a ${status} without a JSON body (Content-Type ${header(response, "content-type") ?? "none"}, ${response.text.length} bytes)`)
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      problems.push(`a ${status} whose body is not the envelope: ${JSON.stringify(response.text.slice(0, 200))}`)
    } else {
      const envelope = body as Record<string, unknown>
      const keys = Object.keys(envelope).sort()
      const partner = isPartnerRequest(c)
      const rateLimited = partner && status === 429
      const base = rateLimited ? PARTNER_RATE_LIMITED_KEYS : partner ? ["code", "error", "request_id"] : ["code", "error", "message", "request_id"]
      // Beyond the envelope, only what the operation documents for the status (402 adds the plan fields).
      const documented = c.expect.routed ? c.op.failureFields.get(status) ?? [] : []
      const extra = keys.filter((key) => !base.includes(key) && !documented.includes(key))
      if (!base.every((key) => keys.includes(key)) || extra.length > 0) problems.push(`envelope keys are ${keys.join(", ")}`)
      if (partner && "message" in envelope) problems.push("a partner answer with `message` (the partner envelope is {error, code, request_id})")
      if (typeof envelope.error !== "string" || envelope.error.length === 0) problems.push("`error` is not a non-empty string")
      if (!partner && envelope.message !== envelope.error) problems.push("`message` differs from `error`")
      if (rateLimited) {
        if (envelope.error !== "rate_limit_exceeded") problems.push(`the partner 429's error is ${JSON.stringify(envelope.error)}, not "rate_limit_exceeded"`)
        if (typeof envelope.error_description !== "string" || envelope.error_description.length === 0) problems.push("the partner 429 has no error_description")
        if (!/^\d+$/.test(header(response, "retry-after") ?? "")) problems.push("the partner 429 has no Retry-After")
      }
      if (envelope.request_id !== requestId) problems.push(`request_id ${String(envelope.request_id)} is not the X-Request-Id ${String(requestId)}`)
      const code = String(envelope.code)
      const codes = (partner ? PARTNER_CODES_BY_STATUS : CODES_BY_STATUS)[status]
      if (status < 500 && (codes === undefined || !codes.includes(code))) problems.push(`code ${code} does not belong to status ${status}`)
      if (c.expect.routed && status < 500) {
        const documented = c.op.responses.get(status)
        if (documented === undefined) problems.push(`status ${status} is not documented for ${c.op.key} (documented: ${[...c.op.responses.keys()].join(", ")})`)
        else if (documented.length > 0 && !documented.includes(code)) problems.push(`code ${code} is not documented for ${status} of ${c.op.key} (documented: ${documented.join(", ")})`)
      }
      // The words a client reads: the partner 429 says them in error_description.
      const message = rateLimited
        ? typeof envelope.error_description === "string" ? envelope.error_description : ""
        : typeof envelope.error === "string" ? envelope.error : ""
      if (message.length > MAX_MESSAGE) problems.push(`the message is ${message.length} characters long (at most ${MAX_MESSAGE}): ${JSON.stringify(message.slice(0, 120))}…`)
      for (const word of forbidden) {
        const hit = typeof word === "string" ? message.includes(word) : word.test(message)
        if (hit) problems.push(`the message shows internals (${String(word)}): ${JSON.stringify(message.slice(0, 300))}`)
      }
      for (const echo of c.echoes) {
        if (echo.length >= 64 && message.includes(echo.slice(0, 64))) problems.push(`the message echoes a ${echo.length}-character input`)
      }
      if (c.expect.names !== undefined && status === 400 && !message.includes(c.expect.names)) {
        problems.push(`the message does not name ${JSON.stringify(c.expect.names)}: ${JSON.stringify(message.slice(0, 300))}`)
      }
      // Under /v1/partner a body that cannot be read and a field that does not decode are both `invalid_request`.
      const expected = partner ? c.expect.codes?.map(partnerCodeOf) : c.expect.codes
      if (expected !== undefined && !expected.includes(code)) problems.push(`code ${code}, expected ${expected.join(" or ")}`)
    }
  }
  if (c.expect.statuses !== undefined && !c.expect.statuses.includes(status)) {
    problems.push(`status ${status}, expected ${c.expect.statuses.join(" or ")}`)
  }
  if (c.expect.allow !== undefined && status === 405) {
    const allow = methodsOf(header(response, "allow"))
    const expected = [...c.expect.allow].sort()
    if (allow.join(",") !== expected.join(",")) problems.push(`Allow is ${JSON.stringify(header(response, "allow"))}, expected ${expected.join(", ")}`)
  }
  if (status >= 200 && status < 300) {
    if (isPartnerRequest(c) && typeof body === "object" && body !== null && !Array.isArray(body) && "message" in body) {
      problems.push("a partner answer with `message`")
    }
    if (c.expect.id !== undefined && (body as { id?: unknown } | undefined)?.id !== c.expect.id.toLowerCase()) {
      problems.push(`the answer's id is ${String((body as { id?: unknown } | undefined)?.id)}, expected ${c.expect.id.toLowerCase()}`)
    }
    const success = c.op.success
    if (c.expect.routed && c.request.method !== "HEAD" && success?.schema !== undefined) {
      if (body === undefined) problems.push(`a ${status} without a JSON body`)
      else problems.push(...validate(doc, success.schema, body).slice(0, 5).map((p) => `the ${status} body breaks the documented schema: ${p}`))
    }
  }
  return problems
}

/** The failure text for a case: the request, what came back, and what is wrong with it. */
export const report = (c: FuzzCase, response: WireResponse | undefined, problems: ReadonlyArray<string>): string =>
  [
    describeCase(c),
    response === undefined
      ? "  answer: none"
      : `  answer: ${response.status} in ${response.ms} ms, x-request-id ${String(response.headers["x-request-id"])}${response.headers.allow === undefined ? "" : `, allow ${String(response.headers.allow)}`}${response.sendError === undefined ? "" : ` (sending failed: ${response.sendError})`}\n  body: ${JSON.stringify(response.text.slice(0, 500))}${response.text.length > 500 ? `… (${response.text.length} bytes)` : ""}`,
    ...problems.map((p) => `  ✗ ${p}`)
  ].join("\n")
