/**
 * What an upload becomes before it is stored: its detected type, its text normalised and PII-scrubbed (for a
 * transcript, its spoken lines scrubbed and rendered), and its file name scrubbed. Every rule is here, pure (the
 * PDF and DOCX text comes through the TextExtractor port); `prepare` is the whole computation.
 *
 * The computation is the costly part of an upload: a few seconds of CPU for 5 MiB of text dense with personal
 * data. The `ContextPreparation` port says where it runs. `ContextPreparation.inProcess` runs `prepare` on the
 * caller's thread (scrubbing gives other work a turn between slices); a host may run the same `prepare` on other
 * threads or processes instead (@convene/http runs it in worker processes), which is why its input, result and errors are
 * schemas: they cross a thread boundary as data.
 */
import { Context, Effect, Either, Layer, Schema } from "effect"
import { ValidationError } from "../shared/Errors.js"
import { ContextKind } from "./ContextItem.js"
import { detect, fileNameOf, maxContextText, normalizeText, TextTooLarge, textTooLarge, UnsupportedUpload } from "./Normalize.js"
import { scrub, scrubEach, scrubInSlices } from "./Scrubber.js"
import { TextExtractor } from "./TextExtractor.js"
import { parseTranscript } from "./Transcript.js"

/** The largest transcript speaker name and segment text kept (longer ones are cut), as TranscriptLine allows. */
const maxSpeaker = 200
const maxSegmentText = 20_000

/** The file as the host read it, with the kind the uploader asked for. */
export class ContextSource extends Schema.Class<ContextSource>("ContextSource")({
  fileName: Schema.String,
  contentType: Schema.UndefinedOr(Schema.String),
  bytes: Schema.Uint8ArrayFromSelf,
  kind: ContextKind
}) {}

/** One spoken line of a transcript upload, scrubbed. */
export class PreparedLine extends Schema.Class<PreparedLine>("PreparedLine")({
  offset_ms: Schema.Number,
  speaker: Schema.String,
  text: Schema.String
}) {}

/** What is stored for an upload. */
export class PreparedContext extends Schema.Class<PreparedContext>("PreparedContext")({
  /** The detected media type (the item's `content_type`). */
  mediaType: Schema.String,
  /** The scrubbed name kept for the item. */
  fileName: Schema.String,
  /** The stored text: normalised and scrubbed (for a transcript, its lines rendered `[hh:mm:ss] Speaker: text`). */
  text: Schema.String,
  /** A transcript's lines, for the meeting's transcript (empty for other kinds). */
  spoken: Schema.Array(PreparedLine)
}) {}

/** Why an upload is refused: 415, 413 or 400. */
export const PreparationError = Schema.Union(UnsupportedUpload, TextTooLarge, ValidationError)
export type PreparationError = typeof PreparationError.Type

const cut = (text: string, max: number) => (text.length <= max ? text : [...text].slice(0, max).join(""))

const clock = (ms: number) => {
  const total = Math.floor(ms / 1000)
  const pad = (n: number) => String(n).padStart(2, "0")
  return `${pad(Math.floor(total / 3600))}:${pad(Math.floor((total % 3600) / 60))}:${pad(total % 60)}`
}

/** A transcript's scrubbed lines, as stored for the item: one `[hh:mm:ss] Speaker: text` line per segment. */
const rendered = (lines: ReadonlyArray<PreparedLine>) =>
  lines.map((line) => `[${clock(line.offset_ms)}] ${line.speaker}: ${line.text}\n`).join("")

/** The upload's text, normalised (not yet scrubbed). A transcript must be WebVTT or SRT text: nothing is extracted for one. */
const textOf = (source: ContextSource) =>
  Effect.gen(function*() {
    const detected = yield* detect(source)
    if (source.kind === "transcript" && (detected._tag !== "Text" || detected.flavour === "markdown")) {
      return yield* Effect.fail(ValidationError.of("file", "a transcript must be a WebVTT (.vtt) or SRT (.srt) file"))
    }
    if (detected._tag === "Text") return { mediaType: detected.mediaType, text: normalizeText(detected.text) }
    const extractor = yield* TextExtractor
    const extracted = yield* extractor.extract(detected.format, source.bytes).pipe(
      Effect.mapError((failure) =>
        failure.unsupported
          ? new UnsupportedUpload({ message: `file: ${failure.reason}` })
          : ValidationError.of("file", failure.reason)
      )
    )
    if (extracted.length > maxContextText) return yield* Effect.fail(textTooLarge("the text of the document"))
    return { mediaType: detected.mediaType, text: normalizeText(extracted) }
  })

/** The upload prepared for storing, or why it is refused (see the module's comment). */
export const prepare = (source: ContextSource): Effect.Effect<PreparedContext, PreparationError, TextExtractor> =>
  Effect.gen(function*() {
    const { mediaType, text } = yield* textOf(source)
    let stored: string
    let spoken: ReadonlyArray<PreparedLine> = []
    if (source.kind === "transcript") {
      const parsed = yield* Either.mapLeft(parseTranscript(text), (problem) => ValidationError.of("file", problem))
      const speakers = yield* scrubEach(parsed.map((line) => line.speaker))
      const texts = yield* scrubEach(parsed.map((line) => line.text))
      spoken = parsed.map((line, i) =>
        new PreparedLine({
          offset_ms: line.offset_ms,
          speaker: cut(speakers[i] ?? "", maxSpeaker),
          text: cut(texts[i] ?? "", maxSegmentText)
        })
      )
      stored = rendered(spoken)
    } else {
      stored = yield* scrubInSlices(text)
    }
    if (stored.trim() === "") {
      return yield* Effect.fail(
        ValidationError.of("file", "holds no text (a scanned PDF without a text layer has none; send its text instead)")
      )
    }
    // The name may carry PII too ("call-415-555-2671.txt"): it is scrubbed like the text.
    return new PreparedContext({ mediaType, fileName: fileNameOf(scrub(source.fileName)), text: stored, spoken })
  })

/** Port: where `prepare` runs. */
export class ContextPreparation extends Context.Tag("@convene/core/ContextPreparation")<ContextPreparation, {
  readonly prepare: (source: ContextSource) => Effect.Effect<PreparedContext, PreparationError>
}>() {
  /** `prepare` on the caller's thread, reading PDF and DOCX files through the TextExtractor. */
  static readonly inProcess: Layer.Layer<ContextPreparation, never, TextExtractor> = Layer.effect(
    ContextPreparation,
    Effect.map(TextExtractor, (extractor) =>
      ContextPreparation.of({
        prepare: (source) => Effect.provideService(prepare(source), TextExtractor, extractor)
      }))
  )
}
