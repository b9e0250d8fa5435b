/**
 * JSON request bodies, read once by the host before the router runs.
 *
 * The platform's own reader (platform-node) destroys the socket when a body passes its size limit, so a
 * client sending a large chunked body gets its connection reset and never sees an answer; and it reports the
 * overflow only as an untyped Error("maxBytes exceeded"). So the host reads JSON bodies itself, with a typed
 * outcome: the bytes are counted as they arrive, an oversized body stops being kept (the rest is drained, not
 * torn down, so the 413 reaches the client), the text must be UTF-8 and the JSON must parse. The request the
 * router then sees (`BufferedRequest`) serves that one reading to everyone who asks for the body: the
 * platform's payload decoder and the idempotency fingerprint alike. A body that was refused (not JSON, not
 * UTF-8) fails its reader with `BodyRejected`, which the platform's payload decoder meets only after the
 * endpoint authenticated the caller.
 */
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as UrlParams from "@effect/platform/UrlParams"
import type * as Headers from "@effect/platform/Headers"
import type * as HttpServerError from "@effect/platform/HttpServerError"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as ContentType from "content-type"
import { Data, Effect, Either, Inspectable, Stream } from "effect"
import { BodyRejected, type ReadBody } from "./RequestContext.js"

/** The largest request body read (1 MiB); a larger one is 413 payload_too_large. */
export const maxBodyBytes = 1024 * 1024

/**
 * The deepest nesting of arrays and objects a JSON body may have. The API's bodies nest a few levels; a body
 * nested thousands of levels deep (a few kilobytes suffice) would exhaust the stack of every recursive walk
 * over it (schema decoding's error report, the idempotency fingerprint), so it is refused as it is read.
 */
export const maxJsonDepth = 64

/** Whether `value` nests deeper than `limit` (walked with an explicit stack, so it cannot overflow itself). */
const nestsDeeperThan = (value: unknown, limit: number): boolean => {
  const pending: Array<readonly [unknown, number]> = [[value, 0]]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, depth] = next
    if (typeof node !== "object" || node === null) continue
    if (depth >= limit) return true
    for (const child of Array.isArray(node) ? node : Object.values(node)) pending.push([child, depth + 1])
  }
  return false
}

export type BodyProblem = Data.TaggedEnum<{
  /** The Content-Type is not JSON in UTF-8. */
  UnsupportedMediaType: { readonly contentType: string | undefined }
  /** More than `maxBodyBytes` were sent (or announced). */
  TooLarge: Record<never, never>
  /** The bytes are not UTF-8, or the text is not JSON. */
  Malformed: { readonly reason: string }
  /** The client went away before the body was complete: nobody is left to answer. */
  Aborted: Record<never, never>
}>

export const BodyProblem = Data.taggedEnum<BodyProblem>()

/**
 * Whether a Content-Type names JSON in UTF-8: `application/json`, with `charset=utf-8` or no charset
 * (parameters compared case-insensitively). A missing Content-Type counts only for an empty body.
 */
export const isJson = (contentType: string): boolean => {
  try {
    const parsed = ContentType.parse(contentType)
    const charset = parsed.parameters.charset
    return parsed.type === "application/json" && (charset === undefined || charset.toLowerCase() === "utf-8")
  } catch {
    return false
  }
}

/** Reads at most `limit` bytes of the Node request behind `request`. */
const readBytes = (request: HttpServerRequest.HttpServerRequest, limit: number) =>
  Effect.async<Buffer, BodyProblem>((resume) => {
    const incoming = NodeHttpServerRequest.toIncomingMessage(request)
    const chunks: Array<Buffer> = []
    let size = 0
    const cleanup = () => {
      incoming.off("data", onData)
      incoming.off("end", onEnd)
      incoming.off("error", onAbort)
      incoming.off("aborted", onAbort)
    }
    function onData(chunk: Buffer) {
      size += chunk.length
      if (size <= limit) {
        chunks.push(chunk)
        return
      }
      cleanup()
      // Keep reading and dropping the rest: destroying the request would reset the connection before the
      // 413 is written. The host answers with Connection: close.
      incoming.resume()
      resume(Effect.fail(BodyProblem.TooLarge()))
    }
    function onEnd() {
      cleanup()
      resume(Effect.succeed(Buffer.concat(chunks, size)))
    }
    function onAbort() {
      cleanup()
      resume(Effect.fail(BodyProblem.Aborted()))
    }
    if (incoming.readableEnded) return resume(Effect.succeed(Buffer.alloc(0)))
    incoming.on("data", onData)
    incoming.once("end", onEnd)
    incoming.once("error", onAbort)
    incoming.once("aborted", onAbort)
    return Effect.sync(cleanup)
  })

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false })

