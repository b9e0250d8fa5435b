/**
 * Domain verification: the partner document's state table (pending, verified, expired, revoked) with its three
 * operations (verify, status, check), the sweep that expires and re-validates, and the domain events.
 *
 * Decisions where the documents are silent:
 * - verify issues a challenge: 32 random bytes in base64url after `convene-verification=`, unique per issue, valid 7
 *   days. With no record, or on an expired or revoked one, it starts over (pending, a new challenge); on a pending one
 *   it rotates the challenge (the old value no longer counts) and restarts the 7 days; on the app's own verified domain
 *   it changes nothing (the TXT record to keep published is shown). A generic e-mail domain (gmail.com, ...) is refused
 *   (DomainIsGeneric, 400 `domain_is_generic`): no IdP configuration may claim one.
 * - A domain another app holds verified can be neither started nor completed by another app: DomainVerifiedByAnotherApp
 *   (409 `domain_already_claimed`). Domains match exactly (`eu.example.com` is not `example.com`).
 * - check looks the TXT records of `_convene-challenge.<domain>` up (every value counts: several apps may publish
 *   theirs side by side). Pending: the current challenge among them -> verified (`partner.idp.domain_verified`);
 *   otherwise `token_mismatch`, still pending (`partner.idp.domain_verification_failed`, each check that finds none);
 *   past `expires_at` -> expired without a lookup (the failed event, token_expired). Verified: a re-validation now
 *   (below). Expired or revoked: nothing is looked up; the answer says so. A temporary DNS failure changes nothing and
 *   emits nothing: DomainCheckUnavailable (503 `dns_temporary_failure`).
 * - The sweep (runSweeps, every `interval`) expires pending challenges whose 7 days are over (the failed event) and
 *   re-validates each verified domain once its last check is 24 hours old: the proof found keeps it verified
 *   (`last_proven_at`); the proof definitively absent (no such TXT value, NXDOMAIN, NODATA) is remembered from its
 *   first such lookup (`proof_missing_since`), and the domain is revoked (`partner.idp.domain_revoked`) only at a lookup
 *   that again finds it absent 72 hours or more after that first one, with no lookup finding it in between. Temporary
 *   DNS failures count neither way and emit nothing; the sweep's attempt sets `last_checked_at`, so the domain is
 *   tried again 24 hours later (domains failing at once never keep the others waiting at every sweep).
 * - Every transition and its event are one unit of work that first locks the domain's records (lockDomain) and then
 *   decides again on what is committed, so of processes racing over one domain (sweeps in several servers, a check
 *   meanwhile) exactly one makes a transition and tells it.
 * - The events go to the app even when no workspace is connected, only while it is active, has a webhook secret and
 *   URL (PartnerEvents.whyNotSent) and its webhook filter lets their type through; their body is the partner envelope
 *   with `workspace_id: null` and `data {domain, status, occurred_at}`, never the challenge.
 */
import { Context, DateTime, Duration, Effect, Encoding, Layer, Option, Schedule, Schema } from "effect"
import { EventId } from "../../events/Event.js"
import { Crypto } from "../../ports/Crypto.js"
import { DnsResolver, type DnsTemporaryFailure } from "../../ports/DnsResolver.js"
import { Transactor } from "../../ports/Transactor.js"
import { fn } from "../../shared/Span.js"
import { now, plus } from "../../shared/Time.js"
import { trusted } from "../../shared/Trusted.js"
import { WebhookStore } from "../../webhooks/WebhookStore.js"
import type { PartnerAppId } from "../PartnerApp.js"
import type { PartnerEventType } from "../PartnerEventType.js"
import { tellApp } from "../PartnerEvents.js"
import { PartnerStore } from "../PartnerStore.js"
import {
  challengeRecordName,
  DomainCheck,
  type DomainCheckResult,
  DomainVerification,
  DomainVerificationView
} from "./DomainVerification.js"
import { DomainVerificationStore } from "./DomainVerificationStore.js"
import type { EmailDomain } from "./EmailDomain.js"
import { isGenericDomain } from "./GenericDomains.js"

/** How long a challenge stays pending (the partner document's Limits). */
export const challengeLifetime = Duration.days(7)
/** How often a verified domain is looked up again. */
export const revalidationInterval = Duration.hours(24)
/** How long the proof must be missing, from the first lookup that missed it, before the domain is revoked. */
export const revocationWindow = Duration.hours(72)
/** The records one sweep looks at, at most (the rest wait for the next sweep). */
export const sweepBatch = 100

/** The prefix of every challenge value. */
export const challengePrefix = "convene-verification="

