/**
 * A partner app's automations, as the app administers them (GET and POST /v1/partner/admin/automations): the app
 * is the one the admin API's credentials authenticated (PartnerApps.authenticateAdmin). The rules of each field are
 * Automation.ts's decisions; what an automation does when its trigger fires is PartnerEvents' and
 * PartnerDeliveries'.
 */
import { Context, Effect, Layer } from "effect"
import { Crypto } from "../ports/Crypto.js"
import { checkCallableUrl, Outbound } from "../ports/Outbound.js"
import { clamp, type PageRequest, toList } from "../shared/Pagination.js"
import { fn } from "../shared/Span.js"
import { now } from "../shared/Time.js"
import { trusted } from "../shared/Trusted.js"
import {
  Automation,
  AutomationAction,
  AutomationActionId,
  AutomationId,
  AutomationView,
  type CreateAutomation
} from "./Automation.js"
import { AutomationStore } from "./AutomationStore.js"
import type { PartnerApp } from "./PartnerApp.js"

const make = Effect.gen(function*() {
  const store = yield* AutomationStore
  const crypto = yield* Crypto
  const outbound = yield* Outbound

  /** A page of the app's automations, newest first. */
  const list = fn("Automations.list")(function*(app: PartnerApp, request: PageRequest) {
    const page = clamp(request)
    const slice = yield* store.list(app.id, page)
    return toList({ items: slice.items.map(AutomationView.of), total: slice.total }, page)
  })

  /** Creates an automation of the app; each action's URL must pass the outbound rules (ValidationError naming it). */
  const create = fn("Automations.create")(function*(app: PartnerApp, input: CreateAutomation) {
    for (const [index, action] of input.actions.entries()) {
      yield* checkCallableUrl(`actions[${index}].webhook_url`, action.webhook_url).pipe(
        Effect.provideService(Outbound, outbound)
      )
    }
    const actions = yield* Effect.forEach(input.actions, (action) =>
      Effect.map(crypto.randomUUID, (id) =>
        new AutomationAction({ id: AutomationActionId.make(id), type: action.type, webhook_url: action.webhook_url }, trusted)))
    const automation = new Automation({
      id: AutomationId.make(yield* crypto.randomUUID),
      partner_app_id: app.id,
      name: input.name,
      description: input.description ?? null,
      trigger_type: input.trigger_type,
      actions,
      enabled: input.enabled ?? true,
      created_at: yield* now
    }, trusted)
    yield* store.insert(automation)
    return AutomationView.of(automation)
  })

  return { list, create } as const
})

export class Automations extends Context.Tag("@convene/core/Automations")<Automations, Effect.Effect.Success<typeof make>>() {
  static readonly layer: Layer.Layer<Automations, never, AutomationStore | Crypto | Outbound> = Layer.effect(Automations, make)
}
