/** MeetingFilter values as core builds them (MeetingFilters.and and or), apart from what a store does with them. */
import { MeetingFilter, MeetingFilters, UserId } from "@convene/core"
import { describe, expect, it } from "@effect/vitest"

const status = MeetingFilter.StatusIn({ statuses: ["scheduled"] })
const mine = MeetingFilter.HasParticipant({ userId: UserId.make(crypto.randomUUID()) })

describe("MeetingFilters.and", () => {
  it("is All for no filters, or only All ones", () => {
    expect(MeetingFilters.and()).toEqual(MeetingFilter.All())
    expect(MeetingFilters.and(MeetingFilter.All(), MeetingFilter.All())).toEqual(MeetingFilter.All())
  })

  it("is the one filter itself when only one is not All", () => {
    expect(MeetingFilters.and(status)).toBe(status)
    expect(MeetingFilters.and(MeetingFilter.All(), status, MeetingFilter.All())).toBe(status)
  })

  it("keeps every filter that is not All, in order", () => {
    expect(MeetingFilters.and(status, MeetingFilter.All(), mine)).toEqual(MeetingFilter.And({ filters: [status, mine] }))
  })
})

describe("MeetingFilters.or", () => {
  it("keeps every filter, All included", () => {
    expect(MeetingFilters.or(status, MeetingFilter.All())).toEqual(MeetingFilter.Or({ filters: [status, MeetingFilter.All()] }))
  })
})
