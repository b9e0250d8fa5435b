/**
 * Domain verification (partner document: "Domain verification" state table; decisions.md: the record's fields).
 * A partner app proves it controls an e-mail domain by publishing a TXT record `_convene-challenge.<domain>` with the
 * value the server issued. The record belongs to the app that started it (one per app and domain); the verified
 * state belongs to the app that completed it (no two apps hold one domain verified).
 */
import { Schema } from "effect"
import { Timestamp } from "../../shared/Time.js"
import { trusted } from "../../shared/Trusted.js"
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

/** A verification as the partner admin API shows it (decisions.md's record). */
export class DomainVerificationView extends Schema.Class<DomainVerificationView>("DomainVerificationView")({
  domain: Schema.String,
  status: DomainVerificationStatus,
  txt_record_name: Schema.String.annotations({ description: "the DNS name to publish the TXT record at" }),
  txt_record_value: Schema.String.annotations({
    description: "the value the TXT record must carry (the current challenge; a new one after each POST .../verify " +
      "on a pending, expired or revoked domain)"
  }),
  expires_at: Timestamp.annotations({
    description: "when the challenge expires unless verified (7 days after it was issued)"
  }),
  verified_at: Schema.NullOr(Timestamp),
  last_checked_at: Schema.NullOr(Timestamp).annotations({
    description: "the last DNS lookup that gave a definitive answer (a check, or a re-validation)"
  })
}) {
  static readonly of = (verification: DomainVerification) =>
    new DomainVerificationView({
      domain: verification.domain,
      status: verification.status,
      txt_record_name: challengeRecordName(verification.domain),
      txt_record_value: verification.challenge,
      expires_at: verification.expires_at,
      verified_at: verification.verified_at,
      last_checked_at: verification.last_checked_at
    }, trusted)
}

/**
 * What a check found: `verified` (the TXT record carries the challenge: the domain is verified), `token_mismatch`
 * (pending: no TXT record carries the current challenge), `token_expired` (the challenge expired unclaimed),
 * `proof_missing` (verified, and the proof is absent now, for less than the re-validation window), `revoked` (the
 * proof was lost across the whole window).
 */
export const DomainCheckResult = Schema.Literal("verified", "token_mismatch", "token_expired", "proof_missing", "revoked")
  .annotations({ identifier: "DomainCheckResult" })
export type DomainCheckResult = typeof DomainCheckResult.Type

/** The answer of POST .../check: the record after the check, and what the check found. */
export class DomainCheck extends Schema.Class<DomainCheck>("DomainCheck")({
  ...DomainVerificationView.fields,
  check: Schema.Struct({
    result: DomainCheckResult,
    message: Schema.String.annotations({ description: "what the result means, in words" })
  })
}) {}
