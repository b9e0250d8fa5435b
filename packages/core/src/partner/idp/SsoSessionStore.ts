import { Context, type DateTime, type Effect, type Option } from "effect"
import type { SsoOutcome, SsoSession, SsoSessionId } from "./SsoSession.js"

/**
 * Port: partner SSO sessions. Storage only (the rules are PartnerSso's), but the two transitions are atomic
 * conditional updates, so that of several server processes racing on one session exactly one wins: a callback
 * replayed, or a result polled twice at once, changes nothing the second time.
 */
export class SsoSessionStore extends Context.Tag("@convene/core/SsoSessionStore")<SsoSessionStore, {
  readonly insert: (session: SsoSession) => Effect.Effect<void>
  readonly get: (id: SsoSessionId) => Effect.Effect<Option.Option<SsoSession>>
  /** The session whose `state_hash` this is. */
  readonly getByStateHash: (stateHash: string) => Effect.Effect<Option.Option<SsoSession>>
  /**
   * Finishes the session with `outcome` at `at` (its outcome readable until `expiresAt`) only if it is still
   * pending and `at` is before its `expires_at`; answers whether this call finished it.
   */
  readonly finish: (
    id: SsoSessionId,
    outcome: SsoOutcome,
    at: DateTime.Utc,
    expiresAt: DateTime.Utc
  ) => Effect.Effect<boolean>
  /**
   * Marks a completed or failed session consumed at `at`, only if it is not yet and `at` is before its `expires_at`;
   * answers the session this call consumed (none when it was pending, expired, or consumed already).
   */
  readonly consume: (id: SsoSessionId, at: DateTime.Utc) => Effect.Effect<Option.Option<SsoSession>>
  /** Deletes sessions that expired before `before` (whatever their state). */
  readonly purge: (before: DateTime.Utc) => Effect.Effect<void>
}>() {}
