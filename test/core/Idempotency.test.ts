import {
  CreateWorkspace,
  fingerprint,
  Idempotency,
  IdempotencyRecord,
  IdempotencyStore,
  type IdempotentRequest,
  StoredResponse,
  type WorkspaceId,
  WorkspaceStore,
  Workspaces
} from "@convene/core"
import { describe, expect, layer } from "@effect/vitest"
import { DateTime, Deferred, Effect, Exit, FastCheck, Fiber, Option, Ref, TestClock } from "effect"
import { CoreLive } from "./fixtures.js"

const created = (body: string) => new StoredResponse({ status: 201, body })

/** A creating request in a scope of its own; `fields` override any part. */
const request = (fields: Partial<IdempotentRequest> = {}): IdempotentRequest => ({
  scope: crypto.randomUUID(),
  key: "k",
  method: "POST",
  path: "/v1/meetings",
  query: [],
  body: { title: "Weekly sync", start_time: "2026-03-02T09:00:00Z" },
  ...fields
})

/** The claim `of` makes when it starts (as the Idempotency service makes it), left by another process. */
const pending = (of: IdempotentRequest, now: DateTime.Utc) =>
  Effect.map(fingerprint(of), (digest) =>
    new IdempotencyRecord({
      scope: of.scope,
      key: of.key,
      fingerprint: digest,
      response: null,
      created_at: now,
      expires_at: DateTime.addDuration(now, "5 minutes")
    }))

