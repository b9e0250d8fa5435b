/**
 * The `Reactivity` service that `SqlClient.make` requires.
 *
 * `Reactivity` lives in @effect/experimental, a peer dependency of @effect/sql that this package does not list
 * (and so cannot import under pnpm). The service is looked up by its tag key, so this module provides the same
 * key with a faithful port of @effect/experimental 0.61's `Reactivity.make` (MIT). Once @effect/experimental is
 * a dependency of @convene/store-pg, replace `layer` with `Reactivity.layer` from "@effect/experimental/Reactivity".
 */
import type { SqlClient } from "@effect/sql"
import { Context, Effect, Exit, FiberHandle, Hash, Layer, Mailbox, type Scope, Stream } from "effect"

/** The service identifier `SqlClient.make` asks for. */
type Reactivity = Effect.Effect.Context<ReturnType<typeof SqlClient.make>>

type Keys = ReadonlyArray<unknown> | Readonly<Record<string, ReadonlyArray<unknown>>>

interface Service {
  readonly unsafeInvalidate: (keys: Keys) => void
  readonly unsafeRegister: (keys: Keys, handler: () => void) => () => void
  readonly invalidate: (keys: Keys) => Effect.Effect<void>
  readonly mutation: <A, E, R>(keys: Keys, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  readonly query: <A, E, R>(
    keys: Keys,
    effect: Effect.Effect<A, E, R>
  ) => Effect.Effect<Mailbox.ReadonlyMailbox<A, E>, never, R | Scope.Scope>
  readonly stream: <A, E, R>(keys: Keys, effect: Effect.Effect<A, E, R>) => Stream.Stream<A, E, Exclude<R, Scope.Scope>>
}

const Reactivity: Context.Tag<Reactivity, Service> = Context.GenericTag<Reactivity, Service>("@effect/experimental/Reactivity")

const stringOrHash = (u: unknown): string | number => (typeof u === "string" ? u : Hash.hash(u))

const idHashes = (key: string, ids: ReadonlyArray<unknown>): Array<string> => ids.map((id) => `${key}:${stringOrHash(id)}`)

const recordHashes = (record: Readonly<Record<string, ReadonlyArray<unknown>>>): Array<string> =>
  Object.keys(record).flatMap((key) => [key, ...idHashes(key, record[key]!)])

const make = Effect.sync((): Service => {
  const handlers = new Map<number | string, Set<() => void>>()

  const runAll = (key: number | string) => {
    const set = handlers.get(key)
    if (set !== undefined) for (const run of set) run()
  }

  const unsafeInvalidate = (keys: Keys): void => {
    if (Array.isArray(keys)) {
      for (const key of keys) runAll(stringOrHash(key))
    } else {
      const record = keys as Readonly<Record<string, ReadonlyArray<unknown>>>
      for (const key of Object.keys(record)) {
        for (const hash of idHashes(key, record[key]!)) runAll(hash)
        runAll(key)
      }
    }
  }

  const invalidate = (keys: Keys) => Effect.sync(() => unsafeInvalidate(keys))

  const unsafeRegister = (keys: Keys, handler: () => void) => {
    const resolved = Array.isArray(keys)
      ? keys.map(stringOrHash)
      : recordHashes(keys as Readonly<Record<string, ReadonlyArray<unknown>>>)
    for (const key of resolved) {
      const set = handlers.get(key) ?? new Set()
      set.add(handler)
      handlers.set(key, set)
    }
    return () => {
      for (const key of resolved) {
        const set = handlers.get(key)
        set?.delete(handler)
        if (set?.size === 0) handlers.delete(key)
      }
    }
  }

  const query = <A, E, R>(keys: Keys, effect: Effect.Effect<A, E, R>) =>
    Effect.gen(function*() {
      const results = yield* Mailbox.make<A, E>()
      const runFork = yield* FiberHandle.makeRuntime<R>()
      let running = false
      let pending = false
      const handleExit = (exit: Exit.Exit<A, E>) => {
        if (Exit.isFailure(exit)) results.unsafeDone(Exit.failCause(exit.cause))
        else results.unsafeOffer(exit.value)
        if (pending) {
          pending = false
          runFork(effect).addObserver(handleExit)
        } else {
          running = false
        }
      }
      const run = () => {
        if (running) {
          pending = true
          return
        }
        running = true
        runFork(effect).addObserver(handleExit)
      }
      const cancel = unsafeRegister(keys, run)
      yield* Effect.addFinalizer(() => Effect.sync(cancel))
      run()
      return results as Mailbox.ReadonlyMailbox<A, E>
    })

  return {
    unsafeInvalidate,
    unsafeRegister,
    invalidate,
    mutation: (keys, effect) => Effect.zipLeft(effect, invalidate(keys)),
    query,
    stream: (keys, effect) => query(keys, effect).pipe(Effect.map(Mailbox.toStream), Stream.unwrapScoped)
  }
})

/** Provides the Reactivity service `SqlClient.make` needs. */
export const layer: Layer.Layer<Reactivity> = Layer.effect(Reactivity, make)
