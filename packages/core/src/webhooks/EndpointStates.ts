/**
 * The life of a workspace webhook endpoint (the document's States table), as pure functions of the stored record
 * and the time. Services read the record, apply one of these and write the answer back (WebhookStore.updateEndpoint
 * refuses a stale one, and the change is computed again); nothing here does I/O.
 *
 * | verification_state | status   | how it gets there                                                              |
 * |--------------------|----------|--------------------------------------------------------------------------------|
 * | verifying          | pending  | created; resend-verification from verifying or failed without a synchronous echo |
 * | failed             | pending  | 24 hours of challenges (one every 5 minutes) without an echo                  |
 * | verified           | verified | a challenge answered 2xx with the token echoed; re-enable of a disabled one    |
 * | disabled           | verified | 3 deliveries in a row exhausted their attempts                                 |
 *
 * Decisions where the documents are silent: a disabled endpoint keeps `status: verified` (it did prove it owns its
 * URL; `verification_state` says it gets nothing now); re-enable answers `verified` (decisions.md); a successful
 * delivery resets the failure count; `verification_attempt_count` counts the challenges sent in the current window
 * (0 right after create, 1 after a resend); a deleted endpoint never changes again.
 */
import { DateTime, Duration, Either, Option } from "effect"
import type { SubscribableEventType } from "../events/Event.js"
import { Conflict, EndpointNotPending } from "../shared/Errors.js"
import type { UserId, WorkspaceId } from "../shared/Ids.js"
import { trusted } from "../shared/Trusted.js"
import { WebhookEndpoint, type WebhookEndpointId } from "./Webhook.js"

/** A challenge is sent every 5 minutes while the endpoint is verifying. */
export const challengeInterval = Duration.minutes(5)

/** How long challenges are sent before the endpoint is given up as `failed`. */
export const verificationWindow = Duration.hours(24)

/** Deliveries in a row that exhaust their attempts before the endpoint is disabled. */
export const disableAfter = 3

/** The record after a change at `at` (every write moves `updated_at` and the revision). */
const changed = (endpoint: WebhookEndpoint, at: DateTime.Utc, fields: Partial<WebhookEndpoint>): WebhookEndpoint =>
  new WebhookEndpoint({ ...endpoint, ...fields, updated_at: at, revision: endpoint.revision + 1 }, trusted)

const live = (endpoint: WebhookEndpoint): boolean => endpoint.deleted_at === null

/** A new endpoint: pending and verifying, its 24-hour window open from `at`, no challenge sent yet. */
export const created = (input: {
  readonly id: WebhookEndpointId
  readonly workspace_id: WorkspaceId
  readonly url: string
  readonly subscribed_events: ReadonlyArray<SubscribableEventType>
  readonly created_by: UserId | null
  readonly sealed_signing_secret: string
  readonly sealed_verification_token: string
}, at: DateTime.Utc): WebhookEndpoint =>
  new WebhookEndpoint({
    ...input,
    status: "pending",
    verification_state: "verifying",
    verification_attempt_count: 0,
    verification_last_sent_at: null,
    verification_retry_until: DateTime.addDuration(at, verificationWindow),
    verified_at: null,
    last_success_at: null,
    consecutive_failure_count: 0,
    created_at: at,
    updated_at: at,
    challenge_claimed_until: null,
    deleted_at: null,
    revision: 0
  }, trusted)

/** Whether the verification window of a verifying endpoint has closed at `at` (then it fails instead of being challenged). */
export const windowClosed = (endpoint: WebhookEndpoint, at: DateTime.Utc): boolean =>
  endpoint.verification_state === "verifying" && !DateTime.lessThan(at, endpoint.verification_retry_until)

/**
 * Whether a challenge is due at `at`: the endpoint is verifying, its window is open, and no challenge went out in
 * the last 5 minutes (none yet: due at once).
 */
export const challengeDue = (endpoint: WebhookEndpoint, at: DateTime.Utc): boolean =>
  live(endpoint) && endpoint.verification_state === "verifying" && !windowClosed(endpoint, at) &&
  (endpoint.verification_last_sent_at === null ||
    !DateTime.lessThan(at, DateTime.addDuration(endpoint.verification_last_sent_at, challengeInterval)))

/** The instant before which a challenge sent makes another due at `at` (for WebhookStore.claimChallenges). */
export const challengesSentBefore = (at: DateTime.Utc): DateTime.Utc => DateTime.subtractDuration(at, challengeInterval)

/**
 * A challenge went out at `at` and was answered (`echoed`: 2xx with the token). The attempt is counted; an echo
 * verifies the endpoint. Nothing changes unless it is still verifying (it may have been deleted meanwhile).
 */
export const challengeAnswered = (endpoint: WebhookEndpoint, at: DateTime.Utc, echoed: boolean): Option.Option<WebhookEndpoint> =>
  !live(endpoint) || endpoint.verification_state !== "verifying" ? Option.none() : Option.some(changed(endpoint, at, {
    verification_attempt_count: endpoint.verification_attempt_count + 1,
    verification_last_sent_at: at,
    challenge_claimed_until: null,
    ...(echoed ? { status: "verified", verification_state: "verified", verified_at: at } : {})
  }))