/** Another app holds the domain verified (409 `domain_already_claimed`). */
export class DomainVerifiedByAnotherApp extends Schema.TaggedError<DomainVerifiedByAnotherApp>()(
  "DomainVerifiedByAnotherApp",
  { domain: Schema.String, message: Schema.String }
) {
  static readonly of = (domain: string) =>
    new DomainVerifiedByAnotherApp({ domain, message: `the domain ${domain} is verified by another partner app` })
}

/**
 * A generic e-mail domain (gmail.com, ...: GenericDomains) cannot be verified (400 `domain_is_generic`): no IdP
 * configuration may claim one, and anyone can have an address there.
 */
export class DomainIsGeneric extends Schema.TaggedError<DomainIsGeneric>()("DomainIsGeneric", {
  domain: Schema.String,
  message: Schema.String
}) {
  static readonly of = (domain: string) =>
    new DomainIsGeneric({
      domain,
      message: `${domain} is a generic e-mail domain (anyone can have an address there): it cannot be verified nor claimed`
    })
}

/** The app has no verification of the domain (404 `not_found`). */
export class DomainVerificationNotFound extends Schema.TaggedError<DomainVerificationNotFound>()(
  "DomainVerificationNotFound",
  { domain: Schema.String, message: Schema.String }
) {
  static readonly of = (domain: string) =>
    new DomainVerificationNotFound({
      domain,
      message: `no verification of the domain ${domain} was started; start one with POST /v1/partner/admin/idp/domains/${domain}/verify`
    })
}

/** The DNS lookup of a check failed temporarily; nothing changed (503 `dns_temporary_failure`). */
export class DomainCheckUnavailable extends Schema.TaggedError<DomainCheckUnavailable>()("DomainCheckUnavailable", {
  domain: Schema.String,
  message: Schema.String
}) {
  static readonly of = (domain: string, failure: DnsTemporaryFailure) =>
    new DomainCheckUnavailable({
      domain,
      message: `${failure.message} for ${challengeRecordName(domain)}; nothing changed, try the check again later`
    })
}

/**
 * What a lookup found: the TXT values (definitive), nothing looked up, or a lookup of the sweep that failed
 * temporarily (which changes nothing but when the record is next due).
 */
type Observation =
  | { readonly _tag: "Looked"; readonly values: ReadonlyArray<string> }
  | { readonly _tag: "NotLooked" }
  | { readonly _tag: "Unavailable" }

const notLooked: Observation = { _tag: "NotLooked" }
const unavailable: Observation = { _tag: "Unavailable" }

/** A decision about one record: the record to store (none: unchanged), the event to tell, and what the check found. */
interface Decision {
  readonly next: DomainVerification | undefined
  readonly event: PartnerEventType | undefined
  readonly result: DomainCheckResult
}

const messages: Record<DomainCheckResult, string> = {
  verified: "the TXT record carries the challenge: the domain is verified",
  token_mismatch: "no TXT record carries the current challenge (token_mismatch); publish txt_record_value at " +
    "txt_record_name and check again",
  token_expired: "the challenge expired unclaimed (token_expired); start a new one with POST .../verify",
  proof_missing: "the TXT record with the challenge is missing; the domain is revoked if it stays missing for 72 hours",
  revoked: "the DNS proof was lost for the whole re-validation window: the domain is revoked; start a new " +
    "verification with POST .../verify"
}

/**
 * The state table, on the record as committed (`current`), at `at`, with what a lookup found. Pure: the caller runs
 * it under the domain's lock.
 */
