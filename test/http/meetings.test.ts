/** Meetings, their participants, contacts and transcript, and the meeting templates. */
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
  type Response,
  sleep,
  TIMESTAMP,
  useServer,
  UUID,
  workspace
} from "./fixtures.js"

const server = useServer()

const MEETING_FIELDS = [
  "created_at",
  "detail_level",
  "end_time",
  "id",
  "is_instant",
  "owner_user_id",
  "start_time",
  "status",
  "template_id",
  "title",
  "updated_at",
  "workspace_id"
]
const PARTICIPANT_FIELDS = ["created_at", "email", "id", "is_attended", "meeting_id", "name", "role", "updated_at", "user_id"]

const inHours = (hours: number) => new Date(Date.now() + hours * 3600_000).toISOString()
const ids = (response: Response) => response.body.items.map((item: { id: string }) => item.id)

describe("POST /v1/meetings", () => {
  it("creates a scheduled meeting: 201 with every field, the caller its OWNER participant", async () => {
    const { ws, user, api } = await member(server.url)
    const response = await api.post("/v1/meetings", {
      title: "  Quarterly planning  ",
      start_time: "2030-03-01T09:30:00Z",
      end_time: "2030-03-01T12:30:00+02:00",
      detail_level: "detailed"
    })
    expect(response.status).toBe(201)
    expect(response.headers.get("content-type")).toContain("application/json")
    expect(Object.keys(response.body).sort()).toEqual(MEETING_FIELDS)
    expect(response.body).toMatchObject({
      workspace_id: ws.workspaceId,
      title: "Quarterly planning",
      status: "scheduled",
      start_time: expect.stringMatching(/^2030-03-01T09:30:00(\.0+)?Z$/),
      end_time: expect.stringMatching(/^2030-03-01T10:30:00(\.0+)?Z$/),
      is_instant: false,
      detail_level: "detailed",
      template_id: null,
      owner_user_id: user.userId
    })
    expect(response.body.id).toMatch(UUID)
    expect(response.body.created_at).toMatch(TIMESTAMP)
    expect(response.body.updated_at).toMatch(TIMESTAMP)
    expect(ageOf(response.body.created_at)).toBeLessThan(60_000)

    const participants = await api.get(`/v1/meetings/${response.body.id}/participants`)
    expectList(participants, { total: 1 })
    expect(participants.body.items[0]).toMatchObject({
      meeting_id: response.body.id,
      user_id: user.userId,
      name: user.name,
      email: user.email,
      role: "OWNER",
      is_attended: false
    })
    const got = await api.get(`/v1/meetings/${response.body.id}`)
    expect(got.status).toBe(200)
    expect(got.body).toEqual(response.body)
  })

  it("defaults: status scheduled, no times, detail_level standard", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api, { title: "Bare" })
    expect(meeting).toMatchObject({ status: "scheduled", start_time: null, end_time: null, is_instant: false, detail_level: "standard", template_id: null })
  })

  it("is_instant: true starts the meeting now (in_progress, start_time about now)", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api, { title: "Ad hoc", is_instant: true })
    expect(meeting.status).toBe("in_progress")
    expect(meeting.is_instant).toBe(true)
    expect(meeting.start_time).toMatch(TIMESTAMP)
    expect(ageOf(meeting.start_time)).toBeLessThan(10_000)
  })

  it("reads timestamps without an offset as UTC", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api, { start_time: "2030-06-15T14:00:00", end_time: "2030-06-15T15:45:30" })
    expect(meeting.start_time).toMatch(/^2030-06-15T14:00:00(\.0+)?Z$/)
    expect(meeting.end_time).toMatch(/^2030-06-15T15:45:30(\.0+)?Z$/)
  })

  it("answers 400 validation_error when end_time is before start_time", async () => {
    const { api } = await member(server.url)
    expectValidation(
      await api.post("/v1/meetings", { title: "x", start_time: "2030-01-01T10:00:00Z", end_time: "2030-01-01T09:59:59Z" }),
      "end_time"
    )
    // Offsets count: 10:00+02:00 is 08:00Z, before 09:00Z.
    expectValidation(
      await api.post("/v1/meetings", { title: "x", start_time: "2030-01-01T09:00:00Z", end_time: "2030-01-01T10:00:00+02:00" }),
      "end_time"
    )
    expectList(await api.get("/v1/meetings"), { total: 0 })
  })

  it("answers 400 for a missing or too long title, a bad detail_level, a non-boolean is_instant", async () => {
    const { api } = await member(server.url)
    expectValidation(await api.post("/v1/meetings", { start_time: "2030-01-01T10:00:00Z" }), "title")
    expectValidation(await api.post("/v1/meetings", { title: "x".repeat(501) }), "title")
    expectValidation(await api.post("/v1/meetings", { title: "x", detail_level: "huge" }), "detail_level")
    expectValidation(await api.post("/v1/meetings", { title: "x", is_instant: "yes" }), "is_instant")
    expectValidation(await api.post("/v1/meetings", { title: "x", start_time: "2030-13-01T10:00:00Z" }), "start_time")
    expectValidation(await api.post("/v1/meetings", { title: "x", start_time: "2030-02-30T10:00:00Z" }), "start_time")
    expectValidation(await api.post("/v1/meetings", { title: "x", start_time: "2030-04-31T10:00:00Z" }), "start_time")
    expectList(await api.get("/v1/meetings"), { total: 0 })
  })

  it("creates the template's agenda items from template_id, and answers 404 for an unknown template", async () => {
    const { api } = await member(server.url)
    const templates = await api.get("/v1/meeting-templates")
    const retro = templates.body.items.find((t: { name: string }) => t.name === "Retrospective")
    expect(retro).toBeDefined()
    const meeting = await createMeeting(api, { title: "Sprint 12 retro", template_id: retro.id })
    expect(meeting.template_id).toBe(retro.id)
    expect(meeting.detail_level).toBe(retro.detail_level)
    const agenda = await api.get(`/v1/agenda-items?meeting_id=${meeting.id}`)
    expectList(agenda, { total: retro.agenda_items.length })
    expect(agenda.body.items.map((i: { item_type: string; title: string }) => [i.title, i.item_type])).toEqual(retro.agenda_items.map((i: { item_type: string; title: string }) => [i.title, i.item_type]))
    expect(agenda.body.items.map((i: { sequence: string }) => i.sequence)).toEqual(retro.agenda_items.map((_: unknown, n: number) => String(n + 1)))

    const explicit = await createMeeting(api, { template_id: retro.id, detail_level: "brief" })
    expect(explicit.detail_level).toBe("brief")

    const unknown = await api.post("/v1/meetings", { title: "x", template_id: crypto.randomUUID() })
    expectError(unknown, 404, "not_found")
    expectValidation(await api.post("/v1/meetings", { title: "x", template_id: "retro" }), "template_id")
    expect((await api.get("/v1/meetings")).body.total).toBe(2)
  })

  it("never lets racing creates on FREE exceed the 20-meeting allowance", async () => {
    const free = await workspace(server.url, "FREE")
    const a = await free.addUser()
    const b = await free.addUser()
    const responses = await Promise.all(
      Array.from({ length: 24 }, (_, i) => (i % 2 === 0 ? a : b).api.post("/v1/meetings", { title: `race ${i}` }))
    )
    expect(responses.filter((r) => r.status === 201)).toHaveLength(20)
    expect(responses.filter((r) => r.status === 402)).toHaveLength(4)
    const key = await free.addApiKey()
    expect((await key.api.get("/v1/meetings")).body.total).toBe(20)
  })

  it("lets a workspace API key create a meeting (no owner user)", async () => {
    const ws = await workspace(server.url)
    const key = await ws.addApiKey()
    const response = await key.api.post("/v1/meetings", { title: "By integration" })
    expect(response.status).toBe(201)
    expect(response.body.owner_user_id).toBeNull()
    expect(response.body.workspace_id).toBe(ws.workspaceId)
  })

  it("allows a FREE workspace 20 meetings a month, then 402 plan_required; PRO is uncapped", async () => {
    const free = await workspace(server.url, "FREE")
    const user = await free.addUser()
    for (let i = 0; i < 20; i++) {
      expect((await user.api.post("/v1/meetings", { title: `m${i}` })).status).toBe(201)
    }
    const refused = await user.api.post("/v1/meetings", { title: "one too many" })
    expect(refused.status).toBe(402)
    expect(refused.body).toEqual({
      code: "plan_required",
      feature: expect.any(String),
      current_plan: "FREE",
      required_plan: "PRO",
      error: expect.any(String),
      message: refused.body.error,
      request_id: refused.headers.get("x-request-id")
    })
    expect((await user.api.get("/v1/meetings")).body.total).toBe(20)
    // The allowance is the workspace's, not the user's.
    const colleague = await free.addUser()
    expect((await colleague.api.post("/v1/meetings", { title: "x" })).status).toBe(402)

    const pro = await workspace(server.url, "PRO")
    const proUser = await pro.addUser()
    for (let i = 0; i < 22; i++) {
      expect((await proUser.api.post("/v1/meetings", { title: `m${i}` })).status).toBe(201)
    }
  })
})

