/**
 * The Convene server as a program, configured from the environment: what `pnpm start` (main.ts) and
 * `convene serve` (@convene/cli) both run.
 *
 * SIGTERM or SIGINT drains (Lifecycle.ts) and exits 0; a second one (a second or more after the first) exits at
 * once with code 1, releasing the embedded store's lock first. A configuration mistake or a store that cannot be used is told in one plain
 * line on standard error ("Convene cannot start: ..."), with exit code 1.
 *
 * - `program`: the server until it is interrupted. Run it under `NodeRuntime.runMain(runMainOptions)` (the
 *   runtime's interruption on the first signal is what drains).
 * - `runServer()`: exactly that, for a process entry point.
 */
import type { Teardown } from "@effect/platform/Runtime"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { DataDirectoryLock } from "@convene/store-pg"
import { NodeSecretBox } from "@convene/node"
import { Config, ConfigError, Console, Effect, Exit, Layer, Option, Redacted } from "effect"
import * as Path from "node:path"
import { describeConfigError, type HostConfig, hostConfig, identityOf, type StoreChoice, storeChoice } from "./Config.js"
import * as Logging from "./Logging.js"
import { ConveneLive } from "./Server.js"
import { StoreUnavailable } from "./Store.js"

/**
 * The secret key when CONVENE_SECRET_KEY is unset and the store keeps data: a key file next to the data directory
 * (`secret.key` beside CONVENE_DATA_DIR, created on first start, readable by its owner only). Several server
 * processes on one PostgreSQL must share one key: set CONVENE_SECRET_KEY on each.
 */
const withSecretKey = (config: HostConfig, store: StoreChoice) =>
  Effect.gen(function*() {
    const identity = identityOf(config)
    if (Option.isSome(identity.secretKey) || store._tag === "memory") return config
    const dataDir = yield* Config.string("CONVENE_DATA_DIR").pipe(Config.withDefault("./.convene/data"))
    const file = Path.join(Path.dirname(Path.resolve(dataDir)), "secret.key")
    const { created, key } = yield* NodeSecretBox.loadOrCreateKeyFile(file).pipe(
      Effect.mapError((error) => new StoreUnavailable({ message: error.message }))
    )
    if (created) {
      yield* Effect.logInfo(`created the installation's secret key in ${file} (back it up with the data; set CONVENE_SECRET_KEY instead to keep it elsewhere)`)
    }
    return {
      ...config,
      identity: { ...identity, secretKey: Option.some(Redacted.make(Buffer.from(key).toString("hex"))) }
    } satisfies HostConfig
  })

const MainLive = Layer.unwrapEffect(
  Effect.flatMap(Effect.all([hostConfig, storeChoice]), ([config, store]) =>
    Effect.map(withSecretKey(config, store), (configured) => ConveneLive(configured, store)))
)

const LoggingLive = Layer.unwrapEffect(Effect.map(Logging.logConfig, Logging.layer))

const cannotStart = (reason: string) =>
  Console.error(`Convene cannot start: ${reason}`).pipe(
    Effect.zipRight(Effect.sync(() => {
      process.exitCode = 1
    }))
  )

/** A configuration mistake or an unusable store: one plain line, exit code 1. */
const refuseToStart = <A, R>(self: Effect.Effect<A, unknown, R>) =>
  self.pipe(
    Effect.catchIf(ConfigError.isConfigError, (error) => cannotStart(describeConfigError(error))),
    Effect.catchIf((error) => error instanceof StoreUnavailable, (error) => cannotStart((error as StoreUnavailable).message))
  )

/**
 * Signals within this long of the first are the same request to stop: Ctrl-C in a terminal reaches every process
 * of the foreground group, and `pnpm start` also passes the SIGINT it got on to the server.
 */
const sameSignalWindowMs = 1_000

let firstSignalAt: number | undefined
const onSignal = (signal: NodeJS.Signals) => {
  // The first one is the runtime's (NodeRuntime.runMain interrupts the main fiber, which drains).
  if (firstSignalAt === undefined) {
    firstSignalAt = Date.now()
    return
  }
  if (Date.now() - firstSignalAt < sameSignalWindowMs) return
  process.stderr.write(`Convene: ${signal} again during shutdown; exiting now\n`)
  DataDirectoryLock.releaseAllSync()
  process.exit(1)
}

/** Counts SIGINT/SIGTERM from now on: the second one exits at once (code 1), releasing the data-directory lock. */
const exitOnSecondSignal = Effect.sync(() => {
  if (process.listeners("SIGTERM").includes(onSignal)) return
  process.on("SIGINT", onSignal)
  process.on("SIGTERM", onSignal)
})

/**
 * V8 lets its old generation grow to up to four times what was live at its last full collection, and a server that
 * holds long-lived connections keeps the pages: from a fresh process, 10 000 idle event streams added 430–470 MB
 * (the streams' own heap is about 70 MB), most of it headroom over the garbage of the requests that opened them.
 * Grown by half instead (V8's `--heap-growing-percent`, read at each collection): 163–170 MB, and no loss of
 * request throughput in `pnpm bench` (docs/benchmarks.md, "Webhooks and the event stream").
 */
const heapGrowth = Effect.promise(() => import("node:v8")).pipe(
  Effect.map((v8) => v8.setFlagsFromString("--heap-growing-percent=50"))
)

/**
 * The server, from the environment, until interrupted. Fails with nothing it expects: a configuration mistake or
 * an unusable store is told on standard error and leaves `process.exitCode` at 1.
 */
export const program: Effect.Effect<void, unknown> = exitOnSecondSignal.pipe(
  Effect.zipRight(heapGrowth),
  Effect.zipRight(MainLive.pipe(Layer.launch, Effect.provide(LoggingLive), refuseToStart))
)

/**
 * How the process ends: 1 after a failure that is not an interruption, else `process.exitCode` (0 unless the
 * program set it), and our own logger (Logging.ts) in place of the runtime's pretty one.
 */
export const runMainOptions: { readonly disablePrettyLogger: boolean; readonly teardown: Teardown } = {
  disablePrettyLogger: true,
  teardown: (exit, onExit) => onExit(Exit.isFailure(exit) && !Exit.isInterrupted(exit) ? 1 : Number(process.exitCode ?? 0))
}

/** Runs `program` as the process: `NodeRuntime.runMain` with `runMainOptions`. */
export const runServer = (): void => NodeRuntime.runMain(program, runMainOptions)
