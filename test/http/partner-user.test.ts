/**
 * The partner API's user context (/v1/partner/user/*, issue 12) end to end on a real socket, with access tokens of
 * the partner OAuth server obtained by the real flow (oauth4webapi, browser sign-in and consent over HTTP): the
 * meeting list, agenda items (the four types, sequences, private talking points, the real presenters on update),
 * backlog items (history, assignment), attachments with their pre-signed download URLs (absolute under the base URL,
 * no token, byte for byte, refused when any part changes, expired or deleted), the SRT transcript export behind the
 * ELITE plan, next steps and action buttons, Idempotency-Key (keys of the app and user, surviving a refresh), and bad
 * input. Every failure is asserted in the partner envelope `{error, code, request_id}` exactly.
 *
 * One server for the file (its base URL is its real port: the pre-signed URL is absolute under it) and few OAuth
 * flows: the actors' tokens are made once and shared by the tests, which each make their own meetings.
 *
 * The tests that fail on the product as first built say why next to them: the upload's own refusals (413, 415, a
 * malformed multipart body) answered in the first-party envelope, and the action-button trigger not asking for
 * meetings:write.
 */
import { createHash, randomBytes } from "node:crypto"
import * as oauth from "oauth4webapi"
import { beforeAll, describe, expect, it } from "vitest"
import { client, type Client, OPERATOR_TOKEN } from "../support/server.js"
import { TIMESTAMP, UUID } from "./fixtures.js"
import { send } from "./fuzz/wire.js"
import { type App, partnerFlow } from "./oauth/partner-support.js"
import { newUser, type PasswordUser, useOAuthServer } from "./oauth/support.js"

const server = useOAuthServer()
const flow = partnerFlow(server)

const USER = "/v1/partner/user"
const ENVELOPE_KEYS = ["code", "error", "request_id"]
const LIST_KEYS = ["items", "limit", "offset", "total"]
const MEETING_ITEM_KEYS = ["id", "scheduled_end", "scheduled_start", "status", "title"]
const AGENDA_ITEM_KEYS = [
  "created_at", "description", "id", "item_type", "meeting_id", "presenter_details", "presenters", "sequence", "talking_points",
  "title", "updated_at", "workspace_id"
]
const BACKLOG_ITEM_KEYS = [
  "created_at", "description", "id", "presenter_details", "presenters", "status", "talking_points", "title", "updated_at",
  "workspace_id"
]
const ATTACHMENT_KEYS = [
  "content_type", "created_at", "download_url", "download_url_expires_at", "file_name", "id", "meeting_id", "sha256", "size"
]
const ITEM_TYPES = ["DISCUSSION", "QUESTIONS_TO_ANSWER", "BREAK", "ADJOURN"] as const

type Answer = Awaited<ReturnType<Client["get"]>>

/** The partner envelope, exactly: the status and code, `{error, code, request_id}` and nothing else (no `message`). */
const expectPartnerError = (answer: Answer, status: number, code: string) => {
  expect({ status: answer.status, code: answer.body?.code }, answer.text).toEqual({ status, code })
  expect(answer.headers.get("content-type") ?? "").toContain("application/json")
  expect(Object.keys(answer.body).sort()).toEqual(ENVELOPE_KEYS)
  expect(typeof answer.body.error).toBe("string")
  expect(answer.body.error.length).toBeGreaterThan(0)
  expect(answer.body.request_id).toBe(answer.headers.get("x-request-id"))
}

/** A GET with no headers at all (a pre-signed URL), or with the headers given; the body as bytes, and parsed when JSON. */
const fetchBytes = async (url: string, headers: Record<string, string> = {}) => {
  const response = await fetch(url, { headers })
  const bytes = Buffer.from(await response.arrayBuffer())
  const text = bytes.toString("utf8")
  const json = (response.headers.get("content-type") ?? "").includes("application/json") && text.length > 0
  return { status: response.status, headers: response.headers, bytes, text, body: json ? JSON.parse(text) : text }
}

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

/** Someone acting through the partner app: their first-party client (to set up data) and their partner client. */
interface Actor {
  readonly user: PasswordUser
  readonly api: Client
  /** The first-party token of `api`. */
  readonly apiToken: string
  readonly partner: Client
  readonly tokens: oauth.TokenEndpointResponse
}

let app: App
/** An ADMIN and a MEMBER of an ELITE workspace, the ADMIN of a PRO workspace and the ADMIN of a FREE one. */
let admin: Actor
let member: Actor
let proAdmin: Actor
let freeAdmin: Actor

const firstParty = async (user: PasswordUser, plan: "FREE" | "PRO" | "ELITE") => {
  const scopes = ["meetings:read", "meetings:write"]
  const issued = await client(server.url, OPERATOR_TOKEN).post(
    `/operator/v1/users/${user.userId}/tokens`,
    plan === "FREE"
      ? { kind: "short_lived", scopes, expiry_hours: 6 }
      : { kind: "personal_access_token", scopes, expiry_days: 30 }
  )
  if (issued.status !== 201) throw new Error(`token issue failed: ${issued.status} ${issued.text}`)
  return issued.body.token as string
}

const actor = async (user: PasswordUser, plan: "FREE" | "PRO" | "ELITE"): Promise<Actor> => {
  const tokens = await flow.tokensFor(user, app)
  const apiToken = await firstParty(user, plan)
  return { user, api: client(server.url, apiToken), apiToken, partner: client(server.url, tokens.access_token), tokens }
}

beforeAll(async () => {
  app = await flow.createApp()
  const eliteAdmin = await newUser(server.url, { role: "ADMIN", plan: "ELITE" })
  const eliteMember = await newUser(server.url, { role: "MEMBER", workspaceId: eliteAdmin.workspaceId })
  const pro = await newUser(server.url, { role: "ADMIN", plan: "PRO" })
  const free = await newUser(server.url, { role: "ADMIN", plan: "FREE" })
  ;[admin, member, proAdmin, freeAdmin] = await Promise.all([
    actor(eliteAdmin, "ELITE"),
    actor(eliteMember, "ELITE"),
    actor(pro, "PRO"),
    actor(free, "FREE")
  ])
})

const createMeeting = async (api: Client, body: Record<string, unknown> = {}) => {
  const created = await api.post("/v1/meetings", { title: `Planning ${crypto.randomUUID().slice(0, 8)}`, ...body })
  if (created.status !== 201) throw new Error(`meeting creation failed: ${created.status} ${created.text}`)
  return created.body as { readonly id: string; readonly title: string; readonly start_time: string | null; readonly end_time: string | null; readonly status: string }
}

const addParticipant = async (api: Client, meetingId: string, userId: string, role: "EDITOR" | "VIEWER") => {
  const added = await api.post(`/v1/meetings/${meetingId}/participants`, { participants: [{ user_id: userId, role }] })
  if (added.status !== 201) throw new Error(`adding a participant failed: ${added.status} ${added.text}`)
}

const agendaOf = async (actor: Actor, meetingId: string) => {
  const listed = await actor.partner.get(`${USER}/meetings/${meetingId}/agenda-items?limit=100`)
  expect(listed.status, listed.text).toBe(200)
  return listed.body.items as ReadonlyArray<Record<string, unknown> & { id: string; title: string; sequence: string }>
}

const addItem = async (actor: Actor, meetingId: string, body: Record<string, unknown>, headers?: Record<string, string>) =>
  actor.partner.post(`${USER}/meetings/${meetingId}/agenda-items`, body, headers)

const createdItem = async (actor: Actor, meetingId: string, body: Record<string, unknown>) => {
  const created = await addItem(actor, meetingId, body)
  expect(created.status, created.text).toBe(201)
  return created.body as { readonly id: string; readonly sequence: string; readonly item_type: string }
}

// ------------------------------------------------------------------------------------------------------ meetings

