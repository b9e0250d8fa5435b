/**
 * How an upload becomes text, decided here once (the extractors behind TextExtractor only read PDF and DOCX
 * files; everything else is these rules, pure and deterministic).
 *
 * The type is determined by the file's first bytes (its signature), never by its name or declared type alone:
 * - `%PDF-` is a PDF and `PK\x03\x04` (a ZIP archive) is read as DOCX; both go to the TextExtractor, which
 *   refuses a ZIP that holds no Word document (415) and a file it cannot read (400).
 * - Any other known binary signature (images, audio, video, archives, executables, legacy .doc, UTF-16 text) is
 *   415 `unsupported_media_type`; so is a declared image, audio, video or font type, even when the bytes are text
 *   (an SVG drawing is text, but not context).
 * - Everything else must be UTF-8 text (a leading byte order mark is dropped) without NUL characters; anything
 *   else is 415. The declared charset is not read: the bytes themselves must be UTF-8.
 * - Text is plain text, Markdown, WebVTT or SRT; the file name's extension, the declared type and (for WebVTT) a
 *   `WEBVTT` first line tell them apart, which only names the item's `content_type`.
 *
 * Normalisation (`normalizeText`), on every text alike, extracted or uploaded: Unicode NFC; CR LF, CR, NEL, form
 * feed, vertical tab and the Unicode line and paragraph separators become LF; other control characters and
 * byte order marks are dropped; inside a line, every run of white space (tabs, no-break and other Unicode spaces)
 * becomes one space, while a line's leading indentation is kept (each tab as four spaces, other spaces as one);
 * trailing white space is trimmed; more than one blank line in a row becomes one; leading and trailing blank lines
 * go, and non-empty text ends with one LF.
 */
import { Either, Schema } from "effect"
import { decodeUtf8 } from "./Utf8.js"

export { decodeUtf8, utf8Length } from "./Utf8.js"

/** The upload is not a kind of file context takes (415 `unsupported_media_type`). */
export class UnsupportedUpload extends Schema.TaggedError<UnsupportedUpload>()("UnsupportedUpload", {
  message: Schema.String
}) {}

/**
 * The most text a context item holds: 5 MiB of UTF-8 text uploaded, or 5 Mi characters extracted from a PDF or DOCX
 * (413 beyond). Far more than a prompt takes (an eight-hour meeting's transcript is about 0.5 MiB), and it bounds the
 * work an upload costs: reading, normalising and scrubbing text runs on the server's one thread.
 */
export const maxContextText = 5 * 1024 * 1024

/** The upload's text is longer than `maxContextText` (413 `payload_too_large`). */
export class TextTooLarge extends Schema.TaggedError<TextTooLarge>()("TextTooLarge", {
  message: Schema.String
}) {}

export const textTooLarge = (what: string) =>
  new TextTooLarge({ message: `file: ${what} is longer than the ${maxContextText / 1024 / 1024} MiB a context item holds` })

export const docxMediaType = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

/** What an upload was found to be. */
export type Detected =
  | { readonly _tag: "Binary"; readonly format: "pdf" | "docx"; readonly mediaType: string }
  | {
    readonly _tag: "Text"
    readonly flavour: "plain" | "markdown" | "webvtt" | "srt"
    readonly mediaType: string
    readonly text: string
  }

const startsWith = (bytes: Uint8Array, signature: ReadonlyArray<number>, at = 0) =>
  bytes.length >= at + signature.length && signature.every((byte, index) => bytes[at + index] === byte)

const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0))

/** Binary signatures refused with a name the uploader recognises. */
const refused: ReadonlyArray<readonly [name: string, matches: (bytes: Uint8Array) => boolean]> = [
  ["a PNG image", (b) => startsWith(b, [0x89, 0x50, 0x4e, 0x47])],
  ["a JPEG image", (b) => startsWith(b, [0xff, 0xd8, 0xff])],
  ["a GIF image", (b) => startsWith(b, ascii("GIF8"))],
  ["a WebP image", (b) => startsWith(b, ascii("RIFF")) && startsWith(b, ascii("WEBP"), 8)],
  ["a RIFF media file (WAV, AVI)", (b) => startsWith(b, ascii("RIFF"))],
  ["a TIFF image", (b) => startsWith(b, [0x49, 0x49, 0x2a, 0x00]) || startsWith(b, [0x4d, 0x4d, 0x00, 0x2a])],
  ["an MP4, MOV or HEIC file", (b) => startsWith(b, ascii("ftyp"), 4)],
  ["an MP3 file", (b) => startsWith(b, ascii("ID3")) || startsWith(b, [0xff, 0xfb])],
  ["an Ogg media file", (b) => startsWith(b, ascii("OggS"))],
  ["a FLAC file", (b) => startsWith(b, ascii("fLaC"))],
  ["a Matroska or WebM file", (b) => startsWith(b, [0x1a, 0x45, 0xdf, 0xa3])],
  ["a gzip archive", (b) => startsWith(b, [0x1f, 0x8b])],
  ["a 7-Zip archive", (b) => startsWith(b, [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c])],
  ["a RAR archive", (b) => startsWith(b, ascii("Rar!"))],
  ["a legacy Office file (.doc, .xls, .ppt)", (b) => startsWith(b, [0xd0, 0xcf, 0x11, 0xe0])],
  ["an executable", (b) => startsWith(b, [0x7f, 0x45, 0x4c, 0x46]) || startsWith(b, ascii("MZ"))],
  ["UTF-16 text (send it as UTF-8)", (b) => startsWith(b, [0xff, 0xfe]) || startsWith(b, [0xfe, 0xff])]
]

