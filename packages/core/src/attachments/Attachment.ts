/**
 * Meeting attachments: files kept on a meeting exactly as they were uploaded (never normalised, never scrubbed,
 * never read into AI prompts). The record holds what the upload said about the file (its name and media type),
 * its size and SHA-256; the bytes are in the BlobStore under the attachment's id.
 */
import { Schema } from "effect"
import { MeetingId, Uuid, WorkspaceId } from "../shared/Ids.js"
import { Timestamp } from "../shared/Time.js"

export const AttachmentId = Uuid.pipe(Schema.brand("AttachmentId"))
export type AttachmentId = typeof AttachmentId.Type

const fields = {
  id: AttachmentId,
  meeting_id: MeetingId,
  file_name: Schema.String.annotations({
    description: "the file name the upload gave (its last path segment), at most 255 characters"
  }),
  content_type: Schema.String.annotations({
    description: "the media type the upload declared for the file, parameters included; application/octet-stream when " +
      "it declared none or one that is not a valid media type"
  }),
  size: Schema.NonNegativeInt.annotations({ description: "length of the file in bytes" }),
  sha256: Schema.String.annotations({ description: "SHA-256 of the file's bytes, lower-case hex, computed as it was uploaded" }),
  created_at: Timestamp
}

/** An attachment as stored. */
export class AttachmentRow extends Schema.Class<AttachmentRow>("AttachmentRow")({
  ...fields,
  workspace_id: WorkspaceId
}) {}

/** An attachment as the API shows it. */
export class Attachment extends Schema.Class<Attachment>("Attachment")(fields) {
  static readonly of = (row: AttachmentRow): Attachment =>
    new Attachment({
      id: row.id,
      meeting_id: row.meeting_id,
      file_name: row.file_name,
      content_type: row.content_type,
      size: row.size,
      sha256: row.sha256,
      created_at: row.created_at
    }, { disableValidation: true })
}

/** The most a media type may be: longer ones are not kept (application/octet-stream instead). */
export const maxContentTypeLength = 255

// RFC 9110 section 8.3.1: type "/" subtype *( OWS ";" OWS parameter ), parameter = token "=" ( token / quoted-string ).
const token = "[!#$%&'*+.^_`|~0-9A-Za-z-]+"
const quoted = "\"(?:[\\t\\x20\\x21\\x23-\\x5B\\x5D-\\x7E\\x80-\\xFF]|\\\\[\\t\\x20-\\x7E\\x80-\\xFF])*\""
const mediaType = new RegExp(`^${token}/${token}(?:[ \\t]*;[ \\t]*${token}=(?:${token}|${quoted}))*$`)

/**
 * The media type an attachment is kept and served with: the declared one when it is a valid media type (RFC 9110,
 * parameters included, at most 255 characters), else `application/octet-stream`. Kept as declared otherwise:
 * a browser is told what the uploader said, and is kept from sniffing (`X-Content-Type-Options: nosniff`).
 */
export const sanitizeContentType = (declared: string | undefined): string => {
  const trimmed = declared?.trim() ?? ""
  return trimmed.length > 0 && trimmed.length <= maxContentTypeLength && mediaType.test(trimmed)
    ? trimmed
    : "application/octet-stream"
}

/** Controls and the characters that would pass for a directory separator or reorder text. */
const unsafe = /[\u0000-\u001F\u007F-\u009F\u200E\u200F\u202A-\u202E\u2066-\u2069]/g

/**
 * The name an attachment is kept under: the last path segment of the name the upload gave, without control
 * characters or bidirectional overrides, trimmed, at most 255 characters ("attachment" when nothing is left).
 * Only the name is cleaned; the bytes are kept as uploaded.
 */
export const attachmentFileName = (name: string): string => {
  const base = name.split(/[\\/]/).pop()!.replace(unsafe, "").trim()
  const cut = [...base].slice(0, 255).join("")
  return cut === "" ? "attachment" : cut
}
