/**
 * Writing an endpoint safely when several writers may change it at once (the HTTP handlers, the delivery worker of
 * each server process): read it, compute the change from what was read, and store it only if nobody wrote in
 * between (WebhookStore.updateEndpoint compares revisions); otherwise read again and compute again.
 */
import { Effect, Option } from "effect"
import type { WorkspaceId } from "../shared/Ids.js"
import type { WebhookEndpoint, WebhookEndpointId } from "./Webhook.js"
import { WebhookStore } from "./WebhookStore.js"

/** Rounds of read-compute-write before giving up; each lost round means another writer finished one. */
const rounds = 50

/**
 * Applies `change` to the endpoint as stored now. Answers none when there is no such endpoint, else the endpoint
 * before and after (the same record when `change` answered none: nothing to write).
 */
export const changeEndpoint = <E, R>(
  workspaceId: WorkspaceId,
  id: WebhookEndpointId,
  change: (current: WebhookEndpoint) => Effect.Effect<Option.Option<WebhookEndpoint>, E, R>
): Effect.Effect<Option.Option<readonly [before: WebhookEndpoint, after: WebhookEndpoint]>, E, R | WebhookStore> =>
  Effect.gen(function*() {
    const store = yield* WebhookStore
    for (let round = 0; round < rounds; round++) {
      const found = yield* store.getEndpoint(workspaceId, id)
      if (Option.isNone(found)) return Option.none()
      const before = found.value
      const after = yield* change(before)
      if (Option.isNone(after)) return Option.some([before, before] as const)
      if (yield* store.updateEndpoint(after.value)) return Option.some([before, after.value] as const)
    }
    return yield* Effect.die(new Error(`webhook endpoint ${id} kept changing under ${rounds} attempts to write it`))
  })
