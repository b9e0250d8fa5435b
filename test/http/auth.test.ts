/** Bearer authentication, scopes, workspace isolation and meeting visibility; introspection, /v1/me and the user's tokens. */
import { describe, expect, it } from "vitest"
import { client } from "../support/server.js"
import {
  ALL_SCOPES,
  addParticipant,
  createActionItem,
  createAgendaItem,
  createMeeting,
  expectError,
  expectList,
  expectValidation,
  member,
  operator,
  TIMESTAMP,
  useServer,
  UUID,
  V1_ENDPOINTS,
  workspace
} from "./fixtures.js"

const server = useServer()

describe("bearer authentication on /v1", () => {
  it("answers 401 unauthorized with WWW-Authenticate: Bearer on every /v1 operation without an Authorization header", async () => {
    const anonymous = client(server.url)
    const id = crypto.randomUUID()
    for (const endpoint of V1_ENDPOINTS) {
      const response = await anonymous.call(endpoint.method, endpoint.path(id), endpoint.body?.(id))
      expectError(response, 401, "unauthorized")
      expect(response.headers.get("www-authenticate"), `${endpoint.method} ${endpoint.template}`).toMatch(/^Bearer\b/)
    }
  })

  it("answers 401 unauthorized for another scheme or an empty bearer", async () => {
    const { user } = await member(server.url)
    expectError(await client(server.url).get("/v1/meetings", { authorization: `Basic ${btoa("a:b")}` }), 401, "unauthorized")
    expectError(await client(server.url).get("/v1/meetings", { authorization: "Bearer" }), 401, "unauthorized")
    expectError(await client(server.url).get("/v1/meetings", { authorization: `Token ${user.token}` }), 401, "unauthorized")
  })

  it("accepts the scheme case-insensitively (RFC 9110): `bearer <token>`", async () => {
    const { user } = await member(server.url)
    const response = await client(server.url).get("/v1/meetings", { authorization: `bearer ${user.token}` })
    expect(response.status).toBe(200)
  })

  it("authenticates before it validates: a bad body or id without a token is 401", async () => {
    expectError(await client(server.url).post("/v1/meetings", { title: "" }), 401, "unauthorized")
    expectError(await client(server.url).post("/v1/meetings", "{broken"), 401, "unauthorized")
    expectError(await client(server.url).get("/v1/meetings/not-a-uuid"), 401, "unauthorized")
    expectError(await client(server.url).get("/v1/meetings?limit=abc"), 401, "unauthorized")
  })

  it("answers 401 invalid_token on every /v1 operation for a malformed token", async () => {
    const id = crypto.randomUUID()
    for (const endpoint of V1_ENDPOINTS) {
      const response = await client(server.url, "garbage").call(endpoint.method, endpoint.path(id), endpoint.body?.(id))
      expectError(response, 401, "invalid_token")
    }
    for (const token of ["svc_pat_v1_short", "svc_xx_v1_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "svc_pat_v1_" + "A".repeat(42) + "!"]) {
      expectError(await client(server.url, token).get("/v1/meetings"), 401, "invalid_token")
    }
  })

  it("answers 401 invalid_token for an unknown token of each documented prefix", async () => {
    const body = "A".repeat(20) + "b".repeat(23)
    for (const prefix of ["svc_at_v1_", "svc_pat_v1_", "svc_slt_v1_", "svc_wk_v1_", "svc_rt_v1_"]) {
      const response = await client(server.url, prefix + body).get("/v1/meetings")
      expectError(response, 401, "invalid_token")
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer\b/)
    }
  })

  it("answers 401 invalid_token for a token whose prefix was changed", async () => {
    const { user } = await member(server.url)
    const swapped = user.token.replace("svc_pat_v1_", "svc_slt_v1_")
    expectError(await client(server.url, swapped).get("/v1/meetings"), 401, "invalid_token")
  })

  it("answers 401 invalid_token for a revoked token (DELETE /v1/user/tokens/{id}, then reuse) on every /v1 operation", async () => {
    const { user } = await member(server.url)
    expect((await user.api.get("/v1/meetings")).status).toBe(200)
    const deleted = await user.api.delete(`/v1/user/tokens/${user.tokenId}`)
    expect(deleted.status).toBe(204)
    expect(deleted.text).toBe("")
    const id = crypto.randomUUID()
    for (const endpoint of V1_ENDPOINTS) {
      expectError(await user.api.call(endpoint.method, endpoint.path(id), endpoint.body?.(id)), 401, "invalid_token")
    }
  })
})

