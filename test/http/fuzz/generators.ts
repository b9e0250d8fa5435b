/**
 * Requests generated from an operation's own description in the OpenAPI document, with what the server must
 * answer to each:
 * - `validCase`: valid-ish requests (parameters, query and body drawn from the schemas, with the edges the
 *   schemas allow: optional fields, nulls, enums, case-insensitive media types, upper-case UUIDs,
 *   Idempotency-Keys that repeat), where only the invariants are asserted;
 * - `hostileCase`: a valid request with one hostile change (path, method, credential, media type, bytes, JSON,
 *   query, path parameter, header) and the exact answer the rules give it, following the order in which the
 *   host decides: path (404), method (405), size (413), credential (401), media type (415), bytes and JSON
 *   syntax (400 bad_request), decoding (400 validation_error naming the field), then the handler.
 *
 * Under /v1/partner the codes are the partner document's: 400 `invalid_request` for what the first-party API calls
 * `bad_request` and `validation_error` (`invalid_item_type` for an agenda item type outside the four); the user
 * context's credential refusals (401 `missing_authorization`, `invalid_authorization_format`, `unauthorized`; 403
 * `partner_app_inactive`, `insufficient_scope`, `forbidden`) with the world's partner access tokens; and the
 * pre-signed download URLs (no token) minted by the server, whole or with a part changed.
 */
import { FastCheck as fc } from "effect"
import { type Json, type JsonPath, Raw, fieldOf, isJsonObject, positions, replaceAt, toJsonText } from "./json.js"
import { type JsonSchema, MAX_PARAM_LENGTH, methodsAt, type OpenApiDocument, type Operation, resolve } from "./openapi.js"
import type { WireBody, WireRequest } from "./wire.js"
import type { CredentialName, FileLink, World } from "./world.js"

/** What the answer to a case must be (beyond the invariants every answer meets). */
export interface Expectation {
  /** The statuses allowed (any when absent). */
  readonly statuses?: ReadonlyArray<number>
  /** The exact `code` (one of these). */
  readonly codes?: ReadonlyArray<string>
  /** Text the message must contain (the field it names). */
  readonly names?: string
  /** The methods a 405's Allow header must list. */
  readonly allow?: ReadonlyArray<string>
  /** The `id` a 2xx body must carry (lower case). */
  readonly id?: string
  /** The request reached the operation (its documented statuses and codes apply). */
  readonly routed: boolean
}

export type Credential = CredentialName | "none" | "garbage" | "revoked"

export interface FuzzCase {
  readonly op: Operation
  readonly kind: "valid" | "hostile"
  /** The hostile change (or the valid-ish variant), in words. */
  readonly mutation: string
  readonly credential: string
  readonly request: WireRequest
  readonly expect: Expectation
  /** Long inputs that no message may echo. */
  readonly echoes: ReadonlyArray<string>
}

/**
 * An Idempotency-Key the sender replaces with a new one on every send: a shrunk case re-sent with another
 * body must not meet its own earlier key (422 idempotency_key_reuse).
 */
export const FRESH_KEY = "fuzz-fresh-key"

// ---------------------------------------------------------------------------------------------------------
// Describing a case (failure messages, fast-check's counterexample)

const preview = (text: string, max = 240) => {
  const shown = JSON.stringify(text.length > max ? text.slice(0, max) : text)
  return text.length > max ? `${shown}… (${text.length} characters)` : shown
}

const describeBody = (body: WireBody | undefined): string => {
  if (body === undefined) return "(none)"
  if (body.kind === "stream") {
    return `chunked: ${preview(body.prefix, 80)} + ${body.size} × ${JSON.stringify(body.fill)} + ${preview(body.suffix, 80)} (${body.prefix.length + body.size + body.suffix.length} bytes)`
  }
  const valid = (() => {
    try {
      new TextDecoder("utf-8", { fatal: true }).decode(body.bytes)
      return true
    } catch {
      return false
    }
  })()
  const text = valid ? body.bytes.toString("utf8") : body.bytes.toString("latin1")
  return `${body.chunked === true ? "chunked, " : ""}${body.bytes.length} bytes${valid ? "" : " (not UTF-8; shown as latin1)"}: ${preview(text, 400)}`
}

export const describeCase = (c: FuzzCase): string => {
  const headers = Object.entries(c.request.headers)
    .map(([name, value]) => `${name}: ${name === "authorization" ? value.replace(/(\S{12})\S{8,}/, "$1…") : preview(value, 80)}`)
    .join("; ")
  return [
    `${c.op.key} — ${c.kind}: ${c.mutation} (credential: ${c.credential})`,
    `  ${c.request.method} ${preview(c.request.path, 300)}`,
    `  headers: ${headers || "(none)"}`,
    `  body: ${describeBody(c.request.body)}`,
    `  expected: ${JSON.stringify(c.expect)}`
  ].join("\n")
}

const makeCase = (c: FuzzCase): FuzzCase =>
  Object.defineProperty(c, fc.toStringMethod, { value: () => `\n${describeCase(c)}\n`, enumerable: false })

// ---------------------------------------------------------------------------------------------------------
// Values from schemas

interface Context {
  readonly doc: OpenApiDocument
  readonly world: World
  /** Conservative: values certain to decode (for the base of a hostile request). */
  readonly strict: boolean
}

const pick = <A>(items: ReadonlyArray<A>): fc.Arbitrary<A> => fc.constantFrom(...items)

/** The existing ids a UUID field named `name` refers to. */
const poolOf = (world: World, name: string): ReadonlyArray<string> => {
  switch (name) {
    case "meeting_id":
    case "destination_meeting_id":
      return world.ids.meetings
    case "agenda_item_id":
      return world.ids.agendaItems
    case "assigned_to_user_id":
    case "user_id":
    case "presenters":
      return world.ids.users
    case "template_id":
      return world.ids.templates
    case "workspace_id":
      return world.ids.workspaces
    default:
      return []
  }
}

const uuidArb = (ctx: Context, field: string): fc.Arbitrary<string> => {
  const pool = poolOf(ctx.world, field)
  if (ctx.strict) return pool.length > 0 ? pick(pool) : fc.uuid({ version: 4 })
  return fc.oneof(
    { weight: 6, arbitrary: pool.length > 0 ? pick(pool) : fc.uuid({ version: 4 }) },
    { weight: 2, arbitrary: (pool.length > 0 ? pick(pool) : fc.uuid({ version: 4 })).map((id) => id.toUpperCase()) },
    { weight: 1, arbitrary: fc.uuid() }
  )
}

const instant = fc.date({ min: new Date("2020-01-01T00:00:00Z"), max: new Date("2040-12-31T23:59:59Z"), noInvalidDate: true })

const timestampArb = (ctx: Context): fc.Arbitrary<string> =>
  ctx.strict
    ? instant.map((d) => d.toISOString().replace(/\.\d{3}Z$/, "Z"))
    : fc.oneof(
      instant.map((d) => d.toISOString()),
      instant.map((d) => d.toISOString().replace(/\.\d{3}Z$/, "Z")),
      instant.map((d) => d.toISOString().replace("Z", "+02:00")),
      instant.map((d) => d.toISOString().replace(/\.\d{3}Z$/, "")),
      pick(["2024-02-29T12:00:00Z", "2031-12-31T23:59:59.999999Z", "1970-01-01T00:00:00Z"])
    )

const dateArb = instant.map((d) => d.toISOString().slice(0, 10))

const emailArb = (ctx: Context): fc.Arbitrary<string> => {
  const plain = fc.tuple(fc.stringMatching(/^[a-z][a-z0-9]{0,10}$/), fc.nat()).map(([local, n]) => `${local}.${n.toString(36)}@example.com`)
  return ctx.strict ? plain : fc.oneof(plain, plain.map((e) => ` ${e.toUpperCase()} `), pick(["ann@example.com", "a@b.co"]))
}

/** Text fields: short and plain when strict; otherwise also the edges (white space, long, Unicode). */
const textArb = (ctx: Context, schema: JsonSchema, field: string): fc.Arbitrary<string> => {
  const max = typeof schema.maxLength === "number" ? schema.maxLength : undefined
  const min = typeof schema.minLength === "number" ? schema.minLength : field === "password" ? 8 : 1
  const safe = fc.stringMatching(/^[A-Za-z][A-Za-z0-9 ]{0,18}[A-Za-z0-9]$/).map((s) => (s.length < min ? s.padEnd(min, "x") : s))
  if (ctx.strict) return safe
  return fc.oneof(
    { weight: 4, arbitrary: safe },
    { weight: 2, arbitrary: fc.string({ unit: "grapheme", minLength: min, maxLength: Math.min(max ?? 40, 40) }) },
    {
      weight: 2,
      arbitrary: pick([
        "",
        " ",
        "  padded  ",
        "Ünïcödé — “quotes” 🎉👩‍👩‍👧",
        "שלום עולם",
        "tab\there",
        "line\nbreak",
        "<script>alert(1)</script>",
        "'; DROP TABLE meetings; --",
        "%00",
        "\\u0000",
        "x".repeat(Math.min(max ?? 500, 500)),
        "y".repeat(Math.min(max ?? 501, 10_000) + 1)
      ])
    }
  )
}

/**
 * A URL the server is to call (a partner app's or an automation's `webhook_url`): HTTPS to a public address, which the
 * outbound rules allow (this machine need not reach it: nothing waits for the call); otherwise also any text.
 */
const urlArb = (ctx: Context, schema: JsonSchema, field: string): fc.Arbitrary<string> => {
  const https = fc.tuple(pick(["93.184.216.34", "93.184.215.14"]), fc.stringMatching(/^[a-z0-9-]{1,12}$/)).map(([host, path]) => `https://${host}/${path}`)
  return ctx.strict ? https : fc.oneof({ weight: 3, arbitrary: https }, { weight: 1, arbitrary: textArb(ctx, schema, field) })
}

/** The JSON types a schema accepts. */
export const typesOf = (doc: OpenApiDocument, schema: unknown): Set<string> => {
  const s = resolve(doc, schema)
  const members = [...(Array.isArray(s.anyOf) ? s.anyOf : []), ...(Array.isArray(s.oneOf) ? s.oneOf : []), ...(Array.isArray(s.allOf) ? s.allOf : [])]
  const types = new Set<string>(typeof s.type === "string" ? [s.type === "integer" ? "number" : s.type] : [])
  for (const member of members) for (const t of typesOf(doc, member)) types.add(t)
  if (types.size === 0 && Array.isArray(s.enum)) for (const v of s.enum) types.add(v === null ? "null" : typeof v)
  return types
}

