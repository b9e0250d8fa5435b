/** Action items: CRUD, filters, every field, and the status machine of decisions.md. */
import { describe, expect, it } from "vitest"
import {
  addParticipant,
  ageOf,
  createActionItem,
  createAgendaItem,
  createMeeting,
  expectError,
  expectList,
  expectValidation,
  member,
  sleep,
  TIMESTAMP,
  useServer,
  UUID
} from "./fixtures.js"

const server = useServer()

const FIELDS = [
  "agenda_item_id",
  "assigned_to_user_id",
  "completed_at",
  "created_at",
  "description",
  "due_date",
  "id",
  "is_completed",
  "meeting_id",
  "status",
  "title",
  "updated_at"
]

const STATUSES = ["needs_review", "accepted", "in_progress", "blocked", "completed", "cancelled"] as const
type Status = typeof STATUSES[number]

/** decisions.md: the allowed status changes. */
const ALLOWED: Record<Status, ReadonlyArray<Status>> = {
  needs_review: ["accepted", "cancelled"],
  accepted: ["in_progress", "blocked", "completed", "cancelled"],
  in_progress: ["blocked", "completed", "cancelled"],
  blocked: ["in_progress", "cancelled"],
  completed: ["in_progress"],
  cancelled: ["needs_review"]
}

describe("POST /v1/action-items", () => {
  it("creates an item: 201 with every field", async () => {
    const { ws, api } = await member(server.url)
    const assignee = await ws.addUser()
    const meeting = await createMeeting(api)
    const agenda = await createAgendaItem(api, meeting.id)
    const response = await api.post("/v1/action-items", {
      meeting_id: meeting.id,
      title: "  Send the minutes  ",
      description: "To everyone who attended",
      due_date: "2030-02-28",
      status: "accepted",
      assigned_to_user_id: assignee.userId,
      agenda_item_id: agenda.id
    })
    expect(response.status).toBe(201)
    for (const field of FIELDS) expect(response.body).toHaveProperty(field)
    expect(response.body).toMatchObject({
      meeting_id: meeting.id,
      agenda_item_id: agenda.id,
      assigned_to_user_id: assignee.userId,
      title: "Send the minutes",
      description: "To everyone who attended",
      due_date: "2030-02-28",
      status: "accepted",
      is_completed: false,
      completed_at: null
    })
    if ("workspace_id" in response.body) expect(response.body.workspace_id).toBe(ws.workspaceId)
    expect(response.body.id).toMatch(UUID)
    expect(response.body.created_at).toMatch(TIMESTAMP)
    expect(response.body.updated_at).toMatch(TIMESTAMP)
    expect(ageOf(response.body.created_at)).toBeLessThan(60_000)
    expect((await api.get(`/v1/action-items/${response.body.id}`)).body).toEqual(response.body)
  })

  it("defaults: status needs_review, nothing assigned, no due date", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    const item = await createActionItem(api, meeting.id)
    expect(item).toMatchObject({
      status: "needs_review",
      is_completed: false,
      completed_at: null,
      due_date: null,
      description: null,
      assigned_to_user_id: null,
      agenda_item_id: null
    })
  })

  it("may start in any status; starting completed sets is_completed and completed_at", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    for (const status of STATUSES) {
      const item = await createActionItem(api, meeting.id, { status })
      expect(item.status).toBe(status)
      expect(item.is_completed).toBe(status === "completed")
      if (status === "completed") {
        expect(item.completed_at).toMatch(TIMESTAMP)
        expect(ageOf(item.completed_at)).toBeLessThan(10_000)
      } else {
        expect(item.completed_at).toBeNull()
      }
    }
  })

  it("answers 400 for an impossible or malformed due_date, a bad status, a missing title or meeting_id", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    for (const due_date of ["2026-02-30", "2030-13-01", "2030-1-5", "05/01/2030", "2030-01-01T00:00:00Z"]) {
      expectValidation(await api.post("/v1/action-items", { meeting_id: meeting.id, title: "x", due_date }), "due_date")
    }
    expect((await createActionItem(api, meeting.id, { due_date: "2028-02-29" })).due_date).toBe("2028-02-29")
    expectValidation(await api.post("/v1/action-items", { meeting_id: meeting.id, title: "x", status: "done" }), "status")
    expectValidation(await api.post("/v1/action-items", { meeting_id: meeting.id }), "title")
    expectValidation(await api.post("/v1/action-items", { title: "x" }), "meeting_id")
    expectValidation(await api.post("/v1/action-items", { meeting_id: meeting.id, title: "x", assigned_to_user_id: "bob" }), "assigned_to_user_id")
    expectList(await api.get(`/v1/action-items?meeting_id=${meeting.id}`), { total: 1 })
  })

  it("answers 404 for an unknown meeting_id", async () => {
    const { api } = await member(server.url)
    expectError(await api.post("/v1/action-items", { meeting_id: crypto.randomUUID(), title: "x" }), 404, "not_found")
    expectList(await api.get("/v1/action-items"), { total: 0 })
  })

  it("answers 404 for an unknown assignee or agenda item, 400 for an agenda item of another meeting", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    const other = await createMeeting(api)
    const foreignAgenda = await createAgendaItem(api, other.id)
    expectError(await api.post("/v1/action-items", { meeting_id: meeting.id, title: "x", assigned_to_user_id: crypto.randomUUID() }), 404, "not_found")
    expectError(await api.post("/v1/action-items", { meeting_id: meeting.id, title: "x", agenda_item_id: crypto.randomUUID() }), 404, "not_found")
    expectValidation(await api.post("/v1/action-items", { meeting_id: meeting.id, title: "x", agenda_item_id: foreignAgenda.id }), "agenda_item_id")
  })

  it("lets a VIEWER participant create action items on the meeting", async () => {
    const { ws, api } = await member(server.url)
    const viewer = await ws.addUser()
    const meeting = await createMeeting(api)
    await addParticipant(api, meeting.id, viewer.userId, "VIEWER")
    expect((await viewer.api.post("/v1/action-items", { meeting_id: meeting.id, title: "mine" })).status).toBe(201)
  })
})