describe("GET /v1/meetings", () => {
  it("lists newest first, with the status filter", async () => {
    const { api } = await member(server.url)
    const first = await createMeeting(api, { title: "first" })
    await sleep(5)
    const second = await createMeeting(api, { title: "second" })
    await sleep(5)
    const third = await createMeeting(api, { title: "third", is_instant: true })
    const all = await api.get("/v1/meetings")
    expectList(all, { total: 3 })
    expect(ids(all)).toEqual([third.id, second.id, first.id])
    expect(all.body.items[0]).toEqual(third)

    expect((await api.patch(`/v1/meetings/${first.id}`, { status: "ended" })).status).toBe(200)
    const ended = await api.get("/v1/meetings?status=ended")
    expectList(ended, { total: 1 })
    expect(ids(ended)).toEqual([first.id])
    expect(ids(await api.get("/v1/meetings?status=scheduled"))).toEqual([second.id])
    expect(ids(await api.get("/v1/meetings?status=in_progress"))).toEqual([third.id])
    expectList(await api.get("/v1/meetings?status=cancelled"), { total: 0 })
    expectValidation(await api.get("/v1/meetings?status=done"), "status")
  })
})

describe("GET /v1/meetings/search", () => {
  it("filters by q (case-insensitive title substring), status, start_after and start_before", async () => {
    const { api } = await member(server.url)
    const budget = await createMeeting(api, { title: "Budget Review Q3", start_time: "2030-01-10T10:00:00Z" })
    await sleep(5)
    const review = await createMeeting(api, { title: "Design review", start_time: "2030-02-10T10:00:00Z" })
    await sleep(5)
    const standup = await createMeeting(api, { title: "Stand-up", start_time: "2030-03-10T10:00:00Z" })
    await sleep(5)
    const untimed = await createMeeting(api, { title: "Untimed REVIEW" })

    const q = await api.get("/v1/meetings/search?q=REVIEW")
    expectList(q, { total: 3 })
    expect(ids(q)).toEqual([untimed.id, review.id, budget.id])
    expect(ids(await api.get("/v1/meetings/search?q=get%20rev"))).toEqual([budget.id])
    expectList(await api.get("/v1/meetings/search?q=retro"), { total: 0 })
    expect(ids(await api.get("/v1/meetings/search"))).toEqual([untimed.id, standup.id, review.id, budget.id])

    await api.patch(`/v1/meetings/${review.id}`, { status: "cancelled" })
    expect(ids(await api.get("/v1/meetings/search?q=review&status=cancelled"))).toEqual([review.id])
    expect(ids(await api.get("/v1/meetings/search?q=review&status=scheduled"))).toEqual([untimed.id, budget.id])

    // start_after is inclusive, start_before exclusive.
    expect(ids(await api.get("/v1/meetings/search?start_after=2030-02-10T10:00:00Z"))).toEqual([standup.id, review.id])
    expect(ids(await api.get("/v1/meetings/search?start_before=2030-02-10T10:00:00Z"))).toEqual([budget.id])
    expect(ids(await api.get("/v1/meetings/search?start_after=2030-01-01T00:00:00Z&start_before=2030-03-01T00:00:00Z"))).toEqual([
      review.id,
      budget.id
    ])
    expect(ids(await api.get(`/v1/meetings/search?start_after=${encodeURIComponent("2030-02-10T11:00:00+01:00")}`))).toEqual([
      standup.id,
      review.id
    ])
    // Without an offset, UTC.
    expect(ids(await api.get("/v1/meetings/search?start_after=2030-02-10T10:00:00"))).toEqual([standup.id, review.id])
    expect(ids(await api.get("/v1/meetings/search?start_after=2030-02-10T10:00:01"))).toEqual([standup.id])
    expectValidation(await api.get("/v1/meetings/search?start_after=yesterday"), "start_after")
    expectValidation(await api.get("/v1/meetings/search?start_before=2030-02-30T00:00:00Z"), "start_before")
  })

  it("matches q literally (no wildcard or pattern characters)", async () => {
    const { api } = await member(server.url)
    const dotted = await createMeeting(api, { title: "v1.2 release" })
    await createMeeting(api, { title: "v132 release" })
    const percent = await createMeeting(api, { title: "100% done" })
    await createMeeting(api, { title: "1000 done" })
    expect(ids(await api.get("/v1/meetings/search?q=.")).sort()).toEqual([dotted.id])
    expect(ids(await api.get("/v1/meetings/search?q=1.2"))).toEqual([dotted.id])
    expect(ids(await api.get("/v1/meetings/search?q=%25"))).toEqual([percent.id])
    expect(ids(await api.get("/v1/meetings/search?q=_"))).toEqual([])
  })
})

