/**
 * Text as the API takes it. Every string a client can make the service store or search for goes through
 * `Text` (or a schema built on it), so that the rules hold on every store alike:
 * - no U+0000: PostgreSQL cannot store it, and no client means it;
 * - well-formed Unicode: a lone UTF-16 surrogate (possible in JSON through `\ud800`) cannot be encoded as
 *   UTF-8, so it would be stored as U+FFFD and read back changed.
 */
import { Schema } from "effect"

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Any string without U+0000 and without unpaired surrogates. */
export const Text = Schema.String.pipe(
  Schema.filter((s) => !s.includes("\u0000"), { message: () => "must not contain the NUL character (U+0000)" }),
  Schema.filter((s) => !loneSurrogate.test(s), {
    message: () => "must be valid Unicode text (it holds an unpaired UTF-16 surrogate)"
  })
)

/** Trimmed, non-empty, at most `max` characters. */
export const Title = (max: number) =>
  Schema.compose(Text, Schema.Trim).pipe(
    Schema.minLength(1, { message: () => "must not be empty" }),
    Schema.maxLength(max, { message: () => `must be at most ${max} characters` })
  )

/** Free text, at most `max` characters. */
export const LongText = (max: number) =>
  Text.pipe(Schema.maxLength(max, { message: () => `must be at most ${max} characters` }))

/**
 * An e-mail address in the one form the service keeps and compares: trimmed and lower-cased. Every store
 * compares these with plain equality; nothing else normalises addresses.
 */
export const Email = Schema.compose(Text, Schema.compose(Schema.Trim, Schema.Lowercase)).pipe(
  Schema.pattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: () => "must be an e-mail address" }),
  Schema.maxLength(320, { message: () => "must be at most 320 characters" }),
  Schema.brand("Email")
).annotations({ identifier: "Email", jsonSchema: { type: "string", format: "email" } })
export type Email = typeof Email.Type
