import { ParseResult, Schema } from "effect"

/**
 * Options for a `Schema.Class` constructor fed with values that are already of the right type (rows the
 * store decoded, fields of other validated records): skips re-validation on hot read paths.
 */
export const trusted = { disableValidation: true } as const

type ClassOf<Fields extends Schema.Struct.Fields, Self> = {
  readonly fields: Fields
  new(props: Schema.Struct.Type<Fields>, options: typeof trusted): Self
}

const validators = new WeakMap<object, (props: unknown) => unknown>()

/**
 * `new C(props)`, validated as the constructor validates, by a validator compiled once per class. Schema.Class's
 * own constructor derives the type side of its fields and compiles a parser for it on every call when a field
 * transforms (a Timestamp, a nested class): tens of microseconds per record on a request path
 * (docs/benchmarks.md). Throws the constructor's `ParseError` on invalid props.
 */
export const validated = <Fields extends Schema.Struct.Fields, Self>(
  klass: ClassOf<Fields, Self>,
  props: Schema.Struct.Type<Fields>
): Self => {
  let validate = validators.get(klass)
  if (validate === undefined) {
    validate = ParseResult.validateSync(Schema.Struct(klass.fields))
    validators.set(klass, validate)
  }
  return new klass(validate(props) as Schema.Struct.Type<Fields>, trusted)
}
