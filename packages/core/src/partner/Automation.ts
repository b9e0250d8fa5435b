/**
 * A partner app's automations (decisions.md "Partner API, where the document is open"): when their trigger fires in
 * a workspace connected to the app, each of their actions gets a signed POST (the partner signature scheme, keyed by
 * the app's webhook secret) of `{automation_id, trigger_type, event_id, occurred_at, workspace_id, data}`.
 *
 * Decisions where the documents are silent:
 * - `name` is 1 to 200 characters, `description` at most 2000 (null or left out: none), `enabled` a boolean
 *   (default true: an automation made disabled never fires); `actions` lists 1 to 10 actions, each
 *   `{type: "webhook", webhook_url}` with an absolute HTTPS URL without user information that the outbound rules
 *   let this server call (as a workspace endpoint's URL), else 400 `invalid_request` naming the field
 *   (`actions[0].webhook_url`). An unknown field is 400 `invalid_request` too.
 * - The triggers: `action_item_created` (an action item is created), `action_item_completed` (a user completes one:
 *   as for the `action_item.completed` webhook, not a completion reconciled from an external to-do provider, which
 *   would echo back to the provider that reported it), `meeting_ended` (a meeting is ended). `data` is the action
 *   item or the meeting as the first-party API shows it; for `action_item_completed` it adds `completed_by_user_id`
 *   (null when a workspace API key completed it).
 * - An action's id is the server's own (the outbox addresses each action's deliveries by it); the API shows an
 *   action as `{type, webhook_url}`.
 * - The partner document and decisions.md give the list and create only: an automation is kept as made (there is no
 *   change or deletion yet), and an app's automations are listed newest first.
 */
import { Schema } from "effect"
import { Uuid } from "../shared/Ids.js"
import { LongText, requestBody, Title } from "../shared/Text.js"
import { Timestamp } from "../shared/Time.js"
import { trusted } from "../shared/Trusted.js"
import { PartnerAppId } from "./PartnerApp.js"

export const AutomationId = Uuid.pipe(Schema.brand("AutomationId"))
export type AutomationId = typeof AutomationId.Type

export const AutomationActionId = Uuid.pipe(Schema.brand("AutomationActionId"))
export type AutomationActionId = typeof AutomationActionId.Type

/** What fires an automation. */
export const TriggerType = Schema.Literal("action_item_created", "action_item_completed", "meeting_ended").annotations({
  identifier: "AutomationTriggerType",
  description: "action_item_created, action_item_completed (a user's completion) or meeting_ended"
})
export type TriggerType = typeof TriggerType.Type

/** The most actions one automation has. */
export const MAX_AUTOMATION_ACTIONS = 10

const ActionType = Schema.Literal("webhook").annotations({ description: "webhook: a signed POST to webhook_url" })

/** An action as stored: its id (the addressee of its deliveries), its type and where it posts. */
export class AutomationAction extends Schema.Class<AutomationAction>("AutomationAction")({
  id: AutomationActionId,
  type: ActionType,
  webhook_url: Schema.String
}) {}

/** An automation as stored. */
export class Automation extends Schema.Class<Automation>("Automation")({
  id: AutomationId,
  partner_app_id: PartnerAppId,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  trigger_type: TriggerType,
  /** In the order given. */
  actions: Schema.Array(AutomationAction),
  enabled: Schema.Boolean,
  created_at: Timestamp
}) {}

/** An action as the API shows it. */
export class AutomationActionView extends Schema.Class<AutomationActionView>("AutomationActionView")({
  type: ActionType,
  webhook_url: Schema.String
}) {}

/** An automation as the admin API shows it (the record of decisions.md). */
export class AutomationView extends Schema.Class<AutomationView>("AutomationView")({
  id: AutomationId,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  trigger_type: TriggerType,
  actions: Schema.Array(AutomationActionView),
  enabled: Schema.Boolean,
  created_at: Timestamp
}) {
  static readonly of = (automation: Automation) =>
    new AutomationView({
      id: automation.id,
      name: automation.name,
      description: automation.description,
      trigger_type: automation.trigger_type,
      actions: automation.actions.map((action) =>
        new AutomationActionView({ type: action.type, webhook_url: action.webhook_url }, trusted)
      ),
      enabled: automation.enabled,
      created_at: automation.created_at
    }, trusted)
}

/** An action of a create request (an unknown field is refused, as in the request around it). */
export const CreateAutomationAction = Schema.Struct({
  type: ActionType,
  webhook_url: Title(2000).annotations({
    description: "an absolute HTTPS URL the outbound rules let the server call (CONVENE_OUTBOUND_ALLOW_HOSTS)"
  })
}).annotations({ identifier: "CreateAutomationAction", parseOptions: { onExcessProperty: "error" } })

/** POST /v1/partner/admin/automations. */
export class CreateAutomation extends Schema.Class<CreateAutomation>("CreateAutomation")({
  name: Title(200),
  description: Schema.optional(Schema.NullOr(LongText(2000))),
  trigger_type: TriggerType,
  actions: Schema.Array(CreateAutomationAction).pipe(
    Schema.minItems(1, { message: () => "must list at least one action" }),
    Schema.maxItems(MAX_AUTOMATION_ACTIONS, { message: () => `may list at most ${MAX_AUTOMATION_ACTIONS} actions` })
  ),
  enabled: Schema.optional(Schema.Boolean)
}, requestBody) {}
