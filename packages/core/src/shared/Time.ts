/**
 * Time on the wire. Responses carry RFC 3339 timestamps in UTC with a `Z` offset. Requests should carry an
 * offset; a value without one is read as UTC (never as the server's local time). Dates are `YYYY-MM-DD`.
 */
import { DateTime, type Duration, type Effect, ParseResult, Schema } from "effect"

const RFC3339 = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)([Zz]|[+-]\d{2}:?\d{2})?$/

/** Decodes an RFC 3339 / ISO 8601 date-time (offset optional, UTC assumed) into a `DateTime.Utc`. */
export const Timestamp = Schema.transformOrFail(Schema.String, Schema.DateTimeUtcFromSelf, {
  strict: true,
  decode: (input, _, ast) => {
    const match = RFC3339.exec(input.trim())
    const parsed = match === null
      ? undefined
      : DateTime.make(`${match[1]}T${match[2]}${match[3] === undefined ? "Z" : match[3].toUpperCase()}`)
    return parsed === undefined || parsed._tag === "None"
      ? ParseResult.fail(new ParseResult.Type(ast, input, "expected an RFC 3339 timestamp such as 2026-01-31T09:30:00Z"))
      : ParseResult.succeed(DateTime.toUtc(parsed.value))
  },
  encode: (dt) => ParseResult.succeed(DateTime.formatIso(dt))
}).annotations({
  identifier: "Timestamp",
  description: "RFC 3339 timestamp; responses are UTC with a Z offset, requests without an offset are read as UTC",
  jsonSchema: { type: "string", format: "date-time" }
})
export type Timestamp = typeof Timestamp.Type

const isRealDate = (s: string) => {
  const [y, m, d] = s.split("-").map(Number) as [number, number, number]
  const date = new Date(Date.UTC(y, m - 1, d))
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d
}

/** A calendar date `YYYY-MM-DD` that exists (no 2026-02-30). */
export const CalendarDate = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}$/, { message: () => "expected a date of the form YYYY-MM-DD" }),
  Schema.filter(isRealDate, { message: () => "expected a date that exists in the calendar" }),
  Schema.brand("CalendarDate")
).annotations({ identifier: "CalendarDate", jsonSchema: { type: "string", format: "date" } })
export type CalendarDate = typeof CalendarDate.Type

export const now: Effect.Effect<DateTime.Utc> = DateTime.now

export const plus = (at: DateTime.Utc, duration: Duration.DurationInput): DateTime.Utc =>
  DateTime.addDuration(at, duration)

/** First instant of the UTC calendar month that holds `at` as `YYYY-MM`, the key of monthly allowances. */
export const monthKey = (at: DateTime.Utc): string => DateTime.formatIso(at).slice(0, 7)
