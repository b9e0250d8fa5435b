/**
 * Users of a workspace: provisioning (operator API: create, list, find, change and delete them) and the
 * caller's own identity.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { Crypto, PasswordHasher } from "../ports/Crypto.js"
import { Transactor } from "../ports/Transactor.js"
import { Conflict, NotFound, orNotFound } from "../shared/Errors.js"
import { UserId, WorkspaceId } from "../shared/Ids.js"
import { clamp, type PageRequest, sliceOf, toList } from "../shared/Pagination.js"
import { Email, requestBody, Text, Title } from "../shared/Text.js"
import { now } from "../shared/Time.js"
import { trusted } from "../shared/Trusted.js"
import { Workspaces } from "../workspaces/Workspaces.js"
import { type Principal, Role, User } from "./Identity.js"
import { IdentityReferences } from "./IdentityReferences.js"
import { CredentialStore, UserStore } from "./IdentityStore.js"
import { fn } from "../shared/Span.js"

/** A password as the API takes it: 8 to 1024 characters of Text (no U+0000, no lone surrogate, which would hash as U+FFFD), stored only as a scrypt hash. */
export const Password = Text.pipe(
  Schema.minLength(8, { message: () => "must be at least 8 characters" }),
  Schema.maxLength(1024, { message: () => "must be at most 1024 characters" })
)

export class CreateUser extends Schema.Class<CreateUser>("CreateUser")({
  email: Email,
  name: Title(200),
  role: Role,
  password: Schema.optional(Password)
}, requestBody) {}

/** The operator's change of a user: name, role and password; what the request leaves out is kept. */
export class UpdateUser extends Schema.Class<UpdateUser>("UpdateUser")({
  name: Schema.optional(Title(200)),
  role: Schema.optional(Role),
  password: Schema.optional(Password)
}, requestBody) {}

/** Which users a list shows (see Users.list). */
export interface UserQuery {
  /** Only the users of this workspace (which must exist). */
  readonly workspaceId?: WorkspaceId | undefined
  /** Only the user with this address (at most one: addresses are unique across the installation). */
  readonly email?: Email | undefined
}

/** A user as the API shows it (no password hash). */
export class UserView extends Schema.Class<UserView>("UserView")({
  id: UserId,
  workspace_id: WorkspaceId,
  email: Email,
  name: Schema.String,
  role: Role
}) {
  static readonly of = (user: User) =>
    new UserView({ id: user.id, workspace_id: user.workspace_id, email: user.email, name: user.name, role: user.role }, trusted)
}

const make = Effect.gen(function*() {
  const store = yield* UserStore
  const credentials = yield* CredentialStore
  const references = yield* IdentityReferences
  const workspaces = yield* Workspaces
  const transactor = yield* Transactor
  const crypto = yield* Crypto
  const hasher = yield* PasswordHasher

  const create = fn("Users.create")(function*(workspaceId: WorkspaceId, input: CreateUser) {
    yield* workspaces.get(workspaceId)
    const at = yield* now
    const user = new User({
      id: UserId.make(yield* crypto.randomUUID),
      workspace_id: workspaceId,
      email: input.email,
      name: input.name,
      role: input.role,
      password_hash: input.password === undefined ? null : yield* hasher.hash(input.password),
      created_at: at,
      updated_at: at
    })
    // The workspace is read again where the user is written: it may have been deleted since.
    yield* workspaces.within(
      workspaceId,
      store.insert(user).pipe(Effect.catchTag("DuplicateKey", () => Effect.fail(emailTaken(user))))
    )
    return user
  })

  const get = fn("Users.get")(function*(id: UserId) {
    return yield* store.get(id).pipe(orNotFound("user", id))
  })

  /**
   * A page of users, newest first: of the installation, or of one workspace (NotFound when it does not exist),
   * narrowed to the one user with an address when `email` is given.
   */
  const list = fn("Users.list")(function*(query: UserQuery, request: PageRequest) {
    const page = clamp(request)
    if (query.workspaceId !== undefined) yield* workspaces.get(query.workspaceId)
    if (query.email === undefined) {
      const slice = yield* store.list({ workspaceId: query.workspaceId }, page)
      return toList({ items: slice.items.map(UserView.of), total: slice.total }, page)
    }
    const found = Option.filter(
      yield* store.findByEmail(query.email),
      (user) => query.workspaceId === undefined || user.workspace_id === query.workspaceId
    )
    return toList(sliceOf(Option.toArray(found).map(UserView.of), page), page)
  })

  /**
   * Changes the user's name, role or password. A role takes effect on the user's existing tokens at once: a
   * token authenticates with the scopes it was issued with that the current role grants (see Authentication).
   * Tokens are kept when the password changes.
   */
  const update = fn("Users.update")(function*(id: UserId, input: UpdateUser) {
    const current = yield* get(id)
    const next = new User({
      ...current,
      name: input.name ?? current.name,
      role: input.role ?? current.role,
      password_hash: input.password === undefined ? current.password_hash : yield* hasher.hash(input.password),
      updated_at: yield* now
    })
    // The address does not change, so the store's e-mail index cannot refuse it.
    yield* store.update(next).pipe(Effect.orDie)
    return next
  })

  /**
   * Deletes the user in one transaction: their credentials are deleted (every token of theirs answers 401 from
   * then on) with what is kept per credential, and every other room lets go of them (IdentityReferences.detachUser:
   * participant rows and talking points deleted, owned meetings left without an owner, presenters and assignees
   * removed).
   */
  const remove = fn("Users.delete")(function*(id: UserId) {
    const user = yield* get(id)
    yield* transactor.withTransaction(Effect.gen(function*() {
      yield* references.detachUser(user.workspace_id, user.id)
      yield* references.forgetCredentials(yield* credentials.deleteByUser(user.id))
      yield* store.delete(user.id)
    }))
  })

  /** The identity behind the principal. Workspace API keys have none: they act as the workspace. */
  const me = fn("Users.me")(function*(principal: Principal) {
    if (principal.user_id === null) {
      return yield* Effect.fail(
        new NotFound({
          resource: "user",
          id: principal.credential_id,
          message: "a workspace API key acts as the workspace and has no user identity; see GET /v1/auth/introspect"
        })
      )
    }
    return UserView.of(yield* get(principal.user_id))
  })

  /** Checks a password; answers the user, or none for an unknown e-mail or a wrong password alike. */
  const verifyPassword = fn("Users.verifyPassword")(function*(email: string, password: string) {
    const address = Schema.decodeUnknownOption(Email)(email)
    const user = Option.isNone(address) ? Option.none<User>() : yield* store.findByEmail(address.value)
    if (Option.isNone(user) || user.value.password_hash === null) {
      // Spend the same work on unknown users so that timing does not tell which e-mails exist.
      yield* hasher.verify(password, dummyHash)
      return Option.none<User>()
    }
    return (yield* hasher.verify(password, user.value.password_hash)) ? user : Option.none<User>()
  })

  return { create, get, list, update, delete: remove, me, verifyPassword } as const
})

const emailTaken = (user: User) => new Conflict({ message: `a user with the e-mail ${user.email} already exists` })

const dummyHash = "scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="

export class Users extends Context.Tag("@convene/core/Users")<Users, Effect.Effect.Success<typeof make>>() {
  static readonly layer: Layer.Layer<
    Users,
    never,
    UserStore | CredentialStore | IdentityReferences | Workspaces | Transactor | Crypto | PasswordHasher
  > = Layer.effect(Users, make)
}
