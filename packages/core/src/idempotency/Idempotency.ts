/**
 * Idempotent creates, after Stripe and the IETF httpapi Idempotency-Key draft:
 * - the first request with a key claims it (pending for at most 5 minutes);
 * - its work and the record of its 2xx response commit in one transaction, so a resource whose creation was
 *   answered is always replayable and a crash mid-way leaves neither (the key frees when the claim expires);
 * - an identical repeat (same credential, key and fingerprint: method, path, query and body, see
 *   Fingerprint.ts) gets the first response again, marked replayed, for 24 hours;
 * - a repeat while the first is in flight is `IdempotencyConflict` (409 with Retry-After);
 * - the same key with another fingerprint is `IdempotencyKeyReuse` (422);
 * - a request that fails releases its key, so a corrected retry may reuse it.
 */
import { Context, DateTime, Duration, Effect, Layer, Schema } from "effect"
import { Crypto } from "../ports/Crypto.js"
import { Transactor } from "../ports/Transactor.js"
import { now } from "../shared/Time.js"
import { fingerprint, type RequestParts } from "./Fingerprint.js"
import { IdempotencyRecord, IdempotencyStore, type StoredResponse } from "./IdempotencyStore.js"
import { fn, withSpan } from "../shared/Span.js"
import { validated } from "../shared/Trusted.js"

export const pendingWindow = Duration.minutes(5)
export const retentionWindow = Duration.hours(24)

export class IdempotencyKeyInvalid extends Schema.TaggedError<IdempotencyKeyInvalid>()("IdempotencyKeyInvalid", {
  message: Schema.String
}) {}

export class IdempotencyConflict extends Schema.TaggedError<IdempotencyConflict>()("IdempotencyConflict", {
  retry_after_seconds: Schema.Int,
  message: Schema.String
}) {}

export class IdempotencyKeyReuse extends Schema.TaggedError<IdempotencyKeyReuse>()("IdempotencyKeyReuse", {
  message: Schema.String
}) {}

/** 1 to 255 printable ASCII characters, not only white space. */
export const validateKey = (raw: string): Effect.Effect<string, IdempotencyKeyInvalid> => {
  if (raw.trim().length === 0) {
    return Effect.fail(new IdempotencyKeyInvalid({ message: "Idempotency-Key must not be empty or only white space" }))
  }
  if (raw.length > 255) {
    return Effect.fail(new IdempotencyKeyInvalid({ message: "Idempotency-Key must be at most 255 characters" }))
  }
  if (!/^[\x20-\x7e]+$/.test(raw)) {
    return Effect.fail(new IdempotencyKeyInvalid({ message: "Idempotency-Key must hold printable ASCII characters only" }))
  }
  return Effect.succeed(raw)
}

export interface IdempotentRequest extends RequestParts {
  /** Whose keys these are: the credential's id (keys of different credentials never meet). */
  readonly scope: string
  /** The Idempotency-Key as the client sent it. */
  readonly key: string
}

export interface IdempotentOutcome {
  readonly replayed: boolean
  readonly response: StoredResponse
}

const make = Effect.gen(function*() {
  const store = yield* IdempotencyStore
  const transactor = yield* Transactor
  const crypto = yield* Crypto

  const run = <E, R>(
    request: IdempotentRequest,
    work: Effect.Effect<StoredResponse, E, R>
  ): Effect.Effect<IdempotentOutcome, E | IdempotencyKeyInvalid | IdempotencyConflict | IdempotencyKeyReuse, R> =>
    Effect.gen(function*() {
      const key = yield* validateKey(request.key)
      const digest = yield* Effect.provideService(fingerprint(request), Crypto, crypto)
      const at = yield* now
      const pending = validated(IdempotencyRecord, {
        scope: request.scope,
        key,
        fingerprint: digest,
        response: null,
        created_at: at,
        expires_at: DateTime.addDuration(at, pendingWindow)
      })
      const claim = yield* store.begin(pending, at)
      if (claim._tag === "Found") {
        const existing = claim.record
        if (existing.fingerprint !== digest) {
          return yield* Effect.fail(
            new IdempotencyKeyReuse({
              message: "this Idempotency-Key was already used with a different request (method, path or body)"
            })
          )
        }
        if (existing.response === null) {
          return yield* Effect.fail(
            new IdempotencyConflict({
              retry_after_seconds: 1,
              message: "a request with this Idempotency-Key is still in progress; retry shortly"
            })
          )
        }
        return { replayed: true, response: existing.response }
      }
      const response = yield* transactor.withTransaction(
        Effect.tap(work, (response) =>
          response.status >= 200 && response.status < 300
            ? Effect.flatMap(now, (done) => store.complete(pending, response, DateTime.addDuration(done, retentionWindow)))
            : store.release(pending))
      ).pipe(Effect.onError(() => store.release(pending)))
      return { replayed: false, response }
    }).pipe(withSpan("Idempotency.run"))

  /** Deletes records past their window; the host runs it now and then. */
  const purgeExpired = fn("Idempotency.purgeExpired")(function*() {
    return yield* store.purgeExpired(yield* now)
  })

  return { run, purgeExpired } as const
})

export class Idempotency extends Context.Tag("@convene/core/Idempotency")<
  Idempotency,
  Effect.Effect.Success<typeof make>
>() {
  static readonly layer: Layer.Layer<Idempotency, never, IdempotencyStore | Transactor | Crypto> = Layer.effect(
    Idempotency,
    make
  )
}
