/**
 * `convene serve` is the server of `pnpm start`: it answers /readyz, serves the operator commands, exits 0 on
 * SIGTERM after draining, and refuses a bad configuration in one line with exit code 1.
 */
import { spawn } from "node:child_process"
import { once } from "node:events"
import { describe, expect, it } from "vitest"
import { freePort } from "../support/process.js"
import { OPERATOR_TOKEN } from "../support/server.js"
import { cliMain, convene, waitForStatus } from "./support.js"

const serve = (env: Record<string, string>) => {
  const child = spawn(process.execPath, [cliMain, "serve"], {
    env: { PATH: process.env.PATH ?? "", HOST: "127.0.0.1", CONVENE_STORE: "memory", CONVENE_LOG_FORMAT: "json", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk) => (stdout += chunk))
  child.stderr.on("data", (chunk) => (stderr += chunk))
  const exited = once(child, "exit").then(([code]) => code as number | null)
  return { child, exited, stdout: () => stdout, stderr: () => stderr }
}

describe("convene serve", () => {
  it("starts the server, which answers /readyz and the operator commands, and exits 0 on SIGTERM", async () => {
    const port = await freePort()
    const server = serve({ PORT: String(port), CONVENE_OPERATOR_TOKEN: OPERATOR_TOKEN })
    try {
      const url = `http://127.0.0.1:${port}`
      await waitForStatus(`${url}/readyz`, 200)
      const listed = await convene(["workspaces", "list", "--url", url], { env: { CONVENE_OPERATOR_TOKEN: OPERATOR_TOKEN } })
      expect(listed).toMatchObject({ code: 0, stdout: "No workspaces.\n" })

      server.child.kill("SIGTERM")
      expect(await server.exited).toBe(0)
      expect(server.stdout()).toContain(`"msg":"drained`)
      expect(server.stderr()).toBe("")
    } finally {
      server.child.kill("SIGKILL")
    }
  }, 90_000)

  it("refuses a bad configuration in one line, exit 1", async () => {
    const server = serve({ PORT: String(await freePort()), CONVENE_OPERATOR_TOKEN: "too short" })
    expect(await server.exited).toBe(1)
    expect(server.stderr()).toBe(
      "Convene cannot start: CONVENE_OPERATOR_TOKEN is set but shorter than 32 characters; set a longer one " +
        "(for example the output of `openssl rand -base64 32`) or unset it to turn the operator API off\n"
    )
  }, 60_000)
})
