/** The core with its partner room (Toolkits, PartnerApps) on the memory store, for the toolkit tests. */
import { Convene, Outbound, type StorePorts } from "@convene/core"
import { NodeSecretBox } from "@convene/node"
import { Effect, Layer, Redacted } from "effect"
import { coreOver, CoreLive } from "../fixtures.js"

/** Toolkits call nobody. */
const NoOutbound = Layer.succeed(
  Outbound,
  Outbound.of({ check: () => Effect.void, post: () => Effect.die(new Error("nobody is called")), get: () => Effect.die(new Error("nobody is called")) })
)

const partnerOver = <E>(core: Layer.Layer<Layer.Layer.Success<typeof CoreLive>, E>) =>
  Convene.partnerLayer.pipe(
    Layer.provideMerge(Layer.mergeAll(core, NoOutbound, NodeSecretBox.layer(Redacted.make(new Uint8Array(32).fill(7)))))
  )

export const ToolkitsLive = partnerOver(CoreLive)

/** The same over another store (a PostgreSQL server's, in the HTTP tests). */
export const toolkitsOver = (store: Layer.Layer<StorePorts>) => partnerOver(coreOver(store))
