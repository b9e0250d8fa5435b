/**
 * An exclusive lock on a PGlite data directory. PGlite is one PostgreSQL session in-process; two processes
 * opening one directory would silently lose writes, so the second one must fail at start instead.
 *
 * The lock is the file `<dataDir>/convene.lock`, created atomically (written under a temporary name, then
 * hard-linked into place, which fails if the file exists) and holding the owner's pid, host and a random
 * token. A lock whose process is gone (same host, pid not alive, or our own pid with a token this process
 * never issued, as after a container restart) is stale and taken over. The lock is released when the scope
 * closes.
 */
import { randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { Effect, GlobalValue, Schema, type Scope } from "effect"

/** Another live process (or another open layer in this process) holds the data directory. */
export class DataDirectoryLocked extends Schema.TaggedError<DataDirectoryLocked>()("DataDirectoryLocked", {
  dataDir: Schema.String,
  lockFile: Schema.String,
  pid: Schema.Number,
  hostname: Schema.String,
  message: Schema.String
}) {}

/** The data directory could not be prepared or its lock file could not be read or written. */
export class DataDirectoryError extends Schema.TaggedError<DataDirectoryError>()("DataDirectoryError", {
  dataDir: Schema.String,
  cause: Schema.Defect,
  message: Schema.String
}) {}

/** The name of the lock file inside the data directory. */
export const lockFileName = "convene.lock"

interface Holder {
  readonly pid: number
  readonly hostname: string
  readonly token: string
}

/** Tokens of the locks this process holds now, shared by every copy of this module in the process. */
const heldTokens = GlobalValue.globalValue(Symbol.for("@convene/store-pg/DataDirectoryLock/held"), () => new Set<string>())

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const readHolder = (lockFile: string): Holder | undefined => {
  let text: string
  try {
    text = Fs.readFileSync(lockFile, "utf8")
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
    throw error
  }
  try {
    const parsed = JSON.parse(text) as Partial<Holder>
    if (typeof parsed.pid === "number" && typeof parsed.hostname === "string" && typeof parsed.token === "string") {
      return { pid: parsed.pid, hostname: parsed.hostname, token: parsed.token }
    }
  } catch {
    // fall through: an unreadable lock file is treated as held by a dead process
  }
  return { pid: -1, hostname: Os.hostname(), token: "" }
}

const isStale = (holder: Holder): boolean =>
  holder.hostname === Os.hostname() &&
  (holder.pid === process.pid ? !heldTokens.has(holder.token) : holder.pid <= 0 || !isAlive(holder.pid))

/** Creates the lock file unless it exists; answers whether this call created it. */
const tryCreate = (lockFile: string, holder: Holder): boolean => {
  const temporary = `${lockFile}.${holder.pid}.${holder.token}.tmp`
  Fs.writeFileSync(temporary, JSON.stringify(holder), { flag: "wx" })
  try {
    Fs.linkSync(temporary, lockFile)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false
    throw error
  } finally {
    Fs.rmSync(temporary, { force: true })
  }
}

/** The lock files this process holds, by token, for `releaseAllSync`. */
const heldFiles = GlobalValue.globalValue(
  Symbol.for("@convene/store-pg/DataDirectoryLock/files"),
  () => new Map<string, string>()
)

const releaseSync = (lockFile: string, token: string) => {
  heldTokens.delete(token)
  heldFiles.delete(token)
  try {
    if (readHolder(lockFile)?.token === token) Fs.rmSync(lockFile, { force: true })
  } catch {
    // the directory is gone or unreadable: nothing left to release
  }
}

const release = (lockFile: string, token: string) => Effect.sync(() => releaseSync(lockFile, token))

/**
 * Releases every lock this process holds, at once and synchronously: for a process about to exit without
 * closing its scopes (a second SIGTERM during a drain), so that it leaves no lock file behind.
 */
export const releaseAllSync = (): void => {
  for (const [token, lockFile] of [...heldFiles]) releaseSync(lockFile, token)
}

/**
 * Takes the lock on `dataDir` (creating the directory if needed) for the lifetime of the scope. Fails with
 * `DataDirectoryLocked` when a live process holds it.
 */
export const acquire = (dataDir: string): Effect.Effect<void, DataDirectoryLocked | DataDirectoryError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const lockFile = Path.join(dataDir, lockFileName)
      const holder: Holder = { pid: process.pid, hostname: Os.hostname(), token: randomUUID() }
      const attempt = Effect.try({
        try: () => {
          // registered before the file exists, so that no other fiber of this process takes it for stale
          heldTokens.add(holder.token)
          try {
            Fs.mkdirSync(dataDir, { recursive: true })
            for (let i = 0; i < 5; i++) {
              if (tryCreate(lockFile, holder)) return undefined
              const current = readHolder(lockFile)
              if (current === undefined) continue
              if (!isStale(current)) {
                heldTokens.delete(holder.token)
                return current
              }
              Fs.rmSync(lockFile, { force: true })
            }
            throw new Error(`could not create ${lockFile}: it keeps reappearing`)
          } catch (error) {
            heldTokens.delete(holder.token)
            throw error
          }
        },
        catch: (cause) =>
          new DataDirectoryError({ dataDir, cause, message: `Cannot lock the data directory ${dataDir}: ${String(cause)}` })
      })
      const current = yield* attempt
      if (current !== undefined) {
        return yield* new DataDirectoryLocked({
          dataDir,
          lockFile,
          pid: current.pid,
          hostname: current.hostname,
          message: `The data directory ${dataDir} is in use by process ${current.pid} on ${current.hostname} ` +
            `(lock file ${lockFile}). Stop that process, or point this one at another directory; if no process ` +
            `uses the directory any more, delete the lock file.`
        })
      }
      heldFiles.set(holder.token, lockFile)
      return { lockFile, token: holder.token }
    }),
    ({ lockFile, token }) => release(lockFile, token)
  ).pipe(Effect.asVoid)
