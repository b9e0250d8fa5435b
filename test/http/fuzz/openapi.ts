/**
 * The parts of the served OpenAPI document the fuzzer reads: every operation with its parameters, its JSON
 * body schema, its security and its documented failure codes; `$ref` resolution; and a small validator for
 * the subset of JSON Schema the document uses (to hold 2xx answers to their documented shape).
 */

export type JsonSchema = { readonly [key: string]: unknown }

export interface OpenApiDocument {
  readonly paths: Readonly<Record<string, Readonly<Record<string, unknown>>>>
  readonly components: { readonly schemas: Readonly<Record<string, JsonSchema>> }
}

export interface Parameter {
  readonly name: string
  readonly in: "path" | "query" | "header"
  readonly required: boolean
  readonly schema: JsonSchema
}

export interface Operation {
  /** `POST /v1/meetings`: the operation's name in reports. */
  readonly key: string
  readonly method: string
  /** The path template, `/v1/meetings/{id}`. */
  readonly template: string
  readonly parameters: ReadonlyArray<Parameter>
  /** The JSON body schema (resolved one level), when the operation takes a body. */
  readonly body: JsonSchema | undefined
  /**
   * Who may call it: a first-party token (`bearer`), the operator token, the partner admin API's X-API-Key with
   * X-Client-ID (`partner`), a partner OAuth access token for a user (`partnerUser`: the scheme `partnerBearer` of
   * /v1/partner/user), or nobody in particular.
   */
  readonly security: Security
  /** The scopes the description names ("Scope meetings:write."). */
  readonly scopes: ReadonlyArray<string>
  readonly description: string
  /** Documented status → the `code` values its envelope may carry (empty for a 2xx). */
  readonly responses: ReadonlyMap<number, ReadonlyArray<string>>
  /** Documented failure status → the fields its body may have (the envelope's, and e.g. the 402's plan fields). */
  readonly failureFields: ReadonlyMap<number, ReadonlyArray<string>>
  /** The documented 2xx answer's schema, if JSON. */
  readonly success: { readonly status: number; readonly schema: JsonSchema | undefined } | undefined
  /** The methods the document has for this path (what a 405's Allow must list). */
  readonly pathMethods: ReadonlyArray<string>
  /** Whether it honours Idempotency-Key. */
  readonly idempotent: boolean
  /** A `multipart/form-data` upload: its file fields (format binary) and text fields with their schemas. */
  readonly upload: Upload | undefined
}

export type Security = "bearer" | "operator" | "partner" | "partnerUser" | "none"

/** The kind of credential an operation's first security requirement names (a first-party token unless known). */
const securityOf = (scheme: string | undefined): Security => {
  switch (scheme) {
    case "operator":
      return "operator"
    case "partnerApiKey":
    case "partnerClientId":
      return "partner"
    case "partnerBearer":
      return "partnerUser"
    default:
      return "bearer"
  }
}

export interface Upload {
  readonly files: ReadonlyArray<string>
  readonly required: ReadonlyArray<string>
  readonly fields: ReadonlyArray<{ readonly name: string; readonly schema: JsonSchema }>
}

const isObject = (value: unknown): value is JsonSchema => typeof value === "object" && value !== null && !Array.isArray(value)

const METHODS = ["get", "post", "put", "patch", "delete", "head", "options"]

/** A schema with its `$ref`s followed (not recursively: call again on nested schemas). */
export const resolve = (doc: OpenApiDocument, schema: unknown): JsonSchema => {
  let current: unknown = schema
  for (let depth = 0; depth < 20 && isObject(current) && typeof current.$ref === "string"; depth++) {
    const name = current.$ref.replace("#/components/schemas/", "")
    current = doc.components.schemas[name]
  }
  if (!isObject(current)) throw new Error(`cannot resolve schema ${JSON.stringify(schema)}`)
  return current
}

/** Every `code` literal a failure schema (possibly an anyOf of envelopes) allows. */
const codesOf = (doc: OpenApiDocument, schema: unknown): Array<string> => {
  if (schema === undefined) return []
  const resolved = resolve(doc, schema)
  const members = [...(Array.isArray(resolved.anyOf) ? resolved.anyOf : []), ...(Array.isArray(resolved.oneOf) ? resolved.oneOf : [])]
  if (members.length > 0) return members.flatMap((member) => codesOf(doc, member))
  const properties = isObject(resolved.properties) ? resolved.properties : {}
  const code = properties.code === undefined ? undefined : resolve(doc, properties.code)
  return Array.isArray(code?.enum) ? code.enum.map(String) : []
}

