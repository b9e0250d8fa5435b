/**
 * Shared helpers of the HTTP end-to-end tests: one real server per file, workspaces, users and tokens
 * provisioned through the real operator API, and assertions for the documented wire formats.
 */
import { afterAll, beforeAll, expect } from "vitest"
import { client, type Client, OPERATOR_TOKEN, type RunningServer, startServer } from "../support/server.js"

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
/** RFC 3339 in UTC with an explicit `Z` (what decisions.md and the OpenAPI description promise). */
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/

export const MEMBER_SCOPES = ["meetings:read", "meetings:write", "action-items:read", "action-items:write", "calendar:read"] as const
export const ALL_SCOPES = [...MEMBER_SCOPES, "workspace:read", "workspace:write"] as const

export type Plan = "FREE" | "PRO" | "ELITE" | "ENTERPRISE"
export type Role = "OWNER" | "ADMIN" | "MEMBER"
export type Response = Awaited<ReturnType<Client["get"]>>

/** Starts one server for the enclosing file (or describe block) and closes it afterwards. */
export const useServer = (options: { readonly operatorToken?: string | null } = {}) => {
  let server: RunningServer | undefined
  beforeAll(async () => {
    server = await startServer(options)
  })
  afterAll(async () => {
    await server?.close()
  })
  return {
    get url(): string {
      if (server === undefined) throw new Error("the server has not started")
      return server.url
    }
  }
}

export const operator = (url: string) => client(url, OPERATOR_TOKEN)

export interface TestUser {
  readonly userId: string
  readonly email: string
  readonly name: string
  readonly role: Role
  readonly token: string
  readonly tokenId: string
  readonly api: Client
}

export interface TestWorkspace {
  readonly workspaceId: string
  readonly plan: Plan
  /** A user of the workspace with a token: a PAT on paid plans, a short-lived token on FREE. */
  readonly addUser: (options?: { readonly role?: Role; readonly scopes?: ReadonlyArray<string>; readonly name?: string }) => Promise<TestUser>
  /** A workspace API key and a client using it. */
  readonly addApiKey: () => Promise<{ readonly id: string; readonly key: string; readonly api: Client }>
}

let counter = 0

/** A new workspace of `plan` (through the operator API). */
export const workspace = async (url: string, plan: Plan = "PRO"): Promise<TestWorkspace> => {
  const op = operator(url)
  const created = await op.post("/operator/v1/workspaces", { name: `Workspace ${++counter}`, plan })
  if (created.status !== 201) throw new Error(`workspace creation failed: ${created.status} ${created.text}`)
  const workspaceId = created.body.id as string
  return {
    workspaceId,
    plan,
    addUser: async (options = {}) => {
      const role = options.role ?? "MEMBER"
      const name = options.name ?? `User ${++counter}`
      const email = `user-${crypto.randomUUID()}@example.com`
      const user = await op.post(`/operator/v1/workspaces/${workspaceId}/users`, { email, name, role })
      if (user.status !== 201) throw new Error(`user creation failed: ${user.status} ${user.text}`)
      const scopes = options.scopes ?? (role === "MEMBER" ? MEMBER_SCOPES : ALL_SCOPES)
      const token = await op.post(
        `/operator/v1/users/${user.body.id}/tokens`,
        plan === "FREE"
          ? { kind: "short_lived", scopes, expiry_hours: 6 }
          : { kind: "personal_access_token", scopes, expiry_days: 30 }
      )
      if (token.status !== 201) throw new Error(`token issue failed: ${token.status} ${token.text}`)
      return {
        userId: user.body.id,
        email,
        name,
        role,
        token: token.body.token,
        tokenId: token.body.id,
        api: client(url, token.body.token)
      }
    },
    addApiKey: async () => {
      const key = await op.post(`/operator/v1/workspaces/${workspaceId}/api-keys`, { name: `Key ${++counter}` })
      if (key.status !== 201) throw new Error(`api key creation failed: ${key.status} ${key.text}`)
      return { id: key.body.id, key: key.body.key, api: client(url, key.body.key) }
    }
  }
}

