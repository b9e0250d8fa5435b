/**
 * The calendar (first-party document, "Calendar"): GET /v1/calendar/events in a window [start_date, end_date), its
 * order, paging and errors, and GET /v1/calendar/events/{id}; whose meetings are on whose calendar.
 */
import { beforeAll, describe, expect, it } from "vitest"
import { client, type Client } from "../support/server.js"
import {
  addParticipant,
  createMeeting,
  expectError,
  expectList,
  expectValidation,
  member,
  TIMESTAMP,
  useServer,
  workspace
} from "./fixtures.js"

const server = useServer()

/** The window most tests ask about: one week. */
const FROM = "2031-06-01T00:00:00.000Z"
const TO = "2031-06-08T00:00:00.000Z"

/** An instant `ms` milliseconds after `iso`, in the form the API answers. */
const shifted = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString()
const HOUR = 3_600_000

const FIELDS = ["end_time", "id", "meeting_id", "start_time", "status", "title"]

const eventsPath = (query: Record<string, string | number>) =>
  `/v1/calendar/events?${new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]))}`

/** GET /v1/calendar/events over the window (FROM, TO unless given), asserting 200 and the envelope. */
const listEvents = async (api: Client, query: Record<string, string | number> = {}) => {
  const response = await api.get(eventsPath({ start_date: FROM, end_date: TO, ...query }))
  expect(response.status, response.text).toBe(200)
  expect(Object.keys(response.body).sort()).toEqual(["items", "limit", "offset", "total"])
  return response.body as { items: Array<Record<string, unknown>>; total: number; limit: number; offset: number }
}

const idsOf = (items: ReadonlyArray<Record<string, unknown>>) => items.map((item) => item.id)

/** The event a meeting (as the API answered it) is on the calendar. */
const eventOf = (meeting: Record<string, unknown>) => ({
  id: meeting.id,
  meeting_id: meeting.id,
  title: meeting.title,
  status: meeting.status,
  start_time: meeting.start_time,
  end_time: meeting.end_time
})

