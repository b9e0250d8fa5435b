/** What each plan allows. One table, read by every rule that gates on the plan. */
import type { Plan } from "./Workspace.js"

const rank: Record<Plan, number> = { FREE: 0, PRO: 1, ELITE: 2, ENTERPRISE: 3 }

export const atLeast = (plan: Plan, required: Plan): boolean => rank[plan] >= rank[required]

/** Meetings a workspace may create per UTC calendar month; `undefined` means no cap. */
export const monthlyMeetingAllowance = (plan: Plan): number | undefined => (plan === "FREE" ? 20 : undefined)

/** Personal access tokens need a paid plan. */
export const personalAccessTokensFrom: Plan = "PRO"

/** Webhook endpoints need a paid plan. */
export const webhooksFrom: Plan = "PRO"

/** Active webhook endpoints (neither deleted nor disabled) a workspace may have; `undefined` means no cap. */
export const activeWebhookEndpointCap = (plan: Plan): number | undefined =>
  plan === "FREE" ? 0 : plan === "PRO" ? 1 : plan === "ELITE" ? 3 : undefined
