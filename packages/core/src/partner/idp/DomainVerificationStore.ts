import { Context, type DateTime, type Effect, type Option } from "effect"
import type { PartnerAppId } from "../PartnerApp.js"
import type { DomainVerification } from "./DomainVerification.js"

/**
 * Port: domain verifications, one per (app, domain). Storage only: the state table is core's (DomainVerifications).
 * Writes join the caller's unit of work (Transactor).
 */
export class DomainVerificationStore extends Context.Tag("@convene/core/DomainVerificationStore")<DomainVerificationStore, {
  /** The app's verification of the domain. */
  readonly get: (appId: PartnerAppId, domain: string) => Effect.Effect<Option.Option<DomainVerification>>
  /** Inserts or replaces the app's verification of `verification.domain`. */
  readonly put: (verification: DomainVerification) => Effect.Effect<void>
  /** The app holding the domain verified, if any (at most one: core never lets a second app complete it). */
  readonly verifiedOwner: (domain: string) => Effect.Effect<Option.Option<PartnerAppId>>
  /**
   * Every app's verification of the domain, as committed now, each locked until the caller's unit of work ends (so
   * that two units of work deciding about one domain run one after the other, the second seeing what the first
   * wrote). Ordered by app id. Must run inside Transactor.withTransaction.
   */
  readonly lockDomain: (domain: string) => Effect.Effect<ReadonlyArray<DomainVerification>>
  /**
   * Up to `limit` verifications the sweep must look at: pending ones whose `expires_at` is at or before
   * `expiringBy`, and verified ones never checked or last checked at or before `checkedBy`. The longest waiting
   * first (the pending by expires_at, the verified by last_checked_at; then app id and domain).
   */
  readonly due: (input: {
    readonly expiringBy: DateTime.Utc
    readonly checkedBy: DateTime.Utc
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<DomainVerification>>
}>() {}
