/**
 * The in-memory store beyond the shared contract suites (test/store-memory.test.ts): how its transactions
 * behave with nested units and with fibers, and which unique key a refused insert names.
 */
import { CredentialStore, type DuplicateKey, MeetingStore, Transactor, UserStore } from "@convene/core"
import { layer } from "@convene/store-memory"
import { addEqualityTesters, describe, expect, layer as withLayer } from "@effect/vitest"
import { Deferred, Effect, Either, Fiber, Option } from "effect"
import { credential, email, meeting, seedCredential, seedUser, seedWorkspace, user } from "../contract/fixtures.js"

class Boom {
  readonly _tag = "Boom"
}

addEqualityTesters()

describe("store-memory transactions", () => {
  withLayer(layer)((it) => {
    it.effect("a nested unit that fails undoes only its own writes; the outer unit goes on and commits", () =>
      Effect.gen(function*() {
        const { withTransaction } = yield* Transactor
        const meetings = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const before = meeting(ws.id)
        const inner = meeting(ws.id)
        const after = meeting(ws.id)

        const failed = yield* withTransaction(Effect.gen(function*() {
          yield* meetings.insert(before)
          const exit = yield* Effect.either(withTransaction(Effect.gen(function*() {
            yield* meetings.insert(inner)
            expect(yield* meetings.get(ws.id, inner.id)).toEqual(Option.some(inner))
            return yield* Effect.fail(new Boom())
          })))
          expect(Option.isNone(yield* meetings.get(ws.id, inner.id))).toBe(true)
          expect(yield* meetings.get(ws.id, before.id)).toEqual(Option.some(before))
          yield* meetings.insert(after)
          return Either.isLeft(exit)
        }))

        expect(failed).toBe(true)
        expect(yield* meetings.get(ws.id, before.id)).toEqual(Option.some(before))
        expect(Option.isNone(yield* meetings.get(ws.id, inner.id))).toBe(true)
        expect(yield* meetings.get(ws.id, after.id)).toEqual(Option.some(after))
      }))

    it.effect("a fiber forked inside a unit and joined after the commit by another fiber leaves that fiber outside the unit", () =>
      Effect.gen(function*() {
        const { withTransaction } = yield* Transactor
        const meetings = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const row = meeting(ws.id)
        // A reader started beforehand, outside any unit: it reads what is committed when told to.
        const go = yield* Deferred.make<void>()
        const reader = yield* Effect.fork(Effect.zipRight(Deferred.await(go), meetings.get(ws.id, row.id)))

        // Another fiber runs a unit that starts background work and hands that work's fiber back.
        const runner = yield* Effect.fork(withTransaction(Effect.forkDaemon(Effect.void)))
        const background = yield* Fiber.join(runner)
        yield* Fiber.join(background)
        // Written outside any unit, so committed at once, not into the unit that already committed.
        yield* meetings.insert(row)

        yield* Deferred.succeed(go, undefined)
        expect(yield* Fiber.join(reader)).toEqual(Option.some(row))
      }))
  })
})

describe("store-memory unique keys", () => {
  withLayer(layer)((it) => {
    /** The constraint a refused insert names (the name PostgreSQL gives the same key, see store-pg's Migrations.ts). */
    const refusal = (insert: Effect.Effect<void, DuplicateKey>) =>
      Effect.map(Effect.flip(insert), (error) => error.constraint)

    it.effect("a user: by id users_pkey, by e-mail users_email_key", () =>
      Effect.gen(function*() {
        const users = yield* UserStore
        const ws = yield* seedWorkspace()
        const first = yield* seedUser(ws.id)
        expect(yield* refusal(users.insert(user(ws.id, { id: first.id, email: email() })))).toBe("users_pkey")
        expect(yield* refusal(users.insert(user(ws.id, { email: first.email })))).toBe("users_email_key")
      }))

    it.effect("a credential: by id credentials_pkey, keeping the stored one; by token hash credentials_token_hash_key", () =>
      Effect.gen(function*() {
        const credentials = yield* CredentialStore
        const ws = yield* seedWorkspace()
        const first = yield* seedCredential(ws.id)
        const sameId = credential(ws.id, { id: first.id, name: "impostor" })
        expect(yield* refusal(credentials.insert(sameId))).toBe("credentials_pkey")
        expect(yield* credentials.get(ws.id, first.id)).toEqual(Option.some(first))
        expect(Option.isNone(yield* credentials.findByHashWithOwner(sameId.token_hash))).toBe(true)

        expect(yield* refusal(credentials.insert(credential(ws.id, { token_hash: first.token_hash })))).toBe(
          "credentials_token_hash_key"
        )
      }))
  })
})
