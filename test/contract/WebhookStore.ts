/**
 * The WebhookStore contract: endpoints (every field round trip, the cap counted atomically, compare-and-set writes,
 * lists, subscribers, challenge claims) and the outbox (enqueue with the unit of work, claims that never hand a
 * delivery to two claimers and hand back one whose lease expired, attempts, the log, purge, cascades).
 *
 * Claims span every workspace of the store the suites share. Endpoints and deliveries are made verified and
 * delivered by default (never claimable); a test that makes claimable ones deletes its workspaces' rows at its end.
 */
import {
  type Delivery,
  DeliveryId,
  type StorePorts,
  Transactor,
  UserId,
  type WebhookEndpoint,
  WebhookEndpointId,
  WebhookStore,
  type WorkspaceId
} from "@convene/core"
import { addEqualityTesters, expect, layer } from "@effect/vitest"
import { DateTime, Effect, type Layer, Option } from "effect"
import {
  at,
  delivery,
  deliveryAttempt,
  minutes,
  seedEndpoint,
  seedUser,
  seedWorkspace,
  T0,
  uuid,
  webhookEndpoint
} from "./fixtures.js"

class Boom {
  readonly _tag = "Boom"
}

const everything = { limit: 100, offset: 0 }

/** The endpoint after one more write (as core makes them: the revision moves on). */
const next = (endpoint: WebhookEndpoint, fields: Partial<WebhookEndpoint>): WebhookEndpoint =>
  webhookEndpoint(endpoint.workspace_id, { ...endpoint, ...fields, revision: endpoint.revision + 1 })

const enqueue = (...deliveries: ReadonlyArray<Delivery>) => Effect.flatMap(WebhookStore, (store) => store.enqueue(deliveries))

/** Deletes what a test made claimable, so that the next test's claims see only their own rows. */
const cleanUp = (...workspaceIds: ReadonlyArray<WorkspaceId>) =>
  Effect.flatMap(WebhookStore, (store) => Effect.forEach(workspaceIds, store.deleteByWorkspace, { discard: true }))

const idsOf = (rows: ReadonlyArray<{ readonly id: string }>) => rows.map((row) => row.id)