/** The window closed without an echo: `failed` (still pending), and challenges stop. */
export const verificationFailed = (endpoint: WebhookEndpoint, at: DateTime.Utc): Option.Option<WebhookEndpoint> =>
  !live(endpoint) || !windowClosed(endpoint, at) ? Option.none() : Option.some(changed(endpoint, at, {
    status: "pending",
    verification_state: "failed",
    challenge_claimed_until: null
  }))

/** A claimed challenge that was not sent after all (its endpoint no longer due): the claim is let go. */
export const challengeReleased = (endpoint: WebhookEndpoint, at: DateTime.Utc): Option.Option<WebhookEndpoint> =>
  endpoint.challenge_claimed_until === null ? Option.none() : Option.some(changed(endpoint, at, { challenge_claimed_until: null }))

/**
 * POST resend-verification, before the challenge goes out: from verifying or failed, a fresh 24-hour window with
 * the attempt counter at 0, verifying again, and the challenge claimed until `leaseUntil` (so that the worker does
 * not send one too). From verified or disabled it is refused with `endpoint_not_pending`.
 */
export const resendStarted = (
  endpoint: WebhookEndpoint,
  at: DateTime.Utc,
  leaseUntil: DateTime.Utc
): Either.Either<WebhookEndpoint, EndpointNotPending> =>
  endpoint.verification_state === "verified" || endpoint.verification_state === "disabled"
    ? Either.left(
      new EndpointNotPending({
        verification_state: endpoint.verification_state,
        message: `the endpoint is ${endpoint.verification_state}: only a verifying or failed endpoint is sent its challenge again`
      })
    )
    : Either.right(changed(endpoint, at, {
      status: "pending",
      verification_state: "verifying",
      verification_attempt_count: 0,
      verification_retry_until: DateTime.addDuration(at, verificationWindow),
      challenge_claimed_until: leaseUntil
    }))

/**
 * A delivery to the endpoint was answered 2xx at `at`: the failure count starts again from 0. `last_success_at`
 * never moves back (another worker may have recorded a later success first).
 */
export const delivered = (endpoint: WebhookEndpoint, at: DateTime.Utc): Option.Option<WebhookEndpoint> =>
  !live(endpoint) ? Option.none() : Option.some(changed(endpoint, at, {
    last_success_at: endpoint.last_success_at === null ? at : DateTime.max(endpoint.last_success_at, at),
    ...(endpoint.verification_state === "verified" ? { consecutive_failure_count: 0 } : {})
  }))

/**
 * A delivery to the endpoint succeeded at `at`, but a delivery that exhausted its attempts was recorded after it:
 * only `last_success_at` moves (when `at` is later), the failures in a row stay counted.
 */
export const succeededEarlier = (endpoint: WebhookEndpoint, at: DateTime.Utc): Option.Option<WebhookEndpoint> =>
  !live(endpoint) || (endpoint.last_success_at !== null && DateTime.greaterThanOrEqualTo(endpoint.last_success_at, at))
    ? Option.none()
    : Option.some(changed(endpoint, at, { last_success_at: at }))

/**
 * A delivery to the endpoint failed all its attempts: one more failure in a row; at `disableAfter` the endpoint is
 * disabled (its creator is told, by the caller). Only a verified endpoint counts them.
 */
export const deliveryExhausted = (endpoint: WebhookEndpoint, at: DateTime.Utc): Option.Option<WebhookEndpoint> => {
  if (!live(endpoint) || endpoint.verification_state !== "verified") return Option.none()
  const failures = endpoint.consecutive_failure_count + 1
  return Option.some(changed(endpoint, at, {
    consecutive_failure_count: failures,
    ...(failures >= disableAfter ? { verification_state: "disabled" } : {})
  }))
}

/** Whether `after` is the change that disabled `before`. */
export const justDisabled = (before: WebhookEndpoint, after: WebhookEndpoint): boolean =>
  before.verification_state !== "disabled" && after.verification_state === "disabled"

/** POST re-enable: a disabled endpoint is verified again with no failures counted; any other is 409 `conflict`. */
export const reEnabled = (endpoint: WebhookEndpoint, at: DateTime.Utc): Either.Either<WebhookEndpoint, Conflict> =>
  endpoint.verification_state !== "disabled"
    ? Either.left(new Conflict({ message: `the endpoint is ${endpoint.verification_state}, not disabled: there is nothing to re-enable` }))
    : Either.right(changed(endpoint, at, { status: "verified", verification_state: "verified", consecutive_failure_count: 0 }))

/** A new signing secret (sealed); the old one signs nothing from now on. */
export const secretRotated = (endpoint: WebhookEndpoint, at: DateTime.Utc, sealedSecret: string): WebhookEndpoint =>
  changed(endpoint, at, { sealed_signing_secret: sealedSecret })

/** DELETE: soft-deleted at `at`. Deleting a deleted endpoint changes nothing. */
export const deleted = (endpoint: WebhookEndpoint, at: DateTime.Utc): Option.Option<WebhookEndpoint> =>
  !live(endpoint) ? Option.none() : Option.some(changed(endpoint, at, { deleted_at: at, challenge_claimed_until: null }))
