import {
  Automation,
  AutomationAction,
  AutomationActionId,
  AutomationId,
  AutomationStore,
  PartnerAppId,
  PartnerStore,
  type StorePorts,
  Transactor,
  type TriggerType
} from "@convene/core"
import { addEqualityTesters, expect, layer } from "@effect/vitest"
import { DateTime, Effect, Exit, type Layer, Option } from "effect"
import { minutes, rolledBack, sortedIds, uuid } from "./fixtures.js"
import { partnerApp } from "./PartnerStore.js"

/** An automation of `appId` with two actions, unless `fields` say otherwise. */
const automation = (appId: PartnerAppId, fields: Partial<Automation> = {}): Automation =>
  new Automation({
    id: AutomationId.make(uuid()),
    partner_app_id: appId,
    name: "Tell the CRM",
    description: null,
    trigger_type: "action_item_created",
    actions: [
      new AutomationAction({ id: AutomationActionId.make(uuid()), type: "webhook", webhook_url: "https://crm.example.com/a" }),
      new AutomationAction({ id: AutomationActionId.make(uuid()), type: "webhook", webhook_url: "https://crm.example.com/b" })
    ],
    enabled: true,
    created_at: minutes(0),
    ...fields
  })

const seedApp = Effect.gen(function*() {
  const app = partnerApp()
  yield* (yield* PartnerStore).insert(app)
  return app.id
})

const seed = (appId: PartnerAppId, fields: Partial<Automation> = {}) =>
  Effect.gen(function*() {
    const row = automation(appId, fields)
    yield* (yield* AutomationStore).insert(row)
    return row
  })

export const suite = (name: string, storeLayer: Layer.Layer<StorePorts, unknown>) => {
  addEqualityTesters()

  layer(storeLayer)(`AutomationStore (${name})`, (it) => {
    it.effect("insert then list answers every field, the actions in their order; another app lists none of them", () =>
      Effect.gen(function*() {
        const store = yield* AutomationStore
        const appId = yield* seedApp
        const other = yield* seedApp
        const plain = yield* seed(appId)
        const full = yield* seed(appId, {
          name: "Full",
          description: "Every field",
          trigger_type: "meeting_ended",
          enabled: false,
          created_at: minutes(5),
          actions: Array.from({ length: 10 }, (_, index) =>
            new AutomationAction({
              id: AutomationActionId.make(uuid()),
              type: "webhook",
              webhook_url: `https://crm.example.com/${index}`
            }))
        })
        expect(yield* store.list(appId, { limit: 20, offset: 0 })).toEqual({ items: [full, plain], total: 2 })
        expect(yield* store.list(other, { limit: 20, offset: 0 })).toEqual({ items: [], total: 0 })
        expect(yield* store.list(PartnerAppId.make(uuid()), { limit: 20, offset: 0 })).toEqual({ items: [], total: 0 })
      }))

    it.effect("list is newest first (created_at desc, id desc), a page at a time, with the total", () =>
      Effect.gen(function*() {
        const store = yield* AutomationStore
        const appId = yield* seedApp
        const [a, b, c] = sortedIds(3) as [string, string, string]
        const older = yield* seed(appId, { id: AutomationId.make(c), created_at: minutes(1) })
        const tieLow = yield* seed(appId, { id: AutomationId.make(a), created_at: minutes(2) })
        const tieHigh = yield* seed(appId, { id: AutomationId.make(b), created_at: minutes(2) })
        const all = yield* store.list(appId, { limit: 20, offset: 0 })
        expect(all.items.map((row) => row.id)).toEqual([tieHigh.id, tieLow.id, older.id])
        expect(yield* store.list(appId, { limit: 1, offset: 1 })).toEqual({ items: [tieLow], total: 3 })
        expect(yield* store.list(appId, { limit: 5, offset: 9 })).toEqual({ items: [], total: 3 })
      }))

    it.effect("withTrigger: the automations of the given apps with the trigger, enabled or not, oldest first", () =>
      Effect.gen(function*() {
        const store = yield* AutomationStore
        const first = yield* seedApp
        const second = yield* seedApp
        const outside = yield* seedApp
        const [low, high] = sortedIds(2) as [string, string]
        const late = yield* seed(first, { created_at: minutes(9) })
        const tieHigh = yield* seed(second, { id: AutomationId.make(high), created_at: minutes(1), enabled: false })
        const tieLow = yield* seed(first, { id: AutomationId.make(low), created_at: minutes(1) })
        const completed = yield* seed(first, { trigger_type: "action_item_completed" })
        yield* seed(outside)
        expect(yield* store.withTrigger([first, second], "action_item_created")).toEqual([tieLow, tieHigh, late])
        expect(yield* store.withTrigger([second], "action_item_created")).toEqual([tieHigh])
        expect(yield* store.withTrigger([first, second], "action_item_completed")).toEqual([completed])
        const none: TriggerType = "meeting_ended"
        expect(yield* store.withTrigger([first, second], none)).toEqual([])
        expect(yield* store.withTrigger([], "action_item_created")).toEqual([])
      }))

    it.effect("getByAction finds the automation by any of its actions; an unknown action finds none", () =>
      Effect.gen(function*() {
        const store = yield* AutomationStore
        const appId = yield* seedApp
        const row = yield* seed(appId)
        yield* seed(appId)
        for (const action of row.actions) expect(yield* store.getByAction(action.id)).toEqual(Option.some(row))
        expect(Option.isNone(yield* store.getByAction(AutomationActionId.make(uuid())))).toBe(true)
      }))

    it.effect("an insert in a unit of work that rolls back leaves nothing, its actions neither", () =>
      Effect.gen(function*() {
        const store = yield* AutomationStore
        const transactor = yield* Transactor
        const appId = yield* seedApp
        const row = automation(appId, { created_at: DateTime.unsafeMake("2030-01-01T00:00:00Z") })
        const exit = yield* Effect.exit(transactor.withTransaction(Effect.zipRight(store.insert(row), Effect.fail("undone"))))
        expect(Exit.isFailure(exit)).toBe(true)
        // And seen inside the unit of work that made it, before it rolls back.
        const inside = yield* rolledBack(Effect.zipRight(store.insert(row), store.getByAction(row.actions[0]!.id)))
        expect(inside).toEqual(Option.some(row))
        expect(yield* store.list(appId, { limit: 20, offset: 0 })).toEqual({ items: [], total: 0 })
        expect(Option.isNone(yield* store.getByAction(row.actions[0]!.id))).toBe(true)
      }))
  })
}
