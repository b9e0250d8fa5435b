import { WorkspaceStore } from "@convene/core"
import { Effect, HashMap, Layer, Option } from "effect"
import { Memory } from "./Memory.js"

const usageKey = (workspaceId: string, counter: string, period: string) => JSON.stringify([workspaceId, counter, period])

export const layer: Layer.Layer<WorkspaceStore, never, Memory> = Layer.effect(
  WorkspaceStore,
  Effect.gen(function*() {
    const memory = yield* Memory

    return WorkspaceStore.of({
      insert: Effect.fnUntraced(function*(workspace) {
        yield* memory.modify((state) => [
          undefined,
          { ...state, workspaces: HashMap.set(state.workspaces, workspace.id, workspace) }
        ])
      }),

      update: Effect.fnUntraced(function*(workspace) {
        yield* memory.modify((state) => [
          undefined,
          HashMap.has(state.workspaces, workspace.id)
            ? { ...state, workspaces: HashMap.set(state.workspaces, workspace.id, workspace) }
            : state
        ])
      }),

      get: Effect.fnUntraced(function*(id) {
        const state = yield* memory.read
        return HashMap.get(state.workspaces, id)
      }),

      consume: Effect.fnUntraced(function*({ counter, limit, period, workspaceId }) {
        const key = usageKey(workspaceId, counter, period)
        return yield* memory.modify((state) => {
          const used = Option.getOrElse(HashMap.get(state.usage, key), () => 0)
          return used >= limit
            ? [false, state]
            : [true, { ...state, usage: HashMap.set(state.usage, key, used + 1) }]
        })
      })
    })
  })
)