describe("scopes", () => {
  it("answers 403 insufficient_scope on every operation whose scope the token lacks", async () => {
    const ws = await workspace(server.url)
    const owner = await ws.addUser({ role: "OWNER" })
    const meeting = await createMeeting(owner.api)
    for (const scope of ALL_SCOPES) {
      const token = await ws.addUser({ role: "OWNER", scopes: ALL_SCOPES.filter((s) => s !== scope) })
      for (const endpoint of V1_ENDPOINTS.filter((e) => e.scope === scope)) {
        const response = await token.api.call(endpoint.method, endpoint.path(meeting.id), endpoint.body?.(meeting.id))
        expectError(response, 403, "insufficient_scope")
      }
    }
  })

  it("a token with only meetings:read cannot create a meeting; one without action-items:read cannot list action items", async () => {
    const { ws } = await member(server.url)
    const reader = await ws.addUser({ scopes: ["meetings:read"] })
    expectError(await reader.api.post("/v1/meetings", { title: "x" }), 403, "insufficient_scope")
    expect((await reader.api.get("/v1/meetings")).status).toBe(200)
    const noActions = await ws.addUser({ scopes: ["meetings:read", "meetings:write", "action-items:write"] })
    expectError(await noActions.api.get("/v1/action-items"), 403, "insufficient_scope")
    expect((await reader.api.get("/v1/meetings")).body.total).toBe(0)
  })

  it("needs no scope for introspection, /v1/me and the token list", async () => {
    const { ws } = await member(server.url)
    const narrow = await ws.addUser({ scopes: ["calendar:read"] })
    expect((await narrow.api.get("/v1/auth/introspect")).status).toBe(200)
    expect((await narrow.api.get("/v1/me")).status).toBe(200)
    expect((await narrow.api.get("/v1/user/tokens")).status).toBe(200)
  })
})

describe("workspace isolation", () => {
  it("answers 404 for another workspace's meeting, agenda item and action item on every operation", async () => {
    const a = await member(server.url)
    const b = await member(server.url, { role: "OWNER" })
    const bKey = await b.ws.addApiKey()
    const meeting = await createMeeting(a.api)
    const agenda = await createAgendaItem(a.api, meeting.id)
    const action = await createActionItem(a.api, meeting.id)
    for (const api of [b.api, bKey.api]) {
      expectError(await api.get(`/v1/meetings/${meeting.id}`), 404, "not_found")
      expectError(await api.patch(`/v1/meetings/${meeting.id}`, { title: "stolen" }), 404, "not_found")
      expectError(await api.delete(`/v1/meetings/${meeting.id}`), 404, "not_found")
      expectError(await api.get(`/v1/meetings/${meeting.id}/participants`), 404, "not_found")
      expectError(await api.get(`/v1/meetings/${meeting.id}/contacts`), 404, "not_found")
      expectError(await api.get(`/v1/meetings/${meeting.id}/transcript/export`), 404, "not_found")
      expectError(
        await api.post(`/v1/meetings/${meeting.id}/participants`, { participants: [{ guest_email: "g@example.com", role: "VIEWER" }] }),
        404,
        "not_found"
      )
      expectError(await api.get(`/v1/agenda-items/${agenda.id}`), 404, "not_found")
      expectError(await api.patch(`/v1/agenda-items/${agenda.id}`, { title: "x" }), 404, "not_found")
      expectError(await api.delete(`/v1/agenda-items/${agenda.id}`), 404, "not_found")
      expectError(await api.post("/v1/agenda-items", { meeting_id: meeting.id, title: "x" }), 404, "not_found")
      expectError(await api.get(`/v1/agenda-items?meeting_id=${meeting.id}`), 404, "not_found")
      expectError(await api.get(`/v1/action-items/${action.id}`), 404, "not_found")
      expectError(await api.patch(`/v1/action-items/${action.id}`, { title: "x" }), 404, "not_found")
      expectError(await api.delete(`/v1/action-items/${action.id}`), 404, "not_found")
      expectError(await api.post("/v1/action-items", { meeting_id: meeting.id, title: "x" }), 404, "not_found")
      expectError(await api.get(`/v1/action-items?meeting_id=${meeting.id}`), 404, "not_found")
      expect((await api.get("/v1/meetings")).body.total).toBe(0)
      expect((await api.get("/v1/agenda-items")).body.total).toBe(0)
      expect((await api.get("/v1/action-items")).body.total).toBe(0)
    }
    // Nothing changed in workspace A.
    expect((await a.api.get(`/v1/meetings/${meeting.id}`)).body.title).toBe("Planning")
    expect((await a.api.get(`/v1/agenda-items/${agenda.id}`)).status).toBe(200)
    expect((await a.api.get(`/v1/action-items/${action.id}`)).body.title).toBe("Follow up")
  })

  it("does not add a user of another workspace as a participant (404)", async () => {
    const a = await member(server.url)
    const b = await member(server.url)
    const meeting = await createMeeting(a.api)
    expectError(
      await a.api.post(`/v1/meetings/${meeting.id}/participants`, { participants: [{ user_id: b.user.userId, role: "EDITOR" }] }),
      404,
      "not_found"
    )
  })
})

