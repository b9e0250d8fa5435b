/** The operator API (decisions.md, "Operator API"): provisioning workspaces, users, tokens and API keys. */
import { describe, expect, it } from "vitest"
import { client, OPERATOR_TOKEN } from "../support/server.js"
import { ageOf, expectError, expectValidation, operator, TIMESTAMP, useServer, UUID, workspace } from "./fixtures.js"

const server = useServer()

const DAY = 24 * 60 * 60 * 1000
const HOUR = 60 * 60 * 1000

const newUser = async (workspaceId: string, role: "OWNER" | "ADMIN" | "MEMBER" = "MEMBER") => {
  const response = await operator(server.url).post(`/operator/v1/workspaces/${workspaceId}/users`, {
    email: `op-${crypto.randomUUID()}@example.com`,
    name: "Operator Made",
    role
  })
  expect(response.status).toBe(201)
  return response.body.id as string
}

describe("POST /operator/v1/workspaces", () => {
  it("creates a workspace: 201 {id, name, plan, created_at}", async () => {
    for (const plan of ["FREE", "PRO", "ELITE", "ENTERPRISE"]) {
      const response = await operator(server.url).post("/operator/v1/workspaces", { name: `Acme ${plan}`, plan })
      expect(response.status).toBe(201)
      expect(response.body).toMatchObject({ name: `Acme ${plan}`, plan })
      expect(response.body.id).toMatch(UUID)
      expect(response.body.created_at).toMatch(TIMESTAMP)
      expect(ageOf(response.body.created_at)).toBeLessThan(60_000)
      expect(response.headers.get("x-request-id")).toBeTruthy()
    }
  })

  it("answers 400 validation_error for an unknown plan, a missing name or an empty name", async () => {
    expectValidation(await operator(server.url).post("/operator/v1/workspaces", { name: "Acme", plan: "GOLD" }), "plan")
    expectValidation(await operator(server.url).post("/operator/v1/workspaces", { plan: "PRO" }), "name")
    expectValidation(await operator(server.url).post("/operator/v1/workspaces", { name: "  ", plan: "PRO" }), "name")
  })
})

describe("PATCH /operator/v1/workspaces/{id}", () => {
  it("changes the name and the plan: 200 with the workspace", async () => {
    const ws = await workspace(server.url, "FREE")
    const renamed = await operator(server.url).patch(`/operator/v1/workspaces/${ws.workspaceId}`, { name: "Renamed" })
    expect(renamed.status).toBe(200)
    expect(renamed.body).toMatchObject({ id: ws.workspaceId, name: "Renamed", plan: "FREE" })
    const upgraded = await operator(server.url).patch(`/operator/v1/workspaces/${ws.workspaceId}`, { plan: "ELITE" })
    expect(upgraded.status).toBe(200)
    expect(upgraded.body).toMatchObject({ id: ws.workspaceId, name: "Renamed", plan: "ELITE" })
    expect(upgraded.body.created_at).toMatch(TIMESTAMP)
  })

  it("lets a workspace upgraded from FREE issue personal access tokens", async () => {
    const ws = await workspace(server.url, "FREE")
    const userId = await newUser(ws.workspaceId)
    const body = { kind: "personal_access_token", scopes: ["meetings:read"], expiry_days: 30 }
    expect((await operator(server.url).post(`/operator/v1/users/${userId}/tokens`, body)).status).toBe(402)
    await operator(server.url).patch(`/operator/v1/workspaces/${ws.workspaceId}`, { plan: "PRO" })
    expect((await operator(server.url).post(`/operator/v1/users/${userId}/tokens`, body)).status).toBe(201)
  })

  it("answers 404 for an unknown workspace and 400 for a bad plan", async () => {
    expectError(await operator(server.url).patch(`/operator/v1/workspaces/${crypto.randomUUID()}`, { name: "x" }), 404, "not_found")
    const ws = await workspace(server.url)
    expectValidation(await operator(server.url).patch(`/operator/v1/workspaces/${ws.workspaceId}`, { plan: "platinum" }), "plan")
    expectValidation(await operator(server.url).patch("/operator/v1/workspaces/not-a-uuid", { name: "x" }), "id")
  })
})