describe("GET /v1/meetings/upcoming", () => {
  it("lists scheduled and running meetings that are not over yet, soonest first", async () => {
    const { api } = await member(server.url)
    const later = await createMeeting(api, { title: "later", start_time: inHours(48) })
    const soon = await createMeeting(api, { title: "soon", start_time: inHours(2) })
    const running = await createMeeting(api, { title: "running", start_time: inHours(-1), end_time: inHours(1) })
    await api.patch(`/v1/meetings/${running.id}`, { status: "in_progress" })
    // Started now with no end time: running until someone ends it, so it stays listed.
    const instant = await createMeeting(api, { title: "instant", is_instant: true })
    await createMeeting(api, { title: "past", start_time: inHours(-3), end_time: inHours(-2) })
    await createMeeting(api, { title: "past, no end", start_time: inHours(-5) })
    await createMeeting(api, { title: "no time" })
    const cancelled = await createMeeting(api, { title: "cancelled", start_time: inHours(3) })
    await api.patch(`/v1/meetings/${cancelled.id}`, { status: "cancelled" })
    const ended = await createMeeting(api, { title: "ended", start_time: inHours(4), end_time: inHours(5) })
    await api.patch(`/v1/meetings/${ended.id}`, { status: "ended" })

    const upcoming = await api.get("/v1/meetings/upcoming")
    expectList(upcoming, { total: 4 })
    expect(ids(upcoming)).toEqual([running.id, instant.id, soon.id, later.id])
    expect(upcoming.body.items.map((m: { status: string }) => m.status))
      .toEqual(["in_progress", "in_progress", "scheduled", "scheduled"])
  })
})

