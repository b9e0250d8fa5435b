/**
 * The partner webhook events this server sends (of the partner document's Events table), in a module of its own so
 * that a partner app's webhook filter (PartnerApp.webhook_events) and the fan-outs (PartnerEvents, the domain
 * verifications) name them from one list.
 */
import { Schema } from "effect"

export const PartnerEventType = Schema.Literal(
  "action_item.updated",
  "action_item.completed",
  "action_button.triggered",
  "workflow.run.started",
  "workflow.run.completed",
  "workflow.run.failed",
  "workflow.step.completed",
  "workflow.task.created",
  "workflow.task.resolved",
  "partner.idp.domain_verified",
  "partner.idp.domain_verification_failed",
  "partner.idp.domain_revoked"
).annotations({ identifier: "PartnerEventType" })
export type PartnerEventType = typeof PartnerEventType.Type

/**
 * Whether the app's webhook filter lets `type` through: a null filter (the default) sends every type, a list only
 * the types it names (an empty list: none).
 */
export const isSubscribed = (filter: ReadonlyArray<PartnerEventType> | null, type: PartnerEventType): boolean =>
  filter === null || filter.includes(type)
