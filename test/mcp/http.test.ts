/**
 * The MCP endpoint end to end over real HTTP, driven by the official SDK's own client (`Client` with
 * `StreamableHTTPClientTransport`):
 * - an assistant that knows nothing but the MCP URL: the 401's WWW-Authenticate names the protected-resource metadata,
 *   which names Convene's OAuth issuer; the SDK discovers the authorization server there, registers itself
 *   (POST /v1/oauth/register), sends the user to authorize (real headless Chromium signs in and approves on the consent
 *   page), exchanges the code with PKCE, and calls the tools with the token;
 * - a personal access token configured by hand; scopes, visibility and hostile arguments as tool errors;
 * - sessions: bound to their user (another user's credential: 404), ended by DELETE, closed when idle, and when the
 *   server stops (an open event stream ends at once); a browser page of another site refused (Origin);
 * - CONVENE_MCP=false: no endpoint and no metadata (404); CONVENE_MCP_URL read and checked.
 */
import { defaultLimits, hostConfig, type HostConfig } from "@convene/http"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { discoverAuthorizationServerMetadata, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js"
import { ConfigProvider, Effect } from "effect"
import { createServer, type Server } from "node:http"
import { type Browser, chromium } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, OPERATOR_TOKEN } from "../support/server.js"
import { chromiumPath, newUser, type PasswordUser, startOAuthServer } from "../http/oauth/support.js"

interface McpTestServer {
  readonly url: string
  readonly mcpUrl: string
  readonly close: () => Promise<void>
}

/** A real server on a reserved port whose base URL names it (the issuer and the MCP URL derive from it). */
const startMcpServer = async (mcp?: (baseUrl: string) => HostConfig["mcp"]): Promise<McpTestServer> => {
  const server = await startOAuthServer({ ...(mcp === undefined ? {} : { mcp }) })
  return { url: server.url, mcpUrl: mcp?.(server.baseUrl)?.url ?? `${server.url}/mcp`, close: server.close }
}

const operator = (url: string) => client(url, OPERATOR_TOKEN)

/** A personal access token of `user` with `scopes`, issued by the operator. */
const patOf = async (url: string, userId: string, scopes: ReadonlyArray<string>) => {
  const issued = await operator(url).post(`/operator/v1/users/${userId}/tokens`, { kind: "personal_access_token", scopes, expiry_days: 30 })
  if (issued.status !== 201) throw new Error(`token issue failed: ${issued.status} ${issued.text}`)
  return issued.body.token as string
}

const ALL_MEMBER_SCOPES = ["meetings:read", "meetings:write", "action-items:read", "action-items:write", "calendar:read"]

/** An SDK client connected with a bearer token configured by hand. */
const connectWithToken = async (mcpUrl: string, token: string) => {
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } })
  const mcp = new Client({ name: "convene-test", version: "1.0.0" })
  await mcp.connect(transport)
  return { mcp, transport }
}

/** The text of a tool result's first content. */
const textOf = (result: Awaited<ReturnType<Client["callTool"]>>) => {
  const content = result.content as ReadonlyArray<{ readonly type: string; readonly text?: string }>
  return content[0]?.text ?? ""
}

/** A raw MCP request to the endpoint (for what the SDK client would never send). */
const raw = (mcpUrl: string, init: { method?: string; token?: string; session?: string; body?: unknown; headers?: Record<string, string> }) =>
  fetch(mcpUrl, {
    method: init.method ?? "POST",
    headers: {
      accept: "application/json, text/event-stream",
      ...(init.body === undefined ? {} : { "content-type": "application/json" }),
      ...(init.token === undefined ? {} : { authorization: `Bearer ${init.token}` }),
      ...(init.session === undefined ? {} : { "mcp-session-id": init.session, "mcp-protocol-version": "2025-11-25" }),
      ...init.headers
    },
    ...(init.body === undefined ? {} : { body: typeof init.body === "string" ? init.body : JSON.stringify(init.body) })
  })

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
}

