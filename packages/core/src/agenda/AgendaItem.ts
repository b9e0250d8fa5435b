import { BigDecimal, Option, Schema } from "effect"
import { AgendaItemId, MeetingId, WorkspaceId } from "../shared/Ids.js"
import { Timestamp } from "../shared/Time.js"

export const AgendaItemType = Schema.Literal("DISCUSSION", "QUESTIONS_TO_ANSWER", "BREAK", "ADJOURN").annotations({
  identifier: "AgendaItemType"
})
export type AgendaItemType = typeof AgendaItemType.Type

/**
 * An agenda item's position: a decimal number sent as a string ("1", "2.5", "-3"). Stored and answered in
 * normalised form ("2.50" becomes "2.5"). Lists are ordered by its numeric value.
 */
export const Sequence = Schema.String.pipe(
  Schema.pattern(/^-?\d{1,12}(\.\d{1,6})?$/, {
    message: () => "must be a decimal number written as a string, such as \"3\" or \"2.5\" (at most 12 digits before and 6 after the point)"
  }),
  Schema.brand("Sequence")
).annotations({ identifier: "Sequence", description: "decimal number as a string; lists are ordered by it" })
export type Sequence = typeof Sequence.Type

export const normalizeSequence = (s: string): Sequence =>
  Sequence.make(BigDecimal.format(BigDecimal.normalize(Option.getOrThrow(BigDecimal.fromString(s)))))

export const compareSequence = (a: string, b: string): -1 | 0 | 1 =>
  BigDecimal.Order(Option.getOrThrow(BigDecimal.fromString(a)), Option.getOrThrow(BigDecimal.fromString(b)))

/** The sequence right after `last`: the next whole number above it. */
export const sequenceAfter = (last: Option.Option<string>): Sequence =>
  Option.match(last, {
    onNone: () => Sequence.make("1"),
    onSome: (s) => {
      const value = Option.getOrThrow(BigDecimal.fromString(s))
      const floor = BigDecimal.scale(value, 0)
      const whole = BigDecimal.lessThanOrEqualTo(floor, value) ? floor : BigDecimal.subtract(floor, BigDecimal.fromBigInt(1n))
      return normalizeSequence(BigDecimal.format(BigDecimal.sum(whole, BigDecimal.fromBigInt(1n))))
    }
  })

/** An agenda item as stored. Talking points are private per person and stored apart. */
export class AgendaItemRow extends Schema.Class<AgendaItemRow>("AgendaItemRow")({
  id: AgendaItemId,
  workspace_id: WorkspaceId,
  meeting_id: MeetingId,
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  item_type: AgendaItemType,
  sequence: Sequence,
  presenters: Schema.Array(Schema.String),
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

export class PresenterDetail extends Schema.Class<PresenterDetail>("PresenterDetail")({
  user_id: Schema.String,
  name: Schema.optional(Schema.String),
  email: Schema.optional(Schema.String)
}) {}

/** An agenda item as the API shows it to one caller: with that caller's own talking points. */
export class AgendaItem extends Schema.Class<AgendaItem>("AgendaItem")({
  id: AgendaItemId,
  workspace_id: WorkspaceId,
  meeting_id: MeetingId,
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  item_type: AgendaItemType,
  sequence: Sequence,
  talking_points: Schema.Array(Schema.String),
  presenters: Schema.Array(Schema.String),
  presenter_details: Schema.Array(PresenterDetail),
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