/** A value for a schema (the field name steers UUID pools and formats). */
export const valueArb = (ctx: Context, schema: unknown, field: string): fc.Arbitrary<Json> => {
  const s = resolve(ctx.doc, schema)
  const alternatives = Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined
  if (alternatives !== undefined) {
    const nonNull = alternatives.filter((a) => !typesOf(ctx.doc, a).has("null") || typesOf(ctx.doc, a).size > 1)
    const arbs = (ctx.strict ? nonNull : alternatives).map((a) => valueArb(ctx, a, field))
    return fc.oneof(...arbs)
  }
  if (Array.isArray(s.allOf) && s.allOf.length > 0) return valueArb(ctx, s.allOf[0], field)
  if (Array.isArray(s.enum)) return pick(s.enum as ReadonlyArray<Json>)
  switch (s.type) {
    case "string":
      if (s.format === "uuid") return uuidArb(ctx, field)
      if (s.format === "date-time") return timestampArb(ctx)
      if (s.format === "date") return dateArb
      if (s.format === "email") return emailArb(ctx)
      if (typeof s.pattern === "string") {
        // Strict: the decimal strings a `sequence` takes when the pattern takes them, else short matches (a slug).
        const pattern = new RegExp(s.pattern)
        const decimals = ["1", "2.5", "10", "-3.25"].filter((value) => pattern.test(value))
        if (!ctx.strict) return fc.stringMatching(pattern)
        return decimals.length === 4 ? pick(decimals) : fc.stringMatching(pattern).filter((value) => value.length <= 40)
      }
      if (field === "webhook_url") return urlArb(ctx, s, field)
      return textArb(ctx, s, field)
    case "integer":
      return fc.integer({ min: -5, max: 200 })
    case "number":
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: -1000, max: 1000 })
    case "boolean":
      return fc.boolean()
    case "null":
      return fc.constant(null)
    case "array": {
      const minLength = typeof s.minItems === "number" ? s.minItems : 0
      const maxLength = Math.max(minLength, Math.min(typeof s.maxItems === "number" ? s.maxItems : 3, 3))
      return fc.array(valueArb(ctx, s.items ?? {}, field), { minLength: ctx.strict ? Math.max(minLength, Math.min(1, maxLength)) : minLength, maxLength })
    }
    case "object":
      return objectArb(ctx, s)
  }
  return fc.constant(null)
}

const objectArb = (ctx: Context, s: JsonSchema): fc.Arbitrary<Json> => {
  const properties = (typeof s.properties === "object" && s.properties !== null ? s.properties : {}) as Record<string, unknown>
  const required = new Set(Array.isArray(s.required) ? s.required.map(String) : [])
  const names = Object.keys(properties)
  // A participant entry names exactly one of user_id and guest_email (decisions: "Participants").
  const exclusive = names.includes("user_id") && names.includes("guest_email")
  const members = names.map((name) => fc.tuple(fc.constant(name), valueArb(ctx, properties[name], name)))
  const include = names.map((name) => (required.has(name) ? fc.constant(true) : fc.boolean()))
  return fc.tuple(fc.tuple(...members), fc.tuple(...include), fc.boolean(), fc.nat({ max: 4 })).map(([entries, included, userFirst, loose]) => {
    let kept = entries.filter((_, index) => included[index] === true)
    if (exclusive && (ctx.strict || loose > 0)) {
      const drop = userFirst ? "guest_email" : "user_id"
      kept = kept.filter(([name]) => name !== drop)
      if (!kept.some(([name]) => name === "user_id" || name === "guest_email")) {
        const wanted = entries.find(([name]) => name === (userFirst ? "user_id" : "guest_email"))
        if (wanted !== undefined) kept.push(wanted)
      }
    }
    return Object.fromEntries(kept) as Json
  })
}

// ---------------------------------------------------------------------------------------------------------
// Requests

interface Base {
  readonly params: Readonly<Record<string, string>>
  readonly query: ReadonlyArray<readonly [string, string]>
  readonly body: Json | undefined
}

/** The segment a `{param}` follows names what it is. */
const segmentBefore = (template: string, param: string) => {
  const segments = template.split("/")
  const index = segments.indexOf(`{${param}}`)
  return segments[index - 1] ?? ""
}

const paramPool = (world: World, op: Operation, param: string, params: Readonly<Record<string, string>>): ReadonlyArray<string> => {
  const template = op.template
  // An agenda item under its meeting's path (the partner user context's): the meetings that have some, then theirs.
  if (template.includes("/meetings/{id}/agenda-items/{item_id}")) {
    if (param === "id") return Object.keys(world.ids.agendaItemsByMeeting)
    if (param === "item_id") return world.ids.agendaItemsByMeeting[params.id ?? ""] ?? []
  }
  // The operator's deletes take a world of their own (World.ids.disposable).
  if (op.method === "DELETE" && template.startsWith("/operator/")) {
    switch (segmentBefore(template, param)) {
      case "workspaces":
        return world.ids.disposable.workspaces
      case "users":
        return world.ids.disposable.users
      case "tokens":
        return world.ids.disposable.tokens
    }
  }
  switch (segmentBefore(template, param)) {
    case "meetings":
      return world.ids.meetings
    case "agenda-items":
      return world.ids.agendaItems
    case "action-items":
      return world.ids.actionItems
    case "backlog-items":
      return world.ids.backlogItems
    case "events":
      return world.ids.calendarEvents
    case "tokens":
      return world.ids.tokens
    case "workspaces":
      return world.ids.workspaces
    case "users":
      return world.ids.users
    case "participants":
      return world.ids.participants[params.id ?? ""] ?? world.ids.users
    case "attachments":
      return world.ids.attachments[params.id ?? ""] ?? []
    case "context":
      return world.ids.contextItems[params.id ?? ""] ?? []
    case "webhooks":
      return world.ids.webhooks
    case "partner-apps":
      return world.ids.partnerApps
    case "domains":
      return world.ids.domains
    case "members":
      return world.ids.users
    case "api-keys":
      return world.ids.apiKeys
    default:
      return []
  }
}

const pathParamNames = (op: Operation) => [...op.template.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? "")

/** Path parameters from the pools, in order (a participant's id follows its meeting). */
const paramsArb = (op: Operation, world: World, upper: boolean): fc.Arbitrary<Record<string, string>> =>
  pathParamNames(op).reduce<fc.Arbitrary<Record<string, string>>>(
    (acc, name) =>
      acc.chain((params) => {
        const pool = paramPool(world, op, name, params)
        const value = pool.length > 0 ? pick(pool) : fc.uuid({ version: 4 })
        const cased = upper ? fc.tuple(value, fc.boolean()).map(([v, up]) => (up ? v.toUpperCase() : v)) : value
        return cased.map((v) => ({ ...params, [name]: v }))
      }),
    fc.constant({})
  )

const queryValueArb = (ctx: Context, op: Operation, name: string, schema: JsonSchema): fc.Arbitrary<string> => {
  const s = resolve(ctx.doc, schema)
  if (s.type === "integer" || name === "limit" || name === "offset") {
    return ctx.strict
      ? fc.integer({ min: 1, max: 50 }).map(String)
      : fc.oneof(fc.integer({ min: -5, max: 150 }).map(String), pick(["", "0", "100", "101", "1000", "-1", " 3", "+2"])).map(encodeURIComponent)
  }
  if (s.format === "uuid") return uuidArb(ctx, name === "meeting_id" ? "meeting_id" : name)
  const value = valueArb(ctx, s, op.key.includes("search") && name === "q" ? "q" : name)
  return value.map((v) => encodeURIComponent(typeof v === "string" ? v : JSON.stringify(v)))
}

/**
 * Strict bases keep the rules between fields that decisions.md states (so a hostile change is the only thing
 * wrong): a personal access token has expiry_days, a short-lived one expiry_hours and no workspace scope; an
 * instant meeting has no times; an end is not before its start.
 */
const fixup = (body: Json | undefined): Json | undefined => {
  if (!isJsonObject(body ?? null)) return body
  const entries = new Map(Object.entries(body as Record<string, Json>))
  if (entries.has("kind")) {
    if (entries.get("kind") === "short_lived") {
      entries.delete("expiry_days")
      entries.set("expiry_hours", 1)
      const scopes = entries.get("scopes")
      const kept = Array.isArray(scopes) ? (scopes as ReadonlyArray<Json>).filter((scope) => !String(scope).startsWith("workspace:")) : []
      entries.set("scopes", kept.length > 0 ? kept : ["meetings:read"])
    } else {
      entries.delete("expiry_hours")
      entries.set("expiry_days", 30)
    }
  }
  if (entries.get("is_instant") === true) {
    entries.delete("start_time")
    entries.delete("end_time")
  }
  const start = entries.get("start_time")
  const end = entries.get("end_time")
  if (typeof start === "string" && typeof end === "string" && Date.parse(end) < Date.parse(start)) {
    entries.set("start_time", end)
    entries.set("end_time", start)
  }
  return Object.fromEntries(entries)
}

/**
 * Strict queries keep the rule between parameters that the calendar states: a window's end is after its start
 * (an end at or before the start is moved an hour past it).
 */
const fixupQuery = (query: ReadonlyArray<readonly [string, string]>): ReadonlyArray<readonly [string, string]> => {
  const instant = (name: string) => {
    const value = query.find(([n]) => n === name)?.[1]
    return value === undefined ? undefined : Date.parse(decodeURIComponent(value))
  }
  const start = instant("start_date")
  const end = instant("end_date")
  if (start === undefined || end === undefined || Number.isNaN(start) || Number.isNaN(end) || end > start) return query
  const later = encodeURIComponent(new Date(start + 3_600_000).toISOString().replace(/\.\d{3}Z$/, "Z"))
  return query.map(([name, value]) => (name === "end_date" ? [name, later] as const : [name, value] as const))
}

/** GET /v1/partner/files/{workspace_id}/{meeting_id}/{attachment_id}: a pre-signed download URL, no token. */
const isFileLink = (op: Operation) => op.template.startsWith("/v1/partner/files/")

