/**
 * Branded identifiers. Every id on the wire is a UUID string; the brand keeps a meeting id from being
 * passed where an agenda item id is expected.
 */
import { Schema } from "effect"

export const WorkspaceId = Schema.UUID.pipe(Schema.brand("WorkspaceId"))
export type WorkspaceId = typeof WorkspaceId.Type

export const UserId = Schema.UUID.pipe(Schema.brand("UserId"))
export type UserId = typeof UserId.Type

export const CredentialId = Schema.UUID.pipe(Schema.brand("CredentialId"))
export type CredentialId = typeof CredentialId.Type

export const MeetingId = Schema.UUID.pipe(Schema.brand("MeetingId"))
export type MeetingId = typeof MeetingId.Type

export const ParticipantId = Schema.UUID.pipe(Schema.brand("ParticipantId"))
export type ParticipantId = typeof ParticipantId.Type

export const AgendaItemId = Schema.UUID.pipe(Schema.brand("AgendaItemId"))
export type AgendaItemId = typeof AgendaItemId.Type

export const ActionItemId = Schema.UUID.pipe(Schema.brand("ActionItemId"))
export type ActionItemId = typeof ActionItemId.Type

export const TemplateId = Schema.UUID.pipe(Schema.brand("TemplateId"))
export type TemplateId = typeof TemplateId.Type
