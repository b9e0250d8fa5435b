import { Context, type Effect, type Option } from "effect"
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
}>() {}