describe("GET /v1/partner/user/meetings", () => {
  it("lists the user's meetings as {id, title, scheduled_start, scheduled_end, status} in the list envelope, limit honoured", async () => {
    const scheduled = await createMeeting(admin.api, { start_time: "2031-05-01T09:00:00.000Z", end_time: "2031-05-01T10:30:00.000Z" })
    const unscheduled = await createMeeting(admin.api)
    const elsewhere = await createMeeting(proAdmin.api)

    const listed = await admin.partner.get(`${USER}/meetings?limit=100`)
    expect(listed.status, listed.text).toBe(200)
    expect(Object.keys(listed.body).sort()).toEqual(LIST_KEYS)
    const firstPartyList = await admin.api.get("/v1/meetings?limit=100")
    expect(listed.body.items.map((m: { id: string }) => m.id)).toEqual(firstPartyList.body.items.map((m: { id: string }) => m.id))
    expect(listed.body).toMatchObject({ total: firstPartyList.body.total, limit: 100, offset: 0 })
    for (const item of listed.body.items) expect(Object.keys(item).sort()).toEqual(MEETING_ITEM_KEYS)
    const byId = new Map(listed.body.items.map((m: { id: string }) => [m.id, m]))
    expect(byId.get(scheduled.id)).toEqual({
      id: scheduled.id,
      title: scheduled.title,
      scheduled_start: scheduled.start_time,
      scheduled_end: scheduled.end_time,
      status: scheduled.status
    })
    expect(scheduled.start_time).toMatch(TIMESTAMP)
    expect(byId.get(unscheduled.id)).toEqual({
      id: unscheduled.id,
      title: unscheduled.title,
      scheduled_start: null,
      scheduled_end: null,
      status: unscheduled.status
    })
    expect(byId.has(elsewhere.id)).toBe(false)

    const one = await admin.partner.get(`${USER}/meetings?limit=1`)
    expect(one.status).toBe(200)
    expect(one.body).toMatchObject({ total: listed.body.total, limit: 1, offset: 0 })
    expect(one.body.items).toEqual([listed.body.items[0]])
    const second = await admin.partner.get(`${USER}/meetings?limit=1&offset=1`)
    expect(second.body.items).toEqual([listed.body.items[1]])
    expect(second.body).toMatchObject({ limit: 1, offset: 1 })

    // The other workspace's admin sees its own meeting and none of these.
    const theirs = await proAdmin.partner.get(`${USER}/meetings?limit=100`)
    const theirIds = theirs.body.items.map((m: { id: string }) => m.id)
    expect(theirIds).toContain(elsewhere.id)
    expect(theirIds).not.toContain(scheduled.id)
    expect(theirIds).not.toContain(unscheduled.id)

    // At most 100 a page; a non-positive limit is the default 20; a limit that is no integer is 400.
    expect((await admin.partner.get(`${USER}/meetings?limit=1000`)).body.limit).toBe(100)
    expect((await admin.partner.get(`${USER}/meetings?limit=0`)).body.limit).toBe(20)
    expect((await admin.partner.get(`${USER}/meetings`)).body.limit).toBe(20)
    expectPartnerError(await admin.partner.get(`${USER}/meetings?limit=abc`), 400, "invalid_request")
    expectPartnerError(await admin.partner.get(`${USER}/meetings?limit=1.5`), 400, "invalid_request")
  })

  it("shows a MEMBER only the meetings they take part in", async () => {
    const own = await createMeeting(member.api)
    const invited = await createMeeting(admin.api)
    await addParticipant(admin.api, invited.id, member.user.userId, "VIEWER")
    const hidden = await createMeeting(admin.api)

    const listed = await member.partner.get(`${USER}/meetings?limit=100`)
    expect(listed.status).toBe(200)
    const ids = listed.body.items.map((m: { id: string }) => m.id)
    expect(ids).toContain(own.id)
    expect(ids).toContain(invited.id)
    expect(ids).not.toContain(hidden.id)
    const firstPartyList = await member.api.get("/v1/meetings?limit=100")
    expect(ids).toEqual(firstPartyList.body.items.map((m: { id: string }) => m.id))
    expect(listed.body.total).toBe(firstPartyList.body.total)
  })
})

// -------------------------------------------------------------------------------------------------- agenda items