describe("GET /v1/calendar/events", () => {
  it("lists the caller's meetings that start inside [start_date, end_date), soonest first, with every field", async () => {
    const { api } = await member(server.url)
    const atStart = await createMeeting(api, { title: "At the start", start_time: FROM, end_time: shifted(FROM, HOUR) })
    const noEnd = await createMeeting(api, { title: "Open end", start_time: shifted(FROM, 50 * HOUR) })
    const lastMs = await createMeeting(api, { title: "Last millisecond", start_time: shifted(TO, -1), end_time: shifted(TO, 2 * HOUR) })
    const cancelled = await createMeeting(api, { title: "Called off", start_time: shifted(FROM, 26 * HOUR) })
    expect((await api.patch(`/v1/meetings/${cancelled.id}`, { status: "cancelled" })).status).toBe(200)
    // Outside: starting at the end, starting before the window (running into it), without a start time.
    await createMeeting(api, { title: "At the end", start_time: TO, end_time: shifted(TO, HOUR) })
    await createMeeting(api, { title: "Started before", start_time: shifted(FROM, -1), end_time: shifted(FROM, 3 * HOUR) })
    await createMeeting(api, { title: "Unscheduled" })
    await createMeeting(api, { title: "Only an end", end_time: shifted(FROM, HOUR) })

    const page = await listEvents(api)
    expect(page).toMatchObject({ total: 4, limit: 25, offset: 0 })
    const cancelledNow = (await api.get(`/v1/meetings/${cancelled.id}`)).body
    expect(page.items).toEqual([eventOf(atStart), eventOf(cancelledNow), eventOf(noEnd), eventOf(lastMs)])
    for (const item of page.items) {
      expect(Object.keys(item).sort()).toEqual(FIELDS)
      expect(item.start_time).toMatch(TIMESTAMP)
    }
    expect(page.items[1]).toMatchObject({ status: "cancelled" })
    expect(page.items[2]).toMatchObject({ end_time: null })
    // The event of each is also answered by id.
    for (const item of page.items) expect((await api.get(`/v1/calendar/events/${item.id}`)).body).toEqual(item)
  })

  it("reads start_date and end_date as instants: any offset, none (UTC), fractions of a second", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api, { start_time: "2031-06-01T10:00:00Z" })
    const found = async (start_date: string, end_date: string) => idsOf((await listEvents(api, { start_date, end_date })).items)
    expect(await found("2031-06-01T12:00:00+02:00", "2031-06-01T12:00:00.001+02:00")).toEqual([meeting.id])
    expect(await found("2031-06-01T10:00:00.001Z", "2031-06-02T00:00:00Z")).toEqual([])
    expect(await found("2031-06-01T10:00:00", "2031-06-01T10:00:01")).toEqual([meeting.id])
    expect(await found("2031-06-01T05:00:00-05:00", "2031-06-01T10:00:00.001Z")).toEqual([meeting.id])
    expect(await found("2031-06-01T00:00:00Z", "2031-06-01T09:59:59.999Z")).toEqual([])
  })

  it("orders by start time, then id: ascending by default and with direction=asc, the exact reverse with direction=desc", async () => {
    const { api } = await member(server.url)
    const same = shifted(FROM, 10 * HOUR)
    const tied = [
      await createMeeting(api, { title: "Tie 1", start_time: same }),
      await createMeeting(api, { title: "Tie 2", start_time: same }),
      await createMeeting(api, { title: "Tie 3", start_time: same })
    ]
    const later = await createMeeting(api, { title: "Later", start_time: shifted(FROM, 20 * HOUR) })
    const earlier = await createMeeting(api, { title: "Earlier", start_time: shifted(FROM, HOUR) })
    const ascending = [earlier.id, ...tied.map((m) => m.id as string).sort(), later.id]
    expect(idsOf((await listEvents(api)).items)).toEqual(ascending)
    expect(idsOf((await listEvents(api, { direction: "asc" })).items)).toEqual(ascending)
    expect(idsOf((await listEvents(api, { direction: "desc" })).items)).toEqual([...ascending].reverse())
    // Pages follow the direction.
    const page = await listEvents(api, { direction: "desc", limit: 2, offset: 1 })
    expect(page).toMatchObject({ total: 5, limit: 2, offset: 1 })
    expect(idsOf(page.items)).toEqual([...ascending].reverse().slice(1, 3))
  })

  describe("paging (30 events)", () => {
    let api: Client
    let ascending: Array<string>

    beforeAll(async () => {
      api = (await member(server.url)).api
      const created = await Promise.all(Array.from({ length: 30 }, (_, i) =>
        createMeeting(api, { title: `Event ${i}`, start_time: shifted(FROM, (i + 1) * 60_000) })))
      ascending = created.map((m) => m.id)
    })

    const page = (query: Record<string, string | number>) => api.get(eventsPath({ start_date: FROM, end_date: TO, ...query }))

    it("defaults to limit 25 and offset 0; a missing or non-positive limit reads as 25", async () => {
      for (const query of [{}, { limit: 0 }, { limit: -3 }, { limit: "" }]) {
        const response = await page(query)
        expectList(response, { total: 30, limit: 25, offset: 0 })
        expect(idsOf(response.body.items)).toEqual(ascending.slice(0, 25))
      }
    })

    it("caps a limit above 100 at 100, and applies one in range with an offset", async () => {
      for (const limit of [101, 500]) {
        const response = await page({ limit })
        expectList(response, { total: 30, limit: 100, offset: 0 })
        expect(idsOf(response.body.items)).toEqual(ascending)
      }
      const middle = await page({ limit: 10, offset: 10 })
      expectList(middle, { total: 30, limit: 10, offset: 10 })
      expect(idsOf(middle.body.items)).toEqual(ascending.slice(10, 20))
    })

    it("reads a negative offset as 0, and answers an offset past the end with no items and the total", async () => {
      const negative = await page({ limit: 5, offset: -4 })
      expectList(negative, { total: 30, limit: 5, offset: 0 })
      expect(idsOf(negative.body.items)).toEqual(ascending.slice(0, 5))
      const past = await page({ offset: 30 })
      expectList(past, { total: 30, limit: 25, offset: 30 })
      expect(past.body.items).toEqual([])
    })
  })

  it("answers 400 validation_error naming start_date or end_date when one is missing or not an RFC 3339 date and time", async () => {
    const { api } = await member(server.url)
    expectValidation(await api.get(eventsPath({ end_date: TO })), "start_date")
    expectValidation(await api.get(eventsPath({ start_date: FROM })), "end_date")
    expectValidation(await api.get("/v1/calendar/events"), "start_date")
    for (const bad of ["", "2031-06-01", "yesterday", "2031-02-30T00:00:00Z", "2031-06-01T25:00:00Z", "1938736800", "06/01/2031 10:00"]) {
      expectValidation(await api.get(eventsPath({ start_date: bad, end_date: TO })), "start_date")
      expectValidation(await api.get(eventsPath({ start_date: FROM, end_date: bad })), "end_date")
    }
    // Given twice, a parameter is no single instant either.
    expectValidation(await api.get(`${eventsPath({ start_date: FROM, end_date: TO })}&start_date=${FROM}`), "start_date")
  })

  it("answers 400 validation_error naming end_date when it is not after start_date", async () => {
    const { api } = await member(server.url)
    for (const end_date of [FROM, shifted(FROM, -1), "2031-06-01T02:00:00+02:00"]) {
      const response = await api.get(eventsPath({ start_date: FROM, end_date }))
      expectValidation(response, "end_date")
      expect(response.body.error).toContain("start_date")
    }
  })

  it("answers 400 validation_error naming direction when it is neither asc nor desc, and limit or offset when not integers", async () => {
    const { api } = await member(server.url)
    for (const direction of ["ASC", "Desc", "up", "", "asc,desc"]) {
      const response = await api.get(eventsPath({ start_date: FROM, end_date: TO, direction }))
      expectValidation(response, "direction")
      expect(response.body.error).toContain("asc")
    }
    expectValidation(await api.get(eventsPath({ start_date: FROM, end_date: TO, limit: "ten" })), "limit")
    expectValidation(await api.get(eventsPath({ start_date: FROM, end_date: TO, offset: "1.5" })), "offset")
  })
})

