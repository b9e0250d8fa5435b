/** The meeting attachments group: files kept on a meeting byte for byte as uploaded. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import { Attachment, AttachmentId, MeetingId, Pagination } from "@convene/core"
import { Effect, FiberRef, ParseResult, Schema } from "effect"
import { Envelope, envelope, Forbidden, Missing } from "./Errors.js"
import { PageParams } from "./Query.js"
import { CurrentRequestId } from "./RequestId.js"
import { Authenticate } from "./Security.js"

const MeetingPath = Schema.Struct({ id: MeetingId })
const AttachmentPath = Schema.Struct({ id: MeetingId, attachment_id: AttachmentId })

export const AttachmentList = Pagination.ListOf(Attachment).annotations({ identifier: "AttachmentList" })

/** The multipart form of an upload (for the document: the host streams the body itself, see http/Attachments.ts). */
export const AttachmentUploadForm = Schema.Struct({
  file: Schema.String.annotations({
    description: "the file, any type; kept byte for byte",
    jsonSchema: { type: "string", format: "binary" }
  })
}).annotations({ identifier: "AttachmentUpload" })

/** The Range header of a download asks for bytes the attachment does not have (416). */
export class RangeNotSatisfiable extends Schema.TaggedError<RangeNotSatisfiable>()("RangeNotSatisfiable", {
  /** The attachment's size, for `Content-Range: bytes * /size`. */
  size: Schema.Number,
  message: Schema.String
}) {}

/** 416 in the envelope, with `Content-Range: bytes * /<size>` (RFC 9110 section 15.5.17). */
export const RangeNotSatisfiableWire = Schema.transformOrFail(
  Envelope(
    "RangeNotSatisfiable",
    ["range_not_satisfiable"],
    "the Range header asks only for bytes past the end of the file; Content-Range tells its size"
  ),
  Schema.typeSchema(RangeNotSatisfiable),
  {
    strict: true,
    decode: (body) => ParseResult.succeed(new RangeNotSatisfiable({ size: 0, message: body.error })),
    encode: (error) =>
      Effect.gen(function*() {
        yield* HttpApp.appendPreResponseHandler((_, response) =>
          Effect.succeed(HttpServerResponse.setHeader(response, "content-range", `bytes */${error.size}`))
        )
        return envelope("range_not_satisfiable", error.message, yield* FiberRef.get(CurrentRequestId))
      })
  }
).annotations(HttpApiSchema.annotations({ status: 416 }))

/** A download's body: the file's bytes with its own media type (documented as binary). */
const FileBytes = Schema.Uint8ArrayFromSelf.pipe(
  HttpApiSchema.withEncoding({ kind: "Uint8Array", contentType: "application/octet-stream" })
).annotations({ description: "the file's bytes, with the attachment's `content_type` as Content-Type" })

export const uploadDescription =
  "Uploads one file as an attachment of the meeting: `multipart/form-data` with the file in the field `file` (other " +
  "text fields are ignored; a second file, or `file` sent as a text field, is 400 `validation_error`; no `file` is " +
  "400 `validation_error`; a body that is not multipart/form-data is 415 `unsupported_media_type`; a malformed " +
  "multipart body is 400 `bad_request`). The file is kept byte for byte as uploaded: never normalised, never scrubbed, " +
  "never used in AI prompts. Idempotency-Key is not honoured. Answers 201 with the attachment and records the event " +
  "`attachment.uploaded` with it. Meeting OWNER or EDITOR, or a workspace admin; an ended meeting still takes " +
  "attachments. Scope meetings:write. The whole request must arrive within the server's request timeout " +
  "(CONVENE_REQUEST_TIMEOUT_MS, 30 s by default; then 408).\n\n" +
  "**Size.** At most CONVENE_MAX_UPLOAD_BYTES bytes of file (default 25 MiB, 26214400); a larger file, or a body " +
  "declaring (Content-Length) more than that plus 1 MiB for the form around it, is 413 `payload_too_large`. The " +
  "server reads and drops the rest of such a body, then closes the connection, so the client can read the 413. Text " +
  "fields may be at most 64 KiB each, and a body at most 32 parts (else 400 `bad_request`).\n\n" +
  "**Name and type.** `file_name` is the part's `filename` (read as UTF-8; `%22`, `%0D` and `%0A` are read as the " +
  "quote, CR and LF browsers encode that way; an RFC 8187 `filename*=UTF-8''...` wins), without any directory part " +
  "(after the last `/` or `\\`) or control characters, at most 255 characters. `content_type` is the part's Content-Type as sent, " +
  "parameters included, when it is a valid media type (RFC 9110); otherwise, or when none was sent, " +
  "`application/octet-stream`.\n\n" +
  "**Integrity.** `sha256` is the SHA-256 of the bytes, computed while they were stored. The record is written only " +
  "once every byte is stored; an upload that fails on the way leaves nothing behind."

