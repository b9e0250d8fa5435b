/**
 * Text as the API takes it (shared/Text.ts): no U+0000, no unpaired UTF-16 surrogate, in every schema built
 * on Text; e-mail addresses trimmed and lower-cased.
 */
import { Email, LongText, SearchText, Text, Title } from "@convene/core"
import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck, ParseResult, Schema } from "effect"

const NUL = "must not contain the NUL character (U+0000)"
const SURROGATE = "must be valid Unicode text (it holds an unpaired UTF-16 surrogate)"

/** The messages of a decode failure (none when it decodes). */
const messagesOf = <A, I>(schema: Schema.Schema<A, I>, input: unknown): ReadonlyArray<string> =>
  Either.match(Schema.decodeUnknownEither(schema)(input), {
    onLeft: (error) => ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => issue.message),
    onRight: () => []
  })

const decoded = <A, I>(schema: Schema.Schema<A, I>, input: unknown) => Either.getOrThrow(Schema.decodeUnknownEither(schema)(input))

/** One code point, never U+0000 and never a surrogate (fullUnicode leaves those out). */
const codePoint = FastCheck.fullUnicode().filter((c) => c !== "\u0000")

/** Well-formed text of up to `max` code points. */
const wellFormed = (max: number) => FastCheck.array(codePoint, { maxLength: max }).map((cps) => cps.join(""))

/** What makes text unacceptable: U+0000, or any lone surrogate (high or low). */
const flaw = FastCheck.oneof(
  FastCheck.constant("\u0000"),
  FastCheck.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit))
)

/**
 * Well-formed text with one flaw inserted between two code points: a high surrogate is then never followed by
 * a low one, nor a low one preceded by a high one, so it stays unpaired.
 */
const flawed = (max: number) =>
  FastCheck.tuple(FastCheck.array(codePoint, { maxLength: max }), FastCheck.nat(), flaw).map(([cps, at, bad]) => {
    const i = at % (cps.length + 1)
    return { text: [...cps.slice(0, i), bad, ...cps.slice(i)].join(""), nul: bad === "\u0000" }
  })

const schemas = {
  "Text": Text,
  "Title(200)": Title(200),
  "LongText(2000)": LongText(2000),
  "SearchText": SearchText
} as const

/** An address whose local part is any well-formed text without white space or @, in mixed case. */
const localPart = FastCheck.array(codePoint.filter((c) => !/[\s@]/.test(c)), { minLength: 1, maxLength: 30 }).map((cps) => cps.join(""))
const domain = FastCheck.tuple(
  FastCheck.stringMatching(/^[A-Za-z0-9]{1,12}$/),
  FastCheck.stringMatching(/^[A-Za-z]{2,6}$/)
).map(([name, tld]) => `${name}.${tld}`)
const padding = FastCheck.stringMatching(/^[ \t\n]{0,3}$/)

describe("Text schemas", () => {
  for (const [name, schema] of Object.entries(schemas)) {
    it.prop(`${name} refuses any text holding U+0000 or an unpaired surrogate, saying which`, [flawed(40)], ([{ nul, text }]) => {
      expect(messagesOf(schema, text)).toContain(nul ? NUL : SURROGATE)
    })
  }

  it.prop("Email refuses an address holding U+0000 or an unpaired surrogate", [flawed(20), domain], ([{ nul, text }, host]) => {
    expect(messagesOf(Email, `${text}@${host}`)).toContain(nul ? NUL : SURROGATE)
  })

  it.prop("Text and LongText take any well-formed text as it is", [wellFormed(60)], ([text]) => {
    expect(decoded(Text, text)).toBe(text)
    expect(decoded(LongText(2000), text)).toBe(text)
  })

  it.prop("Title and SearchText take any well-formed text, trimmed (Title: not empty once trimmed)", [wellFormed(60)], ([text]) => {
    const trimmed = text.trim()
    expect(decoded(SearchText, text)).toBe(trimmed)
    if (trimmed.length === 0) expect(messagesOf(Title(200), text)).toEqual(["must not be empty"])
    else expect(decoded(Title(200), text)).toBe(trimmed)
  })

  it("keeps astral characters (surrogate pairs) and refuses lone halves at the edges", () => {
    expect(decoded(Title(10), " 😀 ok ")).toBe("😀 ok")
    for (const text of ["\uD83D", "\uDE00", "a\uDE00\uD83D", "\uD83D\uD83D\uDE00"]) {
      expect(messagesOf(LongText(10), text), JSON.stringify(text)).toContain(SURROGATE)
    }
  })

  it("Title and LongText count their maximum in UTF-16 units", () => {
    expect(decoded(Title(5), "  12345  ")).toBe("12345")
    expect(messagesOf(Title(5), "123456")).toEqual(["must be at most 5 characters"])
    expect(decoded(LongText(5), "12345")).toBe("12345")
    expect(messagesOf(LongText(5), "1234 6")).toEqual(["must be at most 5 characters"])
    expect(messagesOf(SearchText, "x".repeat(501))).toEqual(["must be at most 500 characters"])
  })
})

describe("Email", () => {
  it.prop("trims and lower-cases any address; the result is an Email as it is", [padding, localPart, domain, padding], ([before, local, host, after]) => {
    const address = decoded(Email, `${before}${local}@${host}${after}`)
    expect(address).toBe(`${local}@${host}`.toLowerCase())
    expect(Email.make(address)).toBe(address)
    expect(Schema.is(Email)(address)).toBe(true)
  })

  it.prop("Email.make refuses an address that is not lower-cased", [localPart, domain], ([local, host]) => {
    const address = `${local}@${host}`
    const upper = address.toUpperCase()
    if (upper !== upper.toLowerCase()) expect(() => Email.make(upper)).toThrow()
    expect(() => Email.make(` ${address.toLowerCase()}`)).toThrow()
  })

  it("refuses what is not an address", () => {
    for (const bad of ["", "ann", "ann@", "@example.com", "ann@example", "a nn@example.com", "ann@exa mple.com", "ann@@example.com"]) {
      expect(messagesOf(Email, bad), bad).toEqual(["must be an e-mail address"])
    }
    expect(messagesOf(Email, `${"a".repeat(320)}@example.com`)).toEqual(["must be at most 320 characters"])
  })

  it("Email.make takes the normalised form only", () => {
    expect(Email.make("ann@example.com")).toBe("ann@example.com")
    for (const bad of ["Ann@example.com", "ann@Example.com", " ann@example.com", "ann@example.com "]) {
      expect(() => Email.make(bad), bad).toThrow()
    }
  })
})