describe("agenda items", () => {
  it("creates items of each of the four types, DISCUSSION by default, appended 1, 2, 3, ... with the documented fields", async () => {
    const meeting = await createMeeting(admin.api)
    const first = await addItem(admin, meeting.id, { title: "Open" })
    expect(first.status, first.text).toBe(201)
    expect(Object.keys(first.body).sort()).toEqual(AGENDA_ITEM_KEYS)
    expect(first.body).toMatchObject({
      meeting_id: meeting.id,
      workspace_id: admin.user.workspaceId,
      title: "Open",
      description: null,
      item_type: "DISCUSSION",
      sequence: "1",
      talking_points: [],
      presenters: [],
      presenter_details: []
    })
    expect(first.body.id).toMatch(UUID)
    expect(first.body.created_at).toMatch(TIMESTAMP)
    for (const [index, type] of ITEM_TYPES.entries()) {
      const created = await addItem(admin, meeting.id, { title: type, item_type: type })
      expect({ status: created.status, type: created.body.item_type, sequence: created.body.sequence }, created.text).toEqual({
        status: 201,
        type,
        sequence: String(index + 2)
      })
    }
    expect((await agendaOf(admin, meeting.id)).map((item) => item.item_type)).toEqual(["DISCUSSION", ...ITEM_TYPES])
  })

  it("refuses any other item type with 400 invalid_item_type and a non-decimal sequence with 400 invalid_request", async () => {
    const meeting = await createMeeting(admin.api)
    const item = await createdItem(admin, meeting.id, { title: "Keep", sequence: "4" })
    for (const itemType of ["DECISION", "ACTION_ITEM", "INFORMATION", "discussion", "", 3, null]) {
      const answer = await addItem(admin, meeting.id, { title: "Bad type", item_type: itemType })
      expectPartnerError(answer, 400, "invalid_item_type")
      const update = await admin.partner.put(`${USER}/meetings/${meeting.id}/agenda-items/${item.id}`, { item_type: itemType })
      expectPartnerError(update, 400, "invalid_item_type")
    }
    for (const sequence of ["abc", "1e5", "1,5", "0x10", "", "Infinity", "NaN", "1.2.3", 3]) {
      const answer = await addItem(admin, meeting.id, { title: "Bad sequence", sequence })
      expectPartnerError(answer, 400, "invalid_request")
      const update = await admin.partner.put(`${USER}/meetings/${meeting.id}/agenda-items/${item.id}`, { sequence })
      expectPartnerError(update, 400, "invalid_request")
    }
    const agenda = await agendaOf(admin, meeting.id)
    expect(agenda.map((i) => [i.title, i.sequence, i.item_type])).toEqual([["Keep", "4", "DISCUSSION"]])
  })

  it("lists in sequence order, with each user's own talking points; an omitted sequence appends after the last", async () => {
    const meeting = await createMeeting(admin.api)
    await addParticipant(admin.api, meeting.id, member.user.userId, "EDITOR")
    await createdItem(admin, meeting.id, { title: "C", sequence: "3" })
    await createdItem(admin, meeting.id, { title: "A", sequence: "-1" })
    const b = await createdItem(admin, meeting.id, { title: "B", sequence: "1.50", talking_points: ["admin's note"] })
    expect(b.sequence).toBe("1.5")
    const memberUpdate = await member.partner.put(`${USER}/meetings/${meeting.id}/agenda-items/${b.id}`, { talking_points: ["member's note"] })
    expect(memberUpdate.status, memberUpdate.text).toBe(200)
    expect(memberUpdate.body.talking_points).toEqual(["member's note"])

    const adminView = await agendaOf(admin, meeting.id)
    expect(adminView.map((i) => [i.title, i.sequence])).toEqual([["A", "-1"], ["B", "1.5"], ["C", "3"]])
    expect(adminView.map((i) => i.talking_points)).toEqual([[], ["admin's note"], []])
    const memberView = await agendaOf(member, meeting.id)
    expect(memberView.map((i) => i.talking_points)).toEqual([[], ["member's note"], []])

    const listed = await admin.partner.get(`${USER}/meetings/${meeting.id}/agenda-items?limit=2`)
    expect(Object.keys(listed.body).sort()).toEqual(LIST_KEYS)
    expect(listed.body).toMatchObject({ total: 3, limit: 2, offset: 0 })
    expect(listed.body.items.map((i: { title: string }) => i.title)).toEqual(["A", "B"])

    // Appended: the next whole number after the last item ("3" -> "4"; "7.25" -> "8").
    expect((await createdItem(admin, meeting.id, { title: "D" })).sequence).toBe("4")
    await createdItem(admin, meeting.id, { title: "E", sequence: "7.25" })
    expect((await createdItem(member, meeting.id, { title: "F", talking_points: ["mine"] })).sequence).toBe("8")
    expect((await agendaOf(admin, meeting.id)).map((i) => i.title)).toEqual(["A", "B", "C", "D", "E", "F"])
  })

  it("appends after a negative or fractional last item, and renumbers the agenda when the next whole number is out of range", async () => {
    for (const [last, next] of [["-3.5", "-3"], ["-0.5", "0"], ["0.000001", "1"], ["41", "42"], ["2.999999", "3"]] as const) {
      const meeting = await createMeeting(admin.api)
      await createdItem(admin, meeting.id, { title: "Last", sequence: last })
      expect({ last, appended: (await createdItem(admin, meeting.id, { title: "Appended" })).sequence }).toEqual({ last, appended: next })
    }
    const meeting = await createMeeting(admin.api)
    await createdItem(admin, meeting.id, { title: "First", sequence: "-7" })
    await createdItem(admin, meeting.id, { title: "Far", sequence: "999999999999.5" })
    const appended = await createdItem(admin, meeting.id, { title: "Appended" })
    const agenda = await agendaOf(admin, meeting.id)
    expect(agenda.map((item) => item.title)).toEqual(["First", "Far", "Appended"])
    expect(agenda.at(-1)?.sequence).toBe(appended.sequence)
    const values = agenda.map((item) => Number(item.sequence))
    expect([...values].sort((a, b) => a - b)).toEqual(values)
    expect(new Set(values).size).toBe(3)
  })

  it("updates: item_type applied, sequence kept when omitted, and the answer carries the real presenters in order", async () => {
    const meeting = await createMeeting(admin.api)
    await addParticipant(admin.api, meeting.id, member.user.userId, "EDITOR")
    const item = await createdItem(admin, meeting.id, { title: "Budget", sequence: "2" })
    const path = `${USER}/meetings/${meeting.id}/agenda-items/${item.id}`

    const typed = await admin.partner.put(path, { item_type: "BREAK" })
    expect(typed.status, typed.text).toBe(200)
    expect(Object.keys(typed.body).sort()).toEqual(AGENDA_ITEM_KEYS)
    expect(typed.body).toMatchObject({ id: item.id, title: "Budget", item_type: "BREAK", sequence: "2" })

    const presenters = [member.user.userId, admin.user.userId]
    const details = [
      { user_id: member.user.userId, name: member.user.name, email: member.user.email },
      { user_id: admin.user.userId, name: admin.user.name, email: admin.user.email }
    ]
    const presented = await admin.partner.put(path, { presenters })
    expect(presented.status, presented.text).toBe(200)
    expect(presented.body).toMatchObject({ item_type: "BREAK", sequence: "2", presenters, presenter_details: details })

    // An update that does not touch the presenters answers them as they are (the document's fixed bug: empty presenters).
    const renamed = await member.partner.put(path, { title: "Budget 2032" })
    expect(renamed.status, renamed.text).toBe(200)
    expect(renamed.body).toMatchObject({ title: "Budget 2032", item_type: "BREAK", sequence: "2", presenters, presenter_details: details })

    const reversed = await admin.partner.put(path, { presenters: [...presenters].reverse(), sequence: "0.5", item_type: "ADJOURN" })
    expect(reversed.body).toMatchObject({
      sequence: "0.5",
      item_type: "ADJOURN",
      presenters: [...presenters].reverse(),
      presenter_details: [...details].reverse()
    })
    const [listedItem] = await agendaOf(admin, meeting.id)
    expect(listedItem).toEqual(reversed.body)

    // A presenter who is not a user of the workspace is refused.
    expectPartnerError(await admin.partner.put(path, { presenters: [proAdmin.user.userId] }), 400, "invalid_request")
  })

  it("drops a deleted user from the presenters and their details", async () => {
    const leaving = await newUser(server.url, { role: "MEMBER", workspaceId: admin.user.workspaceId })
    const meeting = await createMeeting(admin.api)
    const item = await createdItem(admin, meeting.id, { title: "Handover", presenters: [leaving.userId, admin.user.userId] })
    expect((await agendaOf(admin, meeting.id))[0]?.presenter_details).toEqual([
      { user_id: leaving.userId, name: leaving.name, email: leaving.email },
      { user_id: admin.user.userId, name: admin.user.name, email: admin.user.email }
    ])
    expect((await client(server.url, OPERATOR_TOKEN).delete(`/operator/v1/users/${leaving.userId}`)).status).toBe(204)
    const [after] = await agendaOf(admin, meeting.id)
    expect(after).toMatchObject({
      id: item.id,
      presenters: [admin.user.userId],
      presenter_details: [{ user_id: admin.user.userId, name: admin.user.name, email: admin.user.email }]
    })
    const renamed = await admin.partner.put(`${USER}/meetings/${meeting.id}/agenda-items/${item.id}`, { title: "Handover done" })
    expect(renamed.body).toMatchObject({ presenters: [admin.user.userId] })
  })

  it("answers 404 not_found for an item of another meeting through this meeting's path, and for another workspace's meeting", async () => {
    const meeting = await createMeeting(admin.api)
    const other = await createMeeting(admin.api)
    const item = await createdItem(admin, other.id, { title: "Elsewhere" })
    expectPartnerError(await admin.partner.put(`${USER}/meetings/${meeting.id}/agenda-items/${item.id}`, { title: "Moved?" }), 404, "not_found")
    expect((await agendaOf(admin, other.id)).map((i) => i.title)).toEqual(["Elsewhere"])
    expect(await agendaOf(admin, meeting.id)).toEqual([])

    const foreign = await createMeeting(proAdmin.api)
    const foreignItem = await createdItem(proAdmin, foreign.id, { title: "Theirs" })
    expectPartnerError(await admin.partner.get(`${USER}/meetings/${foreign.id}/agenda-items`), 404, "not_found")
    expectPartnerError(await addItem(admin, foreign.id, { title: "Intrusion" }), 404, "not_found")
    expectPartnerError(
      await admin.partner.put(`${USER}/meetings/${foreign.id}/agenda-items/${foreignItem.id}`, { title: "Intrusion" }),
      404,
      "not_found"
    )
    expectPartnerError(await admin.partner.put(`${USER}/meetings/${meeting.id}/agenda-items/${foreignItem.id}`, { title: "Intrusion" }), 404, "not_found")
    expectPartnerError(await admin.partner.get(`${USER}/meetings/${crypto.randomUUID()}/agenda-items`), 404, "not_found")
    expect((await agendaOf(proAdmin, foreign.id)).map((i) => i.title)).toEqual(["Theirs"])
  })

  it("answers 409 conflict for a new item on an ended meeting", async () => {
    const meeting = await createMeeting(admin.api)
    const item = await createdItem(admin, meeting.id, { title: "Before the end" })
    const ended = await admin.api.patch(`/v1/meetings/${meeting.id}`, { status: "ended" })
    expect(ended.status, ended.text).toBe(200)
    expectPartnerError(await addItem(admin, meeting.id, { title: "Too late" }), 409, "conflict")
    expect((await agendaOf(admin, meeting.id)).map((i) => i.id)).toEqual([item.id])
  })

  it("answers 403 forbidden to a VIEWER who writes, and 404 to a MEMBER outside the meeting", async () => {
    const viewed = await createMeeting(admin.api)
    await addParticipant(admin.api, viewed.id, member.user.userId, "VIEWER")
    const item = await createdItem(admin, viewed.id, { title: "Read only" })
    expect((await agendaOf(member, viewed.id)).map((i) => i.title)).toEqual(["Read only"])
    expectPartnerError(await addItem(member, viewed.id, { title: "Sneaky" }), 403, "forbidden")
    expectPartnerError(await member.partner.put(`${USER}/meetings/${viewed.id}/agenda-items/${item.id}`, { title: "Sneaky" }), 403, "forbidden")

    const hidden = await createMeeting(admin.api)
    const hiddenItem = await createdItem(admin, hidden.id, { title: "Private" })
    expectPartnerError(await member.partner.get(`${USER}/meetings/${hidden.id}/agenda-items`), 404, "not_found")
    expectPartnerError(await addItem(member, hidden.id, { title: "Sneaky" }), 404, "not_found")
    expectPartnerError(await member.partner.put(`${USER}/meetings/${hidden.id}/agenda-items/${hiddenItem.id}`, { title: "Sneaky" }), 404, "not_found")
    expect((await agendaOf(admin, viewed.id)).map((i) => i.title)).toEqual(["Read only"])
    expect((await agendaOf(admin, hidden.id)).map((i) => i.title)).toEqual(["Private"])
  })
})

