import { Credential, CredentialStore, DuplicateKey, trusted, UserStore } from "@convene/core"
import { Effect, HashMap, Layer, Option } from "effect"
import { Memory, newestFirst } from "./Memory.js"

export const userLayer: Layer.Layer<UserStore, never, Memory> = Layer.effect(
  UserStore,
  Effect.gen(function*() {
    const memory = yield* Memory

    return UserStore.of({
      insert: Effect.fnUntraced(function*(user) {
        const email = user.email
        const clash = yield* memory.modify((state) => {
          if (HashMap.has(state.users, user.id)) return [Option.some("users_pkey"), state]
          if (HashMap.has(state.userEmails, email)) return [Option.some("users_email_key"), state]
          return [Option.none(), {
            ...state,
            users: HashMap.set(state.users, user.id, user),
            userEmails: HashMap.set(state.userEmails, email, user.id)
          }]
        })
        if (Option.isSome(clash)) return yield* new DuplicateKey({ constraint: clash.value })
      }),

      get: Effect.fnUntraced(function*(id) {
        const state = yield* memory.read
        return HashMap.get(state.users, id)
      }),

      getMany: Effect.fnUntraced(function*(workspaceId, ids) {
        const state = yield* memory.read
        return [...new Set(ids)].flatMap((id) =>
          Option.toArray(HashMap.get(state.users, id)).filter((user) => user.workspace_id === workspaceId)
        )
      }),

      findByEmail: Effect.fnUntraced(function*(email) {
        const state = yield* memory.read
        return HashMap.get(state.userEmails, email).pipe(Option.flatMap((id) => HashMap.get(state.users, id)))
      })
    })
  })
)

export const credentialLayer: Layer.Layer<CredentialStore, never, Memory> = Layer.effect(
  CredentialStore,
  Effect.gen(function*() {
    const memory = yield* Memory

    return CredentialStore.of({
      insert: Effect.fnUntraced(function*(credential) {
        const clash = yield* memory.modify((state) => {
          if (HashMap.has(state.credentials, credential.id)) return [Option.some("credentials_pkey"), state]
          if (HashMap.has(state.tokenHashes, credential.token_hash)) {
            return [Option.some("credentials_token_hash_key"), state]
          }
          return [Option.none(), {
            ...state,
            credentials: HashMap.set(state.credentials, credential.id, credential),
            tokenHashes: HashMap.set(state.tokenHashes, credential.token_hash, credential.id)
          }]
        })
        if (Option.isSome(clash)) return yield* new DuplicateKey({ constraint: clash.value })
      }),

      findByHashWithOwner: Effect.fnUntraced(function*(tokenHash) {
        const state = yield* memory.read
        return HashMap.get(state.tokenHashes, tokenHash).pipe(
          Option.flatMap((id) => HashMap.get(state.credentials, id)),
          Option.map((credential) => ({
            credential,
            owner: credential.user_id === null ? Option.none() : HashMap.get(state.users, credential.user_id)
          }))
        )
      }),

      get: Effect.fnUntraced(function*(workspaceId, id) {
        const state = yield* memory.read
        return HashMap.get(state.credentials, id).pipe(Option.filter((credential) => credential.workspace_id === workspaceId))
      }),

      listByUser: Effect.fnUntraced(function*(userId) {
        const state = yield* memory.read
        const own: Array<Credential> = []
        for (const credential of HashMap.values(state.credentials)) {
          if (credential.user_id === userId) own.push(credential)
        }
        return own.sort(newestFirst)
      }),

      revoke: Effect.fnUntraced(function*(id, at) {
        return yield* memory.modify((state) =>
          Option.match(HashMap.get(state.credentials, id), {
            onNone: () => [false, state],
            onSome: (credential) =>
              credential.revoked_at !== null
                ? [false, state]
                : [true, {
                  ...state,
                  credentials: HashMap.set(state.credentials, id, new Credential({ ...credential, revoked_at: at }, trusted))
                }]
          })
        )
      })
    })
  })
)
