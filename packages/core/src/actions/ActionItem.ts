import { Schema } from "effect"
import { ActionItemId, AgendaItemId, MeetingId, UserId, WorkspaceId } from "../shared/Ids.js"
import { CalendarDate, Timestamp } from "../shared/Time.js"

export const ActionItemStatus = Schema.Literal(
  "needs_review",
  "accepted",
  "in_progress",
  "blocked",
  "completed",
  "cancelled"
).annotations({ identifier: "ActionItemStatus" })
export type ActionItemStatus = typeof ActionItemStatus.Type

/**
 * The action item status machine (decisions.md). Any change not listed is a 409 `conflict`; setting the
 * status an item already has is not a change. A create may start in any status.
 */
export const actionItemTransitions: Record<ActionItemStatus, ReadonlyArray<ActionItemStatus>> = {
  needs_review: ["accepted", "cancelled"],
  accepted: ["in_progress", "blocked", "completed", "cancelled"],
  in_progress: ["blocked", "completed", "cancelled"],
  blocked: ["in_progress", "cancelled"],
  completed: ["in_progress"],
  cancelled: ["needs_review"]
}

export const canMove = (from: ActionItemStatus, to: ActionItemStatus): boolean =>
  from === to || actionItemTransitions[from].includes(to)

export class ActionItem extends Schema.Class<ActionItem>("ActionItem")({
  id: ActionItemId,
  workspace_id: WorkspaceId,
  meeting_id: MeetingId,
  agenda_item_id: Schema.NullOr(AgendaItemId),
  assigned_to_user_id: Schema.NullOr(UserId),
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  due_date: Schema.NullOr(CalendarDate),
  status: ActionItemStatus,
  is_completed: Schema.Boolean,
  completed_at: Schema.NullOr(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp
}) {}
