import { Schema } from "effect"
import { MeetingId, ParticipantId, TemplateId, UserId, WorkspaceId } from "../shared/Ids.js"
import { Email } from "../shared/Text.js"
import { Timestamp } from "../shared/Time.js"
import { DetailLevel } from "../workspaces/Workspace.js"

export const MeetingStatus = Schema.Literal("scheduled", "in_progress", "ended", "cancelled").annotations({
  identifier: "MeetingStatus"
})
export type MeetingStatus = typeof MeetingStatus.Type

export class Meeting extends Schema.Class<Meeting>("Meeting")({
  id: MeetingId,
  workspace_id: WorkspaceId,
  title: Schema.String,
  status: MeetingStatus,
  start_time: Schema.NullOr(Timestamp),
  end_time: Schema.NullOr(Timestamp),
  is_instant: Schema.Boolean,
  detail_level: DetailLevel,
  template_id: Schema.NullOr(TemplateId),
  owner_user_id: Schema.NullOr(UserId),
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

/**
 * Allowed status changes. `ended` is final; a cancelled meeting can be put back on the schedule.
 * Setting the status a meeting already has is not a change and is always allowed.
 */
export const meetingTransitions: Record<MeetingStatus, ReadonlyArray<MeetingStatus>> = {
  scheduled: ["in_progress", "ended", "cancelled"],
  in_progress: ["ended", "cancelled"],
  ended: [],
  cancelled: ["scheduled"]
}

export const ParticipantRole = Schema.Literal("OWNER", "EDITOR", "VIEWER").annotations({ identifier: "ParticipantRole" })
export type ParticipantRole = typeof ParticipantRole.Type

/** A participant as stored: a workspace user, or a guest known only by e-mail. */
export class ParticipantRow extends Schema.Class<ParticipantRow>("ParticipantRow")({
  id: ParticipantId,
  workspace_id: WorkspaceId,
  meeting_id: MeetingId,
  user_id: Schema.NullOr(UserId),
  guest_email: Schema.NullOr(Email),
  role: ParticipantRole,
  is_attended: Schema.Boolean,
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

/** A participant as the API shows it: name and e-mail come from the user record (or the guest address). */
export class Participant extends Schema.Class<Participant>("Participant")({
  id: ParticipantId,
  meeting_id: MeetingId,
  user_id: Schema.NullOr(UserId),
  name: Schema.String,
  email: Schema.String,
  role: ParticipantRole,
  is_attended: Schema.Boolean,
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

/** Someone the meeting's participants can be reached at. */
export class Contact extends Schema.Class<Contact>("Contact")({
  user_id: Schema.NullOr(UserId),
  name: Schema.String,
  email: Schema.String,
  is_guest: Schema.Boolean
}) {}

/** One spoken segment of a meeting's transcript, `offset_ms` after the meeting started. */
export class TranscriptSegment extends Schema.Class<TranscriptSegment>("TranscriptSegment")({
  meeting_id: MeetingId,
  offset_ms: Schema.NonNegativeInt,
  speaker: Schema.String,
  text: Schema.String,
  created_at: Timestamp
}) {}
