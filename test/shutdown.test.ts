/**
 * Stopping and starting the compiled server as a process, as systemd, Docker or a terminal do: SIGTERM under
 * load answers every request in flight and exits 0 within the drain time; a second signal exits at once and
 * leaves no lock file; a PostgreSQL server that is not up yet is waited for; a missing database is a plain
 * fatal line without the password.
 */
import { spawn } from "node:child_process"
import { once } from "node:events"
import * as Fs from "node:fs"
import { request as httpRequest } from "node:http"
import { connect, createServer, type Socket } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { Effect, Exit, Redacted, Scope } from "effect"
import { describe, expect, it } from "vitest"
import { serverDatabase } from "../packages/store-pg/test/fixtures.js"
import { pgliteMigratedDataDir } from "./support/pglite.js"
import { freePort, serverMain, startServerProcess } from "./support/process.js"
import { OPERATOR_TOKEN, provision } from "./support/server.js"

const pgUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

/** Spawns the server and collects its output; `exited` resolves with the exit code. */
const spawnServer = (env: Record<string, string>) => {
  const child = spawn(process.execPath, [serverMain], {
    env: { PATH: process.env.PATH ?? "", HOST: "127.0.0.1", CONVENE_LOG_FORMAT: "json", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk) => (stdout += chunk))
  child.stderr.on("data", (chunk) => (stderr += chunk))
  const exited = once(child, "exit").then(([code]) => code as number | null)
  return { child, exited, stdout: () => stdout, stderr: () => stderr }
}

/** Polls `condition` until it holds; a timeout names what was awaited and, given `output`, what the server said. */
const waitFor = async (condition: () => Promise<boolean> | boolean, what: string, ms = 30_000, output?: () => string) => {
  const deadline = Date.now() + ms
  while (!(await condition())) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}${output === undefined ? "" : `; the server printed:\n${output()}`}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/**
 * One POST on its own connection, half of its body sent: `finish` sends the rest; `status` resolves with the status,
 * or the error code when no answer came.
 */
const post = (url: string, path: string, token: string, body: string) => {
  let finish = () => {}
  const status = new Promise<number | string>((resolve) => {
    const request = httpRequest(`${url}${path}`, {
      method: "POST",
      agent: false,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) }
    }, (response) => {
      response.resume()
      response.on("end", () => resolve(response.statusCode ?? 0))
    })
    request.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"))
    request.write(body.slice(0, 5))
    finish = () => request.end(body.slice(5))
  })
  return { status, finish }
}

/** The requests the server has received and not yet answered, as its /metrics says. */
const inFlight = async (url: string) => {
  const response = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } })
  const match = /^convene_http_requests_in_flight(?:\{[^}]*\})? (\d+)/m.exec(await response.text())
  return match === null ? 0 : Number(match[1])
}

