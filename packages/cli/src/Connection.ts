/**
 * Where the operator commands send their requests and with which credential: CONVENE_URL (or `--url`; default
 * http://127.0.0.1:8080) and CONVENE_OPERATOR_TOKEN, the token the server was started with. The token is read
 * from the environment only (a flag would land in shell history and the process list) and is never printed.
 */
import { Command } from "@effect/cli"
import { Config, Context, Effect, Layer, Option, Redacted } from "effect"
import { CommandFailed } from "./Failure.js"

export const defaultUrl = "http://127.0.0.1:8080"

export class Connection extends Context.Tag("@convene/cli/Connection")<Connection, {
  /** The server's base URL, without a trailing slash and without any credentials it was written with. */
  readonly url: string
  readonly token: Redacted.Redacted<string>
}>() {}

/** An http(s) URL as the messages show it: no user name or password, no trailing slash. */
const parseUrl = (raw: string, source: string): Effect.Effect<string, CommandFailed> => {
  let parsed: URL
  try {
    parsed = new URL(raw.trim())
  } catch {
    return Effect.fail(CommandFailed.usage(`${source} is not a URL: "${raw}" (expected e.g. ${defaultUrl})`))
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return Effect.fail(CommandFailed.usage(`${source} must be an http or https URL, not ${parsed.protocol}`))
  }
  parsed.username = ""
  parsed.password = ""
  parsed.search = ""
  parsed.hash = ""
  return Effect.succeed(parsed.toString().replace(/\/+$/, ""))
}

const missingToken = CommandFailed.usage(
  "CONVENE_OPERATOR_TOKEN is not set: export the operator token the server was started with " +
    "(export CONVENE_OPERATOR_TOKEN=...); the operator commands talk to /operator/v1 with it"
)

/** The connection from `--url` (when given), else CONVENE_URL, else the default; and CONVENE_OPERATOR_TOKEN. */
export const layer = (urlFlag: Option.Option<string>): Layer.Layer<Connection, CommandFailed> =>
  Layer.effect(
    Connection,
    Effect.gen(function*() {
      const url = Option.isSome(urlFlag)
        ? yield* parseUrl(urlFlag.value, "--url")
        : yield* Config.string("CONVENE_URL").pipe(
          Config.withDefault(defaultUrl),
          Effect.orElseSucceed(() => defaultUrl),
          Effect.flatMap((raw) => parseUrl(raw, "CONVENE_URL"))
        )
      const token = yield* Config.redacted("CONVENE_OPERATOR_TOKEN").pipe(
        Config.option,
        Effect.orElseSucceed(() => Option.none<Redacted.Redacted<string>>())
      )
      if (Option.isNone(token) || Redacted.value(token.value).trim() === "") return yield* missingToken
      return { url, token: token.value }
    })
  )

/** Gives an operator command its connection, from its `--url` option and the environment. */
export const provide = <Name extends string, R, E, A extends { readonly url: Option.Option<string> }>(
  command: Command.Command<Name, R, E, A>
): Command.Command<Name, Exclude<R, Connection>, E | CommandFailed, A> => Command.provide(command, ({ url }) => layer(url))
