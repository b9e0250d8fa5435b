/** The meeting context group: uploads normalised to text and PII-scrubbed, for the meeting's AI prompts. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { ContextItem, ContextItemId, ContextKind, MeetingId, Pagination } from "@convene/core"
import { Schema } from "effect"
import { Forbidden, Missing } from "./Errors.js"
import { PageParams } from "./Query.js"
import { Authenticate } from "./Security.js"

const MeetingPath = Schema.Struct({ id: MeetingId })
const ItemPath = Schema.Struct({ id: MeetingId, context_id: ContextItemId })

export const ContextItemList = Pagination.ListOf(ContextItem).annotations({ identifier: "ContextItemList" })

/** The multipart form of an upload (for the document: the host reads the body itself, see http/Context.ts). */
export const ContextUploadForm = Schema.Struct({
  file: Schema.String.annotations({
    jsonSchema: {
      type: "string",
      format: "binary",
      description: "the file: plain text, Markdown, WebVTT or SRT in UTF-8, PDF or DOCX (at most 25 MiB)"
    }
  }),
  kind: Schema.optional(ContextKind)
}).annotations({ identifier: "ContextUpload" })

/** What the upload's description says about detection, normalisation and scrubbing (also in docs). */
export const uploadDescription =
  "Uploads one file as context of the meeting: `multipart/form-data` with the file in the field `file` and optionally " +
  "the text field `kind` (`document`, the default, `notes` or `transcript`; anything else is 400). Idempotency-Key is " +
  "not honoured. Answers 201 with the item. Meeting OWNER or EDITOR, or a workspace admin. Scope meetings:write. The file " +
  "may be at most 25 MiB (the server's upload cap, CONVENE_MAX_UPLOAD_BYTES; 413 `payload_too_large` beyond it), and " +
  "its text at most 5 MiB: a text file of more than 5 MiB, or a PDF or DOCX whose text runs past 5 Mi characters, is " +
  "413 `payload_too_large` too (a prompt never takes as much; the limit bounds the work one upload costs).\n\n" +
  "**Type.** Decided by the file's first bytes, not by its name or declared type alone: `%PDF-` is a PDF and a ZIP " +
  "archive is read as DOCX (a ZIP holding no Word document is 415). Other binary files (images, audio, video, " +
  "archives, executables, legacy .doc, UTF-16 text) and any upload declared as image/*, audio/*, video/* or font/* " +
  "are 415 `unsupported_media_type`. Everything else must be UTF-8 text without NUL bytes (else 415); the declared " +
  "charset is not read. Text is plain text, Markdown (.md, text/markdown), WebVTT (.vtt, text/vtt or a `WEBVTT` first " +
  "line) or SRT (.srt, application/x-subrip): the item's `content_type` names what was detected. A PDF or DOCX that " +
  "cannot be read (damaged, password-protected, or a DOCX that would expand to more than 256 MiB or hold more " +
  "than 16 MiB of XML) is 400 `validation_error`, and so is an upload that holds no text " +
  "(such as a scanned PDF without a text layer).\n\n" +
  "The server prepares uploads in worker processes (CONVENE_CONTEXT_WORKERS), so a large one does not hold up " +
  "other requests.\n\n" +
  "**Normalisation.** Unicode NFC; every line ending becomes LF; control characters and byte order marks are dropped; " +
  "runs of white space inside a line become one space (a line's indentation is kept, tabs as four spaces); trailing " +
  "white space is trimmed; more than one blank line in a row becomes one; the text ends with one LF.\n\n" +
  "**PII scrubbing.** Then each of these is replaced by its placeholder, and only the scrubbed text is stored (the " +
  "upload itself is never kept): `[SECRET]` API tokens and keys (Convene's own `svc_..._v1_` tokens and `whsec_` " +
  "secrets, GitHub `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_`/`github_pat_`, AWS `AKIA`/`ASIA` key ids, Slack `xox*-`/`xapp-`, " +
  "Stripe `sk_live_`/`sk_test_`/`rk_*`, OpenAI-style `sk-`, Google `AIza`, JSON Web Tokens, PEM private keys); " +
  "`[EMAIL]` e-mail addresses; `[IBAN]` IBANs (country length and mod-97 checked); `[CARD]` payment card numbers " +
  "(known issuer prefix, Luhn-checked); `[NATIONAL_ID]` US Social Security numbers (dashed or spaced), UK National " +
  "Insurance numbers, Canadian SINs (Luhn-checked) and Spanish DNI/NIE numbers (control letter checked); `[IP]` IPv4 " +
  "and IPv6 addresses; `[PHONE]` telephone numbers that libphonenumber-js confirms as valid (international numbers " +
  "of any country, US and Canadian national numbers written 3-3-4 or as 10 digits, UK national numbers with their " +
  "trunk 0). Names, postal addresses and dates of birth are " +
  "not detected.\n\n" +
  "**Transcripts.** With `kind=transcript` the file must be WebVTT or SRT (else 400 `validation_error`, also when no " +
  "cue can be read). Each cue line's speaker comes from a WebVTT voice tag (`<v Alice>`) or a `Speaker: text` prefix " +
  "(else \"Unknown speaker\"); cue markup is dropped. The cues, scrubbed the same way, are appended to the meeting's " +
  "transcript (GET /v1/meetings/{id}/transcript/export) at their start times, in the same transaction; the item's " +
  "text is the scrubbed transcript, one `[hh:mm:ss] Speaker: text` line per segment. Deleting the item later does not " +
  "take the lines out of the meeting's transcript.\n\n" +
  "**Item.** `file_name` is the uploaded name (without directories, at most 255 characters, scrubbed like the " +
  "text); `content_type` is the " +
  "detected type; `size` is the length in bytes of the stored text (what /content answers), not of the upload. " +
  "Records the event `context.uploaded` with the item."

