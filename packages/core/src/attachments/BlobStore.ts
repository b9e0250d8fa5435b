import { Context, type DateTime, type Effect, type Option, type Stream } from "effect"

/**
 * Port: files' bytes, kept byte for byte under a key (an attachment's id). Bytes go in and come out as streams,
 * so neither side holds a whole file. What each adapter promises:
 * - `put` is all or nothing: the key is readable (and listed) only once every byte is stored; when the stream
 *   fails (or the put is interrupted) nothing stays under the key, and the failure is the stream's. Putting a key
 *   that is already there replaces it.
 * - `read` streams the bytes from `offset` up to (not including) `end` (default: the size). Keys are never read
 *   while they are being put or deleted (core reads only keys whose record is committed).
 * - `delete` is idempotent.
 * - `keysCreatedBefore` lists stored keys created before `before` in ascending order, those after `after` (a key
 *   from the previous page), at most `limit` of them, for the sweep that deletes blobs no record points at. A put
 *   that was cut off (a crash) and left partial bytes behind is listed here once it is old, or cleaned up by the
 *   adapter's own means.
 * Adapters: memory (@convene/store-memory), a directory (@convene/store-pg FileBlobStore, the embedded store's),
 * PostgreSQL rows (@convene/store-pg PgBlobStore, for servers sharing one database).
 */
export class BlobStore extends Context.Tag("@convene/core/BlobStore")<BlobStore, {
  /** Stores the stream's bytes under `key`; answers their count. */
  readonly put: <E>(key: string, content: Stream.Stream<Uint8Array, E>) => Effect.Effect<number, E>
  /** The size in bytes of what is stored under `key` (none when nothing is). */
  readonly size: (key: string) => Effect.Effect<Option.Option<number>>
  /** The bytes in [offset, end) of what is stored under `key` (a defect when nothing is). */
  readonly read: (key: string, range?: { readonly offset: number; readonly end: number }) => Stream.Stream<Uint8Array>
  readonly delete: (key: string) => Effect.Effect<void>
  readonly keysCreatedBefore: (
    before: DateTime.Utc,
    after: string | undefined,
    limit: number
  ) => Effect.Effect<ReadonlyArray<string>>
}>() {}

/** Port: SHA-256 over bytes that arrive in pieces (@convene/node: NodeDigests). */
export class Digests extends Context.Tag("@convene/core/Digests")<Digests, {
  /** A new running SHA-256. */
  readonly sha256: Effect.Effect<RunningDigest>
}>() {}

export interface RunningDigest {
  readonly update: (bytes: Uint8Array) => void
  /** The lower-case hex digest of everything given to `update`; call once. */
  readonly digest: () => string
}