// ------------------------------------------------------------------------------------------------- backlog items

describe("backlog items", () => {
  const backlogIds = async (actor: Actor, path: string) => {
    const listed = await actor.partner.get(`${USER}/backlog-items${path}?limit=100`)
    expect(listed.status, listed.text).toBe(200)
    expect(Object.keys(listed.body).sort()).toEqual(LIST_KEYS)
    return listed.body.items as ReadonlyArray<Record<string, unknown> & { id: string }>
  }

  it("creates, lists, reads, updates and deletes; a deleted item reads 404 and shows in the history", async () => {
    const created = await admin.partner.post(`${USER}/backlog-items`, {
      title: "Hiring plan",
      description: "for Q3",
      talking_points: ["ask finance"],
      presenters: [member.user.userId]
    })
    expect(created.status, created.text).toBe(201)
    expect(Object.keys(created.body).sort()).toEqual(BACKLOG_ITEM_KEYS)
    expect(created.body).toMatchObject({
      workspace_id: admin.user.workspaceId,
      title: "Hiring plan",
      description: "for Q3",
      talking_points: ["ask finance"],
      presenters: [member.user.userId],
      presenter_details: [{ user_id: member.user.userId, name: member.user.name, email: member.user.email }],
      status: "open"
    })
    const id = created.body.id as string
    expect((await backlogIds(admin, "")).map((item) => item.id)).toContain(id)
    // Talking points are the caller's own; the workspace's other members read the item too.
    const asMember = await member.partner.get(`${USER}/backlog-items/${id}`)
    expect(asMember.status).toBe(200)
    expect(asMember.body).toMatchObject({ id, title: "Hiring plan", talking_points: [] })

    const got = await admin.partner.get(`${USER}/backlog-items/${id}`)
    expect(got.body).toEqual(created.body)
    const updated = await admin.partner.put(`${USER}/backlog-items/${id}`, { title: "Hiring plan v2", talking_points: ["ask HR"] })
    expect(updated.status, updated.text).toBe(200)
    expect(updated.body).toMatchObject({ id, title: "Hiring plan v2", description: "for Q3", talking_points: ["ask HR"], presenters: [member.user.userId] })

    const deleted = await admin.partner.delete(`${USER}/backlog-items/${id}`)
    expect(deleted.status).toBe(204)
    expect(deleted.text).toBe("")
    expectPartnerError(await admin.partner.get(`${USER}/backlog-items/${id}`), 404, "not_found")
    expectPartnerError(await admin.partner.put(`${USER}/backlog-items/${id}`, { title: "Back?" }), 404, "not_found")
    expectPartnerError(await admin.partner.delete(`${USER}/backlog-items/${id}`), 404, "not_found")
    expect((await backlogIds(admin, "")).map((item) => item.id)).not.toContain(id)
    const history = (await backlogIds(admin, "/history")).find((item) => item.id === id)
    expect(history).toMatchObject({ id, title: "Hiring plan v2", status: "deleted", assigned_at: null, destination_meeting_id: null })
    expect(history?.deleted_at).toMatch(TIMESTAMP)
  })

  it("assigns an item to a meeting: a new agenda item there, the backlog item 404 and in the history", async () => {
    const meeting = await createMeeting(admin.api)
    await createdItem(admin, meeting.id, { title: "First", sequence: "5" })
    const created = await admin.partner.post(`${USER}/backlog-items`, { title: "Roadmap", talking_points: ["draft"], presenters: [admin.user.userId] })
    const id = created.body.id as string
    const assigned = await admin.partner.post(`${USER}/backlog-items/${id}/assign`, { destination_meeting_id: meeting.id })
    expect(assigned.status, assigned.text).toBe(200)
    expect(Object.keys(assigned.body).sort()).toEqual(["agenda_item", "backlog_item"])
    expect(assigned.body.agenda_item).toMatchObject({
      meeting_id: meeting.id,
      title: "Roadmap",
      item_type: "DISCUSSION",
      sequence: "6",
      talking_points: ["draft"],
      presenters: [admin.user.userId]
    })
    expect(assigned.body.backlog_item).toMatchObject({ id, status: "assigned", destination_meeting_id: meeting.id, deleted_at: null })
    expect((await agendaOf(admin, meeting.id)).map((item) => [item.title, item.sequence])).toEqual([["First", "5"], ["Roadmap", "6"]])
    expectPartnerError(await admin.partner.get(`${USER}/backlog-items/${id}`), 404, "not_found")
    expectPartnerError(await admin.partner.post(`${USER}/backlog-items/${id}/assign`, { destination_meeting_id: meeting.id }), 404, "not_found")
    expect((await backlogIds(admin, "")).map((item) => item.id)).not.toContain(id)
    const history = (await backlogIds(admin, "/history")).find((item) => item.id === id)
    expect(history).toMatchObject({ id, status: "assigned", destination_meeting_id: meeting.id })
    expect(history?.assigned_at).toMatch(TIMESTAMP)
  })

  it("assigns nothing when the meeting refuses the item: 403 forbidden for a VIEWER, 409 conflict for an ended meeting", async () => {
    const viewed = await createMeeting(admin.api)
    await addParticipant(admin.api, viewed.id, member.user.userId, "VIEWER")
    const ended = await createMeeting(admin.api)
    expect((await admin.api.patch(`/v1/meetings/${ended.id}`, { status: "ended" })).status).toBe(200)
    const created = await member.partner.post(`${USER}/backlog-items`, { title: "Waiting", talking_points: ["kept"] })
    expect(created.status, created.text).toBe(201)
    const id = created.body.id as string
    expectPartnerError(await member.partner.post(`${USER}/backlog-items/${id}/assign`, { destination_meeting_id: viewed.id }), 403, "forbidden")
    expectPartnerError(await admin.partner.post(`${USER}/backlog-items/${id}/assign`, { destination_meeting_id: ended.id }), 409, "conflict")
    expectPartnerError(
      await admin.partner.post(`${USER}/backlog-items/${id}/assign`, { destination_meeting_id: crypto.randomUUID() }),
      404,
      "not_found"
    )
    expectPartnerError(await admin.partner.post(`${USER}/backlog-items/${id}/assign`, { destination_meeting_id: "nope" }), 400, "invalid_request")
    // Still open, with the member's talking points; no agenda item anywhere; not in the history.
    const still = await member.partner.get(`${USER}/backlog-items/${id}`)
    expect(still.body).toMatchObject({ id, status: "open", talking_points: ["kept"] })
    expect(await agendaOf(admin, viewed.id)).toEqual([])
    expect(await agendaOf(admin, ended.id)).toEqual([])
    expect((await backlogIds(admin, "/history")).map((item) => item.id)).not.toContain(id)
  })

  it("keeps workspaces apart: another workspace's item is 404, and so is assigning to another workspace's meeting", async () => {
    const theirs = await proAdmin.partner.post(`${USER}/backlog-items`, { title: "Theirs" })
    expect(theirs.status).toBe(201)
    expectPartnerError(await admin.partner.get(`${USER}/backlog-items/${theirs.body.id}`), 404, "not_found")
    expectPartnerError(await admin.partner.put(`${USER}/backlog-items/${theirs.body.id}`, { title: "Mine" }), 404, "not_found")
    expectPartnerError(await admin.partner.delete(`${USER}/backlog-items/${theirs.body.id}`), 404, "not_found")
    expect((await backlogIds(admin, "")).map((item) => item.id)).not.toContain(theirs.body.id)

    const ours = await admin.partner.post(`${USER}/backlog-items`, { title: "Ours" })
    const foreign = await createMeeting(proAdmin.api)
    expectPartnerError(await admin.partner.post(`${USER}/backlog-items/${ours.body.id}/assign`, { destination_meeting_id: foreign.id }), 404, "not_found")
    // Nothing changed: the item is still open, the other meeting has no agenda.
    expect((await admin.partner.get(`${USER}/backlog-items/${ours.body.id}`)).status).toBe(200)
    expect(await agendaOf(proAdmin, foreign.id)).toEqual([])
    expect((await proAdmin.partner.get(`${USER}/backlog-items/${theirs.body.id}`)).body.title).toBe("Theirs")
  })
})