describe("GET /v1/meetings/{id}", () => {
  it("answers 404 not_found for an unknown meeting and 400 for a malformed id", async () => {
    const { api } = await member(server.url)
    expectError(await api.get(`/v1/meetings/${crypto.randomUUID()}`), 404, "not_found")
    expectValidation(await api.get("/v1/meetings/12345"), "id")
  })
})

describe("PATCH /v1/meetings/{id}", () => {
  it("changes only the given fields and updated_at", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api, { title: "Old", start_time: "2030-01-01T10:00:00Z", detail_level: "brief" })
    await sleep(5)
    const response = await api.patch(`/v1/meetings/${meeting.id}`, { title: "New" })
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ ...meeting, title: "New", updated_at: response.body.updated_at })
    expect(Date.parse(response.body.updated_at)).toBeGreaterThan(Date.parse(meeting.updated_at))

    const times = await api.patch(`/v1/meetings/${meeting.id}`, {
      start_time: "2030-01-02T10:00:00",
      end_time: "2030-01-02T11:00:00Z",
      detail_level: "detailed"
    })
    expect(times.status).toBe(200)
    expect(times.body).toMatchObject({
      title: "New",
      start_time: expect.stringMatching(/^2030-01-02T10:00:00(\.0+)?Z$/),
      end_time: expect.stringMatching(/^2030-01-02T11:00:00(\.0+)?Z$/),
      detail_level: "detailed",
      status: "scheduled"
    })
    expect((await api.get(`/v1/meetings/${meeting.id}`)).body).toEqual(times.body)
  })

  it("answers 400 when end_time would be before start_time, and for bad values", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api, { start_time: "2030-01-01T10:00:00Z" })
    expectValidation(await api.patch(`/v1/meetings/${meeting.id}`, { end_time: "2030-01-01T09:00:00Z" }), "end_time")
    expectValidation(await api.patch(`/v1/meetings/${meeting.id}`, { status: "paused" }), "status")
    expectValidation(await api.patch(`/v1/meetings/${meeting.id}`, { title: "" }), "title")
    expect((await api.get(`/v1/meetings/${meeting.id}`)).body.end_time).toBeNull()
  })

  it("follows the status machine: scheduled → ended sets end_time; ended → scheduled is 409 conflict", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api, { start_time: inHours(-1) })
    const ended = await api.patch(`/v1/meetings/${meeting.id}`, { status: "ended" })
    expect(ended.status).toBe(200)
    expect(ended.body.status).toBe("ended")
    expect(ended.body.end_time).toMatch(TIMESTAMP)
    expect(ageOf(ended.body.end_time)).toBeLessThan(10_000)
    expectError(await api.patch(`/v1/meetings/${meeting.id}`, { status: "scheduled" }), 409, "conflict")
    expectError(await api.patch(`/v1/meetings/${meeting.id}`, { status: "in_progress" }), 409, "conflict")
    expectError(await api.patch(`/v1/meetings/${meeting.id}`, { status: "cancelled" }), 409, "conflict")
    expect((await api.get(`/v1/meetings/${meeting.id}`)).body.status).toBe("ended")
  })

  it("allows the documented moves: scheduled → in_progress → ended, scheduled → cancelled → scheduled", async () => {
    const { api } = await member(server.url)
    const a = await createMeeting(api)
    const started = await api.patch(`/v1/meetings/${a.id}`, { status: "in_progress" })
    expect(started.status).toBe(200)
    expect(started.body.status).toBe("in_progress")
    expect(ageOf(started.body.start_time)).toBeLessThan(10_000)
    expectError(await api.patch(`/v1/meetings/${a.id}`, { status: "scheduled" }), 409, "conflict")
    expect((await api.patch(`/v1/meetings/${a.id}`, { status: "ended" })).body.status).toBe("ended")

    const b = await createMeeting(api, { start_time: "2030-01-01T10:00:00Z", end_time: "2030-01-01T11:00:00Z" })
    expect((await api.patch(`/v1/meetings/${b.id}`, { status: "cancelled" })).body.status).toBe("cancelled")
    expectError(await api.patch(`/v1/meetings/${b.id}`, { status: "in_progress" }), 409, "conflict")
    const back = await api.patch(`/v1/meetings/${b.id}`, { status: "scheduled" })
    expect(back.status).toBe(200)
    expect(back.body.status).toBe("scheduled")
    // Ending a meeting records when it really ended: now, and its start (planned later) becomes the end too.
    const done = await api.patch(`/v1/meetings/${b.id}`, { status: "ended" })
    expect(done.status).toBe(200)
    expect(ageOf(done.body.end_time)).toBeLessThan(10_000)
    expect(done.body.start_time).toBe(done.body.end_time)
  })

  it("answers 404 for an unknown meeting", async () => {
    const { api } = await member(server.url)
    expectError(await api.patch(`/v1/meetings/${crypto.randomUUID()}`, { title: "x" }), 404, "not_found")
  })
})