describe("the MCP endpoint", () => {
  let server: McpTestServer
  let browser: Browser | undefined
  let callback: Server | undefined
  let callbackOrigin = ""
  /** The callback queries the redirect brought (code, state, iss). */
  const arrived: Array<URLSearchParams> = []

  beforeAll(async () => {
    server = await startMcpServer()
    callback = createServer((request, response) => {
      const target = new URL(request.url ?? "/", "http://callback")
      if (target.pathname === "/callback") arrived.push(target.searchParams)
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end("<!doctype html><title>Done</title><p>Done.</p>")
    })
    await new Promise<void>((resolve) => callback!.listen(0, "127.0.0.1", resolve))
    const address = callback.address()
    if (typeof address !== "object" || address === null) throw new Error("no callback address")
    callbackOrigin = `http://127.0.0.1:${address.port}`
  })

  afterAll(async () => {
    await browser?.close()
    await new Promise((resolve) => callback?.close(resolve))
    await server?.close()
  })

  it("answers 401 with the protected-resource metadata, which leads to the authorization server and its registration endpoint", async () => {
    const response = await raw(server.mcpUrl, { body: initialize })
    expect(response.status).toBe(401)
    const body = await response.json()
    expect(body).toMatchObject({ code: "unauthorized", request_id: response.headers.get("x-request-id") })
    const challenge = response.headers.get("www-authenticate") ?? ""
    const metadataUrl = `${server.url}/.well-known/oauth-protected-resource/mcp`
    expect(challenge).toBe(`Bearer resource_metadata="${metadataUrl}"`)

    const bad = await raw(server.mcpUrl, { body: initialize, token: "svc_at_v1_" + "x".repeat(43) })
    expect(bad.status).toBe(401)
    expect(await bad.json()).toMatchObject({ code: "invalid_token" })
    expect(bad.headers.get("www-authenticate")).toBe(`Bearer error="invalid_token", resource_metadata="${metadataUrl}"`)

    for (const path of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]) {
      const metadata = await fetch(server.url + path)
      expect(metadata.status).toBe(200)
      expect(await metadata.json()).toEqual({
        resource: server.mcpUrl,
        authorization_servers: [`${server.url}/v1/oauth`],
        scopes_supported: ALL_MEMBER_SCOPES,
        bearer_methods_supported: ["header"],
        resource_name: "Convene"
      })
    }
    // The SDK's discovery from the issuer (RFC 8414 with the path inserted, then OpenID Connect's forms).
    const authorizationServer = await discoverAuthorizationServerMetadata(`${server.url}/v1/oauth`)
    expect(authorizationServer).toMatchObject({
      issuer: `${server.url}/v1/oauth`,
      registration_endpoint: `${server.url}/v1/oauth/register`,
      token_endpoint: `${server.url}/v1/oauth/token`,
      code_challenge_methods_supported: ["S256"]
    })
  })

  it("an assistant knowing only the URL: discovery, registration, sign-in and consent in Chromium, PKCE, then tool calls", async () => {
    browser = await chromium.launch({ executablePath: chromiumPath(), args: ["--no-sandbox"] })
    const user = await newUser(server.url)
    const rest = client(server.url, await patOf(server.url, user.userId, ALL_MEMBER_SCOPES))
    const meeting = await rest.post("/v1/meetings", { title: "Roadmap review", start_time: "2030-03-01T09:00:00Z", end_time: "2030-03-01T10:00:00Z" })
    expect(meeting.status).toBe(201)

    const provider = new BrowserProvider(`${callbackOrigin}/callback`, browser, user, () => arrived.at(-1))
    const attempt = () => {
      const transport = new StreamableHTTPClientTransport(new URL(server.mcpUrl), { authProvider: provider })
      return { transport, mcp: new Client({ name: "assistant", version: "1.0.0" }) }
    }
    const first = attempt()
    await expect(first.mcp.connect(first.transport)).rejects.toBeInstanceOf(UnauthorizedError)
    expect(provider.registered?.client_id).toEqual(expect.any(String))
    const redirect = provider.redirectedTo!
    expect(redirect.origin + redirect.pathname).toBe(`${server.url}/v1/oauth/authorize`)
    expect(redirect.searchParams.get("code_challenge_method")).toBe("S256")
    expect(redirect.searchParams.get("resource")).toBe(server.mcpUrl)
    expect(redirect.searchParams.get("scope")).toBe(ALL_MEMBER_SCOPES.join(" "))
    const code = provider.code!
    expect(code).toEqual(expect.any(String))
    await first.transport.finishAuth(code)
    expect(provider.saved?.access_token).toMatch(/^svc_at_v1_/)
    expect(provider.saved?.refresh_token).toEqual(expect.any(String))
    expect(provider.saved?.scope?.split(" ").sort()).toEqual([...ALL_MEMBER_SCOPES].sort())

    const second = attempt()
    await second.mcp.connect(second.transport)
    expect(second.transport.sessionId).toMatch(/^[0-9a-f-]{36}$/)
    const tools = await second.mcp.listTools()
    expect(tools.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["list_meetings", "get_meeting", "create_action_item", "update_action_item"]))
    const listed = await second.mcp.callTool({ name: "list_meetings", arguments: {} })
    expect(listed.isError ?? false).toBe(false)
    expect(textOf(listed)).toContain(meeting.body.id)

    // What an assistant does through the tools is what the REST API then shows.
    const created = await second.mcp.callTool({
      name: "create_action_item",
      arguments: { meeting_id: meeting.body.id, title: "Send the notes" }
    })
    expect(created.isError ?? false, textOf(created)).toBe(false)
    const items = await rest.get(`/v1/action-items?meeting_id=${meeting.body.id}`)
    expect(items.body.items.map((item: { title: string }) => item.title)).toContain("Send the notes")

    // The latency of a tool call over HTTP (a new SSE response per call), measured over 20 calls.
    const times: Array<number> = []
    for (let index = 0; index < 20; index++) {
      const started = performance.now()
      await second.mcp.callTool({ name: "get_meeting", arguments: { id: meeting.body.id } })
      times.push(performance.now() - started)
    }
    times.sort((a, b) => a - b)
    console.info(`MCP tool call over HTTP (get_meeting, in-process server, ${process.env.CONVENE_TEST_STORE === "pglite" ? "PGlite" : "memory"} store): median ${times[10]!.toFixed(1)} ms, max ${times[19]!.toFixed(1)} ms`)
    expect(times[10]).toBeLessThan(500)
    await second.mcp.close()
  }, 120_000)

  it("a personal access token configured by hand works; its scopes and its workspace bound what the tools do", async () => {
    const owner = await newUser(server.url)
    const readOnly = await patOf(server.url, owner.userId, ["meetings:read", "action-items:read"])
    const full = client(server.url, await patOf(server.url, owner.userId, ALL_MEMBER_SCOPES))
    const meeting = await full.post("/v1/meetings", { title: "Standup", start_time: "2030-04-01T09:00:00Z", end_time: "2030-04-01T09:15:00Z" })
    const item = await full.post("/v1/action-items", { meeting_id: meeting.body.id, title: "Fix the build" })
    expect(item.status).toBe(201)

    const { mcp } = await connectWithToken(server.mcpUrl, readOnly)
    const read = await mcp.callTool({ name: "get_meeting", arguments: { id: meeting.body.id } })
    expect(read.isError ?? false, textOf(read)).toBe(false)
    const complete = await mcp.callTool({
      name: "update_action_item",
      arguments: { id: item.body.id, status: "completed" }
    })
    expect(complete.isError).toBe(true)
    expect(textOf(complete)).toMatch(/^insufficient_scope: .*action-items:write/)
    expect((await full.get(`/v1/action-items/${item.body.id}`)).body.status).not.toBe("completed")

    // Another workspace's meeting is not there for this user.
    const stranger = await newUser(server.url)
    const theirs = await client(server.url, await patOf(server.url, stranger.userId, ALL_MEMBER_SCOPES))
      .post("/v1/meetings", { title: "Secret", start_time: "2030-04-02T09:00:00Z", end_time: "2030-04-02T10:00:00Z" })
    const hidden = await mcp.callTool({ name: "get_meeting", arguments: { id: theirs.body.id } })
    expect(hidden.isError).toBe(true)
    expect(textOf(hidden)).toMatch(/^not_found: /)
    expect(textOf(hidden)).not.toContain("Secret")
    const listed = await mcp.callTool({ name: "list_meetings", arguments: {} })
    expect(textOf(listed)).not.toContain(theirs.body.id)
    await mcp.close()

    // A workspace API key acts as its workspace: it sees the owner's meeting, not the stranger's.
    const key = await operator(server.url).post(`/operator/v1/workspaces/${owner.workspaceId}/api-keys`, { name: "Assistant key" })
    expect(key.status).toBe(201)
    const byKey = await connectWithToken(server.mcpUrl, key.body.key)
    const seen = await byKey.mcp.callTool({ name: "get_meeting", arguments: { id: meeting.body.id } })
    expect(seen.isError ?? false, textOf(seen)).toBe(false)
    expect(textOf(await byKey.mcp.callTool({ name: "get_meeting", arguments: { id: theirs.body.id } }))).toMatch(/^not_found: /)
    await byKey.mcp.close()
  })

  it("a subscribed meeting's change through the REST API arrives over the session's GET event stream", async () => {
    const user = await newUser(server.url)
    const token = await patOf(server.url, user.userId, ALL_MEMBER_SCOPES)
    const rest = client(server.url, token)
    const meeting = await rest.post("/v1/meetings", { title: "Planning", start_time: "2030-05-01T09:00:00Z", end_time: "2030-05-01T10:00:00Z" })
    const { mcp } = await connectWithToken(server.mcpUrl, token)
    const updated: Array<string> = []
    mcp.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      updated.push(notification.params.uri)
    })
    const uri = `convene://meetings/${meeting.body.id}`
    await mcp.subscribeResource({ uri })
    const changed = await rest.patch(`/v1/meetings/${meeting.body.id}`, { title: "Planning (moved)" })
    expect(changed.status).toBe(200)
    const deadline = Date.now() + 10_000
    while (!updated.includes(uri) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(updated).toContain(uri)
    const read = await mcp.readResource({ uri })
    expect(JSON.stringify(read.contents)).toContain("Planning (moved)")
    await mcp.close()
  })

  it("hostile arguments are tool errors, and the server goes on answering", async () => {
    const user = await newUser(server.url)
    const { mcp } = await connectWithToken(server.mcpUrl, await patOf(server.url, user.userId, ALL_MEMBER_SCOPES))
    const hostile: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
      ["get_meeting", { id: "'; DROP TABLE meetings; --" }],
      ["get_meeting", { id: { $ne: null } }],
      ["get_meeting", {}],
      ["list_meetings", { limit: "9".repeat(400) }],
      ["create_action_item", { meeting_id: "00000000-0000-4000-8000-000000000000", title: "x".repeat(100_000) }],
      ["update_action_item", { id: "../../v1/admin", status: "done" }],
      ["update_action_item", { id: "\u0000", status: "completed" }],
      ["search_meetings", { q: "\ud800" }],
      ["calendar_events", { start_date: "yesterday", end_date: [1, 2, 3] }],
      ["list_meetings", { __proto__: { polluted: true }, constructor: { prototype: { polluted: true } } }]
    ]
    for (const [name, args] of hostile) {
      const result = await mcp.callTool({ name, arguments: args })
      expect(result.isError, `${name} ${JSON.stringify(args).slice(0, 100)}: ${textOf(result)}`).toBe(true)
      expect(textOf(result)).not.toMatch(/at .*\.(ts|js):\d+|internal_error|Error:/)
    }
    // An unknown tool is refused (as a tool error or a protocol error), never a crash.
    const unknown = await mcp.callTool({ name: "drop_everything", arguments: {} }).then((result) => result.isError, () => true)
    expect(unknown).toBe(true)
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
    const fine = await mcp.callTool({ name: "list_meetings", arguments: {} })
    expect(fine.isError ?? false, textOf(fine)).toBe(false)
    await mcp.close()
  })

  it("a session belongs to its user: another user's credential gets 404, DELETE ends it", async () => {
    const one = await newUser(server.url)
    const other = await newUser(server.url)
    const oneToken = await patOf(server.url, one.userId, ALL_MEMBER_SCOPES)
    const otherToken = await patOf(server.url, other.userId, ALL_MEMBER_SCOPES)
    const { mcp, transport } = await connectWithToken(server.mcpUrl, oneToken)
    const session = transport.sessionId!
    const list = { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }

    const stolen = await raw(server.mcpUrl, { token: otherToken, session, body: list })
    expect(stolen.status).toBe(404)
    expect(await stolen.json()).toMatchObject({ error: { code: -32001 } })
    const stolenStream = await raw(server.mcpUrl, { method: "GET", token: otherToken, session, headers: { accept: "text/event-stream" } })
    expect(stolenStream.status).toBe(404)
    const stolenDelete = await raw(server.mcpUrl, { method: "DELETE", token: otherToken, session })
    expect(stolenDelete.status).toBe(404)
    // Still the owner's (a second token of the same user works too).
    const again = await raw(server.mcpUrl, { token: await patOf(server.url, one.userId, ["meetings:read"]), session, body: list })
    expect(again.status).toBe(200)
    expect(await again.text()).toContain("list_meetings")

    await transport.terminateSession()
    const ended = await raw(server.mcpUrl, { token: oneToken, session, body: list })
    expect(ended.status).toBe(404)
    await mcp.close()

    // Without a session id only an initialize may come; an unknown id is 404.
    const loose = await raw(server.mcpUrl, { token: oneToken, body: list })
    expect(loose.status).toBe(400)
    const unknown = await raw(server.mcpUrl, { token: oneToken, session: crypto.randomUUID(), body: list })
    expect(unknown.status).toBe(404)
  })

  it("refuses a page of another site (Origin), and bodies the host would refuse", async () => {
    const user = await newUser(server.url)
    const token = await patOf(server.url, user.userId, ALL_MEMBER_SCOPES)
    const foreign = await raw(server.mcpUrl, { token, body: initialize, headers: { origin: "http://evil.example" } })
    expect(foreign.status).toBe(403)
    expect(await foreign.json()).toMatchObject({ code: "forbidden" })
    const own = await raw(server.mcpUrl, { token, body: initialize, headers: { origin: server.url } })
    expect(own.status).toBe(200)
    expect(own.headers.get("mcp-session-id")).toMatch(/^[0-9a-f-]{36}$/)
    await own.body?.cancel()

    const large = await raw(server.mcpUrl, { token, body: JSON.stringify({ ...initialize, padding: "x".repeat(1024 * 1024) }) })
    expect(large.status).toBe(413)
    const text = await raw(server.mcpUrl, { token, body: "{", headers: {} })
    expect(text.status).toBe(400)
    const notJson = await raw(server.mcpUrl, { token, body: "initialize", headers: { "content-type": "text/plain" } })
    expect(notJson.status).toBe(415)
    const put = await raw(server.mcpUrl, { method: "PUT", token })
    expect(put.status).toBe(405)
    expect(put.headers.get("allow")?.split(", ").sort()).toEqual(["DELETE", "GET", "POST"])
  })
})

