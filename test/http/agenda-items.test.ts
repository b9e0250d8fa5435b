/** Agenda items: CRUD, ordering by decimal sequence, ended meetings, private talking points, presenters. */
import { describe, expect, it } from "vitest"
import {
  addParticipant,
  ageOf,
  createAgendaItem,
  createMeeting,
  expectError,
  expectList,
  expectValidation,
  member,
  type Response,
  sleep,
  TIMESTAMP,
  useServer,
  UUID
} from "./fixtures.js"

const server = useServer()

const DOCUMENTED_FIELDS = [
  "id",
  "meeting_id",
  "title",
  "description",
  "item_type",
  "sequence",
  "talking_points",
  "presenters",
  "presenter_details",
  "created_at",
  "updated_at"
]

const titles = (response: Response) => response.body.items.map((item: { title: string }) => item.title)

describe("POST /v1/agenda-items", () => {
  it("creates an item: 201 with every documented field", async () => {
    const { ws, api } = await member(server.url)
    const meeting = await createMeeting(api)
    const response = await api.post("/v1/agenda-items", {
      meeting_id: meeting.id,
      title: "  Roadmap  ",
      description: "Where we go next",
      item_type: "QUESTIONS_TO_ANSWER",
      sequence: "4.25",
      talking_points: ["Q3 scope", "Hiring"],
      presenters: []
    })
    expect(response.status).toBe(201)
    for (const field of DOCUMENTED_FIELDS) expect(response.body).toHaveProperty(field)
    expect(response.body).toMatchObject({
      meeting_id: meeting.id,
      title: "Roadmap",
      description: "Where we go next",
      item_type: "QUESTIONS_TO_ANSWER",
      sequence: "4.25",
      talking_points: ["Q3 scope", "Hiring"],
      presenters: [],
      presenter_details: []
    })
    if ("workspace_id" in response.body) expect(response.body.workspace_id).toBe(ws.workspaceId)
    expect(response.body.id).toMatch(UUID)
    expect(response.body.created_at).toMatch(TIMESTAMP)
    expect(response.body.updated_at).toMatch(TIMESTAMP)
    expect(ageOf(response.body.created_at)).toBeLessThan(60_000)
  })

  it("defaults: item_type DISCUSSION, description null, no talking points or presenters, sequence 1 on an empty agenda", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    const item = await createAgendaItem(api, meeting.id, { title: "Opening" })
    expect(item).toMatchObject({
      item_type: "DISCUSSION",
      description: null,
      sequence: "1",
      talking_points: [],
      presenters: [],
      presenter_details: []
    })
  })

  it("accepts each of the four item types and answers 400 for another", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    for (const itemType of ["DISCUSSION", "QUESTIONS_TO_ANSWER", "BREAK", "ADJOURN"]) {
      expect((await createAgendaItem(api, meeting.id, { item_type: itemType })).item_type).toBe(itemType)
    }
    expectValidation(await api.post("/v1/agenda-items", { meeting_id: meeting.id, title: "x", item_type: "LUNCH" }), "item_type")
    expectValidation(await api.post("/v1/agenda-items", { meeting_id: meeting.id, title: "x", item_type: "discussion" }), "item_type")
  })

  it("answers 400 for a non-decimal sequence", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    for (const sequence of ["abc", "1.2.3", "1e3", "", " 1", "1,5", 3]) {
      expectValidation(await api.post("/v1/agenda-items", { meeting_id: meeting.id, title: "x", sequence }), "sequence")
    }
    expectList(await api.get(`/v1/agenda-items?meeting_id=${meeting.id}`), { total: 0 })
  })

  it("answers 400 for a missing title or meeting_id and a malformed meeting_id", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    expectValidation(await api.post("/v1/agenda-items", { meeting_id: meeting.id }), "title")
    expectValidation(await api.post("/v1/agenda-items", { meeting_id: meeting.id, title: "   " }), "title")
    expectValidation(await api.post("/v1/agenda-items", { title: "x" }), "meeting_id")
    expectValidation(await api.post("/v1/agenda-items", { meeting_id: "m-1", title: "x" }), "meeting_id")
    expectValidation(await api.post("/v1/agenda-items", { meeting_id: meeting.id, title: "x", talking_points: "one" }), "talking_points")
  })

  it("answers 404 for an unknown meeting", async () => {
    const { api } = await member(server.url)
    expectError(await api.post("/v1/agenda-items", { meeting_id: crypto.randomUUID(), title: "x" }), 404, "not_found")
  })

  it("answers 409 conflict on an ended meeting, and accepts items on a scheduled, running or cancelled one", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    await createAgendaItem(api, meeting.id)
    expect((await api.patch(`/v1/meetings/${meeting.id}`, { status: "ended" })).status).toBe(200)
    expectError(await api.post("/v1/agenda-items", { meeting_id: meeting.id, title: "late" }), 409, "conflict")
    expectList(await api.get(`/v1/agenda-items?meeting_id=${meeting.id}`), { total: 1 })

    const running = await createMeeting(api, { is_instant: true })
    expect((await api.post("/v1/agenda-items", { meeting_id: running.id, title: "live" })).status).toBe(201)
    const cancelled = await createMeeting(api)
    await api.patch(`/v1/meetings/${cancelled.id}`, { status: "cancelled" })
    expect((await api.post("/v1/agenda-items", { meeting_id: cancelled.id, title: "someday" })).status).toBe(201)
  })
})

