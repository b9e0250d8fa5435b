import { Transactor } from "@convene/core"
import { Effect, Layer } from "effect"
import { Memory } from "./Memory.js"

export const layer: Layer.Layer<Transactor, never, Memory> = Layer.effect(
  Transactor,
  Effect.map(Memory, (memory) => Transactor.of({ withTransaction: memory.withTransaction }))
)