describe("sessions over time and at shutdown", () => {
  it("closes a session left idle, and ends open event streams when the server stops", async () => {
    const server = await startMcpServer((base) => ({ enabled: true, url: `${base}/mcp`, idleTimeoutMs: 400 }))
    try {
      const user = await newUser(server.url)
      const token = await patOf(server.url, user.userId, ALL_MEMBER_SCOPES)
      // Started by hand: the SDK's client would hold the session's event stream open at once.
      const start = async () => {
        const response = await raw(server.mcpUrl, { token, body: initialize })
        expect(response.status).toBe(200)
        await response.text()
        return response.headers.get("mcp-session-id")!
      }
      const list = { jsonrpc: "2.0", id: 9, method: "tools/list", params: {} }
      const idle = await start()
      const soon = await raw(server.mcpUrl, { token, session: idle, body: list })
      expect(soon.status).toBe(200)
      await soon.text()
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      const late = await raw(server.mcpUrl, { token, session: idle, body: list })
      expect(late.status).toBe(404)

      // An open event stream keeps its session in use past the idle time.
      const streaming = await start()
      const stream = await raw(server.mcpUrl, { method: "GET", token, session: streaming, headers: { accept: "text/event-stream" } })
      expect(stream.status).toBe(200)
      expect(stream.headers.get("content-type")).toContain("text/event-stream")
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      const used = await raw(server.mcpUrl, { token, session: streaming, body: list })
      expect(used.status).toBe(200)
      await used.text()

      // Stopping the server ends the stream at once (the drain closes every session), well within the drain time.
      const started = performance.now()
      const reading = stream.text().then(() => performance.now() - started, () => performance.now() - started)
      await server.close()
      const closed = performance.now() - started
      const ended = await reading
      console.info(`stream ended after ${ended.toFixed(0)} ms, server closed after ${closed.toFixed(0)} ms`)
      expect(ended).toBeLessThan(defaultLimits.shutdownTimeoutMs / 2)
      expect(closed).toBeLessThan(defaultLimits.shutdownTimeoutMs / 2)
    } finally {
      await server.close().catch(() => undefined)
    }
  })
})

