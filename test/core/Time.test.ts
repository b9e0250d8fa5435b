import { CalendarDate, monthKey, plus, Timestamp } from "@convene/core"
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Either, FastCheck, ParseResult, Schema } from "effect"

const decode = Schema.decodeUnknownEither(Timestamp)
const encode = Schema.encodeSync(Timestamp)
const instants = FastCheck.date({ min: new Date("1970-01-01T00:00:00Z"), max: new Date("9998-12-31T23:59:59Z"), noInvalidDate: true })

describe("Timestamp", () => {
  it.prop("reads any instant written with Z or with an offset, and writes it back in UTC with Z", [instants, FastCheck.integer({ min: -14, max: 14 })], ([date, hours]) => {
    const utc = date.toISOString()
    expect(encode(Either.getOrThrow(decode(utc)))).toBe(utc)
    const shifted = new Date(date.getTime() + hours * 3_600_000).toISOString().slice(0, 23)
    const sign = hours < 0 ? "-" : "+"
    const withOffset = `${shifted}${sign}${String(Math.abs(hours)).padStart(2, "0")}:00`
    expect(DateTime.toEpochMillis(Either.getOrThrow(decode(withOffset)))).toBe(date.getTime())
  })

  it("reads a value without an offset as UTC, whatever the server's zone", () => {
    expect(encode(Either.getOrThrow(decode("2026-03-29T01:30:00")))).toBe("2026-03-29T01:30:00.000Z")
  })

  it("refuses dates and times that do not exist instead of rolling them over", () => {
    for (const bad of ["2030-02-30T10:00:00Z", "2030-04-31T00:00:00Z", "2029-02-29T00:00:00Z", "2030-01-01T24:00:00Z", "2030-01-01T10:60:00Z", "2030-01-01T10:00:00+25:00", "tomorrow", "2030-01-01"]) {
      expect(Either.isLeft(decode(bad)), bad).toBe(true)
    }
    expect(Either.isRight(decode("2028-02-29T00:00:00Z"))).toBe(true)
  })
})

const TIMESTAMP_MESSAGE = "expected an RFC 3339 timestamp of a real date and time, such as 2026-01-31T09:30:00Z"

/** The messages of a decode failure (none when it decodes). */
const messagesOf = <A, I>(schema: Schema.Schema<A, I>, input: unknown): ReadonlyArray<string> =>
  Either.match(Schema.decodeUnknownEither(schema)(input), {
    onLeft: (error) => ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => issue.message),
    onRight: () => []
  })

