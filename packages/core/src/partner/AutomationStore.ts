import { Context, type Effect, type Option } from "effect"
import type { Page, Slice } from "../shared/Pagination.js"
import type { Automation, AutomationActionId, TriggerType } from "./Automation.js"
import type { PartnerAppId } from "./PartnerApp.js"

/**
 * Port: partner apps' automations, each with its actions (in their order). Storage only: which automations fire, and
 * whether their app may be called, are core's rules (PartnerEvents, PartnerDeliveries). An action's id is unique
 * across the installation. Automations are never changed nor deleted (partner apps are never deleted either).
 * Writes join the caller's unit of work (Transactor).
 */
export class AutomationStore extends Context.Tag("@convene/core/AutomationStore")<AutomationStore, {
  /** Stores the automation with its actions; its app exists. */
  readonly insert: (automation: Automation) => Effect.Effect<void>
  /** A page of the app's automations, newest first (created_at desc, id desc). */
  readonly list: (appId: PartnerAppId, page: Page) => Effect.Effect<Slice<Automation>>
  /** The automations of these apps with this trigger, enabled or not, oldest first (created_at asc, id asc). */
  readonly withTrigger: (appIds: ReadonlyArray<PartnerAppId>, trigger: TriggerType) => Effect.Effect<ReadonlyArray<Automation>>
  /** The automation that holds the action. */
  readonly getByAction: (actionId: AutomationActionId) => Effect.Effect<Option.Option<Automation>>
}>() {}
