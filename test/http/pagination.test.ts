/** limit/offset pagination exactly as the Limits table of first-party-api.md says, on every list endpoint. */
import { beforeAll, describe, expect, it } from "vitest"
import type { Client } from "../support/server.js"
import { createActionItem, createAgendaItem, createMeeting, expectList, expectValidation, member, sleep, useServer } from "./fixtures.js"

const server = useServer()

describe("pagination of GET /v1/meetings (25 meetings)", () => {
  let api: Client
  let newestFirst: Array<string>

  beforeAll(async () => {
    api = (await member(server.url)).api
    const created: Array<string> = []
    for (let i = 0; i < 25; i++) {
      created.push((await createMeeting(api, { title: `m${i}` })).id)
      await sleep(2)
    }
    newestFirst = created.reverse()
  })

  const page = async (query: string) => (await api.get(`/v1/meetings${query}`))

  it("defaults to limit 20, offset 0", async () => {
    const response = await page("")
    expectList(response, { total: 25, limit: 20, offset: 0 })
    expect(response.body.items.map((m: { id: string }) => m.id)).toEqual(newestFirst.slice(0, 20))
  })

  it("reads a missing or non-positive limit as 20", async () => {
    for (const query of ["?limit=0", "?limit=-5", "?limit=", "?limit=-100"]) {
      const response = await page(query)
      expectList(response, { total: 25, limit: 20, offset: 0 })
      expect(response.body.items).toHaveLength(20)
    }
  })

  it("caps a limit above 100 at 100", async () => {
    for (const query of ["?limit=500", "?limit=101", "?limit=100"]) {
      const response = await page(query)
      expectList(response, { total: 25, limit: 100, offset: 0 })
      expect(response.body.items).toHaveLength(25)
    }
  })

  it("applies a limit in range and an offset", async () => {
    const first = await page("?limit=10")
    expectList(first, { total: 25, limit: 10, offset: 0 })
    expect(first.body.items.map((m: { id: string }) => m.id)).toEqual(newestFirst.slice(0, 10))
    const second = await page("?limit=10&offset=10")
    expectList(second, { total: 25, limit: 10, offset: 10 })
    expect(second.body.items.map((m: { id: string }) => m.id)).toEqual(newestFirst.slice(10, 20))
    const last = await page("?limit=10&offset=20")
    expectList(last, { total: 25, limit: 10, offset: 20 })
    expect(last.body.items.map((m: { id: string }) => m.id)).toEqual(newestFirst.slice(20))
    const one = await page("?limit=1&offset=24")
    expect(one.body.items.map((m: { id: string }) => m.id)).toEqual([newestFirst[24]])
  })

  it("answers an offset past the end with empty items and the right total", async () => {
    for (const query of ["?offset=25", "?offset=1000", "?limit=5&offset=30"]) {
      const response = await page(query)
      expect(response.status).toBe(200)
      expect(response.body.items).toEqual([])
      expect(response.body.total).toBe(25)
      expect(response.body.offset).toBe(Number(new URLSearchParams(query.slice(1)).get("offset")))
    }
  })

  it("reads a negative offset as 0", async () => {
    const response = await page("?offset=-3&limit=5")
    expectList(response, { total: 25, limit: 5, offset: 0 })
    expect(response.body.items.map((m: { id: string }) => m.id)).toEqual(newestFirst.slice(0, 5))
  })

  it("answers a non-integer limit or offset with 400 validation_error naming the field", async () => {
    expectValidation(await page("?limit=abc"), "limit")
    expectValidation(await page("?limit=2.5"), "limit")
    expectValidation(await page("?offset=abc"), "offset")
    expectValidation(await page("?offset=1x"), "offset")
  })
})

describe("pagination of every other list endpoint", () => {
  it("applies and echoes limit and offset, clamps and defaults the same way", async () => {
    const { ws, api } = await member(server.url)
    const meeting = await createMeeting(api, { start_time: new Date(Date.now() + 3600_000).toISOString() })
    for (let i = 0; i < 3; i++) {
      await createAgendaItem(api, meeting.id)
      await createActionItem(api, meeting.id)
    }
    const colleague = await ws.addUser()
    await api.post(`/v1/meetings/${meeting.id}/participants`, {
      participants: [{ user_id: colleague.userId, role: "VIEWER" }, { guest_email: "g@example.com", role: "VIEWER" }]
    })
    await api.post("/v1/user/tokens", { name: "t2", scopes: ["meetings:read"], expiry_days: 30 })
    await api.post("/v1/user/tokens", { name: "t3", scopes: ["meetings:read"], expiry_days: 30 })

    const lists: Array<[string, number]> = [
      ["/v1/meetings/search", 1],
      ["/v1/meetings/upcoming", 1],
      [`/v1/agenda-items?meeting_id=${meeting.id}`, 3],
      ["/v1/agenda-items", 3],
      [`/v1/action-items?meeting_id=${meeting.id}`, 3],
      ["/v1/action-items", 3],
      [`/v1/meetings/${meeting.id}/participants`, 3],
      [`/v1/meetings/${meeting.id}/contacts`, 3],
      ["/v1/user/tokens", 3],
      ["/v1/meeting-templates", (await api.get("/v1/meeting-templates")).body.total]
    ]
    for (const [path, total] of lists) {
      const join = path.includes("?") ? "&" : "?"
      expectList(await api.get(path), { total, limit: 20, offset: 0 })
      expect((await api.get(path)).body.items).toHaveLength(Math.min(total, 20))
      const paged = await api.get(`${path}${join}limit=2&offset=1`)
      expectList(paged, { total, limit: 2, offset: 1 })
      expect(paged.body.items).toHaveLength(Math.max(0, Math.min(2, total - 1)))
      expectList(await api.get(`${path}${join}limit=0&offset=-1`), { total, limit: 20, offset: 0 })
      expectList(await api.get(`${path}${join}limit=1000`), { total, limit: 100, offset: 0 })
      const beyond = await api.get(`${path}${join}offset=50`)
      expectList(beyond, { total, limit: 20, offset: 50 })
      expect(beyond.body.items).toEqual([])
      expectValidation(await api.get(`${path}${join}limit=abc`), "limit")
    }
  })

  it("pages through the whole list without gaps or repeats", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    const created: Array<string> = []
    for (let i = 0; i < 7; i++) created.push((await createAgendaItem(api, meeting.id, { title: `i${i}` })).id)
    const seen: Array<string> = []
    for (let offset = 0; offset < 7; offset += 3) {
      seen.push(...(await api.get(`/v1/agenda-items?meeting_id=${meeting.id}&limit=3&offset=${offset}`)).body.items.map((i: { id: string }) => i.id))
    }
    expect(seen).toEqual(created)
  })
})