describe("Timestamp: the edges of RFC 3339", () => {
  it("reads every form RFC 3339 allows, and the two it tolerates, as the same instant in UTC", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["2026-01-31T09:30:00Z", "2026-01-31T09:30:00.000Z"],
      ["2026-01-31t09:30:00z", "2026-01-31T09:30:00.000Z"],
      ["2026-01-31 09:30:00Z", "2026-01-31T09:30:00.000Z"],
      // Tolerated: no seconds, and white space around the value.
      ["2026-01-31T09:30Z", "2026-01-31T09:30:00.000Z"],
      ["2026-01-31T09:30+01:00", "2026-01-31T08:30:00.000Z"],
      ["2026-01-31T09:30", "2026-01-31T09:30:00.000Z"],
      [" 2026-01-31T09:30:00Z", "2026-01-31T09:30:00.000Z"],
      ["2026-01-31T09:30:00Z\n", "2026-01-31T09:30:00.000Z"],
      ["\t2026-01-31T09:30:00+01:00 ", "2026-01-31T08:30:00.000Z"],
      // The last hour, minute and second of a day.
      ["2026-12-31T23:59:59Z", "2026-12-31T23:59:59.000Z"],
      ["2026-01-31T00:00:00Z", "2026-01-31T00:00:00.000Z"],
      // Offsets up to ±23:59, with or without the colon.
      ["2026-01-31T00:00:00+23:59", "2026-01-30T00:01:00.000Z"],
      ["2026-01-31T00:00:00-23:59", "2026-01-31T23:59:00.000Z"],
      ["2026-01-31T12:00:00+05:59", "2026-01-31T06:01:00.000Z"],
      ["2026-01-31T12:00:00-05:30", "2026-01-31T17:30:00.000Z"],
      ["2026-01-31T12:00:00+0530", "2026-01-31T06:30:00.000Z"],
      ["2026-01-31T12:00:00+00:00", "2026-01-31T12:00:00.000Z"],
      ["2026-01-31T12:00:00-00:00", "2026-01-31T12:00:00.000Z"],
      // Fractions of 1 to 9 digits, kept to the millisecond (cut, not rounded).
      ["2026-01-31T09:30:00.5Z", "2026-01-31T09:30:00.500Z"],
      ["2026-01-31T09:30:00.25Z", "2026-01-31T09:30:00.250Z"],
      ["2026-01-31T09:30:00.125Z", "2026-01-31T09:30:00.125Z"],
      ["2026-01-31T09:30:00.999999999Z", "2026-01-31T09:30:00.999Z"],
      ["2026-01-31T09:30:00.123456789+02:00", "2026-01-31T07:30:00.123Z"],
      // 29 February of leap years (divisible by 4; by 400 for centuries).
      ["2028-02-29T12:00:00Z", "2028-02-29T12:00:00.000Z"],
      ["2000-02-29T12:00:00Z", "2000-02-29T12:00:00.000Z"]
    ]
    for (const [input, utc] of cases) {
      expect(Either.map(decode(input), encode), JSON.stringify(input)).toEqual(Either.right(utc))
    }
  })

  it("refuses what is not a real date and time, or not RFC 3339, saying what it expects", () => {
    const refused = [
      "2026-01-31T24:00:00Z",
      "2026-01-31T23:60:00Z",
      "2026-01-31T23:59:60Z",
      "2026-01-31T12:00:00+24:00",
      "2026-01-31T12:00:00-24:00",
      "2026-01-31T12:00:00+23:60",
      "2026-01-31T12:00:00+2400",
      "2026-02-29T12:00:00Z",
      "2100-02-29T12:00:00Z",
      "2026-01-00T12:00:00Z",
      "2026-01-32T12:00:00Z",
      "2026-13-01T12:00:00Z",
      "2026-00-10T12:00:00Z",
      "2026-01-31T09:30:00.1234567890Z",
      "2026-01-31T09:30:00.Z",
      "2026-01-31T9:30:00Z",
      "2026-01-31T09:30:00+5:30",
      "2026-01-31T09Z",
      "2026-01-31",
      "2026-01-31T09:30:00 Z",
      "2026-01-31T09:30:00Z and more",
      ""
    ]
    for (const input of refused) {
      expect(messagesOf(Timestamp, input), JSON.stringify(input)).toEqual([TIMESTAMP_MESSAGE])
    }
  })
})

describe("CalendarDate", () => {
  it("takes the dates that exist, as they are", () => {
    for (const date of ["2026-01-01", "2026-12-31", "2026-02-28", "2028-02-29", "2000-02-29", "2026-04-30"]) {
      expect(Schema.decodeUnknownEither(CalendarDate)(date), date).toEqual(Either.right(date))
    }
  })

  it("refuses a date that does not exist in the calendar, instead of rolling it over", () => {
    for (const date of ["2026-02-29", "2100-02-29", "2026-02-30", "2026-04-31", "2026-01-00", "2026-01-32", "2026-13-01", "2026-00-01"]) {
      expect(messagesOf(CalendarDate, date), date).toEqual(["expected a date that exists in the calendar"])
    }
  })

  it("refuses anything but YYYY-MM-DD", () => {
    for (const input of ["2026-1-01", "26-01-01", "2026/01/01", "2026-01-01T00:00:00Z", " 2026-01-01", "2026-01-01 ", ""]) {
      expect(messagesOf(CalendarDate, input), JSON.stringify(input)).toEqual(["expected a date of the form YYYY-MM-DD"])
    }
  })
})

describe("monthKey and plus", () => {
  it("monthKey names the UTC month of an instant, whatever offset it was written with", () => {
    expect(monthKey(Either.getOrThrow(decode("2026-01-31T23:30:00-01:00")))).toBe("2026-02")
    expect(monthKey(Either.getOrThrow(decode("2026-03-01T00:30:00+01:00")))).toBe("2026-02")
    expect(monthKey(Either.getOrThrow(decode("2026-12-31T23:59:59.999Z")))).toBe("2026-12")
  })

  it("plus moves an instant by a duration, across days, months and years", () => {
    const at = Either.getOrThrow(decode("2026-12-31T23:30:00Z"))
    expect(encode(plus(at, "30 minutes"))).toBe("2027-01-01T00:00:00.000Z")
    expect(encode(plus(at, "36 hours"))).toBe("2027-01-02T11:30:00.000Z")
  })
})
