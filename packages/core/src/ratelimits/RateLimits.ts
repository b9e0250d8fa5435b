/**
 * Request budgets (decisions.md: per plan, per minute, per credential). A budget is counted in fixed windows of
 * one minute aligned to the clock (as GitHub's REST API does): every request of a credential in the window takes
 * one unit, whatever its answer; the window's end is when the budget is whole again. Requests that present no
 * valid credential are counted per client address, with their own budget, so that a flood of guesses is refused
 * as cheaply as an authenticated one. The counters live behind the RateLimitStore port, so servers sharing one
 * PostgreSQL enforce one budget together.
 */
import { Clock, Context, Effect, Layer, Option } from "effect"
import type { Principal } from "../identity/Identity.js"
import { RateLimited } from "../shared/Errors.js"
import type { WorkspaceId } from "../shared/Ids.js"
import type { Plan } from "../workspaces/Workspace.js"
import { WorkspaceStore } from "../workspaces/WorkspaceStore.js"
import { RateLimitStore } from "./RateLimitStore.js"
import { fn } from "../shared/Span.js"

/** The budgets, and the window they are counted in. */
export interface RateLimitPolicy {
  /** Requests per window for a credential of a workspace on each plan. */
  readonly perPlan: Readonly<Record<Plan, number>>
  /** Requests per window from one client address that presents no valid credential. */
  readonly anonymous: number
  /** The window's length in milliseconds (one minute). */
  readonly windowMs: number
}

/** decisions.md's budgets: FREE 60, PRO 300, ELITE 600, ENTERPRISE 1200 a minute; 300 a minute for anonymous callers. */
export const defaultPolicy: RateLimitPolicy = {
  perPlan: { FREE: 60, PRO: 300, ELITE: 600, ENTERPRISE: 1200 },
  anonymous: 300,
  windowMs: 60_000
}

/** Who a request is counted against. */
export type RateLimitSubject =
  | { readonly _tag: "Credential"; readonly principal: Principal }
  | { readonly _tag: "Address"; readonly address: string }

/** Where a subject's budget stands after a request took its unit: what the X-RateLimit-* headers say. */
export interface RateLimitState {
  /** The budget of the window. */
  readonly limit: number
  /** Units left in the window after this request (never below 0). */
  readonly remaining: number
  /** When the window ends, in seconds since the epoch (X-RateLimit-Reset). */
  readonly reset: number
  /** Whole seconds until then, at least 1 (Retry-After on a refusal). */
  readonly retryAfterSeconds: number
  /** Whether this request was over the budget. */
  readonly exceeded: boolean
}

/** How long a workspace's plan is remembered: a plan change reaches the budgets within this time. */
export const planCacheMs = 5_000

/** The refusal of a request that `state` says is over its budget. */
export const refusal = (state: RateLimitState): RateLimited =>
  new RateLimited({
    limit: state.limit,
    retry_after_seconds: state.retryAfterSeconds,
    message: `rate limit of ${state.limit} requests a minute exceeded; retry after ${state.retryAfterSeconds} seconds`
  })

const make = (policy: RateLimitPolicy) =>
  Effect.gen(function*() {
    const store = yield* RateLimitStore
    const workspaces = yield* WorkspaceStore
    const plans = new Map<WorkspaceId, { readonly plan: Plan; readonly until: number }>()

    const planOf = (workspaceId: WorkspaceId, at: number) => {
      const known = plans.get(workspaceId)
      if (known !== undefined && known.until > at) return Effect.succeed(known.plan)
      return Effect.map(workspaces.get(workspaceId), (workspace) => {
        // A workspace deleted under an authenticated request: the smallest budget.
        const plan = Option.match(workspace, { onNone: (): Plan => "FREE", onSome: (w) => w.plan })
        if (plans.size >= 10_000) plans.clear()
        plans.set(workspaceId, { plan, until: at + planCacheMs })
        return plan
      })
    }

    /** Takes one unit of the subject's budget for this request and answers where the budget stands. */
    const take = fn("RateLimits.take")(function*(subject: RateLimitSubject) {
      const at = yield* Clock.currentTimeMillis
      const start = at - (at % policy.windowMs)
      const end = start + policy.windowMs
      const [key, limit] = subject._tag === "Credential"
        ? [`credential:${subject.principal.credential_id}`, policy.perPlan[yield* planOf(subject.principal.workspace_id, at)]]
        : [`address:${subject.address}`, policy.anonymous]
      const count = yield* store.hit(key, { start, length: policy.windowMs })
      const state: RateLimitState = {
        limit,
        remaining: Math.max(0, limit - count),
        reset: Math.ceil(end / 1000),
        retryAfterSeconds: Math.max(1, Math.ceil((end - at) / 1000)),
        exceeded: count > limit
      }
      return state
    })

    return { take, policy } as const
  })

export class RateLimits extends Context.Tag("@convene/core/RateLimits")<
  RateLimits,
  Effect.Effect.Success<ReturnType<typeof make>>
>() {
  /** The service with `policy` (decisions.md's budgets by default). */
  static readonly layerWith = (policy: RateLimitPolicy): Layer.Layer<RateLimits, never, RateLimitStore | WorkspaceStore> =>
    Layer.effect(RateLimits, make(policy))
  static readonly layer: Layer.Layer<RateLimits, never, RateLimitStore | WorkspaceStore> = RateLimits.layerWith(defaultPolicy)
}
