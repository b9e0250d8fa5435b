/**
 * The endpoint state machine as pure functions (core/webhooks/EndpointStates.ts): the instants where its rules
 * turn (a challenge due exactly 5 minutes after the last, the window closed exactly 24 hours after it opened), and
 * the rows of the States table that refuse; plus the echo rule of decisions.md (Signer.echoes).
 */
import {
  EndpointStates,
  type SubscribableEventType,
  UserId,
  type WebhookEndpoint,
  WebhookEndpointId,
  WebhookSigner,
  WorkspaceId
} from "@convene/core"
import { NodeCrypto } from "@convene/node"
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Either, Option } from "effect"

const T0 = DateTime.unsafeMake("2026-03-02T09:00:00.000Z")
const at = (minutes: number) => DateTime.add(T0, { minutes })

const fresh = (events: ReadonlyArray<SubscribableEventType> = ["meeting.created"]) =>
  EndpointStates.created({
    id: WebhookEndpointId.make(crypto.randomUUID()),
    workspace_id: WorkspaceId.make(crypto.randomUUID()),
    url: "https://hooks.example.com/x",
    subscribed_events: events,
    created_by: UserId.make(crypto.randomUUID()),
    sealed_signing_secret: "sealed",
    sealed_verification_token: "sealed"
  }, T0)

const some = (endpoint: Option.Option<WebhookEndpoint>): WebhookEndpoint => Option.getOrThrow(endpoint)

describe("EndpointStates", () => {
  it("a challenge is due at once, then exactly 5 minutes after the last, until the window closes at 24 hours", () => {
    const endpoint = fresh()
    expect(EndpointStates.challengeDue(endpoint, T0)).toBe(true)
    const sent = some(EndpointStates.challengeAnswered(endpoint, T0, false))
    expect(sent).toMatchObject({ verification_attempt_count: 1, verification_state: "verifying", revision: 1 })
    expect(EndpointStates.challengeDue(sent, DateTime.add(T0, { minutes: 4, seconds: 59 }))).toBe(false)
    expect(EndpointStates.challengeDue(sent, at(5))).toBe(true)
    expect(EndpointStates.windowClosed(sent, at(24 * 60 - 1))).toBe(false)
    expect(EndpointStates.windowClosed(sent, at(24 * 60))).toBe(true)
    expect(EndpointStates.challengeDue(sent, at(24 * 60))).toBe(false)
    expect(some(EndpointStates.verificationFailed(sent, at(24 * 60)))).toMatchObject({ status: "pending", verification_state: "failed" })
    expect(EndpointStates.verificationFailed(sent, at(24 * 60 - 1))).toEqual(Option.none())
  })

  it("refusals: resend on verified or disabled, re-enable on anything but disabled; a deleted endpoint never changes", () => {
    const verified = some(EndpointStates.challengeAnswered(fresh(), T0, true))
    expect(verified).toMatchObject({ status: "verified", verification_state: "verified", verified_at: T0 })
    expect(EndpointStates.resendStarted(verified, at(1), at(3))).toMatchObject(Either.left({ _tag: "EndpointNotPending" }))
    expect(EndpointStates.reEnabled(verified, at(1))).toMatchObject(Either.left({ _tag: "Conflict" }))
    const disabled = [1, 2, 3].reduce((endpoint, minute) => some(EndpointStates.deliveryExhausted(endpoint, at(minute))), verified)
    expect(disabled).toMatchObject({ status: "verified", verification_state: "disabled", consecutive_failure_count: 3 })
    expect(EndpointStates.justDisabled(verified, disabled)).toBe(true)
    expect(EndpointStates.justDisabled(disabled, disabled)).toBe(false)
    expect(EndpointStates.resendStarted(disabled, at(4), at(6))).toMatchObject(Either.left({ verification_state: "disabled" }))
    expect(EndpointStates.deliveryExhausted(disabled, at(5))).toEqual(Option.none())
    const enabled = Either.getOrThrow(EndpointStates.reEnabled(disabled, at(6)))
    expect(enabled).toMatchObject({ verification_state: "verified", consecutive_failure_count: 0, updated_at: at(6) })

    const gone = some(EndpointStates.deleted(enabled, at(7)))
    expect(gone.deleted_at).toEqual(at(7))
    expect(EndpointStates.deleted(gone, at(8))).toEqual(Option.none())
    expect(EndpointStates.delivered(gone, at(8))).toEqual(Option.none())
    expect(EndpointStates.deliveryExhausted(gone, at(8))).toEqual(Option.none())
    expect(EndpointStates.challengeAnswered(gone, at(8), true)).toEqual(Option.none())
  })

  it("every change moves updated_at and the revision; the secrets stay sealed and unchanged unless rotated", () => {
    const endpoint = fresh()
    const resent = Either.getOrThrow(EndpointStates.resendStarted(endpoint, at(2), at(4)))
    expect(resent).toMatchObject({ revision: 1, updated_at: at(2), challenge_claimed_until: at(4), verification_retry_until: at(2 + 24 * 60) })
    const rotated = EndpointStates.secretRotated(resent, at(3), "sealed-2")
    expect(rotated).toMatchObject({ revision: 2, sealed_signing_secret: "sealed-2", sealed_verification_token: "sealed" })
  })

  it.effect("an echo is a 2xx whose trimmed body is the token, or a JSON object whose verification_token is the token", () =>
    Effect.gen(function*() {
      const token = "whvt_abc"
      const echoes = (status: number, body: string) => WebhookSigner.echoes({ status, body }, token)
      expect(yield* echoes(200, token)).toBe(true)
      expect(yield* echoes(299, `\n  ${token}\t`)).toBe(true)
      expect(yield* echoes(202, JSON.stringify({ verification_token: token, other: [1] }))).toBe(true)
      expect(yield* echoes(200, ` ${JSON.stringify({ verification_token: token })} `)).toBe(true)
      for (const [status, body] of [
        [300, token],
        [199, token],
        [500, token],
        [200, `${token}x`],
        [200, JSON.stringify({ verification_token: `${token}x` })],
        [200, JSON.stringify({ data: { verification_token: token } })],
        [200, JSON.stringify([token])],
        [200, JSON.stringify(token)],
        [200, JSON.stringify({ verification_token: 42 })],
        [200, ""],
        [200, "{not json"]
      ] as const) {
        expect(yield* echoes(status, body), `${status} ${body}`).toBe(false)
      }
    }).pipe(Effect.provide(NodeCrypto.layer)))
})
