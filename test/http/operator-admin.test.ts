/**
 * The operator API's day-to-day administration (README, "Operator API"), end to end on a real server: list and
 * read workspaces with their counts and delete one with everything in it; list, find, read, change and delete
 * users; list tokens and API keys and revoke them. Every route answers 401 without (or with a wrong) operator
 * token, 404 for unknown ids and 400 for bad input, in the documented envelope. A workspace deleted while users,
 * tokens, API keys and meetings are being created in it goes cleanly, on a real PostgreSQL server.
 */
import type { StorePorts } from "@convene/core"
import * as StorePg from "@convene/store-pg"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { describe, expect, it } from "vitest"
import { serverDatabase } from "../../packages/store-pg/test/fixtures.js"
import { client, OPERATOR_TOKEN, startServer } from "../support/server.js"
import {
  addParticipant,
  ALL_SCOPES,
  createActionItem,
  createAgendaItem,
  createMeeting,
  expectError,
  expectList,
  expectValidation,
  MEMBER_SCOPES,
  operator,
  type Response,
  TIMESTAMP,
  useServer,
  UUID,
  workspace
} from "./fixtures.js"

const server = useServer()
const op = () => operator(server.url)

const USER_KEYS = ["email", "id", "name", "role", "workspace_id"]
const CREDENTIAL_KEYS = ["client_id", "created_at", "expires_at", "id", "kind", "name", "scopes", "user_id", "workspace_id"]
const WORKSPACE_KEYS = ["counts", "created_at", "default_detail_level", "default_template_id", "id", "name", "plan", "updated_at"]

const ids = (response: Response): ReadonlyArray<string> => (response.body.items as ReadonlyArray<{ id: string }>).map((item) => item.id)

/** Newest first, as the lists order: created_at descending, then id descending. */
const newestFirst = (rows: ReadonlyArray<{ readonly id: string; readonly created_at: string }>) =>
  [...rows].sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)).map((row) => row.id)

const expectNoContent = (response: Response) => {
  expect(response.status).toBe(204)
  expect(response.text).toBe("")
}

/** Every operator route, old and new, with a concrete path and a valid body where it takes one. */
const routes = (workspaceId: string, userId: string, tokenId: string) => [
  ["GET", "/operator/v1/workspaces", undefined],
  ["POST", "/operator/v1/workspaces", { name: "x", plan: "PRO" }],
  ["GET", `/operator/v1/workspaces/${workspaceId}`, undefined],
  ["PATCH", `/operator/v1/workspaces/${workspaceId}`, { name: "x" }],
  ["DELETE", `/operator/v1/workspaces/${workspaceId}`, undefined],
  ["GET", `/operator/v1/workspaces/${workspaceId}/users`, undefined],
  ["POST", `/operator/v1/workspaces/${workspaceId}/users`, { email: `a-${crypto.randomUUID()}@example.com`, name: "x", role: "MEMBER" }],
  ["GET", `/operator/v1/workspaces/${workspaceId}/tokens`, undefined],
  ["GET", `/operator/v1/workspaces/${workspaceId}/api-keys`, undefined],
  ["POST", `/operator/v1/workspaces/${workspaceId}/api-keys`, { name: "x" }],
  ["GET", "/operator/v1/users", undefined],
  ["GET", "/operator/v1/users?email=someone@example.com", undefined],
  ["GET", `/operator/v1/users/${userId}`, undefined],
  ["PATCH", `/operator/v1/users/${userId}`, { name: "x" }],
  ["DELETE", `/operator/v1/users/${userId}`, undefined],
  ["GET", `/operator/v1/users/${userId}/tokens`, undefined],
  ["POST", `/operator/v1/users/${userId}/tokens`, { kind: "short_lived", scopes: ["meetings:read"], expiry_hours: 1 }],
  ["DELETE", `/operator/v1/tokens/${tokenId}`, undefined]
] as const

