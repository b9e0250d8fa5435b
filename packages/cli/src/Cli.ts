/**
 * The `convene` command: the server (`serve`), its schema (`migrate`), and the operator API from the command
 * line (`workspaces`, `users`, `tokens`, `api-keys`, `oauth-clients`, `signing-keys`, `partner-apps`), talking to
 * a running server over HTTP at CONVENE_URL with CONVENE_OPERATOR_TOKEN. Exit codes: Failure.ts.
 */
import { Command, Options } from "@effect/cli"
import { Effect } from "effect"
import { createRequire } from "node:module"
import { apiKeys, tokens } from "./commands/Credentials.js"
import * as OAuth from "./commands/OAuth.js"
import * as PartnerApps from "./commands/PartnerApps.js"
import * as Users from "./commands/Users.js"
import * as Workspaces from "./commands/Workspaces.js"

/** This package's version (the same file is one level up from src/ and from dist/). */
export const version: string = (createRequire(import.meta.url)("../package.json") as { readonly version: string }).version

const serve = Command.make("serve", {}, () =>
  // Loaded when asked for: the server brings its whole stack, which the other commands do not need.
  Effect.flatMap(Effect.promise(() => import("@convene/http/serve")), (server) => server.program)).pipe(
    Command.withDescription(
      "Run the Convene server, configured from the environment (PORT, HOST, DATABASE_URL, CONVENE_DATA_DIR, " +
        "CONVENE_STORE, CONVENE_OPERATOR_TOKEN, ...: see the README). The same program as `pnpm start`: SIGTERM or " +
        "SIGINT drains and exits 0, a second signal exits 1 at once, a configuration mistake is one line and exit 1."
    )
  )

const migrate = Command.make(
  "migrate",
  {
    check: Options.boolean("check").pipe(
      Options.withDescription("apply nothing: list the pending migrations and exit 1 when there are some, 0 when there are none")
    )
  },
  ({ check }) => Effect.flatMap(Effect.promise(() => import("./commands/Migrate.js")), (command) => command.migrate(check))
).pipe(
  Command.withDescription(
    "Bring the schema of the configured store (DATABASE_URL, else the embedded database in CONVENE_DATA_DIR) up to " +
      "date and exit. The server also migrates at start; this runs it ahead, e.g. before a deployment."
  )
)

export const convene = Command.make("convene").pipe(
  Command.withDescription(
    "Convene, the self-hostable Meeting Workspace API. The operator commands talk to a running server at CONVENE_URL " +
      "(default http://127.0.0.1:8080) with CONVENE_OPERATOR_TOKEN. Exit codes: 0 success, 1 refused by the server, " +
      "2 usage, 3 server unreachable."
  ),
  Command.withSubcommands([
    serve,
    migrate,
    Workspaces.command,
    Users.command,
    tokens,
    apiKeys,
    OAuth.oauthClients,
    OAuth.signingKeys,
    PartnerApps.command
  ])
)

/** Parses `argv` (as `process.argv`: node, script, arguments...) and runs the command it names. */
export const run = Command.run(convene, { name: "convene", version })
