import {
  CredentialId,
  CredentialStore,
  GrantId,
  OAuthStore,
  SessionStore,
  type SigningKey,
  type StorePorts,
  Transactor,
  UserStore,
  WorkspaceStore
} from "@convene/core"
import { addEqualityTesters, expect, layer } from "@effect/vitest"
import { Cause, DateTime, Effect, Either, Exit, type Layer, Option } from "effect"
import {
  authorizationCode,
  grant,
  minutes,
  oauthClient,
  seedCode,
  seedCredential,
  seedGrant,
  seedGrantCredential,
  seedOAuthClient,
  seedSession,
  seedUser,
  seedWorkspace,
  signingKey,
  sortedIds,
  uuid
} from "./fixtures.js"

class Boom {
  readonly _tag = "Boom"
}

/** The tag of the expected error an effect failed with, if it failed. */
const failure = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.either(effect), (result) => Either.isLeft(result) ? Option.some(result.left._tag) : Option.none())

/** The instant of a timestamp, to compare it across stores (PostgreSQL keeps microseconds, the memory store millis). */
const millis = (at: DateTime.Utc | null) => at === null ? null : DateTime.toEpochMillis(at)

const sorted = (ids: ReadonlyArray<string>) => [...ids].sort()

/** Retires every active signing key, so that a test starts with none (keys are the installation's, shared by every test). */
const retireActiveKeys = Effect.gen(function*() {
  const store = yield* OAuthStore
  for (const key of yield* store.signingKeys) {
    if (key.retired_at === null) yield* store.retireSigningKey(key.kid, minutes(-60 * 24))
  }
})

/** The keys among `keys` in the order `signingKeys` lists them. */
const listedOf = (listed: ReadonlyArray<SigningKey>, keys: ReadonlyArray<SigningKey>) =>
  listed.filter((key) => keys.some((mine) => mine.kid === key.kid))

