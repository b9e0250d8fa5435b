/**
 * Encoding values the core built, without checking them again.
 *
 * `Schema.encode` checks every value it encodes against its schema (a UUID's pattern, a string's filters, a class's
 * instance check) while it turns it into its wire form, through the same machinery that decodes untrusted input.
 * For the core's own records, which were checked when they were made, that is most of what an answer costs: a page
 * of 100 meetings spent about 40% of the server's CPU in it (docs/benchmarks.md). `encoderOf(schema)` compiles,
 * once per schema, a plain function that does only the transformations (a class to its fields, a timestamp to its
 * RFC 3339 text) and skips the checks. What it does not know how to do without the checks (a union it cannot tell
 * apart by `null`, a declaration with type parameters, a transformation of property names) it hands to
 * `Schema.encodeSync` for that part, so its answer is always `Schema.encode`'s (test/core/Encode.test.ts holds
 * them equal on generated values of every list the API answers).
 */
import { Either, ParseResult, Schema, SchemaAST } from "effect"

type Encode = (value: unknown) => unknown

const identity: Encode = (value) => value

const compiled = new WeakMap<SchemaAST.AST, Encode>()

/** The schema's own encoding, checks included, for the parts `compile` leaves to it. */
const checked = (ast: SchemaAST.AST): Encode => ParseResult.encodeSync(Schema.make(ast))

/** Whether encoding `ast` returns its value unchanged once the checks are skipped. */
const isPlain = (ast: SchemaAST.AST): boolean => {
  switch (ast._tag) {
    case "Literal":
    case "StringKeyword":
    case "NumberKeyword":
    case "BooleanKeyword":
    case "BigIntKeyword":
    case "UndefinedKeyword":
    case "VoidKeyword":
    case "NeverKeyword":
    case "UnknownKeyword":
    case "AnyKeyword":
    case "Enums":
    case "TemplateLiteral":
    case "UniqueSymbol":
    case "SymbolKeyword":
    case "ObjectKeyword":
      return true
    case "Refinement":
      return isPlain(ast.from)
    case "Union":
      return ast.types.every(isPlain)
    case "Declaration":
      return ast.typeParameters.length === 0
    default:
      return false
  }
}

const isNull = (ast: SchemaAST.AST) => ast._tag === "Literal" && ast.literal === null

const compile = (ast: SchemaAST.AST): Encode => {
  if (isPlain(ast)) return identity
  switch (ast._tag) {
    case "Refinement":
      return encoderOfAst(ast.from)
    case "Suspend": {
      let encode: Encode | undefined
      return (value) => (encode ??= encoderOfAst(ast.f()))(value)
    }
    case "Union": {
      // `T | null`, the one kind of union the API's records have: told apart without a check.
      const others = ast.types.filter((member) => !isNull(member))
      if (others.length === ast.types.length - 1 && others.length === 1) {
        const encode = encoderOfAst(others[0]!)
        return (value) => (value === null ? null : encode(value))
      }
      return checked(ast)
    }
    case "TupleType": {
      if (ast.elements.length > 0 || ast.rest.length !== 1) return checked(ast)
      const encode = encoderOfAst(ast.rest[0]!.type)
      return (value) => (value as ReadonlyArray<unknown>).map(encode)
    }
    case "TypeLiteral": {
      if (ast.indexSignatures.length > 0) return checked(ast)
      const properties = ast.propertySignatures.map((property) => ({
        name: property.name,
        optional: property.isOptional,
        encode: encoderOfAst(property.type)
      }))
      return (value) => {
        const record = value as Record<PropertyKey, unknown>
        const out: Record<PropertyKey, unknown> = {}
        for (const { encode, name, optional } of properties) {
          if (optional && !Object.hasOwn(record, name)) continue
          out[name] = encode(record[name])
        }
        return out
      }
    }
    case "Transformation": {
      const { transformation } = ast
      if (transformation._tag === "TypeLiteralTransformation") return checked(ast)
      const encodeTo = encoderOfAst(ast.to)
      const encodeFrom = encoderOfAst(ast.from)
      if (transformation._tag === "ComposeTransformation") return (value) => encodeFrom(encodeTo(value))
      const fallback = checked(ast)
      return (value) => {
        const typed = encodeTo(value)
        const result = transformation.encode(typed, SchemaAST.defaultParseOption, ast, value)
        // A synchronous transformation answers an Either; anything else is left to the schema.
        if (!Either.isEither(result)) return fallback(value)
        if (Either.isLeft(result)) throw new ParseResult.ParseError({ issue: result.left as ParseResult.ParseIssue })
        return encodeFrom(result.right)
      }
    }
    default:
      return checked(ast)
  }
}

const encoderOfAst = (ast: SchemaAST.AST): Encode => {
  const known = compiled.get(ast)
  if (known !== undefined) return known
  // Recursive schemas reach themselves through a Suspend, which compiles lazily.
  const encode = compile(ast)
  compiled.set(ast, encode)
  return encode
}

/**
 * The wire form of a value of `schema`'s type that the core made (and so checked): `Schema.encodeSync(schema)`'s
 * answer, without its checks. Compiled once per schema.
 */
export const encoderOf = <A, I, R>(schema: Schema.Schema<A, I, R>): (value: A) => I =>
  encoderOfAst(schema.ast) as (value: A) => I
