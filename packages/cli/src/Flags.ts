/** Options shared by the operator commands. */
import { Options } from "@effect/cli"
import { Option } from "effect"
import { defaultUrl } from "./Connection.js"

export const json = Options.boolean("json").pipe(
  Options.withDescription("print the server's JSON answer exactly as it came (one document; nothing for a deletion), for scripts")
)

export const url = Options.text("url").pipe(
  Options.withDescription(`the Convene server (default: CONVENE_URL, else ${defaultUrl})`),
  Options.optional
)

const limit = Options.integer("limit").pipe(
  Options.withDescription("page size (default 20, at most 100)"),
  Options.optional
)

const offset = Options.integer("offset").pipe(
  Options.withDescription("items to skip (default 0)"),
  Options.optional
)

/** `--limit` and `--offset`. */
export const page = { limit, offset }

/** The page as query parameters: only what was given, so the server's defaults apply to the rest. */
export const pageParams = (options: { readonly limit: Option.Option<number>; readonly offset: Option.Option<number> }) => ({
  ...Option.match(options.limit, { onNone: () => ({}), onSome: (limit) => ({ limit }) }),
  ...Option.match(options.offset, { onNone: () => ({}), onSome: (offset) => ({ offset }) })
})

export const yes = Options.boolean("yes").pipe(
  Options.withAlias("y"),
  Options.withDescription("do not ask for confirmation (required when standard input is not a terminal)")
)

export const passwordStdin = Options.boolean("password-stdin").pipe(
  Options.withDescription("read the password from standard input (one line), or ask for it without echo on a terminal")
)

export const password = Options.redacted("password").pipe(
  Options.withDescription(
    "the password itself: it stays in shell history and is visible in the process list, so prefer --password-stdin"
  ),
  Options.optional
)
