/**
 * A tool's arguments, described and decoded with the REST API's own schemas (the contract's path, query and body
 * schemas of the endpoint the tool stands for), so that the MCP interface and /v1 cannot drift apart:
 * - the input JSON Schema is the contract's schemas' JSON Schemas (`JSONSchema.make`) merged into one object, plus
 *   `idempotency_key` for a tool that honours it;
 * - the arguments are split by name into the parts (path fields, then the rest to the query or body) and each part is
 *   decoded by its own schema, unknown fields refused (`onExcessProperty: "error"`), every issue reported;
 * - a decode failure becomes the ValidationError the REST API would answer (http/Validation.ts: the field named,
 *   the value never echoed).
 * The query schemas read integers from query-string text, so a JSON number in a query part is given to them as
 * its decimal text (what the REST client would have sent).
 */
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import { ValidationError } from "@convene/core"
import { Effect, JSONSchema, Option, type ParseResult, Schema, type SchemaAST } from "effect"
import { validationErrorOf } from "../http/Validation.js"

/** A JSON Schema whose top level is an object, as MCP wants a tool's input and output schemas. */
export interface ObjectSchema {
  readonly type: "object"
  readonly properties: Record<string, JSONSchema.JsonSchema7>
  readonly required: Array<string>
  readonly additionalProperties: boolean
  readonly $defs?: Record<string, JSONSchema.JsonSchema7>
  readonly [key: string]: unknown
}

type Json = Record<string, unknown>

const isJson = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The JSON Schema of `schema` with its top level inlined (JSONSchema.make answers a `$ref` to `$defs` for a named
 * schema): an object schema with the definitions it refers to. Throws (at start-up) for a schema that is no object.
 */
export const objectSchema = (schema: Schema.Schema.Any): ObjectSchema => {
  const made = JSONSchema.make(schema) as unknown as Json
  const { $defs, $ref, $schema: _, ...rest } = made
  const defs = isJson($defs) ? ($defs as Record<string, JSONSchema.JsonSchema7>) : {}
  const top = typeof $ref === "string" ? defs[$ref.replace("#/$defs/", "")] as unknown as Json : rest
  if (top?.["type"] !== "object" || !isJson(top["properties"])) {
    throw new Error(`the schema ${String(schema.ast)} is not an object schema`)
  }
  return {
    ...top,
    type: "object",
    properties: top["properties"] as ObjectSchema["properties"],
    required: Array.isArray(top["required"]) ? top["required"] as Array<string> : [],
    additionalProperties: false,
    ...(Object.keys(defs).length === 0 ? {} : { $defs: defs })
  }
}

/** Object schemas merged: properties in order, required fields and definitions together. */
export const mergedSchema = (parts: ReadonlyArray<ObjectSchema>): ObjectSchema => {
  const defs = Object.assign({}, ...parts.map((part) => part.$defs ?? {})) as Record<string, JSONSchema.JsonSchema7>
  return {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: Object.assign({}, ...parts.map((part) => part.properties)) as ObjectSchema["properties"],
    required: parts.flatMap((part) => part.required),
    additionalProperties: false,
    ...(Object.keys(defs).length === 0 ? {} : { $defs: defs })
  }
}

/** The argument a mutating tool takes in place of the Idempotency-Key header. */
export const idempotencyKeyName = "idempotency_key"

const idempotencyKeySchema: ObjectSchema = {
  type: "object",
  properties: {
    [idempotencyKeyName]: {
      type: "string",
      minLength: 1,
      maxLength: 255,
      description: "optional, 1 to 255 printable ASCII characters: the Idempotency-Key of the REST API. A repeat with the " +
        "same key and the same arguments (by the same credential, within 24 hours) answers the first result again " +
        "without doing the work twice; the same key with other arguments is the tool error idempotency_key_reuse"
    } as JSONSchema.JsonSchema7
  },
  required: [],
  additionalProperties: false
}

/** The parts of a tool's input: the contract schemas of the endpoint's path, query string and body. */
export interface Parts<Path, Query, Body> {
  // The encoded side is the contract's business.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly path?: Schema.Schema<Path, any>
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly query?: Schema.Schema<Query, any>
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly body?: Schema.Schema<Body, any>
  /** Whether the tool takes `idempotency_key`. */
  readonly idempotent?: boolean
}