/** The text and JSON value of a JSON body (an empty body is JSON `null`, as the platform reads it). */
export const readJson = (
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<{ readonly text: string; readonly value: unknown }, BodyProblem> =>
  Effect.gen(function*() {
    const declared = request.headers["content-length"]
    const contentType = request.headers["content-type"]
    if (declared !== undefined && Number(declared) > maxBodyBytes) return yield* Effect.fail(BodyProblem.TooLarge())
    const bytes = yield* readBytes(request, maxBodyBytes)
    if (bytes.length === 0 && contentType === undefined) return { text: "", value: null }
    if (contentType === undefined || !isJson(contentType)) {
      return yield* Effect.fail(BodyProblem.UnsupportedMediaType({ contentType }))
    }
    let text: string
    try {
      text = utf8.decode(bytes)
    } catch {
      return yield* Effect.fail(BodyProblem.Malformed({ reason: "the request body is not valid UTF-8" }))
    }
    if (text.trim() === "") return { text, value: null }
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      return yield* Effect.fail(BodyProblem.Malformed({ reason: "the request body is not valid JSON" }))
    }
    if (nestsDeeperThan(value, maxJsonDepth)) {
      return yield* Effect.fail(
        BodyProblem.Malformed({ reason: `the request body nests arrays and objects deeper than ${maxJsonDepth} levels` })
      )
    }
    return { text, value }
  })

/** The largest form body read (64 KiB): the OAuth and sign-in forms carry a few short fields. */
export const maxFormBytes = 64 * 1024

/** Whether a Content-Type names a URL-encoded form (charset utf-8 or none). */
export const isForm = (contentType: string): boolean => {
  try {
    const parsed = ContentType.parse(contentType)
    const charset = parsed.parameters.charset
    return parsed.type === "application/x-www-form-urlencoded" && (charset === undefined || charset.toLowerCase() === "utf-8")
  } catch {
    return false
  }
}

/**
 * The fields of an `application/x-www-form-urlencoded` body, in order and with repeats (OAuth refuses a
 * repeated parameter, so they must be seen), read within `maxFormBytes`.
 */
export const readForm = (
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<ReadonlyArray<readonly [string, string]>, BodyProblem> =>
  Effect.gen(function*() {
    const declared = request.headers["content-length"]
    const contentType = request.headers["content-type"]
    if (declared !== undefined && Number(declared) > maxFormBytes) return yield* Effect.fail(BodyProblem.TooLarge())
    if (contentType === undefined || !isForm(contentType)) {
      return yield* Effect.fail(BodyProblem.UnsupportedMediaType({ contentType }))
    }
    const bytes = yield* readBytes(request, maxFormBytes)
    let text: string
    try {
      text = utf8.decode(bytes)
    } catch {
      return yield* Effect.fail(BodyProblem.Malformed({ reason: "the request body is not valid UTF-8" }))
    }
    return [...new URLSearchParams(text).entries()]
  })

/**
 * The request with its body already read: every reader of the body gets that one reading (or dies with the
 * reason it was refused). Everything else is the original request's.
 */
export class BufferedRequest extends Inspectable.Class implements HttpServerRequest.HttpServerRequest {
  readonly [HttpServerRequest.TypeId]: HttpServerRequest.TypeId = HttpServerRequest.TypeId
  readonly [HttpIncomingMessage.TypeId]: HttpIncomingMessage.TypeId = HttpIncomingMessage.TypeId

  constructor(readonly original: HttpServerRequest.HttpServerRequest, readonly body: ReadBody) {
    super()
  }

  private read<A>(f: (body: { readonly text: string; readonly value: unknown }) => A): Effect.Effect<A> {
    return Either.match(this.body, {
      onLeft: (rejected: BodyRejected) => Effect.die(rejected),
      onRight: (body) => Effect.sync(() => f(body))
    })
  }

  get source() {
    return this.original.source
  }
  get url() {
    return this.original.url
  }
  get originalUrl() {
    return this.original.originalUrl
  }
  get method() {
    return this.original.method
  }
  get cookies() {
    return this.original.cookies
  }
  get headers(): Headers.Headers {
    return this.original.headers
  }
  get remoteAddress() {
    return this.original.remoteAddress
  }
  // A JSON endpoint's body is never multipart: a request whose Content-Type says so was refused by the host
  // (415), and that refusal is what any reader meets (the original stream is already read).
  get multipart() {
    return Effect.die(this.refusal)
  }
  get multipartStream() {
    return Stream.die(this.refusal)
  }
  private get refusal(): BodyRejected {
    return Either.isLeft(this.body)
      ? this.body.left
      : new BodyRejected({
        status: 415,
        code: "unsupported_media_type",
        reason: "this endpoint takes a JSON body: send it as application/json (charset utf-8 or none)"
      })
  }
  get upgrade() {
    return this.original.upgrade
  }
  get text(): Effect.Effect<string, HttpServerError.RequestError> {
    return this.read((body) => body.text)
  }
  get json(): Effect.Effect<unknown, HttpServerError.RequestError> {
    return this.read((body) => body.value)
  }
  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpServerError.RequestError> {
    return this.read((body) => UrlParams.fromInput(new URLSearchParams(body.text)))
  }
  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpServerError.RequestError> {
    return this.read((body) => {
      const bytes = new TextEncoder().encode(body.text)
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)
    })
  }
  get stream(): Stream.Stream<Uint8Array, HttpServerError.RequestError> {
    return Stream.fromEffect(this.read((body) => new TextEncoder().encode(body.text)))
  }
  modify(options: Parameters<HttpServerRequest.HttpServerRequest["modify"]>[0]): HttpServerRequest.HttpServerRequest {
    return new BufferedRequest(this.original.modify(options), this.body)
  }
  toJSON(): unknown {
    return { _id: "BufferedRequest", method: this.method, url: this.originalUrl }
  }
}
