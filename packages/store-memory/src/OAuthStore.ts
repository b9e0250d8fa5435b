/**
 * OAuthStore and SessionStore in memory: the authorization server's records and the browser sessions, in the
 * same state value as every other port (so a unit of work commits or rolls them back with the rest).
 */
import {
  AuthorizationCode,
  type CredentialId,
  DuplicateKey,
  Grant,
  OAuthStore,
  Session,
  SessionStore,
  SigningKey,
  trusted
} from "@convene/core"
import { DateTime, Effect, HashMap, Layer, Option } from "effect"
import { type Compare, Memory, type State } from "./Memory.js"

/** created_at desc, then kid desc. */
const newestKeyFirst: Compare<SigningKey> = (a, b) =>
  b.created_at.epochMillis - a.created_at.epochMillis || (a.kid < b.kid ? 1 : a.kid > b.kid ? -1 : 0)

/** The state without the codes and grants `gone` picks (a grant with its grant-credential rows). */
const withoutCodesAndGrants = (
  state: State,
  gone: (row: { readonly user_id: string; readonly workspace_id: string; readonly client_id: string }) => boolean
): State => {
  const grants = HashMap.filter(state.grants, gone)
  if (HashMap.isEmpty(grants) && !HashMap.some(state.authorizationCodes, gone)) return state
  const credentials = new Set<string>(
    HashMap.toValues(grants).flatMap((grant) => Option.getOrElse(HashMap.get(state.grantCredentials, grant.id), () => []))
  )
  return {
    ...state,
    authorizationCodes: HashMap.filter(state.authorizationCodes, (code) => !gone(code)),
    grants: HashMap.filter(state.grants, (grant) => !gone(grant)),
    grantCredentials: HashMap.filter(state.grantCredentials, (_, id) => !HashMap.has(grants, id)),
    credentialGrants: HashMap.filter(state.credentialGrants, (_, id) => !credentials.has(id))
  }
}

