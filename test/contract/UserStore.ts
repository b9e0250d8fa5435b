import { Email, type StorePorts, UserId, UserStore } from "@convene/core"
import { addEqualityTesters, expect, layer } from "@effect/vitest"
import { Effect, Either, type Layer, Option, Schema } from "effect"
import { at, email, ids, minutes, seedUser, seedWorkspace, sortedIds, user, uuid } from "./fixtures.js"

const everything = { limit: 100, offset: 0 }

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

    it.effect("update replaces the stored fields; a changed e-mail moves in the index and frees the old one", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const ws = yield* seedWorkspace()
        const original = yield* seedUser(ws.id, { role: "MEMBER", password_hash: null })
        const changed = user(ws.id, {
          id: original.id,
          email: email("moved"),
          name: "Grace Hopper",
          role: "ADMIN",
          password_hash: "scrypt$N=16384,r=8,p=1$c2FsdA$aGFzaA",
          created_at: original.created_at,
          updated_at: minutes(10)
        })
        yield* store.update(changed)
        expect(yield* store.get(original.id)).toEqual(Option.some(changed))
        expect(yield* store.findByEmail(changed.email)).toEqual(Option.some(changed))
        expect(Option.isNone(yield* store.findByEmail(original.email))).toBe(true)
        const newcomer = yield* seedUser(ws.id, { email: original.email })
        expect(yield* store.findByEmail(original.email)).toEqual(Option.some(newcomer))

        const cleared = user(ws.id, { ...changed, password_hash: null, role: "OWNER", updated_at: minutes(20) })
        yield* store.update(cleared)
        expect(yield* store.get(original.id)).toEqual(Option.some(cleared))
      }))

    it.effect("update to an address another user has is DuplicateKey and changes nothing; of an unknown id, nothing", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const ws = yield* seedWorkspace()
        const a = yield* seedUser(ws.id)
        const b = yield* seedUser(ws.id)
        const refused = yield* Effect.either(store.update(user(ws.id, { ...b, email: a.email, name: "Impostor" })))
        expect(Either.isLeft(refused) && refused.left._tag).toBe("DuplicateKey")
        expect(yield* store.get(b.id)).toEqual(Option.some(b))
        expect(yield* store.findByEmail(a.email)).toEqual(Option.some(a))
        expect(yield* store.findByEmail(b.email)).toEqual(Option.some(b))

        const ghost = user(ws.id)
        yield* store.update(ghost)
        expect(Option.isNone(yield* store.get(ghost.id))).toBe(true)
        expect(Option.isNone(yield* store.findByEmail(ghost.email))).toBe(true)
      }))

    it.effect("list answers a workspace's users, or the installation's, newest first, ties by id descending", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const ws = yield* seedWorkspace()
        const other = yield* seedWorkspace()
        const empty = yield* seedWorkspace()
        // Far in the future, so that these come first among the installation's users.
        const far = at("2998-01-01T00:00:00.000Z")
        const [low, high] = sortedIds(2).map((id) => UserId.make(id))
        const oldest = yield* seedUser(ws.id, { created_at: minutes(-1, far) })
        const tieLow = yield* seedUser(ws.id, { id: low!, created_at: far })
        const tieHigh = yield* seedUser(other.id, { id: high!, created_at: far })
        const newest = yield* seedUser(ws.id, { created_at: minutes(1, far), role: "OWNER", password_hash: "scrypt$x" })

        const own = yield* store.list({ workspaceId: ws.id }, everything)
        expect(ids(own.items)).toEqual(ids([newest, tieLow, oldest]))
        expect(own.items[0]).toEqual(newest)
        expect(own.total).toBe(3)
        expect(yield* store.list({ workspaceId: ws.id }, { limit: 1, offset: 1 })).toEqual({ items: [tieLow], total: 3 })
        expect(yield* store.list({ workspaceId: ws.id }, { limit: 1, offset: 5 })).toEqual({ items: [], total: 3 })
        expect(yield* store.list({ workspaceId: empty.id }, everything)).toEqual({ items: [], total: 0 })

        const all = yield* store.list({}, { limit: 4, offset: 0 })
        expect(ids(all.items)).toEqual(ids([newest, tieHigh, tieLow, oldest]))
        expect(all.total).toBeGreaterThanOrEqual(4)
      }))

    it.effect("list narrows to one role, within the workspace, and counts only those", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const ws = yield* seedWorkspace()
        const other = yield* seedWorkspace()
        const first = yield* seedUser(ws.id, { role: "OWNER", created_at: minutes(1) })
        const second = yield* seedUser(ws.id, { role: "OWNER", created_at: minutes(2) })
        const admin = yield* seedUser(ws.id, { role: "ADMIN", created_at: minutes(3) })
        yield* seedUser(other.id, { role: "OWNER" })
        const owners = yield* store.list({ workspaceId: ws.id, role: "OWNER" }, everything)
        expect(ids(owners.items)).toEqual(ids([second, first]))
        expect(owners.total).toBe(2)
        expect(yield* store.list({ workspaceId: ws.id, role: "OWNER" }, { limit: 1, offset: 0 })).toEqual({ items: [second], total: 2 })
        expect(yield* store.list({ workspaceId: ws.id, role: "ADMIN" }, everything)).toEqual({ items: [admin], total: 1 })
        expect(yield* store.list({ workspaceId: ws.id, role: "MEMBER" }, everything)).toEqual({ items: [], total: 0 })
      }))

    it.effect("countByWorkspace counts the users of each given workspace only", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const ws = yield* seedWorkspace()
        const other = yield* seedWorkspace()
        const empty = yield* seedWorkspace()
        const notAsked = yield* seedWorkspace()
        yield* seedUser(ws.id)
        yield* seedUser(ws.id)
        yield* seedUser(other.id)
        yield* seedUser(notAsked.id)

        const counts = yield* store.countByWorkspace([ws.id, other.id, empty.id])
        expect(counts.get(ws.id)).toBe(2)
        expect(counts.get(other.id)).toBe(1)
        expect(counts.get(empty.id) ?? 0).toBe(0)
        expect(counts.has(notAsked.id)).toBe(false)
        expect((yield* store.countByWorkspace([])).size).toBe(0)
      }))

    it.effect("delete removes the user and frees the address, answers whether it existed", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const ws = yield* seedWorkspace()
        const doomed = yield* seedUser(ws.id)
        const kept = yield* seedUser(ws.id)
        expect(yield* store.delete(doomed.id)).toBe(true)
        expect(yield* store.delete(doomed.id)).toBe(false)
        expect(yield* store.delete(UserId.make(uuid()))).toBe(false)
        expect(Option.isNone(yield* store.get(doomed.id))).toBe(true)
        expect(Option.isNone(yield* store.findByEmail(doomed.email))).toBe(true)
        expect(yield* store.getMany(ws.id, [doomed.id, kept.id])).toEqual([kept])
        expect(yield* store.list({ workspaceId: ws.id }, everything)).toEqual({ items: [kept], total: 1 })
        const again = yield* seedUser(ws.id, { email: doomed.email })
        expect(yield* store.findByEmail(doomed.email)).toEqual(Option.some(again))
      }))

    it.effect("deleteByWorkspace removes every user of the workspace, frees their addresses, and nothing else", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const ws = yield* seedWorkspace()
        const other = yield* seedWorkspace()
        const gone = [yield* seedUser(ws.id), yield* seedUser(ws.id, { role: "OWNER" })]
        const kept = yield* seedUser(other.id)

        yield* store.deleteByWorkspace(ws.id)
        for (const u of gone) {
          expect(Option.isNone(yield* store.get(u.id))).toBe(true)
          expect(Option.isNone(yield* store.findByEmail(u.email))).toBe(true)
        }
        expect(yield* store.list({ workspaceId: ws.id }, everything)).toEqual({ items: [], total: 0 })
        expect(yield* store.get(kept.id)).toEqual(Option.some(kept))
        expect(yield* store.findByEmail(kept.email)).toEqual(Option.some(kept))

        yield* store.deleteByWorkspace(ws.id)
        const again = yield* seedUser(other.id, { email: gone[0]!.email })
        expect(yield* store.findByEmail(gone[0]!.email)).toEqual(Option.some(again))
      }))
  })
}