/** Whether the operation is the partner API's (/v1/partner): the partner envelope and codes. */
const isPartnerOp = (op: Operation) => op.template === "/v1/partner" || op.template.startsWith("/v1/partner/")

/** The IdP configuration's routes, which answer `invalid_request_body` where the partner API says `invalid_request`. */
const isIdpConfigOp = (op: Operation) => op.template === "/v1/partner/admin/idp"

/** The toolkit routes, which answer `invalid_request_body` too (a manifest's problems as every other field's). */
const isToolkitOp = (op: Operation) => op.template.startsWith("/v1/partner/admin/toolkits")

/** The workflow routes: the world has no toolkit, so no workflow template or run either (an id is the id of nothing). */
const isWorkflowOp = (op: Operation) =>
  op.template.startsWith("/v1/partner/admin/workflow-templates") || op.template.startsWith("/v1/partner/user/workflow-runs")

/**
 * A pre-signed URL's parts: one the server minted (strict), or, in a valid-ish request, now and then one with a part
 * changed (404).
 */
const fileLinkArb = (ctx: Context): fc.Arbitrary<Base> => {
  const links = ctx.world.ids.fileLinks
  const minted = pick(links).map((link): Base => ({ params: link.params, query: link.query, body: undefined }))
  if (ctx.strict) return minted
  return fc.oneof(
    { weight: 3, arbitrary: minted },
    { weight: 1, arbitrary: fc.tuple(pick(links), tamperArb(links)).map(([link, tamper]): Base => ({ ...tamper.apply(link), body: undefined })) }
  )
}

/** Changes to a pre-signed URL that make it another, unsigned one (404 not_found, the same answer for each). */
const tamperArb = (links: ReadonlyArray<FileLink>): fc.Arbitrary<{ label: string; apply: (link: FileLink) => Omit<Base, "body"> }> => {
  const changeQuery = (name: string, f: (value: string) => string) => (link: FileLink) => ({
    params: link.params,
    query: link.query.map(([n, v]) => (n === name ? [n, f(v)] as const : [n, v] as const))
  })
  const flip = (value: string) => (value.length === 0 ? "0" : `${value.slice(0, -1)}${value.endsWith("0") ? "1" : "0"}`)
  const other = (link: FileLink, key: keyof FileLink["params"]) =>
    links.map((l) => l.params[key]).find((id) => id !== link.params[key]) ?? "00000000-0000-4000-8000-000000000000"
  return fc.constantFrom(
    { label: "its signature changed", apply: changeQuery("signature", flip) },
    { label: "its expiry a second later", apply: changeQuery("expires", (v) => String(Number(v) + 1)) },
    { label: "its expiry passed", apply: changeQuery("expires", () => "1000000000") },
    { label: "another kid", apply: changeQuery("kid", (v) => `${v}x`) },
    { label: "another attachment", apply: (link: FileLink) => ({ params: { ...link.params, attachment_id: other(link, "attachment_id") }, query: link.query }) },
    { label: "another meeting", apply: (link: FileLink) => ({ params: { ...link.params, meeting_id: other(link, "meeting_id") }, query: link.query }) },
    { label: "another workspace", apply: (link: FileLink) => ({ params: { ...link.params, workspace_id: "00000000-0000-4000-8000-000000000000" }, query: link.query }) }
  )
}

const baseArb = (ctx: Context, op: Operation): fc.Arbitrary<Base> => {
  if (isFileLink(op)) return fileLinkArb(ctx)
  const queryParams = op.parameters.filter((p) => p.in === "query")
  // A strict base always carries the required parameters (the calendar's window), so that it decodes; a valid-ish
  // one mostly does (four times in five), so that a request with several of them is often answered 2xx.
  const presence = (p: Operation["parameters"][number]) =>
    !p.required ? fc.boolean() : ctx.strict ? fc.constant(true) : fc.nat({ max: 4 }).map((n) => n > 0)
  const query = fc.tuple(
    ...queryParams.map((p) =>
      fc.tuple(fc.constant(p.name), presence(p), queryValueArb(ctx, op, p.name, p.schema))
        .map(([name, present, value]) => present ? [[name, value] as const] : [])
    )
  ).map((parts) => (ctx.strict ? fixupQuery(parts.flat()) : parts.flat()))
  const body = op.body === undefined ? fc.constant(undefined) : valueArb(ctx, op.body, "body").map((b) => (ctx.strict ? fixup(b) : b))
  return fc.record({ params: paramsArb(op, ctx.world, !ctx.strict), query, body })
}

const pathOf = (op: Operation, params: Readonly<Record<string, string>>) =>
  op.template.replace(/\{(\w+)\}/g, (_, name: string) => params[name] ?? "")

const queryText = (query: ReadonlyArray<readonly [string, string]>) =>
  query.length === 0 ? "" : `?${query.map(([name, value]) => `${name}=${value}`).join("&")}`

const authorization = (world: World, credential: Credential): Record<string, string> => {
  switch (credential) {
    case "none":
      return {}
    case "garbage":
      return { authorization: "Bearer svc_pat_v1_not-a-real-token" }
    case "revoked":
      return { authorization: `Bearer ${world.revoked}` }
    case "partner":
      return { "x-api-key": world.credentials.partner, "x-client-id": world.partnerClientId }
    default:
      return { authorization: `Bearer ${world.credentials[credential]}` }
  }
}

/** The credential that may call the operation. */
const rightful = (op: Operation): Credential => {
  switch (op.security) {
    case "operator":
      return "operator"
    case "bearer":
      return "owner"
    case "partner":
      return "partner"
    case "partnerUser":
      return "partnerUser"
    case "none":
      return "none"
  }
}

/**
 * The code of a refusal for `op`: the partner API (/v1/partner) answers a field that does not decode, and a body it
 * cannot read, with its own `invalid_request` where the first-party API says `validation_error` and `bad_request`.
 */
const codeOf = (op: Operation, code: string) =>
  isPartnerOp(op) && (code === "validation_error" || code === "bad_request")
    ? isIdpConfigOp(op) || isToolkitOp(op) ? "invalid_request_body" : "invalid_request"
    : code

/**
 * The codes of a body that does not decode, for `op`: the partner's, and on the partner API `invalid_item_type` for
 * an `item_type` outside the four (exactly when the refusal names it; one of both when it may or may not).
 */
const decodeCodesOf = (op: Operation, codes: ReadonlyArray<string>, field: string | undefined, touchesItemType: boolean): ReadonlyArray<string> => {
  if (!isPartnerOp(op)) return codes
  if (field === "item_type") return ["invalid_item_type"]
  const mapped = [...new Set(codes.map((code) => codeOf(op, code)))]
  return touchesItemType ? [...mapped, "invalid_item_type"] : mapped
}

const jsonBody = (body: Json | undefined, contentType = "application/json"): { headers: Record<string, string>; body?: WireBody } =>
  body === undefined ? { headers: {} } : { headers: { "content-type": contentType }, body: { kind: "bytes", bytes: Buffer.from(toJsonText(body), "utf8") } }

const routed = (_op: Operation, expect: Omit<Expectation, "routed">): Expectation => ({ ...expect, routed: true })

// ---------------------------------------------------------------------------------------------------------
// Uploads (multipart/form-data, decisions.md "Uploads")

/** One part of a multipart body: a text field (no filename) or a file. */
interface Part {
  readonly name: string
  readonly filename?: string
  readonly contentType?: string
  readonly data: Buffer
}

const BOUNDARY = "----ConveneFuzzBoundary7MA4YWxk"