describe("operator authentication on every operator route", () => {
  it("answers 401 unauthorized without a token and 401 invalid_token with a wrong one, and changes nothing", async () => {
    const ws = await workspace(server.url)
    const user = await ws.addUser({ role: "OWNER" })
    for (const [method, path, body] of routes(ws.workspaceId, user.userId, user.tokenId)) {
      const missing = await client(server.url).call(method, path, body)
      expectError(missing, 401, "unauthorized")
      expect(missing.headers.get("www-authenticate"), `${method} ${path}`).toMatch(/^Bearer/)
      expectError(await client(server.url, `${OPERATOR_TOKEN}x`).call(method, path, body), 401, "invalid_token")
      expectError(await client(server.url, user.token).call(method, path, body), 401, "invalid_token")
    }
    // Nothing was deleted or revoked.
    expect((await user.api.get("/v1/me")).status).toBe(200)
    expect((await op().get(`/operator/v1/workspaces/${ws.workspaceId}`)).body.counts).toEqual({ users: 1, meetings: 0, tokens: 1, api_keys: 0 })
  })

  describe("on a server without an operator token", () => {
    const closed = useServer({ operatorToken: null })

    it("answers 404 not_found on every operator route, with or without a token", async () => {
      const id = crypto.randomUUID()
      for (const [method, path, body] of routes(id, id, id)) {
        expectError(await client(closed.url).call(method, path, body), 404, "not_found")
        expectError(await client(closed.url, OPERATOR_TOKEN).call(method, path, body), 404, "not_found")
      }
    })
  })
})

describe("GET /operator/v1/workspaces", () => {
  it("lists every workspace with its counts, newest first, in the list envelope", async () => {
    const a = await workspace(server.url, "FREE")
    const b = await workspace(server.url, "ELITE")
    const listed = await op().get("/operator/v1/workspaces?limit=2")
    expectList(listed, { total: listed.body.total, limit: 2 })
    expect(listed.body.total).toBeGreaterThanOrEqual(2)
    const mine = [(await op().get(`/operator/v1/workspaces/${a.workspaceId}`)).body, (await op().get(`/operator/v1/workspaces/${b.workspaceId}`)).body]
    expect(ids(listed)).toEqual(newestFirst(mine))
    for (const item of listed.body.items) {
      expect(Object.keys(item).sort()).toEqual(WORKSPACE_KEYS)
      expect(item.counts).toEqual({ users: 0, meetings: 0, tokens: 0, api_keys: 0 })
    }
    expect(listed.body.items.find((item: { id: string }) => item.id === a.workspaceId)).toMatchObject({ plan: "FREE", default_detail_level: "standard" })

    const second = await op().get("/operator/v1/workspaces?limit=1&offset=1")
    expectList(second, { total: listed.body.total, limit: 1, offset: 1 })
    expect(ids(second)).toEqual([ids(listed)[1]])
  })

  it("answers 400 for a limit or offset that is not an integer", async () => {
    expectValidation(await op().get("/operator/v1/workspaces?limit=abc"), "limit")
    expectValidation(await op().get("/operator/v1/workspaces?offset=1.5"), "offset")
  })
})

describe("GET /operator/v1/workspaces/{id}", () => {
  it("answers the workspace with its counts: users, meetings, users' live tokens and live API keys", async () => {
    const ws = await workspace(server.url, "PRO")
    const owner = await ws.addUser({ role: "OWNER" })
    const member = await ws.addUser()
    await ws.addApiKey()
    const oldKey = await ws.addApiKey()
    expectNoContent(await op().delete(`/operator/v1/tokens/${oldKey.id}`))
    const extra = await op().post(`/operator/v1/users/${member.userId}/tokens`, { kind: "short_lived", scopes: ["meetings:read"], expiry_hours: 1 })
    expectNoContent(await op().delete(`/operator/v1/tokens/${extra.body.id}`))
    await createMeeting(owner.api)
    const cancelled = await createMeeting(member.api)
    expect((await member.api.patch(`/v1/meetings/${cancelled.id}`, { status: "cancelled" })).status).toBe(200)
    await createMeeting((await ws.addApiKey()).api)

    const response = await op().get(`/operator/v1/workspaces/${ws.workspaceId}`)
    expect(response.status).toBe(200)
    expect(Object.keys(response.body).sort()).toEqual(WORKSPACE_KEYS)
    expect(response.body).toMatchObject({ id: ws.workspaceId, plan: "PRO", counts: { users: 2, meetings: 3, tokens: 2, api_keys: 2 } })
    expect(response.body.created_at).toMatch(TIMESTAMP)
    expect(response.body.updated_at).toMatch(TIMESTAMP)
  })

  it("answers 404 for an unknown workspace and 400 for an id that is not a UUID", async () => {
    expectError(await op().get(`/operator/v1/workspaces/${crypto.randomUUID()}`), 404, "not_found")
    expectValidation(await op().get("/operator/v1/workspaces/not-a-uuid"), "id")
  })
})

