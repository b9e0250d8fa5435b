/**
 * Request budgets (decisions.md: per plan, per minute, per credential). A budget is counted in fixed windows of
 * one minute aligned to the clock (as GitHub's REST API does): every request of a credential in the window takes
 * one unit, whatever its answer; the window's end is when the budget is whole again. Requests that present no
 * valid credential are counted per client address, with their own budget, so that a flood of guesses is refused
 * as cheaply as an authenticated one. The counters live behind the RateLimitStore port, so servers sharing one
 * PostgreSQL enforce one budget together.
 *
 * Where the counters are shared (`RateLimitStore.shared`), a process takes units of a budget in blocks: one store
 * call adds a block (1% of the budget, at least one unit and at most 100) to the shared count, and the process
 * hands those units to its next requests one by one, without a round trip each. Units a process reserved and had
 * no request for when the window ended are counted as spent, so a budget may be refused up to one block per server
 * process early, never late. Once a window's budget is spent, the rest of the window is refused without asking the
 * store at all (the count can only grow until the window ends).
 *
 * The partner API has budgets of its own per client address (partner-api.md, "Limits"): one for each of its user
 * context, its admin context, its OAuth server and its SSO info, each counted in fixed windows of its own length
 * (five minutes, one minute for SSO info) aligned to the clock in the same way, with the same counters. The host
 * says which part a request is for and who the client is; the budgets and the windows are decided here.
 */
import { Clock, Context, Deferred, Effect, FiberId, Layer, Option } from "effect"
import type { Principal } from "../identity/Identity.js"
import { RateLimited } from "../shared/Errors.js"
import type { WorkspaceId } from "../shared/Ids.js"
import type { Plan } from "../workspaces/Workspace.js"
import { WorkspaceStore } from "../workspaces/WorkspaceStore.js"
import { RateLimitStore, type RateLimitWindow } from "./RateLimitStore.js"
import { fn } from "../shared/Span.js"

/** The budgets, and the window they are counted in. */
export interface RateLimitPolicy {
  /** Requests per window for a credential of a workspace on each plan. */
  readonly perPlan: Readonly<Record<Plan, number>>
  /** Requests per window from one client address that presents no valid credential. */
  readonly anonymous: number
  /** The window's length in milliseconds (one minute). */
  readonly windowMs: number
  /** The partner API's budgets per client address; left out, partner-api.md's (`defaultPartnerBudgets`). */
  readonly partner?: PartnerBudgets | undefined
}

/** A budget counted in fixed windows of its own length. */
export interface Budget {
  /** Requests per window. */
  readonly limit: number
  /** The window's length in milliseconds. */
  readonly windowMs: number
}

/**
 * The parts of the partner API with a budget per client address: its user context (/v1/partner/user), its admin
 * context (/v1/partner/admin), its OAuth server (/oauth2) and its SSO info (/v1/partner/sso/info).
 */
export const partnerScopes = ["partner_user", "partner_admin", "oauth", "sso_info"] as const
export type PartnerScope = typeof partnerScopes[number]

export type PartnerBudgets = Readonly<Record<PartnerScope, Budget>>

const fiveMinutes = 5 * 60_000

/** partner-api.md's budgets per client address: 1000, 500 and 100 requests per 5 minutes, and 30 a minute. */
export const defaultPartnerBudgets: PartnerBudgets = {
  partner_user: { limit: 1000, windowMs: fiveMinutes },
  partner_admin: { limit: 500, windowMs: fiveMinutes },
  oauth: { limit: 100, windowMs: fiveMinutes },
  sso_info: { limit: 30, windowMs: 60_000 }
}

/**
 * decisions.md's budgets: FREE 60, PRO 300, ELITE 600, ENTERPRISE 1200 a minute; 300 a minute for anonymous callers;
 * and partner-api.md's per client address of the partner API.
 */
export const defaultPolicy: RateLimitPolicy = {
  perPlan: { FREE: 60, PRO: 300, ELITE: 600, ENTERPRISE: 1200 },
  anonymous: 300,
  windowMs: 60_000,
  partner: defaultPartnerBudgets
}

/**
 * Who a request is counted against: its credential, the client address of a request without a valid one, or the
 * client address of a request to a part of the partner API (whatever its credential).
 */
export type RateLimitSubject =
  | { readonly _tag: "Credential"; readonly principal: Principal }
  | { readonly _tag: "Address"; readonly address: string }
  | { readonly _tag: "PartnerAddress"; readonly scope: PartnerScope; readonly address: string }

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

/** The units one store call reserves of a shared budget of `limit` (1%, at least 1, at most 100). */
export const blockOf = (limit: number): number => Math.min(100, Math.max(1, Math.floor(limit / 100)))

/** Above this many keys the counts of windows that have ended are forgotten. */
const pruneAbove = 10_000

