/** `pnpm start`: the Convene server, configured from the environment. */
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { hostConfig, storeChoice } from "./Config.js"
import { ConveneLive } from "./Server.js"

const MainLive = Layer.unwrapEffect(
  Effect.map(Effect.all([hostConfig, storeChoice]), ([config, store]) => ConveneLive(config, store))
)

MainLive.pipe(Layer.launch, NodeRuntime.runMain)