// --------------------------------------------------------------------------------------------------- attachments

describe("attachments", () => {
  /** 200 KiB of random bytes, then every byte value once. */
  const bytes = Buffer.concat([randomBytes(200 * 1024), Buffer.from(Array.from({ length: 256 }, (_, i) => i))])
  const contentType = "image/x-convene-test"
  let meetingId: string
  let uploaded: {
    readonly id: string
    readonly meeting_id: string
    readonly file_name: string
    readonly content_type: string
    readonly size: number
    readonly sha256: string
    readonly created_at: string
    readonly download_url: string
    readonly download_url_expires_at: string
  }
  let uploadedAt: number

  const upload = async (actor: Actor, meeting: string, file: Uint8Array, name: string, type: string) => {
    const form = new FormData()
    form.append("file", new Blob([file], { type }), name)
    const response = await fetch(`${server.url}${USER}/meetings/${meeting}/attachments`, {
      method: "POST",
      headers: { authorization: `Bearer ${actor.tokens.access_token}` },
      body: form
    })
    const text = await response.text()
    return { status: response.status, headers: response.headers, text, body: text.startsWith("{") ? JSON.parse(text) : text }
  }

  /** The URL with the query parameter `name` set to `value`. */
  const withParam = (url: string, name: string, value: string) => {
    const changed = new URL(url)
    changed.searchParams.set(name, value)
    return changed.toString()
  }

  /** The URL with one path segment of /v1/partner/files/{workspace}/{meeting}/{attachment} replaced. */
  const withSegment = (url: string, index: 0 | 1 | 2, value: string) => {
    const changed = new URL(url)
    const segments = changed.pathname.split("/")
    segments[segments.length - 3 + index] = value
    changed.pathname = segments.join("/")
    return changed.toString()
  }

  beforeAll(async () => {
    meetingId = (await createMeeting(admin.api)).id
    uploadedAt = Date.now()
    const answer = await upload(admin, meetingId, bytes, "diagram.bin", contentType)
    if (answer.status !== 201) throw new Error(`upload failed: ${answer.status} ${answer.text}`)
    uploaded = answer.body
  })

  it("answers 201 with the documented fields and a pre-signed URL under the base URL, valid 15 minutes", () => {
    expect(Object.keys(uploaded).sort()).toEqual(ATTACHMENT_KEYS)
    expect(uploaded).toMatchObject({ meeting_id: meetingId, file_name: "diagram.bin", content_type: contentType, size: bytes.length, sha256: sha256(bytes) })
    expect(uploaded.id).toMatch(UUID)
    expect(uploaded.created_at).toMatch(TIMESTAMP)
    expect(uploaded.download_url_expires_at).toMatch(TIMESTAMP)
    const url = new URL(uploaded.download_url)
    expect(url.origin).toBe(new URL(server.baseUrl).origin)
    expect(uploaded.download_url.startsWith(`${server.baseUrl}/v1/partner/files/${admin.user.workspaceId}/${meetingId}/${uploaded.id}?`)).toBe(true)
    expect([...url.searchParams.keys()].sort()).toEqual(["expires", "kid", "signature"])
    const expiresAt = Date.parse(uploaded.download_url_expires_at)
    expect(Number(url.searchParams.get("expires")) * 1000).toBe(expiresAt)
    expect(expiresAt).toBeGreaterThanOrEqual(uploadedAt + 15 * 60_000 - 2_000)
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 15 * 60_000)
  })

  it("serves the bytes through the pre-signed URL without any Authorization header, byte for byte, with the content type", async () => {
    const got = await fetchBytes(uploaded.download_url)
    expect(got.status).toBe(200)
    expect(got.headers.get("content-type")).toBe(contentType)
    expect(got.bytes.length).toBe(bytes.length)
    expect(got.bytes.equals(bytes)).toBe(true)
    // A range through the URL, too.
    const ranged = await fetchBytes(uploaded.download_url, { range: "bytes=204700-204899" })
    expect(ranged.status).toBe(206)
    expect(ranged.headers.get("content-range")).toBe(`bytes 204700-204899/${bytes.length}`)
    expect(ranged.bytes.equals(bytes.subarray(204700, 204900))).toBe(true)
  })

  it("refuses the URL with any part changed, or expired, with 404 not_found in the partner envelope", async () => {
    const other = await upload(admin, meetingId, Buffer.from("another file"), "other.txt", "text/plain")
    expect(other.status).toBe(201)
    const sibling = await createMeeting(admin.api)
    const url = uploaded.download_url
    const params = new URL(url).searchParams
    const signature = params.get("signature")!
    const expires = Number(params.get("expires"))
    const flipped = `${signature.slice(0, -1)}${signature.endsWith("0") ? "1" : "0"}`
    const changed: Record<string, string> = {
      "signature, last digit": withParam(url, "signature", flipped),
      "signature, upper case": withParam(url, "signature", signature.toUpperCase()),
      "signature of the other attachment": withParam(url, "signature", new URL(other.body.download_url).searchParams.get("signature")!),
      "expires, one second later": withParam(url, "expires", String(expires + 1)),
      "expires, one second earlier": withParam(url, "expires", String(expires - 1)),
      "expires, a day later": withParam(url, "expires", String(expires + 86_400)),
      "expires, in the past": withParam(url, "expires", String(Math.floor(Date.now() / 1000) - 60)),
      "kid, another": withParam(url, "kid", `${params.get("kid")}x`),
      "kid, empty": withParam(url, "kid", ""),
      "attachment id, the other attachment's": withSegment(url, 2, other.body.id),
      "attachment id, unknown": withSegment(url, 2, crypto.randomUUID()),
      "meeting id, another meeting of the workspace": withSegment(url, 1, sibling.id),
      "meeting id, unknown": withSegment(url, 1, crypto.randomUUID()),
      "workspace id, another workspace": withSegment(url, 0, proAdmin.user.workspaceId),
      "workspace id, unknown": withSegment(url, 0, crypto.randomUUID())
    }
    for (const [what, changedUrl] of Object.entries(changed)) {
      expect(changedUrl, what).not.toBe(url)
      const answer = await fetchBytes(changedUrl)
      expect({ what, status: answer.status, code: answer.body?.code }).toEqual({ what, status: 404, code: "not_found" })
      expectPartnerError(answer, 404, "not_found")
    }
    // The originals still work.
    expect((await fetchBytes(url)).status).toBe(200)
    expect((await fetchBytes(other.body.download_url)).text).toBe("another file")
  })

  it("serves the pre-signed URL whatever Authorization header comes with it; 416 past the end; 405 for another method", async () => {
    for (const authorization of [`Bearer ${admin.tokens.access_token}`, `Bearer ${proAdmin.tokens.access_token}`, "Bearer svc_pua_v1_unknown", "Basic abc"]) {
      const got = await fetchBytes(uploaded.download_url, { authorization })
      expect({ authorization, status: got.status }).toEqual({ authorization, status: 200 })
      expect(got.bytes.equals(bytes)).toBe(true)
    }
    const past = await fetchBytes(uploaded.download_url, { range: `bytes=${bytes.length + 10}-` })
    expectPartnerError(past, 416, "range_not_satisfiable")
    expect(past.headers.get("content-range")).toBe(`bytes */${bytes.length}`)
    const posted = await fetch(uploaded.download_url, { method: "POST" })
    const text = await posted.text()
    expectPartnerError({ status: posted.status, headers: posted.headers, text, body: JSON.parse(text) }, 405, "method_not_allowed")
  })

  it("GET answers the attachment with a fresh URL, and the list shows it with one", async () => {
    const got = await admin.partner.get(`${USER}/meetings/${meetingId}/attachments/${uploaded.id}`)
    expect(got.status, got.text).toBe(200)
    expect(Object.keys(got.body).sort()).toEqual(ATTACHMENT_KEYS)
    const { download_url: _url, download_url_expires_at: _at, ...fields } = uploaded
    expect(got.body).toMatchObject(fields)
    const expiresAt = Date.parse(got.body.download_url_expires_at)
    expect(expiresAt).toBeGreaterThanOrEqual(Date.parse(uploaded.download_url_expires_at))
    expect(Math.abs(expiresAt - (Date.now() + 15 * 60_000))).toBeLessThan(5_000)
    expect((await fetchBytes(got.body.download_url)).bytes.equals(bytes)).toBe(true)
    // The member of the workspace who does not take part in the meeting does not see it.
    expectPartnerError(await member.partner.get(`${USER}/meetings/${meetingId}/attachments/${uploaded.id}`), 404, "not_found")

    const listed = await admin.partner.get(`${USER}/meetings/${meetingId}/attachments`)
    expect(listed.status).toBe(200)
    expect(Object.keys(listed.body).sort()).toEqual(LIST_KEYS)
    const mine = listed.body.items.find((item: { id: string }) => item.id === uploaded.id)
    expect(Object.keys(mine).sort()).toEqual(ATTACHMENT_KEYS)
    expect(mine).toMatchObject(fields)
    expect((await fetchBytes(mine.download_url)).bytes.equals(bytes)).toBe(true)
  })

  it("downloads with the token: the whole file, 206 for a range, 416 past the end", async () => {
    const path = `${server.url}${USER}/meetings/${meetingId}/attachments/${uploaded.id}/download`
    const auth = { authorization: `Bearer ${admin.tokens.access_token}` }
    const whole = await fetchBytes(path, auth)
    expect(whole.status).toBe(200)
    expect(whole.headers.get("content-type")).toBe(contentType)
    expect(whole.headers.get("content-disposition") ?? "").toMatch(/^attachment/)
    expect(whole.bytes.equals(bytes)).toBe(true)
    const ranged = await fetchBytes(path, { ...auth, range: "bytes=100-1099" })
    expect(ranged.status).toBe(206)
    expect(ranged.headers.get("content-range")).toBe(`bytes 100-1099/${bytes.length}`)
    expect(ranged.bytes.equals(bytes.subarray(100, 1100))).toBe(true)
    const tail = await fetchBytes(path, { ...auth, range: "bytes=-256" })
    expect(tail.status).toBe(206)
    expect(tail.bytes.equals(bytes.subarray(bytes.length - 256))).toBe(true)
    const past = await fetchBytes(path, { ...auth, range: `bytes=${bytes.length}-` })
    expectPartnerError(past, 416, "range_not_satisfiable")
    expect(past.headers.get("content-range")).toBe(`bytes */${bytes.length}`)
    const unauthenticated = await fetchBytes(path)
    expectPartnerError(unauthenticated, 401, "missing_authorization")
  })

  /*
   * The upload reads its body itself (packages/http/src/http/Uploads.ts) and fails with the first-party classes
   * BodyTooLarge, MediaTypeUnsupported and MalformedBody, which `asPartnerFailure` (packages/api/src/PartnerUser.ts)
   * does not map: they are encoded by the first-party schemas, with `message`, and a malformed body as `bad_request`
   * where the contract (the upload's description) says 400 `invalid_request`.
   */
  describe("a refused upload, in the partner envelope", () => {
    const auth = () => ({ authorization: `Bearer ${admin.tokens.access_token}` })
    const path = () => `${USER}/meetings/${meetingId}/attachments`
    const asAnswer = async (response: globalThis.Response) => {
      const text = await response.text()
      return { status: response.status, headers: response.headers, text, body: text.startsWith("{") ? JSON.parse(text) : text }
    }

    it("is 400 invalid_request without a `file` part", async () => {
      const noFile = new FormData()
      noFile.append("other", "value")
      expectPartnerError(await asAnswer(await fetch(server.url + path(), { method: "POST", headers: auth(), body: noFile })), 400, "invalid_request")
    })

    it("is 415 unsupported_media_type for a body that is not multipart/form-data", async () => {
      const json = await fetch(server.url + path(), { method: "POST", headers: { ...auth(), "content-type": "application/json" }, body: "{}" })
      expectPartnerError(await asAnswer(json), 415, "unsupported_media_type")
    })

    it("is 400 invalid_request for a multipart body cut off before its closing boundary (the contract: a malformed body)", async () => {
      const broken = await fetch(server.url + path(), {
        method: "POST",
        headers: { ...auth(), "content-type": "multipart/form-data; boundary=xyz" },
        body: "--xyz\r\nContent-Disposition: form-data; name=\"file\"; filename=\"cut.txt\"\r\n\r\nunterminated"
      })
      expectPartnerError(await asAnswer(broken), 400, "invalid_request")
      const listed = await admin.partner.get(path())
      expect(listed.body.items.map((item: { file_name: string }) => item.file_name)).not.toContain("cut.txt")
    })

    it("is 413 payload_too_large for a body declared larger than the cap", async () => {
      const declared = await send(server.url, {
        method: "POST",
        path: path(),
        headers: { ...auth(), "content-type": "multipart/form-data; boundary=xyz", "content-length": String(30 * 1024 * 1024) }
      })
      const headers = new Headers()
      for (const [name, value] of Object.entries(declared.headers)) if (typeof value === "string") headers.set(name, value)
      expectPartnerError({ status: declared.status, headers, text: declared.text, body: declared.json }, 413, "payload_too_large")
    })
  })

  it("keeps other workspaces and readers out: 404 for another workspace's meeting, 403 for a VIEWER's upload", async () => {
    const foreign = await createMeeting(proAdmin.api)
    const answer = await upload(admin, foreign.id, Buffer.from("x"), "x.txt", "text/plain")
    expect(answer.status, answer.text).toBe(404)
    expect(Object.keys(answer.body).sort()).toEqual(ENVELOPE_KEYS)
    expect(answer.body.code).toBe("not_found")
    expectPartnerError(await admin.partner.get(`${USER}/meetings/${foreign.id}/attachments`), 404, "not_found")
    expectPartnerError(await proAdmin.partner.get(`${USER}/meetings/${meetingId}/attachments/${uploaded.id}`), 404, "not_found")

    const viewed = await createMeeting(admin.api)
    await addParticipant(admin.api, viewed.id, member.user.userId, "VIEWER")
    const refused = await upload(member, viewed.id, Buffer.from("x"), "x.txt", "text/plain")
    expect(refused.status, refused.text).toBe(403)
    expect(Object.keys(refused.body).sort()).toEqual(ENVELOPE_KEYS)
    expect(refused.body.code).toBe("forbidden")
    expect((await member.partner.get(`${USER}/meetings/${viewed.id}/attachments`)).body.total).toBe(0)
  })

  it("refuses the pre-signed URL once the meeting is deleted", async () => {
    const meeting = await createMeeting(admin.api)
    const file = await upload(admin, meeting.id, Buffer.from("meeting goes away"), "gone.txt", "text/plain")
    expect(file.status).toBe(201)
    expect((await fetchBytes(file.body.download_url)).status).toBe(200)
    expect((await admin.api.delete(`/v1/meetings/${meeting.id}`)).status).toBe(204)
    expectPartnerError(await fetchBytes(file.body.download_url), 404, "not_found")
  })

  it("after DELETE the pre-signed URL, the GET and the download are 404", async () => {
    const doomed = await upload(admin, meetingId, Buffer.from("short-lived"), "doomed.txt", "text/plain")
    expect(doomed.status).toBe(201)
    expect((await fetchBytes(doomed.body.download_url)).text).toBe("short-lived")
    const deleted = await admin.partner.delete(`${USER}/meetings/${meetingId}/attachments/${doomed.body.id}`)
    expect(deleted.status).toBe(204)
    expectPartnerError(await fetchBytes(doomed.body.download_url), 404, "not_found")
    expectPartnerError(await admin.partner.get(`${USER}/meetings/${meetingId}/attachments/${doomed.body.id}`), 404, "not_found")
    expectPartnerError(
      await fetchBytes(`${server.url}${USER}/meetings/${meetingId}/attachments/${doomed.body.id}/download`, {
        authorization: `Bearer ${admin.tokens.access_token}`
      }),
      404,
      "not_found"
    )
    expectPartnerError(await admin.partner.delete(`${USER}/meetings/${meetingId}/attachments/${doomed.body.id}`), 404, "not_found")
    // The other attachment of the meeting is untouched.
    expect((await fetchBytes(uploaded.download_url)).status).toBe(200)
  })
})

