/**
 * `convene tokens list | issue | revoke` and `convene api-keys list | create | revoke`: the credentials the
 * operator API lists, issues and revokes. A token or key is shown once, when it is issued.
 */
import { Args, Command, Options } from "@effect/cli"
import {
  CreateApiKey,
  CredentialId,
  type CredentialView,
  type IssuedApiKey,
  type IssuedToken,
  IssueToken,
  Scopes,
  UserId,
  WorkspaceId
} from "@convene/core"
import { Console, Effect, Option } from "effect"
import * as Connection from "../Connection.js"
import { CommandFailed } from "../Failure.js"
import * as Flags from "../Flags.js"
import * as Input from "../Input.js"
import { request } from "../OperatorClient.js"
import * as Output from "../Output.js"

const tokenColumns: ReadonlyArray<Output.Column<CredentialView>> = [
  { header: "id", value: (c) => c.id },
  { header: "kind", value: (c) => c.kind },
  { header: "name", value: (c) => c.name },
  { header: "user", value: (c) => c.user_id },
  { header: "scopes", value: (c) => Output.list(c.scopes) },
  { header: "expires", value: (c) => Output.time(c.expires_at) ?? "never" },
  { header: "created", value: (c) => Output.time(c.created_at) }
]

const apiKeyColumns: ReadonlyArray<Output.Column<CredentialView>> = [
  { header: "id", value: (c) => c.id },
  { header: "name", value: (c) => c.name },
  { header: "expires", value: (c) => Output.time(c.expires_at) ?? "never" },
  { header: "created", value: (c) => Output.time(c.created_at) }
]

const shownOnce = (what: string) => Console.error(`The ${what} is shown once: store it now, it cannot be read again.`)

const credentialId = (description: string) => Args.text({ name: "id" }).pipe(Args.withDescription(description))

/** DELETE /operator/v1/tokens/{id}: a user's token or a workspace API key. */
const revoke = (name: string, description: string) =>
  Command.make("revoke", { json: Flags.json, url: Flags.url, id: credentialId(description) }, (options) =>
    Effect.gen(function*() {
      const id = yield* Input.id(CredentialId, options.id, "<id>")
      const answer = yield* request((client) => client.revokeToken({ path: { id }, withResponse: true }))
      yield* Output.show(answer, options.json, () => Console.log(`Revoked ${name} ${id}: it answers 401 from now on.`))
    }))

// --- tokens ------------------------------------------------------------------------------------------------

const listTokens = Command.make(
  "list",
  {
    json: Flags.json,
    url: Flags.url,
    workspace: Options.text("workspace").pipe(Options.withDescription("the tokens of this workspace's users (by id)"), Options.optional),
    user: Options.text("user").pipe(Options.withDescription("the tokens of this user (by id)"), Options.optional),
    ...Flags.page
  },
  (options) =>
    Effect.gen(function*() {
      const urlParams = Flags.pageParams(options)
      const answer = yield* Option.match(options.workspace, {
        onSome: (raw) =>
          Option.isSome(options.user)
            ? Effect.fail(CommandFailed.usage("give --workspace or --user, not both"))
            : Effect.flatMap(
              Input.id(WorkspaceId, raw, "--workspace"),
              (id) => request((client) => client.listWorkspaceTokens({ path: { id }, urlParams, withResponse: true }))
            ),
        onNone: () =>
          Option.match(options.user, {
            onNone: () => Effect.fail(CommandFailed.usage("give --workspace <id> or --user <id>")),
            onSome: (raw) =>
              Effect.flatMap(
                Input.id(UserId, raw, "--user"),
                (id) => request((client) => client.listUserTokens({ path: { id }, urlParams, withResponse: true }))
              )
          })
      })
      yield* Output.show(answer, options.json, (page) => Output.pageTable(page, tokenColumns, "No tokens."))
    })
).pipe(
  Command.withDescription(
    "List the tokens that authenticate now (neither revoked nor expired) of a workspace's users (--workspace) or of one user (--user)."
  )
)

const expiryDays = ["30", "60", "90", "180", "365"] as const
const expiryHours = ["1", "2", "4", "6"] as const

