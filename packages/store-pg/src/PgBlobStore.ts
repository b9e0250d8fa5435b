/**
 * BlobStore on PostgreSQL, for servers that share one database and no disk: a blob is a `blobs` row and its bytes
 * in `blob_chunks` rows of `chunkSize` bytes each (the last may be shorter), written one chunk per statement while
 * the bytes stream in (no transaction stays open while a client uploads) and read one chunk per statement, so
 * neither side holds the whole file.
 *
 * A put writes a new `blobs` row (not yet `complete`, so nobody sees it), its chunks, and then, in one short
 * transaction, deletes what was stored under the key before and marks the new row complete. A failed or interrupted
 * put deletes its row (the chunks go with it). A put cut off by a crash leaves an incomplete row behind, which
 * `keysCreatedBefore` lists like any other (the sweep deletes it, since no record points at it).
 */
import { BlobStore } from "@convene/core"
import * as SqlClient from "@effect/sql/SqlClient"
import { type Context, DateTime, Effect, Exit, Layer, Option, Stream } from "effect"
import { orDie } from "./internal/sql.js"

/** The size of every chunk but a blob's last (256 KiB). */
export const chunkSize = 256 * 1024

/** A chunk's bytes as the drivers answer them (pg: Buffer; PGlite: Uint8Array). */
const bytesOf = (data: unknown): Uint8Array => {
  if (data instanceof Uint8Array) return data
  throw new Error("PgBlobStore: a chunk's data is not bytes")
}

export const make: Effect.Effect<Context.Tag.Service<typeof BlobStore>, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /** The complete blob under `key`: its row id, size and chunk size. */
  const find = (key: string) =>
    orDie(sql<{ readonly id: string; readonly size: string | number; readonly chunk_size: number }>`
      SELECT id::text AS id, size::text AS size, chunk_size FROM blobs WHERE key = ${key} AND complete`).pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => ({ id: row.id, size: Number(row.size), chunkSize: row.chunk_size })))
    )

  const put = <E>(key: string, content: Stream.Stream<Uint8Array, E>) =>
    Effect.gen(function*() {
      const createdAt = yield* DateTime.now
      const inserted = yield* orDie(sql<{ readonly id: string }>`
        INSERT INTO blobs (id, key, chunk_size, created_at)
        VALUES (gen_random_uuid(), ${key}, ${chunkSize}, ${DateTime.toDateUtc(createdAt)})
        RETURNING id::text AS id`)
      const id = inserted[0]!.id
      const write = Effect.gen(function*() {
        let buffer = new Uint8Array(chunkSize)
        let filled = 0
        let index = 0
        let size = 0
        const flush = Effect.suspend(() => {
          const data = buffer.subarray(0, filled)
          const at = index
          index += 1
          filled = 0
          buffer = new Uint8Array(chunkSize)
          return orDie(sql`INSERT INTO blob_chunks (blob_id, index, data) VALUES (${id}, ${at}, ${data})`)
        })
        yield* Stream.runForEach(content, (bytes) =>
          Effect.gen(function*() {
            size += bytes.length
            let from = 0
            while (from < bytes.length) {
              const take = Math.min(chunkSize - filled, bytes.length - from)
              buffer.set(bytes.subarray(from, from + take), filled)
              filled += take
              from += take
              if (filled === chunkSize) yield* flush
            }
          }))
        if (filled > 0) yield* flush
        yield* orDie(sql.withTransaction(Effect.gen(function*() {
          yield* sql`DELETE FROM blobs WHERE key = ${key} AND complete`
          yield* sql`UPDATE blobs SET complete = true, size = ${size} WHERE id = ${id}`
        })))
        return size
      })
      return yield* write.pipe(
        Effect.onExit((exit) => Exit.isSuccess(exit) ? Effect.void : orDie(sql`DELETE FROM blobs WHERE id = ${id}`))
      )
    })

  const read = (key: string, range?: { readonly offset: number; readonly end: number }): Stream.Stream<Uint8Array> =>
    Stream.unwrap(Effect.gen(function*() {
      const blob = yield* find(key)
      if (Option.isNone(blob)) return yield* Effect.die(new Error(`no blob is stored under ${key}`))
      const { chunkSize: size, id } = blob.value
      const offset = range?.offset ?? 0
      const end = range?.end ?? blob.value.size
      if (end <= offset) return Stream.empty
      const first = Math.floor(offset / size)
      const last = Math.floor((end - 1) / size)
      return Stream.range(first, last).pipe(
        Stream.mapEffect((index) =>
          orDie(sql<{ readonly data: unknown }>`SELECT data FROM blob_chunks WHERE blob_id = ${id} AND index = ${index}`).pipe(
            Effect.flatMap((rows) =>
              rows[0] === undefined
                ? Effect.die(new Error(`chunk ${index} of the blob under ${key} is missing`))
                : Effect.sync(() => {
                  const data = bytesOf(rows[0]!.data)
                  const start = index * size
                  return data.subarray(Math.max(0, offset - start), Math.min(data.length, end - start))
                })
            )
          )
        )
      )
    }))

  return BlobStore.of({
    put,
    size: (key) => Effect.map(find(key), Option.map((blob) => blob.size)),
    read,
    delete: (key) => orDie(sql`DELETE FROM blobs WHERE key = ${key}`).pipe(Effect.asVoid),
    keysCreatedBefore: (before, after, limit) =>
      orDie(sql<{ readonly key: string }>`
        SELECT DISTINCT key FROM blobs
        WHERE created_at < ${DateTime.toDateUtc(before)} ${after === undefined ? sql`` : sql`AND key > ${after}`}
        ORDER BY key
        LIMIT ${limit}`).pipe(Effect.map((rows) => rows.map((row) => row.key)))
  })
})

export const layer: Layer.Layer<BlobStore, never, SqlClient.SqlClient> = Layer.effect(BlobStore, make)
