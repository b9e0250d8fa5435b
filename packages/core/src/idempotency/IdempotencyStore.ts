import { Context, type DateTime, type Effect, Schema } from "effect"
import { Timestamp } from "../shared/Time.js"

/** The response a completed request gave: replayed byte for byte for an identical repeat. */
export class StoredResponse extends Schema.Class<StoredResponse>("StoredResponse")({
  status: Schema.Int,
  body: Schema.String
}) {}

/** One key of one credential. `response` is set once the first request completed with a 2xx. */
export class IdempotencyRecord extends Schema.Class<IdempotencyRecord>("IdempotencyRecord")({
  scope: Schema.String,
  key: Schema.String,
  fingerprint: Schema.String,
  response: Schema.NullOr(StoredResponse),
  created_at: Timestamp,
  expires_at: Timestamp
}) {}

export type BeginResult =
  | { readonly _tag: "Started" }
  | { readonly _tag: "Found"; readonly record: IdempotencyRecord }

/**
 * Port: idempotency records, unique per (scope, key). The rules (fingerprints, windows, what to answer)
 * live in the Idempotency service; the store only guarantees atomicity.
 */
export class IdempotencyStore extends Context.Tag("@convene/core/IdempotencyStore")<IdempotencyStore, {
  /**
   * Atomically claims (scope, key): stores `pending` (response null) when no record exists or the
   * existing one expired (`expires_at <= now`) and answers Started; otherwise answers Found with the
   * live record untouched. Of two racing claims exactly one is Started.
   */
  readonly begin: (pending: IdempotencyRecord, now: DateTime.Utc) => Effect.Effect<BeginResult>
  /**
   * Stores the response and the new expiry on the claim `pending` made (matched by scope, key and
   * created_at, response still null); a claim that was since taken over is left alone.
   */
  readonly complete: (pending: IdempotencyRecord, response: StoredResponse, expiresAt: DateTime.Utc) => Effect.Effect<void>
  /** Removes the claim `pending` made if it is still pending (a failed request releases its key). */
  readonly release: (pending: IdempotencyRecord) => Effect.Effect<void>
  /** Removes every record of the given scopes (live or not), whatever its key; none given, nothing. */
  readonly deleteByScopes: (scopes: ReadonlyArray<string>) => Effect.Effect<void>
  /** Removes every record with `expires_at <= now`; answers how many. */
  readonly purgeExpired: (now: DateTime.Utc) => Effect.Effect<number>
}>() {}
