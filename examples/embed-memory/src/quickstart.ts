import { Convene, CreateWorkspace, Workspaces } from "@convene/core"
import { NodeCrypto } from "@convene/node"
import * as StoreMemory from "@convene/store-memory"
import { Effect, Layer } from "effect"

// The core's services on the in-memory store, with node:crypto for tokens and password hashes.
const CoreLive = Convene.layer.pipe(Layer.provide(Layer.merge(StoreMemory.layer, NodeCrypto.layer)))

const program = Effect.gen(function*() {
  const workspaces = yield* Workspaces
  const workspace = yield* workspaces.create(CreateWorkspace.make({ name: "Acme", plan: "PRO" }))
  console.log(`created the workspace ${workspace.name} (${workspace.id}) on the ${workspace.plan} plan`)
})

Effect.runPromise(program.pipe(Effect.provide(CoreLive)))
