/**
 * The real server as users run it: the compiled `packages/http/dist/main.js` in its own Node process,
 * configured through the environment, on a free port.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { createServer } from "node:net"
import { fileURLToPath } from "node:url"
import { OPERATOR_TOKEN } from "./server.js"

export const serverMain = fileURLToPath(new URL("../../packages/http/dist/main.js", import.meta.url))

export const freePort = async (): Promise<number> => {
  const server = createServer()
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  const address = server.address()
  server.close()
  if (address === null || typeof address === "string") throw new Error("no port")
  return address.port
}

export interface ServerProcess {
  readonly url: string
  readonly child: ChildProcess
  readonly output: () => string
  /** SIGKILL: no shutdown hooks, no flush. */
  readonly kill: () => Promise<void>
  /** SIGTERM and wait for the exit. */
  readonly stop: () => Promise<void>
}

/** Starts the server process and waits until /readyz answers 200 (or the process dies). */
export const startServerProcess = async (env: Record<string, string>): Promise<ServerProcess> => {
  // A given PORT restarts a server where its clients expect it.
  const port = env.PORT === undefined ? await freePort() : Number(env.PORT)
  const child = spawn(process.execPath, [serverMain], {
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      PORT: String(port),
      HOST: "127.0.0.1",
      CONVENE_OPERATOR_TOKEN: OPERATOR_TOKEN,
      CONVENE_ACCESS_LOG: "false",
      ...env
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  const exited = once(child, "exit")
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 120_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}:\n${output}`)
    if (Date.now() > deadline) {
      child.kill("SIGKILL")
      throw new Error(`the server did not become healthy within 120 s:\n${output}`)
    }
    const healthy = await fetch(`${url}/readyz`).then((r) => r.status === 200, () => false)
    if (healthy) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const finish = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal)
      await exited
    }
  }
  return { url, child, output: () => output, kill: () => finish("SIGKILL"), stop: () => finish("SIGTERM") }
}