describe("ordering by sequence", () => {
  it("appends after the last item when sequence is omitted, and orders numerically", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    const one = await createAgendaItem(api, meeting.id, { title: "one" })
    const two = await createAgendaItem(api, meeting.id, { title: "two" })
    expect([one.sequence, two.sequence]).toEqual(["1", "2"])
    const between = await createAgendaItem(api, meeting.id, { title: "one and a half", sequence: "1.5" })
    expect(between.sequence).toBe("1.5")
    const three = await createAgendaItem(api, meeting.id, { title: "three" })
    expect(three.sequence).toBe("3")

    const list = await api.get(`/v1/agenda-items?meeting_id=${meeting.id}`)
    expectList(list, { total: 4 })
    expect(titles(list)).toEqual(["one", "one and a half", "two", "three"])
    expect(list.body.items.map((i: { sequence: string }) => i.sequence)).toEqual(["1", "1.5", "2", "3"])
  })

  it("compares sequences as numbers, not strings, and normalises them", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    await createAgendaItem(api, meeting.id, { title: "ten", sequence: "10" })
    await createAgendaItem(api, meeting.id, { title: "nine", sequence: "9" })
    await createAgendaItem(api, meeting.id, { title: "two and a half", sequence: "2.50" })
    await createAgendaItem(api, meeting.id, { title: "minus one", sequence: "-1" })
    await createAgendaItem(api, meeting.id, { title: "two point oh five", sequence: "2.05" })
    const list = await api.get(`/v1/agenda-items?meeting_id=${meeting.id}`)
    expect(titles(list)).toEqual(["minus one", "two point oh five", "two and a half", "nine", "ten"])
    expect(list.body.items.map((i: { sequence: string }) => i.sequence)).toEqual(["-1", "2.05", "2.5", "9", "10"])
    const next = await createAgendaItem(api, meeting.id, { title: "eleven" })
    expect(next.sequence).toBe("11")
  })

  it("appends after a fractional last item at the next whole number", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    await createAgendaItem(api, meeting.id, { sequence: "7.25" })
    expect((await createAgendaItem(api, meeting.id)).sequence).toBe("8")
  })

  it("moves an item with PATCH sequence; an omitted sequence keeps it in place", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    const a = await createAgendaItem(api, meeting.id, { title: "a" })
    await createAgendaItem(api, meeting.id, { title: "b" })
    await createAgendaItem(api, meeting.id, { title: "c" })
    const moved = await api.patch(`/v1/agenda-items/${a.id}`, { sequence: "2.5" })
    expect(moved.status).toBe(200)
    expect(moved.body.sequence).toBe("2.5")
    expect(titles(await api.get(`/v1/agenda-items?meeting_id=${meeting.id}`))).toEqual(["b", "a", "c"])
    await api.patch(`/v1/agenda-items/${a.id}`, { title: "a2" })
    expect(titles(await api.get(`/v1/agenda-items?meeting_id=${meeting.id}`))).toEqual(["b", "a2", "c"])
    expectValidation(await api.patch(`/v1/agenda-items/${a.id}`, { sequence: "first" }), "sequence")
  })
})

