/**
 * The shared upload readers (packages/http/src/http/Uploads.ts) on a bare server of their own: what each
 * kind of multipart body reads as, and which error each problem is. The attachment endpoints use them end to
 * end in attachments.test.ts.
 */
import { HttpRouter, HttpServer, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { createHash } from "node:crypto"
import { createServer } from "node:http"
import { Effect, FastCheck, Layer, ManagedRuntime, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { collectUpload, MaxUploadBytes, streamUpload, type UploadError } from "../../packages/http/src/http/Uploads.js"
import * as MultipartParser from "../../packages/http/src/http/MultipartParser.js"
import { send } from "./fuzz/wire.js"

const cap = 64 * 1024

const statusOf = (error: UploadError) => {
  switch (error._tag) {
    case "BodyTooLarge":
      return 413
    case "MediaTypeUnsupported":
      return 415
    case "MalformedBody":
    case "ValidationError":
      return 400
  }
}

const answer = <R>(read: Effect.Effect<Record<string, unknown>, UploadError, R>) =>
  read.pipe(
    Effect.flatMap((body) => HttpServerResponse.json(body)),
    Effect.catchAll((error) =>
      error._tag === "HttpBodyError"
        ? Effect.die(error)
        : HttpServerResponse.json({ tag: error._tag, message: error.message }, { status: statusOf(error) })
    ),
    Effect.provideService(MaxUploadBytes, cap)
  )

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

const app = HttpRouter.empty.pipe(
  HttpRouter.post(
    "/collect",
    answer(Effect.map(collectUpload, ({ fields, file }) => ({
      fileName: file.fileName,
      contentType: file.contentType,
      size: file.bytes.length,
      sha256: sha256(file.bytes),
      fields
    })))
  ),
  HttpRouter.post(
    "/stream",
    answer(Effect.scoped(Effect.gen(function*() {
      const upload = yield* streamUpload
      const before = yield* upload.fields
      const hash = createHash("sha256")
      let size = 0
      yield* Stream.runForEach(upload.content, (bytes) =>
        Effect.sync(() => {
          size += bytes.length
          hash.update(bytes)
        }))
      return { fileName: upload.fileName, contentType: upload.contentType, size, sha256: hash.digest("hex"), before, fields: yield* upload.fields }
    })))
  )
)

let runtime: ManagedRuntime.ManagedRuntime<HttpServer.HttpServer, unknown> | undefined
let url = ""

beforeAll(async () => {
  runtime = ManagedRuntime.make(
    HttpServer.serve(app).pipe(
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
    )
  )
  const server = await runtime.runPromise(HttpServer.HttpServer)
  const address = server.address
  if (address._tag !== "TcpAddress") throw new Error("the server is not on TCP")
  url = `http://127.0.0.1:${address.port}`
})

afterAll(async () => {
  await runtime?.dispose()
})

const boundary = "----convene-test-boundary"
type Part = { readonly name: string; readonly value: string } | {
  readonly name: string
  readonly fileName?: string
  readonly disposition?: string
  readonly contentType?: string
  readonly bytes: Uint8Array
}

const multipart = (parts: ReadonlyArray<Part>, options: { readonly close?: boolean } = {}) => {
  const pieces: Array<Buffer> = []
  for (const part of parts) {
    pieces.push(Buffer.from(`--${boundary}\r\n`))
    if ("value" in part) {
      pieces.push(Buffer.from(`Content-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`))
    } else {
      const disposition = part.disposition ?? `form-data; name="${part.name}"; filename="${part.fileName ?? "f.bin"}"`
      pieces.push(Buffer.from(`Content-Disposition: ${disposition}\r\n`))
      if (part.contentType !== undefined) pieces.push(Buffer.from(`Content-Type: ${part.contentType}\r\n`))
      pieces.push(Buffer.from("\r\n"), Buffer.from(part.bytes), Buffer.from("\r\n"))
    }
  }
  if (options.close !== false) pieces.push(Buffer.from(`--${boundary}--\r\n`))
  return Buffer.concat(pieces)
}

const post = (path: string, body: Buffer, contentType: string | null = `multipart/form-data; boundary=${boundary}`, chunked = false) =>
  send(url, {
    method: "POST",
    path,
    headers: contentType === null ? {} : { "content-type": contentType },
    body: { kind: "bytes", bytes: body, chunked }
  })

const everyByte = (size: number) => Uint8Array.from({ length: size }, (_, index) => (index * 7 + (index >> 8)) & 0xff)

describe.each(["/collect", "/stream"])("%s", (path) => {
  it("reads the file byte for byte, with its name, its content type as sent and the text fields around it", async () => {
    const bytes = everyByte(cap)
    const response = await post(path, multipart([
      { name: "kind", value: "notes" },
      { name: "file", fileName: "Quarterly report (final) ü.json", contentType: "application/json; charset=utf-8", bytes },
      { name: "after", value: "späť" }
    ]))
    expect(response.status).toBe(200)
    expect(response.json).toMatchObject({
      fileName: "Quarterly report (final) ü.json",
      contentType: "application/json; charset=utf-8",
      size: cap,
      sha256: sha256(bytes),
      fields: { kind: "notes", after: "späť" }
    })
  })

  it("takes a file with no Content-Type as application/octet-stream, and an empty file", async () => {
    const response = await post(path, multipart([{ name: "file", fileName: "empty", bytes: new Uint8Array(0) }]))
    expect(response.json).toMatchObject({ fileName: "empty", contentType: "application/octet-stream", size: 0 })
  })

  it("refuses a file over the cap with 413 and closes the connection, chunked or not; the cap itself passes", async () => {
    const exact = await post(path, multipart([{ name: "file", bytes: everyByte(cap) }]))
    expect(exact.status).toBe(200)
    for (const chunked of [false, true]) {
      const response = await post(path, multipart([{ name: "file", bytes: everyByte(cap + 1) }]), undefined, chunked)
      expect([response.status, response.json, response.headers.connection]).toEqual([
        413,
        { tag: "BodyTooLarge", message: `the upload is larger than the limit of ${cap} bytes` },
        "close"
      ])
    }
  })

  it("refuses a declared length past the cap at once, and a large body is drained so the 413 arrives", async () => {
    const response = await send(url, {
      method: "POST",
      path,
      headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
      body: { kind: "stream", prefix: `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big"\r\n\r\n`, size: 8 * 1024 * 1024, fill: "x", suffix: `\r\n--${boundary}--\r\n` }
    })
    expect(response.status).toBe(413)
  })

  it("refuses a declared Content-Length past the cap before reading any of the body", async () => {
    const response = await send(url, {
      method: "POST",
      path,
      headers: { "content-type": `multipart/form-data; boundary=${boundary}`, "content-length": String(100 * cap) }
    }, 5000)
    expect([response.status, response.headers.connection]).toEqual([413, "close"])
  })

  it("is 415 for a body that is not multipart/form-data", async () => {
    for (const contentType of ["application/json", "multipart/mixed; boundary=x", "text/plain", null, "not a type"]) {
      const response = await post(path, Buffer.from("{}"), contentType)
      expect([contentType, response.status, (response.json as { tag?: string } | undefined)?.tag]).toEqual([contentType, 415, "MediaTypeUnsupported"])
    }
  })

  it("is 400 for a missing file, `file` as text, two files, a file in another field, a repeated field", async () => {
    const cases: ReadonlyArray<[ReadonlyArray<Part>, string]> = [
      [[{ name: "kind", value: "notes" }], "file: no file was sent"],
      [[], "file: no file was sent"],
      [[{ name: "file", value: "text" }], "file: must be a file"],
      [[{ name: "file", bytes: everyByte(10) }, { name: "file", bytes: everyByte(10) }], "file: an upload takes one file; this one has more"],
      [[{ name: "other", bytes: everyByte(10) }, { name: "file", bytes: everyByte(10) }], "other: an upload takes one file"],
      [[{ name: "file", bytes: everyByte(10) }, { name: "doc", bytes: everyByte(10) }], "doc: an upload takes one file"],
      [[{ name: "kind", value: "a" }, { name: "file", bytes: everyByte(10) }, { name: "kind", value: "b" }], "kind: is given more than once"]
    ]
    for (const [parts, message] of cases) {
      const response = await post(path, multipart(parts))
      expect(response.status).toBe(400)
      expect(response.json).toMatchObject({ tag: "ValidationError" })
      expect((response.json as { message: string }).message).toContain(message)
    }
  })

  it("is 400 bad_request for a malformed body: no boundary, cut off, broken headers, a bad filename*, too many parts", async () => {
    const cut = multipart([{ name: "file", bytes: everyByte(1000) }], { close: false })
    const cases: ReadonlyArray<[Buffer, string]> = [
      [cut, `multipart/form-data; boundary=${boundary}`],
      [Buffer.from("no parts at all"), `multipart/form-data; boundary=${boundary}`],
      [Buffer.concat([multipart([{ name: "file", bytes: everyByte(10) }], { close: false }), Buffer.from(`--${boundary}`)]), `multipart/form-data; boundary=${boundary}`],
      [Buffer.concat([multipart([{ name: "file", bytes: everyByte(10) }], { close: false }), Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="a"\r\n`)]), `multipart/form-data; boundary=${boundary}`],
      [multipart([{ name: "file", bytes: everyByte(10) }]), "multipart/form-data"],
      [multipart([{ name: "file", disposition: "form-data; filename=\"x\"", bytes: everyByte(10) }]), `multipart/form-data; boundary=${boundary}`],
      [multipart([{ name: "file", disposition: "form-data; name=\"file\"; filename*=UTF-8''%E0%A4%A", bytes: everyByte(10) }]), `multipart/form-data; boundary=${boundary}`],
      [multipart([...Array.from({ length: 40 }, (_, index) => ({ name: `f${index}`, value: "v" })), { name: "file", bytes: everyByte(1) }]), `multipart/form-data; boundary=${boundary}`],
      [multipart([{ name: "big", value: "x".repeat(70 * 1024) }, { name: "file", bytes: everyByte(1) }]), `multipart/form-data; boundary=${boundary}`]
    ]
    for (const [index, [body, contentType]] of cases.entries()) {
      const response = await post(path, body, contentType)
      expect([index, response.status, response.json]).toEqual([index, 400, { tag: "MalformedBody", message: expect.stringMatching(/^the multipart body cannot be read: /) }])
    }
    // The server is still there.
    expect((await post(path, multipart([{ name: "file", bytes: everyByte(3) }]))).status).toBe(200)
  })
})

describe("/stream", () => {
  it("knows the fields before the file at once, and those after it once the content has ended", async () => {
    const response = await post("/stream", multipart([
      { name: "kind", value: "transcript" },
      { name: "file", bytes: everyByte(100) },
      { name: "note", value: "later" }
    ]))
    expect(response.json).toMatchObject({ before: { kind: "transcript" }, fields: { kind: "transcript", note: "later" } })
  })

  it("reads a raw UTF-8 file name (as browsers, curl and fetch send it), and browsers' %22 for a quote", async () => {
    const raw = await post("/stream", multipart([{ name: "file", fileName: "会议 📅.txt", bytes: everyByte(3) }]))
    expect(raw.json).toMatchObject({ fileName: "会议 📅.txt" })
    const quoted = await post("/stream", multipart([{ name: "file", fileName: "a%22b%22.txt", bytes: everyByte(3) }]))
    expect(quoted.json).toMatchObject({ fileName: "a\"b\".txt" })
    const escaped = await post("/stream", multipart([{ name: "file", disposition: "form-data; name=\"file\"; filename=\"a\\\"b.txt\"", bytes: everyByte(3) }]))
    expect(escaped.json).toMatchObject({ fileName: "a\"b.txt" })
  })

  it("decodes an RFC 5987 filename*", async () => {
    const response = await post("/stream", multipart([
      { name: "file", disposition: "form-data; name=\"file\"; filename*=UTF-8''%C3%BCber%20plan.txt", bytes: everyByte(3) }
    ]))
    expect(response.json).toMatchObject({ fileName: "über plan.txt" })
  })
})


describe("MultipartParser", () => {
  /** Parses `body` fed in the given piece sizes: each part's head and its bytes, joined. */
  const parse = (body: Buffer, sizes: ReadonlyArray<number>) => {
    const parser = MultipartParser.make(boundary)
    const parts: Array<{ head: MultipartParser.PartHead; bytes: Buffer }> = []
    let ended = false
    const take = (events: ReadonlyArray<MultipartParser.MultipartEvent>) => {
      for (const event of events) {
        if (event._tag === "PartStart") parts.push({ head: event.part, bytes: Buffer.alloc(0) })
        if (event._tag === "Data") parts[parts.length - 1]!.bytes = Buffer.concat([parts[parts.length - 1]!.bytes, event.bytes])
        if (event._tag === "End") ended = true
      }
    }
    let offset = 0
    for (let turn = 0; offset < body.length; turn++) {
      const size = Math.max(1, sizes.length === 0 ? body.length : sizes[turn % sizes.length]!)
      take(parser.push(body.subarray(offset, offset + size)))
      offset += size
    }
    parser.finish()
    return { parts, ended }
  }

  // File bytes that look like the start of a delimiter, again and again.
  const tricky = Buffer.concat([Buffer.from(`\r\n--${boundary.slice(0, 10)}\r\n-\r\n--`), Buffer.from(everyByte(3000)), Buffer.from("\r\n--")])
  const body = Buffer.concat([
    Buffer.from("preamble to ignore\r\n"),
    multipart([
      { name: "kind", value: "notes" },
      { name: "file", fileName: "a.bin", contentType: "application/octet-stream", bytes: tricky },
      { name: "empty", value: "" }
    ]),
    Buffer.from("epilogue to ignore")
  ])

  it("reads the same parts however the body is cut into pieces", () => {
    const whole = parse(body, [])
    expect(whole.ended).toBe(true)
    expect(whole.parts.map((part) => [part.head.name, part.head.fileName, part.head.contentType])).toEqual([
      ["kind", undefined, undefined],
      ["file", "a.bin", "application/octet-stream"],
      ["empty", undefined, undefined]
    ])
    expect(whole.parts.map((part) => part.bytes.toString("latin1"))).toEqual(["notes", tricky.toString("latin1"), ""])
    FastCheck.assert(
      FastCheck.property(FastCheck.array(FastCheck.integer({ min: 1, max: 200 }), { minLength: 1, maxLength: 20 }), (sizes) => {
        const cut = parse(body, sizes)
        expect(cut.parts.map((part) => part.bytes.toString("latin1"))).toEqual(whole.parts.map((part) => part.bytes.toString("latin1")))
        expect(cut.parts.map((part) => part.head)).toEqual(whole.parts.map((part) => part.head))
      }),
      { numRuns: 200 }
    )
  })

  it("refuses what is not multipart/form-data: no Content-Disposition, no name, no CRLF after a delimiter, cut off", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      [`--${boundary}\r\nContent-Type: text/plain\r\n\r\nx\r\n--${boundary}--`, "no Content-Disposition"],
      [`--${boundary}\r\nContent-Disposition: form-data; filename="a"\r\n\r\nx\r\n--${boundary}--`, "has no name"],
      [`--${boundary}\r\nContent-Disposition: attachment; name="a"\r\n\r\nx\r\n--${boundary}--`, "is not `form-data"],
      [`--${boundary}XYZ\r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r\n--${boundary}--`, "not followed by CRLF"],
      [`--${boundary}\r\nContent-Disposition: form-data; name="a"\r\n\r\nx`, "ends before its closing boundary"],
      [`--${boundary}\r\nbroken header\r\n\r\nx\r\n--${boundary}--`, "header line has no name"]
    ]
    for (const [text, reason] of cases) {
      expect(() => parse(Buffer.from(text), []), text).toThrow(reason)
    }
  })

  it("reads Content-Disposition parameters as clients write them", () => {
    const read = (value: string) => MultipartParser.dispositionParameters(value)
    expect(read("form-data; name=\"a\"; filename=\"C:\\dir\\x.txt\"")?.parameters.get("filename")).toBe("C:\\dir\\x.txt")
    expect(read("form-data; name=\"a\"; filename=\"say \\\"hi\\\".txt\"")?.parameters.get("filename")).toBe("say \"hi\".txt")
    expect(read("FORM-DATA;NAME=a;FileName=b.txt")?.parameters).toEqual(new Map([["name", "a"], ["filename", "b.txt"]]))
    expect(read("form-data; name=\"semi;colon\"")?.parameters.get("name")).toBe("semi;colon")
    expect(read("form-data; name=\"unterminated")).toBeUndefined()
    expect(read("form-data; name")).toBeUndefined()
  })
})
