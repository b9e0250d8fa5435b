/**
 * The BlobStore contract: bytes in and out as streams, byte for byte, whole or in ranges; a put is all or nothing
 * (a failed or interrupted put leaves nothing, not even over what was stored before); keys listed for the sweep by
 * creation time, in pages.
 */
import { BlobStore } from "@convene/core"
import { expect, layer } from "@effect/vitest"
import { Chunk, DateTime, Effect, Fiber, type Layer, Option, Stream, TestClock, TestServices } from "effect"
import { uuid } from "./fixtures.js"

/** `size` bytes running through all 256 values (shifted by `seed`, so two blobs differ). */
export const bytesOf = (size: number, seed = 0): Uint8Array =>
  Uint8Array.from({ length: size }, (_, index) => (index + seed + (index >> 8)) & 0xff)

/** The bytes cut into pieces of the given sizes, round and round. */
const pieces = (bytes: Uint8Array, sizes: ReadonlyArray<number>): Stream.Stream<Uint8Array> => {
  const out: Array<Uint8Array> = []
  for (let offset = 0, turn = 0; offset < bytes.length; turn++) {
    const size = sizes[turn % sizes.length]!
    out.push(bytes.subarray(offset, offset + size))
    offset += size
  }
  return Stream.fromIterable(out)
}

const collect = (stream: Stream.Stream<Uint8Array>) =>
  Effect.map(Stream.runCollect(stream), (chunks) => {
    const all = Chunk.toReadonlyArray(chunks)
    return { bytes: Buffer.concat(all.map((piece) => Buffer.from(piece))), largest: Math.max(0, ...all.map((piece) => piece.length)) }
  })

const key = () => uuid()

