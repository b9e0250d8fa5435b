/**
 * JSON bodies as the fuzzer builds them: ordinary JSON values plus `Raw` fragments written verbatim (numbers
 * too long for a double, nesting too deep to build as objects), serialised the way a client would send them.
 * Lone surrogates leave JSON.stringify as the escapes `\ud800`, which is how a client can send them at all.
 */

/** Text put into the JSON as it is (it must itself be a JSON value for the body to stay JSON). */
export class Raw {
  constructor(readonly text: string, readonly label: string) {}
}

export type Json = null | boolean | number | string | Raw | ReadonlyArray<Json> | { readonly [key: string]: Json }

export const isJsonObject = (value: Json | undefined): value is { readonly [key: string]: Json } =>
  typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Raw)

/** The body text. Object keys are written as they are (`__proto__` included: objects are built as own data properties). */
export const toJsonText = (value: Json): string => {
  if (value instanceof Raw) return value.text
  if (Array.isArray(value)) return `[${value.map(toJsonText).join(",")}]`
  if (isJsonObject(value)) {
    return `{${Object.entries(value).map(([key, member]) => `${JSON.stringify(key)}:${toJsonText(member)}`).join(",")}}`
  }
  return JSON.stringify(value)
}

/** An object with one more (or replaced) member, as an own data property even for `__proto__`. */
export const withMember = (object: { readonly [key: string]: Json }, key: string, member: Json): { readonly [key: string]: Json } =>
  Object.fromEntries([...Object.entries(object).filter(([k]) => k !== key), [key, member]])

export const withoutMember = (object: { readonly [key: string]: Json }, key: string): { readonly [key: string]: Json } =>
  Object.fromEntries(Object.entries(object).filter(([k]) => k !== key))

export type JsonPath = ReadonlyArray<string | number>

/** The field name as the API's messages write it: `participants[0].role`, `body` for the root. */
export const fieldOf = (path: JsonPath): string =>
  path.length === 0
    ? "body"
    : path.reduce<string>((field, key, index) => (typeof key === "number" ? `${field}[${key}]` : index === 0 ? key : `${field}.${key}`), "")

/** Every position in a value: the path and what is there (the root included). */
export const positions = (value: Json, at: JsonPath = []): Array<{ readonly path: JsonPath; readonly value: Json }> => {
  const here = [{ path: at, value }]
  if (Array.isArray(value)) return [...here, ...value.flatMap((item: Json, index: number) => positions(item, [...at, index]))]
  if (isJsonObject(value)) return [...here, ...Object.entries(value).flatMap(([key, member]) => positions(member, [...at, key]))]
  return here
}

/** The value with the member at `path` replaced (or, with `undefined`, removed). */
export const replaceAt = (value: Json, path: JsonPath, replacement: Json | undefined): Json => {
  if (path.length === 0) return replacement ?? null
  const [head, ...rest] = path
  if (Array.isArray(value) && typeof head === "number") {
    const items = value as ReadonlyArray<Json>
    const next = items.flatMap((item, index) => {
      if (index !== head) return [item]
      if (rest.length === 0) return replacement === undefined ? [] : [replacement]
      return [replaceAt(item, rest, replacement)]
    })
    return next
  }
  if (isJsonObject(value) && typeof head === "string") {
    if (rest.length === 0) return replacement === undefined ? withoutMember(value, head) : withMember(value, head, replacement)
    const member = value[head]
    return member === undefined ? value : withMember(value, head, replaceAt(member, rest, replacement))
  }
  return value
}
