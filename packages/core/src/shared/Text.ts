/**
 * Text as the API takes it. Every string a client can make the service store or search for goes through
 * `Text` (or a schema built on it), so that the rules hold on every store alike:
 * - no U+0000: PostgreSQL cannot store it, and no client means it;
 * - well-formed Unicode: a lone UTF-16 surrogate (possible in JSON through `\ud800`) cannot be encoded as
 *   UTF-8, so it would be stored as U+FFFD and read back changed.
 */
import { Schema } from "effect"

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** The rules every text obeys, as filters on a string schema (on its type side, so `make` checks them too). */
const textRules = <S extends Schema.Schema.Any>(self: S & Schema.Schema<string, Schema.Schema.Encoded<S>, Schema.Schema.Context<S>>) =>
  self.pipe(
    Schema.filter((s: string) => !s.includes("\u0000"), { message: () => "must not contain the NUL character (U+0000)" }),
    Schema.filter((s: string) => !loneSurrogate.test(s), {
      message: () => "must be valid Unicode text (it holds an unpaired UTF-16 surrogate)"
    })
  )

/** Any string without U+0000 and without unpaired surrogates. */
export const Text = textRules(Schema.String)

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
export const Email = textRules(Schema.compose(Schema.Trim, Schema.Lowercase)).pipe(
  Schema.pattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: () => "must be an e-mail address" }),
  Schema.maxLength(320, { message: () => "must be at most 320 characters" }),
  Schema.brand("Email")
).annotations({ identifier: "Email", jsonSchema: { type: "string", format: "email" } })
export type Email = typeof Email.Type

/**
 * The form in which text is compared case-insensitively (title search): NFC, each code point lower-cased on its
 * own (no context rules), and the final sigma folded to sigma. Core computes it; a store that searches keeps it
 * beside the text (the SQL store's `title_folded` column), so every store finds exactly the same meetings,
 * whatever the database's locale would make of lower().
 */
export const foldCase = (text: string): string => {
  let folded = ""
  for (const codePoint of text.normalize("NFC")) folded += codePoint.toLowerCase()
  return folded.replaceAll("ς", "σ")
}

/**
 * Class annotations of a request body (`Schema.Class<X>("X")({...}, requestBody)`): a field the request does
 * not define is refused (400 naming it) instead of being silently dropped, at every depth of the body.
 */
export const requestBody = [undefined, undefined, { parseOptions: { onExcessProperty: "error" } }] as const
