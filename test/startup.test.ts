/**
 * The compiled server refuses a configuration that would be a mistake, with one plain line saying which
 * variable is wrong and exit code 1, and starts with a good one.
 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { once } from "node:events"
import { Effect, Exit, Scope } from "effect"
import { describe, expect, it } from "vitest"
import { pgliteMigratedDataDir } from "./support/pglite.js"
import { freePort, serverMain, startServerProcess } from "./support/process.js"

/** Runs the server with `env` until it exits (it must, within 20 s); answers its exit code and output. */
const runUntilExit = async (env: Record<string, string | undefined>) => {
  const child = spawn(process.execPath, [serverMain], {
    // CONVENE_STORE: undefined runs on the store the other variables name.
    env: Object.fromEntries(
      Object.entries({ PATH: process.env.PATH ?? "", PORT: String(await freePort()), CONVENE_STORE: "memory", ...env })
        .filter((entry): entry is [string, string] => entry[1] !== undefined)
    ),
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

  it("refuses a malformed CONVENE_SECRET_KEY without echoing it", async () => {
    const run = await runUntilExit({ CONVENE_SECRET_KEY: "hunter2-not-a-key" })
    expect(run.code).toBe(1)
    expect(run.stderr.trim()).toBe(
      "Convene cannot start: CONVENE_SECRET_KEY: expected 32 random bytes as 64 hexadecimal characters or in base64 " +
        "(for example the output of `openssl rand -hex 32`)"
    )
    expect(run.stderr).not.toContain("hunter2")
  })
})

describe("the installation's secret key", () => {
  const kidOf = async (url: string) =>
    ((await (await fetch(`${url}/v1/oauth/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string }> }).keys.map((key) => key.kid)

  it("is made once beside the data directory (owner-only), so the signing key survives a restart; another key is refused", async () => {
    // A copy of the migrated PGlite template cluster (creating and migrating one takes seconds): the key file goes beside it.
    const scope = Effect.runSync(Scope.make())
    const dataDir = await Effect.runPromise(Scope.extend(pgliteMigratedDataDir, scope))
    const home = Path.dirname(dataDir)
    try {
      const env = { CONVENE_DATA_DIR: dataDir }
      const first = await startServerProcess(env)
      const before = await kidOf(first.url)
      await first.stop()
      const file = Path.join(home, "secret.key")
      expect(Fs.statSync(file).mode & 0o777).toBe(0o600)
      expect(first.output()).toContain(`created the installation's secret key in ${file}`)

      const second = await startServerProcess(env)
      expect(await kidOf(second.url)).toEqual(before)
      expect(second.output()).not.toContain("created the installation's secret key")
      await second.stop()

      const other = await runUntilExit({ ...env, CONVENE_STORE: undefined, CONVENE_SECRET_KEY: "ab".repeat(32) })
      expect(other.code).toBe(1)
      expect(other.stderr).toContain("Convene cannot start: the store's signing key cannot be opened with this secret key")
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }, 90_000)
})
