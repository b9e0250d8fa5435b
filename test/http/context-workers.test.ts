/**
 * The server prepares meeting context uploads in worker processes (packages/http/src/context/ContextWorkers.ts): the
 * same core `prepare` as on the main thread, its answers and refusals carried across the thread boundary as
 * schemas. The HTTP behaviour of uploads is in context.test.ts (which runs with the default of one worker).
 */
import { ContextPreparation, ContextSource, type PreparationError, PreparedContext } from "@convene/core"
import { NodeTextExtractor } from "@convene/node"
import { Cause, ConfigProvider, Effect, Either, Exit, Layer, ManagedRuntime } from "effect"
import * as Fs from "node:fs"
import * as Zlib from "node:zlib"
import { afterAll, describe, expect, it } from "vitest"
import { serverLimits } from "../../packages/http/src/Config.js"
import * as ContextWorkers from "../../packages/http/src/context/ContextWorkers.js"
import { startServerProcess } from "../support/process.js"
import { client, provision } from "../support/server.js"

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

const wordNamespace = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
const contentTypes = `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
  `<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
  `<Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ` +
  `ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`
const relationships = `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
  `<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" ` +
  `Target="word/document.xml"/></Relationships>`

/** A transcript of `cues` SRT cues, each with a phone number and an e-mail address. */
const srt = (cues: number) =>
  Array.from({ length: cues }, (_, i) => {
    const at = `00:${String(Math.floor(i / 60) % 60).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}`
    return `${i + 1}\r\n${at},000 --> ${at},900\r\nSpeaker ${i % 7}: call +1 415 555 ${String(1000 + (i % 9000))} or mail p${i}@example.com\r\n\r\n`
  }).join("")

describe("context preparation in worker processes", () => {
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

  it("prepares uploads side by side on its workers", async () => {
    const uploads = Array.from({ length: 6 }, (_, i) => source(`t${i}.srt`, text(srt(500 + i)), "transcript"))
    const exits = await Promise.all(uploads.map((upload) => prepareOn(onWorkers, upload)))
    expect(exits.map((exit) => Exit.isSuccess(exit) && exit.value.spoken.length)).toEqual([500, 501, 502, 503, 504, 505])
  })
})

/** A ZIP archive of `entries`, deflated: enough of the format for a DOCX reader. */
const zip = (entries: ReadonlyArray<readonly [name: string, data: Buffer]>) => {
  const parts: Array<Buffer> = []
  const directory: Array<Buffer> = []
  let offset = 0
  for (const [name, data] of entries) {
    const compressed = Zlib.deflateRawSync(data, { level: 1 })
    const crc = Zlib.crc32(data)
    const nameBytes = Buffer.from(name)
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0)
    local.writeUInt16LE(20, 4)
    local.writeUInt16LE(8, 8)
    local.writeUInt32LE(crc, 14)
    local.writeUInt32LE(compressed.length, 18)
    local.writeUInt32LE(data.length, 22)
    local.writeUInt16LE(nameBytes.length, 26)
    const central = Buffer.alloc(46)
    central.writeUInt32LE(0x02014b50, 0)
    central.writeUInt16LE(20, 4)
    central.writeUInt16LE(20, 6)
    central.writeUInt16LE(8, 10)
    central.writeUInt32LE(crc, 16)
    central.writeUInt32LE(compressed.length, 20)
    central.writeUInt32LE(data.length, 24)
    central.writeUInt16LE(nameBytes.length, 28)
    central.writeUInt32LE(offset, 42)
    parts.push(local, nameBytes, compressed)
    directory.push(central, nameBytes)
    offset += local.length + nameBytes.length + compressed.length
  }
  const listing = Buffer.concat(directory)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(entries.length, 8)
  end.writeUInt16LE(entries.length, 10)
  end.writeUInt32LE(listing.length, 12)
  end.writeUInt32LE(offset, 16)
  return new Uint8Array(Buffer.concat([...parts, listing, end]))
}

describe("a worker that runs out of memory", () => {
  const tight = ManagedRuntime.make(ContextWorkers.layer({ size: 1, maxHeapMb: 128 }))
  afterAll(() => tight.dispose())

  it("fails that upload as the server's fault (500), the server goes on, and the next upload gets a new worker", async () => {
    // A ~100 KB DOCX with 15 MiB of XML (under the extractor's 16 MiB): reading it takes ~750 MB, past 128 MiB.
    const paragraph = "<w:p><w:r><w:t>Quarterly planning notes, nothing personal here.</w:t></w:r></w:p>"
    const docx = zip([
      ["[Content_Types].xml", Buffer.from(contentTypes)],
      ["_rels/.rels", Buffer.from(relationships)],
      ["word/document.xml", Buffer.concat([
        Buffer.from(`<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="${wordNamespace}"><w:body>`),
        Buffer.alloc(paragraph.length * Math.floor((15 * 1024 * 1024) / paragraph.length), paragraph),
        Buffer.from("</w:body></w:document>")
      ])]
    ])
    const crashed = await tight.runPromiseExit(
      Effect.flatMap(ContextPreparation, (preparation) => preparation.prepare(source("long.docx", docx)))
    )
    expect(Exit.isFailure(crashed) && Cause.isDie(crashed.cause)).toBe(true)
    const next = await tight.runPromiseExit(
      Effect.flatMap(ContextPreparation, (preparation) => preparation.prepare(source("a.txt", text("mail ann@example.com\n"))))
    )
    expect(Exit.isSuccess(next) && next.value.text).toBe("mail [EMAIL]\n")
  }, 120_000)
})

describe("the compiled server's workers", () => {
  /** The pids of `pid`'s child processes (Linux's /proc). */
  const childrenOf = (pid: number) =>
    Fs.readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      Fs.readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").split(" ").filter((word) => word !== "").map(Number)
    )
  const alive = (pid: number) => Fs.existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(Fs.readFileSync(`/proc/${pid}/status`, "utf8"))

  it("start on the first context upload and end with the server, even when it is killed", async () => {
    const server = await startServerProcess({ CONVENE_STORE: "memory" })
    try {
      expect(childrenOf(server.child.pid!)).toEqual([])
      const { token } = await provision(server.url, { role: "OWNER" })
      const meeting = await client(server.url, token).post("/v1/meetings", { title: "Workers" })
      const form = new FormData()
      form.set("file", new Blob(["Call Ann: ann@example.com\n"], { type: "text/plain" }), "notes.txt")
      const uploaded = await fetch(`${server.url}/v1/meetings/${meeting.body.id}/context`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}` },
        body: form
      })
      expect(uploaded.status).toBe(201)
      const workers = childrenOf(server.child.pid!)
      expect(workers).toHaveLength(1)
      await server.kill()
      const deadline = Date.now() + 10_000
      while (workers.some(alive) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
      for (const pid of workers.filter(alive)) console.log(pid, Fs.readFileSync(`/proc/${pid}/status`, "utf8").split("\n").slice(0, 8).join(" | "), Fs.readFileSync(`/proc/${pid}/cmdline`, "utf8"))
      expect(workers.filter(alive)).toEqual([])
    } finally {
      await server.kill()
    }
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
