/**
 * Workspace administration (first-party document, "Workspace administration"): GET and PATCH /v1/workspace, the
 * members (list, role change, removal) and the API keys (list, soft delete); who may (scopes workspace:read and
 * workspace:write, the ADMIN or OWNER role, only an OWNER for the OWNER role), the last OWNER (409), other
 * workspaces' ids (404), and the defaults a new meeting takes from the settings.
 */
import { describe, expect, it } from "vitest"
import { client } from "../support/server.js"
import {
  ALL_SCOPES,
  createMeeting,
  expectError,
  expectList,
  expectValidation,
  MEMBER_SCOPES,
  TIMESTAMP,
  unknownId,
  useServer,
  UUID,
  workspace
} from "./fixtures.js"

const server = useServer()

const SETTINGS_FIELDS = ["created_at", "default_detail_level", "default_template_id", "id", "name", "plan", "updated_at"]
const MEMBER_FIELDS = ["created_at", "email", "id", "name", "role", "updated_at", "workspace_id"]
const API_KEY_FIELDS = ["created_at", "id", "name", "scopes", "workspace_id"]

/** The built-in templates (meetings/Templates.ts): Retrospective is `detailed`, Stand-up `brief`. */
const RETROSPECTIVE = "6a1f3c1e-0b6e-4a53-9d1e-1c5d8f0a0003"
const STAND_UP = "6a1f3c1e-0b6e-4a53-9d1e-1c5d8f0a0005"

/** A PRO workspace with an OWNER (every scope). */
const owned = async () => {
  const ws = await workspace(server.url)
  const owner = await ws.addUser({ role: "OWNER" })
  return { ws, owner }
}