export const suite = (name: string, storeLayer: Layer.Layer<BlobStore, unknown>) => {
  layer(storeLayer, { timeout: "120 seconds" })(`BlobStore (${name})`, (it) => {
    it.effect("stores the bytes as given and answers them byte for byte, with the size", () =>
      Effect.gen(function*() {
        const blobs = yield* BlobStore
        const k = key()
        const bytes = bytesOf(300_000, 7)
        expect(yield* blobs.put(k, pieces(bytes, [1, 4096, 65_537, 100]))).toBe(bytes.length)
        expect(yield* blobs.size(k)).toEqual(Option.some(bytes.length))
        expect((yield* collect(blobs.read(k))).bytes.equals(Buffer.from(bytes))).toBe(true)
        expect(Option.isNone(yield* blobs.size(key()))).toBe(true)
      }))

    it.effect("an empty blob is stored, sized 0 and read as nothing", () =>
      Effect.gen(function*() {
        const blobs = yield* BlobStore
        const k = key()
        expect(yield* blobs.put(k, Stream.empty)).toBe(0)
        expect(yield* blobs.size(k)).toEqual(Option.some(0))
        expect((yield* collect(blobs.read(k))).bytes.length).toBe(0)
      }))

    it.effect("reads ranges: the first bytes, the middle across piece boundaries, the tail, one byte, none", () =>
      Effect.gen(function*() {
        const blobs = yield* BlobStore
        const k = key()
        const bytes = bytesOf(700_000, 3)
        yield* blobs.put(k, pieces(bytes, [65_536]))
        const ranges: ReadonlyArray<readonly [number, number]> = [
          [0, 1],
          [0, 100],
          [262_000, 530_000],
          [262_144, 262_145],
          [699_990, 700_000],
          [350_000, 350_000],
          [0, 700_000]
        ]
        for (const [offset, end] of ranges) {
          const read = yield* collect(blobs.read(k, { offset, end }))
          expect([offset, end, read.bytes.equals(Buffer.from(bytes.subarray(offset, end)))]).toEqual([offset, end, true])
        }
      }))

    it.effect("a large file goes in and comes out in pieces, never as one buffer", () =>
      Effect.gen(function*() {
        const blobs = yield* BlobStore
        const k = key()
        const size = 6 * 1024 * 1024 + 12_345
        const bytes = bytesOf(size, 11)
        expect(yield* blobs.put(k, pieces(bytes, [64 * 1024, 1000, 333_333]))).toBe(size)
        const read = yield* collect(blobs.read(k))
        expect(read.bytes.equals(Buffer.from(bytes))).toBe(true)
        expect(read.largest).toBeLessThanOrEqual(1024 * 1024)
        const tail = yield* collect(blobs.read(k, { offset: size - 5_000_000, end: size }))
        expect(tail.bytes.equals(Buffer.from(bytes.subarray(size - 5_000_000)))).toBe(true)
        expect(tail.largest).toBeLessThanOrEqual(1024 * 1024)
        yield* blobs.delete(k)
      }))

    it.effect("a put whose stream fails fails with its error and stores nothing, and keeps what was there", () =>
      Effect.gen(function*() {
        const blobs = yield* BlobStore
        const fresh = key()
        const broken = Stream.concat(pieces(bytesOf(400_000), [100_000]), Stream.fail("client went away" as const))
        expect(yield* Effect.flip(blobs.put(fresh, broken))).toBe("client went away")
        expect(Option.isNone(yield* blobs.size(fresh))).toBe(true)
        expect((yield* blobs.keysCreatedBefore(DateTime.unsafeMake("3000-01-01T00:00:00Z"), fresh.slice(0, -1), 100000)).includes(fresh))
          .toBe(false)

        const kept = key()
        const before = bytesOf(1000, 1)
        yield* blobs.put(kept, Stream.make(before))
        expect(yield* Effect.flip(blobs.put(kept, broken))).toBe("client went away")
        expect((yield* collect(blobs.read(kept))).bytes.equals(Buffer.from(before))).toBe(true)
      }))

    it.effect("a put replaces what the key held", () =>
      Effect.gen(function*() {
        const blobs = yield* BlobStore
        const k = key()
        yield* blobs.put(k, Stream.make(bytesOf(5000, 1)))
        const after = bytesOf(300_000, 2)
        yield* blobs.put(k, pieces(after, [70_000]))
        expect(yield* blobs.size(k)).toEqual(Option.some(after.length))
        expect((yield* collect(blobs.read(k))).bytes.equals(Buffer.from(after))).toBe(true)
      }))

    it.effect("an interrupted put stores nothing", () =>
      Effect.gen(function*() {
        const blobs = yield* BlobStore
        const k = key()
        const endless = Stream.concat(Stream.make(bytesOf(300_000)), Stream.never)
        const fiber = yield* Effect.fork(blobs.put(k, endless))
        // Long enough (on the real clock) for the first bytes to be written.
        yield* TestServices.provideLive(Effect.sleep("100 millis"))
        yield* Fiber.interrupt(fiber)
        expect(Option.isNone(yield* blobs.size(k))).toBe(true)
      }))

    it.effect("delete removes the blob and may be repeated", () =>
      Effect.gen(function*() {
        const blobs = yield* BlobStore
        const k = key()
        yield* blobs.put(k, Stream.make(bytesOf(10)))
        yield* blobs.delete(k)
        expect(Option.isNone(yield* blobs.size(k))).toBe(true)
        yield* blobs.delete(k)
        yield* blobs.delete(key())
      }))

    it.effect("keysCreatedBefore lists the keys stored before the instant, in key order, in pages after a key", () =>
      Effect.gen(function*() {
        const blobs = yield* BlobStore
        // Keys of this test only: the store is shared with the other tests.
        const prefix = uuid().slice(0, 8)
        const [a, b, c, late] = ["a", "b", "c", "d"].map((letter) => `${prefix}-${letter}-${uuid()}`)
        const start = yield* DateTime.now
        for (const k of [c!, a!, b!]) yield* blobs.put(k, Stream.make(bytesOf(10)))
        yield* TestClock.adjust("1 hour")
        const cut = yield* DateTime.now
        yield* TestClock.adjust("1 hour")
        yield* blobs.put(late!, Stream.make(bytesOf(10)))
        const mine = (keys: ReadonlyArray<string>) => keys.filter((k) => k.startsWith(prefix))
        expect(mine(yield* blobs.keysCreatedBefore(cut, undefined, 1_000_000))).toEqual([a, b, c])
        expect(mine(yield* blobs.keysCreatedBefore(start, undefined, 1_000_000))).toEqual([])
        expect(mine(yield* blobs.keysCreatedBefore(DateTime.add(cut, { hours: 2 }), undefined, 1_000_000))).toEqual([a, b, c, late])
        expect(yield* blobs.keysCreatedBefore(cut, a, 1)).toEqual(yield* Effect.map(blobs.keysCreatedBefore(cut, a, 1_000_000), (all) => all.slice(0, 1)))
        expect(mine(yield* blobs.keysCreatedBefore(cut, a, 1_000_000))).toEqual([b, c])
        expect(mine(yield* blobs.keysCreatedBefore(cut, c, 1_000_000))).toEqual([])
        for (const k of [a!, b!, c!, late!]) yield* blobs.delete(k)
        expect(mine(yield* blobs.keysCreatedBefore(DateTime.add(cut, { hours: 2 }), undefined, 1_000_000))).toEqual([])
      }))
  })
}
