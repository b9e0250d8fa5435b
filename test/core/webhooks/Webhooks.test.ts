/**
 * Workspace webhooks through the real services (Webhooks, the event fan-out, DeliveryWorker) on the memory store,
 * with a scripted Outbound and a collecting Mailer: who may create what (plan, cap, URL, events, role), the
 * verification challenge and its 24 hours, resend, deliveries with their exact headers and signature, the retry
 * schedule, disabling after 3 exhausted deliveries and the mail, re-enable, secret rotation, the de-duplication
 * key, redelivery and the delivery log, and the outbox written in the change's own unit of work.
 */
import {
  CreateMeeting,
  CreateWebhook,
  DeliveryId,
  DeliveryWorker,
  Events,
  Meetings,
  type Plan,
  Scopes,
  Transactor,
  UpdateMeeting,
  Users,
  WebhookEndpointId,
  WebhookStore,
  Webhooks
} from "@convene/core"
import { addEqualityTesters, describe, expect, it } from "@effect/vitest"
import { Clock, DateTime, type Duration, Effect, Either, Fiber, Option, Ref, Schema, TestClock } from "effect"
import * as NodeCrypto from "node:crypto"
import { apiKeyFor, principalFor } from "../fixtures.js"
import {
  always,
  answered,
  answerWith,
  bodyOf,
  CollectingMailer,
  createEndpoint,
  echoing,
  freshUrl,
  hmac,
  mails,
  ScriptedOutbound,
  takeRequests,
  timingOut,
  verifiedEndpoint,
  WebhooksLive,
  type WebhooksServices
} from "./fixtures.js"

/** A test on a store of its own (the worker claims across the whole store). */
const test = <E>(name: string, body: () => Effect.Effect<void, E, WebhooksServices>) =>
  it.effect(name, () => Effect.provide(body(), WebhooksLive))

/** An OWNER of a new workspace on `plan` with every scope, from a personal access token. */
const owner = (plan: Plan = "PRO") => principalFor({ plan, role: "OWNER", scopes: Scopes, kind: "personal_access_token" })

const runOnce = Effect.flatMap(DeliveryWorker, (worker) => worker.runOnce({ limit: 1000 }))
const runChallenges = Effect.flatMap(DeliveryWorker, (worker) => worker.runChallenges({ limit: 1000 }))

const decodeCreate = Schema.decodeUnknownEither(CreateWebhook)

addEqualityTesters()

/** Records a meeting.created in the principal's workspace and runs the worker through all 3 failing attempts. */
const exhaustOneDelivery = (principal: Effect.Effect.Success<ReturnType<typeof owner>>["principal"]) =>
  Effect.gen(function*() {
    yield* (yield* Meetings).create(principal, CreateMeeting.make({ title: "Fails thrice" }))
    yield* runOnce
    yield* TestClock.adjust("1 minute")
    yield* runOnce
    yield* TestClock.adjust("4 minutes")
    yield* runOnce
  })

/** The requests made to `url` so far (which are forgotten). */
const takeRequestsOf = (url: string) => takeRequests(url)

