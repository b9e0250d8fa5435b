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
 * The most XML a DOCX may hold (its `.xml` and `.rels` parts, uncompressed): 16 MiB, some 8,000 pages of text. What
 * mammoth reads costs about 50 bytes of memory per byte of XML (16 MiB: ~800 MB, 30 s of CPU; measured), so a small
 * archive of highly compressible XML could otherwise take all the memory of the thread that reads it.
 */
export const maxXmlBytes = 16 * 1024 * 1024

/**
 * The total uncompressed size the ZIP's central directory announces, or undefined when the directory cannot be
 * read or uses ZIP64 sizes (which no DOCX of an upload's size needs). Read before mammoth inflates anything, so
 * that a small archive that expands to gigabytes (a "zip bomb") is refused instead of exhausting the memory.
 */
export const announcedSize = (bytes: Uint8Array): number | undefined => announcedSizes(bytes)?.total

/** The total uncompressed size the ZIP's central directory announces, and that of its XML parts (see announcedSize). */
export const announcedSizes = (bytes: Uint8Array): { readonly total: number; readonly xml: number } | undefined => {
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
  let xml = 0
  for (let i = 0; i < entries; i++) {
    if (at + 46 > bytes.length || view.getUint32(at, true) !== 0x02014b50) return undefined
    const size = view.getUint32(at + 24, true)
    if (size === 0xffffffff) return undefined
    const nameLength = view.getUint16(at + 28, true)
    const name = Buffer.from(bytes.buffer, bytes.byteOffset + at + 46, Math.min(nameLength, bytes.length - at - 46))
      .toString("latin1")
      .toLowerCase()
    total += size
    if (name.endsWith(".xml") || name.endsWith(".rels")) xml += size
    at += 46 + nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true)
  }
  return { total, xml }
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
  const sizes = announcedSizes(bytes)
  if (sizes === undefined) return Effect.fail(failed("the DOCX document could not be read (it may be damaged)"))
  if (sizes.total > maxExpandedBytes) {
    return Effect.fail(failed(`the DOCX document expands to more than ${maxExpandedBytes / 1024 / 1024} MiB; send its text instead`))
  }
  if (sizes.xml > maxXmlBytes) {
    return Effect.fail(failed(`the DOCX document holds more than ${maxXmlBytes / 1024 / 1024} MiB of XML; send its text instead`))
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
