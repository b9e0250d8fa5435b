/**
 * A decode failure of path, query, headers or body as the client reads it: one message per field, in the
 * words of the API, never in the words of the schemas (no class names, no "Encoded side", no type syntax)
 * and never echoing the value sent.
 *
 * The platform reports a union (an optional or nullable field, a set of literals) as one issue per member;
 * the members "undefined" and "null" say only that the field may be absent, so they are dropped when the
 * field has other issues, and literal members (strings, numbers, booleans) are gathered into "must be one of
 * ...", every allowed value listed in the order the schema declares them.
 */
import type { HttpApiError } from "@effect/platform"
import { ValidationError } from "@convene/core"

type Issue = HttpApiError.HttpApiDecodeError["issues"][number]

/** `participants[0].role` for the path ["participants", 0, "role"]; `body` for the root. */
export const fieldOf = (path: ReadonlyArray<PropertyKey>): string => {
  if (path.length === 0) return "body"
  return path.reduce<string>(
    (field, key, index) => (typeof key === "number" ? `${field}[${key}]` : index === 0 ? String(key) : `${field}.${String(key)}`),
    ""
  )
}

const expectedPattern = /^Expected (.+?), actual ([\s\S]*)$/

/** A literal value as the schemas print it: a JSON string, a number or a boolean. */
const literalPattern = /^(?:"[^"]*"|-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|true|false)$/

/** What the schema expected, in the API's words (`actual` is the value sent, as JSON, which is never echoed). */
const describeExpected = (expected: string, actual: string): string => {
  if (literalPattern.test(expected)) return `must be ${expected}`
  switch (expected) {
    case "string":
      // A query parameter given twice arrives as a list.
      return actual.startsWith("[") ? "must be given once, as a single value" : "must be a string"
    case "number":
      return "must be a number"
    case "boolean":
      return "must be true or false"
    case "null":
      return "must be null"
    case "a Universally Unique Identifier":
      return "must be a UUID"
  }
  if (expected.startsWith("ReadonlyArray<") || expected.startsWith("readonly [")) return "must be an array"
  if (expected.includes("side)") || expected.startsWith("{")) return "must be a JSON object"
  return "has an invalid value"
}

const messageOf = (issue: Issue): string => {
  switch (issue._tag) {
    case "Missing":
      return "is required"
    case "Unexpected":
      return "is not a field of this request"
    default: {
      const match = expectedPattern.exec(issue.message)
      return match === null ? issue.message : describeExpected(match[1] ?? "", match[2] ?? "")
    }
  }
}

const isAbsenceAlternative = (issue: Issue) =>
  issue._tag === "Type" && /^Expected (undefined|null), actual /.test(issue.message)

/** One message for the issues of one field. */
const describeField = (issues: ReadonlyArray<Issue>): string => {
  const relevant = issues.filter((issue) => !isAbsenceAlternative(issue))
  const kept = relevant.length === 0 ? issues : relevant
  const literals = kept.flatMap((issue) => {
    const match = issue._tag === "Type" ? expectedPattern.exec(issue.message) : null
    const expected = match?.[1]
    return expected !== undefined && literalPattern.test(expected) ? [expected] : []
  })
  if (literals.length > 1 && literals.length === kept.length) return `must be one of ${literals.join(", ")}`
  return [...new Set(kept.map(messageOf))].join("; ")
}

/** The decode failure as the core's ValidationError: the first field named, the others listed after it. */
export const validationErrorOf = (error: HttpApiError.HttpApiDecodeError): ValidationError => {
  const byField = new Map<string, Array<Issue>>()
  for (const issue of error.issues) {
    const field = fieldOf(issue.path)
    byField.set(field, [...(byField.get(field) ?? []), issue])
  }
  const fields = [...byField.entries()]
  const first = fields[0]
  if (first === undefined) return ValidationError.of("request", "is invalid")
  const [field, issues] = first
  const others = fields.slice(1).map(([other, issues]) => `${other}: ${describeField(issues)}`)
  const more = others.length === 0 ? "" : ` (also: ${others.join("; ")})`
  return new ValidationError({ field, message: `${field}: ${describeField(issues)}${more}` })
}