describe("sequence range", () => {
  it("keeps appending after the largest sequence by renumbering the agenda 1, 2, ... in order", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    const first = await createAgendaItem(api, meeting.id, { title: "first", sequence: "5" })
    const last = await createAgendaItem(api, meeting.id, { title: "last", sequence: "999999999999" })
    const appended = await createAgendaItem(api, meeting.id, { title: "appended" })
    expect(appended.sequence).toBe("3")
    const listed = await api.get(`/v1/agenda-items?meeting_id=${meeting.id}`)
    expect(listed.body.items.map((item: { title: string; sequence: string }) => [item.title, item.sequence])).toEqual([
      ["first", "1"],
      ["last", "2"],
      ["appended", "3"]
    ])
    expect(listed.body.items.map((item: { id: string }) => item.id)).toEqual([first.id, last.id, appended.id])
  })

  it("renumbers after a fractional sequence at the top of the range too, and then appends as usual", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    const item = await createAgendaItem(api, meeting.id, { sequence: "1" })
    expect((await api.patch(`/v1/agenda-items/${item.id}`, { sequence: "999999999999.5" })).status).toBe(200)
    expect((await createAgendaItem(api, meeting.id)).sequence).toBe("2")
    expect((await createAgendaItem(api, meeting.id)).sequence).toBe("3")
  })

  it("answers 400 for a sequence outside the range, on create and on PATCH", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    expectValidation(await api.post("/v1/agenda-items", { meeting_id: meeting.id, title: "t", sequence: "1000000000000" }), "sequence")
    expectValidation(await api.post("/v1/agenda-items", { meeting_id: meeting.id, title: "t", sequence: "1.0000001" }), "sequence")
    const item = await createAgendaItem(api, meeting.id)
    expectValidation(await api.patch(`/v1/agenda-items/${item.id}`, { sequence: "-1000000000000" }), "sequence")
  })
})

describe("GET /v1/agenda-items", () => {
  it("filters by meeting_id and lists the caller's meetings' items without it", async () => {
    const { api } = await member(server.url)
    const m1 = await createMeeting(api, { title: "m1" })
    const m2 = await createMeeting(api, { title: "m2" })
    const a = await createAgendaItem(api, m1.id, { title: "a" })
    const b = await createAgendaItem(api, m2.id, { title: "b" })
    const c = await createAgendaItem(api, m1.id, { title: "c" })
    const first = await api.get(`/v1/agenda-items?meeting_id=${m1.id}`)
    expectList(first, { total: 2 })
    expect(first.body.items).toEqual([a, c])
    const second = await api.get(`/v1/agenda-items?meeting_id=${m2.id}`)
    expect(second.body.items).toEqual([b])
    const all = await api.get("/v1/agenda-items")
    expectList(all, { total: 3 })
    expect(all.body.items.map((i: { id: string }) => i.id).sort()).toEqual([a.id, b.id, c.id].sort())
    expectError(await api.get(`/v1/agenda-items?meeting_id=${crypto.randomUUID()}`), 404, "not_found")
    expectValidation(await api.get("/v1/agenda-items?meeting_id=abc"), "meeting_id")
  })
})

describe("GET, PATCH, DELETE /v1/agenda-items/{id}", () => {
  it("gets an item as created", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    const item = await createAgendaItem(api, meeting.id, { description: "d", talking_points: ["p"] })
    const got = await api.get(`/v1/agenda-items/${item.id}`)
    expect(got.status).toBe(200)
    expect(got.body).toEqual(item)
    expectError(await api.get(`/v1/agenda-items/${crypto.randomUUID()}`), 404, "not_found")
    expectValidation(await api.get("/v1/agenda-items/nope"), "id")
  })

  it("changes only the given fields", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    const item = await createAgendaItem(api, meeting.id, { title: "Old", description: "keep me", item_type: "BREAK", talking_points: ["tp"] })
    await sleep(5)
    const retitled = await api.patch(`/v1/agenda-items/${item.id}`, { title: "New" })
    expect(retitled.status).toBe(200)
    expect(retitled.body).toEqual({ ...item, title: "New", updated_at: retitled.body.updated_at })
    expect(Date.parse(retitled.body.updated_at)).toBeGreaterThan(Date.parse(item.updated_at))

    const changed = await api.patch(`/v1/agenda-items/${item.id}`, { description: null, item_type: "ADJOURN", talking_points: [] })
    expect(changed.status).toBe(200)
    expect(changed.body).toMatchObject({ title: "New", description: null, item_type: "ADJOURN", talking_points: [], sequence: item.sequence })
    expect((await api.get(`/v1/agenda-items/${item.id}`)).body).toEqual(changed.body)
    expectValidation(await api.patch(`/v1/agenda-items/${item.id}`, { item_type: "NAP" }), "item_type")
    expectValidation(await api.patch(`/v1/agenda-items/${item.id}`, { title: "" }), "title")
    expectError(await api.patch(`/v1/agenda-items/${crypto.randomUUID()}`, { title: "x" }), 404, "not_found")
  })

  it("deletes an item: 204 with no body, then 404", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    const item = await createAgendaItem(api, meeting.id)
    const other = await createAgendaItem(api, meeting.id)
    const response = await api.delete(`/v1/agenda-items/${item.id}`)
    expect(response.status).toBe(204)
    expect(response.text).toBe("")
    expectError(await api.get(`/v1/agenda-items/${item.id}`), 404, "not_found")
    expectError(await api.patch(`/v1/agenda-items/${item.id}`, { title: "x" }), 404, "not_found")
    expectError(await api.delete(`/v1/agenda-items/${item.id}`), 404, "not_found")
    expect((await api.get(`/v1/agenda-items?meeting_id=${meeting.id}`)).body.items.map((i: { id: string }) => i.id)).toEqual([other.id])
  })
})

