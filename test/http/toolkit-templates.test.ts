/**
 * Toolkits' meeting templates in the first-party API end to end, on real sockets: a partner app (made by the
 * operator, connected to a workspace) publishes a toolkit with a meeting template; once the server's background
 * distribution installed it, GET /v1/meeting-templates lists it after the built-in ones (`toolkit_id`, a derived id,
 * the manifest's name as description), a meeting created from it starts with its agenda, and it can be the
 * workspace's default. A version without it (forced past the conflict) makes it go: 404 on create, the default passed
 * over, meetings made from it keep their agenda. Another workspace never sees it.
 */
import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import {
  eventually,
  expectError,
  operator,
  type PartnerAdmin,
  partnerAdminOf,
  UUID,
  useServer,
  workspace
} from "./fixtures.js"

const server = useServer()
const TOOLKITS = "/v1/partner/admin/toolkits"

const kickoff = {
  key: "kickoff",
  name: "Deal kickoff",
  agenda: [{ title: "Welcome" }, { title: "Risks", item_type: "QUESTIONS_TO_ANSWER" }, { title: "Wrap up", item_type: "ADJOURN" }]
}
/** The kickoff's agenda as a meeting made from it has it: [title, item_type]. */
const kickoffAgenda = [["Welcome", "DISCUSSION"], ["Risks", "QUESTIONS_TO_ANSWER"], ["Wrap up", "ADJOURN"]]
const review = { key: "review", name: "Deal review", agenda: [{ title: "Numbers" }] }

const manifest = (templates: ReadonlyArray<unknown>) => ({ schema_version: 1, name: "Sales kit", meeting_templates: templates })

