/** Users of a workspace: provisioning (operator API) and the caller's own identity. */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { Crypto, PasswordHasher } from "../ports/Crypto.js"
import { Conflict, NotFound, orNotFound } from "../shared/Errors.js"
import { UserId, WorkspaceId } from "../shared/Ids.js"
import { Email, requestBody, Title } from "../shared/Text.js"
import { now } from "../shared/Time.js"
import { trusted } from "../shared/Trusted.js"
import { Workspaces } from "../workspaces/Workspaces.js"
import { type Principal, Role, User } from "./Identity.js"
import { UserStore } from "./IdentityStore.js"

export class CreateUser extends Schema.Class<CreateUser>("CreateUser")({
  email: Email,
  name: Title(200),
  role: Role,
  password: Schema.optional(
    Schema.String.pipe(
      Schema.minLength(8, { message: () => "must be at least 8 characters" }),
      Schema.maxLength(1024, { message: () => "must be at most 1024 characters" })
    )
  )
}, requestBody) {}

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
  const workspaces = yield* Workspaces
  const crypto = yield* Crypto
  const hasher = yield* PasswordHasher

  const create = Effect.fn("Users.create")(function*(workspaceId: WorkspaceId, input: CreateUser) {
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
    yield* store.insert(user).pipe(
      Effect.catchTag("DuplicateKey", () =>
        Effect.fail(new Conflict({ message: `a user with the e-mail ${user.email} already exists` })))
    )
    return user
  })

  const get = Effect.fn("Users.get")(function*(id: UserId) {
    return yield* store.get(id).pipe(orNotFound("user", id))
  })

  /** The identity behind the principal. Workspace API keys have none: they act as the workspace. */
  const me = Effect.fn("Users.me")(function*(principal: Principal) {
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
  const verifyPassword = Effect.fn("Users.verifyPassword")(function*(email: string, password: string) {
    const address = Schema.decodeUnknownOption(Email)(email)
    const user = Option.isNone(address) ? Option.none<User>() : yield* store.findByEmail(address.value)
    if (Option.isNone(user) || user.value.password_hash === null) {
      // Spend the same work on unknown users so that timing does not tell which e-mails exist.
      yield* hasher.verify(password, dummyHash)
      return Option.none<User>()
    }
    return (yield* hasher.verify(password, user.value.password_hash)) ? user : Option.none<User>()
  })

  return { create, get, me, verifyPassword } as const
})

const dummyHash = "scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="

export class Users extends Context.Tag("@convene/core/Users")<Users, Effect.Effect.Success<typeof make>>() {
  static readonly layer: Layer.Layer<Users, never, UserStore | Workspaces | Crypto | PasswordHasher> = Layer.effect(
    Users,
    make
  )
}
