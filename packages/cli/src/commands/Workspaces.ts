/** `convene workspaces list | get | create | update | delete`: the operator API's workspaces. */
import { Args, Command, Options } from "@effect/cli"
import { CreateWorkspace, Plan, UpdateWorkspace, type Workspace, WorkspaceId, type WorkspaceOverview } from "@convene/core"
import { Console, Effect, Option } from "effect"
import * as Connection from "../Connection.js"
import { CommandFailed } from "../Failure.js"
import * as Flags from "../Flags.js"
import * as Input from "../Input.js"
import { request } from "../OperatorClient.js"
import * as Output from "../Output.js"

const plans = Plan.literals

const overviewColumns: ReadonlyArray<Output.Column<WorkspaceOverview>> = [
  { header: "id", value: (w) => w.id },
  { header: "name", value: (w) => w.name },
  { header: "plan", value: (w) => w.plan },
  { header: "users", value: (w) => w.counts.users },
  { header: "meetings", value: (w) => w.counts.meetings },
  { header: "tokens", value: (w) => w.counts.tokens },
  { header: "api keys", value: (w) => w.counts.api_keys },
  { header: "created", value: (w) => Output.time(w.created_at) }
]

const workspaceFields = (w: Workspace): Array<readonly [string, Output.Cell]> => [
  ["id", w.id],
  ["name", w.name],
  ["plan", w.plan],
  ["default_detail_level", w.default_detail_level],
  ["default_template_id", w.default_template_id],
  ["created_at", Output.time(w.created_at)],
  ["updated_at", Output.time(w.updated_at)]
]

const showWorkspace = (w: Workspace) => Console.log(Output.fields(workspaceFields(w)))

const workspaceId = Args.text({ name: "id" }).pipe(Args.withDescription("the workspace's id"))

const list = Command.make(
  "list",
  { json: Flags.json, url: Flags.url, ...Flags.page },
  (options) =>
    Effect.gen(function*() {
      const answer = yield* request((client) => client.listWorkspaces({ urlParams: Flags.pageParams(options), withResponse: true }))
      yield* Output.show(answer, options.json, (page) => Output.pageTable(page, overviewColumns, "No workspaces."))
    })
).pipe(Command.withDescription("List the workspaces, newest first, with what each holds."))

const get = Command.make("get", { json: Flags.json, url: Flags.url, id: workspaceId }, (options) =>
  Effect.gen(function*() {
    const id = yield* Input.id(WorkspaceId, options.id, "<id>")
    const answer = yield* request((client) => client.getWorkspace({ path: { id }, withResponse: true }))
    yield* Output.show(answer, options.json, (w) =>
      Console.log(Output.fields([
        ...workspaceFields(w),
        ["users", w.counts.users],
        ["meetings", w.counts.meetings],
        ["tokens", w.counts.tokens],
        ["api_keys", w.counts.api_keys]
      ])))
  })).pipe(Command.withDescription("Show a workspace with its counts of users, meetings, tokens and API keys."))

const create = Command.make(
  "create",
  {
    json: Flags.json,
    url: Flags.url,
    name: Options.text("name").pipe(Options.withDescription("the workspace's name")),
    plan: Options.choice("plan", plans).pipe(Options.withDescription("its plan"))
  },
  (options) =>
    Effect.gen(function*() {
      const payload = yield* Input.decode(CreateWorkspace, { name: options.name, plan: options.plan })
      const answer = yield* request((client) => client.createWorkspace({ payload, withResponse: true }))
      yield* Output.show(answer, options.json, showWorkspace)
    })
).pipe(Command.withDescription("Create a workspace."))

const update = Command.make(
  "update",
  {
    json: Flags.json,
    url: Flags.url,
    id: workspaceId,
    name: Options.text("name").pipe(Options.withDescription("a new name"), Options.optional),
    plan: Options.choice("plan", plans).pipe(Options.withDescription("a new plan"), Options.optional)
  },
  (options) =>
    Effect.gen(function*() {
      const id = yield* Input.id(WorkspaceId, options.id, "<id>")
      if (Option.isNone(options.name) && Option.isNone(options.plan)) {
        return yield* CommandFailed.usage("nothing to change: give --name, --plan or both")
      }
      const payload = yield* Input.decode(UpdateWorkspace, {
        ...Option.match(options.name, { onNone: () => ({}), onSome: (name) => ({ name }) }),
        ...Option.match(options.plan, { onNone: () => ({}), onSome: (plan) => ({ plan }) })
      })
      const answer = yield* request((client) => client.updateWorkspace({ path: { id }, payload, withResponse: true }))
      yield* Output.show(answer, options.json, showWorkspace)
    })
).pipe(Command.withDescription("Change a workspace's name or plan."))

const remove = Command.make("delete", { json: Flags.json, url: Flags.url, id: workspaceId, yes: Flags.yes }, (options) =>
  Effect.gen(function*() {
    const id = yield* Input.id(WorkspaceId, options.id, "<id>")
    yield* Input.confirm(options.yes, `Delete workspace ${id} with all its users, tokens, API keys and meetings?`)
    const answer = yield* request((client) => client.deleteWorkspace({ path: { id }, withResponse: true }))
    yield* Output.show(answer, options.json, () => Console.log(`Deleted workspace ${id} and everything in it.`))
  })).pipe(
    Command.withDescription(
      "Delete a workspace with everything in it (users, tokens, API keys, meetings), in one transaction. Cannot be undone."
    )
  )

export const command = Command.make("workspaces").pipe(
  Command.withDescription("Workspaces: list, get, create, update, delete."),
  Command.withSubcommands([
    list.pipe(Connection.provide),
    get.pipe(Connection.provide),
    create.pipe(Connection.provide),
    update.pipe(Connection.provide),
    remove.pipe(Connection.provide)
  ])
)
