/** `pnpm start`: the Convene server, configured from the environment. */
import { NodeRuntime } from "@effect/platform-node"
import { ConfigError, Console, Effect, Exit, Layer } from "effect"
import { describeConfigError, hostConfig, storeChoice } from "./Config.js"
import { ConveneLive } from "./Server.js"

const MainLive = Layer.unwrapEffect(
  Effect.map(Effect.all([hostConfig, storeChoice]), ([config, store]) => ConveneLive(config, store))
)

/** A configuration mistake is told in one plain line (which variable, what is wrong), and the exit code is 1. */
const refuseBadConfiguration = Effect.catchIf(ConfigError.isConfigError, (error) =>
  Console.error(`Convene cannot start: ${describeConfigError(error)}`).pipe(
    Effect.zipRight(Effect.sync(() => {
      process.exitCode = 1
    }))
  ))

MainLive.pipe(
  Layer.launch,
  refuseBadConfiguration,
  NodeRuntime.runMain({
    teardown: (exit, onExit) => onExit(Exit.isFailure(exit) && !Exit.isInterrupted(exit) ? 1 : Number(process.exitCode ?? 0))
  })
)