describe("Webhooks: creating endpoints", () => {
  test("create answers the secret and the token once; the endpoint is pending and verifying with a 24-hour window", () =>
    Effect.gen(function*() {
      const { principal, workspace } = yield* owner()
      yield* TestClock.adjust("90 minutes")
      const url = freshUrl()
      const created = yield* createEndpoint(principal, ["meeting.created", "action_item.completed", "meeting.created"], url)
      expect(created.signing_secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)
      expect(created.verification_token).toMatch(/^whvt_[A-Za-z0-9_-]{43}$/)
      const start = DateTime.unsafeMake(90 * 60_000)
      expect(created.webhook).toEqual({
        id: created.webhook.id,
        workspace_id: workspace.id,
        url,
        // Named twice, counted once.
        subscribed_events: ["meeting.created", "action_item.completed"],
        status: "pending",
        verification_state: "verifying",
        verification_attempt_count: 0,
        verification_last_sent_at: null,
        verification_retry_until: DateTime.add(start, { hours: 24 }),
        verified_at: null,
        last_success_at: null,
        consecutive_failure_count: 0,
        created_at: start,
        updated_at: start
      })
      const webhooks = yield* Webhooks
      const listed = yield* webhooks.list(principal, {})
      expect(listed).toEqual({ items: [created.webhook], total: 1, limit: 20, offset: 0 })
      // Never shown again, never stored in clear.
      const stored = Option.getOrThrow(yield* (yield* WebhookStore).getEndpoint(workspace.id, created.webhook.id))
      for (const shown of [JSON.stringify(listed), JSON.stringify(yield* webhooks.get(principal, created.webhook.id)), JSON.stringify(stored)]) {
        expect(shown).not.toContain(created.signing_secret)
        expect(shown).not.toContain(created.verification_token)
      }
      expect(Object.keys(created.webhook)).not.toContain("sealed_signing_secret")
    }))

  test("a FREE workspace may not create one (PlanRequired); PRO one active endpoint, ELITE three, ENTERPRISE any number", () =>
    Effect.gen(function*() {
      const free = yield* principalFor({ plan: "FREE" })
      const key = yield* apiKeyFor(free.workspace.id)
      expect(yield* Effect.flip(createEndpoint(key))).toMatchObject({
        _tag: "PlanRequired",
        feature: "webhooks",
        current_plan: "FREE",
        required_plan: "PRO"
      })

      const pro = yield* owner("PRO")
      const first = yield* createEndpoint(pro.principal)
      expect(yield* Effect.flip(createEndpoint(pro.principal))).toMatchObject({ _tag: "EndpointCapExceeded", cap: 1, current_plan: "PRO" })
      // A deleted endpoint frees its place.
      yield* (yield* Webhooks).delete(pro.principal, first.webhook.id)
      yield* createEndpoint(pro.principal)

      const elite = yield* owner("ELITE")
      for (let i = 0; i < 3; i++) yield* createEndpoint(elite.principal)
      expect(yield* Effect.flip(createEndpoint(elite.principal))).toMatchObject({ _tag: "EndpointCapExceeded", cap: 3, current_plan: "ELITE" })

      const enterprise = yield* owner("ENTERPRISE")
      for (let i = 0; i < 5; i++) yield* createEndpoint(enterprise.principal)
      expect((yield* (yield* Webhooks).list(enterprise.principal, {})).total).toBe(5)
    }))

  test("a disabled endpoint does not count against the cap; a pending one does", () =>
    Effect.gen(function*() {
      const { principal } = yield* owner("PRO")
      const { webhook } = yield* verifiedEndpoint(principal)
      yield* answerWith(always(500))
      for (let i = 0; i < 3; i++) yield* exhaustOneDelivery(principal)
      expect((yield* (yield* Webhooks).get(principal, webhook.id)).verification_state).toBe("disabled")
      const second = yield* createEndpoint(principal)
      expect(second.webhook.status).toBe("pending")
      // The pending one holds the place.
      expect(yield* Effect.flip(createEndpoint(principal))).toMatchObject({ _tag: "EndpointCapExceeded" })
    }))

  test("the URL must be HTTPS, absolute, without credentials, and pass the outbound rules (400 naming url)", () =>
    Effect.gen(function*() {
      const { principal } = yield* owner("ENTERPRISE")
      for (const [url, says] of [
        ["http://hooks.example.com/x", "must be an HTTPS URL"],
        ["hooks.example.com/x", "must be an absolute HTTPS URL"],
        ["ftp://hooks.example.com/x", "must be an HTTPS URL"],
        ["https://user:secret@hooks.example.com/x", "must not carry a user name or password"]
      ] as const) {
        const refused = yield* Effect.flip(createEndpoint(principal, ["meeting.created"], url))
        expect(refused).toMatchObject({ _tag: "ValidationError", field: "url" })
        expect(refused.message).toContain(says)
      }
      const outbound = yield* ScriptedOutbound
      yield* Ref.set(outbound.refused, new Set(["internal.example.com"]))
      const refused = yield* Effect.flip(createEndpoint(principal, ["meeting.created"], "https://internal.example.com/hook"))
      expect(refused).toMatchObject({ _tag: "ValidationError", field: "url" })
      expect(refused.message).toBe("url: internal.example.com resolves to an address this server does not call")
      expect((yield* (yield* Webhooks).list(principal, {})).total).toBe(0)
    }))

  it("subscribed_events must be a non-empty list of subscribable types (webhook.verification is not one)", () => {
    const url = "https://hooks.example.com/x"
    for (const subscribed_events of [[], ["meeting.created", "meeting.exploded"], ["webhook.verification"], "meeting.created"]) {
      const decoded = decodeCreate({ url, subscribed_events })
      expect(Either.isLeft(decoded), JSON.stringify(subscribed_events)).toBe(true)
      if (Either.isLeft(decoded)) expect(String(decoded.left)).toContain("subscribed_events")
    }
    expect(Either.isLeft(decodeCreate({ url, subscribed_events: ["meeting.created"], secret: "mine" }))).toBe(true)
    expect(Either.isRight(decodeCreate({ url, subscribed_events: ["context.uploaded", "attachment.uploaded"] }))).toBe(true)
  })

  test("only OWNER and ADMIN users (with workspace:write) and workspace API keys manage endpoints: 403 otherwise", () =>
    Effect.gen(function*() {
      const { principal, workspace } = yield* owner("ELITE")
      const member = yield* principalFor({ workspaceId: workspace.id, role: "MEMBER" })
      const webhooks = yield* Webhooks
      expect(yield* Effect.flip(createEndpoint(member.principal))).toMatchObject({ _tag: "InsufficientScope" })
      expect(yield* Effect.flip(webhooks.list(member.principal, {}))).toMatchObject({ _tag: "InsufficientScope" })
      const reader = yield* principalFor({ workspaceId: workspace.id, role: "ADMIN", scopes: ["workspace:read"], kind: "personal_access_token" })
      expect(yield* Effect.flip(createEndpoint(reader.principal))).toMatchObject({ _tag: "InsufficientScope", required: "workspace:write" })
      expect((yield* webhooks.list(reader.principal, {})).total).toBe(0)
      const admin = yield* principalFor({ workspaceId: workspace.id, role: "ADMIN", scopes: Scopes, kind: "personal_access_token" })
      const created = yield* createEndpoint(admin.principal)
      expect(yield* Effect.flip(webhooks.delete(member.principal, created.webhook.id))).toMatchObject({ _tag: "InsufficientScope" })
      const key = yield* apiKeyFor(workspace.id)
      yield* createEndpoint(key)
      expect((yield* webhooks.list(principal, {})).total).toBe(2)
    }))

  test("delete soft-deletes: gone from the list and every operation (404), deleting again is a no-op; another workspace's is 404", () =>
    Effect.gen(function*() {
      const { principal, workspace } = yield* owner("ELITE")
      const webhooks = yield* Webhooks
      const kept = yield* createEndpoint(principal)
      const gone = yield* createEndpoint(principal)
      yield* webhooks.delete(principal, gone.webhook.id)
      yield* webhooks.delete(principal, gone.webhook.id)
      expect((yield* webhooks.list(principal, {})).items.map((item) => item.id)).toEqual([kept.webhook.id])
      const notFound = { _tag: "NotFound", resource: "webhook", id: gone.webhook.id }
      expect(yield* Effect.flip(webhooks.get(principal, gone.webhook.id))).toMatchObject(notFound)
      expect(yield* Effect.flip(webhooks.reEnable(principal, gone.webhook.id))).toMatchObject(notFound)
      expect(yield* Effect.flip(webhooks.rotateSecret(principal, gone.webhook.id))).toMatchObject(notFound)
      expect(yield* Effect.flip(webhooks.resendVerification(principal, gone.webhook.id))).toMatchObject(notFound)
      expect(yield* Effect.flip(webhooks.deliveries(principal, gone.webhook.id, {}))).toMatchObject(notFound)
      // Kept as a row (soft delete), marked deleted.
      const stored = Option.getOrThrow(yield* (yield* WebhookStore).getEndpoint(workspace.id, gone.webhook.id))
      expect(stored.deleted_at).not.toBeNull()

      const unknown = WebhookEndpointId.make(crypto.randomUUID())
      expect(yield* Effect.flip(webhooks.delete(principal, unknown))).toMatchObject({ _tag: "NotFound", id: unknown })
      const stranger = yield* owner("ELITE")
      expect(yield* Effect.flip(webhooks.delete(stranger.principal, kept.webhook.id))).toMatchObject({ _tag: "NotFound" })
      expect(yield* Effect.flip(webhooks.get(stranger.principal, kept.webhook.id))).toMatchObject({ _tag: "NotFound" })
      // No challenge goes to a deleted endpoint.
      yield* runChallenges
      expect(yield* takeRequests(gone.webhook.url)).toEqual([])
    }))
})