describe("GET /v1/action-items", () => {
  it("filters by meeting_id and status", async () => {
    const { api } = await member(server.url)
    const m1 = await createMeeting(api)
    const m2 = await createMeeting(api)
    const a = await createActionItem(api, m1.id, { title: "a" })
    await sleep(3)
    const b = await createActionItem(api, m1.id, { title: "b", status: "blocked" })
    await sleep(3)
    const c = await createActionItem(api, m2.id, { title: "c", status: "blocked" })
    const all = await api.get("/v1/action-items")
    expectList(all, { total: 3 })
    expect(all.body.items.map((i: { id: string }) => i.id)).toEqual([c.id, b.id, a.id])
    const byMeeting = await api.get(`/v1/action-items?meeting_id=${m1.id}`)
    expectList(byMeeting, { total: 2 })
    expect(byMeeting.body.items.map((i: { id: string }) => i.id).sort()).toEqual([a.id, b.id].sort())
    const blocked = await api.get("/v1/action-items?status=blocked")
    expectList(blocked, { total: 2 })
    expect(blocked.body.items.map((i: { id: string }) => i.id).sort()).toEqual([b.id, c.id].sort())
    const both = await api.get(`/v1/action-items?status=blocked&meeting_id=${m2.id}`)
    expect(both.body.items).toEqual([c])
    expectList(await api.get("/v1/action-items?status=completed"), { total: 0 })
    expectValidation(await api.get("/v1/action-items?status=finished"), "status")
    expectValidation(await api.get("/v1/action-items?meeting_id=12"), "meeting_id")
    expectError(await api.get(`/v1/action-items?meeting_id=${crypto.randomUUID()}`), 404, "not_found")
  })
})