export const decide = (current: DomainVerification, observation: Observation, at: DateTime.Utc): Decision => {
  const changed = (fields: Partial<DomainVerification>) =>
    new DomainVerification({ ...current, ...fields, updated_at: at }, trusted)
  switch (current.status) {
    case "pending": {
      if (DateTime.lessThanOrEqualTo(current.expires_at, at)) {
        return { next: changed({ status: "expired" }), event: "partner.idp.domain_verification_failed", result: "token_expired" }
      }
      if (observation._tag !== "Looked") return { next: undefined, event: undefined, result: "token_mismatch" }
      if (observation.values.includes(current.challenge)) {
        return {
          next: changed({
            status: "verified",
            verified_at: at,
            last_checked_at: at,
            last_proven_at: at,
            proof_missing_since: null
          }),
          event: "partner.idp.domain_verified",
          result: "verified"
        }
      }
      return {
        next: changed({ last_checked_at: at }),
        event: "partner.idp.domain_verification_failed",
        result: "token_mismatch"
      }
    }
    case "verified": {
      if (observation._tag === "NotLooked") return { next: undefined, event: undefined, result: "verified" }
      // Tried: due again a re-validation interval later (so that domains failing at once cannot keep the others
      // waiting at every sweep), and counting neither way.
      if (observation._tag === "Unavailable") return { next: changed({ last_checked_at: at }), event: undefined, result: "verified" }
      if (observation.values.includes(current.challenge)) {
        return {
          next: changed({ last_checked_at: at, last_proven_at: at, proof_missing_since: null }),
          event: undefined,
          result: "verified"
        }
      }
      const missingSince = current.proof_missing_since ?? at
      if (Duration.greaterThanOrEqualTo(Duration.millis(DateTime.distance(missingSince, at)), revocationWindow)) {
        return {
          next: changed({ status: "revoked", last_checked_at: at, proof_missing_since: missingSince }),
          event: "partner.idp.domain_revoked",
          result: "revoked"
        }
      }
      return {
        next: changed({ last_checked_at: at, proof_missing_since: missingSince }),
        event: undefined,
        result: "proof_missing"
      }
    }
    case "expired":
      return { next: undefined, event: undefined, result: "token_expired" }
    case "revoked":
      return { next: undefined, event: undefined, result: "revoked" }
  }
}

/** What one sweep did. */
export interface SweepReport {
  readonly expired: number
  readonly revalidated: number
  readonly revoked: number
  /** Lookups that failed temporarily (counting neither way; the domain is due again a re-validation interval later). */
  readonly temporaryFailures: number
}