/** The bytes of a multipart body; `close: false` leaves the closing boundary out. */
const multipartBytes = (parts: ReadonlyArray<Part>, options: { readonly boundary?: string; readonly close?: boolean } = {}) => {
  const boundary = options.boundary ?? BOUNDARY
  const chunks: Array<Buffer> = []
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename === undefined ? "" : `; filename="${part.filename}"`}`
    const type = part.contentType === undefined ? "" : `content-type: ${part.contentType}\r\n`
    chunks.push(Buffer.from(`--${boundary}\r\ncontent-disposition: ${disposition}\r\n${type}\r\n`, "utf8"), part.data, Buffer.from("\r\n"))
  }
  if (options.close !== false) chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return Buffer.concat(chunks)
}

const uploadBody = (parts: ReadonlyArray<Part>, options: { readonly boundary?: string; readonly close?: boolean } = {}) => ({
  contentType: `multipart/form-data; boundary=${BOUNDARY}`,
  body: { kind: "bytes", bytes: multipartBytes(parts, options) } as WireBody
})

/** Files worth uploading: text with personal data, Markdown, WebVTT, SRT, binary bytes, an image, an empty file. */
const sampleFiles: ReadonlyArray<Part> = [
  { name: "file", filename: "notes.txt", contentType: "text/plain", data: Buffer.from("Call Ann on +44 20 7946 0958 or ann@example.com\r\n", "utf8") },
  { name: "file", filename: "plan.md", contentType: "text/markdown; charset=utf-8", data: Buffer.from("# Plan\n\n- ship 1.3\n- card 4111 1111 1111 1111\n", "utf8") },
  { name: "file", filename: "call.vtt", contentType: "text/vtt", data: Buffer.from("WEBVTT\n\n00:00:01.000 --> 00:00:02.500\n<v Bo>Morning\n", "utf8") },
  { name: "file", filename: "call.srt", contentType: "application/x-subrip", data: Buffer.from("1\n00:00:01,000 --> 00:00:02,000\nAnn: Hi\n", "utf8") },
  { name: "file", filename: "bytes.bin", contentType: "application/octet-stream", data: Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256)) },
  { name: "file", filename: "pixel.png", contentType: "image/png", data: Buffer.from("89504e470d0a1a0a0000000d49484452", "hex") },
  { name: "file", filename: "empty.txt", contentType: "text/plain", data: Buffer.alloc(0) },
  { name: "file", filename: "../../etc/pass\"wd;.txt", contentType: "text/plain", data: Buffer.from("path", "utf8") },
  { name: "file", filename: "Résumé 履歴.txt", contentType: "text/plain; charset=utf-8", data: Buffer.from("héllo", "utf8") },
  { name: "file", filename: "no-type", data: Buffer.from("plain bytes", "utf8") }
]

/** The text fields of an upload with values its schema takes (an enum's members), each present or not. */
const uploadFieldsArb = (op: Operation): fc.Arbitrary<ReadonlyArray<Part>> =>
  fc.tuple(...(op.upload?.fields ?? []).map((field) => {
    const values = Array.isArray(field.schema.enum) ? field.schema.enum.map(String) : ["text"]
    return fc.option(pick(values).map((value): Part => ({ name: field.name, data: Buffer.from(value, "utf8") })), { nil: undefined })
  })).map((parts) => parts.filter((part): part is Part => part !== undefined))

/** A sound upload: one of the sample files, the text fields before or after it. */
const soundUploadArb = (op: Operation): fc.Arbitrary<{ label: string; parts: ReadonlyArray<Part> }> =>
  fc.tuple(pick(sampleFiles), uploadFieldsArb(op), fc.boolean()).map(([file, fields, fieldsFirst]) => ({
    label: `${file.filename ?? "file"}${fields.length === 0 ? "" : ` with ${fields.map((f) => `${f.name}=${f.data.toString()}`).join(", ")}`}`,
    parts: fieldsFirst ? [...fields, file] : [file, ...fields]
  }))

/** The upload a request carries when its case changes something else: a small text file. */
const defaultUpload = (): ReadonlyArray<Part> => [sampleFiles[0]!]

/** Uploads the rules refuse, with the answer: the part structure, the text fields, the multipart syntax, the media type. */
const hostileUploadArb = (op: Operation) => {
  const file = sampleFiles[0]!
  const sound = multipartBytes([file])
  type Refused = { label: string; contentType: string | null; body: WireBody; statuses: ReadonlyArray<number>; codes: ReadonlyArray<string>; names?: string }
  const firstOf = (schema: JsonSchema) => String(Array.isArray(schema.enum) ? schema.enum[0] : "x")
  const invalid = (label: string, parts: ReadonlyArray<Part>, names?: string): Refused => ({
    label,
    ...uploadBody(parts),
    statuses: [400],
    codes: ["validation_error"],
    ...(names === undefined ? {} : { names })
  })
  const broken = (label: string, contentType: string, bytes: Buffer): Refused => ({ label, contentType, body: { kind: "bytes", bytes } as WireBody, statuses: [400], codes: ["bad_request"] })
  const unsupported = (label: string, contentType: string | null, bytes: Buffer): Refused => ({ label, contentType, body: { kind: "bytes", bytes } as WireBody, statuses: [415], codes: ["unsupported_media_type"] })
  const enumFields = (op.upload?.fields ?? []).filter((field) => Array.isArray(field.schema.enum))
  const choices: Array<fc.Arbitrary<Refused>> = [
    fc.constant(invalid("no file part", enumFields.map((f) => ({ name: f.name, data: Buffer.from(firstOf(f.schema)) })), "file")),
    fc.constant(invalid("two files in `file`", [file, { ...file, filename: "second.txt" }], "file")),
    fc.constant(invalid("the file sent as a text field", [{ name: "file", data: file.data }], "file")),
    fc.constant(invalid("the file in another field", [{ ...file, name: "upload" }])),
    fc.constant(invalid("a second file in another field", [file, { ...file, name: "attachment" }])),
    fc.constant(broken("no closing boundary", `multipart/form-data; boundary=${BOUNDARY}`, multipartBytes([file], { close: false }))),
    fc.constant(broken("another boundary than declared", "multipart/form-data; boundary=something-else", sound)),
    fc.constant(broken("no boundary parameter", "multipart/form-data", sound)),
    fc.constant(broken("a part without headers", `multipart/form-data; boundary=${BOUNDARY}`, Buffer.from(`--${BOUNDARY}\r\n\r\nbare\r\n--${BOUNDARY}--\r\n`))),
    fc.constant(broken("an empty body", `multipart/form-data; boundary=${BOUNDARY}`, Buffer.alloc(0))),
    pick(["application/json", "text/plain", "application/octet-stream", "application/x-www-form-urlencoded", "multipart/mixed; boundary=" + BOUNDARY])
      .map((type) => unsupported(`Content-Type ${type}`, type, type.startsWith("multipart") ? sound : Buffer.from("{\"file\":\"x\"}"))),
    fc.constant(unsupported("no Content-Type", null, sound))
  ]
  for (const field of enumFields) {
    choices.push(pick(["", "DOCUMENT", "unknown", "x".repeat(300)]).map((value) =>
      invalid(`${field.name}=${value.length > 20 ? `${value.length} × x` : JSON.stringify(value)}`, [{ name: field.name, data: Buffer.from(value) }, file], field.name)))
    choices.push(fc.constant(invalid(`${field.name} given twice`, [{ name: field.name, data: Buffer.from(firstOf(field.schema)) }, { name: field.name, data: Buffer.from(firstOf(field.schema)) }, file], field.name)))
  }
  return fc.oneof(...choices)
}


// ---------------------------------------------------------------------------------------------------------
// Valid-ish requests

const mediaTypes = ["application/json", "application/json; charset=utf-8", "application/json;charset=UTF-8", "Application/JSON", "application/json; charset=\"utf-8\""]

export const validCase = (doc: OpenApiDocument, world: World, op: Operation): fc.Arbitrary<FuzzCase> => {
  const ctx: Context = { doc, world, strict: false }
  const credentials: ReadonlyArray<Credential> = op.security === "bearer"
    ? ["owner", "owner", "apiKey", "reader"]
    : op.security === "partnerUser"
    ? ["partnerUser", "partnerUser", "partnerUser", "partnerReader", "partnerViewer"]
    : [rightful(op)]
  return fc
    .tuple(
      baseArb(ctx, op),
      pick(credentials),
      pick(mediaTypes),
      op.idempotent ? fc.option(pick(["key-1", "key-2", `key-${"z".repeat(200)}`]), { nil: undefined }) : fc.constant(undefined),
      fc.option(pick(["utm_source=x", "unknown=1"]), { nil: undefined }),
      op.upload === undefined ? fc.constant(undefined) : soundUploadArb(op)
    )
    .map(([base, credential, jsonMediaType, key, extraQuery, upload]) => {
      const mediaType = upload === undefined ? jsonMediaType : `upload of ${upload.label}`
      const sent = upload === undefined
        ? jsonBody(base.body, mediaType)
        : (({ body, contentType }) => ({ headers: { "content-type": contentType } as Record<string, string>, body }))(uploadBody(upload.parts))
      const query = queryText(base.query)
      const extra = extraQuery === undefined ? "" : `${query === "" ? "?" : "&"}${extraQuery}`
      return makeCase({
        op,
        kind: "valid",
        mutation: `valid-ish${key === undefined ? "" : `, Idempotency-Key ${key.slice(0, 12)}`}${mediaType === "application/json" ? "" : `, ${mediaType}`}`,
        credential,
        request: {
          method: op.method,
          path: pathOf(op, base.params) + query + extra,
          headers: { ...authorization(world, credential), ...sent.headers, ...(key === undefined ? {} : { "idempotency-key": key }) },
          ...(sent.body === undefined ? {} : { body: sent.body })
        },
        expect: { routed: true },
        echoes: []
      })
    })
}

// ---------------------------------------------------------------------------------------------------------
// Hostile requests

interface Hostile {
  readonly mutation: string
  readonly credential: Credential
  readonly request: WireRequest
  readonly expect: Expectation
  readonly echoes?: ReadonlyArray<string>
}

/** A request of `op` from `base`, with the rightful credential unless told otherwise. */
const assemble = (
  world: World,
  op: Operation,
  base: Base,
  change: {
    readonly credential?: Credential
    readonly path?: string
    readonly method?: string
    readonly query?: string
    readonly headers?: Record<string, string>
    readonly body?: WireBody | null
    readonly contentType?: string | null
  }
): { credential: Credential; request: WireRequest } => {
  const credential = change.credential ?? rightful(op)
  const sent = op.upload !== undefined && base.body === undefined
    ? (({ body, contentType }) => ({ headers: { "content-type": contentType }, body }))(uploadBody(defaultUpload()))
    : jsonBody(base.body)
  const body = change.body === null ? undefined : change.body ?? sent.body
  const contentType = change.contentType === null ? undefined : change.contentType ?? sent.headers["content-type"]
  return {
    credential,
    request: {
      method: change.method ?? op.method,
      path: (change.path ?? pathOf(op, base.params)) + (change.query ?? queryText(base.query)),
      headers: {
        ...authorization(world, credential),
        ...(contentType === undefined ? {} : { "content-type": contentType }),
        ...change.headers
      },
      ...(body === undefined ? {} : { body })
    }
  }
}

const literalSegments = (template: string) =>
  template.split("/").map((segment, index) => ({ segment, index })).filter(({ segment, index }) => index > 0 && !segment.startsWith("{"))

/** Paths the host must answer 404: not in their one exact form, or not a route at all. */
interface PathMutation {
  readonly label: string
  readonly apply: (path: string) => string
  /** The changed path is still in its exact form (it may then be another route, or none). */
  readonly canonical?: boolean
}

const pathMutationArb = (op: Operation): fc.Arbitrary<PathMutation> => {
  const literals = literalSegments(op.template)
  const withSegment = (f: (segment: string) => string) => (path: string, index: number) =>
    path.split("/").map((segment, i) => (i === index ? f(segment) : segment)).join("/")
  return fc.oneof(
    pick(literals).map(({ segment, index }) => ({
      label: `upper-case segment ${segment}`,
      apply: (path: string) => withSegment((s) => s.toUpperCase())(path, index),
      // /v1/meetings/SEARCH is in its exact form, and fits /v1/meetings/{id}.
      canonical: true
    })),
    fc.nat({ max: 20 }).map((n) => ({
      label: "doubled slash",
      apply: (path: string) => {
        const slashes = [...path.matchAll(/\//g)].map((m) => m.index ?? 0)
        const at = slashes[n % slashes.length] ?? 0
        return `${path.slice(0, at)}/${path.slice(at)}`
      }
    })),
    fc.constant({ label: "trailing slash", apply: (path: string) => `${path}/` }),
    fc.tuple(fc.nat({ max: 20 }), pick([";x", ";jsessionid=1", ";"])).map(([n, suffix]) => ({
      label: `${suffix} parameter`,
      apply: (path: string) => {
        const parts = path.split("/")
        const index = 1 + (n % (parts.length - 1))
        return parts.map((s, i) => (i === index ? s + suffix : s)).join("/")
      }
    })),
    fc.tuple(pick(literals), fc.nat({ max: 30 }), fc.boolean()).map(([{ segment, index }, n, lower]) => {
      const at = n % segment.length
      const char = segment[at] ?? "v"
      const hex = char.charCodeAt(0).toString(16).padStart(2, "0")
      const encoded = `%${lower ? hex.toLowerCase() : hex.toUpperCase()}`
      return {
        label: `percent-encoded ${JSON.stringify(char)} (${encoded})`,
        apply: (path: string) => withSegment((s) => s.slice(0, at) + encoded + s.slice(at + 1))(path, index)
      }
    }),
    pick(["/.", "/x/..", "/%2e", "/%2E%2E"]).map((dots) => ({
      label: `dot segment ${dots}`,
      apply: (path: string) => {
        const parts = path.split("/")
        return [parts.slice(0, 2).join("/"), dots, ...parts.slice(2).map((p) => `/${p}`)].join("")
      }
    })),
    fc.tuple(fc.nat({ max: 20 }), pick(["%2F", "%2f"])).map(([n, encoded]) => ({
      label: `slash sent as ${encoded}`,
      apply: (path: string) => {
        const slashes = [...path.matchAll(/\//g)].map((m) => m.index ?? 0).slice(1)
        if (slashes.length === 0) return `${path}${encoded}`
        const at = slashes[n % slashes.length] ?? 1
        return `${path.slice(0, at)}${encoded}${path.slice(at + 1)}`
      }
    })),
    fc.tuple(pick(literals), pick(["nope", "a".repeat(200), "b".repeat(8000), "%00", "%ff"])).map(([{ segment, index }, other]) => ({
      label: `segment ${segment} replaced by ${other.length > 12 ? `${other.length} × ${other[0]}` : other}`,
      apply: (path: string) => withSegment(() => other)(path, index),
      canonical: true
    })),
    pick(["/extra", "/%00", `/${"c".repeat(5000)}`]).map((extra) => ({ label: `extra segment (${extra.length} chars)`, apply: (path: string) => path + extra, canonical: true }))
  )
}

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "PROPFIND"]

/** JSON body corruptions at the level of media type and bytes: the expected status and code. */
const transportArb = (base: Base): fc.Arbitrary<{ label: string; contentType: string | null; body: WireBody; status: number; code: string }> => {
  const text = toJsonText(base.body ?? {})
  const bytes = (s: string | Buffer): WireBody => ({ kind: "bytes", bytes: typeof s === "string" ? Buffer.from(s, "utf8") : s })
  const unsupported = (label: string, contentType: string | null, body: string) => ({ label, contentType, body: bytes(body), status: 415, code: "unsupported_media_type" })
  const boundary = "----fuzz7MA4YWxkTrZu0gW"
  const multipart = `--${boundary}\r\ncontent-disposition: form-data; name="body"\r\ncontent-type: application/json\r\n\r\n${text}\r\n--${boundary}--\r\n`
  const form = isJsonObject(base.body ?? null)
    ? new URLSearchParams(Object.entries(base.body as Record<string, Json>).map(([k, v]): [string, string] => [k, typeof v === "string" ? v : toJsonText(v)])).toString()
    : "a=1"
  const cut = (n: number) => {
    const at = 1 + (n % Math.max(1, text.length - 1))
    return text.slice(0, at)
  }
  const invalid = (n: number, sequence: ReadonlyArray<number>) => {
    const raw = Buffer.from(text, "utf8")
    const quote = raw.indexOf(0x22, Math.min(n % Math.max(1, raw.length), raw.length - 1))
    const at = quote === -1 ? 1 : quote + 1
    return Buffer.concat([raw.subarray(0, at), Buffer.from(sequence), raw.subarray(at)])
  }
  return fc.oneof(
    { weight: 1, arbitrary: pick(["text/plain", "text/plain; charset=utf-8", "application/json;charset=latin1", "application/json; charset=utf-16", "application/json; charset=iso-8859-1", "application/jsonx", "application/problem+json", "application/ld+json", "text/json", "*/*", "application", "json", "application/json, text/plain"]).map((ct) => unsupported(`Content-Type ${ct}`, ct, text)) },
    { weight: 1, arbitrary: fc.constant(unsupported("Content-Type application/x-www-form-urlencoded with a form body", "application/x-www-form-urlencoded", form)) },
    { weight: 1, arbitrary: fc.constant(unsupported("Content-Type application/x-www-form-urlencoded with a JSON body", "application/x-www-form-urlencoded", text)) },
    { weight: 1, arbitrary: fc.constant(unsupported("multipart/form-data with the JSON as a part", `multipart/form-data; boundary=${boundary}`, multipart)) },
    { weight: 1, arbitrary: fc.constant(unsupported("multipart/form-data (with boundary) and a JSON body", `multipart/form-data; boundary=${boundary}`, text)) },
    { weight: 1, arbitrary: fc.constant(unsupported("multipart/form-data without boundary and a JSON body", "multipart/form-data", text)) },
    { weight: 1, arbitrary: fc.constant(unsupported("no Content-Type with a JSON body", null, text)) },
    {
      weight: 1,
      arbitrary: fc.constant({
        label: "UTF-16 body declared as utf-16",
        contentType: "application/json; charset=utf-16",
        body: bytes(Buffer.from(`\ufeff${text}`, "utf16le")),
        status: 415,
        code: "unsupported_media_type"
      })
    },
    {
      weight: 3,
      arbitrary: fc
        .oneof(
          fc.nat().map((n) => ({ label: "truncated JSON", text: cut(n) })),
          pick([
            `${text}x`,
            `${text}${text}`,
            text.replace(/"/g, "'"),
            text.replace(/"([a-z_]+)":/g, "$1:"),
            "{\"title\": NaN}",
            "[1,]",
            "{\"a\":1,}",
            "/* c */ {}",
            "{\"title\":\"a\u0001b\"}",
            "{\"title\":\"\\x41\"}",
            "{\"title\":\"\\ud800\\\"}",
            "undefined",
            "{{}}",
            "\"unterminated",
            "\u0000"
          ]).map((t) => ({ label: "malformed JSON", text: t }))
        )
        .filter(({ text: t }) => {
          if (t.trim() === "") return false
          try {
            JSON.parse(t)
            return false
          } catch {
            return true
          }
        })
        .map(({ label, text: t }) => ({ label, contentType: "application/json", body: bytes(t), status: 400, code: "bad_request" }))
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.nat(), pick([[0xff], [0xfe, 0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xf4, 0x90, 0x80, 0x80]]))
        .map(([n, sequence]) => ({
          label: `bytes ${sequence.map((b) => b.toString(16)).join(" ")} (not UTF-8)`,
          contentType: "application/json",
          body: bytes(invalid(n, sequence)),
          status: 400,
          code: "bad_request"
        }))
    }
  )
}

const ONE_MIB = 1024 * 1024

/** Bodies over 1 MiB, with Content-Length or chunked, JSON or not. */
const tooLargeArb = (base: Base): fc.Arbitrary<{ label: string; body: WireBody }> => {
  const field = isJsonObject(base.body ?? null) ? Object.keys(base.body as object)[0] ?? "title" : "title"
  return fc.tuple(pick([ONE_MIB + 1, ONE_MIB + 4096, 2 * ONE_MIB]), fc.boolean(), fc.boolean()).map(([size, chunked, json]) => {
    const prefix = json ? `{"${field}":"` : ""
    const suffix = json ? "\"}" : ""
    const fill = json ? "x" : "\u00e9"
    const length = size - prefix.length - suffix.length
    const body: WireBody = chunked
      ? { kind: "stream", prefix, size: length, fill, suffix }
      : { kind: "bytes", bytes: Buffer.from(prefix + fill.repeat(json ? length : Math.ceil(length / 2)) + suffix, "utf8") }
    return { label: `${size} bytes, ${chunked ? "chunked" : "with Content-Length"}, ${json ? "JSON" : "not JSON"}`, body }
  })
}

