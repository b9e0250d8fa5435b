import { Email, type StorePorts, UserId, UserStore } from "@convene/core"
import { addEqualityTesters, expect, layer } from "@effect/vitest"
import { Effect, Either, type Layer, Option, Schema } from "effect"
import { email, ids, minutes, seedUser, seedWorkspace, user, uuid } from "./fixtures.js"

export const suite = (name: string, storeLayer: Layer.Layer<StorePorts, unknown>) => {
  addEqualityTesters()

  layer(storeLayer)(`UserStore (${name})`, (it) => {
    it.effect("insert then get answers every field", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const ws = yield* seedWorkspace()
        const withPassword = user(ws.id, {
          name: "Grace Hopper",
          role: "OWNER",
          password_hash: "scrypt$N=16384,r=8,p=1$c2FsdA$aGFzaA",
          created_at: minutes(-5),
          updated_at: minutes(5)
        })
        const withoutPassword = user(ws.id, { role: "ADMIN", password_hash: null })
        yield* store.insert(withPassword)
        yield* store.insert(withoutPassword)
        expect(yield* store.get(withPassword.id)).toEqual(Option.some(withPassword))
        expect(yield* store.get(withoutPassword.id)).toEqual(Option.some(withoutPassword))
        expect(Option.isNone(yield* store.get(UserId.make(uuid())))).toBe(true)
      }))

    it.effect("e-mail addresses are unique across the installation: a second user with the same Email is DuplicateKey", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const a = yield* seedWorkspace()
        const b = yield* seedWorkspace()
        const address = email("taken")
        const first = yield* seedUser(a.id, { email: address })

        const sameWorkspace = user(a.id, { email: address })
        const otherWorkspace = user(b.id, { email: address, name: "Someone else" })
        const refused = yield* Effect.either(store.insert(sameWorkspace))
        const refusedToo = yield* Effect.either(store.insert(otherWorkspace))

        expect(Either.isLeft(refused) && refused.left._tag).toBe("DuplicateKey")
        expect(Either.isLeft(refusedToo) && refusedToo.left._tag).toBe("DuplicateKey")
        expect(Option.isNone(yield* store.get(sameWorkspace.id))).toBe(true)
        expect(Option.isNone(yield* store.get(otherWorkspace.id))).toBe(true)
        expect(yield* store.findByEmail(address)).toEqual(Option.some(first))
      }))

    it.effect("a user id is unique too (DuplicateKey), and the refused row changes nothing", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const ws = yield* seedWorkspace()
        const first = yield* seedUser(ws.id)
        const clash = user(ws.id, { id: first.id, name: "Impostor" })
        const refused = yield* Effect.either(store.insert(clash))
        expect(Either.isLeft(refused) && refused.left._tag).toBe("DuplicateKey")
        expect(yield* store.get(first.id)).toEqual(Option.some(first))
        expect(Option.isNone(yield* store.findByEmail(clash.email))).toBe(true)
      }))

    it.effect("racing inserts of one address: exactly one is stored", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const ws = yield* seedWorkspace()
        const address = email("race")
        const rows = Array.from({ length: 10 }, () => user(ws.id, { email: address }))
        const outcomes = yield* Effect.all(rows.map((row) => Effect.either(store.insert(row))), { concurrency: "unbounded" })
        expect(outcomes.filter(Either.isRight)).toHaveLength(1)
        expect(outcomes.filter(Either.isLeft).map((refused) => refused.left._tag)).toEqual(Array(9).fill("DuplicateKey"))
        const winner = rows[outcomes.findIndex(Either.isRight)]!
        expect(yield* store.findByEmail(address)).toEqual(Option.some(winner))
      }))

    it.effect("findByEmail is exact on the normalised Email and answers none for an unknown address", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const ws = yield* seedWorkspace()
        const local = `ada.${uuid()}`
        const stored = yield* seedUser(ws.id, { email: Email.make(`${local}@example.com`) })
        const neighbour = yield* seedUser(ws.id, { email: Email.make(`${local}@example.org`) })
        expect(yield* store.findByEmail(stored.email)).toEqual(Option.some(stored))
        expect(yield* store.findByEmail(Schema.decodeUnknownSync(Email)(`  ${local.toUpperCase()}@Example.COM `)))
          .toEqual(Option.some(stored))
        expect(yield* store.findByEmail(neighbour.email)).toEqual(Option.some(neighbour))
        expect(Option.isNone(yield* store.findByEmail(Email.make(`${local}@example.co`)))).toBe(true)
        expect(Option.isNone(yield* store.findByEmail(Email.make(`x${local}@example.com`)))).toBe(true)
        expect(Option.isNone(yield* store.findByEmail(email("nobody")))).toBe(true)
        // Stores compare with plain equality: an address that skipped normalisation matches nothing.
        const unnormalised = Email.make(`${local.toUpperCase()}@EXAMPLE.COM`, { disableValidation: true })
        expect(Option.isNone(yield* store.findByEmail(unnormalised))).toBe(true)
      }))

    it.effect("getMany answers the workspace's users among the ids only", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const ws = yield* seedWorkspace()
        const other = yield* seedWorkspace()
        const one = yield* seedUser(ws.id)
        const two = yield* seedUser(ws.id)
        const notAsked = yield* seedUser(ws.id)
        const stranger = yield* seedUser(other.id)

        const found = yield* store.getMany(ws.id, [two.id, stranger.id, UserId.make(uuid()), one.id])
        expect([...ids(found)].sort()).toEqual([one.id, two.id].sort())
        expect(found.find((u) => u.id === one.id)).toEqual(one)
        expect(ids(found)).not.toContain(notAsked.id)
        expect(yield* store.getMany(ws.id, [])).toEqual([])
        expect(yield* store.getMany(other.id, [one.id, two.id])).toEqual([])
      }))
  })
}
