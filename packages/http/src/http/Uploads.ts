/**
 * File uploads: `multipart/form-data` bodies with one file in the field `file` and, optionally, text fields
 * (decisions.md, "Uploads"). Two readers, for the endpoint being served (they read the request's body from
 * `HttpServerRequest`; the host leaves multipart bodies unread for them):
 *
 * - `streamUpload` (scoped): reads up to the `file` part and answers its name, content type and `content`, a
 *   stream of the file's bytes as they arrive, counted against the cap. The stream ends only once the whole
 *   body has been read and found sound (the rest of the parts are checked after the file's bytes), so a
 *   consumer that stores the stream and sees it end knows the upload is good; any problem, before or after
 *   the file's bytes, fails the stream (the consumer must throw away what it stored). `fields` gives the text
 *   fields read so far: those before the file at once, all of them once `content` has ended. The stream can be
 *   run once, within the scope.
 * - `collectUpload`: the whole upload in memory (bounded by the cap): `{ file: { fileName, contentType,
 *   bytes }, fields }`, text fields before or after the file alike.
 *
 * The cap is `MaxUploadBytes` (the host sets it from CONVENE_MAX_UPLOAD_BYTES; 25 MiB when nobody does): the
 * file's bytes may not pass it, nor the whole body the cap plus `multipartOverheadBytes` (part headers and text
 * fields). Every problem is one of the API's errors (`UploadError`):
 * - 413 `payload_too_large` (BodyTooLarge): past the cap, declared (Content-Length) or sent. The response
 *   closes the connection, and the rest of the body is drained, not torn down, so the client reads the 413.
 * - 415 `unsupported_media_type` (MediaTypeUnsupported): the body is not `multipart/form-data`.
 * - 400 `validation_error` (ValidationError, field `file` or the field's name): no `file` part, `file` sent
 *   as a text field, two files (or a file in another field), a text field given twice.
 * - 400 `bad_request` (MalformedBody): a multipart body that cannot be parsed (no boundary, broken part
 *   headers, cut off before its closing boundary), a text field over 64 KiB, more than 32 parts.
 * Whatever happens, what is left of the body is drained when the scope closes, so the connection stays usable.
 *
 * The file name is the part's `filename` as sent (UTF-8; browsers' `%22`, `%0D`, `%0A` read back as `"`, CR, LF;
 * an RFC 8187 `filename*` wins), with nothing removed: callers clean it for their own use. The content type is
 * the part's Content-Type header as sent (`application/octet-stream` when it has none). Text fields are UTF-8.
 *
 * The body is read one piece at a time, only as fast as the consumer takes the file's bytes (the request is
 * never read ahead), and parsed by MultipartParser.ts (why not the platform's Multipart: see there).
 */
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { ValidationError } from "@convene/core"
import { BodyTooLarge, MalformedBody, MediaTypeUnsupported } from "@convene/api/Errors"
import * as ContentType from "content-type"
import { Chunk, Context, Effect, Option, type Scope, Stream } from "effect"
import type { IncomingMessage } from "node:http"
import * as MultipartParser from "./MultipartParser.js"

/** The largest file an upload may carry, in bytes: 25 MiB unless the host sets it (CONVENE_MAX_UPLOAD_BYTES). */
export class MaxUploadBytes extends Context.Reference<MaxUploadBytes>()("@convene/http/MaxUploadBytes", {
  defaultValue: () => 25 * 1024 * 1024
}) {}

/** What a multipart body may carry beyond its file: part headers, boundaries and text fields (1 MiB). */
export const multipartOverheadBytes = 1024 * 1024

/** The longest text field (64 KiB) and the most parts (32) an upload may have. */
export const maxFieldBytes = 64 * 1024
export const maxParts = 32

/** Every way an upload can be refused (see the module's comment for which is which). */
export type UploadError = BodyTooLarge | MediaTypeUnsupported | MalformedBody | ValidationError

export interface StreamedUpload {
  /** The file name the client gave (the part's `filename`; the field name when it gave none). */
  readonly fileName: string
  /** The part's Content-Type as sent, parameters included (`application/octet-stream` when it sent none). */
  readonly contentType: string
  /** The file's bytes as they arrive; ends only when the whole body has been read and is sound. Run once. */
  readonly content: Stream.Stream<Uint8Array, UploadError>
  /** The text fields read so far (all of them once `content` has ended). */
  readonly fields: Effect.Effect<Readonly<Record<string, string>>>
}