describe("GET /v1/calendar/events/{id}", () => {
  it("answers the event of a meeting on the caller's calendar; its id is the meeting's", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api, { title: "Review", start_time: FROM, end_time: shifted(FROM, HOUR) })
    const response = await api.get(`/v1/calendar/events/${meeting.id}`)
    expect(response.status).toBe(200)
    expect(response.body).toEqual(eventOf(meeting))
    // The id is read in either case and answered in lower case.
    expect((await api.get(`/v1/calendar/events/${meeting.id.toUpperCase()}`)).body).toEqual(eventOf(meeting))
  })

  it("follows the meeting: a changed title and time, a cancellation; without a start time it is no event", async () => {
    const { api } = await member(server.url)
    const meeting = await createMeeting(api, { title: "Draft", start_time: FROM })
    const moved = (await api.patch(`/v1/meetings/${meeting.id}`, { title: "Final", start_time: shifted(TO, HOUR), status: "cancelled" })).body
    expect((await api.get(`/v1/calendar/events/${meeting.id}`)).body).toEqual(eventOf(moved))
    expect(moved).toMatchObject({ title: "Final", status: "cancelled" })
    expect((await listEvents(api)).items).toEqual([])
    expect((await api.patch(`/v1/meetings/${meeting.id}`, { start_time: null })).status).toBe(200)
    expectError(await api.get(`/v1/calendar/events/${meeting.id}`), 404, "not_found")
  })

  it("answers 404 not_found for an unknown id, and 400 naming id for one that is not a UUID", async () => {
    const { api } = await member(server.url)
    expectError(await api.get(`/v1/calendar/events/${crypto.randomUUID()}`), 404, "not_found")
    expectValidation(await api.get("/v1/calendar/events/not-a-uuid"), "id")
  })
})