describe("POST /operator/v1/workspaces/{id}/users", () => {
  it("creates a user: 201 {id, workspace_id, email, name, role}", async () => {
    const ws = await workspace(server.url)
    for (const role of ["OWNER", "ADMIN", "MEMBER"]) {
      const email = `${role.toLowerCase()}-${crypto.randomUUID()}@example.com`
      const response = await operator(server.url).post(`/operator/v1/workspaces/${ws.workspaceId}/users`, {
        email,
        name: `The ${role}`,
        role,
        password: "correct horse battery"
      })
      expect(response.status).toBe(201)
      expect(response.body).toEqual({ id: expect.stringMatching(UUID), workspace_id: ws.workspaceId, email, name: `The ${role}`, role })
    }
  })

  it("answers 409 conflict for an e-mail already in use (compared case-insensitively, across workspaces)", async () => {
    const ws = await workspace(server.url)
    const other = await workspace(server.url)
    const email = `dup-${crypto.randomUUID()}@example.com`
    const first = await operator(server.url).post(`/operator/v1/workspaces/${ws.workspaceId}/users`, { email, name: "A", role: "MEMBER" })
    expect(first.status).toBe(201)
    expectError(
      await operator(server.url).post(`/operator/v1/workspaces/${ws.workspaceId}/users`, { email, name: "B", role: "MEMBER" }),
      409,
      "conflict"
    )
    expectError(
      await operator(server.url).post(`/operator/v1/workspaces/${other.workspaceId}/users`, { email: email.toUpperCase(), name: "C", role: "ADMIN" }),
      409,
      "conflict"
    )
  })

  it("answers 404 for an unknown workspace", async () => {
    expectError(
      await operator(server.url).post(`/operator/v1/workspaces/${crypto.randomUUID()}/users`, {
        email: `x-${crypto.randomUUID()}@example.com`,
        name: "X",
        role: "MEMBER"
      }),
      404,
      "not_found"
    )
  })

  it("answers 400 validation_error for a bad e-mail, a bad role, a missing name or a short password", async () => {
    const ws = await workspace(server.url)
    const path = `/operator/v1/workspaces/${ws.workspaceId}/users`
    expectValidation(await operator(server.url).post(path, { email: "not-an-email", name: "X", role: "MEMBER" }), "email")
    expectValidation(await operator(server.url).post(path, { email: "a@example.com", name: "X", role: "VIEWER" }), "role")
    expectValidation(await operator(server.url).post(path, { email: "b@example.com", role: "MEMBER" }), "name")
    expectValidation(await operator(server.url).post(path, { email: "c@example.com", name: "X", role: "MEMBER", password: "short" }), "password")
  })
})

