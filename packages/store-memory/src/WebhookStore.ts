/**
 * WebhookStore in memory: endpoints per workspace, and the outbox (deliveries with their attempts), in the same
 * state value as every other port, so that deliveries enqueued with a change commit or roll back with it. Claims
 * are one `modify` each: writes are serial, so two claimers never get the same row.
 */
import {
  Delivery,
  type DeliveryAttempt,
  type DeliveryId,
  type DeliveryRecord,
  Pagination,
  trusted,
  WebhookEndpoint,
  WebhookStore
} from "@convene/core"
import { DateTime, Effect, HashMap, Layer, Option } from "effect"
import { type Compare, getRow, mapRows, Memory, newestFirst, oldestFirst, putRow, rowsOf, type State } from "./Memory.js"

const notAfter = (at: DateTime.Utc, than: DateTime.Utc) => !DateTime.greaterThan(at, than)

/** Free at `now`: never claimed, or the claim ran out. */
const unclaimed = (until: DateTime.Utc | null, now: DateTime.Utc) => until === null || notAfter(until, now)

const active = (endpoint: WebhookEndpoint) => endpoint.deleted_at === null && endpoint.verification_state !== "disabled"

/** Never challenged first, then the longest since the last challenge; created_at and id break ties. */
const longestWaiting: Compare<WebhookEndpoint> = (a, b) => {
  const sent = (endpoint: WebhookEndpoint) => endpoint.verification_last_sent_at?.epochMillis ?? Number.NEGATIVE_INFINITY
  return sent(a) - sent(b) || oldestFirst(a, b)
}