describe("starting and ending a meeting whenever it happens", () => {
  const inDays = (days: number, hour = 9) => {
    const at = new Date(Date.now() + days * 86_400_000)
    at.setUTCHours(hour, 0, 0, 0)
    return at.toISOString()
  }
  const lengthOf = (meeting: { start_time: string; end_time: string }) =>
    Date.parse(meeting.end_time) - Date.parse(meeting.start_time)

  it("starts a meeting planned for next week today and ends it today: real times, planned length kept while running", async () => {
    const { api } = await member(server.url)
    const planned = await createMeeting(api, { start_time: inDays(7, 9), end_time: inDays(7, 10) })
    const started = await api.patch(`/v1/meetings/${planned.id}`, { status: "in_progress" })
    expect(started.status).toBe(200)
    expect(ageOf(started.body.start_time)).toBeLessThan(10_000)
    expect(lengthOf(started.body)).toBe(3_600_000)
    const ended = await api.patch(`/v1/meetings/${planned.id}`, { status: "ended" })
    expect(ended.status).toBe(200)
    expect(ended.body.status).toBe("ended")
    expect(ended.body.start_time).toBe(started.body.start_time)
    expect(ageOf(ended.body.end_time)).toBeLessThan(10_000)
    expect(Date.parse(ended.body.end_time)).toBeGreaterThanOrEqual(Date.parse(ended.body.start_time))
  })

  it("starts and ends a meeting that was planned for yesterday", async () => {
    const { api } = await member(server.url)
    const late = await createMeeting(api, { start_time: inDays(-1, 9), end_time: inDays(-1, 10) })
    const started = await api.patch(`/v1/meetings/${late.id}`, { status: "in_progress" })
    expect(started.status).toBe(200)
    expect(ageOf(started.body.start_time)).toBeLessThan(10_000)
    const ended = await api.patch(`/v1/meetings/${late.id}`, { status: "ended" })
    expect(ended.status).toBe(200)
    expect(ageOf(ended.body.end_time)).toBeLessThan(10_000)
  })

  it("ends a meeting planned for next week that never started: it took place now", async () => {
    const { api } = await member(server.url)
    const planned = await createMeeting(api, { start_time: inDays(7, 9), end_time: inDays(7, 10) })
    const ended = await api.patch(`/v1/meetings/${planned.id}`, { status: "ended" })
    expect(ended.status).toBe(200)
    expect(ageOf(ended.body.end_time)).toBeLessThan(10_000)
    expect(ended.body.start_time).toBe(ended.body.end_time)
  })

  it("ends an instant meeting, and one without any times", async () => {
    const { api } = await member(server.url)
    const instant = await createMeeting(api, { is_instant: true })
    const ended = await api.patch(`/v1/meetings/${instant.id}`, { status: "ended" })
    expect(ended.status).toBe(200)
    expect(ended.body.start_time).toBe(instant.start_time)
    expect(ageOf(ended.body.end_time)).toBeLessThan(10_000)
    const bare = await createMeeting(api)
    const done = await api.patch(`/v1/meetings/${bare.id}`, { status: "ended" })
    expect(done.status).toBe(200)
    expect(done.body.start_time).toBe(done.body.end_time)
  })

  it("takes explicit times given with the status change", async () => {
    const { api } = await member(server.url)
    const planned = await createMeeting(api, { start_time: inDays(7, 9), end_time: inDays(7, 10) })
    const started = await api.patch(`/v1/meetings/${planned.id}`, { status: "in_progress", start_time: inDays(0, 8) })
    expect(started.status).toBe(200)
    expect(Date.parse(started.body.start_time)).toBe(Date.parse(inDays(0, 8)))
    const end = inDays(0, 8).replace("08:00", "08:45")
    const ended = await api.patch(`/v1/meetings/${planned.id}`, { status: "ended", end_time: end })
    expect(ended.status).toBe(200)
    expect(Date.parse(ended.body.end_time)).toBe(Date.parse(end))
    expect(ended.body.start_time).toBe(started.body.start_time)
    const refused = await api.patch(`/v1/meetings/${(await createMeeting(api)).id}`, {
      status: "ended",
      start_time: inDays(1, 10),
      end_time: inDays(1, 9)
    })
    expectValidation(refused, "end_time")
  })

  it("cancels, restores and then runs a meeting; an ended meeting says it is final", async () => {
    const { api } = await member(server.url)
    const planned = await createMeeting(api, { start_time: inDays(3, 9), end_time: inDays(3, 10) })
    const cancelled = await api.patch(`/v1/meetings/${planned.id}`, { status: "cancelled" })
    expect(cancelled.body).toMatchObject({ status: "cancelled", start_time: planned.start_time, end_time: planned.end_time })
    const refused = await api.patch(`/v1/meetings/${planned.id}`, { status: "in_progress" })
    expectError(refused, 409, "conflict")
    expect(refused.body.error).toContain("from cancelled it can go to scheduled")
    const restored = await api.patch(`/v1/meetings/${planned.id}`, { status: "scheduled" })
    expect(restored.body).toMatchObject({ status: "scheduled", start_time: planned.start_time })
    expect((await api.patch(`/v1/meetings/${planned.id}`, { status: "in_progress" })).status).toBe(200)
    expect((await api.patch(`/v1/meetings/${planned.id}`, { status: "ended" })).status).toBe(200)
    const final = await api.patch(`/v1/meetings/${planned.id}`, { status: "in_progress" })
    expectError(final, 409, "conflict")
    expect(final.body.error).toContain("final")
  })

  it("names start_time when a change moves only the start past the end", async () => {
    const { api } = await member(server.url)
    const planned = await createMeeting(api, { start_time: inDays(3, 9), end_time: inDays(3, 10) })
    const moved = await api.patch(`/v1/meetings/${planned.id}`, { start_time: inDays(3, 11) })
    expectValidation(moved, "start_time")
    expect(moved.body.error).toMatch(/^start_time: must not be after/)
  })

  it("refuses start_time together with is_instant", async () => {
    const { api } = await member(server.url)
    expectValidation(await api.post("/v1/meetings", { title: "x", is_instant: true, start_time: inDays(1) }), "start_time")
  })
})

