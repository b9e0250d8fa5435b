/**
 * The store the server runs on, as the configuration chooses it (StoreChoice), told about in words a
 * self-hoster reads: where it is (never with credentials), what it is doing while it starts, and why it
 * cannot start.
 *
 * A PostgreSQL server that cannot be reached yet (refused, unknown host, timed out, starting up, too many
 * connections) is retried with a growing delay (0.5 s doubling up to 30 s, jittered) for as long as it
 * takes, one warning per attempt, while the server already answers /healthz and /readyz. A wrong password, a
 * refused user or a missing database is fatal at once: `StoreUnavailable` names DATABASE_URL and never
 * the password.
 */
import type { StorePorts } from "@convene/core"
import * as StoreMemory from "@convene/store-memory"
import * as StorePg from "@convene/store-pg"
import { Effect, Layer, Redacted, Schedule, Schema } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import type { BlobStoreChoice, PgliteThread, StoreChoice } from "./Config.js"

/** The store cannot be used, for a reason retrying will not fix. The message is for the operator. */
export class StoreUnavailable extends Schema.TaggedError<StoreUnavailable>()("StoreUnavailable", {
  message: Schema.String
}) {}

/** Where a PostgreSQL URL points, without user name or password: `host:port/database`. */
export const describeUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    const database = decodeURIComponent(parsed.pathname.replace(/^\//, "")) || "(default database)"
    const host = parsed.hostname === "" ? parsed.searchParams.get("host") ?? "local socket" : parsed.host
    return `${host}/${database}`
  } catch {
    return "the server DATABASE_URL names"
  }
}

const userOf = (url: string): string => {
  try {
    return decodeURIComponent(new URL(url).username) || "(default user)"
  } catch {
    return "(the user DATABASE_URL names)"
  }
}

/** What the startup line says about the store. */
export const describe = (choice: StoreChoice): string => {
  switch (choice._tag) {
    case "memory":
      return "memory (nothing persists)"
    case "server":
      return `PostgreSQL ${describeUrl(Redacted.value(choice.url))}`
    case "embedded":
      return `embedded PostgreSQL in ${Path.resolve(choice.dataDir)}`
  }
}

/** The error codes of a connection failure (a Node system error, an AggregateError of several, a PostgreSQL error). */
const codesOf = (cause: unknown): ReadonlyArray<string> => {
  if (typeof cause !== "object" || cause === null) return []
  const own = "code" in cause && typeof cause.code === "string" ? [cause.code] : []
  const nested = "errors" in cause && Array.isArray(cause.errors) ? cause.errors.flatMap(codesOf) : []
  return [...own, ...nested]
}

const messageOf = (cause: unknown): string =>
  typeof cause === "object" && cause !== null && "message" in cause && typeof cause.message === "string"
    ? cause.message
    : String(cause)

/** Failures that say the server is not there yet (it may be starting, or its name not yet in DNS). */
const transientCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EPIPE",
  "57P03", // cannot_connect_now: the database system is starting up
  "53300", // too_many_connections
  "08001",
  "08006"
])

type ConnectFailure =
  | { readonly _tag: "Transient"; readonly reason: string }
  | { readonly _tag: "Fatal"; readonly message: string }

/** Sorts a failure to connect into "retry" and "give up", with the words for each. */
export const classify = (url: string, error: unknown): ConnectFailure => {
  const cause = typeof error === "object" && error !== null && "cause" in error ? error.cause : error
  const codes = codesOf(cause)
  const where = describeUrl(url)
  if (codes.includes("28P01")) {
    return { _tag: "Fatal", message: `PostgreSQL at ${where} refused the password of user "${userOf(url)}" (check DATABASE_URL)` }
  }
  if (codes.includes("28000")) {
    return { _tag: "Fatal", message: `PostgreSQL at ${where} refused user "${userOf(url)}": ${messageOf(cause)} (check DATABASE_URL)` }
  }
  if (codes.includes("3D000")) {
    return { _tag: "Fatal", message: `the database named in DATABASE_URL does not exist on PostgreSQL at ${where}; create it first` }
  }
  const transient = codes.find((code) => transientCodes.has(code))
  if (transient !== undefined) return { _tag: "Transient", reason: transient === "ENOTFOUND" ? "unknown host" : transient }
  const text = messageOf(cause)
  if (/timed out|terminated unexpectedly|starting up/i.test(text)) return { _tag: "Transient", reason: text }
  return { _tag: "Fatal", message: `PostgreSQL at ${where} cannot be used: ${text} (check DATABASE_URL)` }
}