export interface CollectedUpload {
  readonly file: { readonly fileName: string; readonly contentType: string; readonly bytes: Uint8Array }
  readonly fields: Readonly<Record<string, string>>
}

const tooLarge = (limit: number) =>
  Effect.zipRight(
    // The client may still be sending: say the connection ends here (the rest is drained meanwhile).
    HttpApp.appendPreResponseHandler((_, response) => Effect.succeed(HttpServerResponse.setHeader(response, "connection", "close"))),
    Effect.fail(new BodyTooLarge({ message: `the upload is larger than the limit of ${limit} bytes` }))
  )

const malformed = (reason: string) => new MalformedBody({ message: `the multipart body cannot be read: ${reason}` })

/**
 * The request's body piece by piece, as it arrives, through Node's own async iterator (which reads only when asked,
 * so a slow consumer holds the client back instead of the server buffering the body: test/http/attachments.test.ts
 * measures what an upload keeps alive). `close` lets go of the body without destroying it (the rest is then drained,
 * so the client reads the answer).
 */
const bodyReader = (incoming: IncomingMessage) => {
  const iterator = incoming.iterator({ destroyOnReturn: false }) as AsyncIterator<Buffer, unknown>
  let closed = false
  return {
    next: Effect.tryPromise({
      try: () => iterator.next(),
      catch: () => malformed("the client stopped sending it")
    }).pipe(Effect.map((result) => (result.done === true ? undefined : result.value))),
    /** Stops reading (once a pending piece, if any, has arrived) and drains the rest. */
    close: () => {
      if (closed) return
      closed = true
      const returned = iterator.return?.()
      if (returned === undefined) return drain(incoming)
      returned.then(() => drain(incoming), () => drain(incoming))
    }
  }
}

/** Reads and drops what is left of the body, so the answer reaches a client that is still sending. */
const drain = (incoming: IncomingMessage) => {
  if (incoming.readableEnded || incoming.destroyed) return
  incoming.resume()
}

/** Checks the request's Content-Type: multipart/form-data (415 otherwise) with a boundary (400 otherwise). */
const boundaryOf = (contentType: string | undefined): Effect.Effect<string, UploadError> => {
  const refused = new MediaTypeUnsupported({
    message: "this endpoint takes an upload: send it as multipart/form-data with the file in the field `file`"
  })
  if (contentType === undefined) return Effect.fail(refused)
  let parsed: ReturnType<typeof ContentType.parse>
  try {
    parsed = ContentType.parse(contentType)
  } catch {
    return Effect.fail(refused)
  }
  if (parsed.type !== "multipart/form-data") return Effect.fail(refused)
  const boundary = parsed.parameters.boundary
  // RFC 2046: 1 to 70 characters.
  if (boundary === undefined || boundary.length === 0 || boundary.length > 70) {
    return Effect.fail(malformed("the Content-Type has no usable boundary"))
  }
  return Effect.succeed(boundary)
}

/**
 * The upload of the request being served, streamed: the `file` part's name, content type and bytes (see the
 * module's comment). Checks the body's media type and declared size first.
 */
export const streamUpload: Effect.Effect<
  StreamedUpload,
  UploadError,
  HttpServerRequest.HttpServerRequest | Scope.Scope
> = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const limit = yield* MaxUploadBytes
  const incoming = NodeHttpServerRequest.toIncomingMessage(request)
  // Whatever happens, the rest of the body is read and dropped once the upload is done with.
  const body = bodyReader(incoming)
  yield* Effect.addFinalizer(() => Effect.sync(body.close))
  const boundary = yield* boundaryOf(request.headers["content-type"])
  const declared = request.headers["content-length"]
  if (declared !== undefined && Number(declared) > limit + multipartOverheadBytes) return yield* tooLarge(limit)

  const parser = MultipartParser.make(boundary)
  const pending: Array<MultipartParser.MultipartEvent> = []
  let total = 0
  /** The next thing the body holds, reading more of it when what was read is used up. */
  const next: Effect.Effect<MultipartParser.MultipartEvent, UploadError> = Effect.suspend(() => {
    const event = pending.shift()
    if (event !== undefined) return Effect.succeed(event)
    return Effect.flatMap(body.next, (chunk) => {
      try {
        if (chunk === undefined) {
          parser.finish()
          // The parser answered `End` before: nobody asks past it.
          return Effect.die(new Error("the multipart body was read past its end"))
        }
        total += chunk.length
        if (total > limit + multipartOverheadBytes) return tooLarge(limit)
        pending.push(...parser.push(chunk))
      } catch (error) {
        if (error instanceof MultipartParser.MultipartMalformed) return Effect.fail(malformed(error.reason))
        throw error
      }
      return next
    })
  })

  const fields: Record<string, string> = {}
  let parts = 0
  /** A part's start: counted; a text field is read whole (once per name), a file other than the first refused. */
  const startOf = (part: MultipartParser.PartHead, fileSeen: boolean): Effect.Effect<"file" | "field", UploadError> =>
    Effect.gen(function*() {
      parts += 1
      if (parts > maxParts) return yield* Effect.fail(malformed(`it has more than ${maxParts} parts`))
      if (part.fileName !== undefined) {
        if (part.name !== "file") return yield* Effect.fail(ValidationError.of(part.name, "an upload takes one file, in the field `file`"))
        if (fileSeen) return yield* Effect.fail(ValidationError.of("file", "an upload takes one file; this one has more"))
        return "file" as const
      }
      if (part.name === "file") return yield* Effect.fail(ValidationError.of("file", "must be a file (a part with a filename), not a text field"))
      if (Object.hasOwn(fields, part.name)) return yield* Effect.fail(ValidationError.of(part.name, "is given more than once"))
      const pieces: Array<Uint8Array> = []
      let size = 0
      for (;;) {
        const event = yield* next
        if (event._tag === "PartEnd") break
        if (event._tag !== "Data") return yield* Effect.die(new Error(`unexpected ${event._tag} in a text field`))
        size += event.bytes.length
        if (size > maxFieldBytes) return yield* Effect.fail(malformed(`a text field is longer than ${maxFieldBytes} bytes`))
        pieces.push(Uint8Array.from(event.bytes))
      }
      fields[part.name] = new TextDecoder("utf-8").decode(Buffer.concat(pieces))
      return "field" as const
    })

  let file: MultipartParser.PartHead | undefined
  while (file === undefined) {
    const event = yield* next
    if (event._tag === "End") return yield* Effect.fail(ValidationError.of("file", "no file was sent; send it in the field `file`"))
    if (event._tag !== "PartStart") return yield* Effect.die(new Error(`unexpected ${event._tag} between parts`))
    if ((yield* startOf(event.part, false)) === "file") file = event.part
  }

  let received = 0
  const bytes = Stream.repeatEffectOption(
    Effect.flatMap(next, (event): Effect.Effect<Uint8Array, Option.Option<UploadError>> => {
      if (event._tag === "PartEnd") return Effect.fail(Option.none())
      if (event._tag !== "Data") return Effect.die(new Error(`unexpected ${event._tag} in a file`))
      received += event.bytes.length
      return received > limit ? Effect.mapError(tooLarge(limit), Option.some) : Effect.succeed(event.bytes)
    }).pipe(Effect.mapError((error) => (Option.isOption(error) ? error : Option.some(error))))
  )
  /** After the file: text fields until the end; another file is refused. */
  const rest = Effect.gen(function*() {
    for (;;) {
      const event = yield* next
      if (event._tag === "End") return
      if (event._tag !== "PartStart") return yield* Effect.die(new Error(`unexpected ${event._tag} between parts`))
      yield* startOf(event.part, true)
    }
  })
  return {
    fileName: file.fileName ?? file.name,
    contentType: file.contentType === undefined || file.contentType === "" ? "application/octet-stream" : file.contentType,
    content: Stream.concat(bytes, Stream.drain(Stream.fromEffect(rest))),
    fields: Effect.sync(() => ({ ...fields }))
  }
})

/** The upload of the request being served, read whole into memory (at most the cap): file and text fields. */
export const collectUpload: Effect.Effect<CollectedUpload, UploadError, HttpServerRequest.HttpServerRequest> = Effect
  .scoped(
    Effect.gen(function*() {
      const upload = yield* streamUpload
      const chunks = yield* Stream.runCollect(upload.content)
      const size = Chunk.reduce(chunks, 0, (total, bytes) => total + bytes.length)
      const bytes = new Uint8Array(size)
      let offset = 0
      for (const piece of chunks) {
        bytes.set(piece, offset)
        offset += piece.length
      }
      return {
        file: { fileName: upload.fileName, contentType: upload.contentType, bytes },
        fields: yield* upload.fields
      }
    })
  )
