/**
 * The meeting attachments handlers. Uploads stream from the request to the blob store (Uploads.streamUpload, read
 * only once core has checked the caller may change the meeting); downloads stream from the blob store to the
 * response, as the whole file or one byte range (`rangeOf`), with the file name in `Content-Disposition`
 * (`contentDisposition`). What the API promises is in api/Attachments.ts (the OpenAPI descriptions).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Attachments } from "@convene/core"
import { Effect, type Stream } from "effect"
import { Api } from "@convene/api/Api"
import { AttachmentsApi, RangeNotSatisfiable } from "@convene/api/Attachments"
import { encoded } from "./Encoded.js"
import { asCaller } from "./Security.js"
import { streamUpload } from "./Uploads.js"

/** What a download answers, as the Range header (and If-Range) ask. */
export type RangeAnswer =
  | { readonly _tag: "Whole" }
  | { readonly _tag: "Part"; readonly offset: number; readonly end: number }
  | { readonly _tag: "Unsatisfiable" }

const whole: RangeAnswer = { _tag: "Whole" }

/**
 * The answer to a `Range` header for a file of `size` bytes (RFC 9110 section 14): one byte range is served (a last
 * byte past the end is cut to the end); a range starting past the end, or an empty suffix, is unsatisfiable; several
 * ranges, another unit or a malformed header are ignored (the whole file).
 */
export const rangeOf = (header: string | undefined, size: number): RangeAnswer => {
  if (header === undefined) return whole
  const match = /^\s*bytes\s*=\s*(.*)$/i.exec(header)
  if (match === null) return whole
  const specs = match[1]!.split(",").map((spec) => spec.trim()).filter((spec) => spec.length > 0)
  if (specs.length !== 1) return whole
  const spec = /^(\d*)\s*-\s*(\d*)$/.exec(specs[0]!)
  if (spec === null) return whole
  const [, first, last] = spec
  if (first === "" && last === "") return whole
  if (first === "") {
    const suffix = Number(last)
    if (suffix === 0) return { _tag: "Unsatisfiable" }
    // An empty file has no bytes to send as a part: the whole (empty) file answers.
    return size === 0 ? whole : { _tag: "Part", offset: Math.max(0, size - suffix), end: size }
  }
  const offset = Number(first)
  if (last !== "" && Number(last) < offset) return whole
  if (offset >= size) return { _tag: "Unsatisfiable" }
  return { _tag: "Part", offset, end: last === "" ? size : Math.min(size, Number(last) + 1) }
}

// Lone surrogates (which encodeURIComponent refuses) become U+FFFD.
const wellFormed = (text: string) =>
  text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD")

/**
 * `Content-Disposition: attachment` for a file name (RFC 6266): `filename` holds the name in printable ASCII with
 * every other character (and `"`, `\`, `%`) as `_`; `filename*` holds the exact name as UTF-8, percent-encoded
 * (RFC 8187 attr-chars only). Neither can carry a quote, CR or LF, so no name can end the header or add another.
 */
export const contentDisposition = (fileName: string): string => {
  const name = wellFormed(fileName)
  const fallback = [...name].map((char) => (/^[\x20-\x7E]$/.test(char) && !/["\\%]/.test(char) ? char : "_")).join("")
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`)
  return `attachment; filename="${fallback === "" ? "attachment" : fallback}"; filename*=UTF-8''${encoded}`
}

/**
 * The answer to a download of `file`: the whole file (200) or the one byte range asked for (206), as `rangeOf`
 * and `If-Range` decide, with the headers every download carries; `unsatisfiable` answers a range past the end
 * (the API's own 416).
 */
export const downloadAnswer = <E>(
  file: {
    readonly attachment: { readonly sha256: string; readonly size: number; readonly file_name: string; readonly content_type: string }
    readonly content: (range?: { readonly offset: number; readonly end: number }) => Stream.Stream<Uint8Array>
  },
  unsatisfiable: (size: number) => Effect.Effect<HttpServerResponse.HttpServerResponse, E>
) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const { attachment, content } = file
    const etag = `"${attachment.sha256}"`
    const ifRange = request.headers["if-range"]
    const answer = ifRange === undefined || ifRange.trim() === etag
      ? rangeOf(request.headers["range"], attachment.size)
      : whole
    if (answer._tag === "Unsatisfiable") return yield* unsatisfiable(attachment.size)
    const headers = {
      "content-disposition": contentDisposition(attachment.file_name),
      "x-content-type-options": "nosniff",
      // A file opened in the browser anyway runs nothing and loads nothing.
      "content-security-policy": "default-src 'none'; sandbox",
      "cache-control": "private, no-cache",
      "accept-ranges": "bytes",
      etag,
      "repr-digest": `sha-256=:${Buffer.from(attachment.sha256, "hex").toString("base64")}:`
    }
    return answer._tag === "Whole"
      ? HttpServerResponse.stream(content(), {
        status: 200,
        contentType: attachment.content_type,
        contentLength: attachment.size,
        headers
      })
      : HttpServerResponse.stream(content({ offset: answer.offset, end: answer.end }), {
        status: 206,
        contentType: attachment.content_type,
        contentLength: answer.end - answer.offset,
        headers: { ...headers, "content-range": `bytes ${answer.offset}-${answer.end - 1}/${attachment.size}` }
      })
  })

/** The upload of the request being served, as core takes it (opened only when core asks, after the access checks). */
export const openUpload = Effect.map(streamUpload, (upload) => ({
  fileName: upload.fileName,
  contentType: upload.contentType,
  content: upload.content
}))

const answers = {
  list: encoded(AttachmentsApi, "list"),
  get: encoded(AttachmentsApi, "get")
}

export const AttachmentsLive = HttpApiBuilder.group(Api, "attachments", (handlers) =>
  Effect.gen(function*() {
    const attachments = yield* Attachments
    return handlers
      .handle("list", asCaller((principal, { path, urlParams }) => Effect.map(attachments.list(principal, path.id, urlParams), answers.list)))
      .handle("upload", asCaller((principal, { path }) => Effect.scoped(attachments.upload(principal, path.id, openUpload))))
      .handle("get", asCaller((principal, { path }) => Effect.map(attachments.get(principal, path.id, path.attachment_id), answers.get)))
      .handle("delete", asCaller((principal, { path }) => attachments.delete(principal, path.id, path.attachment_id)))
      .handle("download", asCaller((principal, { path }) =>
        Effect.flatMap(attachments.download(principal, path.id, path.attachment_id), (file) =>
          downloadAnswer(file, (size) =>
            Effect.fail(
              new RangeNotSatisfiable({ size, message: `the range asks for bytes past the end of the file (${size} bytes)` })
            ))
        )))
  }))
