/** AutomationStore in memory: partner apps' automations, each with its actions, in the one state value. */
import { AutomationStore, Pagination } from "@convene/core"
import { Effect, HashMap, Layer, Option } from "effect"
import { Memory, newestFirst, oldestFirst } from "./Memory.js"

export const layer: Layer.Layer<AutomationStore, never, Memory> = Layer.effect(
  AutomationStore,
  Effect.gen(function*() {
    const memory = yield* Memory

    return AutomationStore.of({
      insert: Effect.fnUntraced(function*(automation) {
        yield* memory.modify((state) => [undefined, {
          ...state,
          automations: HashMap.set(state.automations, automation.id, automation)
        }])
      }),

      list: Effect.fnUntraced(function*(appId, page) {
        const rows = HashMap.toValues((yield* memory.read).automations)
          .filter((automation) => automation.partner_app_id === appId)
          .sort(newestFirst)
        return Pagination.sliceOf(rows, page)
      }),

      withTrigger: Effect.fnUntraced(function*(appIds, trigger) {
        const apps = new Set<string>(appIds)
        return HashMap.toValues((yield* memory.read).automations)
          .filter((automation) => apps.has(automation.partner_app_id) && automation.trigger_type === trigger)
          .sort(oldestFirst)
      }),

      getByAction: Effect.fnUntraced(function*(actionId) {
        return HashMap.findFirst((yield* memory.read).automations, (automation) =>
          automation.actions.some((action) => action.id === actionId)).pipe(Option.map(([, automation]) => automation))
      })
    })
  })
)
