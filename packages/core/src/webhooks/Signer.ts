/**
 * Signing webhook requests, for every kind of addressee: the signature (`sha256=<hex>`, the HMAC-SHA256 of the raw
 * body keyed by the signing secret: byte for byte GitHub's X-Hub-Signature-256 scheme), the headers every signed
 * delivery carries, and the first-party document's full header set. Also the two values derived from an event
 * that receivers rely on: the de-duplication key and the echo of a verification challenge.
 */
import { DateTime, Effect } from "effect"
import { Crypto } from "../ports/Crypto.js"

export const userAgent = "Svc-Webhook/1.0"

/** The X-Svc-Signature value of `body` under `secret`. */
export const signature = (secret: string, body: string): Effect.Effect<string, never, Crypto> =>
  Effect.flatMap(Crypto, (crypto) => Effect.map(crypto.hmacSha256(secret, body), (hex) => `sha256=${hex}`))

/** What every signed delivery tells about itself. */
export interface SignedMessage {
  readonly secret: string
  /** The exact bytes sent. */
  readonly body: string
  readonly eventType: string
  readonly eventId: string
  /** When the event happened: X-Svc-Timestamp, in Unix seconds (unsigned, informational). */
  readonly occurredAt: DateTime.Utc
}

/**
 * The headers of any signed delivery (the first-party document's and the partner document's share them):
 * Content-Type, X-Svc-Signature, X-Svc-Event-Type, X-Svc-Event-ID and X-Svc-Timestamp.
 */
export const signedHeaders = (message: SignedMessage): Effect.Effect<Record<string, string>, never, Crypto> =>
  Effect.map(signature(message.secret, message.body), (signed) => ({
    "Content-Type": "application/json",
    "X-Svc-Signature": signed,
    "X-Svc-Event-Type": message.eventType,
    "X-Svc-Event-ID": message.eventId,
    "X-Svc-Timestamp": String(Math.floor(DateTime.toEpochMillis(message.occurredAt) / 1000))
  }))

/**
 * The headers of a workspace webhook delivery, exactly as the first-party document lists them: the signed
 * headers, User-Agent `Svc-Webhook/1.0`, X-Svc-Idempotency-Key, X-Svc-Delivery-ID, and X-Svc-Retry-Count (the
 * attempt number) on the second attempt and later only.
 */
export const workspaceHeaders = (message: SignedMessage & {
  readonly idempotencyKey: string
  readonly deliveryId: string
  /** 1 for the first attempt. */
  readonly attempt: number
}): Effect.Effect<Record<string, string>, never, Crypto> =>
  Effect.map(signedHeaders(message), (signed) => ({
    ...signed,
    "User-Agent": userAgent,
    "X-Svc-Idempotency-Key": message.idempotencyKey,
    "X-Svc-Delivery-ID": message.deliveryId,
    ...(message.attempt > 1 ? { "X-Svc-Retry-Count": String(message.attempt) } : {})
  }))

/**
 * The headers of a partner delivery (a partner app's webhook, an automation's action): the signed headers, with
 * X-Svc-Timestamp the instant of the attempt (`sentAt`), not of the event, so that a retry minutes later is not
 * refused by a receiver that rejects old timestamps (five minutes in the partner document's reference receivers),
 * and User-Agent `Svc-Webhook/1.0`.
 */
export const partnerHeaders = (message: Omit<SignedMessage, "occurredAt"> & {
  readonly sentAt: DateTime.Utc
}): Effect.Effect<Record<string, string>, never, Crypto> =>
  Effect.map(signedHeaders({ ...message, occurredAt: message.sentAt }), (signed) => ({ ...signed, "User-Agent": userAgent }))

/**
 * The de-duplication key of an event for one addressee: the hex SHA-256 of `type:eventId:addresseeId`, so exactly
 * 64 characters, the same on every attempt and redelivery, and different for each addressee of one event.
 */
export const idempotencyKey = (eventType: string, eventId: string, addresseeId: string): Effect.Effect<string, never, Crypto> =>
  Effect.flatMap(Crypto, (crypto) => crypto.sha256(`${eventType}:${eventId}:${addresseeId}`))

/**
 * Whether the answer to a challenge echoes `token` (decisions.md): a 2xx whose body, trimmed, is the token, or is a
 * JSON object whose `verification_token` is the token. Compared in constant time.
 */
export const echoes = (answer: { readonly status: number; readonly body: string }, token: string): Effect.Effect<boolean, never, Crypto> =>
  Effect.map(Crypto, (crypto) => {
    if (answer.status < 200 || answer.status > 299) return false
    const body = answer.body.trim()
    if (crypto.timingSafeEqual(body, token)) return true
    let parsed: unknown
    try {
      parsed = JSON.parse(body)
    } catch {
      return false
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return false
    const echoed: unknown = (parsed as Record<string, unknown>)["verification_token"]
    return typeof echoed === "string" && crypto.timingSafeEqual(echoed, token)
  })