// --------------------------------------------------------------------------------------------- transcript export

describe("GET /v1/partner/user/meetings/{id}/transcript/export", () => {
  const uploadTranscript = async (actor: Actor, meetingId: string, srt: string) => {
    const form = new FormData()
    form.append("kind", "transcript")
    form.append("file", new Blob([srt], { type: "application/x-subrip" }), "call.srt")
    const response = await fetch(`${server.url}/v1/meetings/${meetingId}/context`, {
      method: "POST",
      headers: { authorization: `Bearer ${actor.apiToken}` },
      body: form
    })
    if (response.status !== 201) throw new Error(`transcript upload failed: ${response.status} ${await response.text()}`)
  }

  it("answers 402 plan_required on FREE and PRO, with feature, current_plan and required_plan", async () => {
    for (const [actor, plan] of [[freeAdmin, "FREE"], [proAdmin, "PRO"]] as const) {
      const meeting = await createMeeting(actor.api)
      const answer = await actor.partner.get(`${USER}/meetings/${meeting.id}/transcript/export`)
      expect({ status: answer.status, code: answer.body?.code }, answer.text).toEqual({ status: 402, code: "plan_required" })
      expect(Object.keys(answer.body).sort()).toEqual(["code", "current_plan", "error", "feature", "request_id", "required_plan"])
      expect(answer.body).toMatchObject({ feature: "transcript_export", current_plan: plan, required_plan: "ELITE" })
      expect(answer.body.request_id).toBe(answer.headers.get("x-request-id"))
      expect(answer.body.error.length).toBeGreaterThan(0)
    }
  })

  it("answers SRT on ELITE: numbered cues, hh:mm:ss,mmm --> hh:mm:ss,mmm, `Speaker: text`", async () => {
    const meeting = await createMeeting(admin.api)
    const empty = await admin.partner.get(`${USER}/meetings/${meeting.id}/transcript/export`)
    expect(empty.status, empty.text).toBe(200)
    expect(empty.headers.get("content-type")).toMatch(/^application\/x-subrip/)
    expect(empty.text).toBe("")

    await uploadTranscript(
      admin,
      meeting.id,
      "1\r\n00:00:02,000 --> 00:00:04,000\r\nDana: Kick-off\r\n\r\n" +
        "2\r\n00:00:10,500 --> 00:00:12,000\r\nEve: Budget review\r\n\r\n" +
        "3\r\n01:02:03,456 --> 01:02:05,000\r\nDana: Wrap up\r\n"
    )
    const exported = await admin.partner.get(`${USER}/meetings/${meeting.id}/transcript/export`)
    expect(exported.status, exported.text).toBe(200)
    expect(exported.headers.get("content-type")).toMatch(/^application\/x-subrip/)
    expect(exported.text).toBe(
      "1\r\n00:00:02,000 --> 00:00:10,500\r\nDana: Kick-off\r\n\r\n" +
        "2\r\n00:00:10,500 --> 01:02:03,456\r\nEve: Budget review\r\n\r\n" +
        "3\r\n01:02:03,456 --> 01:02:08,456\r\nDana: Wrap up\r\n"
    )
    // Another workspace's meeting is 404, whatever the caller's plan.
    const foreign = await createMeeting(proAdmin.api)
    expectPartnerError(await admin.partner.get(`${USER}/meetings/${foreign.id}/transcript/export`), 404, "not_found")
  })
})

