/**
 * An incremental `multipart/form-data` parser (RFC 7578, RFC 2046 section 5.1), for Uploads.ts: fed the body's
 * bytes as they arrive, it answers what they hold, in order: a part's start (its headers and Content-Disposition),
 * pieces of the part's body (views of the bytes fed, never a copy of a whole part), the part's end, and the end of
 * the body. It holds back only what might be the start of a delimiter (at most the delimiter's length), so memory
 * does not grow with the body.
 *
 * Why not the platform's parser (@effect/platform Multipart on multipasta), which was tried first: multipasta cannot
 * read a raw UTF-8 file name with characters past U+00FF (what browsers, curl and fetch's FormData send: the part
 * then loses its name), does not unescape `\"` in a quoted file name, throws from inside a stream pipe on a
 * malformed `filename*` (an uncaught exception), reads a JSON file part as a text field unless configured, and the
 * platform's reader waits for ever on a body cut off between parts. Why not busboy (@fastify/busboy 3.2.6, busboy
 * 1.6.0; both checked on the cases of test/http/uploads.test.ts): they give a part's Content-Type as its bare type,
 * lower-cased, its parameters dropped (an attachment uploaded as `text/csv; charset=windows-1252` would be served
 * back without its charset, where the API promises the type as uploaded), call a part without one `text/plain`
 * (RFC 7578's default, where the API says `application/octet-stream` for a file), and skip a malformed part
 * silently, so a broken body reads as one without its file instead of a 400 naming the fault.
 */

/** What the bytes fed so far hold. */
export type MultipartEvent =
  | { readonly _tag: "PartStart"; readonly part: PartHead }
  | { readonly _tag: "Data"; readonly bytes: Uint8Array }
  | { readonly _tag: "PartEnd" }
  | { readonly _tag: "End" }

export interface PartHead {
  /** The `name` of the part's Content-Disposition (`form-data; name="..."`). */
  readonly name: string
  /** The file name (`filename*` when it decodes, else `filename`); undefined for a text field. */
  readonly fileName: string | undefined
  /** The part's Content-Type header as sent (trimmed); undefined when it has none. */
  readonly contentType: string | undefined
}

/** Why a body cannot be read: a sentence for the API's 400 message. */
export class MultipartMalformed extends Error {
  constructor(readonly reason: string) {
    super(reason)
    this.name = "MultipartMalformed"
  }
}

/** The most a part's header block may hold (16 KiB). */
export const maxHeaderBytes = 16 * 1024

const CRLF = Buffer.from("\r\n")
const HEADER_END = Buffer.from("\r\n\r\n")

const utf8 = new TextDecoder("utf-8")

/** `filename*` / RFC 8187: `charset'language'percent-encoded`; UTF-8 (or ASCII) only. */
const extValue = (value: string): string | undefined => {
  const match = /^([A-Za-z0-9!#$%&+^_`{}~-]+)'[^']*'(.*)$/.exec(value)
  if (match === null) return undefined
  const charset = match[1]!.toLowerCase()
  if (charset !== "utf-8" && charset !== "us-ascii") return undefined
  try {
    return decodeURIComponent(match[2]!)
  } catch {
    return undefined
  }
}

/**
 * The parameters of a Content-Disposition value (`form-data; name="a"; filename="b"`), tolerant of what clients
 * send: quoted strings may hold any character but `"` (`\"` and `\\` are unescaped, another backslash is kept, as
 * in a Windows path); names are compared case-insensitively.
 */
export const dispositionParameters = (value: string): { readonly type: string; readonly parameters: Map<string, string> } | undefined => {
  const parameters = new Map<string, string>()
  let index = value.indexOf(";")
  const type = (index === -1 ? value : value.slice(0, index)).trim().toLowerCase()
  if (index === -1) return { type, parameters }
  while (index < value.length) {
    // At a ";": skip it and white space, read `name=`.
    index += 1
    while (index < value.length && (value[index] === " " || value[index] === "\t")) index += 1
    if (index >= value.length) break
    const equals = value.indexOf("=", index)
    if (equals === -1) return undefined
    const name = value.slice(index, equals).trim().toLowerCase()
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name)) return undefined
    index = equals + 1
    while (index < value.length && (value[index] === " " || value[index] === "\t")) index += 1
    let parameter = ""
    if (value[index] === "\"") {
      index += 1
      for (;;) {
        if (index >= value.length) return undefined
        const char = value[index]!
        if (char === "\"") {
          index += 1
          break
        }
        if (char === "\\" && (value[index + 1] === "\"" || value[index + 1] === "\\")) {
          parameter += value[index + 1]
          index += 2
          continue
        }
        parameter += char
        index += 1
      }
      while (index < value.length && (value[index] === " " || value[index] === "\t")) index += 1
      if (index < value.length && value[index] !== ";") return undefined
    } else {
      const end = value.indexOf(";", index)
      parameter = (end === -1 ? value.slice(index) : value.slice(index, end)).trim()
      index = end === -1 ? value.length : end
    }
    if (!parameters.has(name)) parameters.set(name, parameter)
  }
  return { type, parameters }
}

/** Browsers send `"`, CR and LF in names as %22, %0D and %0A (WHATWG HTML, multipart/form-data encoding). */
const unescapeHtmlName = (name: string) =>
  name.replace(/%(22|0D|0A)/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))