describe("DELETE /operator/v1/workspaces/{id}", () => {
  it("deletes the workspace with everything in it: 204, its API key and tokens answer 401, its users are gone", async () => {
    const doomed = await workspace(server.url)
    const owner = await doomed.addUser({ role: "OWNER" })
    const member = await doomed.addUser()
    const key = await doomed.addApiKey()
    const meeting = await createMeeting(member.api, { title: "Doomed" })
    await addParticipant(member.api, meeting.id, owner.userId, "EDITOR")
    await createAgendaItem(member.api, meeting.id, { presenters: [member.userId], talking_points: ["mine"] })
    await createActionItem(member.api, meeting.id, { assigned_to_user_id: member.userId })
    expect((await key.api.post("/v1/meetings", { title: "Keyed" }, { "idempotency-key": "once" })).status).toBe(201)
    const kept = await workspace(server.url)
    const keptUser = await kept.addUser()
    const keptMeeting = await createMeeting(keptUser.api)

    expectNoContent(await op().delete(`/operator/v1/workspaces/${doomed.workspaceId}`))

    expectError(await key.api.get("/v1/meetings"), 401, "invalid_token")
    expectError(await owner.api.get("/v1/me"), 401, "invalid_token")
    expectError(await member.api.get(`/v1/meetings/${meeting.id}`), 401, "invalid_token")
    expectError(await op().get(`/operator/v1/workspaces/${doomed.workspaceId}`), 404, "not_found")
    expectError(await op().get(`/operator/v1/users/${owner.userId}`), 404, "not_found")
    expectError(await op().get(`/operator/v1/workspaces/${doomed.workspaceId}/users`), 404, "not_found")
    expect((await op().get(`/operator/v1/users?email=${encodeURIComponent(member.email)}`)).body.total).toBe(0)
    expectError(await op().delete(`/operator/v1/workspaces/${doomed.workspaceId}`), 404, "not_found")
    const listed = await op().get("/operator/v1/workspaces?limit=100")
    expect(ids(listed)).not.toContain(doomed.workspaceId)
    // The addresses are free again, and the other workspace has everything it had.
    expect((await op().post(`/operator/v1/workspaces/${kept.workspaceId}/users`, { email: member.email, name: "Back", role: "MEMBER" })).status).toBe(201)
    expect((await keptUser.api.get(`/v1/meetings/${keptMeeting.id}`)).status).toBe(200)
    expect((await op().get(`/operator/v1/workspaces/${kept.workspaceId}`)).body.counts).toEqual({ users: 2, meetings: 1, tokens: 1, api_keys: 0 })
  })

  it("answers 404 for an unknown workspace and 400 for an id that is not a UUID", async () => {
    expectError(await op().delete(`/operator/v1/workspaces/${crypto.randomUUID()}`), 404, "not_found")
    expectValidation(await op().delete("/operator/v1/workspaces/123"), "id")
  })
})

