/** node:crypto's incremental SHA-256 behind the core's Digests port (attachments are hashed as they stream). */
import { Digests } from "@convene/core"
import { Effect, Layer } from "effect"
import * as NodeCrypto from "node:crypto"

export const digests = Digests.of({
  sha256: Effect.sync(() => {
    const hash = NodeCrypto.createHash("sha256")
    return {
      update: (bytes: Uint8Array) => {
        hash.update(bytes)
      },
      digest: () => hash.digest("hex")
    }
  })
})

export const layer: Layer.Layer<Digests> = Layer.succeed(Digests, digests)
