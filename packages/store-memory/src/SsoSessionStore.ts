/** SsoSessionStore in memory: partner SSO sessions by id in the one state value; the transitions are one `modify` each. */
import { SsoSession, SsoSessionStore, trusted } from "@convene/core"
import { DateTime, Effect, HashMap, Layer, Option } from "effect"
import { Memory } from "./Memory.js"

export const layer: Layer.Layer<SsoSessionStore, never, Memory> = Layer.effect(
  SsoSessionStore,
  Effect.gen(function*() {
    const memory = yield* Memory

    return SsoSessionStore.of({
      insert: Effect.fnUntraced(function*(session) {
        yield* memory.modify((state) => [undefined, { ...state, ssoSessions: HashMap.set(state.ssoSessions, session.id, session) }])
      }),

      get: Effect.fnUntraced(function*(id) {
        return HashMap.get((yield* memory.read).ssoSessions, id)
      }),

      getByStateHash: Effect.fnUntraced(function*(stateHash) {
        return HashMap.findFirst((yield* memory.read).ssoSessions, (session) => session.state_hash === stateHash).pipe(
          Option.map(([, session]) => session)
        )
      }),

      finish: Effect.fnUntraced(function*(id, outcome, at, expiresAt) {
        return yield* memory.modify((state) => {
          const session = HashMap.get(state.ssoSessions, id)
          if (Option.isNone(session) || session.value.state !== "pending" || !DateTime.lessThan(at, session.value.expires_at)) {
            return [false, state]
          }
          const finished = new SsoSession({
            ...session.value,
            state: outcome.state,
            expires_at: expiresAt,
            finished_at: at,
            result: outcome.state === "completed" ? outcome.result : null,
            error: outcome.state === "failed" ? outcome.error : null,
            error_description: outcome.state === "failed" ? outcome.error_description : null
          }, trusted)
          return [true, { ...state, ssoSessions: HashMap.set(state.ssoSessions, id, finished) }]
        })
      }),

      consume: Effect.fnUntraced(function*(id, at) {
        return yield* memory.modify((state) => {
          const session = HashMap.get(state.ssoSessions, id)
          if (
            Option.isNone(session) || session.value.state === "pending" || session.value.consumed_at !== null ||
            !DateTime.lessThan(at, session.value.expires_at)
          ) {
            return [Option.none(), state]
          }
          const consumed = new SsoSession({ ...session.value, consumed_at: at }, trusted)
          return [Option.some(consumed), { ...state, ssoSessions: HashMap.set(state.ssoSessions, id, consumed) }]
        })
      }),

      purge: Effect.fnUntraced(function*(before) {
        yield* memory.modify((state) => [undefined, {
          ...state,
          ssoSessions: HashMap.filter(state.ssoSessions, (session) => !DateTime.lessThan(session.expires_at, before))
        }])
      })
    })
  })
)
