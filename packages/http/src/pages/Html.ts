/**
 * HTML that escapes by default: `html\`<p>${text}</p>\`` escapes every interpolated string or number (`&`, `<`,
 * `>`, `"`, `'`), so a value is text wherever it lands, between tags or in a quoted attribute. An interpolated
 * `Html` (another `html` fragment) is kept as it is, so fragments compose; an array is its items in order;
 * `null`, `undefined` and `false` are nothing (for `${condition && html\`...\`}`). There is no way to insert
 * unescaped text other than writing it in a template, so every byte of markup is in this package's source.
 * Attribute values must be quoted in the template (`value="${x}"`).
 */
const HtmlTypeId: unique symbol = Symbol.for("@convene/http/pages/Html")

/** A fragment of markup, made only by `html`. */
export interface Html {
  readonly [HtmlTypeId]: typeof HtmlTypeId
  readonly text: string
}

/** What a template may interpolate. */
export type Interpolation = Html | string | number | null | undefined | false | ReadonlyArray<Interpolation>

const entities: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" }

/** The text with the five characters that are markup in text or in a quoted attribute replaced by entities. */
export const escape = (text: string): string => text.replace(/[&<>"']/g, (character) => entities[character] ?? character)

const isHtml = (value: Interpolation): value is Html => typeof value === "object" && value !== null && HtmlTypeId in value

const isArray = (value: Interpolation): value is ReadonlyArray<Interpolation> => Array.isArray(value)

const toText = (value: Interpolation): string => {
  if (value === null || value === undefined || value === false) return ""
  if (isArray(value)) return value.map(toText).join("")
  if (isHtml(value)) return value.text
  return escape(String(value))
}

/** The tagged template: the literal parts as written, every interpolation through `escape` unless it is `Html`. */
export const html = (strings: TemplateStringsArray, ...values: ReadonlyArray<Interpolation>): Html => {
  let text = strings[0] ?? ""
  values.forEach((value, index) => {
    text += toText(value) + (strings[index + 1] ?? "")
  })
  const fragment: Html = { [HtmlTypeId]: HtmlTypeId, text }
  return Object.freeze(fragment)
}

/** The markup as a string, for a response body. */
export const render = (fragment: Html): string => fragment.text