describe("DELETE /v1/meetings/{id}", () => {
  it("answers 204 with no body; the meeting, its agenda items and its action items are gone", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    const keep = await createMeeting(api, { title: "keep" })
    const agenda = await createAgendaItem(api, meeting.id)
    const action = await createActionItem(api, meeting.id)
    const keptAction = await createActionItem(api, keep.id)
    const response = await api.delete(`/v1/meetings/${meeting.id}`)
    expect(response.status).toBe(204)
    expect(response.text).toBe("")
    expectError(await api.get(`/v1/meetings/${meeting.id}`), 404, "not_found")
    expectError(await api.get(`/v1/agenda-items/${agenda.id}`), 404, "not_found")
    expectError(await api.get(`/v1/action-items/${action.id}`), 404, "not_found")
    expectError(await api.get(`/v1/meetings/${meeting.id}/participants`), 404, "not_found")
    expect(ids(await api.get("/v1/meetings"))).toEqual([keep.id])
    expect(ids(await api.get("/v1/action-items"))).toEqual([keptAction.id])
    expectList(await api.get("/v1/agenda-items"), { total: 0 })
    expectError(await api.delete(`/v1/meetings/${meeting.id}`), 404, "not_found")
  })
})

describe("GET /v1/meetings/{id}/transcript/export", () => {
  it("answers 200 text/plain with an empty body when there is no transcript", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    const response = await api.get(`/v1/meetings/${meeting.id}/transcript/export`)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toMatch(/^text\/plain/)
    expect(response.text).toBe("")
    expectError(await api.get(`/v1/meetings/${crypto.randomUUID()}/transcript/export`), 404, "not_found")
  })
})

describe("GET /v1/meetings/{id}/contacts", () => {
  it("lists the people on the meeting: users with their name, guests by address", async () => {
    const { ws, user, api } = await member(server.url)
    const colleague = await ws.addUser({ name: "Grace Hopper" })
    const meeting = await createMeeting(api)
    await addParticipant(api, meeting.id, colleague.userId, "EDITOR")
    await sleep(5)
    await api.post(`/v1/meetings/${meeting.id}/participants`, { participants: [{ guest_email: "Guest@Example.com", role: "VIEWER" }] })
    // The colleague again under another role: one contact per person.
    await api.post(`/v1/meetings/${meeting.id}/participants`, { participants: [{ user_id: colleague.userId, role: "VIEWER" }] })
    const contacts = await api.get(`/v1/meetings/${meeting.id}/contacts`)
    expectList(contacts, { total: 3 })
    expect(contacts.body.items).toEqual([
      { user_id: user.userId, name: user.name, email: user.email, is_guest: false },
      { user_id: colleague.userId, name: "Grace Hopper", email: colleague.email, is_guest: false },
      { user_id: null, name: "guest@example.com", email: "guest@example.com", is_guest: true }
    ])
    expectError(await api.get(`/v1/meetings/${crypto.randomUUID()}/contacts`), 404, "not_found")
  })
})