describe("GET /operator/v1/workspaces/{id}/users", () => {
  it("lists the workspace's users newest first, without passwords", async () => {
    const ws = await workspace(server.url)
    const first = await ws.addUser({ role: "OWNER" })
    const second = await ws.addUser({ role: "ADMIN" })
    await (await workspace(server.url)).addUser()
    const listed = await op().get(`/operator/v1/workspaces/${ws.workspaceId}/users`)
    expectList(listed, { total: 2 })
    const byId = await Promise.all([first, second].map(async (u) => (await op().get(`/operator/v1/users/${u.userId}`)).body))
    expect(listed.body.items).toHaveLength(2)
    for (const item of listed.body.items) expect(Object.keys(item).sort()).toEqual(USER_KEYS)
    expect(listed.body.items).toEqual(expect.arrayContaining(byId))
    const paged = await op().get(`/operator/v1/workspaces/${ws.workspaceId}/users?limit=1&offset=1`)
    expectList(paged, { total: 2, limit: 1, offset: 1 })
    expect(ids(paged)).toEqual([ids(listed)[1]])
  })

  it("answers 404 for an unknown workspace", async () => {
    expectError(await op().get(`/operator/v1/workspaces/${crypto.randomUUID()}/users`), 404, "not_found")
  })
})

describe("GET /operator/v1/users and /operator/v1/users/{id}", () => {
  it("finds a user by e-mail across the installation, compared as core normalises it", async () => {
    const ws = await workspace(server.url)
    const user = await ws.addUser({ role: "ADMIN", name: "Findable" })
    const found = await op().get(`/operator/v1/users?email=${encodeURIComponent(`  ${user.email.toUpperCase()} `)}`)
    expectList(found, { total: 1 })
    expect(found.body.items).toEqual([{ id: user.userId, workspace_id: ws.workspaceId, email: user.email, name: "Findable", role: "ADMIN" }])
    expectList(await op().get(`/operator/v1/users?email=nobody-${crypto.randomUUID()}@example.com`), { total: 0 })
    expectValidation(await op().get("/operator/v1/users?email=not-an-address"), "email")
  })

  it("lists every user of the installation newest first without a filter", async () => {
    const ws = await workspace(server.url)
    const newest = await ws.addUser()
    const listed = await op().get("/operator/v1/users?limit=1")
    expectList(listed, { total: listed.body.total, limit: 1 })
    expect(listed.body.total).toBeGreaterThanOrEqual(1)
    expect(ids(listed)).toEqual([newest.userId])
  })

  it("GET /operator/v1/users/{id} answers the user; 404 when unknown, 400 for a bad id", async () => {
    const ws = await workspace(server.url)
    const user = await ws.addUser({ name: "Readable" })
    const response = await op().get(`/operator/v1/users/${user.userId}`)
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ id: user.userId, workspace_id: ws.workspaceId, email: user.email, name: "Readable", role: "MEMBER" })
    expect(response.body.id).toMatch(UUID)
    expectError(await op().get(`/operator/v1/users/${crypto.randomUUID()}`), 404, "not_found")
    expectValidation(await op().get("/operator/v1/users/xyz"), "id")
  })
})

describe("PATCH /operator/v1/users/{id}", () => {
  it("changes the name, the role and the password; a lowered role takes workspace scopes from the user's tokens at once", async () => {
    const ws = await workspace(server.url)
    const admin = await ws.addUser({ role: "ADMIN", scopes: ALL_SCOPES })
    expect((await admin.api.get("/v1/auth/introspect")).body.scopes).toEqual(ALL_SCOPES)

    const changed = await op().patch(`/operator/v1/users/${admin.userId}`, { name: "Demoted", role: "MEMBER", password: "a long new passphrase" })
    expect(changed.status).toBe(200)
    expect(changed.body).toEqual({ id: admin.userId, workspace_id: ws.workspaceId, email: admin.email, name: "Demoted", role: "MEMBER" })
    expect((await admin.api.get("/v1/auth/introspect")).body.scopes).toEqual(MEMBER_SCOPES)
    expect((await admin.api.get("/v1/me")).body).toMatchObject({ name: "Demoted", role: "MEMBER" })
    const listed = await op().get(`/operator/v1/users/${admin.userId}/tokens`)
    expect(listed.body.items.map((t: { scopes: ReadonlyArray<string> }) => t.scopes)).toEqual([MEMBER_SCOPES])

    const restored = await op().patch(`/operator/v1/users/${admin.userId}`, { role: "OWNER" })
    expect(restored.body).toMatchObject({ name: "Demoted", role: "OWNER" })
    expect((await admin.api.get("/v1/auth/introspect")).body.scopes).toEqual(ALL_SCOPES)
    expect((await op().patch(`/operator/v1/users/${admin.userId}`, {})).body).toMatchObject({ name: "Demoted", role: "OWNER" })
  })

  it("answers 400 for an unknown field (the address cannot change), a bad role, an empty name or a short password; 404 when unknown", async () => {
    const ws = await workspace(server.url)
    const user = await ws.addUser()
    const path = `/operator/v1/users/${user.userId}`
    expectValidation(await op().patch(path, { email: "new@example.com" }), "email")
    expectValidation(await op().patch(path, { role: "VIEWER" }), "role")
    expectValidation(await op().patch(path, { name: "  " }), "name")
    expectValidation(await op().patch(path, { password: "short" }), "password")
    expectError(await op().patch(path, "{broken"), 400, "bad_request")
    expect((await op().get(path)).body).toMatchObject({ email: user.email, role: "MEMBER" })
    expectError(await op().patch(`/operator/v1/users/${crypto.randomUUID()}`, { name: "Ghost" }), 404, "not_found")
  })
})

