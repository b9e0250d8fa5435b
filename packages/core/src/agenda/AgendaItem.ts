import { BigDecimal, Option, Schema } from "effect"
import { AgendaItemType } from "../shared/AgendaItemType.js"
import { AgendaItemId, MeetingId, UserId, WorkspaceId } from "../shared/Ids.js"
import { Timestamp } from "../shared/Time.js"

/** The largest sequence magnitude: 12 digits before the point. */
const limit = BigDecimal.fromBigInt(10n ** 12n)

/**
 * An agenda item's position: a decimal number sent as a string ("1", "2.5", "-3") with at most 12 digits
 * before the point and 6 after, so every sequence lies strictly between -10^12 and 10^12. Stored and
 * answered in normalised form ("2.50" becomes "2.5"). Lists are ordered by its numeric value.
 */
export const Sequence = Schema.String.pipe(
  Schema.pattern(/^-?\d{1,12}(\.\d{1,6})?$/, {
    message: () =>
      "must be a decimal number written as a string, such as \"3\" or \"2.5\", with at most 12 digits before the point and 6 after"
  }),
  Schema.brand("Sequence")
).annotations({
  identifier: "Sequence",
  description: "decimal number as a string (at most 12 digits before the point, 6 after); lists are ordered by it"
})
export type Sequence = typeof Sequence.Type

const parse = (s: string): BigDecimal.BigDecimal => Option.getOrThrow(BigDecimal.fromString(s))

const format = (value: BigDecimal.BigDecimal): Sequence => Sequence.make(BigDecimal.format(BigDecimal.normalize(value)))

export const normalizeSequence = (s: string): Sequence => format(parse(s))

export const compareSequence = (a: string, b: string): -1 | 0 | 1 => BigDecimal.Order(parse(a), parse(b))

/**
 * Where an appended item goes: the next whole number above `last` ("1" on an empty agenda), or none when
 * that number would leave the range (the agenda is then renumbered first, see `numbered`).
 */
export const sequenceAfter = (last: Option.Option<string>): Option.Option<Sequence> => {
  if (Option.isNone(last)) return Option.some(Sequence.make("1"))
  const value = parse(last.value)
  const floor = BigDecimal.scale(value, 0)
  const whole = BigDecimal.lessThanOrEqualTo(floor, value) ? floor : BigDecimal.subtract(floor, BigDecimal.fromBigInt(1n))
  const next = BigDecimal.sum(whole, BigDecimal.fromBigInt(1n))
  return BigDecimal.lessThan(next, limit) ? Option.some(format(next)) : Option.none()
}

/** The sequence of the item at `index` (from 0) of an agenda numbered 1, 2, 3, ... in its order. */
export const numbered = (index: number): Sequence => Sequence.make(String(index + 1))

/** An agenda item as stored. Talking points are private per person and stored apart. */
export class AgendaItemRow extends Schema.Class<AgendaItemRow>("AgendaItemRow")({
  id: AgendaItemId,
  workspace_id: WorkspaceId,
  meeting_id: MeetingId,
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  item_type: AgendaItemType,
  sequence: Sequence,
  presenters: Schema.Array(UserId),
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

export class PresenterDetail extends Schema.Class<PresenterDetail>("PresenterDetail")({
  user_id: UserId,
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
  presenters: Schema.Array(UserId),
  presenter_details: Schema.Array(PresenterDetail),
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

