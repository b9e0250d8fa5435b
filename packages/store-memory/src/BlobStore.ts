/**
 * Blobs in memory, for the in-memory store: each key's bytes as the pieces they arrived in. A put collects its
 * pieces aside and makes them visible in one step at the end, so a failed put leaves nothing behind (and what was
 * there before stays until then).
 */
import { BlobStore } from "@convene/core"
import { DateTime, Effect, Layer, Option, Stream } from "effect"

interface Blob {
  readonly pieces: ReadonlyArray<Uint8Array>
  readonly size: number
  readonly createdAt: DateTime.Utc
}

/** A fresh, empty blob store (each build of the layer has its own). */
export const make: Effect.Effect<typeof BlobStore.Service> = Effect.sync(() => {
  const blobs = new Map<string, Blob>()

  const piecesIn = (blob: Blob, offset: number, end: number): Array<Uint8Array> => {
    const out: Array<Uint8Array> = []
    let start = 0
    for (const piece of blob.pieces) {
      const stop = start + piece.length
      if (stop > offset && start < end) out.push(piece.subarray(Math.max(0, offset - start), Math.min(piece.length, end - start)))
      start = stop
    }
    return out
  }

  return BlobStore.of({
    put: (key, content) =>
      Effect.gen(function*() {
        const pieces: Array<Uint8Array> = []
        let size = 0
        yield* Stream.runForEach(content, (bytes) =>
          Effect.sync(() => {
            // A copy: the caller may reuse its buffer.
            pieces.push(Uint8Array.from(bytes))
            size += bytes.length
          }))
        const createdAt = yield* DateTime.now
        blobs.set(key, { pieces, size, createdAt })
        return size
      }),

    size: (key) => Effect.sync(() => Option.map(Option.fromNullable(blobs.get(key)), (blob) => blob.size)),

    read: (key, range) =>
      Stream.suspend(() => {
        const blob = blobs.get(key)
        if (blob === undefined) return Stream.die(new Error(`no blob is stored under ${key}`))
        return Stream.fromIterable(piecesIn(blob, range?.offset ?? 0, range?.end ?? blob.size))
      }),

    delete: (key) =>
      Effect.sync(() => {
        blobs.delete(key)
      }),

    keysCreatedBefore: (before, after, limit) =>
      Effect.sync(() =>
        [...blobs.entries()]
          .filter(([key, blob]) => DateTime.lessThan(blob.createdAt, before) && (after === undefined || key > after))
          .map(([key]) => key)
          .sort()
          .slice(0, limit)
      )
  })
})

export const layer: Layer.Layer<BlobStore> = Layer.effect(BlobStore, make)