/** Every property name a failure schema (possibly an anyOf of envelopes) documents. */
const fieldsOf = (doc: OpenApiDocument, schema: unknown): Array<string> => {
  if (schema === undefined) return []
  const resolved = resolve(doc, schema)
  const members = [...(Array.isArray(resolved.anyOf) ? resolved.anyOf : []), ...(Array.isArray(resolved.oneOf) ? resolved.oneOf : [])]
  if (members.length > 0) return members.flatMap((member) => fieldsOf(doc, member))
  return Object.keys(isObject(resolved.properties) ? resolved.properties : {})
}

const uploadOf = (doc: OpenApiDocument, content: unknown): Upload | undefined => {
  if (!isObject(content) || !isObject(content["multipart/form-data"])) return undefined
  const schema = resolve(doc, (content["multipart/form-data"] as JsonSchema).schema)
  const properties = Object.entries(isObject(schema.properties) ? schema.properties : {})
    .map(([name, property]) => ({ name, schema: resolve(doc, property) }))
  return {
    files: properties.filter(({ schema: s }) => s.format === "binary").map(({ name }) => name),
    required: Array.isArray(schema.required) ? schema.required.map(String) : [],
    fields: properties.filter(({ schema: s }) => s.format !== "binary")
  }
}

const jsonSchemaOf = (doc: OpenApiDocument, content: unknown): JsonSchema | undefined => {
  if (!isObject(content)) return undefined
  const json = content["application/json"]
  return isObject(json) && json.schema !== undefined ? resolve(doc, json.schema) : undefined
}

/**
 * Every operation of the document that answers in the API's envelope. The OAuth endpoints (tag `OAuth`) answer
 * RFC 6749's `{error, error_description}`, take forms and redirect browsers, which the oracle's rules are not
 * about: their hostile and valid-ish requests are generated and judged in test/http/oauth/attacks.test.ts.
 */
export const operations = (doc: OpenApiDocument): ReadonlyArray<Operation> =>
  Object.entries(doc.paths).flatMap(([template, item]) => {
    const pathMethods = METHODS.filter((method) => isObject(item[method])).map((method) => method.toUpperCase())
    return METHODS.flatMap((method) => {
      const operation = item[method]
      if (!isObject(operation)) return []
      if (Array.isArray(operation.tags) && operation.tags.includes("OAuth")) return []
      const parameters = (Array.isArray(operation.parameters) ? operation.parameters : []).filter(isObject).map((parameter) => ({
        name: String(parameter.name),
        in: parameter.in as Parameter["in"],
        required: parameter.required === true,
        schema: isObject(parameter.schema) ? parameter.schema : {}
      }))
      const security = Array.isArray(operation.security) ? operation.security.filter(isObject) : []
      const first = Object.keys(security[0] ?? {})[0]
      const scheme = security.length === 0 ? "none" : securityOf(first)
      const description = typeof operation.description === "string" ? operation.description : ""
      const responses = new Map<number, ReadonlyArray<string>>()
      const failureFields = new Map<number, ReadonlyArray<string>>()
      let success: Operation["success"] = undefined
      for (const [status, response] of Object.entries(isObject(operation.responses) ? operation.responses : {})) {
        const code = Number(status)
        if (!isObject(response)) continue
        const content = isObject(response.content) ? response.content : undefined
        const schema = isObject(content?.["application/json"]) ? (content["application/json"] as JsonSchema).schema : undefined
        if (code >= 200 && code < 300) {
          success ??= { status: code, schema: jsonSchemaOf(doc, content) }
          responses.set(code, [])
        } else {
          responses.set(code, codesOf(doc, schema))
          failureFields.set(code, [...new Set(fieldsOf(doc, schema))])
        }
      }
      const requestBody = isObject(operation.requestBody) ? operation.requestBody : undefined
      return [{
        key: `${method.toUpperCase()} ${template}`,
        method: method.toUpperCase(),
        template,
        parameters,
        body: requestBody === undefined ? undefined : jsonSchemaOf(doc, requestBody.content),
        security: scheme,
        scopes: [...description.matchAll(/\b(?:[Ss]cope|[Ss]copes) ([a-z-]+:[a-z]+)/g)].map((match) => match[1] ?? ""),
        description,
        responses,
        failureFields,
        success,
        pathMethods,
        idempotent: parameters.some((parameter) => parameter.in === "header" && parameter.name.toLowerCase() === "idempotency-key"),
        upload: requestBody === undefined ? undefined : uploadOf(doc, requestBody.content)
      } satisfies Operation]
    })
  })

