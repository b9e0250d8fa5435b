/**
 * The TextExtractor port on maintained extractors: PDF through unpdf (PDF.js in its serverless build, 1.7: the
 * last line that runs on Node 20) and DOCX through mammoth's raw text. Only extraction: core normalises and
 * scrubs what this answers. A failure names the problem for the uploader, never the library.
 */
import { ExtractionFailed, TextExtractor } from "@convene/core"
import { Effect, Layer } from "effect"
import mammoth from "mammoth"
import { extractText, getDocumentProxy } from "unpdf"

/** The most a DOCX may expand to (all its parts, uncompressed): 256 MiB. */
export const maxExpandedBytes = 256 * 1024 * 1024

/**
 * The total uncompressed size the ZIP's central directory announces, or undefined when the directory cannot be
 * read or uses ZIP64 sizes (which no DOCX of an upload's size needs). Read before mammoth inflates anything, so
 * that a small archive that expands to gigabytes (a "zip bomb") is refused instead of exhausting the memory.
 */
export const announcedSize = (bytes: Uint8Array): number | undefined => {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  // The end-of-central-directory record: at least 22 bytes from the end, before a comment of up to 64 KiB.
  let end = -1
  for (let at = bytes.length - 22; at >= Math.max(0, bytes.length - 22 - 0xffff); at--) {
    if (view.getUint32(at, true) === 0x06054b50) {
      end = at
      break
    }
  }
  if (end < 0) return undefined
  const entries = view.getUint16(end + 10, true)
  let at = view.getUint32(end + 16, true)
  let total = 0
  for (let i = 0; i < entries; i++) {
    if (at + 46 > bytes.length || view.getUint32(at, true) !== 0x02014b50) return undefined
    const size = view.getUint32(at + 24, true)
    if (size === 0xffffffff) return undefined
    total += size
    at += 46 + view.getUint16(at + 28, true) + view.getUint16(at + 30, true) + view.getUint16(at + 32, true)
  }
  return total
}

/** Whether the ZIP archive holds a Word document (its main part's name appears in the archive's headers). */
const holdsWordDocument = (bytes: Uint8Array): boolean => Buffer.from(bytes).includes("word/document.xml", 0, "latin1")

const failed = (reason: string, unsupported = false) => new ExtractionFailed({ reason, unsupported })

const pdfText = (bytes: Uint8Array) =>
  Effect.tryPromise({
    try: async () => {
      // PDF.js takes ownership of the buffer it is given: hand it a copy.
      const document = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 })
      try {
        const { text } = await extractText(document, { mergePages: false })
        return text.join("\n\n")
      } finally {
        await document.destroy()
      }
    },
    catch: (error) =>
      error instanceof Error && error.name === "PasswordException"
        ? failed("the PDF is password-protected; send it without a password")
        : failed("the PDF could not be read (it may be damaged)")
  })

const docxText = (bytes: Uint8Array) => {
  if (!holdsWordDocument(bytes)) {
    return Effect.fail(failed("a ZIP archive that holds no Word document (DOCX) is not supported as meeting context", true))
  }
  const size = announcedSize(bytes)
  if (size === undefined) return Effect.fail(failed("the DOCX document could not be read (it may be damaged)"))
  if (size > maxExpandedBytes) {
    return Effect.fail(failed(`the DOCX document expands to more than ${maxExpandedBytes / 1024 / 1024} MiB; send its text instead`))
  }
  return Effect.tryPromise({
    try: () => mammoth.extractRawText({ buffer: Buffer.from(bytes) }).then((result) => result.value),
    catch: () => failed("the DOCX document could not be read (it may be damaged)")
  })
}

export const make: TextExtractor["Type"] = TextExtractor.of({
  extract: (format, bytes) =>
    (format === "pdf" ? pdfText(bytes) : docxText(bytes)).pipe(
      Effect.withSpan("TextExtractor.extract", { attributes: { format, bytes: bytes.length } })
    )
})

/** The TextExtractor on unpdf and mammoth. */
export const layer: Layer.Layer<TextExtractor> = Layer.succeed(TextExtractor, make)