describe("a session whose credential is revoked", () => {
  it("is closed at the next sweep: its open event stream ends, and the session is gone", async () => {
    // An idle time of 2 s sweeps every second (by default every minute); the open stream keeps the session from idling.
    const server = await startMcpServer((base) => ({ enabled: true, url: `${base}/mcp`, idleTimeoutMs: 2_000 }))
    try {
      const user = await newUser(server.url)
      const issued = await operator(server.url).post(`/operator/v1/users/${user.userId}/tokens`, {
        kind: "personal_access_token",
        scopes: ALL_MEMBER_SCOPES,
        expiry_days: 30
      })
      expect(issued.status).toBe(201)
      const token = issued.body.token as string
      const opened = await raw(server.mcpUrl, { token, body: initialize })
      expect(opened.status).toBe(200)
      await opened.text()
      const session = opened.headers.get("mcp-session-id")!
      const stream = await raw(server.mcpUrl, { method: "GET", token, session, headers: { accept: "text/event-stream" } })
      expect(stream.status).toBe(200)
      let ended = false
      const reading = stream.text().then(() => (ended = true), () => (ended = true))

      const revoked = await fetch(`${server.url}/v1/user/tokens/${issued.body.id}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${token}` }
      })
      expect(revoked.status).toBe(204)
      // Within a sweep, the stream ends.
      const deadline = Date.now() + 10_000
      while (!ended && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
      expect(ended).toBe(true)
      await reading
      const other = await patOf(server.url, user.userId, ["meetings:read"])
      const gone = await raw(server.mcpUrl, { token: other, session, body: { jsonrpc: "2.0", id: 3, method: "tools/list", params: {} } })
      expect(gone.status).toBe(404)
    } finally {
      await server.close().catch(() => undefined)
    }
  }, 30_000)
})