/** The names of the document's schemas (to be kept out of every message a client reads). */
export const schemaNames = (doc: OpenApiDocument): ReadonlyArray<string> => Object.keys(doc.components.schemas)

const UUID_LOWER = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/
const DATE = /^\d{4}-\d{2}-\d{2}$/

/**
 * Where `value` breaks `schema` (the subset the document uses: $ref, anyOf/oneOf/allOf, type, enum, required,
 * properties, additionalProperties: false, items, uuid/date-time/date formats, pattern); empty when it fits.
 * UUIDs in answers must be lower case.
 */
export const validate = (doc: OpenApiDocument, schema: unknown, value: unknown, at = "$"): Array<string> => {
  const s = resolve(doc, schema)
  const alternatives = Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined
  if (alternatives !== undefined) {
    const results = alternatives.map((alternative) => validate(doc, alternative, value, at))
    return results.some((problems) => problems.length === 0) ? [] : [`${at}: fits none of ${alternatives.length} alternatives (${results.map((r) => r[0]).join(" | ")})`]
  }
  const problems: Array<string> = []
  if (Array.isArray(s.allOf)) for (const part of s.allOf) problems.push(...validate(doc, part, value, at))
  if (Array.isArray(s.enum) && !s.enum.some((member) => member === value)) problems.push(`${at}: ${JSON.stringify(value)} is not one of ${JSON.stringify(s.enum)}`)
  switch (s.type) {
    case "string":
      if (typeof value !== "string") return [...problems, `${at}: expected a string, got ${JSON.stringify(value)}`]
      if (s.format === "uuid" && !UUID_LOWER.test(value)) problems.push(`${at}: ${value} is not a lower-case UUID`)
      if (s.format === "date-time" && !DATE_TIME.test(value)) problems.push(`${at}: ${value} is not an RFC 3339 UTC timestamp`)
      if (s.format === "date" && !DATE.test(value)) problems.push(`${at}: ${value} is not a date`)
      if (typeof s.pattern === "string" && !new RegExp(s.pattern, "u").test(value)) problems.push(`${at}: ${value} does not match ${s.pattern}`)
      break
    case "integer":
      if (!Number.isInteger(value)) problems.push(`${at}: expected an integer, got ${JSON.stringify(value)}`)
      break
    case "number":
      if (typeof value !== "number") problems.push(`${at}: expected a number, got ${JSON.stringify(value)}`)
      break
    case "boolean":
      if (typeof value !== "boolean") problems.push(`${at}: expected a boolean, got ${JSON.stringify(value)}`)
      break
    case "null":
      if (value !== null) problems.push(`${at}: expected null, got ${JSON.stringify(value)}`)
      break
    case "array":
      if (!Array.isArray(value)) return [...problems, `${at}: expected an array`]
      value.forEach((item, index) => problems.push(...validate(doc, s.items ?? {}, item, `${at}[${index}]`)))
      break
    case "object": {
      if (!isObject(value)) return [...problems, `${at}: expected an object`]
      const properties = isObject(s.properties) ? s.properties : {}
      for (const name of Array.isArray(s.required) ? s.required : []) {
        if (!(String(name) in value)) problems.push(`${at}.${String(name)}: required but missing`)
      }
      for (const [name, member] of Object.entries(value)) {
        const property = properties[name]
        if (property !== undefined) problems.push(...validate(doc, property, member, `${at}.${name}`))
        else if (s.additionalProperties === false) problems.push(`${at}.${name}: not documented`)
      }
      break
    }
  }
  return problems
}

/** The router's longest path parameter (find-my-way's maxParamLength): a longer one matches no route. */
export const MAX_PARAM_LENGTH = 100

const decoded = (segment: string) => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/** Whether a concrete path (no query) fits a template, the way the router matches it. */
export const fits = (template: string, path: string): boolean => {
  const want = template.split("/")
  const have = path.split("/")
  if (want.length !== have.length) return false
  return want.every((segment, index) => {
    const actual = have[index] ?? ""
    if (segment.startsWith("{")) return actual !== "" && decoded(actual).length <= MAX_PARAM_LENGTH
    return segment === actual
  })
}

/** The methods the document has for whatever templates a concrete path fits (what a 405's Allow lists). */
export const methodsAt = (ops: ReadonlyArray<Operation>, path: string): ReadonlyArray<string> =>
  [...new Set(ops.filter((op) => fits(op.template, path)).map((op) => op.method))].sort()