describe("talking points", () => {
  it("are private to each caller: another user sees [] and keeps their own", async () => {
    const { ws, api } = await member(server.url)
    const editor = await ws.addUser()
    const admin = await ws.addUser({ role: "ADMIN" })
    const key = await ws.addApiKey()
    const meeting = await createMeeting(api)
    await addParticipant(api, meeting.id, editor.userId, "EDITOR")
    const item = await createAgendaItem(api, meeting.id, { talking_points: ["my secret point", "another"] })
    expect(item.talking_points).toEqual(["my secret point", "another"])

    for (const other of [editor.api, admin.api, key.api]) {
      const seen = await other.get(`/v1/agenda-items/${item.id}`)
      expect(seen.status).toBe(200)
      expect(seen.body.talking_points).toEqual([])
      expect(seen.text).not.toContain("my secret point")
      const listed = await other.get(`/v1/agenda-items?meeting_id=${meeting.id}`)
      expect(listed.body.items[0].talking_points).toEqual([])
    }

    const own = await editor.api.patch(`/v1/agenda-items/${item.id}`, { talking_points: ["editor's point"] })
    expect(own.status).toBe(200)
    expect(own.body.talking_points).toEqual(["editor's point"])
    expect((await editor.api.get(`/v1/agenda-items/${item.id}`)).body.talking_points).toEqual(["editor's point"])
    expect((await api.get(`/v1/agenda-items/${item.id}`)).body.talking_points).toEqual(["my secret point", "another"])
    expect((await api.get(`/v1/agenda-items?meeting_id=${meeting.id}`)).body.items[0].talking_points).toEqual(["my secret point", "another"])
  })
})

describe("presenters", () => {
  it("answers presenter_details with each presenter's name and e-mail", async () => {
    const { ws, user, api } = await member(server.url)
    const colleague = await ws.addUser({ name: "Katherine Johnson" })
    const meeting = await createMeeting(api)
    const item = await createAgendaItem(api, meeting.id, { presenters: [colleague.userId, user.userId] })
    expect(item.presenters).toEqual([colleague.userId, user.userId])
    expect(item.presenter_details).toEqual([
      { user_id: colleague.userId, name: "Katherine Johnson", email: colleague.email },
      { user_id: user.userId, name: user.name, email: user.email }
    ])
    const patched = await api.patch(`/v1/agenda-items/${item.id}`, { presenters: [user.userId] })
    expect(patched.body.presenters).toEqual([user.userId])
    expect(patched.body.presenter_details).toEqual([{ user_id: user.userId, name: user.name, email: user.email }])
    expectValidation(await api.patch(`/v1/agenda-items/${item.id}`, { presenters: ["someone"] }), "presenters")
  })

  it("answers 400 naming the entry for a presenter who is no user of the workspace, and changes nothing", async () => {
    const { user, api } = await member(server.url)
    const stranger = (await member(server.url)).user
    const meeting = await createMeeting(api)
    const foreign = await api.post("/v1/agenda-items", { meeting_id: meeting.id, title: "t", presenters: [user.userId, stranger.userId] })
    expectValidation(foreign, "presenters[1]")
    expect(foreign.body.error).not.toContain("Katherine")
    const nobody = await api.post("/v1/agenda-items", { meeting_id: meeting.id, title: "t", presenters: [crypto.randomUUID()] })
    expectValidation(nobody, "presenters[0]")
    expect((await api.get(`/v1/agenda-items?meeting_id=${meeting.id}`)).body.total).toBe(0)
    const item = await createAgendaItem(api, meeting.id, { presenters: [user.userId] })
    expectValidation(await api.patch(`/v1/agenda-items/${item.id}`, { presenters: [stranger.userId] }), "presenters[0]")
    expect((await api.get(`/v1/agenda-items/${item.id}`)).body.presenters).toEqual([user.userId])
  })
})