/** 0.5 s doubling to at most 30 s, jittered, for as long as the failure is transient. */
const backoff = Schedule.exponential("500 millis").pipe(
  Schedule.union(Schedule.spaced("30 seconds")),
  Schedule.jittered
)

const serverStore = (url: string, layer: Layer.Layer<StorePorts, unknown>): Layer.Layer<StorePorts, StoreUnavailable> => {
  let attempt = 0
  const where = describeUrl(url)
  return layer.pipe(
    Layer.tapError((error) =>
      Effect.gen(function*() {
        const failure = classify(url, error)
        attempt += 1
        if (failure._tag === "Transient") {
          yield* Effect.logWarning(`PostgreSQL at ${where} is not reachable yet (${failure.reason}); retrying`).pipe(
            Effect.annotateLogs({ attempt })
          )
        }
      })
    ),
    Layer.retry(backoff.pipe(Schedule.whileInput((error: unknown) => classify(url, error)._tag === "Transient"))),
    Layer.catchAll((error) => {
      const failure = classify(url, error)
      return Layer.fail(
        new StoreUnavailable({
          message: failure._tag === "Fatal" ? failure.message : `PostgreSQL at ${where} is not reachable (${failure.reason})`
        })
      )
    })
  )
}

/** Has PGlite created its cluster in this directory already? */
const isCreated = (dataDir: string) => Fs.existsSync(Path.join(dataDir, "PG_VERSION"))

const embeddedStore = (
  dataDir: string,
  blobs: BlobStoreChoice,
  thread: PgliteThread
): Layer.Layer<StorePorts, StoreUnavailable> => {
  const directory = Path.resolve(dataDir)
  return Layer.unwrapEffect(Effect.gen(function*() {
    if (!isCreated(directory)) {
      yield* Effect.logInfo(`creating the embedded database in ${directory} (first start only; it takes a few seconds)`)
    }
    return StorePg.layerPglite({ dataDir: directory, thread }, blobPlacement(blobs, directory)).pipe(
      Layer.catchAll((error) =>
        Layer.fail(
          new StoreUnavailable({
            message: error._tag === "DataDirectoryLocked" || error._tag === "DataDirectoryError"
              ? error.message
              : `the embedded database in ${directory} cannot be opened: ${messageOf(error.cause)}`
          })
        )
      )
    )
  }))
}

/** Where a PostgreSQL store keeps attachments' bytes, as CONVENE_BLOB_STORE chose (see BlobStoreChoice). */
const blobPlacement = (blobs: BlobStoreChoice, dataDir: string): StorePg.BlobPlacement =>
  blobs === "database" ? { _tag: "database" } : { _tag: "directory", path: StorePg.blobDirectoryOf(Path.resolve(dataDir)) }

/** The store layer for a choice, with its start told in the log and its failures in words. */
export const layer = (choice: StoreChoice): Layer.Layer<StorePorts, StoreUnavailable> => {
  switch (choice._tag) {
    case "memory":
      return StoreMemory.layer
    case "server":
      return serverStore(
        Redacted.value(choice.url),
        StorePg.layerPg({
          url: choice.url,
          maxConnections: choice.poolSize,
          blobs: blobPlacement(choice.blobs ?? "database", choice.dataDir ?? "./.convene/data")
        })
      )
    case "embedded":
      return embeddedStore(choice.dataDir, choice.blobs ?? "filesystem", choice.thread ?? "worker")
  }
}