describe("Webhooks: the verification challenge", () => {
  test("the worker sends the challenge at once, signed and headed like a delivery; an echo of the token verifies", () =>
    Effect.gen(function*() {
      const { principal, workspace } = yield* owner()
      const created = yield* createEndpoint(principal)
      yield* TestClock.adjust("7 seconds")
      yield* answerWith(echoing())
      expect(yield* runChallenges).toBe(1)
      const [request] = yield* takeRequests(created.webhook.url)
      const body = JSON.parse(request!.body)
      expect(body).toEqual({
        event_type: "webhook.verification",
        event_id: body.event_id,
        timestamp: "1970-01-01T00:00:07.000Z",
        workspace_id: workspace.id,
        actor_user_id: "",
        data: { verification_token: created.verification_token, endpoint_id: created.webhook.id }
      })
      expect(request!.headers).toEqual({
        "Content-Type": "application/json",
        "User-Agent": "Svc-Webhook/1.0",
        "X-Svc-Signature": `sha256=${hmac(created.signing_secret, request!.body)}`,
        "X-Svc-Event-Type": "webhook.verification",
        "X-Svc-Event-ID": body.event_id,
        "X-Svc-Idempotency-Key": request!.headers["X-Svc-Idempotency-Key"],
        "X-Svc-Delivery-ID": request!.headers["X-Svc-Delivery-ID"],
        "X-Svc-Timestamp": "7"
      })
      expect(request!.headers["X-Svc-Idempotency-Key"]).toMatch(/^[0-9a-f]{64}$/)
      const verified = yield* (yield* Webhooks).get(principal, created.webhook.id)
      expect(verified).toMatchObject({
        status: "verified",
        verification_state: "verified",
        verification_attempt_count: 1,
        verification_last_sent_at: DateTime.unsafeMake(7000),
        verified_at: DateTime.unsafeMake(7000)
      })
      // Verified: no more challenges.
      yield* TestClock.adjust("10 minutes")
      yield* runChallenges
      expect(yield* takeRequests(created.webhook.url)).toEqual([])
    }))

  test("a JSON object whose verification_token is the token echoes too; a 2xx without it, or the token with a 500, does not", () =>
    Effect.gen(function*() {
      const { principal } = yield* owner("ENTERPRISE")
      const webhooks = yield* Webhooks
      const json = yield* createEndpoint(principal)
      yield* answerWith(echoing({ form: "json" }))
      yield* runChallenges
      expect((yield* webhooks.get(principal, json.webhook.id)).verification_state).toBe("verified")

      const silent = yield* createEndpoint(principal)
      yield* answerWith(() => answered(204, JSON.stringify({ verification_token: "whvt_not-it" })))
      yield* runChallenges
      expect(yield* webhooks.get(principal, silent.webhook.id)).toMatchObject({ verification_state: "verifying", verification_attempt_count: 1 })

      const failing = yield* createEndpoint(principal)
      yield* answerWith((request) => answered(500, String(bodyOf(request).data["verification_token"])))
      yield* runChallenges
      expect((yield* webhooks.get(principal, failing.webhook.id)).verification_state).toBe("verifying")
      yield* answerWith((request) => answered(302, String(bodyOf(request).data["verification_token"])))
      yield* TestClock.adjust("5 minutes")
      yield* runChallenges
      expect(yield* webhooks.get(principal, failing.webhook.id)).toMatchObject({ verification_state: "verifying", verification_attempt_count: 2 })
    }))

  test("without an echo the challenge is re-sent every 5 minutes for 24 hours, with a fresh event id; then failed, and challenges stop", () =>
    Effect.gen(function*() {
      const { principal } = yield* owner()
      const created = yield* createEndpoint(principal)
      yield* answerWith(timingOut)
      const eventIds = new Set<string>()
      // At each 5-minute mark one challenge, and none in between.
      for (let mark = 0; mark < 24 * 60; mark += 5) {
        yield* runChallenges
        const sent = yield* takeRequests(created.webhook.url)
        expect(sent.length, `minute ${mark}`).toBe(1)
        for (const request of sent) {
          eventIds.add(bodyOf(request).event_id)
          expect(bodyOf(request).data["verification_token"]).toBe(created.verification_token)
        }
        yield* TestClock.adjust("4 minutes")
        yield* runChallenges
        expect(yield* takeRequests(created.webhook.url), `minute ${mark + 4}`).toEqual([])
        yield* TestClock.adjust("1 minute")
      }
      expect(eventIds.size).toBe(288)
      const webhooks = yield* Webhooks
      expect(yield* webhooks.get(principal, created.webhook.id)).toMatchObject({
        status: "pending",
        verification_state: "verifying",
        verification_attempt_count: 288
      })
      // At 24 hours: failed, without a challenge.
      yield* runChallenges
      expect(yield* takeRequests(created.webhook.url)).toEqual([])
      expect(yield* webhooks.get(principal, created.webhook.id)).toMatchObject({ status: "pending", verification_state: "failed", verification_attempt_count: 288 })
      yield* TestClock.adjust("1 hour")
      yield* runChallenges
      expect(yield* takeRequests(created.webhook.url)).toEqual([])
    }))

  test("resend-verification from failed or verifying: a new window and counter, the challenge at once; verified only on a synchronous echo", () =>
    Effect.gen(function*() {
      const { principal } = yield* owner()
      const webhooks = yield* Webhooks
      const created = yield* createEndpoint(principal)
      yield* answerWith(always(200))
      yield* TestClock.adjust("24 hours")
      yield* runChallenges
      expect((yield* webhooks.get(principal, created.webhook.id)).verification_state).toBe("failed")

      const resent = yield* webhooks.resendVerification(principal, created.webhook.id)
      const now = DateTime.unsafeMake(24 * 3600_000)
      expect(resent).toMatchObject({
        status: "pending",
        verification_state: "verifying",
        verification_attempt_count: 1,
        verification_last_sent_at: now,
        verification_retry_until: DateTime.add(now, { hours: 24 })
      })
      expect(yield* takeRequests(created.webhook.url)).toHaveLength(1)
      // The worker does not send another one right away.
      yield* runChallenges
      expect(yield* takeRequests(created.webhook.url)).toEqual([])

      yield* TestClock.adjust("1 minute")
      yield* answerWith(echoing())
      const verified = yield* webhooks.resendVerification(principal, created.webhook.id)
      expect(verified).toMatchObject({ status: "verified", verification_state: "verified", verification_attempt_count: 1 })
      expect(verified.verified_at).toEqual(DateTime.add(now, { minutes: 1 }))

      expect(yield* Effect.flip(webhooks.resendVerification(principal, created.webhook.id))).toMatchObject({
        _tag: "EndpointNotPending",
        verification_state: "verified"
      })
      expect(yield* takeRequests(created.webhook.url)).toHaveLength(1)
    }))

  test("resend-verification on a disabled endpoint is EndpointNotPending and sends nothing", () =>
    Effect.gen(function*() {
      const { principal } = yield* owner()
      const { webhook } = yield* verifiedEndpoint(principal)
      yield* answerWith(always(500))
      for (let i = 0; i < 3; i++) yield* exhaustOneDelivery(principal)
      yield* takeRequests()
      expect(yield* Effect.flip((yield* Webhooks).resendVerification(principal, webhook.id))).toMatchObject({
        _tag: "EndpointNotPending",
        verification_state: "disabled"
      })
      expect(yield* takeRequests(webhook.url)).toEqual([])
    }))
})

