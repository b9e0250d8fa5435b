/**
 * Workspace webhook endpoints, as the workspace's administrators manage them (the first-party document's
 * /v1/workspace/webhooks): list, create, delete, re-enable, rotate the secret, resend the verification challenge,
 * and read and replay the delivery log.
 *
 * Who may: scope workspace:read (list, get, deliveries) or workspace:write (the rest), and the ADMIN or OWNER role
 * (a workspace API key acts as the workspace). What a plan allows: FREE no endpoint (402), PRO 1, ELITE 3 and
 * ENTERPRISE any number of active ones (409 `endpoint_cap_exceeded` past that).
 *
 * Decisions where the documents are silent:
 * - an event type named twice in `subscribed_events` counts once (kept in the order first named);
 * - a URL with a user name or password is refused (it would be shown in the record);
 * - the challenge after create is sent by the worker (DeliveryWorker.runChallenges, due at once), so the create
 *   answer is always pending/verifying, as the States table says; resend-verification sends its challenge itself;
 * - DELETE of a deleted endpoint is a harmless no-op (204), of an unknown one 404; deleted endpoints are invisible
 *   to every other operation (404);
 * - redelivery enqueues a new delivery (new X-Svc-Delivery-ID) of the same bytes with the same event id and
 *   idempotency key, for a delivery that is delivered or failed (a pending one is 409 `conflict`), to a verified
 *   endpoint (a disabled or unverified one is 409 `conflict`: re-enable or verify it first).
 */
import { Context, Effect, Layer, Option } from "effect"
import { requireScope, requireWorkspaceAdmin } from "../identity/Access.js"
import type { Principal } from "../identity/Identity.js"
import { SecretBox } from "../oauth/Signing.js"
import { Crypto } from "../ports/Crypto.js"
import { Outbound } from "../ports/Outbound.js"
import { Conflict, EndpointCapExceeded, NotFound, orNotFound, PlanRequired, ValidationError } from "../shared/Errors.js"
import { clamp, type PageRequest, toList } from "../shared/Pagination.js"
import { now, plus } from "../shared/Time.js"
import { trusted } from "../shared/Trusted.js"
import { httpsUrlProblem } from "../shared/Url.js"
import { activeWebhookEndpointCap, atLeast, webhooksFrom } from "../workspaces/Plans.js"
import { WorkspaceStore } from "../workspaces/WorkspaceStore.js"
import { challengeLease, sendChallenge } from "./Challenge.js"
import { changeEndpoint } from "./Endpoints.js"
import * as States from "./EndpointStates.js"
import { mintSigningSecret, mintVerificationToken } from "./Secrets.js"
import {
  type CreateWebhook,
  CreatedWebhook,
  Delivery,
  DeliveryId,
  DeliveryView,
  RotatedSecret,
  type WebhookEndpoint,
  WebhookEndpointId,
  WebhookEndpointView
} from "./Webhook.js"
import { WebhookStore } from "./WebhookStore.js"
import { fn } from "../shared/Span.js"

