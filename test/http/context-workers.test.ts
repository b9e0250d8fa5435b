/**
 * The server prepares meeting context uploads on worker threads (packages/http/src/context/ContextWorkers.ts): the
 * same core `prepare` as on the main thread, its answers and refusals carried across the thread boundary as
 * schemas. The HTTP behaviour of uploads is in context.test.ts (which runs with the default of one worker thread).
 */
import { ContextPreparation, ContextSource, type PreparationError, PreparedContext } from "@convene/core"
import { NodeTextExtractor } from "@convene/node"
import { Cause, ConfigProvider, Effect, Either, Exit, Layer, ManagedRuntime } from "effect"
import * as Fs from "node:fs"
import { afterAll, describe, expect, it } from "vitest"
import { serverLimits } from "../../packages/http/src/Config.js"
import * as ContextWorkers from "../../packages/http/src/context/ContextWorkers.js"

const fixture = (name: string) => new Uint8Array(Fs.readFileSync(new URL(`../fixtures/context/${name}`, import.meta.url)))
const text = (value: string) => new TextEncoder().encode(value)

const source = (fileName: string, bytes: Uint8Array, kind: ContextSource["kind"] = "document", contentType?: string) =>
  new ContextSource({ fileName, contentType, bytes, kind })

const onWorkers = ManagedRuntime.make(ContextWorkers.layer({ size: 2 }))
const onMainThread = ManagedRuntime.make(ContextPreparation.inProcess.pipe(Layer.provide(NodeTextExtractor.layer)))

afterAll(async () => {
  await onWorkers.dispose()
  await onMainThread.dispose()
})

const prepareOn = (runtime: typeof onWorkers, upload: ContextSource) =>
  runtime.runPromiseExit(Effect.flatMap(ContextPreparation, (preparation) => preparation.prepare(upload)))

/** A transcript of `cues` SRT cues, each with a phone number and an e-mail address. */
const srt = (cues: number) =>
  Array.from({ length: cues }, (_, i) => {
    const at = `00:${String(Math.floor(i / 60) % 60).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}`
    return `${i + 1}\r\n${at},000 --> ${at},900\r\nSpeaker ${i % 7}: call +1 415 555 ${String(1000 + (i % 9000))} or mail p${i}@example.com\r\n\r\n`
  }).join("")

describe("context preparation on worker threads", () => {
  it("prepares every kind of upload exactly as the main thread does", async () => {
    const uploads = [
      source("notes from ann@example.com.txt", text("Call  Ann on +44 20 7946 0958\r\n\r\n\r\nor ann@example.com\u00a0today.\n")),
      source("plan.md", text("# Plan\n\n- card 4111 1111 1111 1111\n"), "notes", "text/markdown"),
      source("call.vtt", text("WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n<v Dana>Reach me at dana@example.com\n"), "transcript"),
      source("call.srt", text(srt(2000)), "transcript"),
      source("plan.pdf", fixture("plan.pdf")),
      source("agenda.docx", fixture("agenda.docx"), "document", "application/octet-stream")
    ]
    for (const upload of uploads) {
      const [worker, main] = [await prepareOn(onWorkers, upload), await prepareOn(onMainThread, upload)]
      expect(Exit.isSuccess(worker), upload.fileName).toBe(true)
      expect(worker, upload.fileName).toEqual(main)
      if (Exit.isSuccess(worker)) {
        expect(worker.value).toBeInstanceOf(PreparedContext)
        expect(worker.value.text).not.toMatch(/@example\.com|7946 0958|4111 1111/)
      }
    }
    const transcript = await prepareOn(onWorkers, uploads[3]!)
    expect(Exit.isSuccess(transcript) && transcript.value.spoken.length).toBe(2000)
  })

  it("refuses what the main thread refuses, with the same errors (415, 413, 400 naming the field)", async () => {
    const refusals: ReadonlyArray<readonly [ContextSource, PreparationError["_tag"]]> = [
      [source("pixel.txt", fixture("pixel.png")), "UnsupportedUpload"],
      [source("archive.docx", fixture("archive.zip")), "UnsupportedUpload"],
      [source("big.txt", new Uint8Array(5 * 1024 * 1024 + 1).fill(0x61)), "TextTooLarge"],
      [source("broken.pdf", fixture("broken.pdf")), "ValidationError"],
      [source("notes.md", text("# not a transcript\n"), "transcript"), "ValidationError"],
      [source("empty.txt", text("  \n\n")), "ValidationError"]
    ]
    for (const [upload, tag] of refusals) {
      const [worker, main] = [await prepareOn(onWorkers, upload), await prepareOn(onMainThread, upload)]
      expect(worker, upload.fileName).toEqual(main)
      const failure = Exit.isFailure(worker) ? Cause.failureOption(worker.cause) : undefined
      expect(failure?._tag === "Some" && failure.value._tag, upload.fileName).toBe(tag)
      expect(failure?._tag === "Some" && failure.value.message, upload.fileName).toMatch(/^file: /)
    }
  })

  it("prepares uploads side by side on its threads", async () => {
    const uploads = Array.from({ length: 6 }, (_, i) => source(`t${i}.srt`, text(srt(500 + i)), "transcript"))
    const exits = await Promise.all(uploads.map((upload) => prepareOn(onWorkers, upload)))
    expect(exits.map((exit) => Exit.isSuccess(exit) && exit.value.spoken.length)).toEqual([500, 501, 502, 503, 504, 505])
  })
})

describe("CONVENE_CONTEXT_WORKERS", () => {
  const read = (env: Record<string, string>) =>
    Effect.runSync(Effect.either(Effect.withConfigProvider(serverLimits, ConfigProvider.fromMap(new Map(Object.entries(env))))))

  it("is 1 by default, 0 (the main thread) to 64; anything else stops the server at start", () => {
    expect(Either.map(read({}), (limits) => limits.contextWorkers)).toEqual(Either.right(1))
    for (const good of ["0", "4", "64"]) {
      expect(Either.map(read({ CONVENE_CONTEXT_WORKERS: good }), (limits) => limits.contextWorkers)).toEqual(Either.right(Number(good)))
    }
    for (const bad of ["-1", "65", "two", "1.5"]) {
      expect(Either.isLeft(read({ CONVENE_CONTEXT_WORKERS: bad })), bad).toBe(true)
    }
  })
})
