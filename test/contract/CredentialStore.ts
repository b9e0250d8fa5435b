import { type CredentialFilter, CredentialId, CredentialStore, type StorePorts, UserId } from "@convene/core"
import { addEqualityTesters, expect, layer } from "@effect/vitest"
import { DateTime, Effect, Either, type Layer, Option } from "effect"
import { credential, ids, minutes, seedCredential, seedUser, seedWorkspace, sortedIds, uuid } from "./fixtures.js"

const everything = { limit: 100, offset: 0 }

export const suite = (name: string, storeLayer: Layer.Layer<StorePorts, unknown>) => {
  addEqualityTesters()

  layer(storeLayer)(`CredentialStore (${name})`, (it) => {
    it.effect("insert then get and findByHashWithOwner answer every field", () =>
      Effect.gen(function*() {
        const store = yield* CredentialStore
        const ws = yield* seedWorkspace()
        const owner = yield* seedUser(ws.id)
        const token = credential(ws.id, {
          user_id: owner.id,
          kind: "personal_access_token",
          name: "laptop",
          scopes: ["meetings:read", "meetings:write", "action-items:read"],
          client_id: "convene-cli",
          expires_at: minutes(60 * 24 * 30),
          revoked_at: minutes(60),
          created_at: minutes(-1)
        })
        const apiKey = credential(ws.id, { kind: "api_key", scopes: ["workspace:read", "workspace:write"] })
        const noScopes = credential(ws.id, { kind: "short_lived", user_id: owner.id, scopes: [] })
        yield* store.insert(token)
        yield* store.insert(apiKey)
        yield* store.insert(noScopes)

        expect(yield* store.get(ws.id, token.id)).toEqual(Option.some(token))
        expect(Option.map(yield* store.findByHashWithOwner(token.token_hash), (found) => found.credential)).toEqual(Option.some(token))
        expect(yield* store.get(ws.id, apiKey.id)).toEqual(Option.some(apiKey))
        expect(Option.map(yield* store.findByHashWithOwner(apiKey.token_hash), (found) => found.credential)).toEqual(Option.some(apiKey))
        expect(yield* store.get(ws.id, noScopes.id)).toEqual(Option.some(noScopes))
      }))

    it.effect("findByHashWithOwner answers the credential with its owner's current row, or no owner", () =>
      Effect.gen(function*() {
        const store = yield* CredentialStore
        const ws = yield* seedWorkspace()
        const owner = yield* seedUser(ws.id)
        const token = credential(ws.id, { user_id: owner.id, kind: "short_lived", scopes: ["meetings:read"] })
        const apiKey = credential(ws.id, { kind: "api_key", scopes: ["workspace:read"] })
        yield* store.insert(token)
        yield* store.insert(apiKey)
        expect(yield* store.findByHashWithOwner(token.token_hash)).toEqual(
          Option.some({ credential: token, owner: Option.some(owner) })
        )
        expect(yield* store.findByHashWithOwner(apiKey.token_hash)).toEqual(
          Option.some({ credential: apiKey, owner: Option.none() })
        )
        expect(Option.isNone(yield* store.findByHashWithOwner(credential(ws.id).token_hash))).toBe(true)
      }))

    it.effect("get is scoped by workspace; unknown hashes and ids answer none", () =>
      Effect.gen(function*() {
        const store = yield* CredentialStore
        const ws = yield* seedWorkspace()
        const other = yield* seedWorkspace()
        const stored = yield* seedCredential(ws.id)
        expect(Option.isNone(yield* store.get(other.id, stored.id))).toBe(true)
        expect(Option.isNone(yield* store.get(ws.id, CredentialId.make(uuid())))).toBe(true)
        expect(Option.isNone(yield* store.findByHashWithOwner(credential(ws.id).token_hash))).toBe(true)
      }))

    it.effect("token hashes are unique", () =>
      Effect.gen(function*() {
        const store = yield* CredentialStore
        const ws = yield* seedWorkspace()
        const other = yield* seedWorkspace()
        const first = yield* seedCredential(ws.id)
        const clash = credential(other.id, { token_hash: first.token_hash })
        const refused = yield* Effect.either(store.insert(clash))
        expect(Either.isLeft(refused) && refused.left._tag).toBe("DuplicateKey")
        expect(Option.isNone(yield* store.get(other.id, clash.id))).toBe(true)
        expect(Option.map(yield* store.findByHashWithOwner(first.token_hash), (found) => found.credential)).toEqual(Option.some(first))
      }))

    it.effect("listByUser answers the user's credentials newest first, revoked ones included", () =>
      Effect.gen(function*() {
        const store = yield* CredentialStore
        const ws = yield* seedWorkspace()
        const owner = yield* seedUser(ws.id)
        const someoneElse = yield* seedUser(ws.id)
        const oldest = yield* seedCredential(ws.id, { user_id: owner.id, kind: "refresh_token", created_at: minutes(-30) })
        const newest = yield* seedCredential(ws.id, { user_id: owner.id, created_at: minutes(30), revoked_at: minutes(31) })
        const middle = yield* seedCredential(ws.id, { user_id: owner.id, created_at: minutes(0) })
        yield* seedCredential(ws.id, { user_id: someoneElse.id })
        yield* seedCredential(ws.id, { user_id: null })

        const listed = yield* store.listByUser(owner.id)
        expect(ids(listed)).toEqual([newest.id, middle.id, oldest.id])
        expect(listed[0]).toEqual(newest)
      }))

    it.effect("revoke marks the credential once and answers whether it changed", () =>
      Effect.gen(function*() {
        const store = yield* CredentialStore
        const ws = yield* seedWorkspace()
        const stored = yield* seedCredential(ws.id)
        const when = minutes(7)
        expect(yield* store.revoke(stored.id, when)).toBe(true)
        expect(yield* store.revoke(stored.id, minutes(8))).toBe(false)
        const revoked = Option.getOrThrow(yield* store.get(ws.id, stored.id))
        expect(revoked.revoked_at && DateTime.toEpochMillis(revoked.revoked_at)).toBe(DateTime.toEpochMillis(when))
        expect(revoked).toEqual(credential(ws.id, { ...stored, revoked_at: when }))
        expect(yield* store.revoke(CredentialId.make(uuid()), when)).toBe(false)
      }))

    it.effect("racing revokes: exactly one changes the credential", () =>
      Effect.gen(function*() {
        const store = yield* CredentialStore
        const ws = yield* seedWorkspace()
        const stored = yield* seedCredential(ws.id)
        const answers = yield* Effect.all(
          Array.from({ length: 10 }, (_, i) => store.revoke(stored.id, minutes(i + 1))),
          { concurrency: "unbounded" }
        )
        expect(answers.filter((changed) => changed)).toHaveLength(1)
        const revoked = Option.getOrThrow(yield* store.get(ws.id, stored.id))
        expect(revoked.revoked_at && DateTime.toEpochMillis(revoked.revoked_at))
          .toBe(DateTime.toEpochMillis(minutes(answers.indexOf(true) + 1)))
      }))

    it.effect("list answers the workspace's credentials live at liveAt, newest first (ties by id), by user and kinds", () =>
      Effect.gen(function*() {
        const store = yield* CredentialStore
        const ws = yield* seedWorkspace()
        const other = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id)
        const bob = yield* seedUser(ws.id)
        const now = minutes(30)
        const apiKey = yield* seedCredential(ws.id, { kind: "api_key", created_at: minutes(1) })
        const annPat = yield* seedCredential(ws.id, {
          user_id: ann.id,
          kind: "personal_access_token",
          name: "laptop",
          expires_at: minutes(60),
          created_at: minutes(2)
        })
        const annShort = yield* seedCredential(ws.id, { user_id: ann.id, kind: "short_lived", expires_at: minutes(31), created_at: minutes(3) })
        const bobPat = yield* seedCredential(ws.id, { user_id: bob.id, kind: "personal_access_token", created_at: minutes(4) })
        // Expires at the instant asked about: expired then. Revoked: never live, whenever.
        const expiresNow = yield* seedCredential(ws.id, { user_id: ann.id, kind: "short_lived", expires_at: now, created_at: minutes(5) })
        yield* seedCredential(ws.id, { user_id: ann.id, kind: "personal_access_token", expires_at: minutes(90), revoked_at: minutes(40), created_at: minutes(6) })
        const [low, high] = sortedIds(2).map((id) => CredentialId.make(id))
        const tieLow = yield* seedCredential(ws.id, { id: low!, kind: "api_key", created_at: minutes(-10) })
        const tieHigh = yield* seedCredential(ws.id, { id: high!, kind: "api_key", created_at: minutes(-10) })
        const elsewhere = yield* seedCredential(other.id, { kind: "api_key" })

        const listed = (filter: Partial<CredentialFilter>, page = everything) =>
          store.list({ workspaceId: ws.id, liveAt: now, ...filter }, page)
        const all = yield* listed({})
        expect(ids(all.items)).toEqual(ids([bobPat, annShort, annPat, apiKey, tieHigh, tieLow]))
        expect(all.total).toBe(6)
        expect(all.items.find((c) => c.id === annPat.id)).toEqual(annPat)
        expect(ids((yield* listed({ userId: ann.id })).items)).toEqual(ids([annShort, annPat]))
        expect(ids((yield* listed({ kinds: ["api_key"] })).items)).toEqual(ids([apiKey, tieHigh, tieLow]))
        expect(ids((yield* listed({ kinds: ["personal_access_token", "short_lived"] })).items)).toEqual(ids([bobPat, annShort, annPat]))
        expect(yield* listed({ kinds: [] })).toEqual({ items: [], total: 0 })
        expect(ids((yield* listed({ userId: ann.id, kinds: ["personal_access_token"] })).items)).toEqual([annPat.id])
        expect(ids((yield* listed({ liveAt: minutes(29) })).items)).toEqual(ids([expiresNow, bobPat, annShort, annPat, apiKey, tieHigh, tieLow]))
        expect(ids((yield* listed({ liveAt: minutes(31) })).items)).toEqual(ids([bobPat, annPat, apiKey, tieHigh, tieLow]))
        const page = yield* listed({}, { limit: 2, offset: 1 })
        expect(ids(page.items)).toEqual(ids([annShort, annPat]))
        expect(page.total).toBe(6)
        expect(yield* listed({}, { limit: 2, offset: 6 })).toEqual({ items: [], total: 6 })
        expect(yield* store.list({ workspaceId: other.id, liveAt: now }, everything)).toEqual({ items: [elsewhere], total: 1 })
        expect(yield* store.list({ workspaceId: ws.id, userId: UserId.make(uuid()), liveAt: now }, everything)).toEqual({ items: [], total: 0 })
      }))

    it.effect("countLive counts each given workspace's credentials of the kinds live at liveAt", () =>
      Effect.gen(function*() {
        const store = yield* CredentialStore
        const ws = yield* seedWorkspace()
        const other = yield* seedWorkspace()
        const empty = yield* seedWorkspace()
        const notAsked = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id)
        const now = minutes(30)
        yield* seedCredential(ws.id, { kind: "api_key" })
        yield* seedCredential(ws.id, { kind: "api_key", revoked_at: minutes(1) })
        yield* seedCredential(ws.id, { user_id: ann.id, kind: "personal_access_token", expires_at: minutes(60) })
        yield* seedCredential(ws.id, { user_id: ann.id, kind: "personal_access_token" })
        yield* seedCredential(ws.id, { user_id: ann.id, kind: "short_lived", expires_at: now })
        yield* seedCredential(ws.id, { user_id: ann.id, kind: "refresh_token", expires_at: minutes(60) })
        const bob = yield* seedUser(other.id)
        yield* seedCredential(other.id, { user_id: bob.id, kind: "short_lived", expires_at: minutes(31) })
        yield* seedCredential(notAsked.id, { kind: "api_key" })

        const workspaceIds = [ws.id, other.id, empty.id]
        const tokens = yield* store.countLive({ workspaceIds, kinds: ["personal_access_token", "short_lived"], liveAt: now })
        expect([tokens.get(ws.id), tokens.get(other.id), tokens.get(empty.id) ?? 0]).toEqual([2, 1, 0])
        expect(tokens.has(notAsked.id)).toBe(false)
        const keys = yield* store.countLive({ workspaceIds, kinds: ["api_key"], liveAt: now })
        expect([keys.get(ws.id), keys.get(other.id) ?? 0, keys.get(empty.id) ?? 0]).toEqual([1, 0, 0])
        const earlier = yield* store.countLive({ workspaceIds, kinds: ["short_lived", "personal_access_token", "refresh_token"], liveAt: minutes(29) })
        expect([earlier.get(ws.id), earlier.get(other.id)]).toEqual([4, 1])
        const later = yield* store.countLive({ workspaceIds, kinds: ["short_lived"], liveAt: minutes(31) })
        expect([later.get(ws.id) ?? 0, later.get(other.id) ?? 0]).toEqual([0, 0])
        expect((yield* store.countLive({ workspaceIds: [], kinds: ["api_key"], liveAt: now })).size).toBe(0)
        expect((yield* store.countLive({ workspaceIds, kinds: [], liveAt: now })).size).toBe(0)
      }))

    it.effect("deleteByUser deletes every credential the user holds, revoked ones too, frees their hashes and answers their ids", () =>
      Effect.gen(function*() {
        const store = yield* CredentialStore
        const ws = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id)
        const bob = yield* seedUser(ws.id)
        const annsLive = yield* seedCredential(ws.id, { user_id: ann.id, kind: "personal_access_token" })
        const annsRevoked = yield* seedCredential(ws.id, { user_id: ann.id, kind: "short_lived", revoked_at: minutes(1) })
        const bobs = yield* seedCredential(ws.id, { user_id: bob.id, kind: "personal_access_token" })
        const apiKey = yield* seedCredential(ws.id, { kind: "api_key" })

        const gone = yield* store.deleteByUser(ann.id)
        expect([...gone].sort()).toEqual([annsLive.id, annsRevoked.id].sort())
        for (const c of [annsLive, annsRevoked]) {
          expect(Option.isNone(yield* store.get(ws.id, c.id))).toBe(true)
          expect(Option.isNone(yield* store.findByHashWithOwner(c.token_hash))).toBe(true)
        }
        expect(yield* store.listByUser(ann.id)).toEqual([])
        expect(yield* store.get(ws.id, bobs.id)).toEqual(Option.some(bobs))
        expect(yield* store.get(ws.id, apiKey.id)).toEqual(Option.some(apiKey))
        expect(yield* store.deleteByUser(ann.id)).toEqual([])

        const reused = yield* seedCredential(ws.id, { token_hash: annsLive.token_hash })
        expect(Option.map(yield* store.findByHashWithOwner(annsLive.token_hash), (found) => found.credential)).toEqual(Option.some(reused))
      }))

    it.effect("deleteByWorkspace deletes every credential of the workspace, frees their hashes, answers their ids, and nothing else", () =>
      Effect.gen(function*() {
        const store = yield* CredentialStore
        const ws = yield* seedWorkspace()
        const other = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id)
        const gone = [
          yield* seedCredential(ws.id, { kind: "api_key" }),
          yield* seedCredential(ws.id, { kind: "api_key", revoked_at: minutes(1) }),
          yield* seedCredential(ws.id, { user_id: ann.id, kind: "personal_access_token" })
        ]
        const kept = yield* seedCredential(other.id, { kind: "api_key" })

        expect([...(yield* store.deleteByWorkspace(ws.id))].sort()).toEqual(ids(gone).slice().sort())
        for (const c of gone) {
          expect(Option.isNone(yield* store.get(ws.id, c.id))).toBe(true)
          expect(Option.isNone(yield* store.findByHashWithOwner(c.token_hash))).toBe(true)
        }
        expect(yield* store.listByUser(ann.id)).toEqual([])
        expect(yield* store.get(other.id, kept.id)).toEqual(Option.some(kept))
        expect(yield* store.deleteByWorkspace(ws.id)).toEqual([])
        yield* seedCredential(other.id, { token_hash: gone[0]!.token_hash })
      }))
  })
}
