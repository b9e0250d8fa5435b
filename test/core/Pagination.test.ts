/**
 * limit/offset as the contract's Limits table says (shared/Pagination.ts): the edges of each rule, which the
 * property test in Meetings.test.ts draws only by chance.
 */
import { Pagination } from "@convene/core"
import { describe, expect, it } from "@effect/vitest"

describe("Pagination.clamp at the edges", () => {
  it("limit: 1 is the smallest limit taken as it is; below 1, missing or not a number gives the default", () => {
    const limitOf = (limit: number | undefined) => Pagination.clamp({ limit }).limit
    expect(limitOf(1)).toBe(1)
    expect(limitOf(2)).toBe(2)
    expect(limitOf(1.9)).toBe(1)
    expect(limitOf(99.5)).toBe(99)
    expect(limitOf(100)).toBe(100)
    expect(limitOf(101)).toBe(100)
    expect(limitOf(Number.MAX_SAFE_INTEGER)).toBe(100)
    for (const fallback of [undefined, 0, 0.99, -1, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(limitOf(fallback), String(fallback)).toBe(20)
    }
  })

  it("limit: the default is the one the list asks for (25 for calendar events)", () => {
    expect(Pagination.clamp({}, 25)).toEqual({ limit: 25, offset: 0 })
    expect(Pagination.clamp({ limit: 0 }, 25).limit).toBe(25)
    expect(Pagination.clamp({ limit: 1 }, 25).limit).toBe(1)
    expect(Pagination.clamp({ limit: 500 }, 25).limit).toBe(100)
  })

  it("offset: 0 and up are taken (whole), a negative, missing or infinite offset reads as 0", () => {
    const offsetOf = (offset: number | undefined) => Pagination.clamp({ offset }).offset
    expect(offsetOf(0)).toBe(0)
    expect(offsetOf(1)).toBe(1)
    expect(offsetOf(2.7)).toBe(2)
    expect(offsetOf(1_000_000)).toBe(1_000_000)
    for (const fallback of [undefined, -1, -0.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(offsetOf(fallback), String(fallback)).toBe(0)
    }
  })

  it("a page of limit 1 holds one row, and an offset past the end an empty page with the total", () => {
    const all = ["a", "b", "c"]
    const first = Pagination.clamp({ limit: 1 })
    expect(Pagination.toList(Pagination.sliceOf(all, first), first)).toEqual({ items: ["a"], total: 3, limit: 1, offset: 0 })
    const past = Pagination.clamp({ limit: 1, offset: 3 })
    expect(Pagination.toList(Pagination.sliceOf(all, past), past)).toEqual({ items: [], total: 3, limit: 1, offset: 3 })
  })
})
