/**
 * `convene serve` / `pnpm start`: the Convene server, configured from the environment.
 *
 * SIGTERM or SIGINT drains (Lifecycle.ts) and exits 0; a second one exits at once with code 1, releasing the
 * embedded store's lock first. A configuration mistake or a store that cannot be used is told in one plain
 * line on standard error ("Convene cannot start: ..."), with exit code 1.
 */
import { NodeRuntime } from "@effect/platform-node"
import { DataDirectoryLock } from "@convene/store-pg"
import { ConfigError, Console, Effect, Exit, Layer } from "effect"
import { describeConfigError, hostConfig, storeChoice } from "./Config.js"
import * as Logging from "./Logging.js"
import { ConveneLive } from "./Server.js"
import { StoreUnavailable } from "./Store.js"

const MainLive = Layer.unwrapEffect(
  Effect.map(Effect.all([hostConfig, storeChoice]), ([config, store]) => ConveneLive(config, store))
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

let signals = 0
const onSignal = (signal: NodeJS.Signals) => {
  signals += 1
  // The first one is the runtime's (NodeRuntime.runMain interrupts the main fiber, which drains).
  if (signals < 2) return
  process.stderr.write(`Convene: ${signal} again during shutdown; exiting now\n`)
  DataDirectoryLock.releaseAllSync()
  process.exit(1)
}
process.on("SIGINT", onSignal)
process.on("SIGTERM", onSignal)

MainLive.pipe(
  Layer.launch,
  Effect.provide(LoggingLive),
  refuseToStart,
  NodeRuntime.runMain({
    // Our own logger (Logging.ts) replaces Effect's default one; the runtime must not add its pretty one beside it.
    disablePrettyLogger: true,
    teardown: (exit, onExit) => onExit(Exit.isFailure(exit) && !Exit.isInterrupted(exit) ? 1 : Number(process.exitCode ?? 0))
  })
)
