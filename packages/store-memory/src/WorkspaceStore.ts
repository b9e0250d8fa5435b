import { Pagination, WorkspaceStore } from "@convene/core"
import { Effect, HashMap, Layer, Option } from "effect"
import { Memory, newestFirst } from "./Memory.js"

const usageKey = (workspaceId: string, counter: string, period: string) => JSON.stringify([workspaceId, counter, period])

/** The workspace a usage key counts for. */
const workspaceOfKey = (key: string): string => (JSON.parse(key) as ReadonlyArray<string>)[0] ?? ""

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

      // Transactions run one at a time here (Memory.withTransaction): there is nothing to hold.
      lock: () => Effect.void,

      // The same: a transaction that reads the workspace sees it as long as it runs.
      share: Effect.fnUntraced(function*(id) {
        const state = yield* memory.read
        return HashMap.has(state.workspaces, id)
      }),

      list: Effect.fnUntraced(function*(page) {
        const state = yield* memory.read
        return Pagination.sliceOf(HashMap.toValues(state.workspaces).sort(newestFirst), page)
      }),

      // The usage counters are the workspace's own rows: they go with it.
      delete: Effect.fnUntraced(function*(id) {
        return yield* memory.modify((state) => [HashMap.has(state.workspaces, id), {
          ...state,
          workspaces: HashMap.remove(state.workspaces, id),
          usage: HashMap.filter(state.usage, (_, key) => workspaceOfKey(key) !== id)
        }])
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