describe("meeting visibility by role", () => {
  it("hides a meeting from a MEMBER who is not a participant (404), shows it to ADMIN, OWNER and an API key", async () => {
    const ws = await workspace(server.url)
    const author = await ws.addUser()
    const outsider = await ws.addUser()
    const admin = await ws.addUser({ role: "ADMIN" })
    const owner = await ws.addUser({ role: "OWNER" })
    const key = await ws.addApiKey()
    const meeting = await createMeeting(author.api, { title: "Private planning" })
    const agenda = await createAgendaItem(author.api, meeting.id)
    const action = await createActionItem(author.api, meeting.id)

    expectError(await outsider.api.get(`/v1/meetings/${meeting.id}`), 404, "not_found")
    expectError(await outsider.api.patch(`/v1/meetings/${meeting.id}`, { title: "x" }), 404, "not_found")
    expectError(await outsider.api.get(`/v1/agenda-items/${agenda.id}`), 404, "not_found")
    expectError(await outsider.api.get(`/v1/action-items/${action.id}`), 404, "not_found")
    expectList(await outsider.api.get("/v1/meetings"), { total: 0 })
    expectList(await outsider.api.get("/v1/meetings/search?q=private"), { total: 0 })
    expectList(await outsider.api.get("/v1/agenda-items"), { total: 0 })
    expectList(await outsider.api.get("/v1/action-items"), { total: 0 })

    for (const viewer of [admin.api, owner.api, key.api]) {
      const got = await viewer.get(`/v1/meetings/${meeting.id}`)
      expect(got.status).toBe(200)
      expect(got.body.id).toBe(meeting.id)
      expect((await viewer.get("/v1/meetings")).body.items.map((m: { id: string }) => m.id)).toContain(meeting.id)
      expect((await viewer.get(`/v1/agenda-items/${agenda.id}`)).status).toBe(200)
      expect((await viewer.get(`/v1/action-items/${action.id}`)).status).toBe(200)
    }
    // Admins change every meeting of the workspace.
    const patched = await admin.api.patch(`/v1/meetings/${meeting.id}`, { title: "Renamed by admin" })
    expect(patched.status).toBe(200)
    expect(patched.body.title).toBe("Renamed by admin")

    // Once added, the outsider sees it.
    await addParticipant(author.api, meeting.id, outsider.userId, "VIEWER")
    expect((await outsider.api.get(`/v1/meetings/${meeting.id}`)).status).toBe(200)
    expect((await outsider.api.get("/v1/meetings")).body.total).toBe(1)
  })

  it("answers 403 to a VIEWER participant changing the meeting, and lets an EDITOR change it", async () => {
    const ws = await workspace(server.url)
    const author = await ws.addUser()
    const viewer = await ws.addUser()
    const editor = await ws.addUser()
    const meeting = await createMeeting(author.api)
    await addParticipant(author.api, meeting.id, viewer.userId, "VIEWER")
    await addParticipant(author.api, meeting.id, editor.userId, "EDITOR")

    expect((await viewer.api.get(`/v1/meetings/${meeting.id}`)).status).toBe(200)
    expectError(await viewer.api.patch(`/v1/meetings/${meeting.id}`, { title: "viewer edit" }), 403, "insufficient_scope")
    expectError(await viewer.api.patch(`/v1/meetings/${meeting.id}`, { status: "cancelled" }), 403, "insufficient_scope")
    expectError(await viewer.api.delete(`/v1/meetings/${meeting.id}`), 403, "insufficient_scope")
    expectError(await viewer.api.post("/v1/agenda-items", { meeting_id: meeting.id, title: "x" }), 403, "insufficient_scope")
    expect((await author.api.get(`/v1/meetings/${meeting.id}`)).body.title).toBe("Planning")

    const edited = await editor.api.patch(`/v1/meetings/${meeting.id}`, { title: "editor edit" })
    expect(edited.status).toBe(200)
    expect(edited.body.title).toBe("editor edit")
    // Only the meeting's owner (or an admin) deletes it.
    expectError(await editor.api.delete(`/v1/meetings/${meeting.id}`), 403, "insufficient_scope")
    expect((await author.api.delete(`/v1/meetings/${meeting.id}`)).status).toBe(204)
  })
})