/** The decoded arguments: each part as its schema made it, and the idempotency key when one was given. */
export interface Decoded<Path, Query, Body> {
  readonly path: Path
  readonly query: Query
  readonly body: Body
  readonly idempotencyKey: Option.Option<string>
  /** The arguments without the idempotency key, as sent: what an idempotent repeat is compared by. */
  readonly request: Json
}

export interface Input<Path, Query, Body> {
  readonly jsonSchema: ObjectSchema
  readonly decode: (args: unknown) => Effect.Effect<Decoded<Path, Query, Body>, ValidationError>
}

const decodeOptions: SchemaAST.ParseOptions = { errors: "all", onExcessProperty: "error" }

const KeyArgument: Schema.Schema<{ readonly [idempotencyKeyName]?: string }, unknown> = Schema.Struct({
  [idempotencyKeyName]: Schema.optional(Schema.String)
}) as never

/** JSON numbers as the decimal text a query string carries; everything else as it is. */
const asQueryText = (part: Json): Json =>
  Object.fromEntries(Object.entries(part).map(([name, value]) => [name, typeof value === "number" ? String(value) : value]))

/** The tool input of the parts. */
export const input = <Path = object, Query = object, Body = object>(parts: Parts<Path, Query, Body>): Input<Path, Query, Body> => {
  const pathSchema = parts.path === undefined ? undefined : objectSchema(parts.path)
  const pathNames = new Set(Object.keys(pathSchema?.properties ?? {}))
  const restSchema = parts.body ?? parts.query
  const jsonSchema = mergedSchema([
    ...(pathSchema === undefined ? [] : [pathSchema]),
    ...(restSchema === undefined ? [] : [objectSchema(restSchema)]),
    ...(parts.idempotent === true ? [idempotencyKeySchema] : [])
  ])
  // A tool without a body or query takes every other argument into its path, which refuses the unknown ones.
  const restIsPath = restSchema === undefined
  const empty = Schema.Struct({})

  const decode = (args: unknown) =>
    Effect.gen(function*() {
      if (args !== undefined && !isJson(args)) return yield* Effect.fail(ValidationError.of("arguments", "must be a JSON object"))
      const given: Json = args ?? {}
      const path: Json = {}
      const rest: Json = {}
      const key: Json = {}
      const request: Json = {}
      for (const [name, value] of Object.entries(given)) {
        // Defined, never assigned: a `__proto__` argument stays a field (refused as unknown), not a prototype.
        const into = parts.idempotent === true && name === idempotencyKeyName
          ? key
          : pathNames.has(name) || restIsPath
          ? path
          : rest
        Object.defineProperty(into, name, { value, enumerable: true, writable: true, configurable: true })
        if (into !== key) Object.defineProperty(request, name, { value, enumerable: true, writable: true, configurable: true })
      }
      const failures: Array<ParseResult.ParseError> = []
      const run = <A>(schema: Schema.Schema<A, unknown> | undefined, part: Json): A | undefined => {
        const decoded = Schema.decodeUnknownEither(schema ?? (empty as unknown as Schema.Schema<A, unknown>), decodeOptions)(part)
        if (decoded._tag === "Left") {
          failures.push(decoded.left)
          return undefined
        }
        return decoded.right
      }
      const pathValue = run(parts.path as Schema.Schema<Path, unknown> | undefined, path)
      const queryValue = parts.query === undefined ? undefined : run(parts.query as Schema.Schema<Query, unknown>, asQueryText(rest))
      const bodyValue = parts.body === undefined ? undefined : run(parts.body as Schema.Schema<Body, unknown>, rest)
      const keyValue = run(KeyArgument, key)
      if (failures.length > 0) {
        const reports = yield* Effect.forEach(failures, HttpApiDecodeError.fromParseError)
        return yield* Effect.fail(validationErrorOf(new HttpApiDecodeError({
          issues: reports.flatMap((report) => report.issues),
          message: reports.map((report) => report.message).join("\n")
        })))
      }
      return {
        path: pathValue as Path,
        query: (queryValue ?? {}) as Query,
        body: (bodyValue ?? {}) as Body,
        idempotencyKey: Option.fromNullable(keyValue?.[idempotencyKeyName]),
        request
      }
    })

  return { jsonSchema, decode }
}