describe("POST /operator/v1/users/{id}/tokens", () => {
  it("issues a personal access token: 201 {id, token, kind, scopes, expires_at}, svc_pat_v1_ + >= 43 base64url chars", async () => {
    const ws = await workspace(server.url, "PRO")
    const userId = await newUser(ws.workspaceId)
    for (const days of [30, 60, 90, 180, 365]) {
      const response = await operator(server.url).post(`/operator/v1/users/${userId}/tokens`, {
        kind: "personal_access_token",
        name: "ci",
        scopes: ["meetings:read", "action-items:write"],
        expiry_days: days
      })
      expect(response.status).toBe(201)
      expect(response.body).toMatchObject({ kind: "personal_access_token", scopes: ["meetings:read", "action-items:write"] })
      expect(response.body.id).toMatch(UUID)
      expect(response.body.token).toMatch(/^svc_pat_v1_[A-Za-z0-9_-]{43,}$/)
      expect(response.body.expires_at).toMatch(TIMESTAMP)
      expect(Math.abs(Date.parse(response.body.expires_at) - (Date.now() + days * DAY))).toBeLessThan(60_000)
    }
  })

  it("issues a short-lived token: svc_slt_v1_, expiry_hours 1, 2, 4 or 6, on every plan", async () => {
    for (const plan of ["FREE", "PRO"] as const) {
      const ws = await workspace(server.url, plan)
      const userId = await newUser(ws.workspaceId)
      for (const hours of [1, 2, 4, 6]) {
        const response = await operator(server.url).post(`/operator/v1/users/${userId}/tokens`, {
          kind: "short_lived",
          scopes: ["meetings:read"],
          expiry_hours: hours
        })
        expect(response.status).toBe(201)
        expect(response.body).toMatchObject({ kind: "short_lived", scopes: ["meetings:read"] })
        expect(response.body.id).toMatch(UUID)
        expect(response.body.token).toMatch(/^svc_slt_v1_[A-Za-z0-9_-]{43,}$/)
        expect(Math.abs(Date.parse(response.body.expires_at) - (Date.now() + hours * HOUR))).toBeLessThan(60_000)
      }
    }
  })

  it("mints a different token every time", async () => {
    const ws = await workspace(server.url)
    const userId = await newUser(ws.workspaceId)
    const body = { kind: "short_lived", scopes: ["meetings:read"], expiry_hours: 1 }
    const a = await operator(server.url).post(`/operator/v1/users/${userId}/tokens`, body)
    const b = await operator(server.url).post(`/operator/v1/users/${userId}/tokens`, body)
    expect(a.body.token).not.toBe(b.body.token)
    expect(a.body.id).not.toBe(b.body.id)
  })

  it("answers a personal access token on a FREE workspace with 402 plan_required", async () => {
    const ws = await workspace(server.url, "FREE")
    const userId = await newUser(ws.workspaceId)
    const response = await operator(server.url).post(`/operator/v1/users/${userId}/tokens`, {
      kind: "personal_access_token",
      scopes: ["meetings:read"],
      expiry_days: 30
    })
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
    expect(response.body.feature.length).toBeGreaterThan(0)
  })

  it("answers 400 for a short-lived token with a workspace scope", async () => {
    const ws = await workspace(server.url, "PRO")
    const userId = await newUser(ws.workspaceId, "ADMIN")
    expectValidation(
      await operator(server.url).post(`/operator/v1/users/${userId}/tokens`, {
        kind: "short_lived",
        scopes: ["meetings:read", "workspace:read"],
        expiry_hours: 1
      }),
      "scopes"
    )
  })

  it("answers 400 for scopes beyond the user's role, and lets an ADMIN hold workspace scopes", async () => {
    const ws = await workspace(server.url, "PRO")
    const memberId = await newUser(ws.workspaceId, "MEMBER")
    expectValidation(
      await operator(server.url).post(`/operator/v1/users/${memberId}/tokens`, {
        kind: "personal_access_token",
        scopes: ["meetings:read", "workspace:write"],
        expiry_days: 30
      }),
      "scopes"
    )
    const adminId = await newUser(ws.workspaceId, "ADMIN")
    const admin = await operator(server.url).post(`/operator/v1/users/${adminId}/tokens`, {
      kind: "personal_access_token",
      scopes: ["workspace:read", "workspace:write"],
      expiry_days: 30
    })
    expect(admin.status).toBe(201)
    expect(admin.body.scopes).toEqual(["workspace:read", "workspace:write"])
  })

  it("enforces the expiry rules: PAT expiry_days in 30/60/90/180/365, short-lived expiry_hours in 1/2/4/6", async () => {
    const ws = await workspace(server.url, "PRO")
    const userId = await newUser(ws.workspaceId)
    const path = `/operator/v1/users/${userId}/tokens`
    const pat = { kind: "personal_access_token", scopes: ["meetings:read"] }
    const slt = { kind: "short_lived", scopes: ["meetings:read"] }
    expectValidation(await operator(server.url).post(path, { ...pat, expiry_days: 7 }), "expiry_days")
    expectValidation(await operator(server.url).post(path, { ...pat, expiry_days: 31 }), "expiry_days")
    expectValidation(await operator(server.url).post(path, pat), "expiry_days")
    expectValidation(await operator(server.url).post(path, { ...pat, expiry_hours: 1 }), "expiry_hours")
    expectValidation(await operator(server.url).post(path, { ...slt, expiry_hours: 3 }), "expiry_hours")
    expectValidation(await operator(server.url).post(path, { ...slt, expiry_hours: 24 }), "expiry_hours")
    expectValidation(await operator(server.url).post(path, slt), "expiry_hours")
    expectValidation(await operator(server.url).post(path, { ...slt, expiry_days: 30 }), "expiry_days")
  })

  it("answers 400 for an unknown kind, an unknown scope or no scope", async () => {
    const ws = await workspace(server.url, "PRO")
    const userId = await newUser(ws.workspaceId)
    const path = `/operator/v1/users/${userId}/tokens`
    expectValidation(await operator(server.url).post(path, { kind: "api_key", scopes: ["meetings:read"], expiry_days: 30 }), "kind")
    expectValidation(await operator(server.url).post(path, { kind: "personal_access_token", scopes: ["meetings:admin"], expiry_days: 30 }), "scopes")
    expectValidation(await operator(server.url).post(path, { kind: "personal_access_token", scopes: [], expiry_days: 30 }), "scopes")
  })

  it("answers 404 for an unknown user", async () => {
    expectError(
      await operator(server.url).post(`/operator/v1/users/${crypto.randomUUID()}/tokens`, {
        kind: "short_lived",
        scopes: ["meetings:read"],
        expiry_hours: 1
      }),
      404,
      "not_found"
    )
  })
})