/** Where one key's budget stands in this process, in the current window. */
interface Standing {
  readonly windowStart: number
  readonly windowEnd: number
  /** The next unit of the block this process holds, and its last. */
  next: number
  last: number
  /** A block being reserved: the others wait for it instead of reserving their own. */
  reserving: Deferred.Deferred<void> | undefined
  /** The window's budget is spent: the rest of the window is refused without asking the store. */
  spent: boolean
}

/** A window's length in words: "a minute", "per 5 minutes", "per 30 seconds". */
const perWindow = (windowMs: number): string => {
  if (windowMs === 60_000) return "a minute"
  return windowMs % 60_000 === 0 ? `per ${windowMs / 60_000} minutes` : `per ${Math.ceil(windowMs / 1000)} seconds`
}

/** The refusal of a request that `state` says is over its budget (counted in windows of `windowMs`, one minute). */
export const refusal = (state: RateLimitState, windowMs = 60_000): RateLimited =>
  new RateLimited({
    limit: state.limit,
    retry_after_seconds: state.retryAfterSeconds,
    message: `rate limit of ${state.limit} requests ${perWindow(windowMs)} exceeded; retry after ${state.retryAfterSeconds} seconds`
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

    const standings = new Map<string, Standing>()

    const standingOf = (key: string, window: RateLimitWindow): Standing => {
      const known = standings.get(key)
      if (known !== undefined && known.windowStart === window.start) return known
      // Budgets have windows of different lengths: only the standings of windows that have ended are forgotten.
      if (standings.size >= pruneAbove) {
        for (const [other, standing] of standings) if (standing.windowEnd <= window.start) standings.delete(other)
      }
      const fresh: Standing = {
        windowStart: window.start,
        windowEnd: window.start + window.length,
        next: 1,
        last: 0,
        reserving: undefined,
        spent: false
      }
      standings.set(key, fresh)
      return fresh
    }

    /**
     * The number of this request's unit in the window: straight from the store, or, where the store is shared, the
     * next unit of the block this process holds (reserving a block when it has none left; one reservation at a time
     * per key, the other requests waiting for it). A reservation always completes, so none waits for ever.
     */
    const unitOf = (key: string, window: RateLimitWindow, limit: number): Effect.Effect<number> => {
      if (!store.shared) return store.hit(key, window)
      const standing = standingOf(key, window)
      if (standing.next <= standing.last) return Effect.succeed(standing.next++)
      if (standing.reserving !== undefined) {
        return Effect.zipRight(Deferred.await(standing.reserving), Effect.suspend(() => unitOf(key, window, limit)))
      }
      const reserving = Deferred.unsafeMake<void>(FiberId.none)
      standing.reserving = reserving
      const units = blockOf(limit)
      return Effect.uninterruptible(
        Effect.map(store.hit(key, window, units), (total) => {
          standing.next = total - units + 1
          standing.last = total
          return standing.next++
        }).pipe(Effect.ensuring(Effect.suspend(() => {
          standing.reserving = undefined
          return Deferred.succeed(reserving, undefined)
        })))
      )
    }

    const partnerBudgets = policy.partner ?? defaultPartnerBudgets

    /** The counter a subject's request counts in, and its budget. */
    const budgetOf = (subject: RateLimitSubject, at: number): Effect.Effect<readonly [key: string, budget: Budget]> => {
      switch (subject._tag) {
        case "Credential":
          return Effect.map(planOf(subject.principal.workspace_id, at), (plan) =>
            [`credential:${subject.principal.credential_id}`, { limit: policy.perPlan[plan], windowMs: policy.windowMs }] as const)
        case "Address":
          return Effect.succeed([`address:${subject.address}`, { limit: policy.anonymous, windowMs: policy.windowMs }] as const)
        case "PartnerAddress":
          return Effect.succeed([`${subject.scope}:${subject.address}`, partnerBudgets[subject.scope]] as const)
      }
    }

    /** Takes one unit of the subject's budget for this request and answers where the budget stands. */
    const take = fn("RateLimits.take")(function*(subject: RateLimitSubject) {
      const at = yield* Clock.currentTimeMillis
      const [key, { limit, windowMs }] = yield* budgetOf(subject, at)
      const start = at - (at % windowMs)
      const end = start + windowMs
      const window: RateLimitWindow = { start, length: windowMs }
      const standing = standings.get(key)
      const count = standing !== undefined && standing.windowStart === start && standing.spent
        ? limit + 1
        : yield* unitOf(key, window, limit)
      if (count > limit) standingOf(key, window).spent = true
      const state: RateLimitState = {
        limit,
        remaining: Math.max(0, limit - count),
        reset: Math.ceil(end / 1000),
        retryAfterSeconds: Math.max(1, Math.ceil((end - at) / 1000)),
        exceeded: count > limit
      }
      return state
    })

    return { take, policy, partnerBudgets } as const
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
