/**
 * BlobStore in a directory: the embedded store's (`<CONVENE_DATA_DIR>/convene-blobs`, beside PGlite's cluster and
 * under the same lock). A blob is one file, `<directory>/<first two characters of the key>/<key>`, holding its bytes
 * exactly; its modification time is when it was stored (set from the Effect clock).
 *
 * A put writes to `<directory>/tmp/<key>.<random>` as the bytes stream in, flushes it to disk, and renames it into
 * place (atomic on one file system), so a blob is either absent or whole. A failed or interrupted put deletes its
 * temporary file; temporary files left by a crash (untouched for an hour: a put in progress writes to its file all
 * the time, and other processes may share the directory) are deleted when the store opens.
 */
import { BlobStore } from "@convene/core"
import { DateTime, Effect, Exit, Layer, Option, Stream } from "effect"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"

/** Keys are file names: letters, digits, `-` and `_` only (attachment ids are UUIDs). */
const safeKey = /^[A-Za-z0-9_-]{2,128}$/

/** The piece size reads use (64 KiB). */
const readSize = 64 * 1024

const isMissing = (error: unknown) =>
  typeof error === "object" && error !== null && "code" in error && error.code === "ENOENT"

export interface FileBlobStoreOptions {
  /** The directory blobs are kept in (created when missing). */
  readonly directory: string
}

export const make = (options: FileBlobStoreOptions): Effect.Effect<typeof BlobStore.Service> =>
  Effect.gen(function*() {
    const root = Path.resolve(options.directory)
    const tmp = Path.join(root, "tmp")
    const io = <A>(what: string, run: () => Promise<A>) =>
      Effect.tryPromise({ try: run, catch: (cause) => new Error(`FileBlobStore: ${what} failed`, { cause }) }).pipe(Effect.orDie)

    yield* io(`preparing ${root}`, async () => {
      await Fs.mkdir(tmp, { recursive: true })
      const abandoned = Date.now() - 60 * 60 * 1000
      for (const name of await Fs.readdir(tmp)) {
        try {
          if ((await Fs.stat(Path.join(tmp, name))).mtimeMs < abandoned) await Fs.rm(Path.join(tmp, name), { force: true })
        } catch (error) {
          if (!isMissing(error)) throw error
        }
      }
    })

    const pathOf = (key: string) => {
      if (!safeKey.test(key)) throw new Error(`FileBlobStore: "${key}" is not a usable key`)
      return Path.join(root, key.slice(0, 2), key)
    }
    const pathOfKey = (key: string) => Effect.try({ try: () => pathOf(key), catch: (error) => error }).pipe(Effect.orDie)

    const put = <E>(key: string, content: Stream.Stream<Uint8Array, E>) =>
      Effect.gen(function*() {
        const target = yield* pathOfKey(key)
        const partial = Path.join(tmp, `${key}.${randomBytes(8).toString("hex")}`)
        const write = Effect.acquireUseRelease(
          io("opening a blob", () => Fs.open(partial, "wx")),
          (handle) =>
            Effect.gen(function*() {
              let size = 0
              yield* Stream.runForEach(content, (bytes) =>
                io("writing a blob", async () => {
                  let written = 0
                  while (written < bytes.length) {
                    const { bytesWritten } = await handle.write(bytes, written, bytes.length - written)
                    written += bytesWritten
                  }
                  size += bytes.length
                }))
              yield* io("flushing a blob", () => handle.sync())
              return size
            }),
          (handle) => io("closing a blob", () => handle.close())
        )
        return yield* Effect.gen(function*() {
          const size = yield* write
          const at = new Date((yield* DateTime.now).epochMillis)
          yield* io("storing a blob", async () => {
            await Fs.utimes(partial, at, at)
            await Fs.mkdir(Path.dirname(target), { recursive: true })
            await Fs.rename(partial, target)
          })
          return size
        }).pipe(
          Effect.onExit((exit) =>
            Exit.isSuccess(exit) ? Effect.void : io("removing a partial blob", () => Fs.rm(partial, { force: true }))
          )
        )
      })

    const size = (key: string) =>
      Effect.flatMap(pathOfKey(key), (path) =>
        io("reading a blob's size", async () => {
          try {
            return Option.some((await Fs.stat(path)).size)
          } catch (error) {
            if (isMissing(error)) return Option.none<number>()
            throw error
          }
        }))

    const read = (key: string, range?: { readonly offset: number; readonly end: number }): Stream.Stream<Uint8Array> =>
      Stream.unwrapScoped(Effect.gen(function*() {
        const path = yield* pathOfKey(key)
        const handle = yield* Effect.acquireRelease(
          io("opening a blob", () => Fs.open(path, "r")),
          (handle) => io("closing a blob", () => handle.close())
        )
        const offset = range?.offset ?? 0
        const end = range?.end ?? (yield* io("reading a blob's size", () => handle.stat())).size
        if (end <= offset) return Stream.empty
        return Stream.paginateEffect(offset, (position) => {
          const length = Math.min(readSize, end - position)
          return io("reading a blob", () => handle.read(new Uint8Array(length), 0, length, position)).pipe(
            Effect.flatMap(({ buffer, bytesRead }) =>
              bytesRead === 0
                ? Effect.die(new Error(`FileBlobStore: the blob under ${key} ends before byte ${end}`))
                : Effect.succeed([
                  buffer.subarray(0, bytesRead),
                  position + bytesRead < end ? Option.some(position + bytesRead) : Option.none<number>()
                ] as const)
            )
          )
        })
      }))

    const remove = (key: string) =>
      Effect.flatMap(pathOfKey(key), (path) => io("deleting a blob", () => Fs.rm(path, { force: true })))

    const keysCreatedBefore = (before: DateTime.Utc, after: string | undefined, limit: number) =>
      io("listing blobs", async () => {
        const keys: Array<string> = []
        const shards = (await Fs.readdir(root, { withFileTypes: true }))
          .filter((entry) => entry.isDirectory() && entry.name !== "tmp")
          .map((entry) => entry.name)
          .sort()
        for (const shard of shards) {
          // Every key in a shard starts with its name: a shard wholly before `after` is skipped.
          if (after !== undefined && shard < after.slice(0, 2)) continue
          for (const name of (await Fs.readdir(Path.join(root, shard))).sort()) {
            if (after !== undefined && name <= after) continue
            let modified: number
            try {
              modified = (await Fs.stat(Path.join(root, shard, name))).mtimeMs
            } catch (error) {
              if (isMissing(error)) continue
              throw error
            }
            if (modified < before.epochMillis) keys.push(name)
            if (keys.length >= limit) return keys
          }
        }
        return keys
      })

    return BlobStore.of({ put, size, read, delete: remove, keysCreatedBefore })
  })

export const layer = (options: FileBlobStoreOptions): Layer.Layer<BlobStore> => Layer.effect(BlobStore, make(options))