/** A value of another JSON type than the schema takes. */
const wrongTypeArb = (doc: OpenApiDocument, schema: unknown): fc.Arbitrary<Json> => {
  const accepted = typesOf(doc, schema)
  const candidates: ReadonlyArray<Json> = [0, -1, 1.5, true, false, null, [], [1, "a"], {}, { a: 1 }, "text", ""]
  const wrong = candidates.filter((c) => !accepted.has(c === null ? "null" : Array.isArray(c) ? "array" : typeof c))
  return pick(wrong.length > 0 ? wrong : [new Raw("[[[]]]", "nested arrays")])
}

const longNumbers = [
  new Raw(`1${"0".repeat(400)}`, "401-digit integer"),
  new Raw("1e99999", "1e99999"),
  new Raw(`-${"9".repeat(5000)}.5`, "5000-digit negative decimal"),
  new Raw(`0.${"0".repeat(1000)}1`, "1000-digit fraction"),
  new Raw("123456789012345678901234567890", "30-digit integer")
]

const deep = (depth: number, object: boolean) =>
  new Raw(object ? `${"{\"a\":".repeat(depth)}1${"}".repeat(depth)}` : `${"[".repeat(depth)}${"]".repeat(depth)}`, `${object ? "objects" : "arrays"} nested ${depth} deep`)

/** Where the property schema of a body position is (to know which types it accepts). */
const schemaAt = (doc: OpenApiDocument, root: unknown, path: JsonPath): unknown => {
  let schema: unknown = root
  for (const key of path) {
    let s = resolve(doc, schema)
    const alternatives = Array.isArray(s.anyOf) ? s.anyOf : []
    const structured = alternatives.find((a) => {
      const t = typesOf(doc, a)
      return typeof key === "number" ? t.has("array") : t.has("object")
    })
    if (structured !== undefined) s = resolve(doc, structured)
    if (typeof key === "number") schema = s.items ?? {}
    else schema = (s.properties as Record<string, unknown> | undefined)?.[key] ?? {}
  }
  return schema
}