const refusedDeclared = /^(image|audio|video|font)\//

const extensionOf = (fileName: string): string => {
  const dot = fileName.lastIndexOf(".")
  return dot <= 0 ? "" : fileName.slice(dot + 1).toLowerCase()
}

/** The media type without parameters, lower-cased ("" when none was declared). */
const essence = (contentType: string | undefined): string =>
  (contentType ?? "").split(";")[0]!.trim().toLowerCase()

const supported = "plain text, Markdown, WebVTT, SRT (UTF-8), PDF or DOCX"

/** What the upload is, or why it is refused. */
export const detect = (upload: {
  readonly fileName: string
  readonly contentType: string | undefined
  readonly bytes: Uint8Array
}): Either.Either<Detected, UnsupportedUpload | TextTooLarge> => {
  const { bytes } = upload
  const declared = essence(upload.contentType)
  const unsupported = (what: string) =>
    Either.left(new UnsupportedUpload({ message: `file: ${what} is not supported as meeting context; send ${supported}` }))
  if (startsWith(bytes, ascii("%PDF-"))) return Either.right({ _tag: "Binary", format: "pdf", mediaType: "application/pdf" })
  if (startsWith(bytes, [0x50, 0x4b, 0x03, 0x04])) return Either.right({ _tag: "Binary", format: "docx", mediaType: docxMediaType })
  const known = refused.find(([, matches]) => matches(bytes))
  if (known !== undefined) return unsupported(known[0])
  if (refusedDeclared.test(declared)) return unsupported(`a file declared as ${declared}`)
  if (bytes.length > maxContextText) return Either.left(textTooLarge("the text"))
  const text = decodeUtf8(bytes)
  if (text === undefined) return unsupported("a file that is neither UTF-8 text nor a PDF or DOCX document")
  if (text.includes("\u0000")) return unsupported("a binary file (it holds NUL bytes)")
  const extension = extensionOf(upload.fileName)
  if (extension === "md" || extension === "markdown" || declared === "text/markdown" || declared === "text/x-markdown") {
    return Either.right({ _tag: "Text", flavour: "markdown", mediaType: "text/markdown", text })
  }
  if (extension === "vtt" || declared === "text/vtt" || /^WEBVTT(?:[ \t\r\n]|$)/.test(text)) {
    return Either.right({ _tag: "Text", flavour: "webvtt", mediaType: "text/vtt", text })
  }
  if (extension === "srt" || declared === "application/x-subrip" || declared === "text/srt") {
    return Either.right({ _tag: "Text", flavour: "srt", mediaType: "application/x-subrip", text })
  }
  return Either.right({ _tag: "Text", flavour: "plain", mediaType: "text/plain", text })
}

const lineBreaks = /\r\n|[\r\u0085\u000B\u000C\u2028\u2029]/g
const dropped = /[\u0000-\u0008\u000E-\u001F\u007F-\u0084\u0086-\u009F\uFEFF]/g
const space = "[\\t \\u00A0\\u1680\\u2000-\\u200A\\u202F\\u205F\\u3000]"
const leading = new RegExp(`^${space}+`)
const inner = new RegExp(`${space}+`, "g")
const trailing = new RegExp(`${space}+$`)

const foldLine = (line: string): string => {
  const indent = leading.exec(line)?.[0] ?? ""
  const rest = line.slice(indent.length).replace(inner, " ").replace(trailing, "")
  if (rest === "") return ""
  return indent.replace(/\t/g, "    ").replace(/[^ ]/g, " ") + rest
}

/** The normalisation rules of the module's description. */
export const normalizeText = (text: string): string => {
  const lines = text.normalize("NFC").replace(lineBreaks, "\n").replace(dropped, "").split("\n").map(foldLine)
  const kept: Array<string> = []
  for (const line of lines) {
    if (line === "" && (kept.length === 0 || kept[kept.length - 1] === "")) continue
    kept.push(line)
  }
  while (kept.length > 0 && kept[kept.length - 1] === "") kept.pop()
  return kept.length === 0 ? "" : kept.join("\n") + "\n"
}

/** The name kept for an upload: its last path segment, trimmed, at most 255 characters ("upload" when empty). */
export const fileNameOf = (name: string): string => {
  const base = name.split(/[\\/]/).pop()!.replace(dropped, "").replace(/\u0000/g, "").trim().normalize("NFC")
  const cut = [...base].slice(0, 255).join("")
  return cut === "" ? "upload" : cut
}
