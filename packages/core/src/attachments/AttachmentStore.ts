import { Context, type Effect, type Option } from "effect"
import type { MeetingId, WorkspaceId } from "../shared/Ids.js"
import type { Page, Slice } from "../shared/Pagination.js"
import type { AttachmentId, AttachmentRow } from "./Attachment.js"

/**
 * Port: meeting attachments' records (their bytes are in the BlobStore, under the attachment's id). Every read
 * and write but `existing` is scoped by workspace. Lists are oldest first (created_at asc, id asc).
 */
export class AttachmentStore extends Context.Tag("@convene/core/AttachmentStore")<AttachmentStore, {
  readonly insert: (row: AttachmentRow) => Effect.Effect<void>
  readonly get: (workspaceId: WorkspaceId, id: AttachmentId) => Effect.Effect<Option.Option<AttachmentRow>>
  /** A page of the meeting's attachments, oldest first. */
  readonly list: (workspaceId: WorkspaceId, meetingId: MeetingId, page: Page) => Effect.Effect<Slice<AttachmentRow>>
  /** Deletes the record; answers whether it existed. */
  readonly delete: (workspaceId: WorkspaceId, id: AttachmentId) => Effect.Effect<boolean>
  /** Deletes every record of the meeting. */
  readonly deleteByMeeting: (workspaceId: WorkspaceId, meetingId: MeetingId) => Effect.Effect<void>
  /** Deletes every record of the workspace. */
  readonly deleteByWorkspace: (workspaceId: WorkspaceId) => Effect.Effect<void>
  /** Which of the ids have a record, in any workspace (the blob sweep keeps their blobs). */
  readonly existing: (ids: ReadonlyArray<AttachmentId>) => Effect.Effect<ReadonlySet<AttachmentId>>
}>() {}