describe("POST /operator/v1/workspaces/{id}/api-keys", () => {
  it("issues a workspace API key: 201 {id, key}, svc_wk_v1_ + >= 43 base64url chars, that works on /v1", async () => {
    const ws = await workspace(server.url)
    const response = await operator(server.url).post(`/operator/v1/workspaces/${ws.workspaceId}/api-keys`, { name: "Zapier" })
    expect(response.status).toBe(201)
    expect(response.body.id).toMatch(UUID)
    expect(response.body.key).toMatch(/^svc_wk_v1_[A-Za-z0-9_-]{43,}$/)
    const introspection = await client(server.url, response.body.key).get("/v1/auth/introspect")
    expect(introspection.status).toBe(200)
    expect(introspection.body).toMatchObject({ kind: "api_key", token_id: response.body.id, workspace_id: ws.workspaceId })
  })

  it("answers 404 for an unknown workspace and 400 for a missing name", async () => {
    expectError(await operator(server.url).post(`/operator/v1/workspaces/${crypto.randomUUID()}/api-keys`, { name: "k" }), 404, "not_found")
    const ws = await workspace(server.url)
    expectValidation(await operator(server.url).post(`/operator/v1/workspaces/${ws.workspaceId}/api-keys`, {}), "name")
  })
})

describe("operator authentication", () => {
  const calls = (workspaceId: string, userId: string) => [
    ["POST", "/operator/v1/workspaces", { name: "x", plan: "PRO" }],
    ["PATCH", `/operator/v1/workspaces/${workspaceId}`, { name: "x" }],
    ["POST", `/operator/v1/workspaces/${workspaceId}/users`, { email: `a-${crypto.randomUUID()}@example.com`, name: "x", role: "MEMBER" }],
    ["POST", `/operator/v1/users/${userId}/tokens`, { kind: "short_lived", scopes: ["meetings:read"], expiry_hours: 1 }],
    ["POST", `/operator/v1/workspaces/${workspaceId}/api-keys`, { name: "x" }]
  ] as const

  it("answers 401 unauthorized without a token and 401 invalid_token with a wrong one, on every operator path", async () => {
    const ws = await workspace(server.url)
    const userId = await newUser(ws.workspaceId)
    for (const [method, path, body] of calls(ws.workspaceId, userId)) {
      const missing = await client(server.url).call(method, path, body)
      expectError(missing, 401, "unauthorized")
      expect(missing.headers.get("www-authenticate")).toMatch(/^Bearer/)
      expectError(await client(server.url, `${OPERATOR_TOKEN}x`).call(method, path, body), 401, "invalid_token")
      expectError(await client(server.url, "wrong").call(method, path, body), 401, "invalid_token")
    }
  })

  it("authenticates before it validates: a bad body without the operator token is 401", async () => {
    expectError(await client(server.url).post("/operator/v1/workspaces", { plan: "GOLD" }), 401, "unauthorized")
    expectError(await client(server.url).post("/operator/v1/workspaces", "{broken"), 401, "unauthorized")
    expectError(await client(server.url, "wrong").patch("/operator/v1/workspaces/not-a-uuid", { name: "x" }), 401, "invalid_token")
  })

  it("does not accept a first-party token as the operator token", async () => {
    const ws = await workspace(server.url)
    const user = await ws.addUser({ role: "OWNER" })
    expectError(await user.api.post("/operator/v1/workspaces", { name: "x", plan: "PRO" }), 401, "invalid_token")
  })

  describe("on a server without an operator token", () => {
    const closed = useServer({ operatorToken: null })

    it("answers 404 not_found on every /operator path, with or without a token", async () => {
      const id = crypto.randomUUID()
      for (const [method, path, body] of calls(id, id)) {
        expectError(await client(closed.url).call(method, path, body), 404, "not_found")
        expectError(await client(closed.url, OPERATOR_TOKEN).call(method, path, body), 404, "not_found")
      }
      expect((await client(closed.url).get("/healthz")).status).toBe(200)
    })

    it("answers 404 (not 405 or 400) for another method, an unknown operator path, a bad body or a bad id", async () => {
      expectError(await client(closed.url, OPERATOR_TOKEN).get("/operator/v1/workspaces"), 404, "not_found")
      expectError(await client(closed.url, OPERATOR_TOKEN).delete(`/operator/v1/workspaces/${crypto.randomUUID()}`), 404, "not_found")
      expectError(await client(closed.url, OPERATOR_TOKEN).post("/operator/v1/partner-apps", { name: "x" }), 404, "not_found")
      expectError(await client(closed.url, OPERATOR_TOKEN).post("/operator/v1/workspaces", { plan: "GOLD" }), 404, "not_found")
      expectError(await client(closed.url, OPERATOR_TOKEN).post("/operator/v1/workspaces", "{broken"), 404, "not_found")
      expectError(await client(closed.url, OPERATOR_TOKEN).patch("/operator/v1/workspaces/not-a-uuid", { name: "x" }), 404, "not_found")
    })
  })
})
