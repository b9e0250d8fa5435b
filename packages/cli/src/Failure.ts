/**
 * How a command fails: one line on standard error and an exit code, never a stack trace.
 *
 * | code | meaning |
 * |---|---|
 * | 0 | success |
 * | 1 | the server (or the database, for `migrate`) refused: an API error, migrations pending for `migrate --check` |
 * | 2 | usage: a flag or argument @effect/cli refuses, a value the contract refuses before anything is sent, a missing or malformed CONVENE_URL / CONVENE_OPERATOR_TOKEN |
 * | 3 | what the command talks to cannot be reached: the Convene server at CONVENE_URL (or PostgreSQL, for `migrate`) |
 */
import { ParseResult, Schema } from "effect"

export const ExitCode = {
  ok: 0,
  failed: 1,
  usage: 2,
  unreachable: 3
} as const
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode]

/** A command's expected failure: `message` is the whole line printed on standard error. */
export class CommandFailed extends Schema.TaggedError<CommandFailed>()("CommandFailed", {
  message: Schema.String,
  exitCode: Schema.Literal(ExitCode.failed, ExitCode.usage, ExitCode.unreachable)
}) {
  /** Exit 1: the server or the store refused. */
  static readonly failed = (message: string) => new CommandFailed({ message, exitCode: ExitCode.failed })
  /** Exit 2: the command cannot run as invoked. */
  static readonly usage = (message: string) => new CommandFailed({ message: `error: ${message}`, exitCode: ExitCode.usage })
  /** Exit 3: what the command talks to is not there. */
  static readonly unreachable = (message: string) => new CommandFailed({ message, exitCode: ExitCode.unreachable })
}

/** A contract field as the command line spells it: `expiry_days` is `--expiry-days`. */
export const flagOf = (field: string): string => `--${field.replaceAll("_", "-")}`

/**
 * Each problem of a refused input on its own: `--name: must not be empty; --plan: ...`. `label` names the
 * input when the problem has no field of its own (a positional id).
 */
export const describeParseError = (error: ParseResult.ParseError, label?: string): string => {
  // One problem per input: an optional field refused by its rule is also "not undefined", which says nothing.
  const problems = new Map<string, string>()
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
    const [field] = issue.path
    const name = field === undefined ? label ?? "" : flagOf(String(field))
    if (!problems.has(name)) problems.set(name, name === "" ? issue.message : `${name}: ${issue.message}`)
  }
  return [...problems.values()].join("; ")
}

const connectionFailures: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
  [["ECONNREFUSED"], "connection refused"],
  [["ENOTFOUND", "EAI_AGAIN"], "unknown host"],
  [["ETIMEDOUT", "UND_ERR_CONNECT_TIMEOUT"], "timed out"],
  [["ECONNRESET", "UND_ERR_SOCKET", "EPIPE"], "connection reset"],
  [["EHOSTUNREACH", "ENETUNREACH"], "no route to host"]
]

/** A failed connection's error codes (`ECONNREFUSED`, ...) in a few words, when one of them is known. */
export const connectionFailure = (codes: ReadonlyArray<string>): string | undefined =>
  connectionFailures.find(([matching]) => matching.some((code) => codes.includes(code)))?.[1]