describe("GET /v1/auth/introspect", () => {
  it("describes a personal access token", async () => {
    const ws = await workspace(server.url, "PRO")
    const user = await ws.addUser({ role: "ADMIN" })
    const response = await user.api.get("/v1/auth/introspect")
    expect(response.status).toBe(200)
    expect(Object.keys(response.body).sort()).toEqual(
      ["active", "client_id", "expires_at", "kind", "scopes", "token_id", "user_id", "workspace_id"]
    )
    expect(response.body).toMatchObject({
      active: true,
      token_id: user.tokenId,
      kind: "personal_access_token",
      user_id: user.userId,
      workspace_id: ws.workspaceId,
      client_id: null
    })
    expect([...response.body.scopes].sort()).toEqual([...ALL_SCOPES].sort())
    expect(response.body.expires_at).toMatch(TIMESTAMP)
    expect(Math.abs(Date.parse(response.body.expires_at) - (Date.now() + 30 * 24 * 3600_000))).toBeLessThan(60_000)
  })

  it("describes a short-lived token", async () => {
    const ws = await workspace(server.url, "FREE")
    const user = await ws.addUser({ scopes: ["meetings:read"] })
    const response = await user.api.get("/v1/auth/introspect")
    expect(response.status).toBe(200)
    expect(response.body).toMatchObject({
      active: true,
      token_id: user.tokenId,
      kind: "short_lived",
      user_id: user.userId,
      workspace_id: ws.workspaceId,
      scopes: ["meetings:read"],
      client_id: null
    })
    expect(Math.abs(Date.parse(response.body.expires_at) - (Date.now() + 6 * 3600_000))).toBeLessThan(60_000)
  })

  it("describes a workspace API key (no user, every scope, no expiry)", async () => {
    const ws = await workspace(server.url)
    const key = await ws.addApiKey()
    const response = await key.api.get("/v1/auth/introspect")
    expect(response.status).toBe(200)
    expect(response.body).toMatchObject({
      active: true,
      token_id: key.id,
      kind: "api_key",
      user_id: null,
      workspace_id: ws.workspaceId,
      client_id: null,
      expires_at: null
    })
    expect([...response.body.scopes].sort()).toEqual([...ALL_SCOPES].sort())
  })

  it("answers 401 without a valid token", async () => {
    expectError(await client(server.url).get("/v1/auth/introspect"), 401, "unauthorized")
    expectError(await client(server.url, "svc_pat_v1_" + "x".repeat(43)).get("/v1/auth/introspect"), 401, "invalid_token")
  })
})

describe("GET /v1/me", () => {
  it("answers {id, email, name, workspace_id, role} for a user token", async () => {
    const ws = await workspace(server.url)
    for (const role of ["OWNER", "ADMIN", "MEMBER"] as const) {
      const user = await ws.addUser({ role, name: `Ada ${role}` })
      const response = await user.api.get("/v1/me")
      expect(response.status).toBe(200)
      expect(response.body).toEqual({ id: user.userId, email: user.email, name: `Ada ${role}`, workspace_id: ws.workspaceId, role })
    }
  })

  it("answers 404 not_found for a workspace API key", async () => {
    const ws = await workspace(server.url)
    const key = await ws.addApiKey()
    expectError(await key.api.get("/v1/me"), 404, "not_found")
  })
})

