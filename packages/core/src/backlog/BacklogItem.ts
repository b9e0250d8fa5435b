/**
 * Backlog items: agenda items not (yet) attached to a meeting, kept by the workspace. An item is `open` while it
 * waits in the backlog; assigning it to a meeting makes it `assigned` (a new agenda item takes its place on the
 * meeting), deleting it makes it `deleted`. Closed items stay as the backlog's history.
 */
import { Schema } from "effect"
import { AgendaItem, PresenterDetail } from "../agenda/AgendaItem.js"
import { MeetingId, UserId, Uuid, WorkspaceId } from "../shared/Ids.js"
import { Timestamp } from "../shared/Time.js"

export const BacklogItemId = Uuid.pipe(Schema.brand("BacklogItemId"))
export type BacklogItemId = typeof BacklogItemId.Type

/** `open` (in the backlog), `assigned` (moved to a meeting's agenda) or `deleted` (removed from the backlog). */
export const BacklogItemStatus = Schema.Literal("open", "assigned", "deleted").annotations({
  identifier: "BacklogItemStatus",
  description: "open: in the backlog; assigned: moved to a meeting's agenda; deleted: removed from the backlog"
})
export type BacklogItemStatus = typeof BacklogItemStatus.Type

/**
 * A backlog item as stored, open or closed. Talking points are private per person and stored apart. A closed item
 * keeps when and how it was closed: `assigned_at` and `destination_meeting_id`, or `deleted_at`.
 */
export class BacklogItemRow extends Schema.Class<BacklogItemRow>("BacklogItemRow")({
  id: BacklogItemId,
  workspace_id: WorkspaceId,
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  presenters: Schema.Array(UserId),
  status: BacklogItemStatus,
  created_at: Timestamp,
  updated_at: Timestamp,
  assigned_at: Schema.NullOr(Timestamp),
  destination_meeting_id: Schema.NullOr(MeetingId),
  deleted_at: Schema.NullOr(Timestamp)
}) {}

/** When a closed item was closed (assigned or deleted); none for an open one. */
export const closedAt = (row: BacklogItemRow) => row.assigned_at ?? row.deleted_at

const itemFields = {
  id: BacklogItemId,
  workspace_id: WorkspaceId,
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  talking_points: Schema.Array(Schema.String),
  presenters: Schema.Array(UserId),
  presenter_details: Schema.Array(PresenterDetail),
  status: BacklogItemStatus,
  created_at: Timestamp,
  updated_at: Timestamp
}

/** An open backlog item as the API shows it to one caller: with that caller's own talking points. */
export class BacklogItem extends Schema.Class<BacklogItem>("BacklogItem")(itemFields) {}

/** A closed backlog item (assigned or deleted) as the history shows it to one caller. */
export class BacklogHistoryItem extends Schema.Class<BacklogHistoryItem>("BacklogHistoryItem")({
  ...itemFields,
  assigned_at: Schema.NullOr(Timestamp),
  destination_meeting_id: Schema.NullOr(MeetingId),
  deleted_at: Schema.NullOr(Timestamp)
}) {}

/** The answer of an assignment: the new agenda item, and the backlog item as it now reads in the history. */
export class BacklogAssignment extends Schema.Class<BacklogAssignment>("BacklogAssignment")({
  agenda_item: AgendaItem,
  backlog_item: BacklogHistoryItem
}) {}