describe("GET, PATCH, DELETE /v1/action-items/{id}", () => {
  it("answers 404 for an unknown item and 400 for a malformed id", async () => {
    const { api } = await member(server.url)
    expectError(await api.get(`/v1/action-items/${crypto.randomUUID()}`), 404, "not_found")
    expectValidation(await api.get("/v1/action-items/xyz"), "id")
  })

  it("changes only the given fields, including assigned_to_user_id and agenda_item_id", async () => {
    const { ws, api } = await member(server.url)
    const assignee = await ws.addUser()
    const meeting = await createMeeting(api)
    const agenda = await createAgendaItem(api, meeting.id)
    const item = await createActionItem(api, meeting.id, { description: "first", due_date: "2030-05-01" })
    await sleep(5)
    const titled = await api.patch(`/v1/action-items/${item.id}`, { title: "Renamed" })
    expect(titled.status).toBe(200)
    expect(titled.body).toEqual({ ...item, title: "Renamed", updated_at: titled.body.updated_at })
    expect(Date.parse(titled.body.updated_at)).toBeGreaterThan(Date.parse(item.updated_at))

    const assigned = await api.patch(`/v1/action-items/${item.id}`, {
      assigned_to_user_id: assignee.userId,
      agenda_item_id: agenda.id,
      due_date: "2030-06-30",
      description: null
    })
    expect(assigned.status).toBe(200)
    expect(assigned.body).toMatchObject({
      title: "Renamed",
      assigned_to_user_id: assignee.userId,
      agenda_item_id: agenda.id,
      due_date: "2030-06-30",
      description: null,
      status: "needs_review"
    })
    const cleared = await api.patch(`/v1/action-items/${item.id}`, { assigned_to_user_id: null, agenda_item_id: null, due_date: null })
    expect(cleared.body).toMatchObject({ assigned_to_user_id: null, agenda_item_id: null, due_date: null, title: "Renamed" })
    expect((await api.get(`/v1/action-items/${item.id}`)).body).toEqual(cleared.body)

    expectValidation(await api.patch(`/v1/action-items/${item.id}`, { due_date: "2026-02-30" }), "due_date")
    expectValidation(await api.patch(`/v1/action-items/${item.id}`, { title: "" }), "title")
    expectError(await api.patch(`/v1/action-items/${item.id}`, { assigned_to_user_id: crypto.randomUUID() }), 404, "not_found")
    expectError(await api.patch(`/v1/action-items/${crypto.randomUUID()}`, { title: "x" }), 404, "not_found")
  })

  it("deletes an item: 204 with no body, then 404", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    const item = await createActionItem(api, meeting.id)
    const response = await api.delete(`/v1/action-items/${item.id}`)
    expect(response.status).toBe(204)
    expect(response.text).toBe("")
    expectError(await api.get(`/v1/action-items/${item.id}`), 404, "not_found")
    expectError(await api.delete(`/v1/action-items/${item.id}`), 404, "not_found")
    expectList(await api.get("/v1/action-items"), { total: 0 })
  })
})

describe("status machine", () => {
  it("allows exactly the documented moves (200) and answers every other with 409 conflict", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    const unexpected: Array<string> = []
    for (const from of STATUSES) {
      for (const to of STATUSES) {
        if (from === to) continue
        const item = await createActionItem(api, meeting.id, { status: from })
        const response = await api.patch(`/v1/action-items/${item.id}`, { status: to })
        const allowed = ALLOWED[from].includes(to)
        if (allowed) {
          if (response.status !== 200 || response.body.status !== to) unexpected.push(`${from} → ${to}: ${response.status}`)
        } else {
          if (response.status !== 409 || response.body.code !== "conflict") unexpected.push(`${from} → ${to}: ${response.status}`)
          else expectError(response, 409, "conflict")
          const after = await api.get(`/v1/action-items/${item.id}`)
          if (after.body.status !== from) unexpected.push(`${from} → ${to} changed the item`)
        }
      }
    }
    expect(unexpected).toEqual([])
  })

  it("accepts setting the status an item already has", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    for (const status of STATUSES) {
      const item = await createActionItem(api, meeting.id, { status })
      const response = await api.patch(`/v1/action-items/${item.id}`, { status })
      expect(response.status).toBe(200)
      expect(response.body.status).toBe(status)
    }
  })

  it("completing sets is_completed and completed_at; reopening clears both; cancelling and restoring works", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    const item = await createActionItem(api, meeting.id)
    const path = `/v1/action-items/${item.id}`
    expect((await api.patch(path, { status: "accepted" })).body).toMatchObject({ status: "accepted", is_completed: false, completed_at: null })
    expect((await api.patch(path, { status: "in_progress" })).body.status).toBe("in_progress")
    const completed = await api.patch(path, { status: "completed" })
    expect(completed.status).toBe(200)
    expect(completed.body.is_completed).toBe(true)
    expect(completed.body.completed_at).toMatch(TIMESTAMP)
    expect(ageOf(completed.body.completed_at)).toBeLessThan(10_000)
    expect((await api.get(path)).body).toMatchObject({ is_completed: true, completed_at: completed.body.completed_at })
    // An unrelated change keeps completion as it was.
    const renamed = await api.patch(path, { title: "still done" })
    expect(renamed.body).toMatchObject({ status: "completed", is_completed: true, completed_at: completed.body.completed_at })

    const reopened = await api.patch(path, { status: "in_progress" })
    expect(reopened.status).toBe(200)
    expect(reopened.body).toMatchObject({ status: "in_progress", is_completed: false, completed_at: null })
    expect((await api.patch(path, { status: "blocked" })).body.status).toBe("blocked")
    expect((await api.patch(path, { status: "cancelled" })).body).toMatchObject({ status: "cancelled", is_completed: false, completed_at: null })
    expect((await api.patch(path, { status: "needs_review" })).body.status).toBe("needs_review")
    expectError(await api.patch(path, { status: "completed" }), 409, "conflict")
    expect((await api.get(path)).body).toMatchObject({ status: "needs_review", is_completed: false, completed_at: null })
  })
})