export const suite = (name: string, storeLayer: Layer.Layer<StorePorts, unknown>) => {
  addEqualityTesters()

  layer(storeLayer)(`OAuthStore (${name})`, (it) => {
    it.effect("insertClient then getClient answers every field; updateClient replaces the stored client", () =>
      Effect.gen(function*() {
        const store = yield* OAuthStore
        const registered = oauthClient({ created_at: minutes(-5), updated_at: minutes(-1) })
        const firstParty = oauthClient({
          kind: "first_party",
          redirect_uris: [],
          scope: null,
          client_uri: null,
          logo_uri: null,
          registration_token_hash: null
        })
        const noScopes = oauthClient({ scope: [] })
        yield* store.insertClient(registered)
        yield* store.insertClient(firstParty)
        yield* store.insertClient(noScopes)
        expect(yield* store.getClient(registered.client_id)).toEqual(Option.some(registered))
        expect(yield* store.getClient(firstParty.client_id)).toEqual(Option.some(firstParty))
        expect(yield* store.getClient(noScopes.client_id)).toEqual(Option.some(noScopes))
        expect(Option.isNone(yield* store.getClient(`client-${uuid()}`))).toBe(true)

        const changed = oauthClient({
          ...registered,
          name: "Renamed",
          redirect_uris: ["com.example.app:/callback"],
          scope: null,
          logo_uri: null,
          updated_at: minutes(5)
        })
        yield* store.updateClient(changed)
        expect(yield* store.getClient(registered.client_id)).toEqual(Option.some(changed))
        expect(yield* store.getClient(firstParty.client_id)).toEqual(Option.some(firstParty))

        const unknown = oauthClient()
        yield* store.updateClient(unknown)
        expect(Option.isNone(yield* store.getClient(unknown.client_id))).toBe(true)
      }))

    it.effect("client ids are unique", () =>
      Effect.gen(function*() {
        const store = yield* OAuthStore
        const first = yield* seedOAuthClient()
        expect(yield* failure(store.insertClient(oauthClient({ client_id: first.client_id, name: "Other" }))))
          .toEqual(Option.some("DuplicateKey"))
        expect(yield* store.getClient(first.client_id)).toEqual(Option.some(first))
      }))

    it.effect("insertCode then getCode answers every field; code hashes are unique", () =>
      Effect.gen(function*() {
        const store = yield* OAuthStore
        const ws = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id)
        const client = yield* seedOAuthClient()
        const full = yield* seedCode(ann, client.client_id, { consumed_at: minutes(1), created_at: minutes(-1) })
        const bare = yield* seedCode(ann, "convene-cli", { scopes: [], openid: false, nonce: null })
        expect(yield* store.getCode(full.code_hash)).toEqual(Option.some(full))
        expect(yield* store.getCode(bare.code_hash)).toEqual(Option.some(bare))
        expect(Option.isNone(yield* store.getCode(authorizationCode(ann, client.client_id).code_hash))).toBe(true)

        const clash = authorizationCode(ann, client.client_id, { code_hash: bare.code_hash, redirect_uri: "http://localhost/x" })
        expect(yield* failure(store.insertCode(clash))).toEqual(Option.some("DuplicateKey"))
        expect(yield* store.getCode(bare.code_hash)).toEqual(Option.some(bare))
      }))

    it.effect("consumeCode consumes a code once: true, then false, keeping the first time", () =>
      Effect.gen(function*() {
        const store = yield* OAuthStore
        const ws = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id)
        const code = yield* seedCode(ann, "convene-cli")
        expect(yield* store.consumeCode(code.code_hash, minutes(1))).toBe(true)
        expect(yield* store.consumeCode(code.code_hash, minutes(2))).toBe(false)
        const consumed = Option.getOrThrow(yield* store.getCode(code.code_hash))
        expect(millis(consumed.consumed_at)).toBe(DateTime.toEpochMillis(minutes(1)))
        expect(consumed).toEqual(authorizationCode(ann, "convene-cli", { ...code, consumed_at: minutes(1) }))
        expect(yield* store.consumeCode(authorizationCode(ann, "convene-cli").code_hash, minutes(1))).toBe(false)
      }))

    it.effect("racing consumeCode: exactly one call consumes the code", () =>
      Effect.gen(function*() {
        const store = yield* OAuthStore
        const ws = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id)
        for (const racers of [2, 10]) {
          const code = yield* seedCode(ann, "convene-cli")
          const answers = yield* Effect.all(
            Array.from({ length: racers }, (_, i) => store.consumeCode(code.code_hash, minutes(i + 1))),
            { concurrency: "unbounded" }
          )
          expect(answers.filter((consumed) => consumed)).toHaveLength(1)
          const consumed = Option.getOrThrow(yield* store.getCode(code.code_hash))
          expect(millis(consumed.consumed_at)).toBe(DateTime.toEpochMillis(minutes(answers.indexOf(true) + 1)))
        }
      }))

    it.effect("purgeCodes deletes the codes that expired before the instant, consumed or not, and keeps the rest", () =>
      Effect.gen(function*() {
        const store = yield* OAuthStore
        const ws = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id)
        const before = minutes(60 * 24 * 365 * 10)
        const expired = yield* seedCode(ann, "convene-cli", { expires_at: minutes(-1, before) })
        const consumed = yield* seedCode(ann, "convene-cli", { expires_at: minutes(-30, before), consumed_at: minutes(-31, before) })
        const atTheInstant = yield* seedCode(ann, "convene-cli", { expires_at: before })
        const later = yield* seedCode(ann, "convene-cli", { expires_at: minutes(1, before) })
        yield* store.purgeCodes(before)
        expect(Option.isNone(yield* store.getCode(expired.code_hash))).toBe(true)
        expect(Option.isNone(yield* store.getCode(consumed.code_hash))).toBe(true)
        expect(yield* store.getCode(atTheInstant.code_hash)).toEqual(Option.some(atTheInstant))
        expect(yield* store.getCode(later.code_hash)).toEqual(Option.some(later))
        // The hash is free again.
        yield* seedCode(ann, "convene-cli", { code_hash: expired.code_hash, expires_at: minutes(5, before) })
      }))

    it.effect("insertGrant then getGrant answers every field; grant ids are unique", () =>
      Effect.gen(function*() {
        const store = yield* OAuthStore
        const ws = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id)
        const full = yield* seedGrant(ann, "convene-cli", {
          scopes: ["meetings:read", "workspace:read"],
          openid: true,
          nonce: "abc",
          created_at: minutes(-3),
          revoked_at: minutes(4)
        })
        const bare = yield* seedGrant(ann, `client-${uuid()}`, { scopes: [] })
        expect(yield* store.getGrant(full.id)).toEqual(Option.some(full))
        expect(yield* store.getGrant(bare.id)).toEqual(Option.some(bare))
        expect(Option.isNone(yield* store.getGrant(GrantId.make(uuid())))).toBe(true)
        expect(yield* failure(store.insertGrant(grant(ann, "convene-cli", { id: full.id })))).toEqual(Option.some("DuplicateKey"))
        expect(yield* store.getGrant(full.id)).toEqual(Option.some(full))
      }))

    it.effect("hasLiveGrant: whether the user holds an unrevoked grant of that client", () =>
      Effect.gen(function*() {
        const store = yield* OAuthStore
        const ws = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id)
        const bob = yield* seedUser(ws.id)
        const clientId = `client-${uuid()}`
        expect(yield* store.hasLiveGrant(clientId, ann.id)).toBe(false)
        const first = yield* seedGrant(ann, clientId)
        const second = yield* seedGrant(ann, clientId)
        yield* seedGrant(bob, `client-${uuid()}`)
        expect(yield* store.hasLiveGrant(clientId, ann.id)).toBe(true)
        expect(yield* store.hasLiveGrant(clientId, bob.id)).toBe(false)
        yield* store.revokeGrant(first.id, minutes(1))
        expect(yield* store.hasLiveGrant(clientId, ann.id)).toBe(true)
        yield* store.revokeGrant(second.id, minutes(2))
        expect(yield* store.hasLiveGrant(clientId, ann.id)).toBe(false)
      }))

    it.effect("revokeGrant marks the grant once and answers whether it changed", () =>
      Effect.gen(function*() {
        const store = yield* OAuthStore
        const ws = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id)
        const stored = yield* seedGrant(ann, "convene-cli")
        expect(yield* store.revokeGrant(stored.id, minutes(7))).toBe(true)
        expect(yield* store.revokeGrant(stored.id, minutes(8))).toBe(false)
        expect(yield* store.getGrant(stored.id)).toEqual(Option.some(grant(ann, "convene-cli", { ...stored, revoked_at: minutes(7) })))
        expect(yield* store.revokeGrant(GrantId.make(uuid()), minutes(7))).toBe(false)

        const raced = yield* seedGrant(ann, "convene-cli")
        const answers = yield* Effect.all(
          Array.from({ length: 10 }, (_, i) => store.revokeGrant(raced.id, minutes(i + 1))),
          { concurrency: "unbounded" }
        )
        expect(answers.filter((changed) => changed)).toHaveLength(1)
        expect(millis(Option.getOrThrow(yield* store.getGrant(raced.id)).revoked_at))
          .toBe(DateTime.toEpochMillis(minutes(answers.indexOf(true) + 1)))
      }))

    it.effect("grantCredentials answers a grant's credentials in the order they were added; grantOf the grant of one", () =>
      Effect.gen(function*() {
        const store = yield* OAuthStore
        const ws = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id)
        const chain = yield* seedGrant(ann, "convene-cli")
        const other = yield* seedGrant(ann, "convene-cli")
        // Added in neither id nor creation order.
        const [low, middle, high] = sortedIds(3).map((id) => CredentialId.make(id))
        const first = yield* seedGrantCredential(chain, { id: high!, created_at: minutes(3) })
        const second = yield* seedGrantCredential(chain, { id: low!, created_at: minutes(1) })
        const third = yield* seedGrantCredential(chain, { id: middle!, created_at: minutes(2) })
        const elsewhere = yield* seedGrantCredential(other)
        const loose = yield* seedCredential(ws.id, { user_id: ann.id })

        expect(yield* store.grantCredentials(chain.id)).toEqual([first.id, second.id, third.id])
        expect(yield* store.grantCredentials(other.id)).toEqual([elsewhere.id])
        expect(yield* store.grantCredentials(GrantId.make(uuid()))).toEqual([])
        expect(yield* store.grantOf(second.id)).toEqual(Option.some(chain.id))
        expect(yield* store.grantOf(elsewhere.id)).toEqual(Option.some(other.id))
        expect(Option.isNone(yield* store.grantOf(loose.id))).toBe(true)
        expect(Option.isNone(yield* store.grantOf(CredentialId.make(uuid())))).toBe(true)

        // A credential is issued under one grant: recording it again, under any grant, changes nothing.
        yield* store.addGrantCredential(chain.id, first.id)
        yield* store.addGrantCredential(other.id, second.id)
        expect(yield* store.grantCredentials(chain.id)).toEqual([first.id, second.id, third.id])
        expect(yield* store.grantCredentials(other.id)).toEqual([elsewhere.id])
        expect(yield* store.grantOf(second.id)).toEqual(Option.some(chain.id))
      }))

    it.effect("clientCredentials answers the credentials of every grant of the client, and only those", () =>
      Effect.gen(function*() {
        const store = yield* OAuthStore
        const ws = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id)
        const bob = yield* seedUser(ws.id)
        const client = yield* seedOAuthClient()
        const other = yield* seedOAuthClient()
        const annsGrant = yield* seedGrant(ann, client.client_id)
        const bobsGrant = yield* seedGrant(bob, client.client_id, { revoked_at: minutes(1) })
        yield* seedGrant(ann, client.client_id)
        const mine = [
          yield* seedGrantCredential(annsGrant),
          yield* seedGrantCredential(bobsGrant),
          yield* seedGrantCredential(annsGrant, { kind: "refresh_token" })
        ]
        yield* seedGrantCredential(yield* seedGrant(ann, other.client_id))

        expect(sorted(yield* store.clientCredentials(client.client_id))).toEqual(sorted(mine.map((c) => c.id)))
        expect(yield* store.clientCredentials(`client-${uuid()}`)).toEqual([])
      }))

    it.effect("deleteClient deletes the client with its codes and grants, answers whether it existed, and keeps the rest", () =>
      Effect.gen(function*() {
        const store = yield* OAuthStore
        const credentials = yield* CredentialStore
        const ws = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id)
        const doomed = yield* seedOAuthClient()
        const kept = yield* seedOAuthClient()
        const code = yield* seedCode(ann, doomed.client_id)
        const doomedGrant = yield* seedGrant(ann, doomed.client_id)
        const issued = [yield* seedGrantCredential(doomedGrant), yield* seedGrantCredential(doomedGrant)]
        const keptCode = yield* seedCode(ann, kept.client_id)
        const keptGrant = yield* seedGrant(ann, kept.client_id)
        const keptCredential = yield* seedGrantCredential(keptGrant)

        expect(yield* store.deleteClient(doomed.client_id)).toBe(true)
        expect(Option.isNone(yield* store.getClient(doomed.client_id))).toBe(true)
        expect(Option.isNone(yield* store.getCode(code.code_hash))).toBe(true)
        expect(Option.isNone(yield* store.getGrant(doomedGrant.id))).toBe(true)
        expect(yield* store.grantCredentials(doomedGrant.id)).toEqual([])
        expect(yield* store.clientCredentials(doomed.client_id)).toEqual([])
        for (const credential of issued) {
          expect(Option.isNone(yield* store.grantOf(credential.id))).toBe(true)
          // The credentials are the CredentialStore's: core revokes them, they stay.
          expect(yield* credentials.get(ws.id, credential.id)).toEqual(Option.some(credential))
        }
        expect(yield* store.getClient(kept.client_id)).toEqual(Option.some(kept))
        expect(yield* store.getCode(keptCode.code_hash)).toEqual(Option.some(keptCode))
        expect(yield* store.getGrant(keptGrant.id)).toEqual(Option.some(keptGrant))
        expect(yield* store.grantCredentials(keptGrant.id)).toEqual([keptCredential.id])

        expect(yield* store.deleteClient(doomed.client_id)).toBe(false)
        expect(yield* store.deleteClient(`client-${uuid()}`)).toBe(false)
        yield* store.insertClient(doomed)
        expect(yield* store.getClient(doomed.client_id)).toEqual(Option.some(doomed))
      }))

    it.effect("signingKeys answers every key newest first (ties by kid, descending)", () =>
      Effect.gen(function*() {
        const store = yield* OAuthStore
        yield* retireActiveKeys
        const base = minutes(60 * 24 * 365 * 20)
        const [low, high] = sortedIds(2)
        const oldest = signingKey({ created_at: minutes(-20, base), retired_at: minutes(-10, base) })
        const tieLow = signingKey({ kid: `kid-${low}`, created_at: minutes(-5, base), retired_at: minutes(-1, base) })
        const tieHigh = signingKey({ kid: `kid-${high}`, created_at: minutes(-5, base), retired_at: minutes(-1, base) })
        const newest = signingKey({ created_at: base })
        for (const key of [tieLow, newest, oldest, tieHigh]) yield* store.insertSigningKey(key)

        const listed = yield* store.signingKeys
        expect(listedOf(listed, [oldest, tieLow, tieHigh, newest])).toEqual([newest, tieHigh, tieLow, oldest])
        for (let i = 1; i < listed.length; i++) {
          expect(DateTime.toEpochMillis(listed[i - 1]!.created_at)).toBeGreaterThanOrEqual(DateTime.toEpochMillis(listed[i]!.created_at))
        }
        yield* store.retireSigningKey(newest.kid, minutes(1, base))
      }))

    it.effect("one active key at a time: another active key is DuplicateKey until the first is retired", () =>
      Effect.gen(function*() {
        const store = yield* OAuthStore
        yield* retireActiveKeys
        const first = signingKey({ created_at: minutes(10) })
        yield* store.insertSigningKey(first)
        const second = signingKey({ created_at: minutes(20) })
        expect(yield* failure(store.insertSigningKey(second))).toEqual(Option.some("DuplicateKey"))
        expect(listedOf(yield* store.signingKeys, [first, second])).toEqual([first])
        // The kid is unique too, retired or not.
        expect(yield* failure(store.insertSigningKey(signingKey({ kid: first.kid, retired_at: minutes(11) }))))
          .toEqual(Option.some("DuplicateKey"))
        // A key inserted already retired does not count as active.
        const retired = signingKey({ created_at: minutes(5), retired_at: minutes(6) })
        yield* store.insertSigningKey(retired)

        yield* store.retireSigningKey(first.kid, minutes(20))
        // Retiring it again keeps the time it stopped signing.
        yield* store.retireSigningKey(first.kid, minutes(30))
        yield* store.retireSigningKey(`kid-${uuid()}`, minutes(30))
        yield* store.insertSigningKey(second)
        const retiredFirst = signingKey({ ...first, retired_at: minutes(20) })
        expect(listedOf(yield* store.signingKeys, [first, second, retired])).toEqual([second, retiredFirst, retired])
        expect((yield* store.signingKeys).filter((key) => key.retired_at === null)).toEqual([second])
      }))

    it.effect("racing insertSigningKey: exactly one of several new active keys goes in", () =>
      Effect.gen(function*() {
        const store = yield* OAuthStore
        yield* retireActiveKeys
        const keys = Array.from({ length: 6 }, () => signingKey({ created_at: minutes(1) }))
        const answers = yield* Effect.all(keys.map((key) => failure(store.insertSigningKey(key))), { concurrency: "unbounded" })
        expect(answers.filter(Option.isNone)).toHaveLength(1)
        expect(answers.filter(Option.isSome)).toEqual(Array.from({ length: 5 }, () => Option.some("DuplicateKey")))
        const winner = keys[answers.findIndex(Option.isNone)]!
        expect((yield* store.signingKeys).filter((key) => key.retired_at === null)).toEqual([winner])
      }))

    it.effect("deleteByUser deletes the user's codes and grants with their grant-credential rows, and nothing else", () =>
      Effect.gen(function*() {
        const store = yield* OAuthStore
        const credentials = yield* CredentialStore
        const ws = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id)
        const bob = yield* seedUser(ws.id)
        const client = yield* seedOAuthClient()
        const annsCodes = [yield* seedCode(ann, client.client_id), yield* seedCode(ann, "convene-cli", { consumed_at: minutes(1) })]
        const annsGrants = [yield* seedGrant(ann, client.client_id), yield* seedGrant(ann, "convene-cli", { revoked_at: minutes(2) })]
        const annsCredentials = [yield* seedGrantCredential(annsGrants[0]!), yield* seedGrantCredential(annsGrants[1]!)]
        const bobsCode = yield* seedCode(bob, client.client_id)
        const bobsGrant = yield* seedGrant(bob, client.client_id)
        const bobsCredential = yield* seedGrantCredential(bobsGrant)

        yield* store.deleteByUser(ann.id)
        for (const code of annsCodes) expect(Option.isNone(yield* store.getCode(code.code_hash))).toBe(true)
        for (const g of annsGrants) {
          expect(Option.isNone(yield* store.getGrant(g.id))).toBe(true)
          expect(yield* store.grantCredentials(g.id)).toEqual([])
        }
        for (const credential of annsCredentials) {
          expect(Option.isNone(yield* store.grantOf(credential.id))).toBe(true)
          expect(yield* credentials.get(ws.id, credential.id)).toEqual(Option.some(credential))
        }
        expect(yield* store.getClient(client.client_id)).toEqual(Option.some(client))
        expect(yield* store.getCode(bobsCode.code_hash)).toEqual(Option.some(bobsCode))
        expect(yield* store.getGrant(bobsGrant.id)).toEqual(Option.some(bobsGrant))
        expect(yield* store.grantOf(bobsCredential.id)).toEqual(Option.some(bobsGrant.id))
        expect(yield* store.clientCredentials(client.client_id)).toEqual([bobsCredential.id])
        yield* store.deleteByUser(ann.id)
      }))

    it.effect("deleteByWorkspace deletes the workspace's codes and grants with their grant-credential rows, and nothing else", () =>
      Effect.gen(function*() {
        const store = yield* OAuthStore
        const ws = yield* seedWorkspace()
        const other = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id)
        const bob = yield* seedUser(ws.id)
        const carol = yield* seedUser(other.id)
        const client = yield* seedOAuthClient()
        const codes = [yield* seedCode(ann, client.client_id), yield* seedCode(bob, "convene-cli")]
        const grants = [yield* seedGrant(ann, client.client_id), yield* seedGrant(bob, "convene-cli")]
        const issued = [yield* seedGrantCredential(grants[0]!), yield* seedGrantCredential(grants[1]!)]
        const keptCode = yield* seedCode(carol, client.client_id)
        const keptGrant = yield* seedGrant(carol, client.client_id)
        const keptCredential = yield* seedGrantCredential(keptGrant)

        yield* store.deleteByWorkspace(ws.id)
        for (const code of codes) expect(Option.isNone(yield* store.getCode(code.code_hash))).toBe(true)
        for (const g of grants) expect(Option.isNone(yield* store.getGrant(g.id))).toBe(true)
        for (const credential of issued) expect(Option.isNone(yield* store.grantOf(credential.id))).toBe(true)
        expect(yield* store.getClient(client.client_id)).toEqual(Option.some(client))
        expect(yield* store.getCode(keptCode.code_hash)).toEqual(Option.some(keptCode))
        expect(yield* store.getGrant(keptGrant.id)).toEqual(Option.some(keptGrant))
        expect(yield* store.grantCredentials(keptGrant.id)).toEqual([keptCredential.id])
      }))

    it.effect("a user with codes, grants and sessions is deleted in one unit of work, as core deletes a user", () =>
      Effect.gen(function*() {
        const { withTransaction } = yield* Transactor
        const store = yield* OAuthStore
        const sessions = yield* SessionStore
        const credentials = yield* CredentialStore
        const users = yield* UserStore
        const ws = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id)
        const code = yield* seedCode(ann, "convene-cli")
        const annsGrant = yield* seedGrant(ann, "convene-cli")
        const issued = yield* seedGrantCredential(annsGrant)
        const session = yield* seedSession(ann)

        yield* withTransaction(Effect.gen(function*() {
          yield* store.deleteByUser(ann.id)
          yield* sessions.deleteByUser(ann.id)
          expect(yield* credentials.deleteByUser(ann.id)).toEqual([issued.id])
          expect(yield* users.delete(ann.id)).toBe(true)
        }))
        expect(Option.isNone(yield* users.get(ann.id))).toBe(true)
        expect(Option.isNone(yield* store.getCode(code.code_hash))).toBe(true)
        expect(Option.isNone(yield* store.getGrant(annsGrant.id))).toBe(true)
        expect(Option.isNone(yield* store.grantOf(issued.id))).toBe(true)
        expect(Option.isNone(yield* sessions.findByHash(session.token_hash))).toBe(true)
      }))

    it.effect("a workspace with codes, grants and sessions is deleted in one unit of work, as core deletes a workspace", () =>
      Effect.gen(function*() {
        const { withTransaction } = yield* Transactor
        const store = yield* OAuthStore
        const sessions = yield* SessionStore
        const credentials = yield* CredentialStore
        const users = yield* UserStore
        const workspaces = yield* WorkspaceStore
        const ws = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id)
        const bob = yield* seedUser(ws.id)
        const client = yield* seedOAuthClient()
        const code = yield* seedCode(ann, client.client_id)
        const bobsGrant = yield* seedGrant(bob, client.client_id)
        const issued = yield* seedGrantCredential(bobsGrant)
        const session = yield* seedSession(ann)

        yield* withTransaction(Effect.gen(function*() {
          yield* store.deleteByWorkspace(ws.id)
          yield* sessions.deleteByWorkspace(ws.id)
          expect(yield* credentials.deleteByWorkspace(ws.id)).toEqual([issued.id])
          yield* users.deleteByWorkspace(ws.id)
          expect(yield* workspaces.delete(ws.id)).toBe(true)
        }))
        expect(Option.isNone(yield* workspaces.get(ws.id))).toBe(true)
        expect(Option.isNone(yield* store.getCode(code.code_hash))).toBe(true)
        expect(Option.isNone(yield* store.getGrant(bobsGrant.id))).toBe(true)
        expect(Option.isNone(yield* store.grantOf(issued.id))).toBe(true)
        expect(Option.isNone(yield* sessions.findByHash(session.token_hash))).toBe(true)
        // The client is the installation's: it stays.
        expect(yield* store.getClient(client.client_id)).toEqual(Option.some(client))
      }))

    it.effect("a failing unit of work leaves no trace of its OAuth writes", () =>
      Effect.gen(function*() {
        const { withTransaction } = yield* Transactor
        const store = yield* OAuthStore
        yield* retireActiveKeys
        const ws = yield* seedWorkspace()
        const ann = yield* seedUser(ws.id)
        const client = yield* seedOAuthClient()
        const doomedClient = yield* seedOAuthClient()
        const code = yield* seedCode(ann, client.client_id)
        const existing = yield* seedGrant(ann, client.client_id)
        const issued = yield* seedGrantCredential(existing)
        const loose = yield* seedCredential(ws.id, { user_id: ann.id })
        const doomedGrant = yield* seedGrant(ann, doomedClient.client_id)
        const key = signingKey({ created_at: minutes(1) })
        yield* store.insertSigningKey(key)
        const newClient = oauthClient()
        const newCode = authorizationCode(ann, client.client_id)
        const newGrant = grant(ann, client.client_id)
        const newKey = signingKey({ created_at: minutes(2) })
        const keysBefore = yield* store.signingKeys

        const exit = yield* Effect.exit(withTransaction(Effect.gen(function*() {
          yield* store.insertClient(newClient)
          yield* store.updateClient(oauthClient({ ...client, name: "Changed", updated_at: minutes(3) }))
          expect(yield* store.deleteClient(doomedClient.client_id)).toBe(true)
          yield* store.insertCode(newCode)
          expect(yield* store.consumeCode(code.code_hash, minutes(1))).toBe(true)
          yield* store.insertGrant(newGrant)
          yield* store.addGrantCredential(newGrant.id, loose.id)
          expect(yield* store.revokeGrant(existing.id, minutes(1))).toBe(true)
          yield* store.retireSigningKey(key.kid, minutes(2))
          yield* store.insertSigningKey(newKey)
          // Reads inside the unit see its own writes.
          expect(yield* store.grantOf(loose.id)).toEqual(Option.some(newGrant.id))
          return yield* Effect.fail(new Boom())
        })))

        expect(Exit.isFailure(exit) && Option.map(Cause.failureOption(exit.cause), (e) => e._tag)).toEqual(Option.some("Boom"))
        expect(Option.isNone(yield* store.getClient(newClient.client_id))).toBe(true)
        expect(yield* store.getClient(client.client_id)).toEqual(Option.some(client))
        expect(yield* store.getClient(doomedClient.client_id)).toEqual(Option.some(doomedClient))
        expect(yield* store.getGrant(doomedGrant.id)).toEqual(Option.some(doomedGrant))
        expect(Option.isNone(yield* store.getCode(newCode.code_hash))).toBe(true)
        expect(yield* store.getCode(code.code_hash)).toEqual(Option.some(code))
        expect(Option.isNone(yield* store.getGrant(newGrant.id))).toBe(true)
        expect(yield* store.getGrant(existing.id)).toEqual(Option.some(existing))
        expect(yield* store.grantCredentials(existing.id)).toEqual([issued.id])
        expect(Option.isNone(yield* store.grantOf(loose.id))).toBe(true)
        expect(yield* store.signingKeys).toEqual(keysBefore)
        // The code is still there to be consumed once.
        expect(yield* store.consumeCode(code.code_hash, minutes(5))).toBe(true)
        yield* store.retireSigningKey(key.kid, minutes(3))
      }))
  })
}