describe("SIGTERM", () => {
  it("answers every request in flight under load and exits 0 within the drain time", async () => {
    // A copy of the migrated PGlite template cluster (test/support/pglite.ts): creating and migrating one takes seconds,
    // and is shown in "starting" below.
    const scope = Effect.runSync(Scope.make())
    const dataDir = await Effect.runPromise(Scope.extend(pgliteMigratedDataDir, scope))
    // The drain time leaves room for a loaded CI machine: 40 meetings created on PGlite take about a second here
    // alone, five with the rest of the suite running beside it.
    const server = await startServerProcess({ CONVENE_DATA_DIR: dataDir, CONVENE_SHUTDOWN_TIMEOUT_MS: "20000" })
    try {
      const { token } = await provision(server.url)
      const body = JSON.stringify({ title: "In flight" })
      // 40 requests in flight (received by the server, their bodies half sent), then SIGTERM, then the rest of
      // their bodies: every one of them must be answered.
      const requests = Array.from({ length: 40 }, () => post(server.url, "/v1/meetings", token, body))
      await waitFor(async () => (await inFlight(server.url)) === 40, "40 requests in flight", 30_000, server.output)
      const signalled = Date.now()
      server.child.kill("SIGTERM")
      await waitFor(() => server.output().includes("shutting down"), "the drain to start", 30_000, server.output)
      for (const request of requests) request.finish()
      const statuses = await Promise.all(requests.map((request) => request.status))
      expect(statuses.filter((status) => status !== 201 && status !== 503)).toEqual([])
      expect(statuses.filter((status) => status === 201).length).toBeGreaterThan(0)
      const [code] = await once(server.child, "exit")
      expect(code).toBe(0)
      expect(Date.now() - signalled).toBeLessThan(20_000 + 3_000)
      expect(server.output()).toContain("drained")
      expect(Fs.existsSync(Path.join(dataDir, "convene.lock"))).toBe(false)
    } finally {
      await server.kill()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }, 60_000)

  it("exits at once on a second signal, without leaving the data directory locked", async () => {
    const scope = Effect.runSync(Scope.make())
    const dataDir = await Effect.runPromise(Scope.extend(pgliteMigratedDataDir, scope))
    const server = await startServerProcess({ CONVENE_DATA_DIR: dataDir, CONVENE_SHUTDOWN_TIMEOUT_MS: "60000" })
    let socket: Socket | undefined
    try {
      // A request that never completes keeps the drain waiting for its full minute.
      socket = connect(Number(new URL(server.url).port), "127.0.0.1")
      await once(socket, "connect")
      socket.on("error", () => {})
      socket.write("POST /v1/meetings HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{")
      await new Promise((resolve) => setTimeout(resolve, 200))
      server.child.kill("SIGTERM")
      await waitFor(() => server.output().includes("shutting down"), "the drain to start")
      // Signals within a second of the first count as the same one (pnpm passes Ctrl-C on to the server).
      await new Promise((resolve) => setTimeout(resolve, 1_100))
      const signalled = Date.now()
      server.child.kill("SIGTERM")
      const [code] = await once(server.child, "exit")
      expect(code).toBe(1)
      expect(Date.now() - signalled).toBeLessThan(2_000)
      expect(server.output()).toContain("exiting now")
      expect(Fs.existsSync(Path.join(dataDir, "convene.lock"))).toBe(false)
    } finally {
      socket?.destroy()
      await server.kill()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }, 60_000)
})

describe("starting", () => {
  it("says what it is on one line: version, address, store without credentials, operator API, partner SSO", async () => {
    const dataDir = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "convene-first-start-")), "data")
    const port = await freePort()
    const run = spawnServer({ PORT: String(port), CONVENE_DATA_DIR: dataDir })
    try {
      await waitFor(() => run.stdout().includes("ready"), "ready", 60_000)
      const lines = run.stdout().trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>)
      expect(lines.find((line) => String(line.msg).startsWith("creating the embedded database"))?.msg)
        .toContain(dataDir)
      const started = lines.find((line) => String(line.msg).startsWith("Convene "))
      expect(started).toMatchObject({
        level: "info",
        address: `http://127.0.0.1:${port}`,
        store: `embedded PostgreSQL in ${dataDir}`,
        operator_api: "off",
        partner_sso: "off (CONVENE_SECRETS_KEY is not set)"
      })
      expect(String(started!.msg)).toMatch(/^Convene \d+\.\d+\.\d+ listening$/)
    } finally {
      run.child.kill("SIGTERM")
      expect(await run.exited).toBe(0)
    }
    // The second start finds the database and says nothing of creating it.
    const again = spawnServer({ PORT: String(port), CONVENE_DATA_DIR: dataDir })
    await waitFor(() => again.stdout().includes("ready"), "ready", 60_000)
    again.child.kill("SIGINT")
    expect(await again.exited).toBe(0)
    expect(again.stdout()).not.toContain("creating the embedded database")
    expect(again.stderr()).toBe("")
    // Two starts, the first creating a PGlite cluster: its waits allow 60 s each, so the test's own limit must too.
  }, 150_000)

  it("waits for a PostgreSQL server that is not up yet: live at once, ready once it is reachable", async () => {
    // A database of its own: the server migrates it and runs its workers there, whatever other runs left behind.
    const scope = Effect.runSync(Scope.make())
    const database = new URL(Redacted.value(await Effect.runPromise(Scope.extend(serverDatabase, scope))))
    // A TCP relay on a free port that starts forwarding to the real server only when the test says so.
    const relayPort = await freePort()
    const relay = createServer((client) => {
      const upstream = connect(Number(database.port || 5432), database.hostname)
      client.pipe(upstream).pipe(client)
      client.on("error", () => upstream.destroy())
      upstream.on("error", () => client.destroy())
    })
    const url = new URL(database)
    url.port = String(relayPort)
    url.password = "hunter2-secret"
    const port = await freePort()
    const run = spawnServer({ PORT: String(port), DATABASE_URL: url.toString() })
    const said = () => run.stdout() + run.stderr()
    try {
      await waitFor(() => fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status === 200, () => false), "liveness", 30_000, said)
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(503)
      await waitFor(() => run.stdout().includes("not reachable yet"), "a retry line", 30_000, said)
      relay.listen(relayPort, "127.0.0.1")
      // The next attempt comes within the backoff step reached so far (0.5 s doubling, up to 30 s, jittered).
      await waitFor(
        () => fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status === 200, () => false),
        "readiness",
        60_000,
        said
      )
      const retry = run.stdout().split("\n").find((line) => line.includes("not reachable yet"))!
      expect(JSON.parse(retry)).toMatchObject({ level: "warn", attempt: 1 })
      expect(retry).toContain(`127.0.0.1:${relayPort}/`)
      expect(said()).not.toContain("hunter2-secret")
    } finally {
      run.child.kill("SIGTERM")
      await run.exited
      relay.close()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
    // Its waits add up to two minutes at most (start, a retry line, readiness): the test's own limit covers them.
  }, 150_000)

  it("stops with one plain line naming DATABASE_URL when the database does not exist, without the password", async () => {
    const url = new URL(pgUrl)
    url.pathname = "/convene_no_such_database"
    url.password = "hunter2-secret"
    const run = spawnServer({ PORT: String(await freePort()), DATABASE_URL: url.toString() })
    expect(await run.exited).toBe(1)
    expect(run.stderr().trim()).toBe(
      `Convene cannot start: the database named in DATABASE_URL does not exist on PostgreSQL at ${url.host}/convene_no_such_database; create it first`
    )
    expect(run.stdout() + run.stderr()).not.toContain("hunter2-secret")
    expect(run.stderr()).not.toContain("node_modules")
  })
})

describe("pnpm start", () => {
  it("stops cleanly on Ctrl-C (SIGINT to the whole process group), exit 0 and no error printed", async () => {
    const port = await freePort()
    const root = Path.resolve(import.meta.dirname, "..")
    // A terminal sends SIGINT to every process of the foreground group: pnpm, its shell and the server.
    const child = spawn("pnpm", ["start"], {
      cwd: root,
      detached: true,
      env: { ...process.env, PORT: String(port), CONVENE_STORE: "memory", CONVENE_LOG_FORMAT: "pretty" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.on("data", (chunk) => (output += chunk))
    child.stderr.on("data", (chunk) => (output += chunk))
    const exited = once(child, "exit")
    await waitFor(() => output.includes("ready"), "ready", 60_000)
    process.kill(-child.pid!, "SIGINT")
    const [code, signal] = await exited
    expect([code, signal]).toEqual([0, null])
    expect(output).toContain("stopped")
    expect(output).not.toMatch(/ELIFECYCLE|Error|failed/i)
  })
})
