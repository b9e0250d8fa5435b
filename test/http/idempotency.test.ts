/** Idempotency-Key on the four eligible creates (first-party-api.md, behaviour rule 1 and the Errors table). */
import { describe, expect, it } from "vitest"
import { client, type Client } from "../support/server.js"
import { createMeeting, expectError, expectList, member, useServer } from "./fixtures.js"

const server = useServer()

const key = () => `key-${crypto.randomUUID()}`

/** One eligible create: how to call it and how to count what it made. */
interface Route {
  readonly name: string
  readonly setup: (api: Client) => Promise<{ readonly path: string; readonly body: unknown; readonly otherBody: unknown; readonly count: () => Promise<number> }>
}

const routes: ReadonlyArray<Route> = [
  {
    name: "POST /v1/meetings",
    setup: async (api) => ({
      path: "/v1/meetings",
      body: { title: "Keyed meeting", start_time: "2030-01-01T10:00:00Z" },
      otherBody: { title: "Another meeting", start_time: "2030-01-01T10:00:00Z" },
      count: async () => (await api.get("/v1/meetings")).body.total
    })
  },
  {
    name: "POST /v1/action-items",
    setup: async (api) => {
      const meeting = await createMeeting(api)
      return {
        path: "/v1/action-items",
        body: { meeting_id: meeting.id, title: "Keyed action", due_date: "2030-01-31" },
        otherBody: { meeting_id: meeting.id, title: "Keyed action", due_date: "2030-02-01" },
        count: async () => (await api.get(`/v1/action-items?meeting_id=${meeting.id}`)).body.total
      }
    }
  },
  {
    name: "POST /v1/agenda-items",
    setup: async (api) => {
      const meeting = await createMeeting(api)
      return {
        path: "/v1/agenda-items",
        body: { meeting_id: meeting.id, title: "Keyed topic", talking_points: ["a"] },
        otherBody: { meeting_id: meeting.id, title: "Keyed topic", talking_points: ["b"] },
        count: async () => (await api.get(`/v1/agenda-items?meeting_id=${meeting.id}`)).body.total
      }
    }
  },
  {
    name: "POST /v1/meetings/{id}/participants",
    setup: async (api) => {
      const meeting = await createMeeting(api)
      return {
        path: `/v1/meetings/${meeting.id}/participants`,
        body: { participants: [{ guest_email: "keyed@example.com", role: "VIEWER" }] },
        otherBody: { participants: [{ guest_email: "other@example.com", role: "VIEWER" }] },
        count: async () => (await api.get(`/v1/meetings/${meeting.id}/participants`)).body.total
      }
    }
  }
]

