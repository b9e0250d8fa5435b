/**
 * A domain verification record as the domain verification room stores it, for tests that need an app's domain in a
 * given state without going through DNS (the IdP configuration's domain rules).
 */
import { DomainVerification, EmailDomain, PartnerAppId } from "@convene/core"
import { DateTime } from "effect"

export const domainVerification = (
  appId: string,
  domain: string,
  status: DomainVerification["status"],
  at: DateTime.Utc
): DomainVerification =>
  new DomainVerification({
    partner_app_id: PartnerAppId.make(appId),
    domain: EmailDomain.make(domain),
    status,
    challenge: crypto.randomUUID(),
    issued_at: at,
    expires_at: DateTime.add(at, { days: 7 }),
    verified_at: status === "verified" ? at : null,
    last_checked_at: null,
    last_proven_at: status === "verified" ? at : null,
    created_at: at,
    updated_at: at
  })