export const downloadDescription =
  "The attachment's bytes exactly as uploaded, with the attachment's `content_type` as Content-Type, " +
  "`Content-Disposition: attachment` with the file name (a quoted ASCII `filename` with other characters replaced " +
  "by `_`, and the exact name as RFC 5987 `filename*=UTF-8''...`), `X-Content-Type-Options: nosniff`, " +
  "`Accept-Ranges: bytes`, an `ETag` (the SHA-256) and `Repr-Digest: sha-256=:<base64>:` (RFC 9530). Scope " +
  "meetings:read.\n\n" +
  "**Ranges.** A `Range` header with one byte range (`bytes=0-99`, `bytes=100-`, `bytes=-100`) answers 206 with " +
  "`Content-Range`; a range reaching past the end is cut at the end. A range that starts past the end is 416 " +
  "`range_not_satisfiable` in the envelope with `Content-Range: bytes */<size>`. A header asking for several ranges, " +
  "a unit other than `bytes`, or a malformed one is ignored: the whole file is answered with 200 (RFC 9110 allows " +
  "a server to ignore Range). With `If-Range`, the range is served only when it equals the ETag; otherwise 200 with " +
  "the whole file.\n\n" +
  "**Integrity.** A whole-file answer is checked against the recorded size and SHA-256 as it streams; if the stored " +
  "bytes do not match, the connection is closed before the body is complete (the client sees a cut-off answer, " +
  "never a corrupted file as complete). A range is checked only against the stored size; check an assembled file " +
  "against `sha256`."

export class AttachmentsApi extends HttpApiGroup.make("attachments")
  .add(
    HttpApiEndpoint.get("list", "/meetings/:id/attachments")
      .setPath(MeetingPath)
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(AttachmentList)
      .addError(Missing)
      .annotate(OpenApi.Summary, "List a meeting's attachments")
      .annotate(
        OpenApi.Description,
        "The meeting's attachments, oldest first (404 when the meeting is missing or not visible). Scope meetings:read."
      )
  )
  .add(
    HttpApiEndpoint.post("upload", "/meetings/:id/attachments")
      .setPath(MeetingPath)
      .setPayload(HttpApiSchema.MultipartStream(AttachmentUploadForm))
      .addSuccess(Attachment, { status: 201 })
      .addError(Missing)
      .annotate(OpenApi.Summary, "Upload an attachment")
      .annotate(OpenApi.Description, uploadDescription)
  )
  .add(
    HttpApiEndpoint.get("get", "/meetings/:id/attachments/:attachment_id")
      .setPath(AttachmentPath)
      .addSuccess(Attachment)
      .addError(Missing)
      .annotate(OpenApi.Summary, "Get an attachment")
      .annotate(
        OpenApi.Description,
        "The attachment's record (404 when the meeting is not visible or the attachment is not on it). Scope meetings:read."
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/meetings/:id/attachments/:attachment_id")
      .setPath(AttachmentPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Missing)
      .annotate(OpenApi.Summary, "Delete an attachment")
      .annotate(
        OpenApi.Description,
        "Deletes the attachment and its bytes; 204 with no body. Meeting OWNER or EDITOR, or a workspace admin. Scope " +
          "meetings:write."
      )
  )
  .add(
    HttpApiEndpoint.get("download", "/meetings/:id/attachments/:attachment_id/download")
      .setPath(AttachmentPath)
      .addSuccess(FileBytes)
      .addSuccess(FileBytes, { status: 206 })
      .addError(Missing)
      .addError(RangeNotSatisfiableWire)
      .annotate(OpenApi.Summary, "Download an attachment")
      .annotate(OpenApi.Description, downloadDescription)
  )
  .middleware(Authenticate)
  .addError(Forbidden)
  .prefix("/v1")
  .annotate(OpenApi.Title, "Meeting attachments")
  .annotate(
    OpenApi.Description,
    "Files kept on a meeting byte for byte as uploaded (never normalised, never scrubbed, never used in AI prompts). " +
      "Attachments follow their meeting: whoever sees the meeting lists and downloads them (scope meetings:read), " +
      "whoever may change it uploads and deletes them (meetings:write). Deleting the meeting or its workspace deletes " +
      "its attachments; their bytes are removed from storage within about an hour.\n\n" +
      "**Storage.** The bytes are kept by the server's blob store, chosen with the store: in memory with the memory " +
      "store, as files under CONVENE_DATA_DIR (`convene-blobs`) with the embedded PostgreSQL, and in the database " +
      "(in chunks, so that several server processes sharing it see every file) with a PostgreSQL server. " +
      "CONVENE_BLOB_STORE=filesystem or =database overrides the default of a PostgreSQL store."
  )
{}
