/** @convene/cli: the `convene` command (see README, "Command line"). */
export { ExitCode } from "./Failure.js"
