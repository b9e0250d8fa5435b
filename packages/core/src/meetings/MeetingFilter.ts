/**
 * Which meetings a list reads, as data. Core decides every rule (who sees what, what "upcoming" means) by
 * building a `MeetingFilter`; a store adapter only evaluates it (`matches`, for stores that hold rows in
 * memory) or translates each node into its query language. A change of a rule therefore touches this module
 * and nothing in the adapters.
 */
import { Data, DateTime } from "effect"
import type { UserId } from "../shared/Ids.js"
import { foldCase } from "../shared/Text.js"
import type { Meeting, MeetingStatus, ParticipantRow } from "./Meeting.js"

/** A timestamp column of a meeting. */
export type TimeField = "start_time" | "end_time"

export type MeetingFilter = Data.TaggedEnum<{
  /** Every meeting. */
  All: Record<never, never>
  /** Every one of `filters` holds. */
  And: { readonly filters: ReadonlyArray<MeetingFilter> }
  /** At least one of `filters` holds. */
  Or: { readonly filters: ReadonlyArray<MeetingFilter> }
  StatusIn: { readonly statuses: ReadonlyArray<MeetingStatus> }
  /** The user takes part in the meeting (is one of its participants). */
  HasParticipant: { readonly userId: UserId }
  /** The title holds `text`, compared case-insensitively: both as `foldCase` gives them. */
  TitleContains: { readonly text: string }
  /** The field is set (not null). */
  IsSet: { readonly field: TimeField }
  /** The field is not set (null). */
  IsUnset: { readonly field: TimeField }
  /** The field is set and at or after `at`. */
  AtOrAfter: { readonly field: TimeField; readonly at: DateTime.Utc }
  /** The field is set and before `at`. */
  Before: { readonly field: TimeField; readonly at: DateTime.Utc }
}>

export const MeetingFilter = Data.taggedEnum<MeetingFilter>()

/** All of `filters` (`All` for none; the filter itself for one). */
export const and = (...filters: ReadonlyArray<MeetingFilter>): MeetingFilter => {
  const kept = filters.filter((filter) => filter._tag !== "All")
  return kept.length === 0 ? MeetingFilter.All() : kept.length === 1 ? kept[0]! : MeetingFilter.And({ filters: kept })
}

export const or = (...filters: ReadonlyArray<MeetingFilter>): MeetingFilter => MeetingFilter.Or({ filters })

/**
 * The upcoming rule: scheduled or running meetings with a start time that are not over at `at`. A meeting
 * with an end time is not over until that time; one without an end time is not over while it runs, or until
 * its start time.
 */
export const upcoming = (at: DateTime.Utc): MeetingFilter =>
  and(
    MeetingFilter.StatusIn({ statuses: ["scheduled", "in_progress"] }),
    MeetingFilter.IsSet({ field: "start_time" }),
    or(
      MeetingFilter.AtOrAfter({ field: "end_time", at }),
      and(
        MeetingFilter.IsUnset({ field: "end_time" }),
        or(MeetingFilter.StatusIn({ statuses: ["in_progress"] }), MeetingFilter.AtOrAfter({ field: "start_time", at }))
      )
    )
  )

/** Whether `meeting` (with its `participants`) passes `filter`: the reference semantics of every node. */
export const matches = (
  filter: MeetingFilter,
  meeting: Meeting,
  participants: ReadonlyArray<ParticipantRow>
): boolean => {
  const go = (filter: MeetingFilter): boolean => {
    switch (filter._tag) {
      case "All":
        return true
      case "And":
        return filter.filters.every(go)
      case "Or":
        return filter.filters.some(go)
      case "StatusIn":
        return filter.statuses.includes(meeting.status)
      case "HasParticipant":
        return participants.some((participant) => participant.user_id === filter.userId)
      case "TitleContains":
        return foldCase(meeting.title).includes(foldCase(filter.text))
      case "IsSet":
        return meeting[filter.field] !== null
      case "IsUnset":
        return meeting[filter.field] === null
      case "AtOrAfter": {
        const value = meeting[filter.field]
        return value !== null && DateTime.greaterThanOrEqualTo(value, filter.at)
      }
      case "Before": {
        const value = meeting[filter.field]
        return value !== null && DateTime.lessThan(value, filter.at)
      }
    }
  }
  return go(filter)
}