describe("DELETE /operator/v1/users/{id}", () => {
  it("deletes the user: their token answers 401; their meeting stays without an owner, they leave presenters and assignments", async () => {
    const ws = await workspace(server.url)
    const owner = await ws.addUser({ role: "OWNER" })
    const member = await ws.addUser()
    const meeting = await createMeeting(member.api, { title: "Theirs" })
    await addParticipant(member.api, meeting.id, owner.userId, "VIEWER")
    const item = await createAgendaItem(member.api, meeting.id, { presenters: [member.userId, owner.userId], talking_points: ["private"] })
    const task = await createActionItem(member.api, meeting.id, { assigned_to_user_id: member.userId, agenda_item_id: item.id })
    const ownersMeeting = await createMeeting(owner.api)
    await addParticipant(owner.api, ownersMeeting.id, member.userId, "EDITOR")

    expectNoContent(await op().delete(`/operator/v1/users/${member.userId}`))

    expectError(await member.api.get("/v1/me"), 401, "invalid_token")
    expectError(await op().get(`/operator/v1/users/${member.userId}`), 404, "not_found")
    expectError(await op().delete(`/operator/v1/users/${member.userId}`), 404, "not_found")
    const kept = await owner.api.get(`/v1/meetings/${meeting.id}`)
    expect(kept.status).toBe(200)
    expect(kept.body.owner_user_id).toBeNull()
    const people = await owner.api.get(`/v1/meetings/${meeting.id}/participants`)
    expect(people.body.items.map((p: { user_id: string }) => p.user_id)).toEqual([owner.userId])
    expect((await owner.api.get(`/v1/meetings/${ownersMeeting.id}/participants`)).body.items.map((p: { user_id: string }) => p.user_id))
      .toEqual([owner.userId])
    expect((await owner.api.get(`/v1/agenda-items/${item.id}`)).body).toMatchObject({ presenters: [owner.userId], talking_points: [] })
    expect((await owner.api.get(`/v1/action-items/${task.id}`)).body).toMatchObject({ assigned_to_user_id: null, agenda_item_id: item.id })
    // The workspace's admins keep working on the ownerless meeting.
    expect((await owner.api.patch(`/v1/meetings/${meeting.id}`, { title: "Ours now" })).status).toBe(200)
    expect((await op().get(`/operator/v1/workspaces/${ws.workspaceId}`)).body.counts).toEqual({ users: 1, meetings: 2, tokens: 1, api_keys: 0 })
    expectList(await op().get(`/operator/v1/workspaces/${ws.workspaceId}/tokens`), { total: 1 })
  })

  it("answers 404 for an unknown user and 400 for a bad id", async () => {
    expectError(await op().delete(`/operator/v1/users/${crypto.randomUUID()}`), 404, "not_found")
    expectValidation(await op().delete("/operator/v1/users/nope"), "id")
  })
})