const make = Effect.gen(function*() {
  const store = yield* DomainVerificationStore
  const partners = yield* PartnerStore
  const outbox = yield* WebhookStore
  const transactor = yield* Transactor
  const crypto = yield* Crypto
  const resolver = yield* DnsResolver

  /** A fresh challenge value. */
  const mintChallenge = Effect.map(crypto.randomBytes(32), (bytes) => challengePrefix + Encoding.encodeBase64Url(bytes))

  /** The domain's TXT values at `_convene-challenge.<domain>`. */
  const lookUp = (domain: string) =>
    Effect.map(resolver.resolveTxt(challengeRecordName(domain)), (values): Observation => ({ _tag: "Looked", values }))

  /** Enqueues the event about `verification` for its app, if the app is told (see the module's decisions). */
  const tell = (type: PartnerEventType, verification: DomainVerification, at: DateTime.Utc) =>
    Effect.gen(function*() {
      const found = yield* partners.get(verification.partner_app_id)
      if (Option.isNone(found)) return
      yield* tellApp(found.value, {
        type,
        id: EventId.make(yield* crypto.randomUUID),
        workspaceId: null,
        occurredAt: at,
        data: { domain: verification.domain, status: verification.status, occurred_at: DateTime.formatIso(at) }
      }).pipe(Effect.provideService(Crypto, crypto), Effect.provideService(WebhookStore, outbox))
    })

  /**
   * Decides about the app's record of the domain on what is committed, under the domain's lock, and stores the
   * transition with its event in one unit of work. Answers the record after it and what was found; none when the
   * record does not exist.
   */
  const apply = (appId: PartnerAppId, domain: string, observation: Observation) =>
    transactor.withTransaction(Effect.gen(function*() {
      const records = yield* store.lockDomain(domain)
      const current = records.find((record) => record.partner_app_id === appId)
      if (current === undefined) return Option.none()
      const at = yield* now
      const decision = decide(current, observation, at)
      if (decision.next?.status === "verified" && current.status !== "verified") {
        const holder = records.find((record) => record.status === "verified" && record.partner_app_id !== appId)
        if (holder !== undefined) return yield* Effect.fail(DomainVerifiedByAnotherApp.of(domain))
      }
      if (decision.next !== undefined) yield* store.put(decision.next)
      if (decision.event !== undefined) yield* tell(decision.event, decision.next ?? current, at)
      return Option.some({ verification: decision.next ?? current, result: decision.result, event: decision.event })
    }))

  /**
   * Starts the app's verification of the domain, or rotates its challenge (see the module's decisions). Answers the
   * record and whether it was created by this call.
   */
  const verify = fn("DomainVerifications.verify")(function*(appId: PartnerAppId, domain: EmailDomain) {
    if (isGenericDomain(domain)) return yield* Effect.fail(DomainIsGeneric.of(domain))
    const challenge = yield* mintChallenge
    return yield* transactor.withTransaction(Effect.gen(function*() {
      const records = yield* store.lockDomain(domain)
      if (records.some((record) => record.status === "verified" && record.partner_app_id !== appId)) {
        return yield* Effect.fail(DomainVerifiedByAnotherApp.of(domain))
      }
      const current = records.find((record) => record.partner_app_id === appId)
      if (current?.status === "verified") return { verification: DomainVerificationView.of(current), created: false }
      const at = yield* now
      const next = new DomainVerification({
        partner_app_id: appId,
        domain,
        status: "pending",
        challenge,
        issued_at: at,
        expires_at: plus(at, challengeLifetime),
        verified_at: null,
        last_checked_at: current?.last_checked_at ?? null,
        last_proven_at: null,
        proof_missing_since: null,
        created_at: current?.created_at ?? at,
        updated_at: at
      }, trusted)
      yield* store.put(next)
      return { verification: DomainVerificationView.of(next), created: current === undefined }
    }))
  })

  /** The app's verification of the domain. */
  const status = fn("DomainVerifications.status")(function*(appId: PartnerAppId, domain: EmailDomain) {
    const found = yield* store.get(appId, domain)
    if (Option.isNone(found)) return yield* Effect.fail(DomainVerificationNotFound.of(domain))
    return DomainVerificationView.of(found.value)
  })

  /** Checks the DNS proof now (see the module's decisions); answers the record after the check and what it found. */
  const check = fn("DomainVerifications.check")(function*(appId: PartnerAppId, domain: EmailDomain) {
    const found = yield* store.get(appId, domain)
    if (Option.isNone(found)) return yield* Effect.fail(DomainVerificationNotFound.of(domain))
    const record = found.value
    const needsLookup = record.status === "verified" ||
      (record.status === "pending" && DateTime.greaterThan(record.expires_at, yield* now))
    const observation = needsLookup
      ? yield* lookUp(domain).pipe(Effect.mapError((failure) => DomainCheckUnavailable.of(domain, failure)))
      : notLooked
    const applied = yield* apply(appId, domain, observation)
    if (Option.isNone(applied)) return yield* Effect.fail(DomainVerificationNotFound.of(domain))
    const { result, verification } = applied.value
    return new DomainCheck({
      ...DomainVerificationView.of(verification),
      check: { result, message: messages[result] }
    }, trusted)
  })

  /** One sweep: expires the pending challenges that are due and re-validates the verified domains that are due. */
  const sweep = fn("DomainVerifications.sweep")(function*() {
    const at = yield* now
    const due = yield* store.due({
      expiringBy: at,
      checkedBy: DateTime.subtractDuration(at, revalidationInterval),
      limit: sweepBatch
    })
    let expired = 0
    let revalidated = 0
    let revoked = 0
    let temporaryFailures = 0
    for (const record of due) {
      const observation = record.status === "verified"
        ? yield* Effect.either(lookUp(record.domain))
        : undefined
      if (observation?._tag === "Left") temporaryFailures += 1
      const seen: Observation = observation === undefined
        ? notLooked
        : observation._tag === "Left"
        ? unavailable
        : observation.right
      const applied = yield* apply(record.partner_app_id, record.domain, seen).pipe(
        // Another app completing the domain meanwhile is its business: this record is left as it is.
        Effect.catchTag("DomainVerifiedByAnotherApp", () => Effect.succeed(Option.none()))
      )
      if (Option.isNone(applied)) continue
      const { event, verification } = applied.value
      if (event === "partner.idp.domain_verification_failed" && verification.status === "expired") expired += 1
      if (event === "partner.idp.domain_revoked") revoked += 1
      if (record.status === "verified" && event === undefined && seen._tag === "Looked") revalidated += 1
    }
    return { expired, revalidated, revoked, temporaryFailures } satisfies SweepReport
  })

  /**
   * Sweeps now and then every `interval`, on the Clock, for as long as it runs (a host forks it for its lifetime). A
   * sweep that dies is logged and the next one runs on time.
   */
  const runSweeps = (interval: Duration.DurationInput) =>
    sweep().pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("domain verification sweep failed", cause)),
      Effect.repeat(Schedule.spaced(interval)),
      Effect.asVoid
    )

  return { verify, status, check, sweep, runSweeps } as const
})

export class DomainVerifications extends Context.Tag("@convene/core/DomainVerifications")<
  DomainVerifications,
  Effect.Effect.Success<typeof make>
>() {
  static readonly layer: Layer.Layer<
    DomainVerifications,
    never,
    DomainVerificationStore | PartnerStore | WebhookStore | Transactor | Crypto | DnsResolver
  > = Layer.effect(DomainVerifications, make)
}