// ---------------------------------------------------------------------------------- next steps and action buttons

describe("next steps and action buttons", () => {
  it("lists none (empty list envelope) for a visible meeting, 404 for another workspace's; a trigger of any button is 404", async () => {
    const meeting = await createMeeting(admin.api)
    const foreign = await createMeeting(proAdmin.api)
    for (const list of ["next-steps", "action-buttons"]) {
      const answer = await admin.partner.get(`${USER}/meetings/${meeting.id}/${list}`)
      expect(answer.status, answer.text).toBe(200)
      expect(answer.body).toEqual({ items: [], total: 0, limit: 20, offset: 0 })
      expectPartnerError(await admin.partner.get(`${USER}/meetings/${foreign.id}/${list}`), 404, "not_found")
      expectPartnerError(await member.partner.get(`${USER}/meetings/${meeting.id}/${list}`), 404, "not_found")
    }
    for (const button of ["summarise", crypto.randomUUID(), "x"]) {
      expectPartnerError(await admin.partner.post(`${USER}/meetings/${meeting.id}/action-buttons/${button}/trigger`), 404, "not_found")
      expectPartnerError(await admin.partner.post(`${USER}/meetings/${foreign.id}/action-buttons/${button}/trigger`), 404, "not_found")
    }
  })
})

// ----------------------------------------------------------------------------------------------- Idempotency-Key

describe("Idempotency-Key on POST agenda-items", () => {
  it("replays the same answer for the same key and body, once created; 422 for another body; 400 for an invalid key", async () => {
    const meeting = await createMeeting(admin.api)
    const key = { "idempotency-key": `partner-${crypto.randomUUID()}` }
    const body = { title: "Once", item_type: "QUESTIONS_TO_ANSWER", talking_points: ["only once"] }
    const first = await addItem(admin, meeting.id, body, key)
    expect(first.status, first.text).toBe(201)
    expect(first.headers.get("idempotent-replayed")).toBeNull()
    const again = await addItem(admin, meeting.id, body, key)
    expect(again.status).toBe(201)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.body).toEqual(first.body)
    expect((await agendaOf(admin, meeting.id)).map((item) => item.id)).toEqual([first.body.id])

    expectPartnerError(await addItem(admin, meeting.id, { ...body, title: "Twice" }, key), 422, "idempotency_key_reuse")
    // The same key on another route of the same user and app is a reuse too.
    expectPartnerError(await admin.partner.post(`${USER}/backlog-items`, { title: "Once" }, key), 422, "idempotency_key_reuse")
    // The user's first-party credential has keys of its own.
    const firstParty = await admin.api.post("/v1/agenda-items", { meeting_id: meeting.id, ...body }, key)
    expect(firstParty.status, firstParty.text).toBe(201)
    expect(firstParty.headers.get("idempotent-replayed")).toBeNull()
    // Another user of the same app with the same key is another request.
    await addParticipant(admin.api, meeting.id, member.user.userId, "EDITOR")
    const theirs = await addItem(member, meeting.id, body, key)
    expect(theirs.status).toBe(201)
    expect(theirs.headers.get("idempotent-replayed")).toBeNull()
    expect(theirs.body.id).not.toBe(first.body.id)

    for (const invalid of ["k".repeat(300), "clé-été", "   "]) {
      expectPartnerError(await addItem(admin, meeting.id, { title: "Invalid key" }, { "idempotency-key": invalid }), 400, "idempotency_key_invalid")
    }
    expect((await agendaOf(admin, meeting.id)).map((item) => item.title)).toEqual(["Once", "Once", "Once"])
  })

  it("keeps a key working after the access token was refreshed (keys belong to the app and the user)", async () => {
    const tokens = await flow.tokensFor(admin.user, app, "meetings:read meetings:write")
    const as = await flow.metadata()
    const appClient: oauth.Client = { client_id: app.client_id }
    const meeting = await createMeeting(admin.api)
    const key = { "idempotency-key": `refresh-${crypto.randomUUID()}` }
    const body = { title: "Survives refresh" }
    const first = await client(server.url, tokens.access_token).post(`${USER}/meetings/${meeting.id}/agenda-items`, body, key)
    expect(first.status, first.text).toBe(201)

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      appClient,
      await oauth.refreshTokenGrantRequest(as, appClient, oauth.ClientSecretBasic(app.client_secret), tokens.refresh_token!, flow.insecure)
    )
    expect(refreshed.access_token).not.toBe(tokens.access_token)
    const partner = client(server.url, refreshed.access_token)
    const replayed = await partner.post(`${USER}/meetings/${meeting.id}/agenda-items`, body, key)
    expect(replayed.status, replayed.text).toBe(201)
    expect(replayed.headers.get("idempotent-replayed")).toBe("true")
    expect(replayed.body).toEqual(first.body)
    expectPartnerError(await partner.post(`${USER}/meetings/${meeting.id}/agenda-items`, { title: "Other" }, key), 422, "idempotency_key_reuse")
    // The user's other token of the same app replays it too.
    const sibling = await admin.partner.post(`${USER}/meetings/${meeting.id}/agenda-items`, body, key)
    expect(sibling.headers.get("idempotent-replayed")).toBe("true")
    expect(sibling.body).toEqual(first.body)
    expect((await agendaOf(admin, meeting.id)).map((item) => item.id)).toEqual([first.body.id])
  })
})

