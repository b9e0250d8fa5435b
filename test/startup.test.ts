/**
 * The compiled server refuses a configuration that would be a mistake, with one plain line saying which
 * variable is wrong and exit code 1, and starts with a good one.
 */
import { spawn } from "node:child_process"
import { once } from "node:events"
import { describe, expect, it } from "vitest"
import { freePort, serverMain, startServerProcess } from "./support/process.js"

/** Runs the server with `env` until it exits (it must, within 20 s); answers its exit code and output. */
const runUntilExit = async (env: Record<string, string>) => {
  const child = spawn(process.execPath, [serverMain], {
    env: { PATH: process.env.PATH ?? "", PORT: String(await freePort()), CONVENE_STORE: "memory", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk) => (stdout += chunk))
  child.stderr.on("data", (chunk) => (stderr += chunk))
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000)
  const [code] = await once(child, "exit")
  clearTimeout(timer)
  return { code: code as number | null, stdout, stderr }
}

describe("starting the server", () => {
  it.each([
    ["empty", ""],
    ["short", "x".repeat(31)]
  ])("refuses an operator token that is %s, naming the variable, and exits 1", async (_, token) => {
    const run = await runUntilExit({ CONVENE_OPERATOR_TOKEN: token })
    expect(run.code).toBe(1)
    expect(run.stderr.trim()).toBe(
      "Convene cannot start: CONVENE_OPERATOR_TOKEN is set but shorter than 32 characters; set a longer one " +
        "(for example the output of `openssl rand -base64 32`) or unset it to turn the operator API off"
    )
    expect(run.stdout).not.toContain("Listening")
  })

  it("refuses an invalid limit, naming the variable", async () => {
    const run = await runUntilExit({ CONVENE_REQUEST_TIMEOUT_MS: "soon" })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain("Convene cannot start: CONVENE_REQUEST_TIMEOUT_MS")
  })

  it.each([
    ["0", "expected a whole number from 1 to 1000"],
    ["many", "Expected an integer value"]
  ])("refuses a pool size of %j, naming the variable and what it must be", async (size, problem) => {
    const run = await runUntilExit({ CONVENE_DATABASE_POOL_SIZE: size, DATABASE_URL: "postgres://127.0.0.1:1/none" })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(`Convene cannot start: CONVENE_DATABASE_POOL_SIZE: ${problem}`)
  })

  it("starts with a 32-character operator token and serves the operator API", async () => {
    const token = "o".repeat(32)
    const server = await startServerProcess({ CONVENE_STORE: "memory", CONVENE_OPERATOR_TOKEN: token })
    try {
      const response = await fetch(`${server.url}/operator/v1/workspaces`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "Started", plan: "PRO" })
      })
      expect(response.status).toBe(201)
    } finally {
      await server.stop()
    }
  })
})