describe("configuration", () => {
  it("CONVENE_MCP=false: no endpoint and no metadata (404)", async () => {
    const server = await startMcpServer((base) => ({ enabled: false, url: `${base}/mcp` }))
    try {
      for (const method of ["POST", "GET", "DELETE"]) {
        expect((await raw(server.mcpUrl, { method, token: "x" })).status).toBe(404)
      }
      expect((await fetch(`${server.url}/.well-known/oauth-protected-resource/mcp`)).status).toBe(404)
      expect((await fetch(`${server.url}/.well-known/oauth-protected-resource`)).status).toBe(404)
    } finally {
      await server.close()
    }
  })

  it("CONVENE_MCP_URL on another origin: the path is served here, the metadata names that URL", async () => {
    const server = await startMcpServer(() => ({ enabled: true, url: "https://mcp.example.com/assistant/mcp" }))
    try {
      const response = await raw(`${server.url}/assistant/mcp`, { body: initialize })
      expect(response.status).toBe(401)
      expect(response.headers.get("www-authenticate")).toBe(
        `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/assistant/mcp"`
      )
      const metadata = await fetch(`${server.url}/.well-known/oauth-protected-resource/assistant/mcp`)
      expect(await metadata.json()).toMatchObject({ resource: "https://mcp.example.com/assistant/mcp", authorization_servers: [`${server.url}/v1/oauth`] })
      expect((await raw(`${server.url}/mcp`, { body: initialize })).status).toBe(404)
    } finally {
      await server.close()
    }
  })

  it("reads CONVENE_MCP and CONVENE_MCP_URL from the environment and names the variable of a bad value", async () => {
    const read = (env: Record<string, string>) =>
      Effect.runPromise(Effect.either(Effect.withConfigProvider(hostConfig, ConfigProvider.fromMap(new Map(Object.entries(env))))))
    const defaults = await read({ CONVENE_BASE_URL: "https://convene.example.com/" })
    expect(defaults._tag === "Right" && defaults.right.mcp).toEqual({ enabled: true, url: "https://convene.example.com/mcp" })
    const set = await read({ CONVENE_MCP: "false", CONVENE_MCP_URL: "https://mcp.example.com/" })
    expect(set._tag === "Right" && set.right.mcp).toEqual({ enabled: false, url: "https://mcp.example.com" })
    for (const bad of ["/mcp", "ftp://example.com/mcp", "https://example.com/mcp?x=1", "https://example.com/mcp/", "https://u:p@example.com/mcp", "https://example.com//mcp"]) {
      const refused = await read({ CONVENE_MCP_URL: bad })
      expect(refused._tag, bad).toBe("Left")
      if (refused._tag === "Left") expect(String(refused.left)).toContain("CONVENE_MCP_URL")
    }
  })

  it("refuses an MCP path that is already the API's", async () => {
    await expect(startMcpServer((base) => ({ enabled: true, url: `${base}/v1/meetings` }))).rejects.toThrow(/CONVENE_MCP_URL/)
  })
})