/** A part's head from its header block (the bytes between the delimiter line and the blank line). */
const headOf = (block: Uint8Array): PartHead => {
  const headers = new Map<string, string>()
  for (const line of utf8.decode(block).split("\r\n")) {
    if (line === "") continue
    const colon = line.indexOf(":")
    if (colon <= 0) throw new MultipartMalformed("a part's header line has no name")
    const name = line.slice(0, colon).trim().toLowerCase()
    if (!headers.has(name)) headers.set(name, line.slice(colon + 1).trim())
  }
  const disposition = headers.get("content-disposition")
  if (disposition === undefined) throw new MultipartMalformed("a part has no Content-Disposition")
  const parsed = dispositionParameters(disposition)
  if (parsed === undefined || parsed.type !== "form-data") {
    throw new MultipartMalformed("a part's Content-Disposition is not `form-data; name=\"...\"`")
  }
  const name = parsed.parameters.get("name")
  if (name === undefined) throw new MultipartMalformed("a part's Content-Disposition has no name")
  const plain = parsed.parameters.get("filename")
  const extended = parsed.parameters.get("filename*")
  const decoded = extended === undefined ? undefined : extValue(extended)
  const fileName = decoded ?? (plain === undefined ? undefined : unescapeHtmlName(plain))
  if (fileName === undefined && extended !== undefined) throw new MultipartMalformed("a part's filename* cannot be decoded")
  return { name: unescapeHtmlName(name), fileName, contentType: headers.get("content-type") }
}

type State = "preamble" | "afterDelimiter" | "headers" | "body" | "end"

/**
 * A parser for one body with `boundary`. `push` takes the next bytes and answers the events they complete;
 * `finish` says the body ended (failing when it ended before the closing delimiter). Both throw
 * `MultipartMalformed` for a body that is not multipart/form-data.
 */
export const make = (boundary: string) => {
  // The body is read as if it began with CRLF, so that its first delimiter ("--boundary" at the very start) is
  // found like every other ("\r\n--boundary").
  const delimiter = Buffer.from(`\r\n--${boundary}`)
  let state: State = "preamble"
  let held: Buffer = Buffer.from(CRLF)

  const push = (chunk: Uint8Array): ReadonlyArray<MultipartEvent> => {
    const events: Array<MultipartEvent> = []
    const buffer = held.length === 0 ? Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength) : Buffer.concat([held, chunk])
    held = Buffer.alloc(0)
    let at = 0
    for (;;) {
      switch (state) {
        case "end":
          // The epilogue is ignored.
          return events
        case "preamble":
        case "body": {
          const found = buffer.indexOf(delimiter, at)
          if (found === -1) {
            // Everything but what could be the start of a delimiter is part data (or preamble, dropped).
            const keep = Math.min(buffer.length - at, delimiter.length - 1)
            const until = buffer.length - keep
            if (state === "body" && until > at) events.push({ _tag: "Data", bytes: buffer.subarray(at, until) })
            held = Buffer.from(buffer.subarray(until))
            return events
          }
          if (state === "body") {
            if (found > at) events.push({ _tag: "Data", bytes: buffer.subarray(at, found) })
            events.push({ _tag: "PartEnd" })
          }
          at = found + delimiter.length
          state = "afterDelimiter"
          break
        }
        case "afterDelimiter": {
          // "--" closes the body; else optional white space (transport padding), then CRLF.
          if (buffer.length - at < 2) {
            held = Buffer.from(buffer.subarray(at))
            return events
          }
          if (buffer[at] === 0x2d && buffer[at + 1] === 0x2d) {
            state = "end"
            events.push({ _tag: "End" })
            return events
          }
          let index = at
          while (index < buffer.length && (buffer[index] === 0x20 || buffer[index] === 0x09)) index += 1
          if (buffer.length - index < 2) {
            if (index - at > 1024) throw new MultipartMalformed("a delimiter line is not followed by CRLF")
            held = Buffer.from(buffer.subarray(at))
            return events
          }
          if (buffer[index] !== 0x0d || buffer[index + 1] !== 0x0a) {
            throw new MultipartMalformed("a delimiter line is not followed by CRLF")
          }
          at = index + 2
          state = "headers"
          break
        }
        case "headers": {
          // A part without headers has its blank line at once.
          if (buffer.length - at >= 2 && buffer[at] === 0x0d && buffer[at + 1] === 0x0a) {
            throw new MultipartMalformed("a part has no Content-Disposition")
          }
          const found = buffer.indexOf(HEADER_END, at)
          if (found === -1) {
            if (buffer.length - at > maxHeaderBytes) throw new MultipartMalformed(`a part's headers pass ${maxHeaderBytes} bytes`)
            held = Buffer.from(buffer.subarray(at))
            return events
          }
          if (found - at > maxHeaderBytes) throw new MultipartMalformed(`a part's headers pass ${maxHeaderBytes} bytes`)
          events.push({ _tag: "PartStart", part: headOf(buffer.subarray(at, found)) })
          at = found + HEADER_END.length
          state = "body"
          // What follows may be the part's data or, for an empty part, its delimiter: the body search sees both.
          break
        }
      }
    }
  }

  const finish = (): void => {
    if (state !== "end") throw new MultipartMalformed("it ends before its closing boundary")
  }

  return { push, finish }
}