/** Changes to a decodable JSON body that make it fail decoding, naming the field (400 validation_error). */
const decodeArb = (doc: OpenApiDocument, op: Operation, base: Base): fc.Arbitrary<{ label: string; body: Json | Raw; names?: string; codes?: ReadonlyArray<string>; echo?: string }> => {
  const body = base.body ?? {}
  const all = positions(body)
  const strings = all.filter((p) => typeof p.value === "string" && p.path.length > 0)
  const leaves = all.filter((p) => p.path.length > 0)
  const objects = all.filter((p) => isJsonObject(p.value))
  const properties = (resolve(doc, op.body ?? {}).properties ?? {}) as Record<string, unknown>
  const required = (resolve(doc, op.body ?? {}).required ?? []) as ReadonlyArray<string>
  const choices: Array<fc.Arbitrary<{ label: string; body: Json | Raw; names?: string; codes?: ReadonlyArray<string>; echo?: string }>> = []
  if (strings.length > 0) {
    choices.push(
      fc.tuple(pick(strings), pick([
        ["U+0000", (s: string) => `${s.slice(0, 1)}\u0000${s.slice(1)}`],
        ["only U+0000", () => "\u0000"],
        ["lone high surrogate \\ud800", (s: string) => `${s}\ud800`],
        ["lone low surrogate \\udc00", (s: string) => `\udc00${s}`],
        ["reversed surrogate pair", (s: string) => `${s}\udc00\ud800`]
      ] as const)).map(([{ path, value }, [label, f]]) => ({
        label: `${label} in ${fieldOf(path)}`,
        body: replaceAt(body, path, f(String(value))),
        names: fieldOf(path)
      })),
      fc.tuple(pick(strings), pick([10_001, 200_000, 1_000_000])).map(([{ path }, size]) => {
        const big = "x".repeat(size)
        return { label: `${size}-character string in ${fieldOf(path)}`, body: replaceAt(body, path, big), names: fieldOf(path), echo: big }
      })
    )
    const enums = strings.filter(({ path }) => {
      const s = resolve(doc, schemaAt(doc, op.body, path))
      return Array.isArray(s.enum) && s.enum.every((v) => typeof v === "string" && v.toUpperCase() !== v.toLowerCase())
    })
    if (enums.length > 0) {
      choices.push(pick(enums).map(({ path, value }) => {
        const v = String(value)
        const changed = v === v.toUpperCase() ? v.toLowerCase() : v.toUpperCase()
        return { label: `${fieldOf(path)} as ${changed}`, body: replaceAt(body, path, changed), names: fieldOf(path) }
      }))
    }
  }
  if (leaves.length > 0) {
    choices.push(
      pick(leaves).chain(({ path }) =>
        wrongTypeArb(doc, schemaAt(doc, op.body, path)).map((wrong) => ({
          label: `${fieldOf(path)} as ${toJsonText(wrong)}`,
          body: replaceAt(body, path, wrong),
          names: fieldOf(path)
        }))
      ),
      fc.tuple(pick(leaves), pick(longNumbers)).map(([{ path }, number]) => ({
        label: `${number.label} in ${fieldOf(path)}`,
        body: replaceAt(body, path, number),
        names: fieldOf(path)
      })),
      // At most 150 000 levels: deeper objects would pass 1 MiB, which is a 413 before anything else.
      fc.tuple(pick(leaves), pick([64, 2_000, 50_000, 150_000]), fc.boolean()).map(([{ path }, depth, object]) => {
        const nested = deep(depth, object)
        // Too deep to read may also be refused as JSON the server will not parse (bad_request).
        return { label: `${nested.label} in ${fieldOf(path)}`, body: replaceAt(body, path, nested), codes: ["validation_error", "bad_request"] }
      })
    )
  }
  if (objects.length > 0) {
    const known = new Set(Object.keys(properties))
    choices.push(
      fc.tuple(
        pick(objects),
        fc.oneof(
          pick(["__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "x_unknown", "Title", "title ", "tïtle", "id", "workspace_id", "created_at"]),
          fc.stringMatching(/^[a-z][a-z_]{2,14}$/)
        ),
        pick<Json>(["x", 1, null, { a: 1 }, [], true])
      )
        .filter(([{ value }, name]) => isJsonObject(value) && !(name in value) && !(value === body && known.has(name)) && !(value !== body && ["role", "user_id", "guest_email"].includes(name)))
        .map(([{ path }, name, value]) => ({
          label: `unknown field ${JSON.stringify(name)} at ${fieldOf(path)}`,
          body: replaceAt(body, [...path, name], value),
          names: name
        }))
    )
  }
  if ("item_type" in properties && isJsonObject(body)) {
    // An agenda item type outside the four (the partner API's own code, invalid_item_type).
    choices.push(pick(["BRAINSTORM", "discussion", "DISCUSSION ", "", "ADJOURNED"]).map((value) => ({
      label: `item_type ${JSON.stringify(value)}`,
      body: replaceAt(body, ["item_type"], value),
      names: "item_type"
    })))
  }
  const present = required.filter((name) => isJsonObject(body) && name in body)
  if (present.length > 0) {
    choices.push(pick(present).map((name) => ({ label: `required ${name} left out`, body: replaceAt(body, [name], undefined), names: name })))
  }
  choices.push(
    pick<[string, Json | Raw]>([
      ["body null", null],
      ["body an array", [body]],
      ["body a string", "title"],
      ["body a number", 42],
      ["body true", true],
      ["body a long number", longNumbers[0] ?? 0],
      ["body arrays nested 300000 deep", deep(300_000, false)],
      ["body objects nested 100000 deep", deep(100_000, true)]
    ]).map(([label, value]) => ({ label, body: value, codes: label.includes("nested") ? ["validation_error", "bad_request"] : ["validation_error"] }))
  )
  return fc.oneof(...choices)
}

/** The scopes a credential lacks for a write: the reader holds only the read scopes. */
const readerRefused = (op: Operation) => op.scopes.some((scope) => scope.endsWith(":write"))

/** The operation's request refers to the world's resources (a stranger must not reach them). */
const refersToWorld = (op: Operation) => op.template.includes("{") || op.key === "POST /v1/agenda-items" || op.key === "POST /v1/action-items"

export const hostileCase = (doc: OpenApiDocument, ops: ReadonlyArray<Operation>, world: World, op: Operation): fc.Arbitrary<FuzzCase> => {
  const ctx: Context = { doc, world, strict: true }
  const takesJson = op.body !== undefined
  const secured = op.security !== "none"
  const params = pathParamNames(op)
  const queries = op.parameters.filter((p) => p.in === "query")

  const choices: Array<{ weight: number; arbitrary: fc.Arbitrary<Hostile> }> = []
  const add = (weight: number, arbitrary: fc.Arbitrary<Hostile>) => choices.push({ weight, arbitrary })

  // 404: the path is not in its exact form (whatever else is wrong, and whoever asks).
  // (A path still in its exact form may be another route: 405 when that route has other methods; a path that
  // reaches another operation is not generated.)
  add(3, fc.tuple(baseArb(ctx, op), pathMutationArb(op), pick<Credential>(secured ? [rightful(op), rightful(op), "none", "operator"] : ["none"])).map(([base, mutation, credential]): Hostile | undefined => {
    const path = mutation.apply(pathOf(op, base.params))
    const methods = mutation.canonical === true ? methodsAt(ops, path) : []
    if (methods.includes(op.method)) return undefined
    const built = assemble(world, op, base, { credential, path })
    const expect: Expectation = methods.length === 0
      ? { statuses: [404], codes: ["not_found"], routed: false }
      : { statuses: [405], codes: ["method_not_allowed"], allow: methods, routed: false }
    return { mutation: `path: ${mutation.label}`, ...built, expect }
  }).filter((h): h is Hostile => h !== undefined))

  // 405 with Allow: a method the path does not have (the path may fit several templates: /v1/meetings/search
  // also fits /v1/meetings/{id}).
  add(2, fc.tuple(baseArb(ctx, op), pick(METHODS), pick<Credential>(secured ? [rightful(op), "none"] : ["none"])).map(([base, method, credential]): Hostile | undefined => {
    const allow = methodsAt(ops, pathOf(op, base.params))
    if (allow.includes(method)) return undefined
    const built = assemble(world, op, base, { credential, method })
    return { mutation: `method ${method}`, ...built, expect: { statuses: [405], codes: ["method_not_allowed"], allow, routed: false } }
  }).filter((h): h is Hostile => h !== undefined))

  if (takesJson) {
    // 413: over 1 MiB, before anything else about the request is looked at.
    add(2, fc.tuple(baseArb(ctx, op), tooLargeArb({ params: {}, query: [], body: null }), pick<Credential>([rightful(op), rightful(op), "none", "garbage"]), pick<string | null>(["application/json", "application/json", "text/plain", null])).map(
      ([base, large, credential, contentType]) => {
        const built = assemble(world, op, base, { credential, body: large.body, contentType })
        return { mutation: `body of ${large.label}${contentType === "application/json" ? "" : `, Content-Type ${contentType ?? "(none)"}`}`, ...built, expect: routed(op, { statuses: [413], codes: ["payload_too_large"] }) }
      }
    ))
  }

  if (secured) {
    // 401: no credential, a wrong one, or one of the other realm; before any problem of the body.
    // The partner admin API takes no bearer token: whatever Authorization says, the key is missing. The user context
    // takes only the partner OAuth server's access tokens: a first-party token, the operator's, a workspace API key
    // and the admin key are unknown tokens there (and its tokens are unknown to the first-party API).
    const wrong: ReadonlyArray<[Credential | string, string]> = op.security === "operator"
      ? [["none", "unauthorized"], ["owner", "invalid_token"], ["apiKey", "invalid_token"], ["garbage", "invalid_token"], ["partnerUser", "invalid_token"]]
      : op.security === "partner"
      ? [["none", "missing_api_key"], ["operator", "missing_api_key"], ["owner", "missing_api_key"], ["garbage", "missing_api_key"], ["partnerUser", "missing_api_key"]]
      : op.security === "partnerUser"
      ? [
        ["none", "missing_authorization"],
        ["partner", "missing_authorization"],
        ["owner", "unauthorized"],
        ["apiKey", "unauthorized"],
        ["operator", "unauthorized"],
        ["garbage", "unauthorized"],
        ["revoked", "unauthorized"]
      ]
      : [["none", "unauthorized"], ["operator", "invalid_token"], ["garbage", "invalid_token"], ["revoked", "invalid_token"], ["partnerUser", "invalid_token"]]
    const key = world.credentials.partner
    const clientId = world.partnerClientId
    const userToken = world.credentials.partnerUser
    const schemes: ReadonlyArray<[string, Record<string, string>, ReadonlyArray<string>]> = op.security === "partnerUser"
      ? [
        ["Basic credentials", { authorization: "Basic b3BlcmF0b3I6c2VjcmV0" }, ["invalid_authorization_format"]],
        ["an empty Bearer", { authorization: "Bearer " }, ["invalid_authorization_format"]],
        ["the token without its scheme", { authorization: userToken }, ["invalid_authorization_format"]],
        ["two tokens", { authorization: `Bearer ${userToken} ${userToken}` }, ["invalid_authorization_format"]],
        ["a 6000-character token", { authorization: `Bearer ${"t".repeat(6000)}` }, ["unauthorized"]],
        ["a tampered token", { authorization: `Bearer ${userToken.slice(0, -2)}zz` }, ["unauthorized"]],
        ["an unknown partner token", { authorization: `Bearer svc_pua_v1_${"A".repeat(43)}` }, ["unauthorized"]],
        ["the admin API key as a bearer token", { authorization: `Bearer ${key}` }, ["unauthorized"]],
        ["the admin headers beside no token", { "x-api-key": key, "x-client-id": clientId }, ["missing_authorization"]]
      ]
      : op.security === "partner"
      ? [
        ["only the client id", { "x-client-id": clientId }, ["missing_api_key"]],
        ["an empty X-API-Key", { "x-api-key": "", "x-client-id": clientId }, ["missing_api_key"]],
        ["only the API key", { "x-api-key": key }, ["missing_client_id"]],
        ["a tampered key", { "x-api-key": `${key.slice(0, -2)}zz`, "x-client-id": clientId }, ["invalid_credentials"]],
        ["an unknown client id", { "x-api-key": key, "x-client-id": `${clientId}x` }, ["invalid_credentials"]],
        ["a 6000-character client id", { "x-api-key": key, "x-client-id": "c".repeat(6000) }, ["invalid_credentials"]],
        ["a bearer token as the key", { "x-api-key": world.credentials.owner, "x-client-id": clientId }, ["invalid_credentials"]],
        ["the key as a bearer token", { authorization: `Bearer ${key}` }, ["missing_api_key"]]
      ]
      : [
        ["Basic credentials", { authorization: "Basic b3BlcmF0b3I6c2VjcmV0" }, ["unauthorized", "invalid_token"]],
        ["an empty Bearer", { authorization: "Bearer " }, ["unauthorized", "invalid_token"]],
        ["two tokens", { authorization: `Bearer ${world.credentials.owner} ${world.credentials.owner}` }, ["unauthorized", "invalid_token"]],
        ["a 6000-character token", { authorization: `Bearer ${"t".repeat(6000)}` }, ["unauthorized", "invalid_token"]],
        [
          "a tampered token",
          { authorization: `Bearer ${(world.credentials[rightful(op) === "operator" ? "operator" : "owner"] ?? "").slice(0, -2)}zz` },
          ["unauthorized", "invalid_token"]
        ]
      ]
    add(4, fc.tuple(
      baseArb(ctx, op),
      fc.oneof(
        pick(wrong).map(([credential, code]) => ({ credential: credential as Credential, headers: {} as Record<string, string>, label: `credential ${credential}`, codes: [code] })),
        pick(schemes).map(([label, headers, codes]) => ({ credential: "none" as Credential, headers, label: `${op.security === "partner" || label.includes("headers") ? "headers with" : "Authorization with"} ${label}`, codes }))
      ),
      takesJson ? fc.option(transportArb({ params: {}, query: [], body: null }), { nil: undefined }) : fc.constant(undefined)
    ).chain(([base, who, transport]) =>
      (takesJson ? fc.option(decodeArb(doc, op, base), { nil: undefined }) : fc.constant(undefined)).map((decode) => {
        const body = transport?.body ?? (decode === undefined ? undefined : { kind: "bytes" as const, bytes: Buffer.from(toJsonText(decode.body), "utf8") })
        const built = assemble(world, op, base, {
          credential: who.credential,
          headers: who.headers,
          ...(body === undefined ? {} : { body }),
          ...(transport === undefined ? {} : { contentType: transport.contentType })
        })
        const also = transport !== undefined ? `, and ${transport.label}` : decode !== undefined ? `, and ${decode.label}` : ""
        return { mutation: `${who.label}${also}`, ...built, expect: routed(op, { statuses: [401], codes: who.codes }) }
      })
    ))
  }

  if (takesJson) {
    // 415 and 400 bad_request: media type, bytes and JSON syntax, for the rightful caller.
    add(4, baseArb(ctx, op).chain((base) => transportArb(base).map((t) => {
      const built = assemble(world, op, base, { body: t.body, contentType: t.contentType })
      return { mutation: t.label, ...built, expect: routed(op, { statuses: [t.status], codes: [codeOf(op, t.code)] }) }
    })))
    // 400 validation_error naming the field: the JSON decodes to something the operation does not take.
    add(8, baseArb(ctx, op).chain((base) => decodeArb(doc, op, base).map((d) => {
      const built = assemble(world, op, base, { body: { kind: "bytes", bytes: Buffer.from(toJsonText(d.body), "utf8") } })
      return {
        mutation: d.label,
        ...built,
        expect: routed(op, {
          statuses: [400],
          codes: decodeCodesOf(op, d.codes ?? ["validation_error"], d.names, d.label.includes("item_type")),
          ...(d.names === undefined ? {} : { names: d.names })
        }),
        ...(d.echo === undefined ? {} : { echoes: [d.echo] })
      }
    })))
  }

  if (op.upload !== undefined && secured) {
    // 400 and 415: uploads whose parts, text fields, multipart syntax or media type the rules refuse.
    add(8, fc.tuple(baseArb(ctx, op), hostileUploadArb(op)).map(([base, u]) => {
      const built = assemble(world, op, base, { body: u.body, contentType: u.contentType })
      return {
        mutation: `upload: ${u.label}`,
        ...built,
        expect: routed(op, { statuses: u.statuses, codes: u.codes.map((code) => codeOf(op, code)), ...(u.names === undefined ? {} : { names: u.names }) })
      }
    }))
  }

  if (queries.length > 0 && secured) {
    // 400 naming the query parameter: repeated, or not of its type.
    add(3, fc.tuple(baseArb(ctx, op), pick(queries), fc.boolean()).chain(([base, param, repeat]) => {
      const s = resolve(doc, param.schema)
      const meeting = world.ids.meetings[0] ?? ""
      const kind = s.type === "integer" ? "integer" : s.format === "uuid" ? "uuid" : Array.isArray(s.enum) ? "enum" : Array.isArray(s.allOf) ? "timestamp" : "text"
      const bad: Record<typeof kind, ReadonlyArray<string>> = {
        integer: ["abc", "1.5", "1e3", "0x10", "9".repeat(16), "9".repeat(3000), "%00", "%EF%BC%91", "NaN", "Infinity"],
        uuid: ["nope", "%00", `${meeting}0`, meeting.replace(/-/g, ""), "x".repeat(3000)],
        enum: ["SCHEDULED", "NEEDS_REVIEW", "paused", "%00", "scheduled%00"],
        timestamp: ["yesterday", "2026-13-01T00:00:00Z", "%00", "x".repeat(3000)],
        text: ["a%00b", "%00", "q".repeat(501), "q".repeat(6000)]
      }
      const enumValues = Array.isArray(s.enum) ? s.enum.map(String) : []
      const good: Record<typeof kind, readonly [string, string]> = {
        integer: ["1", "2"],
        uuid: [meeting, world.ids.meetings[1] ?? meeting],
        enum: [enumValues[0] ?? "a", enumValues[1] ?? "b"],
        timestamp: ["2030-01-01T00:00:00Z", "2031-01-01T00:00:00Z"],
        text: ["a", "b"]
      }
      return pick(bad[kind]).map((value) => {
        const others = base.query.filter(([name]) => name !== param.name)
        const query = repeat
          ? queryText([...others, [param.name, good[kind][0]], [param.name, good[kind][1]]])
          : queryText([...others, [param.name, value]])
        const label = repeat
          ? `query ${param.name} repeated (${param.name}=${good[kind][0]}&${param.name}=${good[kind][1]})`
          : `query ${param.name}=${value.length > 20 ? `${value.slice(0, 8)}… (${value.length} characters)` : value}`
        const built = assemble(world, op, base, { query })
        return {
          mutation: label,
          ...built,
          expect: routed(op, { statuses: [400], codes: [codeOf(op, "validation_error")], names: param.name }),
          echoes: !repeat && value.length >= 1000 ? [value] : []
        }
      })
    }))
  }

  // The path parameters that are UUIDs (an action button's id is any short string).
  const uuidParams = params.filter((name) => {
    const parameter = op.parameters.find((p) => p.in === "path" && p.name === name)
    return parameter !== undefined && resolve(doc, parameter.schema).format === "uuid"
  })
  if (uuidParams.length > 0 && (secured || isFileLink(op))) {
    // 400 naming the path parameter when it is not a UUID.
    add(3, fc.tuple(baseArb(ctx, op), pick(uuidParams), pick(["not-a-uuid", "%00", "%20", "123", "x".repeat(3000), "%E2%82%AC", "00000000-0000-0000-0000-00000000000g", "{id}", "(dashless)", "(extra digit)"])).map(([base, param, value]) => {
      const existing = base.params[param] ?? ""
      const v = value === "(dashless)" ? existing.replace(/-/g, "") : value === "(extra digit)" ? `${existing}0` : value
      const built = assemble(world, op, base, { path: pathOf(op, { ...base.params, [param]: v }) })
      // Longer than the router's parameters can be, it matches no route: 404 is right too.
      const long = v.length > MAX_PARAM_LENGTH
      return {
        mutation: `path parameter ${param} = ${v.length > 40 ? `${v.slice(0, 8)}… (${v.length})` : v}`,
        ...built,
        expect: long
          ? { statuses: [400, 404], codes: [codeOf(op, "validation_error"), "not_found"], names: param, routed: false }
          : routed(op, { statuses: [400], codes: [codeOf(op, "validation_error")], names: param }),
        echoes: v.length >= 1000 ? [v] : []
      }
    }))
  }
  // A domain's verification is started by POST .../verify on any domain: no domain is "of nothing" to it.
  const startsAnything = op.template.startsWith("/v1/partner/admin/idp/domains/") && op.template.endsWith("/verify")
  if (params.length > 0 && secured && !startsAnything) {
    // 404 when a path parameter is the id of nothing (a domain parameter: a domain no verification was started for).
    add(2, fc.tuple(baseArb(ctx, op), pick(params), fc.uuid({ version: 4 }), fc.boolean()).map(([base, param, id, upper]) => {
      const nothing = uuidParams.includes(param) ? id : `nothing-${id.slice(0, 8)}.example`
      const built = assemble(world, op, base, { path: pathOf(op, { ...base.params, [param]: upper ? nothing.toUpperCase() : nothing }) })
      return { mutation: `path parameter ${param} of nothing (${upper ? "upper case" : "lower case"})`, ...built, expect: routed(op, { statuses: [404], codes: ["not_found"] }) }
    }))
    if (op.method === "GET") {
      // An existing resource by its UUID in upper case: found, and answered in lower case.
      add(2, baseArb(ctx, op).map((base) => {
        const upper = Object.fromEntries(Object.entries(base.params).map(([k, v]) => [k, v.toUpperCase()]))
        const built = assemble(world, op, base, { path: pathOf(op, upper) })
        const id = params.length === 1 && op.template.endsWith("}") && uuidParams.includes(params[0] ?? "")
          ? base.params[params[0] ?? ""]
          : undefined
        // The partner's SRT export needs ELITE or ENTERPRISE: the world is PRO. The world has no toolkit (yet): a
        // toolkit id, a workflow template's or a run's is the id of nothing.
        const expect = isPartnerOp(op) && op.template.endsWith("/transcript/export")
          ? routed(op, { statuses: [402], codes: ["plan_required"] })
          : isToolkitOp(op) || isWorkflowOp(op)
          ? routed(op, { statuses: [404], codes: ["not_found"] })
          : routed(op, { statuses: [200], ...(id === undefined ? {} : { id }) })
        return { mutation: "path parameters in upper case", ...built, expect }
      }))
    }
  }

  if (secured && op.security === "bearer" && readerRefused(op) && op.method !== "GET") {
    // A credential without the write scope.
    add(2, baseArb(ctx, op).map((base) => ({ mutation: "a reader's token (no write scope)", ...assemble(world, op, base, { credential: "reader" }), expect: routed(op, { statuses: [403, 404], codes: ["insufficient_scope", "not_found"] }) })))
  }
  const unreadable = op.scopes.find((scope) => scope === "calendar:read" || scope === "workspace:read")
  if (secured && op.security === "bearer" && unreadable !== undefined) {
    // A credential without the read scope: the reader, a MEMBER, holds meetings:read and action-items:read, neither
    // calendar:read nor workspace:read.
    add(2, baseArb(ctx, op).map((base) => ({
      mutation: `a reader's token (no ${unreadable})`,
      ...assemble(world, op, base, { credential: "reader" }),
      expect: routed(op, { statuses: [403], codes: ["insufficient_scope"] })
    })))
  }
  if (op.security === "bearer" && refersToWorld(op)) {
    // Another workspace's owner: every id of this one is invisible (404; deleting another user's token may be
    // 403), and nothing changes.
    const tokens = op.template.startsWith("/v1/user/tokens")
    add(2, baseArb(ctx, op).map((base) => ({
      mutation: "another workspace's owner",
      ...assemble(world, op, base, { credential: "stranger" }),
      expect: routed(op, { statuses: tokens ? [403, 404] : [404], codes: tokens ? ["insufficient_scope", "not_found"] : ["not_found"] })
    })))
  }
  if (op.security === "partnerUser") {
    // The token of an app the operator suspended: 403 partner_app_inactive, whatever the route.
    add(2, baseArb(ctx, op).map((base) => ({
      mutation: "a suspended app's token",
      ...assemble(world, op, base, { credential: "partnerSuspended" }),
      expect: routed(op, { statuses: [403], codes: ["partner_app_inactive"] })
    })))
    const writes = op.scopes.includes("meetings:write")
    // An action button that is none of the meeting's may be looked for before the caller's rights.
    const trigger = op.template.endsWith("/trigger")
    if (writes) {
      // A token of the same user with meetings:read only.
      add(2, baseArb(ctx, op).map((base) => ({
        mutation: "a meetings:read token (no meetings:write)",
        ...assemble(world, op, base, { credential: "partnerReader" }),
        expect: routed(op, { statuses: trigger ? [403, 404] : [403], codes: trigger ? ["insufficient_scope", "not_found"] : ["insufficient_scope"] })
      })))
    }
    if (writes && op.template.startsWith("/v1/partner/user/meetings/{id}")) {
      // A VIEWER of the meeting changes it: 403 forbidden.
      const viewed = world.ids.viewedMeeting
      const sub = (name: string) =>
        name === "item_id" ? world.ids.agendaItemsByMeeting[viewed] ?? [] : name === "attachment_id" ? world.ids.attachments[viewed] ?? [] : []
      add(2, fc.tuple(baseArb(ctx, op), fc.nat()).map(([base, n]) => {
        const params = Object.fromEntries(Object.entries(base.params).map(([name, value]) => {
          if (name === "id") return [name, viewed]
          const pool = sub(name)
          return [name, pool.length > 0 ? pool[n % pool.length] ?? value : value]
        }))
        return {
          mutation: "a VIEWER of the meeting",
          ...assemble(world, op, { ...base, params }, { credential: "partnerViewer" }),
          expect: routed(op, { statuses: trigger ? [403, 404] : [403], codes: trigger ? ["forbidden", "not_found"] : ["forbidden"] })
        }
      }))
    }
    if (op.template.includes("{")) {
      // The OWNER of another workspace, through the same app: every id of this one is 404.
      add(2, baseArb(ctx, op).map((base) => ({
        mutation: "another workspace's OWNER",
        ...assemble(world, op, base, { credential: "partnerStranger" }),
        expect: routed(op, { statuses: [404], codes: ["not_found"] })
      })))
    }
  }
  if (op.method === "GET" && (op.template.endsWith("/download") || isFileLink(op))) {
    // A byte range past the end of the file: 416 range_not_satisfiable, with Content-Range.
    add(2, fc.tuple(baseArb(ctx, op), pick(["bytes=1000000-", "bytes=1000000-1000001", "bytes=5000000-"])).map(([base, range]) => ({
      mutation: `Range: ${range} (past the end)`,
      ...assemble(world, op, base, { headers: { range } }),
      expect: routed(op, { statuses: [416], codes: ["range_not_satisfiable"] })
    })))
  }
  if (isFileLink(op)) {
    // A pre-signed URL with a part changed, or a part left out.
    add(4, fc.tuple(baseArb(ctx, op), tamperArb(world.ids.fileLinks)).map(([base, tamper]) => ({
      mutation: `pre-signed URL with ${tamper.label}`,
      ...assemble(world, op, { ...base, ...tamper.apply({ params: base.params as FileLink["params"], query: base.query }) }, {}),
      expect: routed(op, { statuses: [404], codes: ["not_found"] })
    })))
    add(2, fc.tuple(baseArb(ctx, op), pick(["expires", "kid", "signature"]), fc.boolean()).map(([base, name, repeat]) => {
      const query = repeat
        ? base.query.flatMap(([n, v]) => (n === name ? [[n, v] as const, [n, v] as const] : [[n, v] as const]))
        : base.query.filter(([n]) => n !== name)
      return {
        mutation: repeat ? `query ${name} repeated` : `query ${name} left out`,
        ...assemble(world, op, { ...base, query }, {}),
        expect: routed(op, { statuses: [400], codes: ["invalid_request"], names: name })
      }
    }))
  }
  if (op.idempotent) {
    add(2, fc.tuple(baseArb(ctx, op), pick(["", "   ", "k".repeat(256), "caf\u00e9", "a\tb"])).map(([base, key]) => ({
      mutation: `Idempotency-Key ${JSON.stringify(key.length > 20 ? `${key.slice(0, 4)}… (${key.length})` : key)}`,
      ...assemble(world, op, base, { headers: { "idempotency-key": key } }),
      expect: routed(op, { statuses: [400], codes: ["idempotency_key_invalid"] })
    })))
  }
  if (!secured) {
    // No authentication: junk credentials, media types and bodies on a GET change nothing.
    add(2, fc.tuple(baseArb(ctx, op), pick<Record<string, string>>([
      { authorization: "Bearer nope" },
      { authorization: `Bearer ${world.credentials.operator}` },
      { "content-type": "multipart/form-data; boundary=x" },
      { "content-type": "text/plain" }
    ]), fc.option(pick(["{\"a\":", "\u0000", "x".repeat(2000)]), { nil: undefined })).map(([base, headers, body]) => ({
      mutation: `junk: ${Object.entries(headers).map(([k, v]) => `${k}: ${v.slice(0, 30)}`).join(", ")}${body === undefined ? "" : ", with a body"}`,
      ...assemble(world, op, base, { headers, ...(body === undefined ? {} : { body: { kind: "bytes" as const, bytes: Buffer.from(body) } }) }),
      // The worlds' partner apps have no IdP configuration.
      expect: routed(op, isIdpConfigOp(op) ? { statuses: [404], codes: ["idp_config_not_found"] } : { statuses: [200] })
    })))
  }

  // Noise that changes nothing about the answer: a fresh Idempotency-Key (so deep bodies reach the
  // fingerprint too), headers a proxy or browser adds.
  return fc.tuple(
    fc.oneof(...choices),
    op.idempotent ? fc.option(fc.constant(FRESH_KEY), { nil: undefined }) : fc.constant(undefined),
    fc.option(pick<Record<string, string>>([{ accept: "text/html" }, { "x-forwarded-for": "10.0.0.1, 127.0.0.1" }, { "user-agent": "fuzz/\u00e9" }, { "accept-encoding": "gzip" }]), { nil: undefined })
  ).map(([h, key, extra]) =>
    makeCase({
      op,
      kind: "hostile",
      mutation: h.mutation + (key !== undefined && h.request.headers["idempotency-key"] === undefined ? " (with an Idempotency-Key)" : ""),
      credential: h.credential,
      request: {
        ...h.request,
        headers: {
          ...extra,
          ...(key !== undefined && h.request.headers["idempotency-key"] === undefined ? { "idempotency-key": key } : {}),
          ...h.request.headers
        }
      },
      expect: h.expect,
      echoes: h.echoes ?? []
    })
  )
}
