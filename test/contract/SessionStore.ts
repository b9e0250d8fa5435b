import { SessionId, SessionStore, type StorePorts, Transactor, User, UserStore } from "@convene/core"
import { addEqualityTesters, expect, layer } from "@effect/vitest"
import { Cause, DateTime, Effect, Either, Exit, type Layer, Option } from "effect"
import { minutes, rolledBack, seedSession, seedUser, seedWorkspace, session, uuid } from "./fixtures.js"

class Boom {
  readonly _tag = "Boom"
}

/** A fresh failure key (keys are the installation's: each test counts its own). */
const key = (tag: string) => `${tag}:${uuid()}`

/** Records a failed attempt under `keys` at `at`, with no limit in its way. */
const failed = (keys: ReadonlyArray<string>, at: DateTime.Utc) =>
  Effect.flatMap(SessionStore, (store) =>
    store.recordAttempt({ id: uuid(), limits: keys.map((key) => ({ key, limit: Number.MAX_SAFE_INTEGER })), at, since: at }))

/** How many failures `failuresSince` answers for each key (a key it leaves out: 0). */
const counted = (counts: ReadonlyMap<string, number>, keys: ReadonlyArray<string>) => keys.map((k) => counts.get(k) ?? 0)

export const suite = (name: string, storeLayer: Layer.Layer<StorePorts, unknown>) => {
  addEqualityTesters()

  layer(storeLayer)(`SessionStore (${name})`, (it) => {
    it.effect("insert then findByHash answers the session with its user's current row", () =>
      Effect.gen(function*() {
        const store = yield* SessionStore
        const users = yield* UserStore
        const ws = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id, { password_hash: "scrypt$hash" })
        const live = yield* seedSession(ann, { created_at: minutes(-1) })
        const revoked = yield* seedSession(ann, { revoked_at: minutes(30), expires_at: minutes(60) })
        expect(yield* store.findByHash(live.token_hash)).toEqual(Option.some({ session: live, user: Option.some(ann) }))
        expect(yield* store.findByHash(revoked.token_hash)).toEqual(Option.some({ session: revoked, user: Option.some(ann) }))
        expect(Option.isNone(yield* store.findByHash(session(ann).token_hash))).toBe(true)

        const renamed = new User({ ...ann, name: "Ann Renamed", role: "ADMIN", updated_at: minutes(2) })
        yield* users.update(renamed)
        expect(yield* store.findByHash(live.token_hash)).toEqual(Option.some({ session: live, user: Option.some(renamed) }))
      }))

    it.effect("findByHash answers the session without a user once the user is deleted", () =>
      Effect.gen(function*() {
        const store = yield* SessionStore
        const users = yield* UserStore
        const ws = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id)
        const bob = yield* seedUser(ws.id)
        const annsSession = yield* seedSession(ann)
        const bobsSession = yield* seedSession(bob)
        // Inside the unit that deletes the user (core deletes their sessions in it too, before it commits).
        const seen = yield* rolledBack(Effect.gen(function*() {
          expect(yield* users.delete(ann.id)).toBe(true)
          return [yield* store.findByHash(annsSession.token_hash), yield* store.findByHash(bobsSession.token_hash)] as const
        }))
        expect(seen).toEqual([
          Option.some({ session: annsSession, user: Option.none() }),
          Option.some({ session: bobsSession, user: Option.some(bob) })
        ])
        expect(yield* store.findByHash(annsSession.token_hash)).toEqual(Option.some({ session: annsSession, user: Option.some(ann) }))
      }))

    it.effect("session ids and token hashes are unique", () =>
      Effect.gen(function*() {
        const store = yield* SessionStore
        const ws = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id)
        const first = yield* seedSession(ann)
        const sameHash = session(ann, { token_hash: first.token_hash })
        const sameId = session(ann, { id: first.id })
        for (const clash of [sameHash, sameId]) {
          const refused = yield* Effect.either(store.insert(clash))
          expect(Either.isLeft(refused) && refused.left._tag).toBe("DuplicateKey")
        }
        expect(Option.isNone(yield* store.findByHash(sameId.token_hash))).toBe(true)
        expect(yield* store.findByHash(first.token_hash)).toEqual(Option.some({ session: first, user: Option.some(ann) }))
      }))

    it.effect("revoke marks the session once: a later revoke keeps the first time", () =>
      Effect.gen(function*() {
        const store = yield* SessionStore
        const ws = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id)
        const stored = yield* seedSession(ann)
        const other = yield* seedSession(ann)
        yield* store.revoke(stored.id, minutes(5))
        yield* store.revoke(stored.id, minutes(6))
        yield* store.revoke(SessionId.make(uuid()), minutes(6))
        const found = Option.getOrThrow(yield* store.findByHash(stored.token_hash))
        expect(found.session).toEqual(session(ann, { ...stored, revoked_at: minutes(5) }))
        expect(found.session.revoked_at && DateTime.toEpochMillis(found.session.revoked_at)).toBe(DateTime.toEpochMillis(minutes(5)))
        expect(Option.map(yield* store.findByHash(other.token_hash), (f) => f.session)).toEqual(Option.some(other))
      }))

    it.effect("purge deletes the sessions that expired or were revoked before the instant, and keeps the rest", () =>
      Effect.gen(function*() {
        const store = yield* SessionStore
        const ws = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id)
        const before = minutes(60 * 24 * 365 * 10)
        const expired = yield* seedSession(ann, { expires_at: minutes(-1, before) })
        const revoked = yield* seedSession(ann, { expires_at: minutes(60, before), revoked_at: minutes(-1, before) })
        const expiresAtTheInstant = yield* seedSession(ann, { expires_at: before })
        const revokedAtTheInstant = yield* seedSession(ann, { expires_at: minutes(60, before), revoked_at: before })
        const live = yield* seedSession(ann, { expires_at: minutes(60, before) })
        yield* store.purge(before)
        expect(Option.isNone(yield* store.findByHash(expired.token_hash))).toBe(true)
        expect(Option.isNone(yield* store.findByHash(revoked.token_hash))).toBe(true)
        for (const kept of [expiresAtTheInstant, revokedAtTheInstant, live]) {
          expect(Option.map(yield* store.findByHash(kept.token_hash), (f) => f.session)).toEqual(Option.some(kept))
        }
        // The hash and the id are free again.
        yield* seedSession(ann, { id: expired.id, token_hash: expired.token_hash, expires_at: minutes(60, before) })
      }))

    it.effect("deleteByUser deletes the user's sessions only; deleteByWorkspace the workspace's", () =>
      Effect.gen(function*() {
        const store = yield* SessionStore
        const ws = yield* seedWorkspace()
        const other = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id)
        const bob = yield* seedUser(ws.id)
        const carol = yield* seedUser(other.id)
        const anns = [yield* seedSession(ann), yield* seedSession(ann, { revoked_at: minutes(1) })]
        const bobs = yield* seedSession(bob)
        const carols = yield* seedSession(carol)

        yield* store.deleteByUser(ann.id)
        for (const s of anns) expect(Option.isNone(yield* store.findByHash(s.token_hash))).toBe(true)
        expect(Option.map(yield* store.findByHash(bobs.token_hash), (f) => f.session)).toEqual(Option.some(bobs))
        yield* seedSession(ann, { token_hash: anns[0]!.token_hash })

        yield* store.deleteByWorkspace(ws.id)
        expect(Option.isNone(yield* store.findByHash(bobs.token_hash))).toBe(true)
        expect(Option.isNone(yield* store.findByHash(anns[0]!.token_hash))).toBe(true)
        expect(Option.map(yield* store.findByHash(carols.token_hash), (f) => f.session)).toEqual(Option.some(carols))
      }))

    it.effect("failuresSince counts each key's failures at or after the instant", () =>
      Effect.gen(function*() {
        const store = yield* SessionStore
        const [account, address, quiet] = [key("account"), key("address"), key("account")]
        yield* failed([account, address], minutes(0))
        yield* failed([account], minutes(5))
        yield* failed([account, address], minutes(10))
        yield* failed([], minutes(10))

        expect(counted(yield* store.failuresSince([account, address, quiet], minutes(0)), [account, address, quiet])).toEqual([3, 2, 0])
        expect(counted(yield* store.failuresSince([account, address, quiet], minutes(5)), [account, address, quiet])).toEqual([2, 1, 0])
        expect(counted(yield* store.failuresSince([account, address], minutes(6)), [account, address])).toEqual([1, 1])
        expect(counted(yield* store.failuresSince([account, address], minutes(11)), [account, address])).toEqual([0, 0])
        const onlyAddress = yield* store.failuresSince([address], minutes(0))
        expect([...onlyAddress.keys()]).toEqual([address])
        expect((yield* store.failuresSince([], minutes(0))).size).toBe(0)
      }))

    it.effect("recordAttempt records the attempt under each key while every key is under its limit, and nothing once one is at it", () =>
      Effect.gen(function*() {
        const store = yield* SessionStore
        const [account, other, address] = [key("account"), key("account"), key("address")]
        const attempt = (accountKey: string, at: DateTime.Utc) =>
          store.recordAttempt({
            id: uuid(),
            limits: [{ key: accountKey, limit: 2 }, { key: address, limit: 3 }],
            at,
            since: minutes(-15, at)
          })
        expect(yield* attempt(account, minutes(0))).toBe(true)
        expect(yield* attempt(account, minutes(1))).toBe(true)
        // The account is at its limit: refused, and not counted under the address either.
        expect(yield* attempt(account, minutes(2))).toBe(false)
        expect(counted(yield* store.failuresSince([account, address], minutes(0)), [account, address])).toEqual([2, 2])
        // Another account from the same address, until the address is at its limit.
        expect(yield* attempt(other, minutes(2))).toBe(true)
        expect(yield* attempt(other, minutes(3))).toBe(false)
        expect(counted(yield* store.failuresSince([account, other, address], minutes(0)), [account, other, address])).toEqual([2, 1, 3])
        // Attempts before `since` leave room again: at 15 minutes the first one is out of the window.
        expect(yield* attempt(other, minutes(15))).toBe(false)
        expect(yield* attempt(other, minutes(16))).toBe(true)
        // No limit at all records nothing and lets the attempt in.
        expect(yield* store.recordAttempt({ id: uuid(), limits: [], at: minutes(0), since: minutes(0) })).toBe(true)
      }))

    it.effect("racing recordAttempt: however many attempts race, no more than the limit get in", () =>
      Effect.gen(function*() {
        const store = yield* SessionStore
        const [account, address] = [key("account"), key("address")]
        const attempt = (accountKey: string) =>
          store.recordAttempt({
            id: uuid(),
            limits: [{ key: accountKey, limit: 5 }, { key: address, limit: 20 }],
            at: minutes(0),
            since: minutes(-15)
          })
        const one = yield* Effect.all(Array.from({ length: 30 }, () => attempt(account)), { concurrency: "unbounded" })
        expect(one.filter(Boolean)).toHaveLength(5)
        expect(counted(yield* store.failuresSince([account, address], minutes(-15)), [account, address])).toEqual([5, 5])
        // Spread over accounts, the address's limit holds the same way.
        const spread = yield* Effect.all(Array.from({ length: 30 }, () => attempt(key("account"))), { concurrency: "unbounded" })
        expect(spread.filter(Boolean)).toHaveLength(15)
        expect(counted(yield* store.failuresSince([address], minutes(-15)), [address])).toEqual([20])
      }))

    it.effect("forgetAttempt forgets that attempt under every key, and no other", () =>
      Effect.gen(function*() {
        const store = yield* SessionStore
        const [account, address] = [key("account"), key("address")]
        const [kept, forgotten] = [uuid(), uuid()]
        const limits = [{ key: account, limit: 10 }, { key: address, limit: 10 }]
        expect(yield* store.recordAttempt({ id: kept, limits, at: minutes(0), since: minutes(-15) })).toBe(true)
        expect(yield* store.recordAttempt({ id: forgotten, limits, at: minutes(1), since: minutes(-15) })).toBe(true)
        yield* store.forgetAttempt(forgotten)
        yield* store.forgetAttempt(uuid())
        expect(counted(yield* store.failuresSince([account, address], minutes(-15)), [account, address])).toEqual([1, 1])
        yield* store.forgetAttempt(kept)
        expect(counted(yield* store.failuresSince([account, address], minutes(-15)), [account, address])).toEqual([0, 0])
      }))

    it.effect("racing failures: every failure is counted", () =>
      Effect.gen(function*() {
        const store = yield* SessionStore
        const [account, address] = [key("account"), key("address")]
        yield* Effect.all(
          Array.from({ length: 20 }, (_, i) => failed([account, address], minutes(i % 3))),
          { concurrency: "unbounded" }
        )
        expect(counted(yield* store.failuresSince([account, address], minutes(0)), [account, address])).toEqual([20, 20])
      }))

    it.effect("clearFailures forgets the failures of one key only", () =>
      Effect.gen(function*() {
        const store = yield* SessionStore
        const [account, address] = [key("account"), key("address")]
        yield* failed([account, address], minutes(0))
        yield* failed([account, address], minutes(1))
        yield* store.clearFailures(account)
        expect(counted(yield* store.failuresSince([account, address], minutes(0)), [account, address])).toEqual([0, 2])
        yield* failed([account], minutes(2))
        expect(counted(yield* store.failuresSince([account, address], minutes(0)), [account, address])).toEqual([1, 2])
        yield* store.clearFailures(key("account"))
      }))

    it.effect("purgeFailures deletes the failures older than the instant, of every key, and keeps the rest", () =>
      Effect.gen(function*() {
        const store = yield* SessionStore
        const [account, address] = [key("account"), key("address")]
        const before = minutes(60 * 24 * 365 * 10)
        yield* failed([account, address], minutes(-1, before))
        yield* failed([account], before)
        yield* failed([address], minutes(1, before))
        yield* store.purgeFailures(before)
        expect(counted(yield* store.failuresSince([account, address], minutes(-60, before)), [account, address])).toEqual([1, 1])
      }))

    it.effect("a failing unit of work leaves no trace of its session writes", () =>
      Effect.gen(function*() {
        const { withTransaction } = yield* Transactor
        const store = yield* SessionStore
        const ws = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id)
        const bob = yield* seedUser(ws.id)
        const existing = yield* seedSession(ann)
        const bobs = yield* seedSession(bob)
        const fresh = session(ann)
        const [account, address] = [key("account"), key("address")]
        yield* failed([address], minutes(0))

        const exit = yield* Effect.exit(withTransaction(Effect.gen(function*() {
          yield* store.insert(fresh)
          yield* store.revoke(existing.id, minutes(1))
          yield* store.deleteByUser(bob.id)
          yield* failed([account], minutes(1))
          yield* store.clearFailures(address)
          expect(counted(yield* store.failuresSince([account, address], minutes(0)), [account, address])).toEqual([1, 0])
          return yield* Effect.fail(new Boom())
        })))

        expect(Exit.isFailure(exit) && Option.map(Cause.failureOption(exit.cause), (e) => e._tag)).toEqual(Option.some("Boom"))
        expect(Option.isNone(yield* store.findByHash(fresh.token_hash))).toBe(true)
        expect(Option.map(yield* store.findByHash(existing.token_hash), (f) => f.session)).toEqual(Option.some(existing))
        expect(Option.map(yield* store.findByHash(bobs.token_hash), (f) => f.session)).toEqual(Option.some(bobs))
        expect(counted(yield* store.failuresSince([account, address], minutes(0)), [account, address])).toEqual([0, 1])
      }))
  })
}
