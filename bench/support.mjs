// What the benchmark scripts share: a free port, a JSON caller, waiting for a server to be ready, and a workspace
// with an owner's personal access token made through the operator API.
import { spawn } from "node:child_process"
import { once } from "node:events"
import { createServer } from "node:net"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

export const freePort = async () => {
  const server = createServer().listen(0, "127.0.0.1")
  await once(server, "listening")
  const { port } = server.address()
  server.close()
  return port
}

/** Waits until `url` answers /readyz 200; fails with the server's last output if `child` exits first. */
export const waitReady = async (url, child, output) => {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited: ${output()}`)
    if (await fetch(`${url}/readyz`).then((r) => r.status === 200, () => false)) return
    await sleep(100)
  }
}

/** A JSON call to the server at `url` with a bearer token; throws on anything but 2xx. */
export const caller = (url) => async (method, path, token, body, headers = {}) => {
  const response = await fetch(url + path, {
    method,
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`)
  return text === "" ? undefined : JSON.parse(text)
}

/** An ENTERPRISE workspace and a personal access token of its OWNER with `scopes`. */
export const provision = async (call, operatorToken, scopes) => {
  const ws = await call("POST", "/operator/v1/workspaces", operatorToken, { name: "Bench", plan: "ENTERPRISE" })
  const user = await call("POST", `/operator/v1/workspaces/${ws.id}/users`, operatorToken, {
    email: "bench@example.com",
    name: "Bench",
    role: "OWNER",
    password: "correct horse battery"
  })
  const { token } = await call("POST", `/operator/v1/users/${user.id}/tokens`, operatorToken, {
    kind: "personal_access_token",
    scopes,
    expiry_days: 30
  })
  return { workspaceId: ws.id, userId: user.id, token }
}

/**
 * The compiled server (`packages/http/dist/main.js`) on a free port of 127.0.0.1 with `operatorToken` and the request
 * budgets off (one load generator would otherwise measure 429s), `env` added; ready when it answers /readyz.
 */
export const startBenchServer = async (operatorToken, env = {}) => {
  const root = fileURLToPath(new URL("..", import.meta.url))
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const child = spawn(process.execPath, [join(root, "packages/http/dist/main.js")], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", CONVENE_BASE_URL: url, CONVENE_OPERATOR_TOKEN: operatorToken, CONVENE_RATE_LIMITS: "off", ...env },
    stdio: ["ignore", "ignore", "inherit"]
  })
  await waitReady(url, child, () => "(its output went to this terminal)")
  return {
    url,
    stop: async () => {
      child.kill("SIGTERM")
      await once(child, "exit")
    }
  }
}
