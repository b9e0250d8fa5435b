/**
 * The core with its webhooks (Convene.layer and Convene.webhooksLayer) on the in-memory store, node:crypto and
 * AES-256-GCM, with the two ports that reach the world replaced by their test doubles: a scripted Outbound (it
 * records every request and answers as the test says; every URL passes its check unless the test refuses a host)
 * and a Mailer that collects the mails (or fails, when told to).
 */
import {
  Convene,
  CreateWebhook,
  DeliveryWorker,
  MailFailed,
  type Mail,
  Mailer,
  Outbound,
  OutboundFailed,
  OutboundRefused,
  type OutboundRequest,
  type OutboundResponse,
  type Principal,
  type StorePorts,
  Webhooks
} from "@convene/core"
import { NodeSecretBox } from "@convene/node"
import * as StoreMemory from "@convene/store-memory"
import { expect } from "@effect/vitest"
import { Context, Effect, Layer, Redacted, Ref, type TestServices } from "effect"
import * as NodeCrypto from "node:crypto"
import { coreOver } from "../fixtures.js"

export type Answer = (request: OutboundRequest) => Effect.Effect<OutboundResponse, OutboundFailed>

/** The scripted Outbound: what it was asked, and how it answers. */
export class ScriptedOutbound extends Context.Tag("test/webhooks/ScriptedOutbound")<ScriptedOutbound, {
  readonly requests: Ref.Ref<ReadonlyArray<OutboundRequest>>
  readonly answer: Ref.Ref<Answer>
  /** Hosts whose URLs `check` refuses. */
  readonly refused: Ref.Ref<ReadonlySet<string>>
}>() {}

export const answered = (status: number, body = ""): Effect.Effect<OutboundResponse> =>
  Effect.succeed({ status, body, latencyMs: 12 })

/** The body of a request as JSON. */
export const bodyOf = (request: OutboundRequest): { readonly event_type: string; readonly event_id: string; readonly data: Record<string, unknown> } =>
  JSON.parse(request.body)

/** Answers challenges by echoing the token (in `form`), everything else with `status`. */
export const echoing = (options: { readonly form?: "plain" | "json"; readonly status?: number } = {}): Answer => (request) => {
  const body = bodyOf(request)
  if (body.event_type !== "webhook.verification") return answered(options.status ?? 200, "ok")
  const token = String(body.data["verification_token"])
  return answered(200, options.form === "json" ? JSON.stringify({ verification_token: token, hello: 1 }) : `  ${token}\n`)
}

/** Answers every request with `status` and no echo. */
export const always = (status: number): Answer => () => answered(status, "no")

/** Gets no answer at all. */
export const timingOut: Answer = () => Effect.fail(new OutboundFailed({ reason: "timeout", message: "no answer within 10 s" }))

const outboundLayer: Layer.Layer<Outbound | ScriptedOutbound> = Layer.effectContext(Effect.gen(function*() {
  const requests = yield* Ref.make<ReadonlyArray<OutboundRequest>>([])
  const answer = yield* Ref.make<Answer>(always(200))
  const refused = yield* Ref.make<ReadonlySet<string>>(new Set())
  const outbound = Outbound.of({
    check: (url) =>
      Effect.flatMap(Ref.get(refused), (hosts) => {
        const host = new URL(url).hostname
        return hosts.has(host)
          ? Effect.fail(new OutboundRefused({ message: `${host} resolves to an address this server does not call` }))
          : Effect.void
      }),
    post: (request) =>
      Effect.zipRight(Ref.update(requests, (all) => [...all, request]), Effect.flatMap(Ref.get(answer), (script) => script(request))),
    get: () => Effect.die(new Error("webhook deliveries only POST"))
  })
  return Context.make(Outbound, outbound).pipe(Context.add(ScriptedOutbound, { requests, answer, refused }))
}))