const issue = Command.make(
  "issue",
  {
    json: Flags.json,
    url: Flags.url,
    user: Options.text("user").pipe(Options.withDescription("the user the token is issued to (by id)")),
    kind: Options.choice("kind", ["personal_access_token", "short_lived"]).pipe(
      Options.withDescription("personal_access_token (PRO plan and higher; --expiry-days) or short_lived (--expiry-hours; no workspace scopes)")
    ),
    scopes: Options.text("scopes").pipe(Options.withDescription(`comma-separated, from: ${Scopes.join(", ")}`)),
    name: Options.text("name").pipe(Options.withDescription("a name to recognise the token by"), Options.optional),
    expiryDays: Options.choice("expiry-days", expiryDays).pipe(
      Options.withDescription("lifetime of a personal access token, in days"),
      Options.optional
    ),
    expiryHours: Options.choice("expiry-hours", expiryHours).pipe(
      Options.withDescription("lifetime of a short-lived token, in hours"),
      Options.optional
    )
  },
  (options) =>
    Effect.gen(function*() {
      const id = yield* Input.id(UserId, options.user, "--user")
      const scopes = options.scopes.split(",").map((scope) => scope.trim()).filter((scope) => scope !== "")
      const unknown = scopes.filter((scope) => !(Scopes as ReadonlyArray<string>).includes(scope))
      if (unknown.length > 0) {
        return yield* CommandFailed.usage(
          `--scopes: unknown scope ${unknown.map((scope) => `"${scope}"`).join(", ")}; the scopes are ${Scopes.join(", ")}`
        )
      }
      const payload = yield* Input.decode(IssueToken, {
        kind: options.kind,
        scopes,
        ...Option.match(options.name, { onNone: () => ({}), onSome: (name) => ({ name }) }),
        ...Option.match(options.expiryDays, { onNone: () => ({}), onSome: (days) => ({ expiry_days: Number(days) }) }),
        ...Option.match(options.expiryHours, { onNone: () => ({}), onSome: (hours) => ({ expiry_hours: Number(hours) }) })
      })
      const answer = yield* request((client) => client.issueToken({ path: { id }, payload, withResponse: true }))
      yield* Output.show(answer, options.json, (token: IssuedToken) =>
        Effect.zipRight(
          Console.log(Output.fields([
            ["id", token.id],
            ["kind", token.kind],
            ["name", token.name],
            ["scopes", Output.list(token.scopes)],
            ["expires_at", Output.time(token.expires_at) ?? "never"],
            ["created_at", Output.time(token.created_at)],
            ["token", token.token]
          ])),
          shownOnce("token")
        ))
    })
).pipe(Command.withDescription("Issue a token to a user. The token is printed once."))

export const tokens = Command.make("tokens").pipe(
  Command.withDescription("Users' tokens: list, issue, revoke."),
  Command.withSubcommands([
    listTokens.pipe(Connection.provide),
    issue.pipe(Connection.provide),
    revoke("token", "the token's id (an API key's id works too)").pipe(
      Command.withDescription("Revoke a token (or an API key): it answers 401 from the next request on."),
      Connection.provide
    )
  ])
)

// --- api-keys ----------------------------------------------------------------------------------------------

const workspaceFlag = Options.text("workspace").pipe(Options.withDescription("the workspace (by id)"))

const listApiKeys = Command.make("list", { json: Flags.json, url: Flags.url, workspace: workspaceFlag, ...Flags.page }, (options) =>
  Effect.gen(function*() {
    const id = yield* Input.id(WorkspaceId, options.workspace, "--workspace")
    const urlParams = Flags.pageParams(options)
    const answer = yield* request((client) => client.listApiKeys({ path: { id }, urlParams, withResponse: true }))
    yield* Output.show(answer, options.json, (page) => Output.pageTable(page, apiKeyColumns, "No API keys."))
  })).pipe(Command.withDescription("List a workspace's API keys that authenticate now."))

const createApiKey = Command.make(
  "create",
  {
    json: Flags.json,
    url: Flags.url,
    workspace: workspaceFlag,
    name: Options.text("name").pipe(Options.withDescription("a name to recognise the key by"))
  },
  (options) =>
    Effect.gen(function*() {
      const id = yield* Input.id(WorkspaceId, options.workspace, "--workspace")
      const payload = yield* Input.decode(CreateApiKey, { name: options.name })
      const answer = yield* request((client) => client.createApiKey({ path: { id }, payload, withResponse: true }))
      yield* Output.show(answer, options.json, (key: IssuedApiKey) =>
        Effect.zipRight(
          Console.log(Output.fields([
            ["id", key.id],
            ["name", key.name],
            ["created_at", Output.time(key.created_at)],
            ["key", key.key]
          ])),
          shownOnce("API key")
        ))
    })
).pipe(Command.withDescription("Create a workspace API key (it acts as the workspace with every scope). The key is printed once."))

export const apiKeys = Command.make("api-keys").pipe(
  Command.withDescription("Workspace API keys: list, create, revoke."),
  Command.withSubcommands([
    listApiKeys.pipe(Connection.provide),
    createApiKey.pipe(Connection.provide),
    revoke("API key", "the API key's id").pipe(
      Command.withDescription("Revoke an API key: it answers 401 from the next request on."),
      Connection.provide
    )
  ])
)