/** next_attempt_at asc, then id asc. */
const dueFirst: Compare<Delivery> = (a, b) =>
  (a.next_attempt_at?.epochMillis ?? 0) - (b.next_attempt_at?.epochMillis ?? 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

const recordOf = (state: State, delivery: Delivery): DeliveryRecord => ({
  delivery,
  attempts: Option.getOrElse(HashMap.get(state.deliveryAttempts, delivery.id), () => [])
})

/** The state without the deliveries `gone` picks (and their attempts). */
const withoutDeliveries = (state: State, gone: (delivery: Delivery) => boolean): State => {
  const removed = HashMap.filter(state.deliveries, gone)
  if (HashMap.isEmpty(removed)) return state
  return {
    ...state,
    deliveries: HashMap.filter(state.deliveries, (delivery) => !gone(delivery)),
    deliveryAttempts: HashMap.filter(state.deliveryAttempts, (_, id) => !HashMap.has(removed, id))
  }
}

export const layer: Layer.Layer<WebhookStore, never, Memory> = Layer.effect(
  WebhookStore,
  Effect.gen(function*() {
    const memory = yield* Memory

    return WebhookStore.of({
      insertEndpoint: Effect.fnUntraced(function*(endpoint, cap) {
        return yield* memory.modify((state) => {
          const count = HashMap.reduce(rowsOf(state.webhookEndpoints, endpoint.workspace_id), 0, (n, row) => (active(row) ? n + 1 : n))
          if (cap !== undefined && count >= cap) return [false, state]
          return [true, {
            ...state,
            webhookEndpoints: putRow(state.webhookEndpoints, endpoint.workspace_id, endpoint.id, endpoint)
          }]
        })
      }),

      getEndpoint: Effect.fnUntraced(function*(workspaceId, id) {
        return getRow((yield* memory.read).webhookEndpoints, workspaceId, id)
      }),

      updateEndpoint: Effect.fnUntraced(function*(endpoint) {
        return yield* memory.modify((state) => {
          const stored = getRow(state.webhookEndpoints, endpoint.workspace_id, endpoint.id)
          if (Option.isNone(stored) || stored.value.revision !== endpoint.revision - 1) return [false, state]
          return [true, { ...state, webhookEndpoints: putRow(state.webhookEndpoints, endpoint.workspace_id, endpoint.id, endpoint) }]
        })
      }),

      listEndpoints: Effect.fnUntraced(function*(workspaceId, page) {
        const rows = HashMap.toValues(rowsOf((yield* memory.read).webhookEndpoints, workspaceId))
          .filter((endpoint) => endpoint.deleted_at === null)
          .sort(newestFirst)
        return Pagination.sliceOf(rows, page)
      }),

      countActive: Effect.fnUntraced(function*(workspaceId) {
        return HashMap.toValues(rowsOf((yield* memory.read).webhookEndpoints, workspaceId)).filter(active).length
      }),

      subscribers: Effect.fnUntraced(function*(workspaceId, eventType) {
        return HashMap.toValues(rowsOf((yield* memory.read).webhookEndpoints, workspaceId))
          .filter((endpoint) =>
            endpoint.deleted_at === null && endpoint.verification_state === "verified" &&
            endpoint.subscribed_events.some((type) => type === eventType)
          )
          .sort(oldestFirst)
      }),

      claimChallenges: Effect.fnUntraced(function*({ leaseUntil, limit, now, sentBefore }) {
        return yield* memory.modify((state) => {
          const due = [...HashMap.values(state.webhookEndpoints)]
            .flatMap((rows) => HashMap.toValues(rows))
            .filter((endpoint) =>
              endpoint.verification_state === "verifying" && endpoint.deleted_at === null &&
              unclaimed(endpoint.challenge_claimed_until, now) &&
              (endpoint.verification_last_sent_at === null || notAfter(endpoint.verification_last_sent_at, sentBefore) ||
                notAfter(endpoint.verification_retry_until, now))
            )
            .sort(longestWaiting)
            .slice(0, Math.max(0, limit))
            .map((endpoint) =>
              new WebhookEndpoint({ ...endpoint, challenge_claimed_until: leaseUntil, revision: endpoint.revision + 1 }, trusted)
            )
          return [due, {
            ...state,
            webhookEndpoints: due.reduce(
              (table, endpoint) => putRow(table, endpoint.workspace_id, endpoint.id, endpoint),
              state.webhookEndpoints
            )
          }]
        })
      }),

      detachCreator: Effect.fnUntraced(function*(userId) {
        yield* memory.modify((state) => [undefined, {
          ...state,
          webhookEndpoints: HashMap.reduce(state.webhookEndpoints, state.webhookEndpoints, (table, rows, workspaceId) =>
            HashMap.some(rows, (endpoint) => endpoint.created_by === userId)
              ? mapRows(table, workspaceId, HashMap.map((endpoint) =>
                endpoint.created_by === userId
                  ? new WebhookEndpoint({ ...endpoint, created_by: null, revision: endpoint.revision + 1 }, trusted)
                  : endpoint
              ))
              : table)
        }])
      }),

      enqueue: Effect.fnUntraced(function*(deliveries) {
        if (deliveries.length === 0) return
        yield* memory.modify((state) => [undefined, {
          ...state,
          deliveries: deliveries.reduce((table, delivery) => HashMap.set(table, delivery.id, delivery), state.deliveries)
        }])
      }),

      claimDue: Effect.fnUntraced(function*({ leaseUntil, limit, now }) {
        return yield* memory.modify((state) => {
          const due = HashMap.toValues(state.deliveries)
            .filter((delivery) =>
              delivery.state === "pending" && delivery.next_attempt_at !== null && notAfter(delivery.next_attempt_at, now) &&
              unclaimed(delivery.claimed_until, now)
            )
            .sort(dueFirst)
            .slice(0, Math.max(0, limit))
            .map((delivery) => new Delivery({ ...delivery, claimed_until: leaseUntil }, trusted))
          return [due, {
            ...state,
            deliveries: due.reduce((table, delivery) => HashMap.set(table, delivery.id, delivery), state.deliveries)
          }]
        })
      }),

      outbox: Effect.fnUntraced(function*(now) {
        const pending = HashMap.toValues((yield* memory.read).deliveries).filter((delivery) => delivery.state === "pending")
        const due = pending.flatMap((delivery) =>
          delivery.next_attempt_at !== null && notAfter(delivery.next_attempt_at, now) ? [delivery.next_attempt_at] : []
        )
        return {
          pending: pending.length,
          oldestDue: due.length === 0 ? Option.none() : Option.some(due.reduce((a, b) => DateTime.min(a, b)))
        }
      }),

      recordAttempt: Effect.fnUntraced(function*(delivery, attempt) {
        yield* memory.modify((state) => {
          if (!HashMap.has(state.deliveries, delivery.id)) return [undefined, state]
          return [undefined, {
            ...state,
            deliveries: HashMap.set(state.deliveries, delivery.id, delivery),
            deliveryAttempts: Option.match(attempt, {
              onNone: () => state.deliveryAttempts,
              onSome: (row: DeliveryAttempt) =>
                HashMap.set(state.deliveryAttempts, delivery.id, [
                  ...Option.getOrElse(HashMap.get(state.deliveryAttempts, delivery.id), () => []),
                  row
                ])
            })
          }]
        })
      }),

      getDelivery: Effect.fnUntraced(function*(workspaceId, id: DeliveryId) {
        const state = yield* memory.read
        return HashMap.get(state.deliveries, id).pipe(
          Option.filter((delivery) => delivery.workspace_id === workspaceId),
          Option.map((delivery) => recordOf(state, delivery))
        )
      }),

      listDeliveries: Effect.fnUntraced(function*(addressee, page) {
        const state = yield* memory.read
        const rows = HashMap.toValues(state.deliveries)
          .filter((delivery) => delivery.addressee_kind === addressee.kind && delivery.addressee_id === addressee.id)
          .sort(newestFirst)
        const slice = Pagination.sliceOf(rows, page)
        return { items: slice.items.map((delivery) => recordOf(state, delivery)), total: slice.total }
      }),

      purgeDeliveries: Effect.fnUntraced(function*(before) {
        yield* memory.modify((state) => [
          undefined,
          withoutDeliveries(state, (delivery) => delivery.state !== "pending" && DateTime.lessThan(delivery.created_at, before))
        ])
      }),

      deleteByWorkspace: Effect.fnUntraced(function*(workspaceId) {
        yield* memory.modify((state) => [undefined, {
          ...withoutDeliveries(state, (delivery) => delivery.workspace_id === workspaceId),
          webhookEndpoints: HashMap.remove(state.webhookEndpoints, workspaceId)
        }])
      })
    })
  })
)
