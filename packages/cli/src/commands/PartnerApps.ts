/**
 * `convene partner-apps list | get | create | update | rotate-webhook-secret | connect`: the operator API's partner
 * apps. The API key, client secret and webhook secret are printed once, when the app is created; a new webhook
 * secret once, when it is made.
 */
import { Args, Command, Options } from "@effect/cli"
import {
  ConnectWorkspace,
  type ConnectedWorkspace,
  CreatePartnerApp,
  type CreatedPartnerApp,
  PartnerAppId,
  PartnerAppStatus,
  type PartnerAppView,
  type RotatedWebhookSecret,
  UpdatePartnerApp,
  WorkspaceId
} from "@convene/core"
import { Console, Effect, Option } from "effect"
import * as Connection from "../Connection.js"
import { CommandFailed } from "../Failure.js"
import * as Flags from "../Flags.js"
import * as Input from "../Input.js"
import { request } from "../OperatorClient.js"
import * as Output from "../Output.js"

const columns: ReadonlyArray<Output.Column<PartnerAppView>> = [
  { header: "id", value: (app) => app.id },
  { header: "name", value: (app) => app.name },
  { header: "slug", value: (app) => app.slug },
  { header: "status", value: (app) => app.status },
  { header: "client id", value: (app) => app.client_id },
  { header: "webhook", value: (app) => app.webhook_url },
  { header: "created", value: (app) => Output.time(app.created_at) }
]

const appFields = (app: PartnerAppView): Array<readonly [string, Output.Cell]> => [
  ["id", app.id],
  ["name", app.name],
  ["slug", app.slug],
  ["status", app.status],
  ["client_id", app.client_id],
  ["webhook_enabled", app.webhook_enabled],
  ["webhook_url", app.webhook_url],
  ["co_brand_name", app.co_brand_name],
  ["co_brand_logo_url", app.co_brand_logo_url],
  ["redirect_uris", app.redirect_uris.length === 0 ? null : Output.list(app.redirect_uris)],
  ["created_at", Output.time(app.created_at)],
  ["updated_at", Output.time(app.updated_at)]
]

const showApp = (app: PartnerAppView) => Console.log(Output.fields(appFields(app)))

const appId = Args.text({ name: "id" }).pipe(Args.withDescription("the partner app's id"))

/** An option's value as the field `key` when it was given (the contract's schema checks it next). */
const given = <A>(key: string, option: Option.Option<A>): Readonly<Record<string, A>> =>
  Option.match(option, { onNone: () => ({}), onSome: (value) => ({ [key]: value }) })

/** A text option that clears its field when given as `none`. */
const clearable = (option: Option.Option<string>): Option.Option<string | null> =>
  Option.map(option, (value) => (value === "none" ? null : value))

/** The options of the fields both create and update set (`none` clears a field). */
const settable = {
  webhookUrl: Options.text("webhook-url").pipe(
    Options.withDescription("the HTTPS URL the app's webhooks go to; none: no webhooks"),
    Options.optional
  ),
  coBrandName: Options.text("co-brand-name").pipe(Options.withDescription("the name shown beside Convene's; none: no name"), Options.optional),
  coBrandLogoUrl: Options.text("co-brand-logo-url").pipe(Options.withDescription("the HTTPS URL of its logo; none: no logo"), Options.optional),
  redirectUris: Options.text("redirect-uri").pipe(
    Options.withDescription("an https or loopback redirect URI of the partner's OAuth client; repeat for several (update: the new list)"),
    Options.repeated
  )
}

/** The request fields of the `settable` options that were given. */
const settableFields = (options: {
  readonly webhookUrl: Option.Option<string>
  readonly coBrandName: Option.Option<string>
  readonly coBrandLogoUrl: Option.Option<string>
  readonly redirectUris: ReadonlyArray<string>
}) => ({
  ...given("webhook_url", clearable(options.webhookUrl)),
  ...given("co_brand_name", clearable(options.coBrandName)),
  ...given("co_brand_logo_url", clearable(options.coBrandLogoUrl)),
  ...(options.redirectUris.length === 0 ? {} : { redirect_uris: options.redirectUris })
})

const list = Command.make("list", { json: Flags.json, url: Flags.url, ...Flags.page }, (options) =>
  Effect.gen(function*() {
    const answer = yield* request((client) => client.listPartnerApps({ urlParams: Flags.pageParams(options), withResponse: true }))
    yield* Output.show(answer, options.json, (page) => Output.pageTable(page, columns, "No partner apps."))
  })).pipe(Command.withDescription("List the partner apps, newest first."))

const get = Command.make("get", { json: Flags.json, url: Flags.url, id: appId }, (options) =>
  Effect.gen(function*() {
    const id = yield* Input.id(PartnerAppId, options.id, "<id>")
    const answer = yield* request((client) => client.getPartnerApp({ path: { id }, withResponse: true }))
    yield* Output.show(answer, options.json, showApp)
  })).pipe(Command.withDescription("Show a partner app (never its API key or client secret)."))