/** The id the documents give a toolkit's template: SHA-256 of `meeting_template:<toolkit_id>:<key>` as a UUID v8. */
const expectedId = (toolkitId: string, key: string) => {
  const hex = createHash("sha256").update(`meeting_template:${toolkitId}:${key}`).digest("hex")
  const variant = ((Number.parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

/** Publishes the version (forced to every workspace with the toolkit or, as it installs itself, connected) and waits until it is in use. */
const publishAndWait = async (admin: PartnerAdmin, toolkitId: string, versionId: string) => {
  const published = await admin.post(`${TOOLKITS}/${toolkitId}/versions/${versionId}/publish`, { propagation: "force" })
  expect(published.status, published.text).toBe(200)
  const installations = await eventually(
    () => admin.get(`${TOOLKITS}/${toolkitId}/installations`),
    (answer) =>
      answer.body.items?.length > 0 &&
      answer.body.items.every((item: { status: string; version_id: string }) => item.status === "installed" && item.version_id === versionId)
  )
  expect(installations.body.summary).toMatchObject({ installed: 1, pending: 0, failed: 0 })
}

describe("toolkit meeting templates in /v1/meeting-templates", () => {
  it("listed once installed, start a meeting with their agenda, serve as default, and go with a version without them", async () => {
    const ws = await workspace(server.url, "PRO")
    const owner = await ws.addUser({ role: "OWNER" })
    const memberOf = await ws.addUser({ role: "MEMBER" })
    const app = (await operator(server.url).post("/operator/v1/partner-apps", { name: `Acme ${crypto.randomUUID().slice(0, 6)}` })).body
    const connected = await operator(server.url).post(`/operator/v1/partner-apps/${app.id}/workspaces`, { workspace_id: ws.workspaceId })
    expect(connected.status, connected.text).toBe(201)
    const admin = partnerAdminOf(server.url, app)

    const templates = async (api = owner.api) => {
      const listed = await api.get("/v1/meeting-templates?limit=100")
      expect(listed.status, listed.text).toBe(200)
      return listed.body as { items: Array<Record<string, unknown>>; total: number }
    }
    const builtIn = await templates()
    expect(builtIn.total).toBe(5)
    expect(builtIn.items.every((template) => template.toolkit_id === null)).toBe(true)

    const created = await admin.post(TOOLKITS, { manifest: manifest([kickoff, review]) })
    expect(created.status, created.text).toBe(201)
    const toolkit = created.body
    // Installing itself in the app's connected workspaces.
    expect((await admin.patch(`${TOOLKITS}/${toolkit.id}`, { auto_install_on_new_workspaces: true })).status).toBe(200)
    // A draft shows nothing.
    expect((await templates()).total).toBe(5)
    await publishAndWait(admin, toolkit.id, toolkit.latest_version_id)

    const kickoffId = expectedId(toolkit.id, "kickoff")
    expect(kickoffId).toMatch(UUID)
    const listed = await templates()
    expect(listed.total).toBe(7)
    expect(listed.items.slice(0, 5)).toEqual(builtIn.items)
    expect(listed.items.slice(5)).toEqual([
      {
        id: kickoffId,
        name: "Deal kickoff",
        description: "Sales kit",
        detail_level: "standard",
        agenda_items: kickoffAgenda.map(([title, item_type]) => ({ title, description: null, item_type })),
        toolkit_id: toolkit.id
      },
      {
        id: expectedId(toolkit.id, "review"),
        name: "Deal review",
        description: "Sales kit",
        detail_level: "standard",
        agenda_items: [{ title: "Numbers", description: null, item_type: "DISCUSSION" }],
        toolkit_id: toolkit.id
      }
    ])
    // Every user of the workspace sees them; another workspace does not.
    expect((await templates(memberOf.api)).items.slice(5).map((template) => template.id)).toEqual([kickoffId, expectedId(toolkit.id, "review")])
    const stranger = await (await workspace(server.url, "PRO")).addUser({ role: "OWNER" })
    expect((await templates(stranger.api)).total).toBe(5)
    expectError(await stranger.api.post("/v1/meetings", { title: "Nope", template_id: kickoffId }), 404, "not_found")

    const agendaOf = async (meetingId: string) => {
      const agenda = await owner.api.get(`/v1/agenda-items?meeting_id=${meetingId}&limit=100`)
      expect(agenda.status, agenda.text).toBe(200)
      return agenda.body.items.map((item: { title: string; item_type: string }) => [item.title, item.item_type])
    }
    const fromTemplate = await owner.api.post("/v1/meetings", { title: "Kickoff with Initech", template_id: kickoffId })
    expect(fromTemplate.status, fromTemplate.text).toBe(201)
    expect(fromTemplate.body).toMatchObject({ template_id: kickoffId, detail_level: "standard" })
    expect(await agendaOf(fromTemplate.body.id)).toEqual(kickoffAgenda)

    // The workspace's default template may be a toolkit's.
    const settings = await owner.api.patch("/v1/workspace", { default_template_id: kickoffId })
    expect(settings.status, settings.text).toBe(200)
    expect(settings.body.default_template_id).toBe(kickoffId)
    const byDefault = await owner.api.post("/v1/meetings", { title: "Kickoff by default" })
    expect(byDefault.body.template_id).toBe(kickoffId)
    expect(await agendaOf(byDefault.body.id)).toEqual(kickoffAgenda)

    // A version without the template: dropping an installed key needs force.
    expectError(await stranger.api.patch("/v1/workspace", { default_template_id: kickoffId }), 404, "not_found")
    const refused = await admin.post(`${TOOLKITS}/${toolkit.id}/versions`, { manifest: manifest([review]) })
    expect(refused.status, refused.text).toBe(409)
    const next = await admin.post(`${TOOLKITS}/${toolkit.id}/versions`, { manifest: manifest([review]), force: true })
    expect(next.status, next.text).toBe(201)
    await publishAndWait(admin, toolkit.id, next.body.id)

    const after = await templates()
    expect(after.total).toBe(6)
    expect(after.items.map((template) => template.id)).not.toContain(kickoffId)
    expect(after.items[5]).toMatchObject({ id: expectedId(toolkit.id, "review"), toolkit_id: toolkit.id })
    expectError(await owner.api.post("/v1/meetings", { title: "Too late", template_id: kickoffId }), 404, "not_found")
    expectError(await owner.api.patch("/v1/workspace", { default_template_id: kickoffId }), 404, "not_found")
    // The default is kept but passed over: the meeting starts with no template.
    expect((await owner.api.get("/v1/workspace")).body.default_template_id).toBe(kickoffId)
    const plain = await owner.api.post("/v1/meetings", { title: "Default gone" })
    expect(plain.status, plain.text).toBe(201)
    expect(plain.body.template_id).toBeNull()
    expect(await agendaOf(plain.body.id)).toEqual([])
    // Meetings made from it keep their agenda.
    expect(await agendaOf(fromTemplate.body.id)).toEqual(kickoffAgenda)
    expect((await owner.api.get(`/v1/meetings/${fromTemplate.body.id}`)).body.template_id).toBe(kickoffId)

    // Deleting the toolkit takes its templates away.
    expect((await admin.delete(`${TOOLKITS}/${toolkit.id}`)).status).toBe(204)
    expect((await templates()).total).toBe(5)
  }, 60_000)
})
