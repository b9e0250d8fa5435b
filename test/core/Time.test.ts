import { Timestamp } from "@convene/core"
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Either, FastCheck, Schema } from "effect"

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
