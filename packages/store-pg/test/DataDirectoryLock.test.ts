import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { spawn, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { DataDirectoryLock } from "../src/index.js"
import { scratchDir } from "./fixtures.js"

const lockFileOf = (dataDir: string) => Path.join(dataDir, DataDirectoryLock.lockFileName)

const writeLock = (dataDir: string, holder: { pid: number; hostname?: string; token?: string } | string) => {
  Fs.mkdirSync(dataDir, { recursive: true })
  Fs.writeFileSync(
    lockFileOf(dataDir),
    typeof holder === "string"
      ? holder
      : JSON.stringify({ hostname: Os.hostname(), token: "someone-else", ...holder })
  )
}

/** The pid of a process that has exited. */
const deadPid = (): number => spawnSync(process.execPath, ["-e", ""]).pid!

/** Takes the lock in a scope of its own and answers that scope, to close by hand. */
const hold = (dataDir: string) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    yield* Scope.extend(DataDirectoryLock.acquire(dataDir), scope)
    return scope
  })

describe("DataDirectoryLock", () => {
  it.scoped("holds the directory until the scope closes; a second taker fails meanwhile", () =>
    Effect.gen(function*() {
      const dataDir = Path.join(yield* scratchDir("lock"), "data")
      const scope = yield* hold(dataDir)
      expect(JSON.parse(Fs.readFileSync(lockFileOf(dataDir), "utf8"))).toMatchObject({ pid: process.pid })

      const refused = yield* Effect.flip(Effect.scoped(DataDirectoryLock.acquire(dataDir)))
      expect(refused._tag).toBe("DataDirectoryLocked")
      expect(refused).toMatchObject({ dataDir, pid: process.pid, lockFile: lockFileOf(dataDir) })
      expect(refused.message).toContain(`The data directory ${dataDir} is in use by process ${process.pid}`)

      yield* Scope.close(scope, Exit.void)
      expect(Fs.existsSync(lockFileOf(dataDir))).toBe(false)
      yield* Effect.scoped(DataDirectoryLock.acquire(dataDir))
    }))

  it.scoped("of many racing takers in this process exactly one wins", () =>
    Effect.gen(function*() {
      const dataDir = Path.join(yield* scratchDir("lock"), "data")
      const outcomes = yield* Effect.all(
        Array.from({ length: 10 }, () => Effect.either(hold(dataDir))),
        { concurrency: "unbounded" }
      )
      const winners = outcomes.filter((outcome) => outcome._tag === "Right")
      expect(winners).toHaveLength(1)
      for (const winner of winners) yield* Scope.close(winner.right, Exit.void)
    }))

  it.scoped("refuses a lock held by another live process, and takes it over once that process is gone", () =>
    Effect.gen(function*() {
      const dataDir = Path.join(yield* scratchDir("lock"), "data")
      const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" })
      yield* Effect.addFinalizer(() => Effect.sync(() => child.kill("SIGKILL")))
      writeLock(dataDir, { pid: child.pid! })

      const refused = yield* Effect.flip(Effect.scoped(DataDirectoryLock.acquire(dataDir)))
      expect(refused._tag).toBe("DataDirectoryLocked")
      expect(refused.message).toContain(`in use by process ${child.pid}`)

      child.kill("SIGKILL")
      yield* Effect.promise(() => new Promise((resolve) => child.once("exit", resolve)))
      yield* Effect.scoped(Effect.gen(function*() {
        yield* DataDirectoryLock.acquire(dataDir)
        expect(JSON.parse(Fs.readFileSync(lockFileOf(dataDir), "utf8"))).toMatchObject({ pid: process.pid })
      }))
    }))

  it.scoped("takes over stale locks: a dead pid, this pid from an earlier run, an unreadable file", () =>
    Effect.gen(function*() {
      const root = yield* scratchDir("lock")
      const stale = [
        { pid: deadPid() },
        // After a restart in a container the new process may get the old pid: the token tells them apart.
        { pid: process.pid, token: "from-an-earlier-run" },
        "not json"
      ]
      for (const [i, holder] of stale.entries()) {
        const dataDir = Path.join(root, `data-${i}`)
        writeLock(dataDir, holder)
        yield* Effect.scoped(DataDirectoryLock.acquire(dataDir))
        expect(Fs.existsSync(lockFileOf(dataDir))).toBe(false)
      }
    }))

  it.scoped("refuses a lock of another host, whose processes it cannot check", () =>
    Effect.gen(function*() {
      const dataDir = Path.join(yield* scratchDir("lock"), "data")
      writeLock(dataDir, { pid: deadPid(), hostname: "elsewhere.example" })
      const refused = yield* Effect.flip(Effect.scoped(DataDirectoryLock.acquire(dataDir)))
      expect(refused._tag).toBe("DataDirectoryLocked")
      expect(refused.message).toContain("on elsewhere.example")
    }))

  it.scoped("does not remove a lock that was taken over by someone else", () =>
    Effect.gen(function*() {
      const dataDir = Path.join(yield* scratchDir("lock"), "data")
      const scope = yield* hold(dataDir)
      writeLock(dataDir, { pid: process.ppid, token: "the new owner" })
      yield* Scope.close(scope, Exit.void)
      expect(JSON.parse(Fs.readFileSync(lockFileOf(dataDir), "utf8"))).toMatchObject({ token: "the new owner" })
    }))
})