describe("/v1/meetings/{id}/participants", () => {
  it("adds users and guests: 201 {participants: [...]} in request order, with every field", async () => {
    const { ws, api } = await member(server.url)
    const colleague = await ws.addUser({ name: "Alan Turing" })
    const meeting = await createMeeting(api)
    const response = await api.post(`/v1/meetings/${meeting.id}/participants`, {
      participants: [{ user_id: colleague.userId, role: "EDITOR" }, { guest_email: "Visitor@Example.org", role: "VIEWER" }]
    })
    expect(response.status).toBe(201)
    expect(Object.keys(response.body)).toEqual(["participants"])
    const [added, guest] = response.body.participants
    expect(Object.keys(added).sort()).toEqual(PARTICIPANT_FIELDS)
    expect(added).toMatchObject({
      meeting_id: meeting.id,
      user_id: colleague.userId,
      name: "Alan Turing",
      email: colleague.email,
      role: "EDITOR",
      is_attended: false
    })
    expect(added.id).toMatch(UUID)
    expect(added.created_at).toMatch(TIMESTAMP)
    expect(added.updated_at).toMatch(TIMESTAMP)
    expect(guest).toMatchObject({ meeting_id: meeting.id, user_id: null, email: "visitor@example.org", role: "VIEWER", is_attended: false })
    expect(guest.id).toMatch(UUID)

    const list = await api.get(`/v1/meetings/${meeting.id}/participants`)
    expectList(list, { total: 3 })
    expect(list.body.items[0].role).toBe("OWNER")
    expect(list.body.items).toContainEqual(added)
    expect(list.body.items).toContainEqual(guest)
  })

  it("treats adding someone already on the meeting as a no-op for that entry", async () => {
    const { ws, user, api } = await member(server.url)
    const colleague = await ws.addUser()
    const meeting = await createMeeting(api)
    const first = await api.post(`/v1/meetings/${meeting.id}/participants`, {
      participants: [{ user_id: colleague.userId, role: "VIEWER" }, { guest_email: "g@example.com", role: "VIEWER" }]
    })
    const again = await api.post(`/v1/meetings/${meeting.id}/participants`, {
      participants: [
        { user_id: colleague.userId, role: "EDITOR" },
        { guest_email: "G@EXAMPLE.COM", role: "EDITOR" },
        { user_id: user.userId, role: "VIEWER" },
        { guest_email: "new@example.com", role: "EDITOR" }
      ]
    })
    expect(again.status).toBe(201)
    expect(again.body.participants).toHaveLength(4)
    expect(again.body.participants[0]).toEqual(first.body.participants[0])
    expect(again.body.participants[1]).toEqual(first.body.participants[1])
    expect(again.body.participants[2]).toMatchObject({ user_id: user.userId, role: "OWNER" })
    expect(again.body.participants[3]).toMatchObject({ email: "new@example.com", role: "EDITOR" })
    const list = await api.get(`/v1/meetings/${meeting.id}/participants`)
    expectList(list, { total: 4 })
    expect(list.body.items.map((p: { role: string }) => p.role).sort()).toEqual(["EDITOR", "OWNER", "VIEWER", "VIEWER"])
    expect(list.body.items.find((p: { user_id: string }) => p.user_id === colleague.userId).role).toBe("VIEWER")
  })

  it("adds a person once when the same addition races", async () => {
    const { ws, api } = await member(server.url)
    const colleague = await ws.addUser()
    const meeting = await createMeeting(api)
    const body = { participants: [{ user_id: colleague.userId, role: "EDITOR" }, { guest_email: "race@example.com", role: "VIEWER" }] }
    const responses = await Promise.all(Array.from({ length: 6 }, () => api.post(`/v1/meetings/${meeting.id}/participants`, body)))
    for (const r of responses) expect(r.status).toBe(201)
    expectList(await api.get(`/v1/meetings/${meeting.id}/participants`), { total: 3 })
    expect(new Set(responses.map((r) => r.body.participants[0].id)).size).toBe(1)
  })

  it("answers 400 when an entry has both or neither of user_id and guest_email, or a bad role or e-mail", async () => {
    const { ws, api } = await member(server.url)
    const colleague = await ws.addUser()
    const meeting = await createMeeting(api)
    const path = `/v1/meetings/${meeting.id}/participants`
    expectValidation(await api.post(path, { participants: [{ user_id: colleague.userId, guest_email: "a@example.com", role: "VIEWER" }] }), "participants")
    expectValidation(await api.post(path, { participants: [{ guest_email: "a@example.com", role: "VIEWER" }, { role: "EDITOR" }] }), "participants[1]")
    expectValidation(await api.post(path, { participants: [{ guest_email: "a@example.com", role: "OWNER" }] }), "role")
    expectValidation(await api.post(path, { participants: [{ guest_email: "not-an-email", role: "VIEWER" }] }), "guest_email")
    expectValidation(await api.post(path, { participants: [] }), "participants")
    expectValidation(await api.post(path, {}), "participants")
    expectList(await api.get(path), { total: 1 })
  })

  it("answers 404 for an unknown user (adding nobody) and for an unknown meeting", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    const path = `/v1/meetings/${meeting.id}/participants`
    expectError(
      await api.post(path, { participants: [{ guest_email: "a@example.com", role: "VIEWER" }, { user_id: crypto.randomUUID(), role: "VIEWER" }] }),
      404,
      "not_found"
    )
    expectList(await api.get(path), { total: 1 })
    expectError(
      await api.post(`/v1/meetings/${crypto.randomUUID()}/participants`, { participants: [{ guest_email: "a@example.com", role: "VIEWER" }] }),
      404,
      "not_found"
    )
    expectError(await api.get(`/v1/meetings/${crypto.randomUUID()}/participants`), 404, "not_found")
  })

  it("removes a participant (204) by user id, a guest by participant id; the owner cannot be removed (409)", async () => {
    const { ws, user, api } = await member(server.url)
    const colleague = await ws.addUser()
    const meeting = await createMeeting(api)
    const added = await api.post(`/v1/meetings/${meeting.id}/participants`, {
      participants: [{ user_id: colleague.userId, role: "EDITOR" }, { guest_email: "g@example.com", role: "VIEWER" }]
    })
    const guestId = added.body.participants[1].id

    const removed = await api.delete(`/v1/meetings/${meeting.id}/participants/${colleague.userId}`)
    expect(removed.status).toBe(204)
    expect(removed.text).toBe("")
    expectError(await colleague.api.get(`/v1/meetings/${meeting.id}`), 404, "not_found")
    expect((await api.delete(`/v1/meetings/${meeting.id}/participants/${guestId}`)).status).toBe(204)
    expectList(await api.get(`/v1/meetings/${meeting.id}/participants`), { total: 1 })

    expectError(await api.delete(`/v1/meetings/${meeting.id}/participants/${user.userId}`), 409, "conflict")
    expectError(await api.delete(`/v1/meetings/${meeting.id}/participants/${colleague.userId}`), 404, "not_found")
    expectError(await api.delete(`/v1/meetings/${meeting.id}/participants/${crypto.randomUUID()}`), 404, "not_found")
    const participants = await api.get(`/v1/meetings/${meeting.id}/participants`)
    expect(participants.body.items.map((p: { user_id: string }) => p.user_id)).toEqual([user.userId])
  })

  it("changes a participant's role (200 with the participant); the owner's role cannot change (409)", async () => {
    const { ws, user, api } = await member(server.url)
    const colleague = await ws.addUser()
    const meeting = await createMeeting(api)
    await addParticipant(api, meeting.id, colleague.userId, "VIEWER")
    expectError(await colleague.api.patch(`/v1/meetings/${meeting.id}`, { title: "x" }), 403, "insufficient_scope")

    const promoted = await api.patch(`/v1/meetings/${meeting.id}/participants/${colleague.userId}/role`, { role: "EDITOR" })
    expect(promoted.status).toBe(200)
    expect(Object.keys(promoted.body).sort()).toEqual(PARTICIPANT_FIELDS)
    expect(promoted.body).toMatchObject({ meeting_id: meeting.id, user_id: colleague.userId, role: "EDITOR", email: colleague.email })
    expect((await colleague.api.patch(`/v1/meetings/${meeting.id}`, { title: "edited" })).status).toBe(200)

    expectError(await api.patch(`/v1/meetings/${meeting.id}/participants/${user.userId}/role`, { role: "VIEWER" }), 409, "conflict")
    expectValidation(await api.patch(`/v1/meetings/${meeting.id}/participants/${colleague.userId}/role`, { role: "OWNER" }), "role")
    expectError(
      await api.patch(`/v1/meetings/${meeting.id}/participants/${crypto.randomUUID()}/role`, { role: "VIEWER" }),
      404,
      "not_found"
    )
    const list = await api.get(`/v1/meetings/${meeting.id}/participants`)
    expect(list.body.items.map((p: { role: string }) => p.role)).toEqual(["OWNER", "EDITOR"])
  })

  it("lets a VIEWER read the participants but not change them (403)", async () => {
    const { ws, api } = await member(server.url)
    const viewer = await ws.addUser()
    const meeting = await createMeeting(api)
    await addParticipant(api, meeting.id, viewer.userId, "VIEWER")
    expectList(await viewer.api.get(`/v1/meetings/${meeting.id}/participants`), { total: 2 })
    expectError(
      await viewer.api.post(`/v1/meetings/${meeting.id}/participants`, { participants: [{ guest_email: "x@example.com", role: "EDITOR" }] }),
      403,
      "insufficient_scope"
    )
    expectError(await viewer.api.patch(`/v1/meetings/${meeting.id}/participants/${viewer.userId}/role`, { role: "EDITOR" }), 403, "insufficient_scope")
  })
})

describe("GET /v1/meeting-templates", () => {
  it("lists the built-in templates with their agenda", async () => {
    const { api } = await member(server.url)
    const response = await api.get("/v1/meeting-templates")
    expectList(response, { total: response.body.items.length })
    expect(response.body.items.length).toBeGreaterThan(0)
    for (const template of response.body.items) {
      expect(template.id).toMatch(UUID)
      expect(typeof template.name).toBe("string")
      expect(typeof template.description).toBe("string")
      expect(["brief", "standard", "detailed"]).toContain(template.detail_level)
      expect(template.agenda_items.length).toBeGreaterThan(0)
      for (const item of template.agenda_items) {
        expect(typeof item.title).toBe("string")
        expect(["DISCUSSION", "QUESTIONS_TO_ANSWER", "BREAK", "ADJOURN"]).toContain(item.item_type)
      }
    }
    // Template ids are stable: another server instance lists the same ones.
    const again = await api.get("/v1/meeting-templates")
    expect(again.body).toEqual(response.body)
  })
})
