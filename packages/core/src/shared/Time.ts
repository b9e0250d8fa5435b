/**
 * Time on the wire. Responses carry RFC 3339 timestamps in UTC with a `Z` offset. Requests should carry an
 * offset; a value without one is read as UTC (never as the server's local time). Dates are `YYYY-MM-DD`.
 */
import { DateTime, type Duration, type Effect, ParseResult, Schema } from "effect"

const RFC3339 = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?([Zz]|[+-]\d{2}:?\d{2})?$/

const isRealDate = (s: string) => {
  const [y, m, d] = s.split("-").map(Number) as [number, number, number]
  const date = new Date(Date.UTC(y, m - 1, d))
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d
}

/** The instant an RFC 3339 string names, or undefined when it is malformed or names no real date and time. */
const parseTimestamp = (input: string): DateTime.Utc | undefined => {
  const match = RFC3339.exec(input.trim())
  if (match === null) return undefined
  const [, date, hh, mm, ss = "00", fraction = "", offset] = match as unknown as [string, string, string, string, string?, string?, string?]
  if (!isRealDate(date) || Number(hh) > 23 || Number(mm) > 59 || Number(ss) > 59) return undefined
  const zone = offset === undefined ? "Z" : offset.toUpperCase()
  if (zone !== "Z" && (Number(zone.slice(1, 3)) > 23 || Number(zone.slice(-2)) > 59)) return undefined
  const parsed = DateTime.make(`${date}T${hh}:${mm}:${ss}${fraction}${zone}`)
  return parsed._tag === "None" ? undefined : DateTime.toUtc(parsed.value)
}

/** Decodes an RFC 3339 / ISO 8601 date-time (offset optional, UTC assumed) into a `DateTime.Utc`. */
export const Timestamp = Schema.transformOrFail(Schema.String, Schema.DateTimeUtcFromSelf, {
  strict: true,
  decode: (input, _, ast) => {
    const parsed = parseTimestamp(input)
    return parsed === undefined
      ? ParseResult.fail(new ParseResult.Type(ast, input, "expected an RFC 3339 timestamp of a real date and time, such as 2026-01-31T09:30:00Z"))
      : ParseResult.succeed(parsed)
  },
  encode: (dt) => ParseResult.succeed(DateTime.formatIso(dt))
}).annotations({
  identifier: "Timestamp",
  description: "RFC 3339 timestamp; responses are UTC with a Z offset, requests without an offset are read as UTC",
  jsonSchema: { type: "string", format: "date-time" }
})
export type Timestamp = typeof Timestamp.Type


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