/**
 * The assistant's OAuth side, in memory: what it registered, its tokens and PKCE verifier; sending the user to
 * authorize drives real Chromium through sign-in and the consent page to the loopback callback, whose code it keeps.
 */
class BrowserProvider implements OAuthClientProvider {
  registered: OAuthClientInformationMixed | undefined
  saved: OAuthTokens | undefined
  verifier = ""
  redirectedTo: URL | undefined
  code: string | undefined
  private readonly expectedState = crypto.randomUUID()

  constructor(
    private readonly callbackUrl: string,
    private readonly browser: Browser,
    private readonly user: PasswordUser,
    private readonly lastCallback: () => URLSearchParams | undefined
  ) {}

  get redirectUrl() {
    return this.callbackUrl
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "Test assistant",
      redirect_uris: [this.callbackUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none"
    }
  }
  state() {
    return this.expectedState
  }
  clientInformation() {
    return this.registered
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.registered = information
  }
  tokens() {
    return this.saved
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }
  codeVerifier() {
    return this.verifier
  }
  async redirectToAuthorization(url: URL) {
    this.redirectedTo = url
    const context = await this.browser.newContext()
    try {
      const page = await context.newPage()
      await page.goto(url.toString())
      expect(new URL(page.url()).pathname).toBe("/signin")
      await page.getByLabel("E-mail address").fill(this.user.email)
      await page.getByLabel("Password").fill(this.user.password)
      await page.getByRole("button", { name: "Sign in" }).click()
      await page.getByRole("button", { name: "Approve" }).waitFor()
      expect(await page.content()).toContain("Test assistant")
      await Promise.all([page.waitForURL((target) => target.toString().startsWith(this.callbackUrl)), page.getByRole("button", { name: "Approve" }).click()])
      const query = this.lastCallback()
      expect(query?.get("state")).toBe(this.expectedState)
      this.code = query?.get("code") ?? undefined
    } finally {
      await context.close()
    }
  }
}

