/**
 * Port: one atomic unit of work across several stores. Everything the effect does through the store ports
 * commits together or not at all. Nested calls join the outer unit of work.
 */
import { Context, type Effect } from "effect"

export class Transactor extends Context.Tag("@convene/core/Transactor")<Transactor, {
  readonly withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>() {}