describe("whose calendar", () => {
  it("holds the meetings the user takes part in: another user's and another workspace's are invisible (404 by id)", async () => {
    const ws = await workspace(server.url)
    const ann = await ws.addUser()
    const bob = await ws.addUser()
    const anns = await createMeeting(ann.api, { title: "Ann's", start_time: shifted(FROM, HOUR) })
    const bobs = await createMeeting(bob.api, { title: "Bob's", start_time: shifted(FROM, 2 * HOUR) })
    const elsewhere = await member(server.url)
    const theirs = await createMeeting(elsewhere.api, { title: "Elsewhere", start_time: shifted(FROM, 3 * HOUR) })

    expect(idsOf((await listEvents(ann.api)).items)).toEqual([anns.id])
    expect(idsOf((await listEvents(bob.api)).items)).toEqual([bobs.id])
    expect(idsOf((await listEvents(elsewhere.api)).items)).toEqual([theirs.id])
    expectError(await ann.api.get(`/v1/calendar/events/${bobs.id}`), 404, "not_found")
    expectError(await ann.api.get(`/v1/calendar/events/${theirs.id}`), 404, "not_found")
    expectError(await elsewhere.api.get(`/v1/calendar/events/${anns.id}`), 404, "not_found")
  })

  it("adds a meeting when the user is made a participant (any role) and drops it when they are removed", async () => {
    const ws = await workspace(server.url)
    const ann = await ws.addUser()
    const bob = await ws.addUser()
    const meeting = await createMeeting(ann.api, { title: "Shared", start_time: shifted(FROM, HOUR) })
    expect((await listEvents(bob.api)).items).toEqual([])
    await addParticipant(ann.api, meeting.id, bob.userId, "VIEWER")
    expect((await listEvents(bob.api)).items).toEqual([eventOf(meeting)])
    expect((await bob.api.get(`/v1/calendar/events/${meeting.id}`)).status).toBe(200)
    expect((await ann.api.delete(`/v1/meetings/${meeting.id}/participants/${bob.userId}`)).status).toBe(204)
    expect((await listEvents(bob.api)).items).toEqual([])
    expectError(await bob.api.get(`/v1/calendar/events/${meeting.id}`), 404, "not_found")
  })

  it("of a workspace OWNER holds their own meetings only, though they may read every meeting", async () => {
    const ws = await workspace(server.url)
    const owner = await ws.addUser({ role: "OWNER" })
    const ann = await ws.addUser()
    const owners = await createMeeting(owner.api, { title: "Board", start_time: shifted(FROM, HOUR) })
    const anns = await createMeeting(ann.api, { title: "Ann's", start_time: shifted(FROM, 2 * HOUR) })
    expect((await owner.api.get(`/v1/meetings/${anns.id}`)).status).toBe(200)
    expect(idsOf((await listEvents(owner.api)).items)).toEqual([owners.id])
    expectError(await owner.api.get(`/v1/calendar/events/${anns.id}`), 404, "not_found")
  })

  it("of a workspace API key holds every meeting of the workspace with a start time, and none of another", async () => {
    const ws = await workspace(server.url)
    const key = await ws.addApiKey()
    const ann = await ws.addUser()
    const anns = await createMeeting(ann.api, { title: "Ann's", start_time: shifted(FROM, 2 * HOUR) })
    const keys = await createMeeting(key.api, { title: "The key's", start_time: shifted(FROM, HOUR) })
    await createMeeting(key.api, { title: "Unscheduled" })
    const other = await member(server.url)
    const theirs = await createMeeting(other.api, { title: "Elsewhere", start_time: shifted(FROM, HOUR) })
    expect(idsOf((await listEvents(key.api)).items)).toEqual([keys.id, anns.id])
    expect((await key.api.get(`/v1/calendar/events/${anns.id}`)).body).toEqual(eventOf(anns))
    expectError(await key.api.get(`/v1/calendar/events/${theirs.id}`), 404, "not_found")
    // A meeting made with the key has no participant: it is on no user's calendar.
    expect(idsOf((await listEvents(ann.api)).items)).toEqual([anns.id])
  })
})

describe("authentication and scope", () => {
  it("answers 401 on both endpoints without a token or with an invalid one, before looking at the query", async () => {
    const paths = ["/v1/calendar/events", eventsPath({ start_date: FROM, end_date: TO }), `/v1/calendar/events/${crypto.randomUUID()}`]
    for (const path of paths) {
      expectError(await client(server.url).get(path), 401, "unauthorized")
      expectError(await client(server.url, "svc_pat_v1_not-a-token").get(path), 401, "invalid_token")
    }
  })

  it("answers 403 insufficient_scope on both endpoints to a token without calendar:read", async () => {
    const ws = await workspace(server.url)
    const owner = await ws.addUser({ role: "OWNER" })
    const meeting = await createMeeting(owner.api, { start_time: FROM })
    const narrow = await ws.addUser({ role: "OWNER", scopes: ["meetings:read", "meetings:write", "action-items:read"] })
    await addParticipant(owner.api, meeting.id, narrow.userId, "EDITOR")
    for (const response of [await narrow.api.get(eventsPath({ start_date: FROM, end_date: TO })), await narrow.api.get(`/v1/calendar/events/${meeting.id}`)]) {
      expectError(response, 403, "insufficient_scope")
      expect(response.headers.get("www-authenticate")).toContain(`scope="calendar:read"`)
    }
    // calendar:read alone is enough.
    const reader = await ws.addUser({ scopes: ["calendar:read"] })
    await addParticipant(owner.api, meeting.id, reader.userId, "VIEWER")
    expect(idsOf((await listEvents(reader.api)).items)).toEqual([meeting.id])
  })
})
