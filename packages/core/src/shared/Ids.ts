/**
 * Branded identifiers. Every id on the wire is a UUID string; the brand keeps a meeting id from being
 * passed where an agenda item id is expected. A UUID is read in either case and kept in lower case, the one
 * form every store compares (so `/v1/meetings/ABC…` finds the meeting `abc…` on every store alike).
 */
import { Schema } from "effect"

/** A UUID in lower case (decoding lower-cases it). */
export const Uuid = Schema.compose(Schema.Lowercase, Schema.UUID).annotations({
  identifier: "UUID",
  jsonSchema: { type: "string", format: "uuid" }
})

export const WorkspaceId = Uuid.pipe(Schema.brand("WorkspaceId"))
export type WorkspaceId = typeof WorkspaceId.Type

export const UserId = Uuid.pipe(Schema.brand("UserId"))
export type UserId = typeof UserId.Type

export const CredentialId = Uuid.pipe(Schema.brand("CredentialId"))
export type CredentialId = typeof CredentialId.Type

export const MeetingId = Uuid.pipe(Schema.brand("MeetingId"))
export type MeetingId = typeof MeetingId.Type

export const ParticipantId = Uuid.pipe(Schema.brand("ParticipantId"))
export type ParticipantId = typeof ParticipantId.Type

export const AgendaItemId = Uuid.pipe(Schema.brand("AgendaItemId"))
export type AgendaItemId = typeof AgendaItemId.Type

export const ActionItemId = Uuid.pipe(Schema.brand("ActionItemId"))
export type ActionItemId = typeof ActionItemId.Type

export const TemplateId = Uuid.pipe(Schema.brand("TemplateId"))
export type TemplateId = typeof TemplateId.Type

/** A calendar event's id: the id of the meeting it shows (calendar/CalendarEvent.ts). */
export const CalendarEventId = Uuid.pipe(Schema.brand("CalendarEventId"))
export type CalendarEventId = typeof CalendarEventId.Type