describe("tokens and API keys", () => {
  it("lists a user's tokens, the workspace's users' tokens and its API keys: never the token, newest first", async () => {
    const ws = await workspace(server.url)
    const admin = await ws.addUser({ role: "ADMIN" })
    const member = await ws.addUser()
    const key = await ws.addApiKey()
    const extra = await op().post(`/operator/v1/users/${member.userId}/tokens`, {
      kind: "personal_access_token",
      name: "laptop",
      scopes: ["meetings:read"],
      expiry_days: 90
    })
    expect(extra.status).toBe(201)

    const mine = await op().get(`/operator/v1/users/${member.userId}/tokens`)
    expectList(mine, { total: 2 })
    for (const item of mine.body.items) {
      expect(Object.keys(item).sort()).toEqual(CREDENTIAL_KEYS)
      expect(item).toMatchObject({ workspace_id: ws.workspaceId, user_id: member.userId, kind: "personal_access_token", client_id: null })
      expect(item.created_at).toMatch(TIMESTAMP)
      expect(item.expires_at).toMatch(TIMESTAMP)
    }
    expect(mine.body.items.find((t: { id: string }) => t.id === extra.body.id)).toMatchObject({ name: "laptop", scopes: ["meetings:read"] })
    expect(mine.text).not.toContain(member.token)
    expect(mine.text).not.toContain(extra.body.token)

    const held = await op().get(`/operator/v1/workspaces/${ws.workspaceId}/tokens`)
    expectList(held, { total: 3 })
    expect([...ids(held)].sort()).toEqual([admin.tokenId, member.tokenId, extra.body.id].sort())
    expect(ids(held)).toEqual(newestFirst(held.body.items))
    const keys = await op().get(`/operator/v1/workspaces/${ws.workspaceId}/api-keys`)
    expectList(keys, { total: 1 })
    expect(keys.body.items[0]).toMatchObject({ id: key.id, kind: "api_key", user_id: null, expires_at: null, scopes: ALL_SCOPES })
    expect(keys.text).not.toContain(key.key)
  })

  it("DELETE /operator/v1/tokens/{id} revokes a token or an API key: 401 from the next request; again 404", async () => {
    const ws = await workspace(server.url)
    const user = await ws.addUser()
    const key = await ws.addApiKey()
    for (const [id, api] of [[user.tokenId, user.api], [key.id, key.api]] as const) {
      expect((await api.get("/v1/meetings")).status).toBe(200)
      expectNoContent(await op().delete(`/operator/v1/tokens/${id}`))
      expectError(await api.get("/v1/meetings"), 401, "invalid_token")
      expectError(await op().delete(`/operator/v1/tokens/${id}`), 404, "not_found")
    }
    expectList(await op().get(`/operator/v1/users/${user.userId}/tokens`), { total: 0 })
    expectList(await op().get(`/operator/v1/workspaces/${ws.workspaceId}/api-keys`), { total: 0 })
    expect((await op().get(`/operator/v1/workspaces/${ws.workspaceId}`)).body.counts).toEqual({ users: 1, meetings: 0, tokens: 0, api_keys: 0 })
  })

  it("answers 404 for unknown users, workspaces and tokens, and 400 for ids that are not UUIDs", async () => {
    const id = crypto.randomUUID()
    expectError(await op().get(`/operator/v1/users/${id}/tokens`), 404, "not_found")
    expectError(await op().get(`/operator/v1/workspaces/${id}/tokens`), 404, "not_found")
    expectError(await op().get(`/operator/v1/workspaces/${id}/api-keys`), 404, "not_found")
    expectError(await op().delete(`/operator/v1/tokens/${id}`), 404, "not_found")
    expectValidation(await op().delete("/operator/v1/tokens/not-a-uuid"), "id")
    expectValidation(await op().get("/operator/v1/users/not-a-uuid/tokens"), "id")
  })
})

/**
 * @effect/sql's SqlClient as store-pg's layers provide it (the test package does not depend on @effect/sql: the tag
 * is rebuilt from its key, as in test/webhooks.test.ts), to count what a deletion left in the database.
 */