/** A PRO workspace with one user of `role` (MEMBER by default): the usual start of a test. */
export const member = async (url: string, options: { readonly plan?: Plan; readonly role?: Role; readonly scopes?: ReadonlyArray<string> } = {}) => {
  const ws = await workspace(url, options.plan ?? "PRO")
  const user = await ws.addUser({
    role: options.role ?? "MEMBER",
    ...(options.scopes === undefined ? {} : { scopes: options.scopes })
  })
  return { ws, user, api: user.api }
}

/** Asserts the documented failure envelope `{error, code, request_id, message}` with the status and code. */
export const expectError = (response: Response, status: number, code: string) => {
  expect({ status: response.status, body: response.body }).toMatchObject({ status, body: { code } })
  const requestId = response.headers.get("x-request-id")
  expect(requestId).toBeTruthy()
  expect(response.headers.get("content-type") ?? "").toContain("application/json")
  expect(typeof response.body.error).toBe("string")
  expect(response.body.error.length).toBeGreaterThan(0)
  expect(response.body.message).toBe(response.body.error)
  expect(response.body.request_id).toBe(requestId)
  expect(Object.keys(response.body).sort()).toEqual(["code", "error", "message", "request_id"])
}

/**
 * Asserts a failure in the partner envelope `{error, code, request_id}` (no `message`), with the request id of the
 * X-Request-Id header; `naming`, when given, is part of the human text.
 */
export const expectPartnerError = (response: Response, status: number, code: string, naming?: string) => {
  expect({ status: response.status, code: response.body?.code }, response.text).toEqual({ status, code })
  const requestId = response.headers.get("x-request-id")
  expect(requestId).toBeTruthy()
  expect(response.headers.get("content-type") ?? "").toContain("application/json")
  expect(Object.keys(response.body).sort()).toEqual(["code", "error", "request_id"])
  expect(typeof response.body.error).toBe("string")
  expect(response.body.error.length).toBeGreaterThan(0)
  expect(response.body.request_id).toBe(requestId)
  if (naming !== undefined) expect(response.body.error).toContain(naming)
}

/** A partner app's admin client (X-API-Key, X-Client-ID) on `url`: the /v1/partner/admin routes. */
export const partnerAdminOf = (url: string, app: { readonly api_key: string; readonly client_id: string }) => {
  const headers = { "x-api-key": app.api_key, "x-client-id": app.client_id }
  const api = client(url)
  return {
    get: (path: string) => api.get(path, headers),
    post: (path: string, body: unknown) => api.post(path, body, headers),
    put: (path: string, body: unknown) => api.put(path, body, headers),
    patch: (path: string, body: unknown) => api.patch(path, body, headers),
    delete: (path: string) => api.delete(path, headers)
  }
}
export type PartnerAdmin = ReturnType<typeof partnerAdminOf>