export const oauthLayer: Layer.Layer<OAuthStore, never, Memory> = Layer.effect(
  OAuthStore,
  Effect.gen(function*() {
    const memory = yield* Memory

    /** Applies `put` unless `taken` says the key is already there (then DuplicateKey naming `constraint`). */
    const insertNew = (constraint: string, taken: (state: State) => boolean, put: (state: State) => State) =>
      Effect.flatMap(
        memory.modify((state) => taken(state) ? [true, state] : [false, put(state)]),
        (clash) => clash ? new DuplicateKey({ constraint }) : Effect.void
      )

    return OAuthStore.of({
      insertClient: (client) =>
        insertNew(
          "oauth_clients_pkey",
          (state) => HashMap.has(state.oauthClients, client.client_id),
          (state) => ({ ...state, oauthClients: HashMap.set(state.oauthClients, client.client_id, client) })
        ),

      getClient: Effect.fnUntraced(function*(clientId) {
        return HashMap.get((yield* memory.read).oauthClients, clientId)
      }),

      updateClient: Effect.fnUntraced(function*(client) {
        yield* memory.modify((state) => [
          undefined,
          HashMap.has(state.oauthClients, client.client_id)
            ? { ...state, oauthClients: HashMap.set(state.oauthClients, client.client_id, client) }
            : state
        ])
      }),

      deleteClient: Effect.fnUntraced(function*(clientId) {
        return yield* memory.modify((state) => {
          const next = withoutCodesAndGrants(state, (row) => row.client_id === clientId)
          return [
            HashMap.has(state.oauthClients, clientId),
            { ...next, oauthClients: HashMap.remove(next.oauthClients, clientId) }
          ]
        })
      }),

      insertCode: (code) =>
        insertNew(
          "authorization_codes_pkey",
          (state) => HashMap.has(state.authorizationCodes, code.code_hash),
          (state) => ({ ...state, authorizationCodes: HashMap.set(state.authorizationCodes, code.code_hash, code) })
        ),

      getCode: Effect.fnUntraced(function*(codeHash) {
        return HashMap.get((yield* memory.read).authorizationCodes, codeHash)
      }),

      consumeCode: Effect.fnUntraced(function*(codeHash, at) {
        return yield* memory.modify((state) =>
          Option.match(HashMap.get(state.authorizationCodes, codeHash), {
            onNone: () => [false, state],
            onSome: (code) =>
              code.consumed_at !== null ? [false, state] : [true, {
                ...state,
                authorizationCodes: HashMap.set(
                  state.authorizationCodes,
                  codeHash,
                  new AuthorizationCode({ ...code, consumed_at: at }, trusted)
                )
              }]
          })
        )
      }),

      purgeCodes: Effect.fnUntraced(function*(before) {
        yield* memory.modify((state) => [undefined, {
          ...state,
          authorizationCodes: HashMap.filter(state.authorizationCodes, (code) => !DateTime.lessThan(code.expires_at, before))
        }])
      }),

      insertGrant: (grant) =>
        insertNew(
          "grants_pkey",
          (state) => HashMap.has(state.grants, grant.id),
          (state) => ({ ...state, grants: HashMap.set(state.grants, grant.id, grant) })
        ),

      getGrant: Effect.fnUntraced(function*(id) {
        return HashMap.get((yield* memory.read).grants, id)
      }),

      hasLiveGrant: Effect.fnUntraced(function*(clientId, userId) {
        return HashMap.some((yield* memory.read).grants, (grant) =>
          grant.client_id === clientId && grant.user_id === userId && grant.revoked_at === null)
      }),

      revokeGrant: Effect.fnUntraced(function*(id, at) {
        return yield* memory.modify((state) =>
          Option.match(HashMap.get(state.grants, id), {
            onNone: () => [false, state],
            onSome: (grant) =>
              grant.revoked_at !== null ? [false, state] : [true, {
                ...state,
                grants: HashMap.set(state.grants, id, new Grant({ ...grant, revoked_at: at }, trusted))
              }]
          })
        )
      }),

      // A credential is issued under one grant: recording it again changes nothing.
      addGrantCredential: Effect.fnUntraced(function*(id, credentialId) {
        yield* memory.modify((state) => [
          undefined,
          HashMap.has(state.credentialGrants, credentialId) ? state : {
            ...state,
            grantCredentials: HashMap.set(
              state.grantCredentials,
              id,
              [...Option.getOrElse(HashMap.get(state.grantCredentials, id), () => []), credentialId]
            ),
            credentialGrants: HashMap.set(state.credentialGrants, credentialId, id)
          }
        ])
      }),

      grantCredentials: Effect.fnUntraced(function*(id) {
        return Option.getOrElse(HashMap.get((yield* memory.read).grantCredentials, id), (): ReadonlyArray<CredentialId> => [])
      }),

      clientCredentials: Effect.fnUntraced(function*(clientId) {
        const state = yield* memory.read
        return HashMap.toValues(state.grants)
          .filter((grant) => grant.client_id === clientId)
          .flatMap((grant) => Option.getOrElse(HashMap.get(state.grantCredentials, grant.id), (): ReadonlyArray<CredentialId> => []))
      }),

      grantOf: Effect.fnUntraced(function*(credentialId) {
        return HashMap.get((yield* memory.read).credentialGrants, credentialId)
      }),

      signingKeys: Effect.map(memory.read, (state) => HashMap.toValues(state.signingKeys).sort(newestKeyFirst)),

      insertSigningKey: Effect.fnUntraced(function*(key) {
        const clash = yield* memory.modify((state) => {
          if (HashMap.has(state.signingKeys, key.kid)) return [Option.some("signing_keys_pkey"), state]
          if (key.retired_at === null && HashMap.some(state.signingKeys, (other) => other.retired_at === null)) {
            return [Option.some("signing_keys_active_key"), state]
          }
          return [Option.none(), { ...state, signingKeys: HashMap.set(state.signingKeys, key.kid, key) }]
        })
        if (Option.isSome(clash)) return yield* new DuplicateKey({ constraint: clash.value })
      }),

      retireSigningKey: Effect.fnUntraced(function*(kid, at) {
        yield* memory.modify((state) => [
          undefined,
          Option.match(HashMap.get(state.signingKeys, kid), {
            onNone: () => state,
            onSome: (key) =>
              key.retired_at !== null ? state : {
                ...state,
                signingKeys: HashMap.set(state.signingKeys, kid, new SigningKey({ ...key, retired_at: at }, trusted))
              }
          })
        ])
      }),

      deleteByUser: Effect.fnUntraced(function*(userId) {
        yield* memory.modify((state) => [undefined, withoutCodesAndGrants(state, (row) => row.user_id === userId)])
      }),

      deleteByWorkspace: Effect.fnUntraced(function*(workspaceId) {
        yield* memory.modify((state) => [undefined, withoutCodesAndGrants(state, (row) => row.workspace_id === workspaceId)])
      })
    })
  })
)

/** The state without the sessions `gone` picks (and their hash index entries). */
const withoutSessions = (state: State, gone: (session: Session) => boolean): State => {
  const removed = HashMap.filter(state.sessions, gone)
  if (HashMap.isEmpty(removed)) return state
  const hashes = new Set(HashMap.toValues(removed).map((session) => session.token_hash))
  return {
    ...state,
    sessions: HashMap.filter(state.sessions, (session) => !gone(session)),
    sessionHashes: HashMap.filter(state.sessionHashes, (_, hash) => !hashes.has(hash))
  }
}

