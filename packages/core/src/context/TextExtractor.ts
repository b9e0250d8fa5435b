import { Context, type Effect, Schema } from "effect"

/** The binary formats whose text an extractor reads. */
export type ExtractableFormat = "pdf" | "docx"

/**
 * The file is not readable as the format its first bytes announce: a damaged PDF, a ZIP archive that holds no
 * Word document (`unsupported`: it is another kind of file, such as a spreadsheet), or a password-protected one.
 * `reason` is written for the uploader and names no library.
 */
export class ExtractionFailed extends Schema.TaggedError<ExtractionFailed>()("ExtractionFailed", {
  unsupported: Schema.Boolean,
  reason: Schema.String
}) {}

/**
 * Port: the text of a PDF or DOCX file, as the format lays it out (one line per line of the PDF, one paragraph per
 * line of the DOCX). Only extraction: the normalisation rules (Unicode, line endings, white space) and the
 * scrubbing are core's and run on what this answers. @convene/node implements it (unpdf, mammoth).
 */
export class TextExtractor extends Context.Tag("@convene/core/TextExtractor")<TextExtractor, {
  readonly extract: (format: ExtractableFormat, bytes: Uint8Array) => Effect.Effect<string, ExtractionFailed>
}>() {}