describe.each(routes)("Idempotency-Key on $name", (route) => {
  it("replays an identical repeat: same status, byte-identical body, Idempotent-Replayed: true, no second resource", async () => {
    const { api } = await member(server.url)
    const { body, count, path } = await route.setup(api)
    const before = await count()
    const k = key()
    const first = await api.post(path, body, { "idempotency-key": k })
    expect(first.status).toBe(201)
    expect(first.headers.get("idempotent-replayed")).toBeNull()
    expect(first.headers.get("content-type")).toContain("application/json")
    const second = await api.post(path, body, { "idempotency-key": k })
    expect(second.status).toBe(201)
    expect(second.headers.get("idempotent-replayed")).toBe("true")
    expect(second.headers.get("content-type")).toContain("application/json")
    expect(second.text).toBe(first.text)
    expect(second.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"))
    const third = await api.post(path, body, { "idempotency-key": k })
    expect(third.text).toBe(first.text)
    expect(await count()).toBe(before + 1)
  })

  it("answers the same key with a different body with 422 idempotency_key_reuse", async () => {
    const { api } = await member(server.url)
    const { body, count, otherBody, path } = await route.setup(api)
    const k = key()
    expect((await api.post(path, body, { "idempotency-key": k })).status).toBe(201)
    const before = await count()
    expectError(await api.post(path, otherBody, { "idempotency-key": k }), 422, "idempotency_key_reuse")
    expect(await count()).toBe(before)
    // The original is still replayed.
    expect((await api.post(path, body, { "idempotency-key": k })).headers.get("idempotent-replayed")).toBe("true")
  })

  it("answers an invalid key with 400 idempotency_key_invalid and creates nothing", async () => {
    const { api } = await member(server.url)
    const { body, count, path } = await route.setup(api)
    const before = await count()
    for (const bad of ["", "   ", "x".repeat(256), "clé-ü", "tab\there"]) {
      expectError(await api.post(path, body, { "idempotency-key": bad }), 400, "idempotency_key_invalid")
    }
    expect(await count()).toBe(before)
    const longest = await api.post(path, body, { "idempotency-key": "k".repeat(255) })
    expect(longest.status).toBe(201)
  })

  it("keeps keys per credential: the same key from two tokens makes two resources", async () => {
    const { ws, api } = await member(server.url, { role: "OWNER" })
    const { body, count, path } = await route.setup(api)
    const issued = await api.post("/v1/user/tokens", {
      name: "second",
      scopes: ["meetings:read", "meetings:write", "action-items:read", "action-items:write"],
      expiry_days: 30
    })
    const sameUserOtherToken = client(server.url, issued.body.token)
    const admin = await ws.addUser({ role: "ADMIN" })
    const before = await count()
    const k = key()
    const a = await api.post(path, body, { "idempotency-key": k })
    const b = await sameUserOtherToken.post(path, body, { "idempotency-key": k })
    const c = await admin.api.post(path, body, { "idempotency-key": k })
    for (const response of [a, b, c]) {
      expect(response.status).toBe(201)
      expect(response.headers.get("idempotent-replayed")).toBeNull()
    }
    if (route.name === "POST /v1/meetings/{id}/participants") {
      // Adding the same guest again is a no-op for that entry: one guest, answered three times.
      expect(await count()).toBe(before + 1)
    } else {
      expect(new Set([a.body.id, b.body.id, c.body.id]).size).toBe(3)
      expect(await count()).toBe(before + 3)
    }
  })
})

describe("Idempotency-Key across routes and failures", () => {
  it("answers the same key on another route with 422 idempotency_key_reuse", async () => {
    const { api } = await member(server.url)
    const k = key()
    const meeting = await api.post("/v1/meetings", { title: "first" }, { "idempotency-key": k })
    expect(meeting.status).toBe(201)
    expectError(await api.post("/v1/action-items", { meeting_id: meeting.body.id, title: "x" }, { "idempotency-key": k }), 422, "idempotency_key_reuse")
    expectError(await api.post("/v1/agenda-items", { meeting_id: meeting.body.id, title: "x" }, { "idempotency-key": k }), 422, "idempotency_key_reuse")
    expectList(await api.get("/v1/action-items"), { total: 0 })
    expectList(await api.get("/v1/agenda-items"), { total: 0 })

    // Same body, another meeting's participants path.
    const other = await createMeeting(api)
    const body = { participants: [{ guest_email: "g@example.com", role: "VIEWER" }] }
    const k2 = key()
    expect((await api.post(`/v1/meetings/${meeting.body.id}/participants`, body, { "idempotency-key": k2 })).status).toBe(201)
    expectError(await api.post(`/v1/meetings/${other.id}/participants`, body, { "idempotency-key": k2 }), 422, "idempotency_key_reuse")
    expectList(await api.get(`/v1/meetings/${other.id}/participants`), { total: 1 })
  })

  it("releases the key of a request that failed, so a corrected retry succeeds", async () => {
    const { api } = await member(server.url)
    const k = key()
    const missing = crypto.randomUUID()
    expectError(await api.post("/v1/action-items", { meeting_id: missing, title: "x" }, { "idempotency-key": k }), 404, "not_found")
    // Repeating the failing request fails again (no replay of a failure).
    const again = await api.post("/v1/action-items", { meeting_id: missing, title: "x" }, { "idempotency-key": k })
    expectError(again, 404, "not_found")
    expect(again.headers.get("idempotent-replayed")).toBeNull()
    const meeting = await createMeeting(api)
    const fixed = await api.post("/v1/action-items", { meeting_id: meeting.id, title: "x" }, { "idempotency-key": k })
    expect(fixed.status).toBe(201)
    expect(fixed.headers.get("idempotent-replayed")).toBeNull()

    // A 409 (ended meeting) releases it too.
    const ended = await createMeeting(api)
    await api.patch(`/v1/meetings/${ended.id}`, { status: "ended" })
    const k2 = key()
    expectError(await api.post("/v1/agenda-items", { meeting_id: ended.id, title: "x" }, { "idempotency-key": k2 }), 409, "conflict")
    expect((await api.post("/v1/agenda-items", { meeting_id: meeting.id, title: "x" }, { "idempotency-key": k2 })).status).toBe(201)

    // A validation failure never claims it.
    const k3 = key()
    expectError(await api.post("/v1/meetings", { title: "" }, { "idempotency-key": k3 }), 400, "validation_error")
    expect((await api.post("/v1/meetings", { title: "fixed" }, { "idempotency-key": k3 })).status).toBe(201)
  })

  it("a 402 (FREE allowance used up) releases the key and consumes no allowance on replay", async () => {
    const { api } = await member(server.url, { plan: "FREE" })
    const k = key()
    const first = await api.post("/v1/meetings", { title: "m0" }, { "idempotency-key": k })
    expect(first.status).toBe(201)
    for (let i = 0; i < 5; i++) expect((await api.post("/v1/meetings", { title: "m0" }, { "idempotency-key": k })).text).toBe(first.text)
    for (let i = 1; i < 20; i++) expect((await api.post("/v1/meetings", { title: `m${i}` })).status).toBe(201)
    expect((await api.get("/v1/meetings")).body.total).toBe(20)
    const k2 = key()
    expect((await api.post("/v1/meetings", { title: "m20" }, { "idempotency-key": k2 })).status).toBe(402)
    expect((await api.post("/v1/meetings", { title: "m20" }, { "idempotency-key": k2 })).status).toBe(402)
  })

  it("without a key, two identical requests make two resources (the earlier behaviour)", async () => {
    const { api } = await member(server.url)
    expect((await api.post("/v1/meetings", { title: "same" })).status).toBe(201)
    expect((await api.post("/v1/meetings", { title: "same" })).status).toBe(201)
    expectList(await api.get("/v1/meetings"), { total: 2 })
  })

  it("does not honour a key on PATCH or on POST /v1/user/tokens: each request runs", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    const k = key()
    const a = await api.patch(`/v1/meetings/${meeting.id}`, { title: "A" }, { "idempotency-key": k })
    const b = await api.patch(`/v1/meetings/${meeting.id}`, { title: "B" }, { "idempotency-key": k })
    expect([a.status, b.status]).toEqual([200, 200])
    expect(b.headers.get("idempotent-replayed")).toBeNull()
    expect(b.body.title).toBe("B")
    const k2 = key()
    const body = { name: "t", scopes: ["meetings:read"], expiry_days: 30 }
    const t1 = await api.post("/v1/user/tokens", body, { "idempotency-key": k2 })
    const t2 = await api.post("/v1/user/tokens", body, { "idempotency-key": k2 })
    expect([t1.status, t2.status]).toEqual([201, 201])
    expect(t2.headers.get("idempotent-replayed")).toBeNull()
    expect(t1.body.token).not.toBe(t2.body.token)
  })

  it("treats key order and white space in the JSON body as the same body", async () => {
    const { api } = await member(server.url)
    const k = key()
    const first = await api.post("/v1/meetings", "{\"title\":\"Ordered\",\"detail_level\":\"brief\"}", { "idempotency-key": k })
    expect(first.status).toBe(201)
    const second = await api.post("/v1/meetings", "{ \"detail_level\": \"brief\",  \"title\": \"Ordered\" }", { "idempotency-key": k })
    expect(second.status).toBe(201)
    expect(second.headers.get("idempotent-replayed")).toBe("true")
    expect(second.text).toBe(first.text)
    expectList(await api.get("/v1/meetings"), { total: 1 })
  })
})

describe.each(routes)("concurrent duplicates on $name", (route) => {
  it("fires 10 identical keyed requests at once: one resource, each answer 201 or 409 idempotency_conflict with Retry-After", async () => {
    const { api } = await member(server.url)
    const { body, count, path } = await route.setup(api)
    const before = await count()
    const k = key()
    const responses = await Promise.all(Array.from({ length: 10 }, () => api.post(path, body, { "idempotency-key": k })))
    const created = responses.filter((r) => r.status === 201)
    const conflicts = responses.filter((r) => r.status === 409)
    expect(created.length + conflicts.length).toBe(10)
    expect(created.length).toBeGreaterThanOrEqual(1)
    expect(created.filter((r) => r.headers.get("idempotent-replayed") === null)).toHaveLength(1)
    for (const r of created) expect(r.text).toBe(created[0]!.text)
    for (const r of conflicts) {
      expectError(r, 409, "idempotency_conflict")
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0)
    }
    expect(await count()).toBe(before + 1)
    // Afterwards the key replays.
    const after = await api.post(path, body, { "idempotency-key": k })
    expect(after.status).toBe(201)
    expect(after.headers.get("idempotent-replayed")).toBe("true")
    expect(after.text).toBe(created[0]!.text)
  })
})