type SqlClient = Exclude<Layer.Layer.Success<ReturnType<typeof StorePg.layerPglite>>, StorePorts>
const SqlClient = Context.GenericTag<SqlClient>("@effect/sql/SqlClient")

describe("DELETE /operator/v1/workspaces/{id} racing creations in the workspace, on PostgreSQL", () => {
  // The memory store and PGlite serve one transaction at a time; only the server lets the deletion and the
  // creations overlap.
  it("answers 204 to the deletion and 201, 404 or 409 to every creation, never 5xx, and leaves no row of the workspace", async () => {
    const scope = Effect.runSync(Scope.make())
    const url = await Effect.runPromise(Scope.extend(serverDatabase, scope))
    const sql = Context.get(
      await Effect.runPromise(Scope.extend(Layer.build(StorePg.clientPg({ url, maxConnections: 1 })), scope)),
      SqlClient
    )
    const racing = await startServer({ store: StorePg.layerPg({ url }) })
    const deleted: Array<string> = []
    try {
      const admin = operator(racing.url)
      for (let round = 0; round < 10; round++) {
        const doomed = await workspace(racing.url)
        const owner = await doomed.addUser({ role: "OWNER" })
        const meeting = (await owner.api.post("/v1/meetings", { title: "Standing" })).body as { id: string }
        deleted.push(doomed.workspaceId)
        const creations = [
          ...Array.from({ length: 20 }, (_, i) =>
            admin.post(`/operator/v1/workspaces/${doomed.workspaceId}/users`, { email: `r${round}-${i}-${crypto.randomUUID()}@example.com`, name: "R", role: "MEMBER" })),
          ...Array.from({ length: 3 }, () => admin.post(`/operator/v1/workspaces/${doomed.workspaceId}/api-keys`, { name: "K" })),
          ...Array.from({ length: 3 }, () =>
            admin.post(`/operator/v1/users/${owner.userId}/tokens`, { kind: "personal_access_token", scopes: ["meetings:read"], expiry_days: 30 })),
          ...Array.from({ length: 3 }, () => owner.api.post("/v1/meetings", { title: "Racing" })),
          // Rows under a meeting of the workspace: written without holding the workspace, they lose to the deletion
          // at commit (409) when its cascade has already taken their meeting.
          ...Array.from({ length: 5 }, () => owner.api.post(`/v1/meetings/${meeting.id}/agenda-items`, { title: "Racing" })),
          ...Array.from({ length: 5 }, () => owner.api.post("/v1/action-items", { meeting_id: meeting.id, title: "Racing" }))
        ]
        // The deletion starts while the creations are under way.
        const deletion = new Promise((resolve) => setTimeout(resolve, 5 + round)).then(() =>
          admin.delete(`/operator/v1/workspaces/${doomed.workspaceId}`)
        )
        const [removed, ...created] = await Promise.all([deletion, ...creations])
        expect({ status: removed!.status, body: removed!.text }).toEqual({ status: 204, body: "" })
        for (const response of created) {
          // A meeting's request whose token went with the workspace is refused before it reaches the workspace.
          expect([201, 401, 404, 409], `${response.status} ${response.text}`).toContain(response.status)
        }
        expectError(await admin.get(`/operator/v1/workspaces/${doomed.workspaceId}`), 404, "not_found")
      }
      const tables = await Effect.runPromise(sql<{ table_name: string }>`
        SELECT table_name FROM information_schema.columns
        WHERE table_schema = 'public' AND column_name = 'workspace_id'`)
      expect(tables.map((row) => row.table_name)).toEqual(expect.arrayContaining(["users", "credentials", "meetings"]))
      for (const { table_name } of tables) {
        const [left] = await Effect.runPromise(sql<{ count: string }>`
          SELECT count(*)::text AS count FROM ${sql(table_name)} WHERE workspace_id::text IN ${sql.in(deleted)}`)
        expect({ table: table_name, rows: left!.count }).toEqual({ table: table_name, rows: "0" })
      }
    } finally {
      await racing.close()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }, 120_000)
})