/** The collecting Mailer: the mails it was given, and whether it fails. */
export class CollectingMailer extends Context.Tag("test/webhooks/CollectingMailer")<CollectingMailer, {
  readonly mails: Ref.Ref<ReadonlyArray<Mail>>
  readonly failing: Ref.Ref<boolean>
}>() {}

const mailerLayer: Layer.Layer<Mailer | CollectingMailer> = Layer.effectContext(Effect.gen(function*() {
  const mails = yield* Ref.make<ReadonlyArray<Mail>>([])
  const failing = yield* Ref.make(false)
  const mailer = Mailer.of({
    send: (mail) =>
      Effect.flatMap(Ref.get(failing), (fails) =>
        fails ? Effect.fail(new MailFailed({ message: "the SMTP server said 451" })) : Ref.update(mails, (all) => [...all, mail]))
  })
  return Context.make(Mailer, mailer).pipe(Context.add(CollectingMailer, { mails, failing }))
}))

export const secretKey = Redacted.make(new Uint8Array(32).fill(9))

/** Everything over `store`, with the test doubles of the Outbound and the Mailer. */
export const webhooksOver = (store: Layer.Layer<StorePorts>) =>
  Convene.webhooksLayer.pipe(
    Layer.provideMerge(Layer.mergeAll(coreOver(store), NodeSecretBox.layer(secretKey), outboundLayer, mailerLayer))
  )

/** Everything, on a fresh in-memory store per build (webhook tests provide it per test: the worker spans the store). */
export const WebhooksLive = webhooksOver(StoreMemory.layer)

/** What a webhooks test may use: every service and port of `WebhooksLive`, and the test services (TestClock). */
export type WebhooksServices = Layer.Layer.Success<typeof WebhooksLive> | TestServices.TestServices

/** Sets how the Outbound answers from now on. */
export const answerWith = (answer: Answer) => Effect.flatMap(ScriptedOutbound, (outbound) => Ref.set(outbound.answer, answer))

/** The requests made so far (to `url`, when given), which are forgotten. */
export const takeRequests = (url?: string) =>
  Effect.flatMap(ScriptedOutbound, (outbound) =>
    Ref.modify(outbound.requests, (all) => {
      const taken = (request: OutboundRequest) => url === undefined || request.url === url
      return [all.filter(taken), all.filter((request) => !taken(request))]
    }))

export const mails = Effect.flatMap(CollectingMailer, (mailer) => Ref.get(mailer.mails))

/** A fresh HTTPS URL of its own. */
export const freshUrl = () => `https://hooks.example.com/${crypto.randomUUID()}`

/** Creates an endpoint (PRO workspaces take one; pass the principal of a workspace with room). */
export const createEndpoint = (
  principal: Principal,
  subscribed_events: CreateWebhook["subscribed_events"] = ["meeting.created", "action_item.completed"],
  url = freshUrl()
) => Effect.flatMap(Webhooks, (webhooks) => webhooks.create(principal, CreateWebhook.make({ url, subscribed_events })))

/** Creates an endpoint and verifies it through the worker's challenge (answered with an echo). */
export const verifiedEndpoint = (principal: Principal, subscribed_events?: CreateWebhook["subscribed_events"]) =>
  Effect.gen(function*() {
    const created = yield* createEndpoint(principal, subscribed_events)
    const previous = yield* Effect.flatMap(ScriptedOutbound, (outbound) => Ref.get(outbound.answer))
    yield* answerWith(echoing())
    yield* (yield* DeliveryWorker).runChallenges({ limit: 1000 })
    yield* answerWith(previous)
    yield* takeRequests()
    const [webhook] = (yield* (yield* Webhooks).list(principal, { limit: 100 })).items.filter((item) => item.id === created.webhook.id)
    expect(webhook?.verification_state).toBe("verified")
    return { ...created, webhook: webhook! }
  })

/** The lower-case hex HMAC-SHA256 of `body` under `secret`, as a receiver computes it. */
export const hmac = (secret: string, body: string) => NodeCrypto.createHmac("sha256", secret).update(body).digest("hex")
