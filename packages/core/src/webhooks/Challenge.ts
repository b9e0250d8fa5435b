/**
 * The verification challenge (`webhook.verification`): the document's envelope with `data {verification_token,
 * endpoint_id}`, a fresh event id on every send, signed and headed like any delivery, POSTed once. The endpoint
 * passes when it answers 2xx echoing the token (Signer.echoes); any other answer, or none, leaves it pending.
 * Challenges are not queued: the worker sends the due ones (DeliveryWorker.runChallenges) and resend-verification
 * sends one at once (Webhooks.resendVerification).
 */
import { Duration, Effect, Schema } from "effect"
import { EventEnvelope, EventId } from "../events/Event.js"
import { Crypto } from "../ports/Crypto.js"
import { Outbound } from "../ports/Outbound.js"
import { now } from "../shared/Time.js"
import { openSecrets } from "./Secrets.js"
import { echoes, idempotencyKey, workspaceHeaders } from "./Signer.js"
import type { WebhookEndpoint } from "./Webhook.js"

export const challengeType = "webhook.verification"

/** How long a process that claimed a challenge has to send it and write down the answer before another may. */
export const challengeLease = Duration.minutes(2)

/** Sends the endpoint its challenge now; answers when it went out and whether the answer echoed the token. */
export const sendChallenge = (endpoint: WebhookEndpoint) =>
  Effect.gen(function*() {
    const crypto = yield* Crypto
    const outbound = yield* Outbound
    const { secret, token } = yield* openSecrets(endpoint)
    const at = yield* now
    const eventId = EventId.make(yield* crypto.randomUUID)
    const envelope = new EventEnvelope({
      event_type: challengeType,
      event_id: eventId,
      timestamp: at,
      workspace_id: endpoint.workspace_id,
      actor_user_id: "",
      data: { verification_token: token, endpoint_id: endpoint.id }
    })
    const body = JSON.stringify(yield* Effect.orDie(Schema.encode(EventEnvelope)(envelope)))
    const headers = yield* workspaceHeaders({
      secret,
      body,
      eventType: challengeType,
      eventId,
      occurredAt: at,
      idempotencyKey: yield* idempotencyKey(challengeType, eventId, endpoint.id),
      // No delivery row is kept for a challenge: its id names this one request.
      deliveryId: yield* crypto.randomUUID,
      attempt: 1
    })
    const echoed = yield* outbound.post({ url: endpoint.url, headers, body }).pipe(
      Effect.flatMap((answer) => echoes(answer, token)),
      Effect.catchTag("OutboundFailed", (failure) =>
        Effect.as(Effect.logDebug(`webhook challenge to ${endpoint.url} got no answer: ${failure.message}`), false))
    )
    return { at, echoed }
  }).pipe(Effect.withSpan("Webhooks.sendChallenge"))
