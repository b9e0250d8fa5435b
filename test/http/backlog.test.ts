/**
 * The backlog over HTTP: /v1/backlog-items (list, create), /{id} (get, update, delete), /{id}/assign and /history;
 * every documented failure (400 naming the field, 401, 403 insufficient_scope, 404 for another workspace's or a
 * closed item, 409 for an ended meeting), and the events an assignment records, read from the event stream.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, OPERATOR_TOKEN, type RunningServer, startServer } from "../support/server.js"
import {
  addParticipant,
  createAgendaItem,
  createMeeting,
  expectError,
  expectList,
  expectValidation,
  member,
  type Response,
  TIMESTAMP,
  UUID,
  workspace
} from "./fixtures.js"

let server: RunningServer

beforeAll(async () => {
  server = await startServer({ limits: { eventPollMs: 100 } })
}, 60_000)
afterAll(() => server?.close())

const FIELDS = [
  "created_at",
  "description",
  "id",
  "presenter_details",
  "presenters",
  "status",
  "talking_points",
  "title",
  "updated_at",
  "workspace_id"
]
const HISTORY_FIELDS = [...FIELDS, "assigned_at", "deleted_at", "destination_meeting_id"].sort()

type Api = ReturnType<typeof client>

const createItem = async (api: Api, body: Record<string, unknown> = {}) => {
  const response = await api.post("/v1/backlog-items", { title: "Pricing", ...body })
  if (response.status !== 201) throw new Error(`backlog item creation failed: ${response.status} ${response.text}`)
  return response.body
}

const titles = (response: Response) => response.body.items.map((item: { title: string }) => item.title)

describe("POST /v1/backlog-items", () => {
  it("creates an open item: 201 with every documented field, the caller's talking points and the presenters' details", async () => {
    const { ws, user, api } = await member(server.url)
    const colleague = await ws.addUser({ name: "Grace" })
    const response = await api.post("/v1/backlog-items", {
      title: "  Pricing page  ",
      description: "What we charge",
      talking_points: ["cheaper", "simpler"],
      presenters: [colleague.userId, user.userId]
    })
    expect(response.status).toBe(201)
    expect(Object.keys(response.body).sort()).toEqual(FIELDS)
    expect(response.body).toMatchObject({
      workspace_id: ws.workspaceId,
      title: "Pricing page",
      description: "What we charge",
      talking_points: ["cheaper", "simpler"],
      presenters: [colleague.userId, user.userId],
      presenter_details: [
        { user_id: colleague.userId, name: "Grace", email: colleague.email },
        { user_id: user.userId, name: user.name, email: user.email }
      ],
      status: "open"
    })
    expect(response.body.id).toMatch(UUID)
    expect(response.body.created_at).toMatch(TIMESTAMP)
    expect(response.body.updated_at).toBe(response.body.created_at)
    const read = await api.get(`/v1/backlog-items/${response.body.id}`)
    expect(read.status).toBe(200)
    expect(read.body).toEqual(response.body)
  })

  it("takes a title alone: description null, no talking points, no presenters", async () => {
    const { api } = await member(server.url)
    const response = await api.post("/v1/backlog-items", { title: "Bare" })
    expect(response.status).toBe(201)
    expect(response.body).toMatchObject({ title: "Bare", description: null, talking_points: [], presenters: [], presenter_details: [] })
  })

  it("does not honour Idempotency-Key: the same request twice makes two items, without Idempotent-Replayed", async () => {
    const { api } = await member(server.url)
    const headers = { "idempotency-key": "backlog-key-1" }
    const first = await api.post("/v1/backlog-items", { title: "Twice" }, headers)
    const second = await api.post("/v1/backlog-items", { title: "Twice" }, headers)
    expect([first.status, second.status]).toEqual([201, 201])
    expect(second.body.id).not.toBe(first.body.id)
    expect(second.headers.get("idempotent-replayed")).toBeNull()
    expectList(await api.get("/v1/backlog-items"), { total: 2 })
  })

  it("answers 400 validation_error naming the field, and creates nothing", async () => {
    const { api } = await member(server.url)
    const stranger = await member(server.url)
    expectValidation(await api.post("/v1/backlog-items", {}), "title")
    expectValidation(await api.post("/v1/backlog-items", { title: "   " }), "title")
    expectValidation(await api.post("/v1/backlog-items", { title: "x".repeat(501) }), "title")
    expectValidation(await api.post("/v1/backlog-items", { title: "nul\u0000" }), "title")
    expectValidation(await api.post("/v1/backlog-items", { title: "x", description: 7 }), "description")
    expectValidation(await api.post("/v1/backlog-items", { title: "x", talking_points: "one" }), "talking_points")
    expectValidation(await api.post("/v1/backlog-items", { title: "x", talking_points: Array.from({ length: 51 }, () => "p") }), "talking_points")
    expectValidation(await api.post("/v1/backlog-items", { title: "x", presenters: ["not-a-uuid"] }), "presenters")
    expectValidation(await api.post("/v1/backlog-items", { title: "x", presenters: [stranger.user.userId] }), "presenters[0]")
    expectValidation(await api.post("/v1/backlog-items", { title: "x", meeting_id: crypto.randomUUID() }), "meeting_id")
    expectValidation(await api.post("/v1/backlog-items", { title: "x", status: "assigned" }), "status")
    expectError(await api.post("/v1/backlog-items", "{broken"), 400, "bad_request")
    expectError(await api.post("/v1/backlog-items", { title: "x" }, { "content-type": "text/plain" }), 415, "unsupported_media_type")
    expectList(await api.get("/v1/backlog-items"), { total: 0 })
  })
})

describe("GET /v1/backlog-items", () => {
  it("lists the workspace's open items oldest first, for every member and the API key, in the list envelope", async () => {
    const { ws, api } = await member(server.url)
    const colleague = await ws.addUser()
    const key = await ws.addApiKey()
    await createItem(api, { title: "first" })
    await createItem(colleague.api, { title: "second" })
    await createItem(key.api, { title: "third" })
    for (const who of [api, colleague.api, key.api]) {
      const listed = await who.get("/v1/backlog-items")
      expectList(listed, { total: 3 })
      expect(titles(listed)).toEqual(["first", "second", "third"])
      for (const item of listed.body.items) expect(Object.keys(item).sort()).toEqual(FIELDS)
    }
    const page = await api.get("/v1/backlog-items?limit=2&offset=1")
    expectList(page, { total: 3, limit: 2, offset: 1 })
    expect(titles(page)).toEqual(["second", "third"])
    expectList(await api.get("/v1/backlog-items?limit=500&offset=-4"), { total: 3, limit: 100, offset: 0 })
    expectList(await api.get("/v1/backlog-items?limit=0"), { total: 3, limit: 20 })
    const past = await api.get("/v1/backlog-items?offset=10")
    expectList(past, { total: 3, offset: 10 })
    expect(past.body.items).toEqual([])
    expectValidation(await api.get("/v1/backlog-items?limit=abc"), "limit")
    // Another workspace's backlog is its own.
    expectList(await (await member(server.url)).api.get("/v1/backlog-items"), { total: 0 })
  })
})

describe("GET, PATCH, DELETE /v1/backlog-items/{id}", () => {
  it("PATCH changes only the fields given; talking points are the caller's own", async () => {
    const { ws, user, api } = await member(server.url)
    const colleague = await ws.addUser()
    const item = await createItem(api, { description: "kept", talking_points: ["mine"], presenters: [user.userId] })
    const renamed = await api.patch(`/v1/backlog-items/${item.id}`, { title: "Renamed" })
    expect(renamed.status).toBe(200)
    expect(renamed.body).toMatchObject({ ...item, title: "Renamed", updated_at: renamed.body.updated_at })
    expect(Date.parse(renamed.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(item.updated_at))

    const theirs = await colleague.api.patch(`/v1/backlog-items/${item.id}`, { talking_points: ["theirs"], presenters: [colleague.userId] })
    expect(theirs.status).toBe(200)
    expect(theirs.body).toMatchObject({ talking_points: ["theirs"], presenters: [colleague.userId], description: "kept" })
    expect((await api.get(`/v1/backlog-items/${item.id}`)).body).toMatchObject({ talking_points: ["mine"], presenters: [colleague.userId] })

    const cleared = await api.patch(`/v1/backlog-items/${item.id}`, { description: null })
    expect(cleared.body.description).toBeNull()

    expectValidation(await api.patch(`/v1/backlog-items/${item.id}`, { title: "" }), "title")
    expectValidation(await api.patch(`/v1/backlog-items/${item.id}`, { presenters: [crypto.randomUUID()] }), "presenters[0]")
    expectValidation(await api.patch(`/v1/backlog-items/${item.id}`, { status: "deleted" }), "status")
    expectValidation(await api.patch(`/v1/backlog-items/not-a-uuid`, { title: "x" }), "id")
    expectError(await api.patch(`/v1/backlog-items/${crypto.randomUUID()}`, { title: "x" }), 404, "not_found")
  })

  it("GET answers 400 for a malformed id and 404 for an unknown one or another workspace's", async () => {
    const { api } = await member(server.url)
    const item = await createItem(api)
    const stranger = await member(server.url, { role: "OWNER" })
    expectValidation(await api.get("/v1/backlog-items/not-a-uuid"), "id")
    expectError(await api.get(`/v1/backlog-items/${crypto.randomUUID()}`), 404, "not_found")
    expectError(await stranger.api.get(`/v1/backlog-items/${item.id}`), 404, "not_found")
    expectError(await stranger.api.patch(`/v1/backlog-items/${item.id}`, { title: "x" }), 404, "not_found")
    expectError(await stranger.api.delete(`/v1/backlog-items/${item.id}`), 404, "not_found")
    // Found in either case of its id.
    expect((await api.get(`/v1/backlog-items/${item.id.toUpperCase()}`)).body.id).toBe(item.id)
    expect((await api.get(`/v1/backlog-items/${item.id}`)).status).toBe(200)
  })

  it("DELETE answers 204 with no body; the item then reads 404, shows in the history with deleted_at, and a second DELETE is 404", async () => {
    const { api } = await member(server.url)
    const item = await createItem(api, { talking_points: ["note"] })
    const kept = await createItem(api, { title: "Kept" })
    const deleted = await api.delete(`/v1/backlog-items/${item.id}`)
    expect(deleted.status).toBe(204)
    expect(deleted.text).toBe("")
    expectError(await api.get(`/v1/backlog-items/${item.id}`), 404, "not_found")
    expectError(await api.patch(`/v1/backlog-items/${item.id}`, { title: "x" }), 404, "not_found")
    expectError(await api.delete(`/v1/backlog-items/${item.id}`), 404, "not_found")
    expect((await api.get("/v1/backlog-items")).body.items.map((i: { id: string }) => i.id)).toEqual([kept.id])
    const history = await api.get("/v1/backlog-items/history")
    expectList(history, { total: 1 })
    expect(Object.keys(history.body.items[0]).sort()).toEqual(HISTORY_FIELDS)
    expect(history.body.items[0]).toMatchObject({
      id: item.id,
      title: item.title,
      talking_points: ["note"],
      status: "deleted",
      assigned_at: null,
      destination_meeting_id: null
    })
    expect(history.body.items[0].deleted_at).toMatch(TIMESTAMP)
    expect(history.body.items[0].updated_at).toBe(history.body.items[0].deleted_at)
  })
})

describe("POST /v1/backlog-items/{id}/assign", () => {
  it("answers 200 {agenda_item, backlog_item}: the agenda item appended on the meeting, the backlog item closed into the history", async () => {
    const { ws, user, api } = await member(server.url)
    const colleague = await ws.addUser({ name: "Grace" })
    const meeting = await createMeeting(api)
    await addParticipant(api, meeting.id, colleague.userId, "EDITOR")
    await createAgendaItem(api, meeting.id, { title: "Existing", sequence: "7.5" })
    const item = await createItem(api, {
      title: "Pricing",
      description: "What we charge",
      talking_points: ["mine"],
      presenters: [colleague.userId, user.userId]
    })
    await colleague.api.patch(`/v1/backlog-items/${item.id}`, { talking_points: ["theirs"] })

    const response = await api.post(`/v1/backlog-items/${item.id}/assign`, { destination_meeting_id: meeting.id })
    expect(response.status).toBe(200)
    expect(Object.keys(response.body).sort()).toEqual(["agenda_item", "backlog_item"])
    const { agenda_item, backlog_item } = response.body
    expect(agenda_item).toMatchObject({
      meeting_id: meeting.id,
      title: "Pricing",
      description: "What we charge",
      item_type: "DISCUSSION",
      sequence: "8",
      talking_points: ["mine"],
      presenters: [colleague.userId, user.userId],
      presenter_details: [{ user_id: colleague.userId, name: "Grace" }, { user_id: user.userId }]
    })
    expect(Object.keys(backlog_item).sort()).toEqual(HISTORY_FIELDS)
    expect(backlog_item).toMatchObject({
      id: item.id,
      status: "assigned",
      destination_meeting_id: meeting.id,
      deleted_at: null,
      talking_points: ["mine"]
    })
    expect(backlog_item.assigned_at).toMatch(TIMESTAMP)

    // The agenda item is a real one: each person finds their own talking points on it.
    expect((await api.get(`/v1/agenda-items/${agenda_item.id}`)).body).toEqual(agenda_item)
    expect((await colleague.api.get(`/v1/agenda-items/${agenda_item.id}`)).body.talking_points).toEqual(["theirs"])
    expect(titles(await api.get(`/v1/agenda-items?meeting_id=${meeting.id}`))).toEqual(["Existing", "Pricing"])

    // The backlog item left the backlog for the history.
    expectError(await api.get(`/v1/backlog-items/${item.id}`), 404, "not_found")
    expectList(await api.get("/v1/backlog-items"), { total: 0 })
    const history = await api.get("/v1/backlog-items/history")
    expectList(history, { total: 1 })
    expect(history.body.items[0]).toEqual(backlog_item)
    // Closed: assigning it again, changing or deleting it is 404.
    expectError(await api.post(`/v1/backlog-items/${item.id}/assign`, { destination_meeting_id: meeting.id }), 404, "not_found")
    expectError(await api.patch(`/v1/backlog-items/${item.id}`, { title: "x" }), 404, "not_found")
    expectError(await api.delete(`/v1/backlog-items/${item.id}`), 404, "not_found")
    expect(titles(await api.get(`/v1/agenda-items?meeting_id=${meeting.id}`))).toEqual(["Existing", "Pricing"])
  })

  it("refuses a bad body with 400 naming the field", async () => {
    const { api } = await member(server.url)
    const item = await createItem(api)
    const path = `/v1/backlog-items/${item.id}/assign`
    expectValidation(await api.post(path, {}), "destination_meeting_id")
    expectValidation(await api.post(path, { destination_meeting_id: "not-a-uuid" }), "destination_meeting_id")
    expectValidation(await api.post(path, { destination_meeting_id: crypto.randomUUID(), item_type: "BREAK" }), "item_type")
    expectValidation(await api.post("/v1/backlog-items/not-a-uuid/assign", { destination_meeting_id: crypto.randomUUID() }), "id")
    expect((await api.get(`/v1/backlog-items/${item.id}`)).status).toBe(200)
  })

  it("answers 404 for a missing or closed item and for a meeting that is missing, another workspace's or not visible; 403 for a VIEWER; 409 for an ended meeting; nothing changes", async () => {
    const { ws, user, api } = await member(server.url)
    const owner = await ws.addUser({ role: "OWNER" })
    const item = await createItem(api)
    const stranger = await member(server.url, { role: "OWNER" })
    const theirs = await createMeeting(stranger.api)
    const notMine = await createMeeting(owner.api, { title: "Owner's" })
    const viewed = await createMeeting(owner.api, { title: "Viewed" })
    await addParticipant(owner.api, viewed.id, user.userId, "VIEWER")
    const ended = await createMeeting(api, { title: "Over", is_instant: true })
    expect((await api.patch(`/v1/meetings/${ended.id}`, { status: "ended" })).status).toBe(200)
    const assign = (meetingId: string, who = api, id: string = item.id) =>
      who.post(`/v1/backlog-items/${id}/assign`, { destination_meeting_id: meetingId })

    expectError(await assign(crypto.randomUUID()), 404, "not_found")
    expectError(await assign(theirs.id), 404, "not_found")
    expectError(await assign(notMine.id), 404, "not_found")
    expectError(await assign(viewed.id), 403, "insufficient_scope")
    const conflict = await assign(ended.id)
    expectError(conflict, 409, "conflict")
    expect(conflict.body.error).toContain("ended")
    expectError(await assign(ended.id, api, crypto.randomUUID()), 404, "not_found")
    expectError(await assign(theirs.id, stranger.api), 404, "not_found")

    expect((await api.get(`/v1/backlog-items/${item.id}`)).status).toBe(200)
    expectList(await api.get("/v1/backlog-items/history"), { total: 0 })
    for (const meeting of [notMine, viewed]) expectList(await owner.api.get(`/v1/agenda-items?meeting_id=${meeting.id}`), { total: 0 })
    expectList(await api.get(`/v1/agenda-items?meeting_id=${ended.id}`), { total: 0 })

    // The workspace's OWNER may put it on any meeting of the workspace.
    const assigned = await assign(notMine.id, owner.api)
    expect(assigned.status).toBe(200)
    expect(assigned.body.agenda_item.meeting_id).toBe(notMine.id)
  })

  it("of concurrent assignments of one item, one succeeds and the others answer 404: one agenda item is made", async () => {
    const { api } = await member(server.url)
    const meetings = [await createMeeting(api, { title: "One" }), await createMeeting(api, { title: "Two" })]
    const item = await createItem(api)
    const answers = await Promise.all(
      [0, 1, 2, 3, 4].map((n) => api.post(`/v1/backlog-items/${item.id}/assign`, { destination_meeting_id: meetings[n % 2]!.id }))
    )
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 404, 404, 404, 404])
    for (const answer of answers.filter((a) => a.status === 404)) expectError(answer, 404, "not_found")
    const winner = answers.find((answer) => answer.status === 200)!
    const counts = await Promise.all(meetings.map(async (meeting) => (await api.get(`/v1/agenda-items?meeting_id=${meeting.id}`)).body.total))
    expect(counts.reduce((a, b) => a + b, 0)).toBe(1)
    expect((await api.get("/v1/backlog-items/history")).body.items).toEqual([winner.body.backlog_item])
  })

  it("records agenda_item.created and backlog_item.assigned, which the event stream delivers", async () => {
    const { user, api } = await member(server.url)
    const meeting = await createMeeting(api)
    const item = await createItem(api, { talking_points: ["private"] })
    const controller = new AbortController()
    const stream = await fetch(`${server.url}/v1/user/events`, { headers: { authorization: `Bearer ${user.token}` }, signal: controller.signal })
    expect(stream.status).toBe(200)
    let text = ""
    const reading = (async () => {
      const decoder = new TextDecoder()
      try {
        for await (const chunk of stream.body!) text += decoder.decode(chunk as Uint8Array, { stream: true })
      } catch {
        // aborted below
      }
    })()
    const frames = () =>
      text.split("\n\n").filter((block) => block.startsWith("id: ")).map((block) => {
        const lines = block.split("\n")
        return { event: lines[1]!.slice(7), data: JSON.parse(lines[2]!.slice(6)) as Record<string, unknown> }
      })
    try {
      const assigned = await api.post(`/v1/backlog-items/${item.id}/assign`, { destination_meeting_id: meeting.id })
      expect(assigned.status).toBe(200)
      const deadline = Date.now() + 10_000
      while (!frames().some((frame) => frame.event === "backlog_item.assigned") && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
      const seen = frames().filter((frame) => frame.event === "agenda_item.created" || frame.event === "backlog_item.assigned")
      expect(seen.map((frame) => frame.event)).toEqual(["agenda_item.created", "backlog_item.assigned"])
      expect(seen[0]!.data).toMatchObject({ event_type: "agenda_item.created", actor_user_id: user.userId, data: { id: assigned.body.agenda_item.id } })
      const backlogEvent = seen[1]!.data as { data: Record<string, unknown> }
      expect(backlogEvent).toMatchObject({ event_type: "backlog_item.assigned", actor_user_id: user.userId })
      expect(backlogEvent.data).toMatchObject({
        id: item.id,
        status: "assigned",
        destination_meeting_id: meeting.id,
        agenda_item_id: assigned.body.agenda_item.id
      })
      expect(backlogEvent.data).not.toHaveProperty("talking_points")
    } finally {
      controller.abort()
      await reading
    }
  })
})

describe("GET /v1/backlog-items/history", () => {
  it("lists assigned and deleted items, most recently closed first, paged", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api)
    const [a, b, c] = [await createItem(api, { title: "a" }), await createItem(api, { title: "b" }), await createItem(api, { title: "c" })]
    await createItem(api, { title: "still open" })
    expect((await api.delete(`/v1/backlog-items/${b.id}`)).status).toBe(204)
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect((await api.post(`/v1/backlog-items/${a.id}/assign`, { destination_meeting_id: meeting.id })).status).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect((await api.delete(`/v1/backlog-items/${c.id}`)).status).toBe(204)
    const history = await api.get("/v1/backlog-items/history")
    expectList(history, { total: 3 })
    expect(history.body.items.map((item: { title: string; status: string }) => [item.title, item.status]))
      .toEqual([["c", "deleted"], ["a", "assigned"], ["b", "deleted"]])
    const page = await api.get("/v1/backlog-items/history?limit=1&offset=1")
    expectList(page, { total: 3, limit: 1, offset: 1 })
    expect(titles(page)).toEqual(["a"])
    expectValidation(await api.get("/v1/backlog-items/history?offset=x"), "offset")
    expectList(await (await member(server.url)).api.get("/v1/backlog-items/history"), { total: 0 })
  })
})

describe("authentication and scopes", () => {
  const endpoints = (id: string, meetingId: string) => [
    { method: "GET", path: "/v1/backlog-items", scope: "meetings:read" },
    { method: "GET", path: "/v1/backlog-items/history", scope: "meetings:read" },
    { method: "GET", path: `/v1/backlog-items/${id}`, scope: "meetings:read" },
    { method: "POST", path: "/v1/backlog-items", body: { title: "x" }, scope: "meetings:write" },
    { method: "PATCH", path: `/v1/backlog-items/${id}`, body: { title: "x" }, scope: "meetings:write" },
    { method: "DELETE", path: `/v1/backlog-items/${id}`, scope: "meetings:write" },
    { method: "POST", path: `/v1/backlog-items/${id}/assign`, body: { destination_meeting_id: meetingId }, scope: "meetings:write" }
  ] as const

  it("answers 401 without a token or with a bad one on every endpoint", async () => {
    const { api } = await member(server.url)
    const item = await createItem(api)
    for (const endpoint of endpoints(item.id, crypto.randomUUID())) {
      const body = "body" in endpoint ? endpoint.body : undefined
      expectError(await client(server.url).call(endpoint.method, endpoint.path, body), 401, "unauthorized")
      expectError(await client(server.url, "garbage").call(endpoint.method, endpoint.path, body), 401, "invalid_token")
    }
  })

  it("answers 403 insufficient_scope without meetings:read (reads) or meetings:write (changes), and changes nothing", async () => {
    const ws = await workspace(server.url)
    const owner = await ws.addUser({ role: "OWNER" })
    const meeting = await createMeeting(owner.api)
    const item = await createItem(owner.api)
    for (const scope of ["meetings:read", "meetings:write"]) {
      const narrow = await ws.addUser({ role: "OWNER", scopes: ["meetings:read", "meetings:write", "action-items:read"].filter((s) => s !== scope) })
      for (const endpoint of endpoints(item.id, meeting.id).filter((e) => e.scope === scope)) {
        const response = await narrow.api.call(endpoint.method, endpoint.path, "body" in endpoint ? endpoint.body : undefined)
        expectError(response, 403, "insufficient_scope")
        expect(response.headers.get("www-authenticate")).toContain(scope)
      }
    }
    expect((await owner.api.get(`/v1/backlog-items/${item.id}`)).body).toEqual(item)
    expectList(await owner.api.get("/v1/backlog-items"), { total: 1 })
  })
})

describe("cascades", () => {
  it("deleting a workspace (operator) deletes its backlog, open and closed, with the talking points", async () => {
    const { ws, user, api } = await member(server.url)
    const meeting = await createMeeting(api)
    await createItem(api, { talking_points: ["open"], presenters: [user.userId] })
    const moved = await createItem(api, { talking_points: ["moved"] })
    expect((await api.post(`/v1/backlog-items/${moved.id}/assign`, { destination_meeting_id: meeting.id })).status).toBe(200)
    const dropped = await createItem(api)
    expect((await api.delete(`/v1/backlog-items/${dropped.id}`)).status).toBe(204)
    const operatorApi = client(server.url, OPERATOR_TOKEN)
    expect((await operatorApi.delete(`/operator/v1/workspaces/${ws.workspaceId}`)).status).toBe(204)
    expectError(await operatorApi.get(`/operator/v1/workspaces/${ws.workspaceId}`), 404, "not_found")
    expectError(await api.get("/v1/backlog-items"), 401, "invalid_token")
  })

  it("a removed member stops presenting", async () => {
    const { ws, user, api } = await member(server.url)
    const admin = await ws.addUser({ role: "ADMIN" })
    const leaving = await ws.addUser({ name: "Leaving" })
    const item = await createItem(api, { presenters: [leaving.userId, user.userId] })
    await leaving.api.patch(`/v1/backlog-items/${item.id}`, { talking_points: ["theirs"] })
    expect((await admin.api.delete(`/v1/workspace/members/${leaving.userId}`)).status).toBe(204)
    const read = await api.get(`/v1/backlog-items/${item.id}`)
    expect(read.body).toMatchObject({ presenters: [user.userId], presenter_details: [{ user_id: user.userId }] })
  })
})
