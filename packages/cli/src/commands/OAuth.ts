/**
 * `convene oauth-clients create` and `convene signing-keys rotate`: the operator's part of the OAuth server
 * (first-party public clients besides `convene-cli`, and the RS256 key that signs ID tokens).
 */
import { Command, Options } from "@effect/cli"
import { type CreatedClient, CreateFirstPartyClient } from "@convene/core"
import { Console, Effect } from "effect"
import * as Connection from "../Connection.js"
import * as Flags from "../Flags.js"
import * as Input from "../Input.js"
import { request } from "../OperatorClient.js"
import * as Output from "../Output.js"

const createClient = Command.make(
  "create",
  {
    json: Flags.json,
    url: Flags.url,
    name: Options.text("name").pipe(Options.withDescription("the application's name, as users see it")),
    redirectUris: Options.text("redirect-uri").pipe(
      Options.withDescription("a loopback redirect URI (http://127.0.0.1:<port>/...); repeat for several; none: any loopback URI"),
      Options.repeated
    )
  },
  (options) =>
    Effect.gen(function*() {
      const payload = yield* Input.decode(CreateFirstPartyClient, {
        name: options.name,
        ...(options.redirectUris.length === 0 ? {} : { redirect_uris: options.redirectUris })
      })
      const answer = yield* request((client) => client.createOAuthClient({ payload, withResponse: true }))
      yield* Output.show(answer, options.json, (created: CreatedClient) =>
        Console.log(Output.fields([
          ["client_id", created.client_id],
          ["name", created.name],
          ["redirect_uris", created.redirect_uris.length === 0 ? "any loopback URI" : Output.list(created.redirect_uris)],
          ["created_at", Output.time(created.created_at)]
        ])))
    })
).pipe(
  Command.withDescription(
    "Add a first-party public OAuth client (PKCE, no secret, loopback redirect URIs, no consent page) besides convene-cli."
  )
)

export const oauthClients = Command.make("oauth-clients").pipe(
  Command.withDescription("First-party OAuth clients."),
  Command.withSubcommands([createClient.pipe(Connection.provide)])
)

const rotate = Command.make("rotate", { json: Flags.json, url: Flags.url }, (options) =>
  Effect.gen(function*() {
    const answer = yield* request((client) => client.rotateSigningKey({ withResponse: true }))
    yield* Output.show(answer, options.json, (key: { readonly kid: string }) =>
      Console.log(`New signing key ${key.kid}; the previous one stays in the key set for an hour.`))
  })).pipe(Command.withDescription("Retire the ID-token signing key and make a new one."))

export const signingKeys = Command.make("signing-keys").pipe(
  Command.withDescription("The RS256 key that signs ID tokens."),
  Command.withSubcommands([rotate.pipe(Connection.provide)])
)