describe("GET and PATCH /v1/workspace", () => {
  it("answers the settings, and PATCH changes only what it names", async () => {
    const { owner, ws } = await owned()
    const got = await owner.api.get("/v1/workspace")
    expect(got.status).toBe(200)
    expect(Object.keys(got.body).sort()).toEqual(SETTINGS_FIELDS)
    expect(got.body).toMatchObject({ id: ws.workspaceId, plan: "PRO", default_detail_level: "standard", default_template_id: null })
    expect(got.body.created_at).toMatch(TIMESTAMP)

    const renamed = await owner.api.patch("/v1/workspace", { name: "Renamed" })
    expect(renamed.status).toBe(200)
    expect(renamed.body).toMatchObject({ name: "Renamed", default_detail_level: "standard", default_template_id: null, plan: "PRO" })
    expect(Date.parse(renamed.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(got.body.updated_at))

    const defaults = await owner.api.patch("/v1/workspace", { default_detail_level: "brief", default_template_id: RETROSPECTIVE })
    expect(defaults.body).toMatchObject({ name: "Renamed", default_detail_level: "brief", default_template_id: RETROSPECTIVE })
    expect((await owner.api.get("/v1/workspace")).body).toEqual(defaults.body)

    const cleared = await owner.api.patch("/v1/workspace", { default_template_id: null })
    expect(cleared.body).toMatchObject({ default_detail_level: "brief", default_template_id: null })
  })

  it("refuses an unknown template (404), bad values and unknown fields, the plan included (400), and changes nothing", async () => {
    const { owner } = await owned()
    const before = (await owner.api.get("/v1/workspace")).body
    expectError(await owner.api.patch("/v1/workspace", { default_template_id: unknownId() }), 404, "not_found")
    expectValidation(await owner.api.patch("/v1/workspace", { default_template_id: "retro" }), "default_template_id")
    expectValidation(await owner.api.patch("/v1/workspace", { default_detail_level: "verbose" }), "default_detail_level")
    expectValidation(await owner.api.patch("/v1/workspace", { name: "" }), "name")
    expectValidation(await owner.api.patch("/v1/workspace", { plan: "ENTERPRISE" }), "plan")
    expect((await owner.api.get("/v1/workspace")).body).toEqual(before)
  })

  it("gives a new meeting the workspace's default template and detail level when the request names none", async () => {
    const { owner } = await owned()
    await owner.api.patch("/v1/workspace", { default_detail_level: "brief" })
    expect(await createMeeting(owner.api)).toMatchObject({ detail_level: "brief", template_id: null })
    expect(await createMeeting(owner.api, { detail_level: "detailed" })).toMatchObject({ detail_level: "detailed" })

    await owner.api.patch("/v1/workspace", { default_template_id: RETROSPECTIVE })
    const templated = await createMeeting(owner.api)
    // The template's own detail level comes before the workspace's default; the agenda is the template's.
    expect(templated).toMatchObject({ template_id: RETROSPECTIVE, detail_level: "detailed" })
    expect((await owner.api.get(`/v1/agenda-items?meeting_id=${templated.id}`)).body.total).toBe(6)
    expect(await createMeeting(owner.api, { template_id: STAND_UP })).toMatchObject({ template_id: STAND_UP, detail_level: "brief" })
    expect(await createMeeting(owner.api, { detail_level: "standard" })).toMatchObject({ template_id: RETROSPECTIVE, detail_level: "standard" })
    // A meeting that existed keeps what it had.
    expect((await owner.api.get(`/v1/meetings/${templated.id}`)).body.detail_level).toBe("detailed")
  })
})

describe("members", () => {
  it("lists the workspace's users (newest first, paginated), never another workspace's", async () => {
    const { owner, ws } = await owned()
    const admin = await ws.addUser({ role: "ADMIN", name: "Ada" })
    const plain = await ws.addUser({ role: "MEMBER", name: "Max" })
    await owned()
    const listed = await admin.api.get("/v1/workspace/members")
    expectList(listed, { total: 3 })
    expect(listed.body.items.map((m: { id: string }) => m.id)).toEqual([plain.userId, admin.userId, owner.userId])
    expect(Object.keys(listed.body.items[0]).sort()).toEqual(MEMBER_FIELDS)
    expect(listed.body.items[0]).toMatchObject({ id: plain.userId, workspace_id: ws.workspaceId, email: plain.email, name: "Max", role: "MEMBER" })
    expect(listed.body.items[0].created_at).toMatch(TIMESTAMP)
    const page = await owner.api.get("/v1/workspace/members?limit=1&offset=2")
    expectList(page, { total: 3, limit: 1, offset: 2 })
    expect(page.body.items.map((m: { id: string }) => m.id)).toEqual([owner.userId])
  })

  it("changes a role, which takes the workspace scopes from the member's tokens at once", async () => {
    const { owner, ws } = await owned()
    const admin = await ws.addUser({ role: "ADMIN" })
    expect((await admin.api.get("/v1/workspace")).status).toBe(200)
    const demoted = await owner.api.patch(`/v1/workspace/members/${admin.userId}`, { role: "MEMBER" })
    expect(demoted.status).toBe(200)
    expect(Object.keys(demoted.body).sort()).toEqual(MEMBER_FIELDS)
    expect(demoted.body).toMatchObject({ id: admin.userId, role: "MEMBER" })
    expectError(await admin.api.get("/v1/workspace"), 403, "insufficient_scope")
    // Setting the role a member has is a no-op.
    expect((await owner.api.patch(`/v1/workspace/members/${admin.userId}`, { role: "MEMBER" })).body.role).toBe("MEMBER")
    const promoted = await owner.api.patch(`/v1/workspace/members/${admin.userId}`, { role: "OWNER" })
    expect(promoted.body.role).toBe("OWNER")
    expect((await admin.api.get("/v1/workspace")).status).toBe(200)
  })

  it("refuses a bad role or an unknown field (400) and an unknown or foreign user (404)", async () => {
    const { owner, ws } = await owned()
    const plain = await ws.addUser()
    const other = await owned()
    expectValidation(await owner.api.patch(`/v1/workspace/members/${plain.userId}`, { role: "KING" }), "role")
    expectValidation(await owner.api.patch(`/v1/workspace/members/${plain.userId}`, {}), "role")
    expectValidation(await owner.api.patch(`/v1/workspace/members/${plain.userId}`, { role: "ADMIN", name: "x" }), "name")
    expectValidation(await owner.api.patch("/v1/workspace/members/not-a-uuid", { role: "ADMIN" }), "userID")
    for (const id of [unknownId(), other.owner.userId]) {
      expectError(await owner.api.patch(`/v1/workspace/members/${id}`, { role: "MEMBER" }), 404, "not_found")
      expectError(await owner.api.delete(`/v1/workspace/members/${id}`), 404, "not_found")
    }
    expect((await other.owner.api.get("/v1/workspace/members")).body.items[0].role).toBe("OWNER")
  })

  it("never leaves the workspace without an OWNER: demoting or removing the last one is 409 conflict", async () => {
    const { owner, ws } = await owned()
    const key = await ws.addApiKey()
    for (const api of [owner.api, key.api]) {
      expectError(await api.patch(`/v1/workspace/members/${owner.userId}`, { role: "ADMIN" }), 409, "conflict")
      expectError(await api.delete(`/v1/workspace/members/${owner.userId}`), 409, "conflict")
    }
    const second = await ws.addUser({ role: "OWNER" })
    const stepDown = await owner.api.patch(`/v1/workspace/members/${owner.userId}`, { role: "ADMIN" })
    expect(stepDown.body.role).toBe("ADMIN")
    expectError(await second.api.delete(`/v1/workspace/members/${second.userId}`), 409, "conflict")
    const members = (await second.api.get("/v1/workspace/members")).body.items as ReadonlyArray<{ role: string }>
    expect(members.filter((m) => m.role === "OWNER")).toHaveLength(1)
  })

  it("lets only an OWNER (or an API key) grant, change or take the OWNER role; an ADMIN manages MEMBERs and ADMINs", async () => {
    const { owner, ws } = await owned()
    const admin = await ws.addUser({ role: "ADMIN" })
    const plain = await ws.addUser()
    expectError(await admin.api.patch(`/v1/workspace/members/${plain.userId}`, { role: "OWNER" }), 403, "insufficient_scope")
    expectError(await admin.api.patch(`/v1/workspace/members/${admin.userId}`, { role: "OWNER" }), 403, "insufficient_scope")
    expectError(await admin.api.patch(`/v1/workspace/members/${owner.userId}`, { role: "MEMBER" }), 403, "insufficient_scope")
    expectError(await admin.api.delete(`/v1/workspace/members/${owner.userId}`), 403, "insufficient_scope")
    expect((await admin.api.patch(`/v1/workspace/members/${plain.userId}`, { role: "ADMIN" })).body.role).toBe("ADMIN")
    expect((await admin.api.patch(`/v1/workspace/members/${plain.userId}`, { role: "MEMBER" })).body.role).toBe("MEMBER")
    const key = await ws.addApiKey()
    expect((await key.api.patch(`/v1/workspace/members/${plain.userId}`, { role: "OWNER" })).body.role).toBe("OWNER")
    expect((await key.api.patch(`/v1/workspace/members/${plain.userId}`, { role: "MEMBER" })).body.role).toBe("MEMBER")
  })

  it("removes a member with the operator's cascade: 204, their tokens answer 401, their meetings stay; again 404", async () => {
    const { owner, ws } = await owned()
    const admin = await ws.addUser({ role: "ADMIN" })
    const leaving = await ws.addUser()
    const meeting = await createMeeting(leaving.api, { title: "Left behind" })
    const removed = await admin.api.delete(`/v1/workspace/members/${leaving.userId}`)
    expect(removed.status).toBe(204)
    expect(removed.text).toBe("")
    expectError(await leaving.api.get("/v1/meetings"), 401, "invalid_token")
    expect((await owner.api.get(`/v1/meetings/${meeting.id}`)).body).toMatchObject({ id: meeting.id, owner_user_id: null })
    expectError(await admin.api.delete(`/v1/workspace/members/${leaving.userId}`), 404, "not_found")
    expect((await owner.api.get("/v1/workspace/members")).body.total).toBe(2)
  })
})

describe("API keys", () => {
  it("lists the live keys without the secret, and deletes one softly: 204, then 401 with it, 404 again", async () => {
    const { owner, ws } = await owned()
    const first = await ws.addApiKey()
    const second = await ws.addApiKey()
    const listed = await owner.api.get("/v1/workspace/api-keys")
    expectList(listed, { total: 2 })
    expect(listed.body.items.map((k: { id: string }) => k.id)).toEqual([second.id, first.id])
    expect(Object.keys(listed.body.items[0]).sort()).toEqual(API_KEY_FIELDS)
    expect(listed.body.items[0]).toMatchObject({ id: second.id, workspace_id: ws.workspaceId, scopes: [...ALL_SCOPES] })
    expect(listed.body.items[0].id).toMatch(UUID)
    expect(listed.text).not.toContain(first.key)
    expect(listed.text).not.toContain(second.key)

    const deleted = await owner.api.delete(`/v1/workspace/api-keys/${first.id}`)
    expect(deleted.status).toBe(204)
    expect(deleted.text).toBe("")
    expectError(await first.api.get("/v1/meetings"), 401, "invalid_token")
    expectError(await owner.api.delete(`/v1/workspace/api-keys/${first.id}`), 404, "not_found")
    expectList(await owner.api.get("/v1/workspace/api-keys"), { total: 1 })
    // A key may delete itself: its next request is 401.
    expect((await second.api.delete(`/v1/workspace/api-keys/${second.id}`)).status).toBe(204)
    expectError(await second.api.get("/v1/workspace/api-keys"), 401, "invalid_token")
  })

  it("answers 404 for another workspace's key, an unknown id and a user's token id, and changes nothing", async () => {
    const { owner, ws } = await owned()
    const other = await owned()
    const foreign = await other.ws.addApiKey()
    for (const id of [foreign.id, unknownId(), owner.tokenId]) {
      expectError(await owner.api.delete(`/v1/workspace/api-keys/${id}`), 404, "not_found")
    }
    expect((await foreign.api.get("/v1/workspace")).status).toBe(200)
    expect((await owner.api.get("/v1/me")).status).toBe(200)
    expectValidation(await owner.api.delete("/v1/workspace/api-keys/not-a-uuid"), "id")
    expect(ws.workspaceId).not.toBe(other.ws.workspaceId)
  })
})

describe("access", () => {
  const reads = ["/v1/workspace", "/v1/workspace/members", "/v1/workspace/api-keys"]
  const writes = (id: string): ReadonlyArray<readonly [string, string, unknown?]> => [
    ["PATCH", "/v1/workspace", { name: "Nope" }],
    ["PATCH", `/v1/workspace/members/${id}`, { role: "ADMIN" }],
    ["DELETE", `/v1/workspace/members/${id}`],
    ["DELETE", `/v1/workspace/api-keys/${id}`]
  ]

  it("answers 403 insufficient_scope to a MEMBER, whatever the token, and to tokens without the workspace scope", async () => {
    const { owner, ws } = await owned()
    const plain = await ws.addUser({ role: "MEMBER" })
    const readOnly = await ws.addUser({ role: "OWNER", scopes: [...MEMBER_SCOPES, "workspace:read"] })
    const writeOnly = await ws.addUser({ role: "ADMIN", scopes: [...MEMBER_SCOPES, "workspace:write"] })
    for (const path of reads) {
      expectError(await plain.api.get(path), 403, "insufficient_scope")
      expectError(await writeOnly.api.get(path), 403, "insufficient_scope")
      expect((await readOnly.api.get(path)).status).toBe(200)
    }
    for (const [method, path, body] of writes(owner.userId)) {
      expectError(await plain.api.call(method, path, body), 403, "insufficient_scope")
      expectError(await readOnly.api.call(method, path, body), 403, "insufficient_scope")
    }
    expect((await owner.api.get("/v1/workspace")).body.name).not.toBe("Nope")
  })

  it("answers 401 without a valid token", async () => {
    for (const path of reads) expectError(await client(server.url).get(path), 401, "unauthorized")
    expectError(await client(server.url, "svc_pat_v1_" + "A".repeat(43)).patch("/v1/workspace", { name: "x" }), 401, "invalid_token")
  })
})
