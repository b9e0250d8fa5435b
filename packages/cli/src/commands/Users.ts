/** `convene users list | find | get | create | update | delete`: the operator API's users. */
import { Args, Command, Options } from "@effect/cli"
import { CreateUser, Email, Role, UpdateUser, UserId, type UserView, WorkspaceId } from "@convene/core"
import { Console, Effect, Option } from "effect"
import * as Connection from "../Connection.js"
import { CommandFailed } from "../Failure.js"
import * as Flags from "../Flags.js"
import * as Input from "../Input.js"
import { request } from "../OperatorClient.js"
import * as Output from "../Output.js"

const roles = Role.literals

const userColumns: ReadonlyArray<Output.Column<UserView>> = [
  { header: "id", value: (u) => u.id },
  { header: "email", value: (u) => u.email },
  { header: "name", value: (u) => u.name },
  { header: "role", value: (u) => u.role },
  { header: "workspace", value: (u) => u.workspace_id }
]

const showUser = (u: UserView) =>
  Console.log(Output.fields([
    ["id", u.id],
    ["workspace_id", u.workspace_id],
    ["email", u.email],
    ["name", u.name],
    ["role", u.role]
  ]))

const userId = Args.text({ name: "id" }).pipe(Args.withDescription("the user's id"))

const list = Command.make(
  "list",
  {
    json: Flags.json,
    url: Flags.url,
    workspace: Options.text("workspace").pipe(
      Options.withDescription("only the users of this workspace (by id); without it, every user of the installation"),
      Options.optional
    ),
    ...Flags.page
  },
  (options) =>
    Effect.gen(function*() {
      const urlParams = Flags.pageParams(options)
      const answer = Option.isSome(options.workspace)
        ? yield* Effect.flatMap(
          Input.id(WorkspaceId, options.workspace.value, "--workspace"),
          (id) => request((client) => client.listWorkspaceUsers({ path: { id }, urlParams, withResponse: true }))
        )
        : yield* request((client) => client.listUsers({ urlParams, withResponse: true }))
      yield* Output.show(answer, options.json, (page) => Output.pageTable(page, userColumns, "No users."))
    })
).pipe(Command.withDescription("List users, newest first: a workspace's, or every user of the installation."))

const find = Command.make(
  "find",
  {
    json: Flags.json,
    url: Flags.url,
    email: Options.text("email").pipe(Options.withDescription("the address (compared trimmed and lower-cased)"))
  },
  (options) =>
    Effect.gen(function*() {
      const email = yield* Input.decode(Email, options.email, "--email")
      const answer = yield* request((client) => client.listUsers({ urlParams: { email }, withResponse: true }))
      yield* Output.show(answer, options.json, (page) => page.items.length === 0 ? Effect.void : showUser(page.items[0]!))
      if (answer.value.items.length === 0) return yield* CommandFailed.failed(`error: no user has the address ${email}`)
    })
).pipe(Command.withDescription("Find the user who has an e-mail address (exit 1 when nobody has it)."))

const get = Command.make("get", { json: Flags.json, url: Flags.url, id: userId }, (options) =>
  Effect.gen(function*() {
    const id = yield* Input.id(UserId, options.id, "<id>")
    const answer = yield* request((client) => client.getUser({ path: { id }, withResponse: true }))
    yield* Output.show(answer, options.json, showUser)
  })).pipe(Command.withDescription("Show a user."))

const create = Command.make(
  "create",
  {
    json: Flags.json,
    url: Flags.url,
    workspace: Options.text("workspace").pipe(Options.withDescription("the workspace (by id)")),
    email: Options.text("email").pipe(Options.withDescription("the user's e-mail address, unique across the installation")),
    name: Options.text("name").pipe(Options.withDescription("the user's name")),
    role: Options.choice("role", roles).pipe(Options.withDescription("the user's role in the workspace")),
    passwordStdin: Flags.passwordStdin,
    password: Flags.password
  },
  (options) =>
    Effect.gen(function*() {
      const id = yield* Input.id(WorkspaceId, options.workspace, "--workspace")
      const password = yield* Input.password(options, `Password for ${options.email}`)
      const payload = yield* Input.decode(CreateUser, {
        email: options.email,
        name: options.name,
        role: options.role,
        ...Option.match(password, { onNone: () => ({}), onSome: (password) => ({ password }) })
      })
      const answer = yield* request((client) => client.createUser({ path: { id }, payload, withResponse: true }))
      yield* Output.show(answer, options.json, showUser)
    })
).pipe(Command.withDescription("Create a user in a workspace, with a password (--password-stdin) or without one."))

const update = Command.make(
  "update",
  {
    json: Flags.json,
    url: Flags.url,
    id: userId,
    name: Options.text("name").pipe(Options.withDescription("a new name"), Options.optional),
    role: Options.choice("role", roles).pipe(
      Options.withDescription("a new role (applies to the user's existing tokens at once)"),
      Options.optional
    ),
    passwordStdin: Flags.passwordStdin,
    password: Flags.password
  },
  (options) =>
    Effect.gen(function*() {
      const id = yield* Input.id(UserId, options.id, "<id>")
      const password = yield* Input.password(options, "New password")
      if (Option.isNone(options.name) && Option.isNone(options.role) && Option.isNone(password)) {
        return yield* CommandFailed.usage("nothing to change: give --name, --role or a password (--password-stdin)")
      }
      const payload = yield* Input.decode(UpdateUser, {
        ...Option.match(options.name, { onNone: () => ({}), onSome: (name) => ({ name }) }),
        ...Option.match(options.role, { onNone: () => ({}), onSome: (role) => ({ role }) }),
        ...Option.match(password, { onNone: () => ({}), onSome: (password) => ({ password }) })
      })
      const answer = yield* request((client) => client.updateUser({ path: { id }, payload, withResponse: true }))
      yield* Output.show(answer, options.json, showUser)
    })
).pipe(Command.withDescription("Change a user's name, role or password (the e-mail address cannot change)."))

const remove = Command.make("delete", { json: Flags.json, url: Flags.url, id: userId, yes: Flags.yes }, (options) =>
  Effect.gen(function*() {
    const id = yield* Input.id(UserId, options.id, "<id>")
    yield* Input.confirm(options.yes, `Delete user ${id} and their tokens?`)
    const answer = yield* request((client) => client.deleteUser({ path: { id }, withResponse: true }))
    yield* Output.show(answer, options.json, () => Console.log(`Deleted user ${id}.`))
  })).pipe(
    Command.withDescription(
      "Delete a user: their tokens stop working, the meetings they own stay without an owner. Cannot be undone."
    )
  )

export const command = Command.make("users").pipe(
  Command.withDescription("Users: list, find (by e-mail), get, create, update, delete."),
  Command.withSubcommands([
    list.pipe(Connection.provide),
    find.pipe(Connection.provide),
    get.pipe(Connection.provide),
    create.pipe(Connection.provide),
    update.pipe(Connection.provide),
    remove.pipe(Connection.provide)
  ])
)
