/**
 * NodeTextExtractor, the TextExtractor port on unpdf (PDF.js) and mammoth, on small real files shipped in
 * test/fixtures/context (a one-page PDF with a compressed content stream, a DOCX of four paragraphs, a damaged
 * PDF and a ZIP that is not a Word document).
 */
import { type ExtractableFormat, ExtractionFailed, TextExtractor } from "@convene/core"
import { NodeTextExtractor } from "@convene/node"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"

const fixture = (name: string) => new Uint8Array(Fs.readFileSync(new URL(`../fixtures/context/${name}`, import.meta.url)))

const extract = (format: ExtractableFormat, name: string) =>
  Effect.flatMap(TextExtractor, (extractor) => extractor.extract(format, fixture(name)))

layer(NodeTextExtractor.layer)("NodeTextExtractor", (it) => {
  it.effect("reads a PDF's text, line by line", () =>
    Effect.gen(function*() {
      expect(yield* extract("pdf", "plan.pdf")).toBe("Launch plan for Q3\nContact: sam@example.org or +44 20 7946 0958")
    }))

  it.effect("reads a DOCX's paragraphs", () =>
    Effect.gen(function*() {
      const text = yield* extract("docx", "agenda.docx")
      expect(text.split("\n").filter((line) => line !== "")).toEqual([
        "Quarterly planning",
        "Owner: dana@example.com",
        "Budget   review\tfor Q3",
        "Café notes"
      ])
    }))

  it.effect("a damaged PDF fails as unreadable, naming no library", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(extract("pdf", "broken.pdf"))
      expect(error).toBeInstanceOf(ExtractionFailed)
      expect(error).toMatchObject({ unsupported: false, reason: "the PDF could not be read (it may be damaged)" })
    }))

  it.effect("a ZIP that holds no Word document is unsupported; a damaged DOCX is unreadable", () =>
    Effect.gen(function*() {
      expect(yield* Effect.flip(extract("docx", "archive.zip"))).toMatchObject({ unsupported: true })
      const truncated = fixture("agenda.docx").slice(0, 400)
      const error = yield* Effect.flip(Effect.flatMap(TextExtractor, (extractor) => extractor.extract("docx", truncated)))
      expect(error._tag).toBe("ExtractionFailed")
    }))

  it.effect("a DOCX whose parts announce more than 256 MiB is refused before anything is inflated", () =>
    Effect.gen(function*() {
      const bomb = fixture("agenda.docx")
      const view = new DataView(bomb.buffer, bomb.byteOffset, bomb.byteLength)
      // Every central directory entry announces 100 MiB uncompressed: 300 MiB in all.
      let patched = 0
      for (let at = 0; at + 4 <= bomb.length; at++) {
        if (view.getUint32(at, true) === 0x02014b50) {
          view.setUint32(at + 24, 100 * 1024 * 1024, true)
          patched++
        }
      }
      expect(patched).toBe(3)
      expect(NodeTextExtractor.announcedSize(fixture("agenda.docx"))).toBeLessThan(10_000)
      expect(NodeTextExtractor.announcedSize(bomb)).toBe(300 * 1024 * 1024)
      const error = yield* Effect.flip(Effect.flatMap(TextExtractor, (extractor) => extractor.extract("docx", bomb)))
      expect(error).toMatchObject({ unsupported: false, reason: "the DOCX document expands to more than 256 MiB; send its text instead" })
    }))

  it.effect("a DOCX with more than 16 MiB of XML is refused before anything is inflated", () =>
    Effect.gen(function*() {
      const large = fixture("agenda.docx")
      const view = new DataView(large.buffer, large.byteOffset, large.byteLength)
      // The central directory entry of word/document.xml announces 17 MiB (an archive of 17 MiB of highly
      // compressible XML is a few hundred kilobytes; reading it would take about a gigabyte).
      for (let at = 0; at + 4 <= large.length; at++) {
        if (view.getUint32(at, true) !== 0x02014b50) continue
        const name = Buffer.from(large.subarray(at + 46, at + 46 + view.getUint16(at + 28, true))).toString("latin1")
        if (name === "word/document.xml") view.setUint32(at + 24, 17 * 1024 * 1024, true)
      }
      expect(NodeTextExtractor.announcedSizes(large)?.xml).toBeGreaterThan(NodeTextExtractor.maxXmlBytes)
      expect(NodeTextExtractor.announcedSizes(large)?.total).toBeLessThan(NodeTextExtractor.maxExpandedBytes)
      const error = yield* Effect.flip(Effect.flatMap(TextExtractor, (extractor) => extractor.extract("docx", large)))
      expect(error).toMatchObject({ unsupported: false, reason: "the DOCX document holds more than 16 MiB of XML; send its text instead" })
    }))

  it.effect("leaves the caller's bytes as they were", () =>
    Effect.gen(function*() {
      const bytes = fixture("plan.pdf")
      const copy = bytes.slice()
      yield* Effect.flatMap(TextExtractor, (extractor) => extractor.extract("pdf", bytes))
      expect(bytes).toEqual(copy)
    }))
})