/** Asks `check` again every 100 ms for up to 15 s (the toolkit distribution runs every second); the last answer. */
export const eventually = async <A>(read: () => Promise<A>, check: (value: A) => boolean): Promise<A> => {
  const deadline = Date.now() + 15_000
  for (;;) {
    const value = await read()
    if (check(value) || Date.now() > deadline) return value
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** Asserts a 400 validation_error whose human message names `field`. */
export const expectValidation = (response: Response, field: string) => {
  expectError(response, 400, "validation_error")
  expect(response.body.error).toContain(field)
}

/** Asserts the list envelope with the applied page. */
export const expectList = (response: Response, page: { readonly total: number; readonly limit?: number; readonly offset?: number }) => {
  expect({ status: response.status, body: response.body }).toMatchObject({
    status: 200,
    body: { total: page.total, limit: page.limit ?? 20, offset: page.offset ?? 0 }
  })
  expect(Object.keys(response.body).sort()).toEqual(["items", "limit", "offset", "total"])
  expect(Array.isArray(response.body.items)).toBe(true)
  expect(response.body.total).toBe(page.total)
  expect(response.body.limit).toBe(page.limit ?? 20)
  expect(response.body.offset).toBe(page.offset ?? 0)
}

/** Milliseconds between a returned timestamp and now. */
export const ageOf = (timestamp: string) => Math.abs(Date.now() - Date.parse(timestamp))

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Creates a meeting and answers its body (asserting 201). */
export const createMeeting = async (api: Client, body: Record<string, unknown> = {}) => {
  const response = await api.post("/v1/meetings", { title: "Planning", ...body })
  if (response.status !== 201) throw new Error(`meeting creation failed: ${response.status} ${response.text}`)
  return response.body
}

export const createAgendaItem = async (api: Client, meetingId: string, body: Record<string, unknown> = {}) => {
  const response = await api.post("/v1/agenda-items", { meeting_id: meetingId, title: "Topic", ...body })
  if (response.status !== 201) throw new Error(`agenda item creation failed: ${response.status} ${response.text}`)
  return response.body
}

export const createActionItem = async (api: Client, meetingId: string, body: Record<string, unknown> = {}) => {
  const response = await api.post("/v1/action-items", { meeting_id: meetingId, title: "Follow up", ...body })
  if (response.status !== 201) throw new Error(`action item creation failed: ${response.status} ${response.text}`)
  return response.body
}

/** Adds a workspace user to a meeting with a role. */
export const addParticipant = async (api: Client, meetingId: string, userId: string, role: "EDITOR" | "VIEWER") => {
  const response = await api.post(`/v1/meetings/${meetingId}/participants`, { participants: [{ user_id: userId, role }] })
  if (response.status !== 201) throw new Error(`adding a participant failed: ${response.status} ${response.text}`)
  return response.body.participants[0]
}

export const unknownId = () => crypto.randomUUID()

/**
 * Every /v1 operation the server implements: method, OpenAPI path template, a concrete path, a valid body
 * where it takes one, and the scope it needs (undefined: any valid token).
 */
export const V1_ENDPOINTS: ReadonlyArray<{
  readonly method: "GET" | "POST" | "PATCH" | "DELETE"
  readonly template: string
  readonly path: (id: string) => string
  readonly body?: (id: string) => unknown
  readonly scope?: string
}> = [
  { method: "GET", template: "/v1/meetings", path: () => "/v1/meetings", scope: "meetings:read" },
  { method: "POST", template: "/v1/meetings", path: () => "/v1/meetings", body: () => ({ title: "T" }), scope: "meetings:write" },
  { method: "GET", template: "/v1/meetings/search", path: () => "/v1/meetings/search", scope: "meetings:read" },
  { method: "GET", template: "/v1/meetings/upcoming", path: () => "/v1/meetings/upcoming", scope: "meetings:read" },
  { method: "GET", template: "/v1/meetings/{id}", path: (id) => `/v1/meetings/${id}`, scope: "meetings:read" },
  { method: "PATCH", template: "/v1/meetings/{id}", path: (id) => `/v1/meetings/${id}`, body: () => ({ title: "U" }), scope: "meetings:write" },
  { method: "DELETE", template: "/v1/meetings/{id}", path: (id) => `/v1/meetings/${id}`, scope: "meetings:write" },
  {
    method: "GET",
    template: "/v1/meetings/{id}/transcript/export",
    path: (id) => `/v1/meetings/${id}/transcript/export`,
    scope: "meetings:read"
  },
  { method: "GET", template: "/v1/meetings/{id}/contacts", path: (id) => `/v1/meetings/${id}/contacts`, scope: "meetings:read" },
  { method: "GET", template: "/v1/meetings/{id}/participants", path: (id) => `/v1/meetings/${id}/participants`, scope: "meetings:read" },
  {
    method: "POST",
    template: "/v1/meetings/{id}/participants",
    path: (id) => `/v1/meetings/${id}/participants`,
    body: () => ({ participants: [{ guest_email: "guest@example.com", role: "VIEWER" }] }),
    scope: "meetings:write"
  },
  {
    method: "DELETE",
    template: "/v1/meetings/{id}/participants/{userId}",
    path: (id) => `/v1/meetings/${id}/participants/${id}`,
    scope: "meetings:write"
  },
  {
    method: "PATCH",
    template: "/v1/meetings/{id}/participants/{userId}/role",
    path: (id) => `/v1/meetings/${id}/participants/${id}/role`,
    body: () => ({ role: "VIEWER" }),
    scope: "meetings:write"
  },
  { method: "GET", template: "/v1/meeting-templates", path: () => "/v1/meeting-templates", scope: "meetings:read" },
  { method: "GET", template: "/v1/me", path: () => "/v1/me" },
  { method: "GET", template: "/v1/agenda-items", path: () => "/v1/agenda-items", scope: "meetings:read" },
  {
    method: "POST",
    template: "/v1/agenda-items",
    path: () => "/v1/agenda-items",
    body: (id) => ({ meeting_id: id, title: "T" }),
    scope: "meetings:write"
  },
  { method: "GET", template: "/v1/agenda-items/{id}", path: (id) => `/v1/agenda-items/${id}`, scope: "meetings:read" },
  { method: "PATCH", template: "/v1/agenda-items/{id}", path: (id) => `/v1/agenda-items/${id}`, body: () => ({ title: "U" }), scope: "meetings:write" },
  { method: "DELETE", template: "/v1/agenda-items/{id}", path: (id) => `/v1/agenda-items/${id}`, scope: "meetings:write" },
  { method: "GET", template: "/v1/meetings/{id}/context", path: (id) => `/v1/meetings/${id}/context`, scope: "meetings:read" },
  { method: "POST", template: "/v1/meetings/{id}/context", path: (id) => `/v1/meetings/${id}/context`, scope: "meetings:write" },
  {
    method: "GET",
    template: "/v1/meetings/{id}/context/{context_id}",
    path: (id) => `/v1/meetings/${id}/context/${id}`,
    scope: "meetings:read"
  },
  {
    method: "DELETE",
    template: "/v1/meetings/{id}/context/{context_id}",
    path: (id) => `/v1/meetings/${id}/context/${id}`,
    scope: "meetings:write"
  },
  {
    method: "GET",
    template: "/v1/meetings/{id}/context/{context_id}/content",
    path: (id) => `/v1/meetings/${id}/context/${id}/content`,
    scope: "meetings:read"
  },
  { method: "GET", template: "/v1/meetings/{id}/attachments", path: (id) => `/v1/meetings/${id}/attachments`, scope: "meetings:read" },
  { method: "POST", template: "/v1/meetings/{id}/attachments", path: (id) => `/v1/meetings/${id}/attachments`, scope: "meetings:write" },
  {
    method: "GET",
    template: "/v1/meetings/{id}/attachments/{attachment_id}",
    path: (id) => `/v1/meetings/${id}/attachments/${id}`,
    scope: "meetings:read"
  },
  {
    method: "DELETE",
    template: "/v1/meetings/{id}/attachments/{attachment_id}",
    path: (id) => `/v1/meetings/${id}/attachments/${id}`,
    scope: "meetings:write"
  },
  {
    method: "GET",
    template: "/v1/meetings/{id}/attachments/{attachment_id}/download",
    path: (id) => `/v1/meetings/${id}/attachments/${id}/download`,
    scope: "meetings:read"
  },
  { method: "GET", template: "/v1/action-items", path: () => "/v1/action-items", scope: "action-items:read" },
  {
    method: "POST",
    template: "/v1/action-items",
    path: () => "/v1/action-items",
    body: (id) => ({ meeting_id: id, title: "T" }),
    scope: "action-items:write"
  },
  { method: "GET", template: "/v1/action-items/{id}", path: (id) => `/v1/action-items/${id}`, scope: "action-items:read" },
  { method: "PATCH", template: "/v1/action-items/{id}", path: (id) => `/v1/action-items/${id}`, body: () => ({ title: "U" }), scope: "action-items:write" },
  { method: "DELETE", template: "/v1/action-items/{id}", path: (id) => `/v1/action-items/${id}`, scope: "action-items:write" },
  { method: "GET", template: "/v1/backlog-items", path: () => "/v1/backlog-items", scope: "meetings:read" },
  { method: "POST", template: "/v1/backlog-items", path: () => "/v1/backlog-items", body: () => ({ title: "T" }), scope: "meetings:write" },
  { method: "GET", template: "/v1/backlog-items/history", path: () => "/v1/backlog-items/history", scope: "meetings:read" },
  { method: "GET", template: "/v1/backlog-items/{id}", path: (id) => `/v1/backlog-items/${id}`, scope: "meetings:read" },
  { method: "PATCH", template: "/v1/backlog-items/{id}", path: (id) => `/v1/backlog-items/${id}`, body: () => ({ title: "U" }), scope: "meetings:write" },
  { method: "DELETE", template: "/v1/backlog-items/{id}", path: (id) => `/v1/backlog-items/${id}`, scope: "meetings:write" },
  {
    method: "POST",
    template: "/v1/backlog-items/{id}/assign",
    path: (id) => `/v1/backlog-items/${id}/assign`,
    body: (id) => ({ destination_meeting_id: id }),
    scope: "meetings:write"
  },
  {
    method: "GET",
    template: "/v1/calendar/events",
    path: () => "/v1/calendar/events?start_date=2031-01-01T00:00:00Z&end_date=2031-02-01T00:00:00Z",
    scope: "calendar:read"
  },
  { method: "GET", template: "/v1/calendar/events/{id}", path: (id) => `/v1/calendar/events/${id}`, scope: "calendar:read" },
  { method: "GET", template: "/v1/workspace", path: () => "/v1/workspace", scope: "workspace:read" },
  { method: "PATCH", template: "/v1/workspace", path: () => "/v1/workspace", body: () => ({ name: "U" }), scope: "workspace:write" },
  { method: "GET", template: "/v1/workspace/members", path: () => "/v1/workspace/members", scope: "workspace:read" },
  {
    method: "PATCH",
    template: "/v1/workspace/members/{userID}",
    path: (id) => `/v1/workspace/members/${id}`,
    body: () => ({ role: "ADMIN" }),
    scope: "workspace:write"
  },
  { method: "DELETE", template: "/v1/workspace/members/{userID}", path: (id) => `/v1/workspace/members/${id}`, scope: "workspace:write" },
  { method: "GET", template: "/v1/workspace/api-keys", path: () => "/v1/workspace/api-keys", scope: "workspace:read" },
  { method: "DELETE", template: "/v1/workspace/api-keys/{id}", path: (id) => `/v1/workspace/api-keys/${id}`, scope: "workspace:write" },
  { method: "GET", template: "/v1/auth/introspect", path: () => "/v1/auth/introspect" },
  { method: "GET", template: "/v1/user/tokens", path: () => "/v1/user/tokens" },
  {
    method: "POST",
    template: "/v1/user/tokens",
    path: () => "/v1/user/tokens",
    body: () => ({ name: "cli", scopes: ["meetings:read"], expiry_days: 30 })
  },
  { method: "DELETE", template: "/v1/user/tokens/{id}", path: (id) => `/v1/user/tokens/${id}` }
]

/**
 * Opens the caller's event stream (GET /v1/user/events), runs `act`, and answers what `act` answered with the data
 * of the first `eventType` frame that names the id `act` answered (undefined when none came within 10 seconds).
 */
export const streamedEvent = async <A extends { readonly id: string }>(
  url: string,
  token: string,
  eventType: string,
  act: () => Promise<A>
): Promise<{ readonly made: A; readonly envelope: Record<string, unknown> | undefined }> => {
  const controller = new AbortController()
  const stream = await fetch(`${url}/v1/user/events`, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal })
  if (stream.status !== 200) throw new Error(`the event stream answered ${stream.status}`)
  const made = await act()
  let text = ""
  const decoder = new TextDecoder()
  const deadline = Date.now() + 10_000
  try {
    for await (const chunk of stream.body!) {
      text += decoder.decode(chunk as Uint8Array, { stream: true })
      if ((text.includes(`event: ${eventType}`) && text.includes(made.id)) || Date.now() > deadline) break
    }
  } finally {
    controller.abort()
  }
  const frame = text.split("\n\n").find((block) => block.includes(`event: ${eventType}`) && block.includes(made.id))
  const data = frame?.split("\n").find((line) => line.startsWith("data: "))?.slice(6)
  return { made, envelope: data === undefined ? undefined : JSON.parse(data) as Record<string, unknown> }
}