// -------------------------------------------------------------------------------------------------------- scopes

describe("scopes", () => {
  /** A token of the ELITE admin with meetings:read only. */
  let reader: Client
  let readerToken: string

  beforeAll(async () => {
    readerToken = (await flow.tokensFor(admin.user, app, "meetings:read")).access_token
    reader = client(server.url, readerToken)
  })

  const expectScope = (answer: Answer, what: string) => {
    expect({ what, status: answer.status, code: answer.body?.code }).toEqual({ what, status: 403, code: "insufficient_scope" })
    expectPartnerError(answer, 403, "insufficient_scope")
    expect(answer.headers.get("www-authenticate")).toBe(`Bearer error="insufficient_scope", scope="meetings:write"`)
  }

  it("answers 403 insufficient_scope to a meetings:read token on every write, and serves it the reads", async () => {
    const meeting = await createMeeting(admin.api)
    const item = await createdItem(admin, meeting.id, { title: "Fixed" })
    const backlog = await admin.partner.post(`${USER}/backlog-items`, { title: "Fixed too" })

    expectScope(await reader.post(`${USER}/meetings/${meeting.id}/agenda-items`, { title: "x" }), "create agenda item")
    expectScope(await reader.put(`${USER}/meetings/${meeting.id}/agenda-items/${item.id}`, { title: "x" }), "update agenda item")
    expectScope(await reader.post(`${USER}/backlog-items`, { title: "x" }), "create backlog item")
    expectScope(await reader.put(`${USER}/backlog-items/${backlog.body.id}`, { title: "x" }), "update backlog item")
    expectScope(await reader.delete(`${USER}/backlog-items/${backlog.body.id}`), "delete backlog item")
    expectScope(await reader.post(`${USER}/backlog-items/${backlog.body.id}/assign`, { destination_meeting_id: meeting.id }), "assign")
    const form = new FormData()
    form.append("file", new Blob(["x"], { type: "text/plain" }), "x.txt")
    const uploadAnswer = await fetch(`${server.url}${USER}/meetings/${meeting.id}/attachments`, {
      method: "POST",
      headers: { authorization: `Bearer ${readerToken}` },
      body: form
    })
    const uploadText = await uploadAnswer.text()
    expectScope({ status: uploadAnswer.status, headers: uploadAnswer.headers, text: uploadText, body: JSON.parse(uploadText) }, "upload")

    expect((await reader.get(`${USER}/meetings/${meeting.id}/agenda-items`)).body.items.map((i: { title: string }) => i.title)).toEqual(["Fixed"])
    expect((await reader.get(`${USER}/backlog-items/${backlog.body.id}`)).status).toBe(200)
    expect((await reader.get(`${USER}/meetings/${meeting.id}/transcript/export`)).status).toBe(200)
    expect((await reader.get(`${USER}/meetings/${meeting.id}/next-steps`)).status).toBe(200)
    expect((await reader.get(`${USER}/meetings/${meeting.id}/action-buttons`)).status).toBe(200)
  })

  it("refuses an action button trigger to a meetings:read token: the contract names meetings:write for it", async () => {
    // packages/api/src/PartnerUser.ts documents the trigger with `${write}` ("Scope meetings:write"): a trigger is an
    // action (it will send action_button.triggered to the app). The core checks only meetings:read
    // (PartnerUserContext.trigger), so a read-only token is answered 404 after the button is looked up.
    const meeting = await createMeeting(admin.api)
    expectScope(await reader.post(`${USER}/meetings/${meeting.id}/action-buttons/summarise/trigger`), "trigger")
  })
})

// ----------------------------------------------------------------------------------------------------- bad input

describe("bad input, in the partner envelope", () => {
  it("answers 400 invalid_request for a body that is not JSON or has unknown fields, 415 for another media type", async () => {
    const meeting = await createMeeting(admin.api)
    const path = `${USER}/meetings/${meeting.id}/agenda-items`
    const headers = { "content-type": "application/json" }
    for (const raw of ["{not json", "", "[1, 2]", "\"text\"", "{\"title\": \"x\",}"]) {
      expectPartnerError(await admin.partner.call("POST", path, raw, headers), 400, "invalid_request")
    }
    expectPartnerError(await addItem(admin, meeting.id, { title: "x", colour: "red" }), 400, "invalid_request")
    expectPartnerError(await addItem(admin, meeting.id, {}), 400, "invalid_request")
    expectPartnerError(await admin.partner.call("POST", path, "title=x", { "content-type": "text/plain" }), 415, "unsupported_media_type")
    expectPartnerError(await admin.partner.call("POST", `${USER}/backlog-items`, "{", headers), 400, "invalid_request")
    expectPartnerError(await addItem(admin, meeting.id, { title: "nul \u0000 byte" }), 400, "invalid_request")
    expectPartnerError(await addItem(admin, meeting.id, { title: "x".repeat(501) }), 400, "invalid_request")
    expectPartnerError(await addItem(admin, meeting.id, { title: "big", description: "x".repeat(1024 * 1024) }), 413, "payload_too_large")
    expect(await agendaOf(admin, meeting.id)).toEqual([])
  })

  it("answers 404 for an unknown path, 405 for a wrong method, 400 invalid_request for a malformed UUID", async () => {
    for (const path of ["/nope", "/meetings/x/y/z", "/Meetings", "/meetings/", "/backlog-items/history/extra"]) {
      expectPartnerError(await admin.partner.get(`${USER}${path}`), 404, "not_found")
    }
    expectPartnerError(await client(server.url).get(`${USER}/nope`), 404, "not_found")

    const meeting = await createMeeting(admin.api)
    const wrong = await admin.partner.delete(`${USER}/meetings`)
    expectPartnerError(wrong, 405, "method_not_allowed")
    expect(wrong.headers.get("allow")).toContain("GET")
    expectPartnerError(await admin.partner.patch(`${USER}/meetings/${meeting.id}/agenda-items`, { title: "x" }), 405, "method_not_allowed")
    expectPartnerError(await admin.partner.post(`${USER}/backlog-items/history`, {}), 405, "method_not_allowed")

    for (const path of ["/meetings/not-a-uuid/agenda-items", "/backlog-items/xyz", `/meetings/${meeting.id}/attachments/zzz`, "/meetings/1234/next-steps"]) {
      expectPartnerError(await admin.partner.get(`${USER}${path}`), 400, "invalid_request")
    }
    expectPartnerError(await admin.partner.put(`${USER}/meetings/${meeting.id}/agenda-items/123`, { title: "x" }), 400, "invalid_request")
    expectPartnerError(await fetchBytes(`${server.url}/v1/partner/files/nope/${meeting.id}/${crypto.randomUUID()}?expires=1&kid=k&signature=${"0".repeat(64)}`), 400, "invalid_request")
  })
})

// ------------------------------------------------------------------------------------------- signing key rotation

describe("pre-signed URLs across a rotation of the signing key (last: it changes the server's active key)", () => {
  it("signs new URLs with the new key, which serve the bytes", async () => {
    const meeting = await createMeeting(admin.api)
    const form = new FormData()
    form.append("file", new Blob(["rotated"], { type: "text/plain" }), "rotated.txt")
    const uploaded = await fetch(`${server.url}${USER}/meetings/${meeting.id}/attachments`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin.tokens.access_token}` },
      body: form
    }).then(async (response) => ({ status: response.status, body: (await response.json()) as { id: string; download_url: string } }))
    expect(uploaded.status).toBe(201)
    const before = new URL(uploaded.body.download_url).searchParams.get("kid")

    const rotated = await client(server.url, OPERATOR_TOKEN).post("/operator/v1/signing-keys/rotate")
    expect(rotated.status, rotated.text).toBe(200)
    const fresh = await admin.partner.get(`${USER}/meetings/${meeting.id}/attachments/${uploaded.body.id}`)
    const kid = new URL(fresh.body.download_url).searchParams.get("kid")
    expect(kid).toBe(rotated.body.kid)
    expect(kid).not.toBe(before)
    expect((await fetchBytes(fresh.body.download_url)).text).toBe("rotated")
    // The new URL with the old key's id is refused.
    const oldKid = new URL(fresh.body.download_url)
    oldKid.searchParams.set("kid", before!)
    expectPartnerError(await fetchBytes(oldKid.toString()), 404, "not_found")
  })
})
