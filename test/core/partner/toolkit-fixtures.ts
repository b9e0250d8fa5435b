/** The core with its partner room (Toolkits, PartnerApps) on the memory store, for the toolkit tests. */
import { Convene, Outbound } from "@convene/core"
import { NodeSecretBox } from "@convene/node"
import { Effect, Layer, Redacted } from "effect"
import { CoreLive } from "../fixtures.js"

/** Toolkits call nobody. */
const NoOutbound = Layer.succeed(
  Outbound,
  Outbound.of({ check: () => Effect.void, post: () => Effect.die(new Error("nobody is called")), get: () => Effect.die(new Error("nobody is called")) })
)

export const ToolkitsLive = Convene.partnerLayer.pipe(
  Layer.provideMerge(Layer.mergeAll(CoreLive, NoOutbound, NodeSecretBox.layer(Redacted.make(new Uint8Array(32).fill(7)))))
)