describe("Webhooks: deliveries", () => {
  test("a recorded event goes to each verified subscriber with the document's headers, signed over the exact body", () =>
    Effect.gen(function*() {
      const { principal, user, workspace } = yield* owner("ENTERPRISE")
      const first = yield* verifiedEndpoint(principal, ["meeting.created"])
      const second = yield* verifiedEndpoint(principal, ["meeting.created", "meeting.updated"])
      const other = yield* verifiedEndpoint(principal, ["action_item.completed"])
      const unverified = yield* createEndpoint(principal, ["meeting.created"])
      yield* TestClock.adjust("42 seconds")
      const meeting = yield* (yield* Meetings).create(principal, CreateMeeting.make({ title: "Kick-off" }))
      yield* answerWith(always(200))
      expect(yield* runOnce).toBe(2)

      const [toFirst] = yield* takeRequestsOf(first.webhook.url)
      const [toSecond] = yield* takeRequestsOf(second.webhook.url)
      expect(yield* takeRequestsOf(other.webhook.url)).toEqual([])
      expect(yield* takeRequestsOf(unverified.webhook.url)).toEqual([])
      const body = JSON.parse(toFirst!.body)
      expect(body).toMatchObject({
        event_type: "meeting.created",
        timestamp: DateTime.formatIso(meeting.created_at),
        workspace_id: workspace.id,
        actor_user_id: user.id,
        data: { id: meeting.id, title: "Kick-off" }
      })
      expect(Object.keys(body)).toEqual(["event_type", "event_id", "timestamp", "workspace_id", "actor_user_id", "data"])
      expect(toSecond!.body).toBe(toFirst!.body)
      expect(toFirst!.headers).toEqual({
        "Content-Type": "application/json",
        "User-Agent": "Svc-Webhook/1.0",
        "X-Svc-Signature": `sha256=${hmac(first.signing_secret, toFirst!.body)}`,
        "X-Svc-Event-Type": "meeting.created",
        "X-Svc-Event-ID": body.event_id,
        "X-Svc-Idempotency-Key": toFirst!.headers["X-Svc-Idempotency-Key"],
        "X-Svc-Delivery-ID": toFirst!.headers["X-Svc-Delivery-ID"],
        "X-Svc-Timestamp": "42"
      })
      expect(toSecond!.headers["X-Svc-Signature"]).toBe(`sha256=${hmac(second.signing_secret, toSecond!.body)}`)
      // One key per endpoint, derived from type, event and endpoint; ids of the deliveries differ too.
      const keyOf = (endpointId: string) =>
        NodeCrypto.createHash("sha256").update(`meeting.created:${body.event_id}:${endpointId}`).digest("hex")
      expect(toFirst!.headers["X-Svc-Idempotency-Key"]).toBe(keyOf(first.webhook.id))
      expect(toSecond!.headers["X-Svc-Idempotency-Key"]).toBe(keyOf(second.webhook.id))
      expect(toFirst!.headers["X-Svc-Idempotency-Key"]!.length).toBeLessThanOrEqual(64)
      expect(toFirst!.headers["X-Svc-Delivery-ID"]).not.toBe(toSecond!.headers["X-Svc-Delivery-ID"])

      const webhooks = yield* Webhooks
      expect(yield* webhooks.get(principal, first.webhook.id)).toMatchObject({ last_success_at: DateTime.unsafeMake(42_000), consecutive_failure_count: 0 })
      const log = yield* webhooks.deliveries(principal, first.webhook.id, {})
      expect(log).toMatchObject({
        total: 1,
        items: [{
          event_id: body.event_id,
          event_type: "meeting.created",
          state: "delivered",
          attempt_count: 1,
          next_attempt_at: null,
          attempts: [{ number: 1, status_code: 200, latency_ms: 12, error: null }]
        }]
      })
      expect(yield* runOnce).toBe(0)
    }))

  test("a failed attempt is retried after 1 minute, then 4; each retry says its attempt number; after the third the delivery failed", () =>
    Effect.gen(function*() {
      const { principal } = yield* owner()
      const { webhook } = yield* verifiedEndpoint(principal)
      yield* answerWith(always(500))
      yield* (yield* Meetings).create(principal, CreateMeeting.make({ title: "Retried" }))
      const attempts: Array<{ readonly headers: Readonly<Record<string, string>>; readonly body: string }> = []
      const runAt = (label: string, expected: number) =>
        Effect.gen(function*() {
          yield* runOnce
          const sent = yield* takeRequestsOf(webhook.url)
          expect(sent.length, label).toBe(expected)
          attempts.push(...sent)
        })
      yield* runAt("at once", 1)
      yield* TestClock.adjust("59 seconds")
      yield* runAt("before a minute", 0)
      yield* TestClock.adjust("1 second")
      yield* runAt("after a minute", 1)
      yield* TestClock.adjust("3 minutes")
      yield* runAt("3 minutes later", 0)
      yield* TestClock.adjust("1 minute")
      yield* runAt("4 minutes after the second", 1)
      yield* TestClock.adjust("1 hour")
      yield* runAt("no fourth attempt", 0)

      expect(attempts.map((attempt) => attempt.headers["X-Svc-Retry-Count"])).toEqual([undefined, "2", "3"])
      for (const name of ["X-Svc-Idempotency-Key", "X-Svc-Delivery-ID", "X-Svc-Event-ID", "X-Svc-Timestamp", "X-Svc-Signature"]) {
        expect(new Set(attempts.map((attempt) => attempt.headers[name])).size, name).toBe(1)
      }
      expect(new Set(attempts.map((attempt) => attempt.body)).size).toBe(1)
      const [delivery] = (yield* (yield* Webhooks).deliveries(principal, webhook.id, {})).items
      expect(delivery).toMatchObject({ state: "failed", attempt_count: 3, next_attempt_at: null })
      expect(delivery!.attempts.map((attempt) => [attempt.number, DateTime.toEpochMillis(attempt.at) - DateTime.toEpochMillis(delivery!.created_at), attempt.status_code]))
        .toEqual([[1, 0, 500], [2, 60_000, 500], [3, 300_000, 500]])
      expect((yield* (yield* Webhooks).get(principal, webhook.id)).consecutive_failure_count).toBe(1)
    }))

  test("no answer (a timeout) and a redirect are failed attempts; the error is recorded, the redirect not followed", () =>
    Effect.gen(function*() {
      const { principal } = yield* owner()
      const { webhook } = yield* verifiedEndpoint(principal)
      yield* answerWith(timingOut)
      yield* (yield* Meetings).create(principal, CreateMeeting.make({ title: "Lost" }))
      yield* runOnce
      yield* answerWith(() => answered(301, ""))
      yield* TestClock.adjust("1 minute")
      yield* runOnce
      expect(yield* takeRequestsOf(webhook.url)).toHaveLength(2)
      const [delivery] = (yield* (yield* Webhooks).deliveries(principal, webhook.id, {})).items
      expect(delivery!.attempts.map((attempt) => [attempt.status_code, attempt.error])).toEqual([
        [null, "timeout: no answer within 10 s"],
        [301, null]
      ])
      expect(delivery!.state).toBe("pending")
    }))

  test("within one round, of a success and an exhausted delivery to one endpoint the later decides the count; last_success_at moves", () =>
    Effect.gen(function*() {
      const { principal } = yield* owner()
      const webhooks = yield* Webhooks
      const meetings = yield* Meetings
      const { webhook } = yield* verifiedEndpoint(principal)
      // "Doomed" has one attempt left, "Fine" its first: both are due in the same round. Each answer takes its time.
      const round = (doomedTakes: Duration.DurationInput, fineTakes: Duration.DurationInput) =>
        Effect.gen(function*() {
          yield* answerWith(always(500))
          yield* meetings.create(principal, CreateMeeting.make({ title: "Doomed" }))
          yield* runOnce
          yield* TestClock.adjust("1 minute")
          yield* runOnce
          yield* TestClock.adjust("4 minutes")
          yield* meetings.create(principal, CreateMeeting.make({ title: "Fine" }))
          yield* answerWith((request) =>
            bodyOf(request).data.title === "Doomed"
              ? Effect.zipRight(Effect.sleep(doomedTakes), answered(500))
              : Effect.zipRight(Effect.sleep(fineTakes), answered(200)))
          const started = yield* Clock.currentTimeMillis
          const running = yield* Effect.fork(runOnce)
          yield* TestClock.adjust("10 seconds")
          expect(yield* Fiber.join(running)).toBe(2)
          return started
        })
      // The success comes first, the exhausted delivery 2 s later: one failure in a row, the success still noted.
      const first = yield* round("3 seconds", "1 second")
      expect(yield* webhooks.get(principal, webhook.id)).toMatchObject({
        consecutive_failure_count: 1,
        last_success_at: DateTime.unsafeMake(first + 1_000)
      })
      // The exhausted delivery first, the success 2 s later: the count starts again.
      const second = yield* round("1 second", "3 seconds")
      expect(yield* webhooks.get(principal, webhook.id)).toMatchObject({
        consecutive_failure_count: 0,
        last_success_at: DateTime.unsafeMake(second + 3_000)
      })
    }))

  test("3 exhausted deliveries in a row disable the endpoint and mail its creator once; a success in between resets the count", () =>
    Effect.gen(function*() {
      const { principal, user } = yield* owner()
      const webhooks = yield* Webhooks
      const { webhook } = yield* verifiedEndpoint(principal)
      yield* answerWith(always(500))
      yield* exhaustOneDelivery(principal)
      yield* exhaustOneDelivery(principal)
      expect(yield* webhooks.get(principal, webhook.id)).toMatchObject({ verification_state: "verified", consecutive_failure_count: 2 })
      // A success: the count starts again.
      yield* answerWith(always(200))
      yield* (yield* Meetings).create(principal, CreateMeeting.make({ title: "Works" }))
      yield* runOnce
      expect(yield* webhooks.get(principal, webhook.id)).toMatchObject({ consecutive_failure_count: 0 })
      expect((yield* webhooks.get(principal, webhook.id)).last_success_at).not.toBeNull()

      yield* answerWith(always(503))
      for (let i = 0; i < 3; i++) yield* exhaustOneDelivery(principal)
      expect(yield* webhooks.get(principal, webhook.id)).toMatchObject({
        status: "verified",
        verification_state: "disabled",
        consecutive_failure_count: 3
      })
      const sent = yield* mails
      expect(sent).toHaveLength(1)
      expect(sent[0]!.to).toBe(user.email)
      expect(sent[0]!.subject).toBe(`Webhook endpoint disabled: ${webhook.url}`)
      expect(sent[0]!.text).toContain(`/v1/workspace/webhooks/${webhook.id}/re-enable`)

      // Disabled: events are no longer enqueued for it, and nothing is sent.
      yield* takeRequests()
      yield* (yield* Meetings).create(principal, CreateMeeting.make({ title: "Not delivered" }))
      expect(yield* runOnce).toBe(0)
      expect(yield* takeRequestsOf(webhook.url)).toEqual([])
      expect(yield* mails).toHaveLength(1)
    }))

  test("a mail that cannot be sent is logged: the worker goes on and the endpoint is disabled all the same", () =>
    Effect.gen(function*() {
      const { principal } = yield* owner()
      const { webhook } = yield* verifiedEndpoint(principal)
      yield* Ref.set((yield* CollectingMailer).failing, true)
      yield* answerWith(always(500))
      for (let i = 0; i < 3; i++) yield* exhaustOneDelivery(principal)
      expect((yield* (yield* Webhooks).get(principal, webhook.id)).verification_state).toBe("disabled")
      expect(yield* mails).toEqual([])
    }))

  test("an endpoint created with an API key, or whose creator was deleted, is disabled without a mail", () =>
    Effect.gen(function*() {
      const { principal, user, workspace } = yield* owner("ELITE")
      const key = yield* apiKeyFor(workspace.id)
      const byKey = yield* verifiedEndpoint(key)
      const byUser = yield* verifiedEndpoint(principal)
      const store = yield* WebhookStore
      const stored = (id: string) => Effect.map(store.getEndpoint(workspace.id, WebhookEndpointId.make(id)), Option.getOrThrow)
      expect((yield* stored(byKey.webhook.id)).created_by).toBeNull()
      expect((yield* stored(byUser.webhook.id)).created_by).toBe(user.id)
      yield* (yield* Users).delete(user.id)
      expect((yield* stored(byUser.webhook.id)).created_by).toBeNull()
      yield* answerWith(always(500))
      for (let i = 0; i < 3; i++) yield* exhaustOneDelivery(key)
      expect((yield* stored(byKey.webhook.id)).verification_state).toBe("disabled")
      expect((yield* stored(byUser.webhook.id)).verification_state).toBe("disabled")
      expect(yield* mails).toEqual([])
    }))

  test("re-enable takes a disabled endpoint back to verified with no failures; on any other state it is a Conflict", () =>
    Effect.gen(function*() {
      const { principal } = yield* owner()
      const webhooks = yield* Webhooks
      const pending = yield* createEndpoint(principal)
      expect(yield* Effect.flip(webhooks.reEnable(principal, pending.webhook.id))).toMatchObject({ _tag: "Conflict" })
      yield* webhooks.delete(principal, pending.webhook.id)
      const { webhook } = yield* verifiedEndpoint(principal)
      expect(yield* Effect.flip(webhooks.reEnable(principal, webhook.id))).toMatchObject({ _tag: "Conflict" })
      yield* answerWith(always(500))
      for (let i = 0; i < 3; i++) yield* exhaustOneDelivery(principal)
      const enabled = yield* webhooks.reEnable(principal, webhook.id)
      expect(enabled).toMatchObject({ status: "verified", verification_state: "verified", consecutive_failure_count: 0 })
      yield* answerWith(always(200))
      yield* takeRequests()
      yield* (yield* Meetings).create(principal, CreateMeeting.make({ title: "Flows again" }))
      yield* runOnce
      expect(yield* takeRequestsOf(webhook.url)).toHaveLength(1)
    }))

  test("rotate-secret answers a new secret once; deliveries from then on (pending retries too) are signed with it, not the old one", () =>
    Effect.gen(function*() {
      const { principal, workspace } = yield* owner()
      const webhooks = yield* Webhooks
      const created = yield* verifiedEndpoint(principal)
      yield* answerWith(always(500))
      yield* (yield* Meetings).create(principal, CreateMeeting.make({ title: "Signed twice" }))
      yield* runOnce
      const [before] = yield* takeRequestsOf(created.webhook.url)
      expect(before!.headers["X-Svc-Signature"]).toBe(`sha256=${hmac(created.signing_secret, before!.body)}`)

      const rotated = yield* webhooks.rotateSecret(principal, created.webhook.id)
      expect(rotated.signing_secret).toMatch(/^whsec_/)
      expect(rotated.signing_secret).not.toBe(created.signing_secret)
      expect(rotated.webhook.id).toBe(created.webhook.id)
      expect(JSON.stringify(rotated.webhook)).not.toContain(rotated.signing_secret)
      const stored = Option.getOrThrow(yield* (yield* WebhookStore).getEndpoint(workspace.id, created.webhook.id))
      expect(JSON.stringify(stored)).not.toContain(rotated.signing_secret)

      yield* TestClock.adjust("1 minute")
      yield* runOnce
      const [after] = yield* takeRequestsOf(created.webhook.url)
      expect(after!.body).toBe(before!.body)
      expect(after!.headers["X-Svc-Signature"]).toBe(`sha256=${hmac(rotated.signing_secret, after!.body)}`)
      expect(after!.headers["X-Svc-Signature"]).not.toBe(before!.headers["X-Svc-Signature"])
    }))

  test("a delivery whose endpoint was deleted before its turn is not sent: failed, with an attempt that says why", () =>
    Effect.gen(function*() {
      const { principal } = yield* owner()
      const { webhook } = yield* verifiedEndpoint(principal)
      yield* (yield* Meetings).create(principal, CreateMeeting.make({ title: "Too late" }))
      const [pending] = (yield* (yield* Webhooks).deliveries(principal, webhook.id, {})).items
      expect(pending).toMatchObject({ state: "pending", attempt_count: 0 })
      yield* (yield* Webhooks).delete(principal, webhook.id)
      yield* runOnce
      expect(yield* takeRequestsOf(webhook.url)).toEqual([])
      const record = Option.getOrThrow(yield* (yield* WebhookStore).getDelivery(principal.workspace_id, pending!.id))
      expect(record.delivery).toMatchObject({ state: "failed", attempt_count: 1, next_attempt_at: null, claimed_until: null })
      expect(record.attempts).toMatchObject([{ number: 1, status_code: null, error: "not sent: the endpoint was deleted" }])
    }))

  test("redeliver enqueues a delivered or failed delivery again: a new delivery id, the same event, body and idempotency key", () =>
    Effect.gen(function*() {
      const { principal } = yield* owner()
      const webhooks = yield* Webhooks
      const { webhook } = yield* verifiedEndpoint(principal)
      yield* answerWith(always(500))
      yield* (yield* Meetings).create(principal, CreateMeeting.make({ title: "Again" }))
      yield* runOnce
      const [first] = yield* takeRequestsOf(webhook.url)
      const [pending] = (yield* webhooks.deliveries(principal, webhook.id, {})).items
      expect(yield* Effect.flip(webhooks.redeliver(principal, webhook.id, pending!.id))).toMatchObject({ _tag: "Conflict" })
      yield* TestClock.adjust("1 minute")
      yield* runOnce
      yield* TestClock.adjust("4 minutes")
      yield* runOnce
      yield* takeRequests()

      yield* answerWith(always(200))
      const copy = yield* webhooks.redeliver(principal, webhook.id, pending!.id)
      expect(copy).toMatchObject({ event_id: pending!.event_id, idempotency_key: pending!.idempotency_key, state: "pending", attempt_count: 0, attempts: [] })
      expect(copy.id).not.toBe(pending!.id)
      yield* runOnce
      const [again] = yield* takeRequestsOf(webhook.url)
      expect(again!.body).toBe(first!.body)
      expect(again!.headers["X-Svc-Idempotency-Key"]).toBe(first!.headers["X-Svc-Idempotency-Key"])
      expect(again!.headers["X-Svc-Delivery-ID"]).toBe(copy.id)
      expect(again!.headers["X-Svc-Retry-Count"]).toBeUndefined()
      const log = yield* webhooks.deliveries(principal, webhook.id, {})
      expect(log.items.map((item) => [item.id, item.state])).toEqual([[copy.id, "delivered"], [pending!.id, "failed"]])

      expect(yield* Effect.flip(webhooks.redeliver(principal, webhook.id, DeliveryId.make(crypto.randomUUID())))).toMatchObject({
        _tag: "NotFound",
        resource: "delivery"
      })
      const stranger = yield* owner()
      const theirs = yield* createEndpoint(stranger.principal)
      expect(yield* Effect.flip(webhooks.redeliver(stranger.principal, theirs.webhook.id, copy.id))).toMatchObject({ _tag: "NotFound" })
    }))

  test("deliveries are written in the change's own unit of work: a change that fails or rolls back enqueues nothing", () =>
    Effect.gen(function*() {
      const { principal } = yield* owner()
      const { webhook } = yield* verifiedEndpoint(principal, ["meeting.created", "meeting.updated", "meeting.ended"])
      const meetings = yield* Meetings
      const meeting = yield* meetings.create(principal, CreateMeeting.make({ title: "Once" }))
      yield* TestClock.adjust("1 minute")
      yield* meetings.update(principal, meeting.id, UpdateMeeting.make({ status: "ended" }))
      // An ended meeting cannot be scheduled again: the change fails, and so does its event.
      expect(yield* Effect.flip(meetings.update(principal, meeting.id, UpdateMeeting.make({ status: "scheduled" })))).toMatchObject({ _tag: "Conflict" })
      // A unit of work that records an event and then fails.
      const { withTransaction } = yield* Transactor
      const events = yield* Events
      yield* Effect.exit(withTransaction(Effect.zipRight(
        events.record(principal, "meeting.updated", { id: meeting.id }),
        Effect.fail("the rest of the change failed")
      )))
      const log = yield* (yield* Webhooks).deliveries(principal, webhook.id, {})
      expect(log.items.map((item) => item.event_type)).toEqual(["meeting.ended", "meeting.created"])
    }))
})