describe("/v1/user/tokens", () => {
  it("issues a personal access token: 201 {id, name, token, scopes, expires_at, created_at}, usable at once", async () => {
    const { user } = await member(server.url)
    const response = await user.api.post("/v1/user/tokens", { name: "laptop", scopes: ["meetings:read"], expiry_days: 90 })
    expect(response.status).toBe(201)
    expect(response.body).toMatchObject({ name: "laptop", scopes: ["meetings:read"] })
    for (const field of ["id", "name", "token", "scopes", "expires_at", "created_at"]) expect(response.body).toHaveProperty(field)
    expect(response.body.id).toMatch(UUID)
    expect(response.body.token).toMatch(/^svc_pat_v1_[A-Za-z0-9_-]{43,}$/)
    expect(response.body.created_at).toMatch(TIMESTAMP)
    expect(Math.abs(Date.parse(response.body.expires_at) - (Date.now() + 90 * 24 * 3600_000))).toBeLessThan(60_000)
    const fresh = client(server.url, response.body.token)
    const introspection = await fresh.get("/v1/auth/introspect")
    expect(introspection.body).toMatchObject({ token_id: response.body.id, user_id: user.userId, kind: "personal_access_token", scopes: ["meetings:read"] })
    expectError(await fresh.post("/v1/meetings", { title: "x" }), 403, "insufficient_scope")
  })

  it("lets an ADMIN issue a personal access token with workspace scopes it holds", async () => {
    const { user } = await member(server.url, { role: "ADMIN" })
    const response = await user.api.post("/v1/user/tokens", { name: "admin", scopes: ["workspace:read", "workspace:write"], expiry_days: 365 })
    expect(response.status).toBe(201)
    expect(response.body.scopes).toEqual(["workspace:read", "workspace:write"])
  })

  it("lists the caller's tokens, never the token value", async () => {
    const { ws, user } = await member(server.url)
    const other = await ws.addUser()
    const issued = await user.api.post("/v1/user/tokens", { name: "second", scopes: ["meetings:read", "action-items:read"], expiry_days: 30 })
    expect(issued.status).toBe(201)
    const list = await user.api.get("/v1/user/tokens")
    expectList(list, { total: 2 })
    const ids = list.body.items.map((t: { id: string }) => t.id)
    expect(ids.sort()).toEqual([user.tokenId, issued.body.id].sort())
    expect(ids).not.toContain(other.tokenId)
    for (const item of list.body.items) {
      expect(item).not.toHaveProperty("token")
      expect(item).not.toHaveProperty("token_hash")
      expect(list.text).not.toContain(issued.body.token)
      expect(list.text).not.toContain(user.token)
      expect(item.id).toMatch(UUID)
      expect(item.created_at).toMatch(TIMESTAMP)
      expect(item.expires_at).toMatch(TIMESTAMP)
    }
    expect(list.body.items.find((t: { id: string }) => t.id === issued.body.id)).toMatchObject({ name: "second", scopes: ["meetings:read", "action-items:read"] })
  })

  it("deletes a token: 204, gone from the list, and its clients get 401 from then on", async () => {
    const { user } = await member(server.url)
    const issued = await user.api.post("/v1/user/tokens", { name: "temp", scopes: ["meetings:read"], expiry_days: 30 })
    const temp = client(server.url, issued.body.token)
    expect((await temp.get("/v1/meetings")).status).toBe(200)
    const deleted = await user.api.delete(`/v1/user/tokens/${issued.body.id}`)
    expect(deleted.status).toBe(204)
    expect(deleted.text).toBe("")
    expectError(await temp.get("/v1/meetings"), 401, "invalid_token")
    expectError(await temp.get("/v1/auth/introspect"), 401, "invalid_token")
    const list = await user.api.get("/v1/user/tokens")
    expect(list.body.items.map((t: { id: string }) => t.id)).toEqual([user.tokenId])
    expectError(await user.api.delete(`/v1/user/tokens/${issued.body.id}`), 404, "not_found")
  })

  it("answers 403 when deleting another user's token, which keeps working", async () => {
    const { ws, user } = await member(server.url)
    const other = await ws.addUser()
    expectError(await user.api.delete(`/v1/user/tokens/${other.tokenId}`), 403, "insufficient_scope")
    expect((await other.api.get("/v1/meetings")).status).toBe(200)
  })

  it("answers 404 for an unknown token id and another workspace's token", async () => {
    const a = await member(server.url)
    const b = await member(server.url)
    expectError(await a.api.delete(`/v1/user/tokens/${crypto.randomUUID()}`), 404, "not_found")
    expectError(await a.api.delete(`/v1/user/tokens/${b.user.tokenId}`), 404, "not_found")
    expect((await b.api.get("/v1/meetings")).status).toBe(200)
    // A workspace API key is not a user token.
    const key = await a.ws.addApiKey()
    expectError(await a.api.delete(`/v1/user/tokens/${key.id}`), 404, "not_found")
    expect((await key.api.get("/v1/meetings")).status).toBe(200)
  })

  it("answers 402 plan_required for a personal access token on a workspace now on FREE", async () => {
    // A FREE user holds only short-lived tokens, which may not issue any: the plan gate is met by a
    // personal access token issued while the workspace was on PRO.
    const ws = await workspace(server.url, "PRO")
    const user = await ws.addUser()
    expect((await operator(server.url).patch(`/operator/v1/workspaces/${ws.workspaceId}`, { plan: "FREE" })).status).toBe(200)
    const response = await user.api.post("/v1/user/tokens", { name: "x", scopes: ["meetings:read"], expiry_days: 30 })
    expect(response.status).toBe(402)
    expect(response.body).toEqual({
      code: "plan_required",
      feature: expect.any(String),
      current_plan: "FREE",
      required_plan: "PRO",
      error: expect.any(String),
      message: response.body.error,
      request_id: response.headers.get("x-request-id")
    })
    expectList(await user.api.get("/v1/user/tokens"), { total: 1 })
  })

  it("answers 403 insufficient_scope when a short-lived token or an API key tries to issue a token, and mints nothing", async () => {
    const ws = await workspace(server.url, "FREE")
    const user = await ws.addUser()
    const refused = await user.api.post("/v1/user/tokens", { name: "x", scopes: ["meetings:read"], expiry_days: 30 })
    expectError(refused, 403, "insufficient_scope")
    expect(refused.body.error).toContain("short-lived token")
    expectList(await user.api.get("/v1/user/tokens"), { total: 0 })
    const pro = await workspace(server.url, "PRO")
    const owner = await pro.addUser({ role: "OWNER" })
    const shortLived = await operator(server.url).post(`/operator/v1/users/${owner.userId}/tokens`, {
      kind: "short_lived",
      scopes: ["meetings:read"],
      expiry_hours: 1
    })
    const viaShortLived = await client(server.url, shortLived.body.token).post("/v1/user/tokens", {
      name: "outlives me",
      scopes: ["meetings:read"],
      expiry_days: 365
    })
    expectError(viaShortLived, 403, "insufficient_scope")
    expectList(await owner.api.get("/v1/user/tokens"), { total: 1 })
  })

  it("answers 400 for scopes the caller does not hold, a bad expiry or a missing name", async () => {
    const { ws } = await member(server.url)
    const narrow = await ws.addUser({ scopes: ["meetings:read"] })
    expectValidation(await narrow.api.post("/v1/user/tokens", { name: "x", scopes: ["meetings:write"], expiry_days: 30 }), "scopes")
    expectValidation(await narrow.api.post("/v1/user/tokens", { name: "x", scopes: ["workspace:read"], expiry_days: 30 }), "scopes")
    expectValidation(await narrow.api.post("/v1/user/tokens", { name: "x", scopes: ["meetings:read"], expiry_days: 45 }), "expiry_days")
    expectValidation(await narrow.api.post("/v1/user/tokens", { name: "x", scopes: ["meetings:read"] }), "expiry_days")
    expectValidation(await narrow.api.post("/v1/user/tokens", { scopes: ["meetings:read"], expiry_days: 30 }), "name")
    expectList(await narrow.api.get("/v1/user/tokens"), { total: 1 })
  })

  it("lets a workspace API key neither list nor issue user tokens", async () => {
    const ws = await workspace(server.url)
    const key = await ws.addApiKey()
    const list = await key.api.get("/v1/user/tokens")
    expectList(list, { total: 0 })
    const refused = await key.api.post("/v1/user/tokens", { name: "x", scopes: ["meetings:read"], expiry_days: 30 })
    expectError(refused, 403, "insufficient_scope")
    expect(refused.body.error).toContain("workspace API key")
    expect(refused.body.error).not.toContain(key.id)
  })

  it("a MEMBER's operator-issued token never holds workspace scopes", async () => {
    const ws = await workspace(server.url)
    const user = await ws.addUser()
    const response = await operator(server.url).post(`/operator/v1/users/${user.userId}/tokens`, {
      kind: "personal_access_token",
      scopes: ["workspace:read"],
      expiry_days: 30
    })
    expectValidation(response, "scopes")
  })
})