export class ContextApi extends HttpApiGroup.make("context")
  .add(
    HttpApiEndpoint.get("list", "/meetings/:id/context")
      .setPath(MeetingPath)
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(ContextItemList)
      .addError(Missing)
      .annotate(OpenApi.Summary, "List a meeting's context")
      .annotate(
        OpenApi.Description,
        "The meeting's context items, oldest first (404 when the meeting is missing or not visible). Scope meetings:read."
      )
  )
  .add(
    HttpApiEndpoint.post("upload", "/meetings/:id/context")
      .setPath(MeetingPath)
      .setPayload(HttpApiSchema.MultipartStream(ContextUploadForm))
      .addSuccess(ContextItem, { status: 201 })
      .addError(Missing)
      .annotate(OpenApi.Summary, "Upload meeting context")
      .annotate(OpenApi.Description, uploadDescription)
  )
  .add(
    HttpApiEndpoint.get("get", "/meetings/:id/context/:context_id")
      .setPath(ItemPath)
      .addSuccess(ContextItem)
      .addError(Missing)
      .annotate(OpenApi.Summary, "Get a context item")
      .annotate(
        OpenApi.Description,
        "The context item (404 when the meeting is not visible or the item is not on it). Scope meetings:read."
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/meetings/:id/context/:context_id")
      .setPath(ItemPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Missing)
      .annotate(OpenApi.Summary, "Delete a context item")
      .annotate(
        OpenApi.Description,
        "Deletes the item and its text; 204 with no body. Lines a transcript upload added to the meeting's transcript " +
          "stay. Meeting OWNER or EDITOR, or a workspace admin. Scope meetings:write."
      )
  )
  .add(
    HttpApiEndpoint.get("content", "/meetings/:id/context/:context_id/content")
      .setPath(ItemPath)
      .addSuccess(
        Schema.String.annotations({ description: "the item's normalised, PII-scrubbed text" }).pipe(
          HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/plain; charset=utf-8" })
        )
      )
      .addError(Missing)
      .annotate(OpenApi.Summary, "Download a context item's text")
      .annotate(
        OpenApi.Description,
        "The item's normalised, PII-scrubbed text as `text/plain; charset=utf-8`: exactly what an AI prompt of the " +
          "meeting is given (the upload itself is not kept). Scope meetings:read."
      )
  )
  .middleware(Authenticate)
  .addError(Forbidden)
  .prefix("/v1")
  .annotate(OpenApi.Title, "Meeting context")
  .annotate(
    OpenApi.Description,
    "Files uploaded to a meeting to inform its AI prompts, kept only as normalised, PII-scrubbed text. Context items " +
      "follow their meeting: whoever sees the meeting reads them (scope meetings:read), whoever may change it uploads " +
      "and deletes them (meetings:write). Unlike attachments, context is never kept as uploaded."
  )
{}
