/**
 * The compiled `convene` command as people and scripts run it: its bin (`packages/cli/bin/convene.mjs`, which
 * loads the compiled `dist/main.js`) in a Node process of its own, with only the environment a test gives it and
 * standard input from the test (closed when none).
 */
import { spawn } from "node:child_process"
import { once } from "node:events"
import { fileURLToPath } from "node:url"

export const cliMain = fileURLToPath(new URL("../../packages/cli/bin/convene.mjs", import.meta.url))

export interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `convene args...` to its end (at most 60 s) with `env` on top of PATH and HOME. */
export const convene = async (
  args: ReadonlyArray<string>,
  options: { readonly env?: Record<string, string>; readonly input?: string } = {}
): Promise<Run> => {
  const child = spawn(process.execPath, [cliMain, ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...options.env },
    stdio: ["pipe", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk) => (stdout += chunk))
  child.stderr.on("data", (chunk) => (stderr += chunk))
  child.stdin.end(options.input ?? "")
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000)
  const [code] = await once(child, "exit")
  clearTimeout(timer)
  return { code: code as number | null, stdout, stderr }
}

/** Waits until `url` answers `status` (or the deadline passes). */
export const waitForStatus = async (url: string, status: number, ms = 60_000): Promise<void> => {
  const deadline = Date.now() + ms
  for (;;) {
    if ((await fetch(url).then((response) => response.status, () => 0)) === status) return
    if (Date.now() > deadline) throw new Error(`${url} did not answer ${status} within ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