const create = Command.make(
  "create",
  {
    json: Flags.json,
    url: Flags.url,
    name: Options.text("name").pipe(Options.withDescription("the app's name")),
    slug: Options.text("slug").pipe(
      Options.withDescription("its slug (lower-case letters, digits, hyphens); default: derived from the name"),
      Options.optional
    ),
    ...settable
  },
  (options) =>
    Effect.gen(function*() {
      const payload = yield* Input.decode(CreatePartnerApp, {
        name: options.name,
        ...given("slug", options.slug),
        ...settableFields(options)
      })
      const answer = yield* request((client) => client.createPartnerApp({ payload, withResponse: true }))
      yield* Output.show(answer, options.json, (app: CreatedPartnerApp) =>
        Effect.zipRight(
          Console.log(Output.fields([
            ...appFields(app),
            ["api_key", app.api_key],
            ["client_secret", app.client_secret],
            ["webhook_secret", app.webhook_secret]
          ])),
          Console.error(
            "The API key, the client secret and the webhook secret are shown once: store them now, they cannot be read again."
          )
        ))
    })
).pipe(Command.withDescription("Create a partner app. Its API key, client secret and webhook secret are printed once."))

const update = Command.make(
  "update",
  {
    json: Flags.json,
    url: Flags.url,
    id: appId,
    status: Options.choice("status", PartnerAppStatus.literals).pipe(
      Options.withDescription("active, or suspended (every partner call of the app is refused)"),
      Options.optional
    ),
    name: Options.text("name").pipe(Options.withDescription("a new name"), Options.optional),
    ...settable
  },
  (options) =>
    Effect.gen(function*() {
      const id = yield* Input.id(PartnerAppId, options.id, "<id>")
      const changes = {
        ...given("status", options.status),
        ...given("name", options.name),
        ...settableFields(options)
      }
      if (Object.keys(changes).length === 0) {
        return yield* CommandFailed.usage(
          "nothing to change: give --status, --name, --webhook-url, --co-brand-name, --co-brand-logo-url or --redirect-uri"
        )
      }
      const payload = yield* Input.decode(UpdatePartnerApp, changes)
      const answer = yield* request((client) => client.updatePartnerApp({ path: { id }, payload, withResponse: true }))
      yield* Output.show(answer, options.json, showApp)
    })
).pipe(Command.withDescription("Change a partner app: suspend or reactivate it, rename it, set its URLs (none clears one)."))

const rotateWebhookSecret = Command.make("rotate-webhook-secret", { json: Flags.json, url: Flags.url, id: appId }, (options) =>
  Effect.gen(function*() {
    const id = yield* Input.id(PartnerAppId, options.id, "<id>")
    const answer = yield* request((client) => client.rotatePartnerAppWebhookSecret({ path: { id }, withResponse: true }))
    yield* Output.show(answer, options.json, (rotated: RotatedWebhookSecret) =>
      Effect.zipRight(
        Console.log(Output.fields([...appFields(rotated), ["webhook_secret", rotated.webhook_secret]])),
        Console.error("The webhook secret is shown once: store it now. It signs every delivery from now on.")
      ))
  })).pipe(
    Command.withDescription(
      "Make a new webhook secret for a partner app (the first one of an app made without): printed once, it replaces the old one at once."
    )
  )

const connect = Command.make(
  "connect",
  {
    json: Flags.json,
    url: Flags.url,
    id: appId,
    workspace: Options.text("workspace").pipe(Options.withDescription("the id of the workspace to connect"))
  },
  (options) =>
    Effect.gen(function*() {
      const id = yield* Input.id(PartnerAppId, options.id, "<id>")
      const workspaceId = yield* Input.id(WorkspaceId, options.workspace, "--workspace")
      const payload = yield* Input.decode(ConnectWorkspace, { workspace_id: workspaceId })
      const answer = yield* request((client) => client.connectPartnerAppWorkspace({ path: { id }, payload, withResponse: true }))
      yield* Output.show(answer, options.json, (connected: ConnectedWorkspace) =>
        Console.log(Output.fields([
          ["id", connected.id],
          ["name", connected.name],
          ["plan", connected.plan],
          ["connected_at", Output.time(connected.connected_at)]
        ])))
    })
).pipe(Command.withDescription("Connect a workspace to a partner app (connecting it again changes nothing)."))

export const command = Command.make("partner-apps").pipe(
  Command.withDescription("Partner apps: list, get, create, update, rotate the webhook secret, connect workspaces."),
  Command.withSubcommands([
    list.pipe(Connection.provide),
    get.pipe(Connection.provide),
    create.pipe(Connection.provide),
    update.pipe(Connection.provide),
    rotateWebhookSecret.pipe(Connection.provide),
    connect.pipe(Connection.provide)
  ])
)