describe("Idempotency", () => {
  layer(CoreLive)((it) => {
    it.effect("replays the first 2xx of an identical repeat and runs the work once", () =>
      Effect.gen(function*() {
        const idempotency = yield* Idempotency
        const runs = yield* Ref.make(0)
        const work = Effect.as(Ref.update(runs, (n) => n + 1), created("{\"id\":1}"))
        const original = request({ key: "k-1", query: [["a", "1"], ["b", "2"], ["a", "0"]] })
        const first = yield* idempotency.run(original, work)
        // The same request: method in another case, body keys and query parameters in another order.
        const second = yield* idempotency.run(
          {
            ...original,
            method: "post",
            query: [["b", "2"], ["a", "0"], ["a", "1"]],
            body: { start_time: "2026-03-02T09:00:00Z", title: "Weekly sync" }
          },
          work
        )
        expect(first).toEqual({ replayed: false, response: created("{\"id\":1}") })
        expect(second).toEqual({ replayed: true, response: created("{\"id\":1}") })
        expect(yield* Ref.get(runs)).toBe(1)
      }))

    it.effect("rejects the same key with another fingerprint (422) and keeps keys apart per scope", () =>
      Effect.gen(function*() {
        const idempotency = yield* Idempotency
        const first = request({ body: { title: "a" }, query: [["notify", "yes"]] })
        yield* idempotency.run(first, Effect.succeed(created("a")))
        const changes: ReadonlyArray<Partial<IdempotentRequest>> = [
          { body: { title: "b" } },
          { body: { title: "a", extra: null } },
          { query: [["notify", "no"]] },
          { query: [] },
          { path: "/v1/meetings/search" },
          { method: "PUT" }
        ]
        for (const change of changes) {
          const reuse = yield* Effect.flip(idempotency.run({ ...first, ...change }, Effect.succeed(created("b"))))
          expect(reuse._tag).toBe("IdempotencyKeyReuse")
        }
        const other = yield* idempotency.run({ ...first, scope: crypto.randomUUID(), body: { title: "b" } }, Effect.succeed(created("b")))
        expect(other).toEqual({ replayed: false, response: created("b") })
        expect(yield* idempotency.run(first, Effect.succeed(created("never")))).toEqual({ replayed: true, response: created("a") })
      }))

    it.effect("answers a duplicate while the first is in flight (claimed, not completed) with a conflict and Retry-After", () =>
      Effect.gen(function*() {
        const idempotency = yield* Idempotency
        const store = yield* IdempotencyStore
        const now = yield* DateTime.now
        const busy = request({ key: "busy" })
        // Another process's request holds the claim and has not finished yet.
        yield* store.begin(yield* pending(busy, now), now)
        const duplicate = yield* Effect.flip(idempotency.run(busy, Effect.succeed(created("x"))))
        expect(duplicate._tag).toBe("IdempotencyConflict")
        expect(duplicate._tag === "IdempotencyConflict" && duplicate.retry_after_seconds).toBeGreaterThan(0)
      }))

    it.effect("runs the work once when duplicates race, each answered with the first response or a conflict", () =>
      Effect.gen(function*() {
        const idempotency = yield* Idempotency
        const gate = yield* Deferred.make<void>()
        const runs = yield* Ref.make(0)
        const race = request({ key: "race" })
        const work = Effect.zipRight(Ref.update(runs, (n) => n + 1), Effect.as(Deferred.await(gate), created("done")))
        const racers = yield* Effect.forEach([1, 2, 3, 4, 5], () => Effect.fork(Effect.either(idempotency.run(race, work))))
        yield* Effect.yieldNow()
        yield* Deferred.succeed(gate, undefined)
        const outcomes = yield* Effect.forEach(racers, Fiber.join)
        expect(yield* Ref.get(runs)).toBe(1)
        for (const outcome of outcomes) {
          if (outcome._tag === "Right") expect(outcome.right.response.body).toBe("done")
          else expect(outcome.left._tag).toBe("IdempotencyConflict")
        }
        expect(outcomes.filter((o) => o._tag === "Right" && !o.right.replayed)).toHaveLength(1)
      }))

    it.effect("stores only 2xx answers: 200 and 299 are replayed, 199 and 300 release the key", () =>
      Effect.gen(function*() {
        const idempotency = yield* Idempotency
        for (const [status, replayed] of [[200, true], [299, true], [199, false], [300, false]] as const) {
          const first = request()
          const answer = new StoredResponse({ status, body: `status ${status}` })
          expect(yield* idempotency.run(first, Effect.succeed(answer))).toEqual({ replayed: false, response: answer })
          const again = yield* idempotency.run(first, Effect.succeed(created("second run")))
          expect(again, `after a ${status}`).toEqual(
            replayed ? { replayed: true, response: answer } : { replayed: false, response: created("second run") }
          )
        }
      }))

    it.effect("releases the key when the work fails, so a corrected retry runs", () =>
      Effect.gen(function*() {
        const idempotency = yield* Idempotency
        const retry = request({ key: "retry" })
        const failed = yield* Effect.exit(idempotency.run(retry, Effect.fail("boom" as const)))
        expect(Exit.isFailure(failed)).toBe(true)
        const retried = yield* idempotency.run(retry, Effect.succeed(created("ok")))
        expect(retried.replayed).toBe(false)
      }))

    it.effect("rolls the work back with the record when it fails after writing", () =>
      Effect.gen(function*() {
        const idempotency = yield* Idempotency
        const workspaces = yield* Workspaces
        const store = yield* WorkspaceStore
        const createdId = yield* Ref.make(Option.none<WorkspaceId>())
        const work = Effect.gen(function*() {
          const workspace = yield* workspaces.create(new CreateWorkspace({ name: "Doomed", plan: "FREE" }))
          yield* Ref.set(createdId, Option.some(workspace.id))
          expect(Option.isSome(yield* store.get(workspace.id))).toBe(true)
          return yield* Effect.fail("after the write" as const)
        })
        const tx = request({ key: "tx" })
        expect(yield* Effect.flip(idempotency.run(tx, work))).toBe("after the write")
        const id = Option.getOrThrow(yield* Ref.get(createdId))
        expect(Option.isNone(yield* store.get(id))).toBe(true)
        // The key was released with it: the retry runs.
        expect((yield* idempotency.run(tx, Effect.succeed(created("ok")))).replayed).toBe(false)
      }))

    it.effect("keeps a completed record for 24 hours", () =>
      Effect.gen(function*() {
        const idempotency = yield* Idempotency
        const day = request({ key: "day" })
        yield* idempotency.run(day, Effect.succeed(created("first")))
        yield* TestClock.adjust("23 hours")
        expect(yield* idempotency.run(day, Effect.succeed(created("second")))).toEqual({ replayed: true, response: created("first") })
        yield* TestClock.adjust("1 hour")
        const after = yield* idempotency.run(day, Effect.succeed(created("second")))
        expect(after).toEqual({ replayed: false, response: created("second") })
      }))

    it.effect("frees a pending claim left by a crashed request after 5 minutes", () =>
      Effect.gen(function*() {
        const idempotency = yield* Idempotency
        const store = yield* IdempotencyStore
        const now = yield* DateTime.now
        const crash = request({ key: "crash" })
        // A request that claimed the key and then died: pending, never completed, never released.
        yield* store.begin(yield* pending(crash, now), now)
        yield* TestClock.adjust("4 minutes")
        expect((yield* Effect.flip(idempotency.run(crash, Effect.succeed(created("x")))))._tag).toBe("IdempotencyConflict")
        yield* TestClock.adjust("1 minute")
        expect((yield* idempotency.run(crash, Effect.succeed(created("x")))).replayed).toBe(false)
      }))

    it.effect("validates keys: 1 to 255 printable ASCII characters, not only white space", () =>
      Effect.gen(function*() {
        const idempotency = yield* Idempotency
        for (const key of ["", "   ", "x".repeat(256), "caf\u00e9", "tab\there"]) {
          const error = yield* Effect.flip(idempotency.run(request({ key }), Effect.succeed(created("x"))))
          expect(error._tag).toBe("IdempotencyKeyInvalid")
        }
        const ok = yield* idempotency.run(request({ key: "x".repeat(255) }), Effect.succeed(created("x")))
        expect(ok.replayed).toBe(false)
      }))

    it.effect("purges expired records", () =>
      Effect.gen(function*() {
        const idempotency = yield* Idempotency
        yield* idempotency.run(request({ key: "old" }), Effect.succeed(created("x")))
        yield* TestClock.adjust("25 hours")
        expect(yield* idempotency.purgeExpired()).toBeGreaterThanOrEqual(1)
      }))
  })

  layer(CoreLive)((it) => {
    // Any interleaving of keyed requests (some concurrent, some repeated, some with another body) yields at
    // most one execution per key, and every success for a key carries that key's first response.
    it.effect.prop(
      "at most one resource per key, whatever the sequence",
      [FastCheck.array(FastCheck.record({ key: FastCheck.constantFrom("a", "b", "c"), body: FastCheck.constantFrom("x", "y") }), {
        minLength: 1,
        maxLength: 30
      })],
      ([requests]) =>
        Effect.gen(function*() {
          const idempotency = yield* Idempotency
          const scope = crypto.randomUUID()
          const executions = yield* Ref.make<Array<string>>([])
          const outcomes = yield* Effect.forEach(requests, (r, i) =>
            idempotency.run(
              request({ scope, key: r.key, body: { title: r.body } }),
              Effect.as(Ref.update(executions, (xs) => [...xs, r.key]), created(`${r.key}:${r.body}:${i}`))
            ).pipe(Effect.either), { concurrency: 4 })
          const ran = yield* Ref.get(executions)
          for (const key of ["a", "b", "c"]) expect(ran.filter((k) => k === key).length).toBeLessThanOrEqual(1)
          const bodies = new Map<string, string>()
          outcomes.forEach((outcome, i) => {
            if (outcome._tag === "Left") return
            const key = requests[i]!.key
            const seen = bodies.get(key)
            if (seen === undefined) bodies.set(key, outcome.right.response.body)
            else expect(outcome.right.response.body).toBe(seen)
          })
        }),
      { fastCheck: { numRuns: 40 } }
    )
  })
})
