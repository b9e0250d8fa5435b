/**
 * Domain verification (partner document: "Domain verification" state table; decisions.md: the record's fields).
 * A partner app proves it controls an e-mail domain by publishing a TXT record `_convene-challenge.<domain>` with the
 * value the server issued. The record belongs to the app that started it (one per app and domain); the verified
 * state belongs to the app that completed it (no two apps hold one domain verified).
 */
import { Schema } from "effect"
import { Timestamp } from "../../shared/Time.js"
import { PartnerAppId } from "../PartnerApp.js"
import { EmailDomain } from "./EmailDomain.js"

/** `pending` (challenge issued), `verified`, `expired` (7 days unclaimed), `revoked` (proof lost). */
export const DomainVerificationStatus = Schema.Literal("pending", "verified", "expired", "revoked").annotations({
  identifier: "DomainVerificationStatus"
})
export type DomainVerificationStatus = typeof DomainVerificationStatus.Type

/** The DNS name where the challenge is published. */
export const challengeRecordName = (domain: string): string => `_convene-challenge.${domain}`

/** A domain verification as stored: one per app and domain. */
export class DomainVerification extends Schema.Class<DomainVerification>("DomainVerification")({
  partner_app_id: PartnerAppId,
  domain: EmailDomain,
  status: DomainVerificationStatus,
  /** The TXT value the app must publish (not a secret: it is published in DNS), unique per issue. */
  challenge: Schema.String,
  /** When the current challenge was issued. */
  issued_at: Timestamp,
  /** When a pending challenge expires (issued_at + 7 days). */
  expires_at: Timestamp,
  verified_at: Schema.NullOr(Timestamp),
  last_checked_at: Schema.NullOr(Timestamp),
  /** The last time the proof was found in DNS (verification, then each successful re-validation). */
  last_proven_at: Schema.NullOr(Timestamp),
  /**
   * While verified: the first re-validation since `last_proven_at` that found the proof definitively absent (null
   * while the proof is found; a temporary DNS failure leaves it as it is). Revocation waits until it is a whole
   * re-validation window old.
   */
  proof_missing_since: Schema.optionalWith(Schema.NullOr(Timestamp), { default: () => null }),
  created_at: Timestamp,
  updated_at: Timestamp
}) {}
