import { CredentialId, CredentialStore, type StorePorts } from "@convene/core"
import { addEqualityTesters, expect, layer } from "@effect/vitest"
import { DateTime, Effect, Either, type Layer, Option } from "effect"
import { credential, ids, minutes, seedCredential, seedUser, seedWorkspace, uuid } from "./fixtures.js"

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
  })
}
