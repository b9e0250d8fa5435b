/**
 * A field with a fixed set of values is refused with every allowed value named, in the order the API
 * documents them, in the same words as the other validation messages ("must be ..."): never the schema's
 * words (no type names, no "Expected ..., actual ...") and never the value sent.
 */
import { describe, expect, it } from "vitest"
import { expectValidation, member, operator, type Response, useServer, workspace } from "./fixtures.js"

const server = useServer()

const PLANS = `"FREE", "PRO", "ELITE", "ENTERPRISE"`
const ROLES = `"OWNER", "ADMIN", "MEMBER"`
const MEETING_STATUSES = `"scheduled", "in_progress", "ended", "cancelled"`
const ACTION_ITEM_STATUSES = `"needs_review", "accepted", "in_progress", "blocked", "completed", "cancelled"`

/** A 400 validation_error whose message is exactly `field: must be one of <values>`. */
const expectOneOf = (response: Response, field: string, values: string, sent: string) => {
  expectValidation(response, field)
  expect(response.body.error).toBe(`${field}: must be one of ${values}`)
  expect(response.body.error).not.toMatch(/Expected|actual|Literal|Schema|Plan\b|Role\b/)
  expect(response.body.error).not.toContain(sent)
}

describe("string values", () => {
  it("plan: creating and changing a workspace", async () => {
    expectOneOf(await operator(server.url).post("/operator/v1/workspaces", { name: "Acme", plan: "GOLD" }), "plan", PLANS, "GOLD")
    const ws = await workspace(server.url)
    expectOneOf(await operator(server.url).patch(`/operator/v1/workspaces/${ws.workspaceId}`, { plan: "gold" }), "plan", PLANS, "gold")
  })

  it("role: a user's role in the workspace, and a participant's on a meeting", async () => {
    const ws = await workspace(server.url)
    const created = await operator(server.url).post(`/operator/v1/workspaces/${ws.workspaceId}/users`, {
      email: `role-${crypto.randomUUID()}@example.com`,
      name: "Role",
      role: "KING"
    })
    expectOneOf(created, "role", ROLES, "KING")
    const { api } = await member(server.url)
    const meeting = await api.post("/v1/meetings", { title: "Roles" })
    expect(meeting.status).toBe(201)
    const added = await api.post(`/v1/meetings/${meeting.body.id}/participants`, {
      participants: [{ guest_email: "guest@example.com", role: "OWNER" }]
    })
    expectOneOf(added, "participants[0].role", `"EDITOR", "VIEWER"`, "OWNER\"")
  })

  it("status: meeting and action item filters, and a meeting's status change", async () => {
    const { api } = await member(server.url)
    expectOneOf(await api.get("/v1/meetings?status=done"), "status", MEETING_STATUSES, "done")
    expectOneOf(await api.get("/v1/meetings/search?status=done"), "status", MEETING_STATUSES, "done")
    expectOneOf(await api.get("/v1/action-items?status=done"), "status", ACTION_ITEM_STATUSES, "done")
    const meeting = await api.post("/v1/meetings", { title: "Status" })
    expectOneOf(await api.patch(`/v1/meetings/${meeting.body.id}`, { status: "done" }), "status", MEETING_STATUSES, "done")
    const item = await api.post("/v1/action-items", { meeting_id: meeting.body.id, title: "Follow up" })
    expect(item.status).toBe(201)
    expectOneOf(await api.patch(`/v1/action-items/${item.body.id}`, { status: "done" }), "status", ACTION_ITEM_STATUSES, "done")
  })

  it("item_type and detail_level", async () => {
    const { api } = await member(server.url)
    const meeting = await api.post("/v1/meetings", { title: "Types" })
    expectOneOf(
      await api.post("/v1/agenda-items", { meeting_id: meeting.body.id, title: "Item", item_type: "LUNCH" }),
      "item_type",
      `"DISCUSSION", "QUESTIONS_TO_ANSWER", "BREAK", "ADJOURN"`,
      "LUNCH"
    )
    expectOneOf(await api.post("/v1/meetings", { title: "Detail", detail_level: "verbose" }), "detail_level", `"brief", "standard", "detailed"`, "verbose")
  })
})

describe("numeric values", () => {
  it("expiry_days: personal access tokens issued by the user and by the operator", async () => {
    const { api, user } = await member(server.url)
    const own = await api.post("/v1/user/tokens", { name: "CI", scopes: ["meetings:read"], expiry_days: 7 })
    expectOneOf(own, "expiry_days", "30, 60, 90, 180, 365", "7,")
    const issued = await operator(server.url).post(`/operator/v1/users/${user.userId}/tokens`, {
      kind: "personal_access_token",
      scopes: ["meetings:read"],
      expiry_days: 45
    })
    expectOneOf(issued, "expiry_days", "30, 60, 90, 180, 365", "45")
    // A number sent as a string is not one of the numbers either.
    expectOneOf(await api.post("/v1/user/tokens", { name: "CI", scopes: ["meetings:read"], expiry_days: "30" }), "expiry_days", "30, 60, 90, 180, 365", "\"30\"")
  })

  it("expiry_hours: short-lived tokens", async () => {
    const { user } = await member(server.url)
    const issued = await operator(server.url).post(`/operator/v1/users/${user.userId}/tokens`, {
      kind: "short_lived",
      scopes: ["meetings:read"],
      expiry_hours: 3
    })
    expectOneOf(issued, "expiry_hours", "1, 2, 4, 6", "3,")
  })
})
