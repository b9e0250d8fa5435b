import { type BeginResult, IdempotencyRecord, IdempotencyStore, type StorePorts, StoredResponse } from "@convene/core"
import { addEqualityTesters, expect, layer } from "@effect/vitest"
import { DateTime, Effect, type Layer } from "effect"
import { at, minutes, pendingClaim, T0 } from "./fixtures.js"

const created = new StoredResponse({ status: 201, body: "{\"id\":\"42\",\"title\":\"Ünïcode ✓\"}" })

/** The record a Found answer carries (fails the test on Started). */
const found = (result: BeginResult): IdempotencyRecord => {
  expect(result._tag).toBe("Found")
  return (result as Extract<BeginResult, { _tag: "Found" }>).record
}

export const suite = (name: string, storeLayer: Layer.Layer<StorePorts, unknown>) => {
  addEqualityTesters()

  layer(storeLayer)(`IdempotencyStore (${name})`, (it) => {
    it.effect("the first begin starts; later ones find the live record untouched", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const pending = pendingClaim()
        expect(yield* store.begin(pending, T0)).toEqual({ _tag: "Started" })
        const again = pendingClaim({ scope: pending.scope, key: pending.key, fingerprint: "other", created_at: minutes(1), expires_at: minutes(6) })
        expect(found(yield* store.begin(again, minutes(1)))).toEqual(pending)
        expect(found(yield* store.begin(again, minutes(4)))).toEqual(pending)
      }))

    it.effect("records are unique per (scope, key)", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const pending = pendingClaim()
        expect((yield* store.begin(pending, T0))._tag).toBe("Started")
        expect((yield* store.begin(pendingClaim({ key: pending.key }), T0))._tag).toBe("Started")
        expect((yield* store.begin(pendingClaim({ scope: pending.scope }), T0))._tag).toBe("Started")
        expect(found(yield* store.begin(pendingClaim({ scope: pending.scope, key: pending.key }), T0))).toEqual(pending)
      }))

    it.effect("an expired record (expires_at <= now) is replaced by the new claim", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const first = pendingClaim({ expires_at: minutes(5) })
        yield* store.begin(first, T0)
        const second = pendingClaim({ scope: first.scope, key: first.key, fingerprint: "second", created_at: minutes(5), expires_at: minutes(10) })
        expect((yield* store.begin(second, minutes(5)))._tag).toBe("Started")
        const third = pendingClaim({ scope: first.scope, key: first.key, created_at: minutes(6), expires_at: minutes(11) })
        expect(found(yield* store.begin(third, minutes(6)))).toEqual(second)
      }))

    it.effect("complete stores the response and the new expiry on the claim, once", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const pending = pendingClaim()
        yield* store.begin(pending, T0)
        const retainedUntil = minutes(24 * 60)
        yield* store.complete(pending, created, retainedUntil)
        const done = new IdempotencyRecord({ ...pending, response: created, expires_at: retainedUntil })
        // Past the pending window the completed record still answers, because its expiry moved.
        expect(found(yield* store.begin(pendingClaim({ scope: pending.scope, key: pending.key }), minutes(60)))).toEqual(done)

        yield* store.complete(pending, new StoredResponse({ status: 200, body: "second" }), minutes(48 * 60))
        yield* store.release(pending)
        expect(found(yield* store.begin(pendingClaim({ scope: pending.scope, key: pending.key }), minutes(61)))).toEqual(done)
      }))

    it.effect("a claim that was taken over is neither completed nor released by its first owner", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const stale = pendingClaim({ expires_at: minutes(5) })
        yield* store.begin(stale, T0)
        const current = pendingClaim({ scope: stale.scope, key: stale.key, created_at: minutes(7), expires_at: minutes(12) })
        expect((yield* store.begin(current, minutes(7)))._tag).toBe("Started")

        yield* store.complete(stale, created, minutes(24 * 60))
        yield* store.release(stale)
        expect(found(yield* store.begin(pendingClaim({ scope: stale.scope, key: stale.key }), minutes(8)))).toEqual(current)
      }))

    it.effect("release frees a pending key", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const pending = pendingClaim()
        yield* store.begin(pending, T0)
        yield* store.release(pending)
        const retry = pendingClaim({ scope: pending.scope, key: pending.key, created_at: minutes(1), expires_at: minutes(6) })
        expect((yield* store.begin(retry, minutes(1)))._tag).toBe("Started")
        expect(found(yield* store.begin(pending, minutes(2)))).toEqual(retry)
        // Releasing what is not stored changes nothing.
        yield* store.release(pendingClaim())
      }))

    it.effect("20 racing begins on one key: exactly one is Started", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const template = pendingClaim()
        const claims = Array.from({ length: 20 }, (_, i) => pendingClaim({ ...template, fingerprint: `racer ${i}` }))
        const results = yield* Effect.all(claims.map((claim) => store.begin(claim, T0)), { concurrency: "unbounded" })
        const winners = results.flatMap((result, i) => result._tag === "Started" ? [claims[i]!] : [])
        expect(winners).toHaveLength(1)
        for (const result of results) {
          if (result._tag === "Found") expect(result.record).toEqual(winners[0])
        }
      }))

    it.effect("racing begins on an expired key: exactly one replaces it", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const old = pendingClaim({ expires_at: minutes(5) })
        yield* store.begin(old, T0)
        const claims = Array.from({ length: 20 }, (_, i) =>
          pendingClaim({ scope: old.scope, key: old.key, fingerprint: `racer ${i}`, created_at: minutes(10), expires_at: minutes(15) }))
        const results = yield* Effect.all(claims.map((claim) => store.begin(claim, minutes(10))), { concurrency: "unbounded" })
        expect(results.filter((result) => result._tag === "Started")).toHaveLength(1)
      }))

    it.effect("purgeExpired removes the records with expires_at <= now and answers how many", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        // Far in the past, so that no other test's records fall into the window.
        const now = at("2001-01-01T00:00:00.000Z")
        const expired = pendingClaim({ created_at: at("2000-12-31T00:00:00.000Z"), expires_at: at("2000-12-31T12:00:00.000Z") })
        const expiresNow = pendingClaim({ created_at: at("2000-12-31T00:00:00.000Z"), expires_at: now })
        const live = pendingClaim({ created_at: at("2000-12-31T00:00:00.000Z"), expires_at: DateTime.add(now, { seconds: 1 }) })
        for (const record of [expired, expiresNow, live]) {
          expect((yield* store.begin(record, record.created_at))._tag).toBe("Started")
        }
        expect(yield* store.purgeExpired(now)).toBeGreaterThanOrEqual(2)

        // Asked at a time when they had not expired yet, the purged keys are free again; the live one is not.
        const before = at("2000-12-31T01:00:00.000Z")
        expect((yield* store.begin(pendingClaim({ scope: expired.scope, key: expired.key }), before))._tag).toBe("Started")
        expect((yield* store.begin(pendingClaim({ scope: expiresNow.scope, key: expiresNow.key }), before))._tag).toBe("Started")
        expect(found(yield* store.begin(pendingClaim({ scope: live.scope, key: live.key }), before))).toEqual(live)
        expect(yield* store.purgeExpired(at("1990-01-01T00:00:00.000Z"))).toBe(0)
      }))

    it.effect("deleteByScopes removes every record of the given scopes, pending or completed, whatever the key", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const a = pendingClaim()
        const aCompleted = pendingClaim({ scope: a.scope })
        const b = pendingClaim()
        const kept = pendingClaim()
        for (const record of [a, aCompleted, b, kept]) expect((yield* store.begin(record, T0))._tag).toBe("Started")
        yield* store.complete(aCompleted, created, minutes(60 * 24))

        yield* store.deleteByScopes([a.scope, b.scope])
        for (const record of [a, aCompleted, b]) {
          const again = pendingClaim({ scope: record.scope, key: record.key, fingerprint: "again" })
          expect(yield* store.begin(again, minutes(1))).toEqual({ _tag: "Started" })
        }
        expect(found(yield* store.begin(pendingClaim({ scope: kept.scope, key: kept.key }), minutes(1)))).toEqual(kept)

        yield* store.deleteByScopes([])
        expect(found(yield* store.begin(pendingClaim({ scope: kept.scope, key: kept.key }), minutes(1)))).toEqual(kept)
      }))
  })
}