export const sessionLayer: Layer.Layer<SessionStore, never, Memory> = Layer.effect(
  SessionStore,
  Effect.gen(function*() {
    const memory = yield* Memory

    return SessionStore.of({
      insert: Effect.fnUntraced(function*(session) {
        const clash = yield* memory.modify((state) => {
          if (HashMap.has(state.sessions, session.id)) return [Option.some("sessions_pkey"), state]
          if (HashMap.has(state.sessionHashes, session.token_hash)) return [Option.some("sessions_token_hash_key"), state]
          return [Option.none(), {
            ...state,
            sessions: HashMap.set(state.sessions, session.id, session),
            sessionHashes: HashMap.set(state.sessionHashes, session.token_hash, session.id)
          }]
        })
        if (Option.isSome(clash)) return yield* new DuplicateKey({ constraint: clash.value })
      }),

      findByHash: Effect.fnUntraced(function*(tokenHash) {
        const state = yield* memory.read
        return HashMap.get(state.sessionHashes, tokenHash).pipe(
          Option.flatMap((id) => HashMap.get(state.sessions, id)),
          Option.map((session) => ({ session, user: HashMap.get(state.users, session.user_id) }))
        )
      }),

      revoke: Effect.fnUntraced(function*(id, at) {
        yield* memory.modify((state) => [
          undefined,
          Option.match(HashMap.get(state.sessions, id), {
            onNone: () => state,
            onSome: (session) =>
              session.revoked_at !== null ? state : {
                ...state,
                sessions: HashMap.set(state.sessions, id, new Session({ ...session, revoked_at: at }, trusted))
              }
          })
        ])
      }),

      purge: Effect.fnUntraced(function*(before) {
        yield* memory.modify((state) => [
          undefined,
          withoutSessions(state, (session) =>
            DateTime.lessThan(session.expires_at, before) ||
            (session.revoked_at !== null && DateTime.lessThan(session.revoked_at, before)))
        ])
      }),

      deleteByUser: Effect.fnUntraced(function*(userId) {
        yield* memory.modify((state) => [undefined, withoutSessions(state, (session) => session.user_id === userId)])
      }),

      deleteByWorkspace: Effect.fnUntraced(function*(workspaceId) {
        yield* memory.modify((state) => [undefined, withoutSessions(state, (session) => session.workspace_id === workspaceId)])
      }),

      // One modify: the limits are checked and the attempt recorded in the same step, so no racing attempt slips in between.
      recordAttempt: Effect.fnUntraced(function*({ at, id, limits, since }) {
        return yield* memory.modify((state) => {
          const recorded = (key: string) => Option.getOrElse(HashMap.get(state.signInFailures, key), () => [])
          const within = (key: string) => recorded(key).filter((entry) => !DateTime.lessThan(entry.at, since)).length
          if (limits.some(({ key, limit }) => within(key) >= limit)) return [false, state]
          return [true, {
            ...state,
            signInFailures: [...new Set(limits.map(({ key }) => key))].reduce(
              (failures, key) => HashMap.set(failures, key, [...recorded(key), { attempt: id, at }]),
              state.signInFailures
            )
          }]
        })
      }),

      forgetAttempt: Effect.fnUntraced(function*(id) {
        yield* memory.modify((state) => [undefined, {
          ...state,
          signInFailures: HashMap.filterMap(state.signInFailures, (entries) => {
            const kept = entries.filter((entry) => entry.attempt !== id)
            return kept.length === 0 ? Option.none() : Option.some(kept)
          })
        }])
      }),

      failuresSince: Effect.fnUntraced(function*(keys, since) {
        const state = yield* memory.read
        const counts = new Map<string, number>()
        for (const key of new Set(keys)) {
          const count = Option.getOrElse(HashMap.get(state.signInFailures, key), () => [])
            .filter((entry) => !DateTime.lessThan(entry.at, since)).length
          if (count > 0) counts.set(key, count)
        }
        return counts
      }),

      clearFailures: Effect.fnUntraced(function*(key) {
        yield* memory.modify((state) => [undefined, { ...state, signInFailures: HashMap.remove(state.signInFailures, key) }])
      }),

      purgeFailures: Effect.fnUntraced(function*(before) {
        yield* memory.modify((state) => [undefined, {
          ...state,
          signInFailures: HashMap.filterMap(state.signInFailures, (entries) => {
            const kept = entries.filter((entry) => !DateTime.lessThan(entry.at, before))
            return kept.length === 0 ? Option.none() : Option.some(kept)
          })
        }])
      })
    })
  })
)
