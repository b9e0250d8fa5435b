import { type BeginResult, IdempotencyRecord, IdempotencyStore, trusted } from "@convene/core"
import { DateTime, Effect, HashMap, Layer, Option } from "effect"
import { Memory } from "./Memory.js"

const keyOf = (record: IdempotencyRecord) => JSON.stringify([record.scope, record.key])

/** The record in store is still the pending claim `pending` made. */
const isClaimOf = (pending: IdempotencyRecord) => (record: IdempotencyRecord): boolean =>
  record.response === null && DateTime.Equivalence(record.created_at, pending.created_at)

const started: BeginResult = { _tag: "Started" }

export const layer: Layer.Layer<IdempotencyStore, never, Memory> = Layer.effect(
  IdempotencyStore,
  Effect.gen(function*() {
    const memory = yield* Memory

    return IdempotencyStore.of({
      begin: Effect.fnUntraced(function*(pending, now) {
        const key = keyOf(pending)
        return yield* memory.modify((state): readonly [BeginResult, typeof state] => {
          const live = HashMap.get(state.idempotency, key).pipe(
            Option.filter((record) => DateTime.greaterThan(record.expires_at, now))
          )
          return Option.isSome(live)
            ? [{ _tag: "Found", record: live.value }, state]
            : [started, { ...state, idempotency: HashMap.set(state.idempotency, key, pending) }]
        })
      }),

      complete: Effect.fnUntraced(function*(pending, response, expiresAt) {
        const key = keyOf(pending)
        yield* memory.modify((state) => [
          undefined,
          Option.match(HashMap.get(state.idempotency, key).pipe(Option.filter(isClaimOf(pending))), {
            onNone: () => state,
            onSome: (claim) => ({
              ...state,
              idempotency: HashMap.set(
                state.idempotency,
                key,
                new IdempotencyRecord({ ...claim, response, expires_at: expiresAt }, trusted)
              )
            })
          })
        ])
      }),

      release: Effect.fnUntraced(function*(pending) {
        const key = keyOf(pending)
        yield* memory.modify((state) => [
          undefined,
          HashMap.get(state.idempotency, key).pipe(Option.exists(isClaimOf(pending)))
            ? { ...state, idempotency: HashMap.remove(state.idempotency, key) }
            : state
        ])
      }),

      deleteByScopes: Effect.fnUntraced(function*(scopes) {
        const gone = new Set(scopes)
        yield* memory.modify((state) => [undefined, {
          ...state,
          idempotency: HashMap.filter(state.idempotency, (record) => !gone.has(record.scope))
        }])
      }),

      purgeExpired: Effect.fnUntraced(function*(now) {
        return yield* memory.modify((state) => {
          const kept = HashMap.filter(state.idempotency, (record) => DateTime.greaterThan(record.expires_at, now))
          return [HashMap.size(state.idempotency) - HashMap.size(kept), { ...state, idempotency: kept }]
        })
      })
    })
  })
)