const make = Effect.gen(function*() {
  const store = yield* WebhookStore
  const workspaces = yield* WorkspaceStore
  const outbound = yield* Outbound
  const crypto = yield* Crypto
  const ports = Context.make(Crypto, crypto).pipe(
    Context.add(SecretBox, yield* SecretBox),
    Context.add(Outbound, outbound),
    Context.add(WebhookStore, store)
  )

  const admin = (principal: Principal, scope: "workspace:read" | "workspace:write") =>
    Effect.zipRight(requireScope(principal, scope), requireWorkspaceAdmin(principal))

  /** The caller's workspace's endpoint, unless it is deleted (NotFound either way). */
  const visible = (principal: Principal, id: WebhookEndpointId) =>
    store.getEndpoint(principal.workspace_id, id).pipe(
      Effect.map(Option.filter((endpoint) => endpoint.deleted_at === null)),
      orNotFound("webhook", id)
    )

  /** Applies `change` to the caller's visible endpoint (NotFound when it is gone, even if it went meanwhile). */
  const change = <E>(
    principal: Principal,
    id: WebhookEndpointId,
    apply: (current: WebhookEndpoint) => Effect.Effect<Option.Option<WebhookEndpoint>, E>
  ) =>
    changeEndpoint(principal.workspace_id, id, (current): Effect.Effect<Option.Option<WebhookEndpoint>, E | NotFound> =>
      current.deleted_at !== null ? Effect.fail(NotFound.of("webhook", id)) : apply(current)).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(NotFound.of("webhook", id)),
          onSome: ([, after]) => Effect.succeed(after)
        })),
        Effect.provide(ports)
      )

  /** HTTPS, no credentials in it, and a host the outbound rules let this server call. */
  const checkUrl = (url: string) =>
    Effect.gen(function*() {
      const problem = httpsUrlProblem(url)
      if (problem !== undefined) return yield* Effect.fail(ValidationError.of("url", problem))
      yield* outbound.check(url).pipe(Effect.mapError((refused) => ValidationError.of("url", refused.message)))
    })

  /** A page of the workspace's endpoints (deleted ones left out), newest first. */
  const list = fn("Webhooks.list")(function*(principal: Principal, request: PageRequest) {
    yield* admin(principal, "workspace:read")
    const page = clamp(request)
    const slice = yield* store.listEndpoints(principal.workspace_id, page)
    return toList({ items: slice.items.map(WebhookEndpointView.of), total: slice.total }, page)
  })

  const get = fn("Webhooks.get")(function*(principal: Principal, id: WebhookEndpointId) {
    yield* admin(principal, "workspace:read")
    return WebhookEndpointView.of(yield* visible(principal, id))
  })

  /**
   * Creates an endpoint, pending and verifying; its signing secret and verification token are answered this once.
   * The worker sends the first challenge as soon as it runs next.
   */
  const create = fn("Webhooks.create")(function*(principal: Principal, input: CreateWebhook) {
    yield* admin(principal, "workspace:write")
    const workspace = yield* workspaces.get(principal.workspace_id).pipe(orNotFound("workspace", principal.workspace_id))
    if (!atLeast(workspace.plan, webhooksFrom)) {
      return yield* Effect.fail(
        new PlanRequired({
          feature: "webhooks",
          current_plan: workspace.plan,
          required_plan: webhooksFrom,
          message: `webhook endpoints need the ${webhooksFrom} plan or higher`
        })
      )
    }
    yield* checkUrl(input.url)
    const signing = yield* Effect.provide(mintSigningSecret, ports)
    const verification = yield* Effect.provide(mintVerificationToken, ports)
    const endpoint = States.created({
      id: WebhookEndpointId.make(yield* crypto.randomUUID),
      workspace_id: workspace.id,
      url: input.url,
      subscribed_events: [...new Set(input.subscribed_events)],
      created_by: principal.user_id,
      sealed_signing_secret: signing.sealed,
      sealed_verification_token: verification.sealed
    }, yield* now)
    const cap = activeWebhookEndpointCap(workspace.plan)
    if (!(yield* store.insertEndpoint(endpoint, cap))) {
      return yield* Effect.fail(
        new EndpointCapExceeded({
          cap: cap ?? 0,
          current_plan: workspace.plan,
          message: `the ${workspace.plan} plan allows ${cap} active webhook endpoint${cap === 1 ? "" : "s"}: ` +
            "delete one, or upgrade the plan"
        })
      )
    }
    return new CreatedWebhook({
      signing_secret: signing.secret,
      verification_token: verification.token,
      webhook: WebhookEndpointView.of(endpoint)
    }, trusted)
  })

  /** Soft-deletes the endpoint: nothing is delivered to it from now on. Deleting it again changes nothing. */
  const remove = fn("Webhooks.delete")(function*(principal: Principal, id: WebhookEndpointId) {
    yield* admin(principal, "workspace:write")
    const at = yield* now
    const changed = yield* Effect.provide(
      changeEndpoint(principal.workspace_id, id, (current) => Effect.succeed(States.deleted(current, at))),
      ports
    )
    if (Option.isNone(changed)) return yield* Effect.fail(NotFound.of("webhook", id))
  })

  /** A disabled endpoint gets deliveries again (verified, no failures counted); any other is 409 `conflict`. */
  const reEnable = fn("Webhooks.reEnable")(function*(principal: Principal, id: WebhookEndpointId) {
    yield* admin(principal, "workspace:write")
    const at = yield* now
    return WebhookEndpointView.of(yield* change(principal, id, (current) => Effect.map(States.reEnabled(current, at), Option.some)))
  })

  /** A new signing secret, answered this once; the old one signs nothing from now on (pending retries included). */
  const rotateSecret = fn("Webhooks.rotateSecret")(function*(principal: Principal, id: WebhookEndpointId) {
    yield* admin(principal, "workspace:write")
    const at = yield* now
    const signing = yield* Effect.provide(mintSigningSecret, ports)
    const endpoint = yield* change(principal, id, (current) => Effect.succeed(Option.some(States.secretRotated(current, at, signing.sealed))))
    return new RotatedSecret({ signing_secret: signing.secret, webhook: WebhookEndpointView.of(endpoint) }, trusted)
  })

  /**
   * Sends the challenge again, now, with a fresh 24-hour window (verifying or failed endpoints; verified or
   * disabled ones are 409 `endpoint_not_pending`), and answers the endpoint as the answer left it: verified if it
   * echoed the token, else verifying.
   */
  const resendVerification = fn("Webhooks.resendVerification")(function*(principal: Principal, id: WebhookEndpointId) {
    yield* admin(principal, "workspace:write")
    const at = yield* now
    const claimed = yield* change(principal, id, (current) =>
      Effect.map(States.resendStarted(current, at, plus(at, challengeLease)), Option.some))
    const sent = yield* Effect.provide(sendChallenge(claimed), ports)
    const answered = yield* Effect.provide(
      changeEndpoint(principal.workspace_id, id, (current) => Effect.succeed(States.challengeAnswered(current, sent.at, sent.echoed))),
      ports
    )
    return WebhookEndpointView.of(Option.match(answered, { onNone: () => claimed, onSome: ([, after]) => after }))
  })

  /** A page of the endpoint's deliveries, newest first, each with its attempts. */
  const deliveries = fn("Webhooks.deliveries")(function*(principal: Principal, id: WebhookEndpointId, request: PageRequest) {
    yield* admin(principal, "workspace:read")
    yield* visible(principal, id)
    const page = clamp(request)
    const slice = yield* store.listDeliveries({ kind: "workspace_endpoint", id }, page)
    return toList({ items: slice.items.map(DeliveryView.of), total: slice.total }, page)
  })

  /** Sends a delivered or failed delivery again, as a new delivery of the same event with the same idempotency key. */
  const redeliver = fn("Webhooks.redeliver")(function*(principal: Principal, id: WebhookEndpointId, deliveryId: DeliveryId) {
    yield* admin(principal, "workspace:write")
    const endpoint = yield* visible(principal, id)
    const original = yield* store.getDelivery(principal.workspace_id, deliveryId).pipe(
      Effect.map(Option.filter(({ delivery }) => delivery.addressee_kind === "workspace_endpoint" && delivery.addressee_id === id)),
      orNotFound("delivery", deliveryId)
    )
    if (original.delivery.state === "pending") {
      return yield* Effect.fail(new Conflict({ message: "the delivery is still pending: it has attempts left" }))
    }
    if (endpoint.verification_state !== "verified") {
      return yield* Effect.fail(
        new Conflict({ message: `the endpoint is ${endpoint.verification_state}: only a verified endpoint is delivered to` })
      )
    }
    const at = yield* now
    const copy = new Delivery({
      ...original.delivery,
      id: DeliveryId.make(yield* crypto.randomUUID),
      state: "pending",
      attempt_count: 0,
      next_attempt_at: at,
      claimed_until: null,
      created_at: at,
      updated_at: at
    }, trusted)
    yield* store.enqueue([copy])
    return DeliveryView.of({ delivery: copy, attempts: [] })
  })

  return {
    list,
    get,
    create,
    delete: remove,
    reEnable,
    rotateSecret,
    resendVerification,
    deliveries,
    redeliver
  } as const
})

export class Webhooks extends Context.Tag("@convene/core/Webhooks")<Webhooks, Effect.Effect.Success<typeof make>>() {
  static readonly layer: Layer.Layer<
    Webhooks,
    never,
    WebhookStore | WorkspaceStore | Outbound | Crypto | SecretBox
  > = Layer.effect(Webhooks, make)
}
