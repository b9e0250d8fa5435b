/**
 * Meeting context: files uploaded to a meeting to inform its AI prompts (an agenda document, notes, a
 * transcript). Only their normalised, PII-scrubbed text is kept (see Normalize.ts and Scrubber.ts); the upload
 * itself is never stored.
 */
import { Schema } from "effect"
import { MeetingId, Uuid, WorkspaceId } from "../shared/Ids.js"
import { Timestamp } from "../shared/Time.js"
import { trusted } from "../shared/Trusted.js"

export const ContextItemId = Uuid.pipe(Schema.brand("ContextItemId"))
export type ContextItemId = typeof ContextItemId.Type

/** What an upload is to the meeting: `document` (the default), `notes` or `transcript` (WebVTT or SRT). */
export const ContextKind = Schema.Literal("document", "notes", "transcript").annotations({
  identifier: "ContextKind",
  description: "document (default), notes, or transcript (WebVTT or SRT, which also feeds the meeting's transcript)"
})
export type ContextKind = typeof ContextKind.Type

const fields = {
  id: ContextItemId,
  meeting_id: MeetingId,
  kind: ContextKind,
  file_name: Schema.String.annotations({ description: "the uploaded file's name without any directory part, at most 255 characters, PII-scrubbed like the text" }),
  content_type: Schema.String.annotations({
    description: "the upload's media type as the service detected it (text/plain, text/markdown, text/vtt, " +
      "application/x-subrip, application/pdf or the DOCX type), not as declared"
  }),
  size: Schema.NonNegativeInt.annotations({
    description: "length in bytes (UTF-8) of the stored text: the normalised, scrubbed text that /content answers, " +
      "not the size of the upload (which is not kept)"
  }),
  created_at: Timestamp
}

/** A context item as stored (its text is stored beside it and read only through ContextForPrompt). */
export class ContextItemRow extends Schema.Class<ContextItemRow>("ContextItemRow")({
  ...fields,
  workspace_id: WorkspaceId
}) {}

/** A context item as the API shows it. */
export class ContextItem extends Schema.Class<ContextItem>("ContextItem")(fields) {
  static readonly of = (row: ContextItemRow): ContextItem =>
    new ContextItem({
      id: row.id,
      meeting_id: row.meeting_id,
      kind: row.kind,
      file_name: row.file_name,
      content_type: row.content_type,
      size: row.size,
      created_at: row.created_at
    }, trusted)
}
