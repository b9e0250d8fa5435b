/**
 * The delivery worker's rules for the partner room's addressees (DeliveryAddressees): a partner app (its webhooks),
 * an action of one of its automations, and a webhook step of one of its workflow runs (whose outcomes move the run:
 * Workflows). All are sent as the worker sends every delivery (3 attempts, n² minutes
 * apart, the outbound rules at each connection), signed with the app's webhook secret as it is when the round
 * starts (a secret replaced since the delivery was enqueued signs it), with the partner headers (Signer.partnerHeaders:
 * X-Svc-Timestamp is the attempt's instant).
 *
 * Decisions where the documents are silent:
 * - A webhook goes to the app's `webhook_url` as it is at the attempt (a URL changed meanwhile gets the retries); an
 *   automation's call to its action's URL.
 * - A delivery is not sent (it fails at once, with one attempt naming why and no status) when its app is suspended,
 *   has no webhook secret, or (a webhook) no longer has a webhook URL, or when its automation is disabled.
 * - Failed deliveries change nothing of the app or the automation: partner apps are the operator's to suspend, and
 *   nothing of theirs is disabled by itself (unlike a workspace endpoint).
 */
import { Context, Effect, Either, Layer, Option } from "effect"
import { SecretBox } from "../oauth/Signing.js"
import { Crypto } from "../ports/Crypto.js"
import { now } from "../shared/Time.js"
import { type AddresseeRules, DeliveryAddressees, type Target } from "../webhooks/DeliveryWorker.js"
import { openSealed } from "../webhooks/Secrets.js"
import { partnerHeaders } from "../webhooks/Signer.js"
import type { Delivery } from "../webhooks/Webhook.js"
import { AutomationActionId } from "./Automation.js"
import { AutomationStore } from "./AutomationStore.js"
import { type PartnerApp, PartnerAppId } from "./PartnerApp.js"
import { whyNotSent } from "./PartnerEvents.js"
import { PartnerStore } from "./PartnerStore.js"
import { Workflows } from "./workflows/Workflows.js"

/** A partner addressee's deliveries change nothing of it, whatever becomes of them. */
const unchanged: Omit<AddresseeRules, "target"> = {
  delivered: () => Effect.void,
  succeeded: () => Effect.void,
  exhausted: () => Effect.succeed(Effect.void)
}

export const layer: Layer.Layer<DeliveryAddressees, never, PartnerStore | AutomationStore | Workflows | SecretBox | Crypto> = Layer.effect(
  DeliveryAddressees,
  Effect.gen(function*() {
    const partners = yield* PartnerStore
    const automations = yield* AutomationStore
    const workflows = yield* Workflows
    const ports = Context.make(Crypto, yield* Crypto).pipe(Context.add(SecretBox, yield* SecretBox))

    /**
     * Where a delivery to `app` goes (`url`), signed with its secret; or why it is not sent. A workflow step's call
     * (`step`) also carries its de-duplication key and delivery id, and has its success recorded with the attempt
     * (the run moves in that unit of work).
     */
    const targetOf = (found: Option.Option<PartnerApp>, url: (app: PartnerApp) => string | null, step = false) =>
      Effect.gen(function*() {
        if (Option.isNone(found)) return Either.left("not sent: the partner app no longer exists")
        const app = found.value
        const target = url(app)
        const why = whyNotSent(app, target)
        if (why !== undefined || target === null || app.sealed_webhook_secret === null) {
          return Either.left(why ?? "not sent: the partner app cannot be called")
        }
        const secret = yield* Effect.provide(openSealed(app.sealed_webhook_secret), ports)
        return Either.right<Target>({
          url: target,
          successResets: step,
          headers: (delivery: Delivery) =>
            Effect.flatMap(now, (sentAt) =>
              Effect.provide(
                Effect.map(
                  partnerHeaders({ secret, body: delivery.body, eventType: delivery.event_type, eventId: delivery.event_id, sentAt }),
                  (headers) => step ? { ...headers, "Idempotency-Key": delivery.idempotency_key, "X-Svc-Delivery-ID": delivery.id } : headers
                ),
                ports
              ))
        })
      })

    return DeliveryAddressees.of({
      partner_app: {
        target: (delivery) =>
          Effect.flatMap(partners.get(PartnerAppId.make(delivery.addressee_id)), (app) => targetOf(app, (found) => found.webhook_url)),
        ...unchanged
      },
      partner_automation_action: {
        target: (delivery) =>
          Effect.gen(function*() {
            const actionId = AutomationActionId.make(delivery.addressee_id)
            const found = yield* automations.getByAction(actionId)
            if (Option.isNone(found)) return Either.left("not sent: the automation no longer exists")
            const automation = found.value
            if (!automation.enabled) return Either.left("not sent: the automation is disabled")
            const action = automation.actions.find((candidate) => candidate.id === actionId)
            return yield* targetOf(yield* partners.get(automation.partner_app_id), () => action?.webhook_url ?? null)
          }),
        ...unchanged
      },
      workflow_step: {
        target: (delivery) =>
          Effect.flatMap(workflows.stepTarget(delivery), (step) =>
            Either.isLeft(step)
              ? Effect.succeed(Either.left(step.left))
              : Effect.flatMap(partners.get(step.right.appId), (app) => targetOf(app, () => step.right.url, true))),
        delivered: (delivery, at) => workflows.stepDelivered(delivery, at),
        succeeded: () => Effect.void,
        exhausted: (delivery, at) =>
          Effect.as(
            workflows.stepFailed(delivery, at, "step_delivery_failed", `the step's URL did not answer 2xx after ${delivery.attempt_count + 1} attempts`),
            Effect.void
          ),
        notSent: (delivery, at, why) => workflows.stepFailed(delivery, at, "step_not_sent", why)
      }
    })
  })
)
