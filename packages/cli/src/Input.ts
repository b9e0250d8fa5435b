/**
 * What the commands read besides their flags: ids checked against the contract's schemas before anything is
 * sent, a password from standard input or a prompt without echo, and a confirmation before deleting.
 */
import { Prompt } from "@effect/cli"
import type { Terminal } from "@effect/platform"
import { Effect, Option, Redacted, Schema } from "effect"
import { CommandFailed, describeParseError } from "./Failure.js"

/** `raw` as the contract's `schema` reads it, or a usage error naming `label` (exit 2, nothing sent). */
export const decode = <A, I>(schema: Schema.Schema<A, I>, raw: unknown, label?: string): Effect.Effect<A, CommandFailed> =>
  Schema.decodeUnknown(schema)(raw).pipe(Effect.mapError((error) => CommandFailed.usage(describeParseError(error, label))))

/** An id (a UUID) given as `label` (`<id>`, `--workspace`, ...). */
export const id = <A>(schema: Schema.Schema<A, string>, raw: string, label: string): Effect.Effect<A, CommandFailed> =>
  Schema.decodeUnknown(schema)(raw).pipe(
    Effect.mapError(() => CommandFailed.usage(`${label}: expected an id (a UUID), got "${raw}"`))
  )

const readStandardInput = Effect.promise(async () => {
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk)
  return Buffer.concat(chunks).toString("utf8")
})

const cancelled = () => CommandFailed.failed("error: cancelled")

/**
 * The password of `--password-stdin`: asked for without echo on a terminal, else standard input, one line (a
 * final newline is dropped), as `echo "$PASSWORD" | convene users create ... --password-stdin` sends it.
 */
export const passwordFromStdin = (prompt: string): Effect.Effect<string, CommandFailed, Terminal.Terminal> =>
  Effect.gen(function*() {
    if (process.stdin.isTTY === true) {
      const entered = yield* Prompt.password({ message: prompt }).pipe(Effect.mapError(cancelled))
      return Redacted.value(entered)
    }
    const input = (yield* readStandardInput).replace(/\r?\n$/, "")
    if (input === "") return yield* CommandFailed.usage("--password-stdin: standard input is empty")
    if (/[\r\n]/.test(input)) return yield* CommandFailed.usage("--password-stdin: standard input holds more than one line")
    return input
  })

/** The password the flags give, if any: `--password-stdin` or `--password` (not both). */
export const password = (
  options: { readonly passwordStdin: boolean; readonly password: Option.Option<Redacted.Redacted<string>> },
  prompt: string
): Effect.Effect<Option.Option<string>, CommandFailed, Terminal.Terminal> => {
  if (options.passwordStdin && Option.isSome(options.password)) {
    return Effect.fail(CommandFailed.usage("give --password-stdin or --password, not both"))
  }
  if (options.passwordStdin) return Effect.map(passwordFromStdin(prompt), Option.some)
  return Effect.succeed(Option.map(options.password, Redacted.value))
}

/**
 * Goes on when `--yes` was given or the person at the terminal says yes; refuses without a terminal to ask
 * (exit 2), and stops when the answer is no (exit 1).
 */
export const confirm = (yes: boolean, question: string): Effect.Effect<void, CommandFailed, Terminal.Terminal> =>
  Effect.gen(function*() {
    if (yes) return
    if (process.stdin.isTTY !== true) {
      return yield* CommandFailed.usage("this cannot be undone: add --yes to go ahead (no terminal to ask on)")
    }
    const answer = yield* Prompt.confirm({ message: question, initial: false }).pipe(Effect.mapError(cancelled))
    if (!answer) return yield* cancelled()
  })
