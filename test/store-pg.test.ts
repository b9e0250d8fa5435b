/**
 * The store contract suites against @convene/store-pg, twice: on PGlite (a copy of the migrated template cluster, test/support/pglite.ts)
 * and on the PostgreSQL server (a throwaway database; DATABASE_URL, else the local server). The server run
 * fails, never skips, when no server answers. On the server alone (PGlite is one session: its transactions
 * never overlap), the event log's ordering across concurrent transactions, and the outbox's claims skipping what
 * another claimer holds.
 */
import { type Delivery, EventLog, Transactor, WebhookStore } from "@convene/core"
import { layerPg, layerPglite, PgBlobStore } from "@convene/store-pg"
import { afterAll, expect, layer } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, Option, Scope, TestServices } from "effect"
import { serverDatabase } from "../packages/store-pg/test/fixtures.js"
import { pgliteMigratedDataDir } from "./support/pglite.js"
import { delivery, domainEvent, minutes, seedEndpoint, seedWorkspace, T0 } from "./contract/fixtures.js"
import * as BlobStoreContract from "./contract/BlobStore.js"
import { runContractSuites } from "./contract/index.js"

// Each adapter is built once for the whole file (on first use) and shared by the suites, which create their
// own rows; everything is closed, and the directory and the database removed, after the last suite.
const scope = Effect.runSync(Scope.make())
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)), 60_000)

const sharedLayer = <A, E>(layer: Layer.Layer<A, E>): Layer.Layer<A, E> =>
  Layer.effectContext(Effect.runSync(Effect.cached(Scope.extend(Layer.build(layer), scope))))

const pglite = sharedLayer(Layer.unwrapScoped(Effect.map(pgliteMigratedDataDir, (dataDir) => layerPglite({ dataDir }))))
const server = sharedLayer(Layer.unwrapScoped(Effect.map(serverDatabase, (url) => layerPg({ url }))))

runContractSuites("PGlite", pglite)
runContractSuites("PostgreSQL", server, true)
// PGlite's store keeps blobs in its directory (FileBlobStore, in the run above); the database's blob store on PGlite too.
BlobStoreContract.suite("PgBlobStore on PGlite", PgBlobStore.layer.pipe(Layer.provide(pglite)))

layer(server, { timeout: "60 seconds" })("EventLog visibility (PostgreSQL)", (it) => {
  it.effect("positions become visible in order: a second append to the workspace waits for the first transaction to end", () =>
    Effect.gen(function*() {
      const log = yield* EventLog
      const { withTransaction } = yield* Transactor
      const ws = yield* seedWorkspace()
      const other = yield* seedWorkspace()
      const first = domainEvent(ws.id, { type: "meeting.created" })
      const second = domainEvent(ws.id, { type: "meeting.updated" })
      const elsewhere = domainEvent(other.id, { type: "meeting.created" })

      // Transaction A appends and stays open on its connection until released.
      const appended = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const a = yield* Effect.fork(withTransaction(Effect.gen(function*() {
        yield* log.append(first)
        yield* Deferred.succeed(appended, undefined)
        yield* Deferred.await(release)
      })))
      yield* Deferred.await(appended)

      // Transaction B, on another connection, appends to the same workspace: it waits for A.
      const b = yield* Effect.fork(withTransaction(log.append(second)))
      // Another workspace's append does not wait.
      yield* withTransaction(log.append(elsewhere))
      expect((yield* log.after(other.id, 0, 10)).map((entry) => entry.event.id)).toEqual([elsewhere.id])
      yield* TestServices.provideLive(Effect.sleep("200 millis"))
      expect(b.unsafePoll()).toBeNull()
      // Read outside both: nothing of the workspace is visible while A is open.
      expect(yield* log.after(ws.id, 0, 10)).toEqual([])
      expect(yield* log.head(ws.id)).toBe(0)

      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(a)
      yield* Fiber.join(b)
      const firstAt = Option.getOrThrow(yield* log.positionOf(ws.id, first.id))
      const secondAt = Option.getOrThrow(yield* log.positionOf(ws.id, second.id))
      expect(firstAt).toBeLessThan(secondAt)
      const logged = yield* log.after(ws.id, 0, 10)
      expect(logged.map((entry) => [entry.position, entry.event])).toEqual([[firstAt, first], [secondAt, second]])
      expect(yield* log.head(ws.id)).toBe(secondAt)
    }))
})

layer(server, { timeout: "60 seconds" })("WebhookStore claims (PostgreSQL)", (it) => {
  it.effect("a claimer skips the deliveries another claimer's open transaction holds, without waiting; each goes to one", () =>
    Effect.gen(function*() {
      const store = yield* WebhookStore
      const { withTransaction } = yield* Transactor
      const ws = yield* seedWorkspace()
      const endpoint = yield* seedEndpoint(ws.id)
      const rows = [0, 1, 2, 3].map((i) => delivery(endpoint, { state: "pending", attempt_count: 0, next_attempt_at: minutes(-10 + i) }))
      yield* store.enqueue(rows)
      const claim = (limit: number) => store.claimDue({ now: T0, leaseUntil: minutes(5), limit })

      // Claimer A takes the two longest due and keeps its transaction (and the rows' locks) open until released.
      const claimedByA = yield* Deferred.make<ReadonlyArray<Delivery>>()
      const release = yield* Deferred.make<void>()
      const a = yield* Effect.fork(withTransaction(Effect.gen(function*() {
        yield* Deferred.succeed(claimedByA, yield* claim(2))
        yield* Deferred.await(release)
      })))
      const byA = yield* Deferred.await(claimedByA)
      expect(byA.map((row) => row.id)).toEqual([rows[0]!.id, rows[1]!.id])

      // Claimer B, on another connection, asks for all four: it gets the other two at once (SKIP LOCKED).
      const byB = yield* TestServices.provideLive(Effect.timeout(claim(4), "5 seconds"))
      expect(byB.map((row) => row.id)).toEqual([rows[2]!.id, rows[3]!.id])

      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(a)
      // Both claims committed with their leases: nothing is left to claim until the leases run out.
      expect(yield* claim(4)).toEqual([])
      const afterLease = yield* store.claimDue({ now: minutes(5), leaseUntil: minutes(10), limit: 4 })
      expect(afterLease.map((row) => row.id)).toEqual(rows.map((row) => row.id))
      yield* store.deleteByWorkspace(ws.id)
    }))
})
