/** Query-string building blocks shared by the list endpoints. */
import { Pagination } from "@convene/core"
import { ParseResult, Schema } from "effect"

/** An integer in the query string. Empty means absent (the default applies); anything else non-integer is 400. */
export const QueryInt = Schema.transformOrFail(Schema.String, Schema.Number, {
  strict: true,
  decode: (raw, _, ast) => {
    const s = raw.trim()
    if (s === "") return ParseResult.succeed(Number.NaN)
    return /^[+-]?\d{1,15}$/.test(s)
      ? ParseResult.succeed(Number(s))
      : ParseResult.fail(new ParseResult.Type(ast, raw, "must be an integer"))
  },
  encode: (n) => ParseResult.succeed(String(n))
}).annotations({ jsonSchema: { type: "integer" } })

/** `limit` and `offset` of a list whose page size defaults to `defaultLimit` (the core's clamp applies it). */
export const pageParamsWith = (defaultLimit: number) => ({
  limit: Schema.optional(QueryInt).annotations({
    description: `page size: default ${defaultLimit}, at most 100 (larger values become 100; missing or non-positive become ${defaultLimit})`
  }),
  offset: Schema.optional(QueryInt).annotations({
    description: "items to skip: default 0 (negative becomes 0); past the end gives an empty page"
  })
})

export const PageParams = pageParamsWith(Pagination.DEFAULT_LIMIT)