export const suite = (name: string, storeLayer: Layer.Layer<StorePorts, unknown>) => {
  addEqualityTesters()

  layer(storeLayer, { timeout: "60 seconds" })(`WebhookStore (${name})`, (it) => {
    it.effect("an endpoint reads back with every field: nulls, instants, the subscribed types in their order, a creator", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const ws = yield* seedWorkspace()
        const creator = yield* seedUser(ws.id)
        const bare = yield* seedEndpoint(ws.id, {
          status: "pending",
          verification_state: "failed",
          verification_attempt_count: 0,
          verification_last_sent_at: null,
          verified_at: null,
          subscribed_events: ["participant.removed", "meeting.created", "attachment.uploaded"]
        })
        const full = yield* seedEndpoint(ws.id, {
          created_by: creator.id,
          url: "https://hooks.example.com/receive?team=ünïcode&x=1",
          verification_attempt_count: 288,
          verification_last_sent_at: at("2026-03-02T09:15:30.123Z"),
          last_success_at: minutes(3),
          consecutive_failure_count: 2,
          challenge_claimed_until: minutes(7),
          deleted_at: minutes(9),
          revision: 41
        })
        expect(yield* store.getEndpoint(ws.id, bare.id)).toEqual(Option.some(bare))
        expect(yield* store.getEndpoint(ws.id, full.id)).toEqual(Option.some(full))
        const other = yield* seedWorkspace()
        expect(yield* store.getEndpoint(other.id, full.id)).toEqual(Option.none())
        expect(yield* store.getEndpoint(ws.id, WebhookEndpointId.make(uuid()))).toEqual(Option.none())
      }))

    it.effect("insertEndpoint refuses past the cap of active endpoints: pending ones count, disabled and deleted ones do not", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const ws = yield* seedWorkspace()
        expect(yield* store.insertEndpoint(webhookEndpoint(ws.id), 0)).toBe(false)
        yield* seedEndpoint(ws.id, { verification_state: "disabled" })
        yield* seedEndpoint(ws.id, { deleted_at: T0 })
        expect(yield* store.countActive(ws.id)).toBe(0)
        const pending = webhookEndpoint(ws.id, { status: "pending", verification_state: "failed" })
        expect(yield* store.insertEndpoint(pending, 1)).toBe(true)
        expect(yield* store.countActive(ws.id)).toBe(1)
        const refused = webhookEndpoint(ws.id)
        expect(yield* store.insertEndpoint(refused, 1)).toBe(false)
        expect(yield* store.getEndpoint(ws.id, refused.id)).toEqual(Option.none())
        // Another workspace's endpoints do not count.
        const other = yield* seedWorkspace()
        expect(yield* store.insertEndpoint(webhookEndpoint(other.id), 1)).toBe(true)
        expect(yield* store.insertEndpoint(webhookEndpoint(ws.id), 2)).toBe(true)
        expect(yield* store.insertEndpoint(webhookEndpoint(ws.id), undefined)).toBe(true)
        expect(yield* store.countActive(ws.id)).toBe(3)
      }))

    it.effect("racing inserts never pass the cap together", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const ws = yield* seedWorkspace()
        const answers = yield* Effect.all(
          Array.from({ length: 6 }, () => store.insertEndpoint(webhookEndpoint(ws.id), 2)),
          { concurrency: "unbounded" }
        )
        expect(answers.filter(Boolean)).toHaveLength(2)
        expect(yield* store.countActive(ws.id)).toBe(2)
      }))

    it.effect("updateEndpoint writes only over the revision before; a stale or unknown write answers false", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const ws = yield* seedWorkspace()
        const endpoint = yield* seedEndpoint(ws.id, { revision: 3 })
        const first = next(endpoint, { verification_state: "disabled", consecutive_failure_count: 3, updated_at: minutes(1) })
        expect(yield* store.updateEndpoint(first)).toBe(true)
        const stale = next(endpoint, { url: "https://stale.example.com/" })
        expect(yield* store.updateEndpoint(stale)).toBe(false)
        expect(yield* store.updateEndpoint(webhookEndpoint(ws.id, { ...first, revision: first.revision + 5 }))).toBe(false)
        expect(yield* store.getEndpoint(ws.id, endpoint.id)).toEqual(Option.some(first))
        const second = next(first, { subscribed_events: ["meeting.deleted"], deleted_at: minutes(2), updated_at: minutes(2) })
        expect(yield* store.updateEndpoint(second)).toBe(true)
        expect(yield* store.getEndpoint(ws.id, endpoint.id)).toEqual(Option.some(second))
        expect(yield* store.updateEndpoint(webhookEndpoint(ws.id, { revision: 1 }))).toBe(false)
        // Another workspace's id with this workspace in the record finds nothing.
        const other = yield* seedWorkspace()
        expect(yield* store.updateEndpoint(next(second, { workspace_id: other.id }))).toBe(false)
      }))

    it.effect("listEndpoints pages the workspace's endpoints that are not deleted, newest first", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const ws = yield* seedWorkspace()
        const oldest = yield* seedEndpoint(ws.id, { created_at: minutes(1) })
        yield* seedEndpoint(ws.id, { created_at: minutes(2), deleted_at: minutes(3) })
        const disabled = yield* seedEndpoint(ws.id, { created_at: minutes(3), verification_state: "disabled" })
        const newest = yield* seedEndpoint(ws.id, { created_at: minutes(4), status: "pending", verification_state: "verifying" })
        yield* seedEndpoint((yield* seedWorkspace()).id, { created_at: minutes(5) })
        expect(yield* store.listEndpoints(ws.id, everything)).toEqual({ items: [newest, disabled, oldest], total: 3 })
        expect(yield* store.listEndpoints(ws.id, { limit: 1, offset: 1 })).toEqual({ items: [disabled], total: 3 })
        expect(yield* store.listEndpoints(ws.id, { limit: 5, offset: 3 })).toEqual({ items: [], total: 3 })
        yield* cleanUp(ws.id)
      }))

    it.effect("subscribers are the workspace's verified, live endpoints that list the type, oldest first", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const ws = yield* seedWorkspace()
        const later = yield* seedEndpoint(ws.id, { created_at: minutes(2), subscribed_events: ["meeting.created"] })
        const earlier = yield* seedEndpoint(ws.id, { created_at: minutes(1), subscribed_events: ["action_item.updated", "meeting.created"] })
        yield* seedEndpoint(ws.id, { subscribed_events: ["meeting.updated"] })
        yield* seedEndpoint(ws.id, { verification_state: "disabled" })
        yield* seedEndpoint(ws.id, { deleted_at: T0 })
        yield* seedEndpoint(ws.id, { status: "pending", verification_state: "failed" })
        yield* seedEndpoint((yield* seedWorkspace()).id)
        expect(yield* store.subscribers(ws.id, "meeting.created")).toEqual([earlier, later])
        expect(idsOf(yield* store.subscribers(ws.id, "action_item.updated"))).toEqual([earlier.id])
        expect(yield* store.subscribers(ws.id, "meeting.deleted")).toEqual([])
        // A type is matched whole, not as a prefix or a pattern.
        expect(yield* store.subscribers(ws.id, "meeting")).toEqual([])
        expect(yield* store.subscribers(ws.id, "meeting.%")).toEqual([])
      }))

    it.effect("claimChallenges takes verifying endpoints never challenged, challenged at or before sentBefore, or past their window; not claimed ones", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const ws = yield* seedWorkspace()
        const verifying = (fields: Partial<WebhookEndpoint>) =>
          seedEndpoint(ws.id, {
            status: "pending",
            verification_state: "verifying",
            verification_attempt_count: 0,
            verification_last_sent_at: null,
            verified_at: null,
            verification_retry_until: minutes(24 * 60),
            ...fields
          })
        const now = minutes(60)
        const sentBefore = minutes(55)
        const never = yield* verifying({ created_at: minutes(1) })
        const atTheLimit = yield* verifying({ verification_last_sent_at: sentBefore })
        const longAgo = yield* verifying({ verification_last_sent_at: minutes(10) })
        const windowOver = yield* verifying({ verification_last_sent_at: minutes(58), verification_retry_until: now })
        const claimExpired = yield* verifying({ challenge_claimed_until: now, created_at: minutes(2) })
        yield* verifying({ verification_last_sent_at: minutes(56) })
        yield* verifying({ challenge_claimed_until: minutes(61) })
        yield* verifying({ deleted_at: T0 })
        yield* seedEndpoint(ws.id, { status: "pending", verification_state: "failed", verification_last_sent_at: null })
        yield* seedEndpoint(ws.id, { verification_last_sent_at: null })
        yield* seedEndpoint(ws.id, { verification_state: "disabled", verification_last_sent_at: null })

        const leaseUntil = minutes(62)
        const claimed = yield* store.claimChallenges({ now, sentBefore, leaseUntil, limit: 100 })
        // Never challenged first, then the longest since the last challenge.
        expect(idsOf(claimed)).toEqual([never.id, claimExpired.id, longAgo.id, atTheLimit.id, windowOver.id])
        for (const endpoint of [never, claimExpired, longAgo, atTheLimit, windowOver]) {
          const expected = next(endpoint, { challenge_claimed_until: leaseUntil })
          expect(claimed.find((row) => row.id === endpoint.id)).toEqual(expected)
          expect(yield* store.getEndpoint(ws.id, endpoint.id)).toEqual(Option.some(expected))
        }
        // Claimed: nobody else gets them until the lease runs out; then they are free again.
        expect(yield* store.claimChallenges({ now, sentBefore, leaseUntil, limit: 100 })).toEqual([])
        expect(yield* store.claimChallenges({ now: minutes(61), sentBefore, leaseUntil: minutes(70), limit: 100 })).toHaveLength(1)
        const again = yield* store.claimChallenges({ now: leaseUntil, sentBefore, leaseUntil: minutes(70), limit: 100 })
        expect(idsOf(again)).toEqual(idsOf(claimed))
        yield* cleanUp(ws.id)
      }))

    it.effect("claimChallenges takes at most `limit`, the longest waiting first", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const ws = yield* seedWorkspace()
        const sentAt = [30, 10, 20].map((minute) => minutes(minute))
        const rows = yield* Effect.forEach(sentAt, (sent) =>
          seedEndpoint(ws.id, {
            status: "pending",
            verification_state: "verifying",
            verification_last_sent_at: sent
          }))
        const claim = store.claimChallenges({ now: minutes(40), sentBefore: minutes(35), leaseUntil: minutes(45), limit: 2 })
        expect(idsOf(yield* claim)).toEqual([rows[1]!.id, rows[2]!.id])
        expect(idsOf(yield* claim)).toEqual([rows[0]!.id])
        expect(yield* store.claimChallenges({ now: minutes(40), sentBefore: minutes(35), leaseUntil: minutes(45), limit: 0 })).toEqual([])
        yield* cleanUp(ws.id)
      }))

    it.effect("detachCreator clears the user from the endpoints they created (the revision moves on), others untouched", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const ws = yield* seedWorkspace()
        const leaving = yield* seedUser(ws.id)
        const staying = yield* seedUser(ws.id)
        const theirs = yield* seedEndpoint(ws.id, { created_by: leaving.id, revision: 4 })
        const deletedTheirs = yield* seedEndpoint(ws.id, { created_by: leaving.id, deleted_at: T0 })
        const others = yield* seedEndpoint(ws.id, { created_by: staying.id })
        yield* store.detachCreator(leaving.id)
        expect(yield* store.getEndpoint(ws.id, theirs.id)).toEqual(Option.some(next(theirs, { created_by: null })))
        expect(yield* store.getEndpoint(ws.id, deletedTheirs.id)).toEqual(Option.some(next(deletedTheirs, { created_by: null })))
        expect(yield* store.getEndpoint(ws.id, others.id)).toEqual(Option.some(others))
        yield* store.detachCreator(UserId.make(uuid()))
      }))

    it.effect("a delivery reads back with every field; its attempts are recorded with its new state, oldest first", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const ws = yield* seedWorkspace()
        const endpoint = yield* seedEndpoint(ws.id)
        const pending = delivery(endpoint, {
          state: "pending",
          attempt_count: 0,
          next_attempt_at: at("2100-01-01T00:00:00.000Z"),
          occurred_at: at("2026-03-02T09:15:30.123Z"),
          idempotency_key: "k".repeat(64)
        })
        yield* enqueue(pending)
        expect(yield* store.getDelivery(ws.id, pending.id)).toEqual(Option.some({ delivery: pending, attempts: [] }))

        const first = deliveryAttempt(pending, { status_code: 503, latency_ms: 1234 })
        const retrying = delivery(endpoint, { ...pending, attempt_count: 1, next_attempt_at: minutes(1), updated_at: minutes(0) })
        yield* store.recordAttempt(retrying, Option.some(first))
        const second = deliveryAttempt(pending, { number: 2, at: minutes(1), status_code: null, latency_ms: 0, error: "timeout: no answer in 10 s" })
        const done = delivery(endpoint, { ...pending, state: "failed", attempt_count: 2, next_attempt_at: null, updated_at: minutes(1) })
        yield* store.recordAttempt(done, Option.some(second))
        expect(yield* store.getDelivery(ws.id, pending.id)).toEqual(Option.some({ delivery: done, attempts: [first, second] }))

        // A new state without an attempt (given up) changes the delivery alone.
        const givenUp = delivery(endpoint, { ...done, updated_at: minutes(2) })
        yield* store.recordAttempt(givenUp, Option.none())
        expect(yield* store.getDelivery(ws.id, pending.id)).toEqual(Option.some({ delivery: givenUp, attempts: [first, second] }))

        expect(yield* store.getDelivery((yield* seedWorkspace()).id, pending.id)).toEqual(Option.none())
        expect(yield* store.getDelivery(ws.id, DeliveryId.make(uuid()))).toEqual(Option.none())
        // An attempt of a delivery that is not there is not recorded.
        const ghost = delivery(endpoint)
        yield* store.recordAttempt(ghost, Option.some(deliveryAttempt(ghost)))
        expect(yield* store.getDelivery(ws.id, ghost.id)).toEqual(Option.none())
      }))

    it.effect("listDeliveries pages one addressee's deliveries, newest first, each with its attempts", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const ws = yield* seedWorkspace()
        const endpoint = yield* seedEndpoint(ws.id)
        const otherEndpoint = yield* seedEndpoint(ws.id)
        const [a, b, c] = [1, 3, 2].map((minute) => delivery(endpoint, { created_at: minutes(minute) }))
        yield* enqueue(a!, b!, c!, delivery(otherEndpoint))
        const attemptOfB = deliveryAttempt(b!)
        yield* store.recordAttempt(b!, Option.some(attemptOfB))
        const addressee = { kind: "workspace_endpoint", id: endpoint.id } as const
        expect(yield* store.listDeliveries(addressee, everything)).toEqual({
          items: [{ delivery: b, attempts: [attemptOfB] }, { delivery: c, attempts: [] }, { delivery: a, attempts: [] }],
          total: 3
        })
        expect(yield* store.listDeliveries(addressee, { limit: 1, offset: 2 })).toEqual({ items: [{ delivery: a, attempts: [] }], total: 3 })
        expect(yield* store.listDeliveries(addressee, { limit: 1, offset: 3 })).toEqual({ items: [], total: 3 })
        expect(yield* store.listDeliveries({ kind: "workspace_endpoint", id: uuid() }, everything)).toEqual({ items: [], total: 0 })
      }))

    it.effect("claimDue takes pending deliveries that are due and not claimed (or whose lease ran out), the longest due first", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const ws = yield* seedWorkspace()
        const endpoint = yield* seedEndpoint(ws.id)
        const pending = (fields: Partial<Delivery>) =>
          delivery(endpoint, { state: "pending", attempt_count: 0, next_attempt_at: minutes(0), ...fields })
        const now = minutes(10)
        const dueNow = pending({ next_attempt_at: now })
        const dueLongAgo = pending({ next_attempt_at: minutes(-30) })
        const leaseOver = pending({ next_attempt_at: minutes(5), claimed_until: now })
        const notYet = pending({ next_attempt_at: minutes(11) })
        const claimedElsewhere = pending({ next_attempt_at: minutes(6), claimed_until: minutes(11) })
        yield* enqueue(dueNow, dueLongAgo, leaseOver, notYet, claimedElsewhere, delivery(endpoint), delivery(endpoint, { state: "failed", next_attempt_at: null }))

        const leaseUntil = minutes(15)
        const claimed = yield* store.claimDue({ now, leaseUntil, limit: 100 })
        expect(claimed).toEqual([dueLongAgo, leaseOver, dueNow].map((row) => delivery(endpoint, { ...row, claimed_until: leaseUntil })))
        expect(Option.map(yield* store.getDelivery(ws.id, dueNow.id), (record) => record.delivery.claimed_until)).toEqual(Option.some(leaseUntil))
        expect(yield* store.claimDue({ now, leaseUntil, limit: 100 })).toEqual([])

        // A process that claimed and died: past its lease the delivery is claimable again.
        const later = yield* store.claimDue({ now: leaseUntil, leaseUntil: minutes(20), limit: 100 })
        expect(idsOf(later)).toEqual(idsOf([dueLongAgo, leaseOver, claimedElsewhere, dueNow, notYet]))
        yield* cleanUp(ws.id)
      }))

    it.effect("outbox counts the pending deliveries and answers when the one due longest became due", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const ws = yield* seedWorkspace()
        const endpoint = yield* seedEndpoint(ws.id)
        // Other tests of the suite leave deliveries in the store: this one counts its own against what was there, and
        // its oldest is older than any of theirs.
        const now = minutes(10)
        const before = yield* store.outbox(now)
        const longest = minutes(-1_000_000)
        const pending = (fields: Partial<Delivery>) =>
          delivery(endpoint, { state: "pending", attempt_count: 0, next_attempt_at: minutes(0), ...fields })
        yield* enqueue(
          pending({ next_attempt_at: now }),
          pending({ next_attempt_at: longest, claimed_until: minutes(15) }),
          pending({ next_attempt_at: minutes(11) }),
          delivery(endpoint),
          delivery(endpoint, { state: "failed", next_attempt_at: null })
        )
        const after = yield* store.outbox(now)
        expect(after.pending - before.pending).toBe(3)
        expect(after.oldestDue).toEqual(Option.some(longest))
        // Before any of them is due, only the others' count.
        expect(Option.getOrNull((yield* store.outbox(minutes(-1_000_001))).oldestDue)).toBeNull()
        yield* cleanUp(ws.id)
        expect((yield* store.outbox(now)).pending).toBe(before.pending)
      }))

    it.effect("claimDue takes at most `limit`; claimers racing for the same deliveries never both get one", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const ws = yield* seedWorkspace()
        const endpoint = yield* seedEndpoint(ws.id)
        const rows = Array.from({ length: 30 }, (_, i) =>
          delivery(endpoint, { state: "pending", attempt_count: 0, next_attempt_at: minutes(-i) }))
        yield* enqueue(...rows)
        const first = yield* store.claimDue({ now: T0, leaseUntil: minutes(5), limit: 3 })
        expect(idsOf(first)).toEqual(idsOf(rows.slice(-3).reverse()))

        const claims = yield* Effect.all(
          Array.from({ length: 8 }, () => store.claimDue({ now: T0, leaseUntil: minutes(5), limit: 4 })),
          { concurrency: "unbounded" }
        )
        // Whatever the racing claimers did not take, one more claim does: every delivery was claimed exactly once.
        const rest = yield* store.claimDue({ now: T0, leaseUntil: minutes(5), limit: 100 })
        const claimedIds = [...idsOf(first), ...claims.flatMap(idsOf), ...idsOf(rest)]
        expect(claims.every((claim) => claim.length <= 4)).toBe(true)
        expect(claimedIds).toHaveLength(rows.length)
        expect(new Set(claimedIds)).toEqual(new Set(idsOf(rows)))
        yield* cleanUp(ws.id)
      }))

    it.effect("enqueue joins the unit of work: rolled back, nothing is left; committed, every delivery is there", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const { withTransaction } = yield* Transactor
        const ws = yield* seedWorkspace()
        const endpoint = yield* seedEndpoint(ws.id)
        const lost = delivery(endpoint)
        const failed = yield* Effect.flip(withTransaction(Effect.zipRight(store.enqueue([lost]), Effect.fail(new Boom()))))
        expect(failed).toBeInstanceOf(Boom)
        expect(yield* store.getDelivery(ws.id, lost.id)).toEqual(Option.none())
        const kept = [delivery(endpoint), delivery(endpoint)]
        yield* withTransaction(store.enqueue(kept))
        for (const row of kept) expect(yield* store.getDelivery(ws.id, row.id)).toEqual(Option.some({ delivery: row, attempts: [] }))
        yield* store.enqueue([])
      }))

    it.effect("purgeDeliveries deletes finished deliveries made before the instant, with their attempts; pending ones stay", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        // Long before every other test's deliveries: purge spans every workspace.
        const before = at("2001-01-01T00:00:00.000Z")
        const ws = yield* seedWorkspace()
        const endpoint = yield* seedEndpoint(ws.id)
        const old = delivery(endpoint, { created_at: DateTime.add(before, { millis: -1 }) })
        const oldFailed = delivery(endpoint, { state: "failed", created_at: DateTime.add(before, { days: -3 }) })
        const oldPending = delivery(endpoint, {
          state: "pending",
          next_attempt_at: at("2100-01-01T00:00:00.000Z"),
          created_at: DateTime.add(before, { days: -3 })
        })
        const atInstant = delivery(endpoint, { created_at: before })
        yield* enqueue(old, oldFailed, oldPending, atInstant)
        yield* store.recordAttempt(old, Option.some(deliveryAttempt(old)))
        yield* store.purgeDeliveries(before)
        expect(yield* store.getDelivery(ws.id, old.id)).toEqual(Option.none())
        expect(yield* store.getDelivery(ws.id, oldFailed.id)).toEqual(Option.none())
        expect(Option.isSome(yield* store.getDelivery(ws.id, oldPending.id))).toBe(true)
        expect(Option.isSome(yield* store.getDelivery(ws.id, atInstant.id))).toBe(true)
        // The purged delivery's attempts went with it: the same id records anew.
        yield* enqueue(old)
        expect(yield* store.getDelivery(ws.id, old.id)).toEqual(Option.some({ delivery: old, attempts: [] }))
      }))

    it.effect("deleteByWorkspace deletes the workspace's endpoints and deliveries with their attempts, no other's", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const gone = yield* seedWorkspace()
        const kept = yield* seedWorkspace()
        const goneEndpoint = yield* seedEndpoint(gone.id, { created_by: (yield* seedUser(gone.id)).id })
        const keptEndpoint = yield* seedEndpoint(kept.id)
        const goneDelivery = delivery(goneEndpoint)
        const keptDelivery = delivery(keptEndpoint)
        yield* enqueue(goneDelivery, keptDelivery)
        yield* store.recordAttempt(goneDelivery, Option.some(deliveryAttempt(goneDelivery)))
        const keptAttempt = deliveryAttempt(keptDelivery)
        yield* store.recordAttempt(keptDelivery, Option.some(keptAttempt))

        yield* store.deleteByWorkspace(gone.id)
        expect(yield* store.getEndpoint(gone.id, goneEndpoint.id)).toEqual(Option.none())
        expect(yield* store.getDelivery(gone.id, goneDelivery.id)).toEqual(Option.none())
        expect(yield* store.listDeliveries({ kind: "workspace_endpoint", id: goneEndpoint.id }, everything)).toEqual({ items: [], total: 0 })
        expect(yield* store.getEndpoint(kept.id, keptEndpoint.id)).toEqual(Option.some(keptEndpoint))
        expect(yield* store.getDelivery(kept.id, keptDelivery.id)).toEqual(Option.some({ delivery: keptDelivery, attempts: [keptAttempt] }))
      }))
  })
}
