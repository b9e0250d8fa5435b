import {
  Credential,
  type CredentialFilter,
  type CredentialId,
  CredentialStore,
  DuplicateKey,
  isLive,
  Pagination,
  trusted,
  type User,
  type UserFilter,
  UserStore,
  type WorkspaceId
} from "@convene/core"
import { Effect, HashMap, Layer, Option } from "effect"
import { Memory, newestFirst, type State } from "./Memory.js"

/** How many of `rows` each of the given workspaces has (those without any left out). */
const countPer = <A extends { readonly workspace_id: WorkspaceId }>(
  rows: Iterable<A>,
  workspaceIds: ReadonlyArray<WorkspaceId>,
  keep: (row: A) => boolean = () => true
): ReadonlyMap<WorkspaceId, number> => {
  const wanted = new Set<string>(workspaceIds)
  const counts = new Map<WorkspaceId, number>()
  for (const row of rows) {
    if (wanted.has(row.workspace_id) && keep(row)) counts.set(row.workspace_id, (counts.get(row.workspace_id) ?? 0) + 1)
  }
  return counts
}

/** The state without the users `gone` picks (and their e-mail index entries). */
const withoutUsers = (state: State, gone: (user: User) => boolean): readonly [boolean, State] => {
  const removed = HashMap.filter(state.users, gone)
  if (HashMap.isEmpty(removed)) return [false, state]
  const emails = new Set<string>(HashMap.toValues(removed).map((user) => user.email))
  return [true, {
    ...state,
    users: HashMap.filter(state.users, (user) => !gone(user)),
    userEmails: HashMap.filter(state.userEmails, (_, email) => !emails.has(email))
  }]
}

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

      update: Effect.fnUntraced(function*(user) {
        const clash = yield* memory.modify((state) => {
          const current = HashMap.get(state.users, user.id)
          if (Option.isNone(current)) return [false, state]
          const holder = HashMap.get(state.userEmails, user.email)
          if (Option.isSome(holder) && holder.value !== user.id) return [true, state]
          return [false, {
            ...state,
            users: HashMap.set(state.users, user.id, user),
            userEmails: HashMap.set(HashMap.remove(state.userEmails, current.value.email), user.email, user.id)
          }]
        })
        if (clash) return yield* new DuplicateKey({ constraint: "users_email_key" })
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
      }),

      list: Effect.fnUntraced(function*(filter: UserFilter, page) {
        const state = yield* memory.read
        const users = HashMap.toValues(state.users).filter((user) =>
          (filter.workspaceId === undefined || user.workspace_id === filter.workspaceId) &&
          (filter.role === undefined || user.role === filter.role)
        )
        return Pagination.sliceOf(users.sort(newestFirst), page)
      }),

      countByWorkspace: Effect.fnUntraced(function*(workspaceIds) {
        const state = yield* memory.read
        return countPer(HashMap.values(state.users), workspaceIds)
      }),

      delete: Effect.fnUntraced(function*(id) {
        return yield* memory.modify((state) => withoutUsers(state, (user) => user.id === id))
      }),

      deleteByWorkspace: Effect.fnUntraced(function*(workspaceId) {
        yield* memory.modify((state) => [undefined, withoutUsers(state, (user) => user.workspace_id === workspaceId)[1]])
      })
    })
  })
)

/** The state without the credentials `gone` picks (and their hash index entries); answers their ids. */
const withoutCredentials = (
  state: State,
  gone: (credential: Credential) => boolean
): readonly [ReadonlyArray<CredentialId>, State] => {
  const removed = HashMap.toValues(HashMap.filter(state.credentials, gone))
  if (removed.length === 0) return [[], state]
  const hashes = new Set(removed.map((credential) => credential.token_hash))
  return [removed.map((credential) => credential.id), {
    ...state,
    credentials: HashMap.filter(state.credentials, (credential) => !gone(credential)),
    tokenHashes: HashMap.filter(state.tokenHashes, (_, hash) => !hashes.has(hash))
  }]
}

const passes = (filter: CredentialFilter) => (credential: Credential): boolean =>
  credential.workspace_id === filter.workspaceId &&
  (filter.userId === undefined || credential.user_id === filter.userId) &&
  (filter.kinds === undefined || filter.kinds.includes(credential.kind)) &&
  isLive(credential, filter.liveAt)

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

      list: Effect.fnUntraced(function*(filter, page) {
        const state = yield* memory.read
        return Pagination.sliceOf(HashMap.toValues(state.credentials).filter(passes(filter)).sort(newestFirst), page)
      }),

      countLive: Effect.fnUntraced(function*({ kinds, liveAt, workspaceIds }) {
        const state = yield* memory.read
        return countPer(
          HashMap.values(state.credentials),
          workspaceIds,
          (credential) => kinds.includes(credential.kind) && isLive(credential, liveAt)
        )
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
      }),

      deleteByUser: Effect.fnUntraced(function*(userId) {
        return yield* memory.modify((state) => withoutCredentials(state, (credential) => credential.user_id === userId))
      }),

      deleteByWorkspace: Effect.fnUntraced(function*(workspaceId) {
        return yield* memory.modify((state) =>
          withoutCredentials(state, (credential) => credential.workspace_id === workspaceId)
        )
      })
    })
  })
)
