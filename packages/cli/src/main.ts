/**
 * The `convene` process (bin/convene.mjs): runs the command line, prints an expected failure as one line on
 * standard error and exits with its code (Failure.ts); @effect/cli has printed its own usage errors (exit 2).
 *
 * The runtime's options are those of the server's entry (`runMainOptions` in @convene/http's Serve.ts, which
 * `convene serve` runs): our own logger, and the exit code a program leaves in `process.exitCode`. They are
 * written out here rather than imported so that the operator commands do not load the server.
 */
import { ValidationError } from "@effect/cli"
// The two modules, not the package's index: the index loads every Node integration (HTTP server, workers,
// cluster sockets) and would double the start-up time of every command.
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Exit } from "effect"
import { run } from "./Cli.js"
import { CommandFailed, ExitCode } from "./Failure.js"

const exitWith = (code: number) =>
  Effect.sync(() => {
    process.exitCode = code
  })

const program = run(process.argv).pipe(
  Effect.catchIf(
    (error): error is CommandFailed => error instanceof CommandFailed,
    (failure) => Effect.zipRight(Console.error(failure.message), exitWith(failure.exitCode))
  ),
  Effect.catchIf(ValidationError.isValidationError, () => exitWith(ExitCode.usage)),
  Effect.provide(NodeContext.layer)
)

NodeRuntime.runMain(program, {
  disablePrettyLogger: true,
  teardown: (exit, onExit) => onExit(Exit.isFailure(exit) && !Exit.isInterrupted(exit) ? 1 : Number(process.exitCode ?? 0))
})
