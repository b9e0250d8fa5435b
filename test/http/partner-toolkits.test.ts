/**
 * Partner toolkits end to end (/v1/partner/admin/toolkits...), on real sockets, on the in-memory store and on a
 * PostgreSQL server: a manifest round trip (create, export, create again from the export: equal), the path of a
 * manifest's first problem, conflicts with and without force, publish propagation counted against workspaces the
 * operator connected (one opted out of automatic updates through the server's own store, as those workspaces have no
 * users; the first-party setting's route is exercised below), the installations' summary once the server's background
 * distribution ran, and deletion. Then, with the partner OAuth flow (a real sign-in and consent), the user context's next steps and action buttons of the
 * installed toolkits, what a new version removes, and the workspace's opt-out through GET and PUT
 * /v1/workspace/toolkit-updates. Last, on PostgreSQL, a publish made through the core with no server running (the
 * queue is then all pending) is installed by a server started afterwards.
 */
import {
  CreatePartnerApp,
  CreateToolkit,
  CreateWorkspace,
  PartnerApps,
  PartnerStore,
  PublishToolkitVersion,
  type StorePorts,
  Toolkits,
  ToolkitStore,
  WorkspaceId,
  Workspaces
} from "@convene/core"
import * as StorePg from "@convene/store-pg"
import { type Context, Effect, Exit, Layer, Option, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { serverDatabase } from "../../packages/store-pg/test/fixtures.js"
import { client, type Client, OPERATOR_TOKEN, type RunningServer, startServer } from "../support/server.js"
import { toolkitsOver } from "../core/partner/toolkit-fixtures.js"
import { memoryStore, postgresStore } from "../support/stores.js"
import { eventually, expectPartnerError, type PartnerAdmin, partnerAdminOf, TIMESTAMP, UUID } from "./fixtures.js"
import { partnerFlow } from "./oauth/partner-support.js"
import { newUser, useOAuthServer } from "./oauth/support.js"

const ADMIN = "/v1/partner/admin/toolkits"
const TOOLKIT_KEYS = [
  "auto_install_on_new_workspaces",
  "auto_propagate",
  "created_at",
  "description",
  "id",
  "latest_version_id",
  "name",
  "published_version_id",
  "updated_at"
]

const manifest = (name: string, steps: ReadonlyArray<string>, buttons: ReadonlyArray<string> = []) => ({
  schema_version: 1,
  name,
  next_steps: steps.map((key) => ({ key, title: `Step ${key}` })),
  action_buttons: buttons.map((key) => ({ key, label: `Open ${key}`, url: `https://${key}.example.com/open` }))
})

const fullManifest = {
  schema_version: 1,
  name: "Sales kit",
  description: "Everything sales",
  next_steps: [{ key: "follow-up", title: "Follow up", description: "Send the notes" }, { key: "quote", title: "Quote" }],
  action_buttons: [{ key: "crm", label: "Open CRM", url: "https://crm.example.com/deals?x=1" }],
  meeting_templates: [{ key: "kickoff", name: "Kickoff", agenda: [{ title: "Intro", item_type: "BREAK" }, { title: "Plan" }] }],
  workflow_templates: [{
    key: "deal",
    name: "Deal review",
    description: "Review a deal",
    roles: ["owner", "approver"],
    steps: [
      { key: "draft", type: "task", title: "Draft", role: "owner" },
      { key: "approve", type: "approval", title: "Approve", role: "approver" },
      { key: "notify", type: "webhook", title: "Notify", url: "https://hooks.example.com/deal" }
    ]
  }]
}

/** The installations' summary once no installation is pending. */
const settled = (admin: PartnerAdmin, toolkitId: string) =>
  eventually(() => admin.get(`${ADMIN}/${toolkitId}/installations`), (answer) => answer.body.summary?.pending === 0)

const stores = [memoryStore, postgresStore]

describe.each(stores)("partner toolkits ($name)", (store) => {
  const scope = Effect.runSync(Scope.make())
  const state: { server?: RunningServer; ports?: Context.Context<StorePorts>; operator?: Client } = {}
  beforeAll(async () => {
    state.ports = await Effect.runPromise(Scope.extend(Layer.build(store.layer(scope)), scope)) as Context.Context<StorePorts>
    state.server = await startServer({ store: Layer.succeedContext(state.ports) })
    state.operator = client(state.server.url, OPERATOR_TOKEN)
  }, 120_000)
  afterAll(async () => {
    await state.server?.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }, 60_000)

  /** A new partner app with `workspaces` workspaces the operator connected to it. */
  const newApp = async (workspaces = 0) => {
    const operator = state.operator!
    const app = (await operator.post("/operator/v1/partner-apps", { name: `Acme ${crypto.randomUUID().slice(0, 6)}` })).body
    const ids: Array<string> = []
    for (let i = 0; i < workspaces; i++) {
      const workspace = (await operator.post("/operator/v1/workspaces", { name: `Client ${i}`, plan: "PRO" })).body
      expect((await operator.post(`/operator/v1/partner-apps/${app.id}/workspaces`, { workspace_id: workspace.id })).status).toBe(201)
      ids.push(workspace.id)
    }
    return { admin: partnerAdminOf(state.server!.url, app), workspaces: ids }
  }

  const optOut = (workspaceId: string) =>
    Effect.runPromise(Effect.flatMap(ToolkitStore, (toolkits) => toolkits.setAutoUpdates(WorkspaceId.make(workspaceId), false)).pipe(
      Effect.provide(state.ports!)
    ))

  it("a manifest round trip: create (version 1, draft), export, create again from the export: the same manifest", async () => {
    const { admin } = await newApp()
    const created = await admin.post(ADMIN, { manifest: { ...fullManifest, restricted_to_leads: true } })
    expect(created.status, created.text).toBe(201)
    expect(Object.keys(created.body).sort()).toEqual(TOOLKIT_KEYS)
    expect(created.body).toMatchObject({
      name: "Sales kit",
      description: "Everything sales",
      auto_propagate: false,
      auto_install_on_new_workspaces: false,
      published_version_id: null
    })
    expect(created.body.id).toMatch(UUID)
    expect(created.body.created_at).toMatch(TIMESTAMP)
    const version = await admin.get(`${ADMIN}/${created.body.id}/versions/${created.body.latest_version_id}`)
    expect(version.body).toMatchObject({ toolkit_id: created.body.id, number: 1, status: "draft", published_at: null, manifest: fullManifest })

    const exported = await admin.get(`${ADMIN}/${created.body.id}/export`)
    expect(exported.status).toBe(200)
    expect(exported.body).toEqual(fullManifest)
    const again = await admin.post(ADMIN, { manifest: exported.body })
    expect((await admin.get(`${ADMIN}/${again.body.id}/export`)).body).toEqual(exported.body)

    const bulk = await admin.post(`${ADMIN}/export`, { toolkit_ids: [again.body.id, created.body.id] })
    expect(bulk.status).toBe(200)
    // Oldest first (two made in the same millisecond go by id).
    const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : 1)
    expect([...bulk.body.toolkits].sort(byId)).toEqual(
      [{ id: created.body.id, manifest: fullManifest }, { id: again.body.id, manifest: fullManifest }].sort(byId)
    )
    const listed = await admin.get(`${ADMIN}?limit=1`)
    expect(listed.body).toMatchObject({ total: 2, limit: 1, offset: 0 })
    expect([created.body.id, again.body.id]).toContain(listed.body.items[0].id)
  })

  it("refusals in the partner envelope: the manifest's first problem by its path, unknown fields, unknown ids", async () => {
    const { admin } = await newApp()
    const duplicate = await admin.post(ADMIN, { manifest: manifest("Kit", ["x", "y", "x"]) })
    expectPartnerError(duplicate, 400, "invalid_request_body")
    expect(duplicate.body.error).toBe("manifest.next_steps[2].key: duplicate key \"x\"")
    const http = await admin.post(ADMIN, { manifest: { ...manifest("Kit", []), action_buttons: [{ key: "a", label: "A", url: "http://a.example.com" }] } })
    expectPartnerError(http, 400, "invalid_request_body")
    expect(http.body.error).toBe("manifest.action_buttons[0].url: must be an HTTPS URL (https://...)")
    expectPartnerError(await admin.post(ADMIN, { manifest: manifest("Kit", []), colour: "red" }), 400, "invalid_request_body")
    expectPartnerError(await admin.post(ADMIN, "not json"), 400, "invalid_request_body")
    expectPartnerError(await admin.get(`${ADMIN}/${crypto.randomUUID()}`), 404, "not_found")
    // A body is decoded before anything is looked up: a bad manifest is 400 for an unknown toolkit too, a good one 404.
    const nobody = `${ADMIN}/${crypto.randomUUID()}/versions`
    expectPartnerError(await admin.post(nobody, { manifest: { ...manifest("Kit", ["a"]), aaa: "x" } }), 400, "invalid_request_body", "aaa")
    expectPartnerError(await admin.post(nobody, { manifest: manifest("Kit", ["a"]) }), 404, "not_found")
    expectPartnerError(await admin.get(`${ADMIN}/not-a-uuid`), 400, "invalid_request_body")
    const created = await admin.post(ADMIN, { manifest: manifest("Kit", []) })
    const { admin: other } = await newApp()
    expectPartnerError(await other.get(`${ADMIN}/${created.body.id}`), 404, "not_found")
    expectPartnerError(await other.post(`${ADMIN}/export`, { toolkit_ids: [created.body.id] }), 404, "not_found")
    expectPartnerError(
      await admin.get(`${ADMIN}/${created.body.id}/versions/${crypto.randomUUID()}`),
      404,
      "not_found"
    )
  })

  it("publish counts the operator's connected workspaces per mode; the distribution installs; conflicts need force", async () => {
    const { admin, workspaces } = await newApp(3)
    const toolkit = (await admin.post(ADMIN, { manifest: manifest("Kit", ["a", "b"]) })).body
    const patched = await admin.patch(`${ADMIN}/${toolkit.id}`, { auto_install_on_new_workspaces: true })
    expect(patched.body).toMatchObject({ auto_install_on_new_workspaces: true, auto_propagate: false })

    const first = await admin.post(`${ADMIN}/${toolkit.id}/versions/${toolkit.latest_version_id}/publish`, { propagation: "normal" })
    expect(first.status, first.text).toBe(200)
    expect(first.body.propagation).toEqual({ mode: "normal", workspaces_queued: 3, workspaces_skipped_opted_out: 0 })
    expect(first.body.version).toMatchObject({ id: toolkit.latest_version_id, status: "published" })
    expect(first.body.version.published_at).toMatch(TIMESTAMP)
    const installed = await settled(admin, toolkit.id)
    expect(installed.body.summary).toEqual({ installed: 3, pending: 0, failed: 0, outdated: 0 })
    expect(installed.body.total).toBe(3)
    expect(installed.body.items.map((item: { workspace_id: string }) => item.workspace_id).sort()).toEqual([...workspaces].sort())

    // A version that drops b conflicts; with force it is made.
    const dropping = { manifest: manifest("Kit", ["a", "c"]) }
    const refused = await admin.post(`${ADMIN}/${toolkit.id}/versions`, dropping)
    expect(refused.status, refused.text).toBe(409)
    expect(Object.keys(refused.body).sort()).toEqual(["code", "conflicts", "error", "request_id"])
    expect(refused.body).toMatchObject({ code: "conflict", conflicts: [{ key: "next_steps.b", reason: "removed_while_installed" }] })
    const forced = await admin.post(`${ADMIN}/${toolkit.id}/versions`, { ...dropping, force: true })
    expect(forced.status, forced.text).toBe(201)
    expect(forced.body).toMatchObject({ number: 2, status: "draft" })

    await optOut(workspaces[0]!)
    const second = await admin.post(`${ADMIN}/${toolkit.id}/versions/${forced.body.id}/publish`, {})
    // auto_propagate is false: no propagation given is none.
    expect(second.body.propagation).toEqual({ mode: "none", workspaces_queued: 0, workspaces_skipped_opted_out: 0 })
    expect((await settled(admin, toolkit.id)).body.summary).toEqual({ installed: 0, pending: 0, failed: 0, outdated: 3 })
    await admin.patch(`${ADMIN}/${toolkit.id}`, { auto_propagate: true })
    const third = await admin.post(`${ADMIN}/${toolkit.id}/versions/${forced.body.id}/publish`, {})
    expect(third.body.propagation).toEqual({ mode: "normal", workspaces_queued: 2, workspaces_skipped_opted_out: 1 })
    const after = await settled(admin, toolkit.id)
    expect(after.body.summary).toEqual({ installed: 2, pending: 0, failed: 0, outdated: 1 })
    expect(after.body.items.find((item: { workspace_id: string }) => item.workspace_id === workspaces[0])).toMatchObject({
      status: "outdated",
      version_id: toolkit.latest_version_id,
      reason: null
    })
    const forcedPublish = await admin.post(`${ADMIN}/${toolkit.id}/versions/${forced.body.id}/publish`, { propagation: "force" })
    expect(forcedPublish.body.propagation).toEqual({ mode: "force", workspaces_queued: 3, workspaces_skipped_opted_out: 0 })
    expect((await settled(admin, toolkit.id)).body.summary).toEqual({ installed: 3, pending: 0, failed: 0, outdated: 0 })
    const versions = await admin.get(`${ADMIN}/${toolkit.id}/versions`)
    expect(versions.body.items.map((item: { number: number }) => item.number)).toEqual([2, 1])
    // The export is the published version's.
    expect((await admin.get(`${ADMIN}/${toolkit.id}/export`)).body).toEqual(dropping.manifest)
  })

  it("concurrent changes of one toolkit are made one after the other: versions numbered without gaps or repeats, no field lost", async () => {
    const { admin } = await newApp()
    const toolkit = (await admin.post(ADMIN, { manifest: manifest("Kit", ["a"]) })).body
    const created = await Promise.all(Array.from({ length: 6 }, (_, i) =>
      admin.post(`${ADMIN}/${toolkit.id}/versions`, { manifest: manifest(`Kit ${i}`, ["a"]) })))
    for (const answer of created) expect(answer.status, answer.text).toBe(201)
    expect(created.map((answer) => answer.body.number).sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7])
    // A PUT and a PATCH at once: each keeps what the other changed.
    const [renamed, patched] = await Promise.all([
      admin.put(`${ADMIN}/${toolkit.id}`, { name: "Renamed" }),
      admin.patch(`${ADMIN}/${toolkit.id}`, { auto_propagate: true })
    ])
    expect([renamed.status, patched.status]).toEqual([200, 200])
    expect((await admin.get(`${ADMIN}/${toolkit.id}`)).body).toMatchObject({ name: "Renamed", auto_propagate: true })
  })

  it("a key another installed toolkit holds conflicts, and its forced install fails with the reason; PUT renames; DELETE frees it", async () => {
    const { admin, workspaces } = await newApp(1)
    const ids: Array<string> = []
    for (const [name, steps] of [["One", ["a"]], ["Two", ["x"]]] as const) {
      const toolkit = (await admin.post(ADMIN, { manifest: manifest(name, steps) })).body
      await admin.patch(`${ADMIN}/${toolkit.id}`, { auto_install_on_new_workspaces: true })
      await admin.post(`${ADMIN}/${toolkit.id}/versions/${toolkit.latest_version_id}/publish`, { propagation: "normal" })
      await settled(admin, toolkit.id)
      ids.push(toolkit.id)
    }
    const [one, two] = ids as [string, string]
    const taking = { manifest: manifest("One", ["a", "x"]) }
    const refused = await admin.post(`${ADMIN}/${one}/versions`, taking)
    expect(refused.body).toMatchObject({ code: "conflict", conflicts: [{ key: "next_steps.x", reason: "held_by_another_toolkit" }] })
    const forced = (await admin.post(`${ADMIN}/${one}/versions`, { ...taking, force: true })).body
    await admin.post(`${ADMIN}/${one}/versions/${forced.id}/publish`, { propagation: "force" })
    const failed = await settled(admin, one)
    expect(failed.body.items).toEqual([{
      workspace_id: workspaces[0],
      toolkit_id: one,
      version_id: forced.id,
      status: "failed",
      reason: "the key next_steps.x is held by another toolkit installed in the workspace",
      updated_at: expect.stringMatching(TIMESTAMP)
    }])

    const renamed = await admin.put(`${ADMIN}/${two}`, { name: "Two renamed", description: null })
    expect(renamed.body).toMatchObject({ name: "Two renamed", description: null })
    const deleted = await admin.delete(`${ADMIN}/${two}`)
    expect(deleted.status).toBe(204)
    expect(deleted.text).toBe("")
    expectPartnerError(await admin.get(`${ADMIN}/${two}`), 404, "not_found")
    await admin.post(`${ADMIN}/${one}/versions/${forced.id}/publish`, { propagation: "force" })
    expect((await settled(admin, one)).body.summary).toEqual({ installed: 1, pending: 0, failed: 0, outdated: 0 })
  })
})

describe("partner toolkits in the user context", () => {
  const server = useOAuthServer()
  const flow = partnerFlow(server)

  it("the installed version's next steps and action buttons show for the workspace's meetings; a new version removes what it drops", async () => {
    const app = await flow.createApp()
    const user = await newUser(server.url, { role: "ADMIN", plan: "PRO" })
    const tokens = await flow.tokensFor(user, app)
    const partner = client(server.url, tokens.access_token)
    const issued = await client(server.url, OPERATOR_TOKEN).post(`/operator/v1/users/${user.userId}/tokens`, {
      kind: "personal_access_token",
      scopes: ["meetings:read", "meetings:write", "workspace:read", "workspace:write"],
      expiry_days: 30
    })
    expect(issued.status, issued.text).toBe(201)
    const firstParty = client(server.url, issued.body.token)
    const created = await firstParty.post("/v1/meetings", { title: "Deal review" })
    expect(created.status, created.text).toBe(201)
    const meeting = created.body
    const admin = partnerAdminOf(server.url, app)

    const nextSteps = () => partner.get(`/v1/partner/user/meetings/${meeting.id}/next-steps`)
    const buttons = () => partner.get(`/v1/partner/user/meetings/${meeting.id}/action-buttons`)
    expect((await nextSteps()).body).toMatchObject({ items: [], total: 0 })

    const toolkit = (await admin.post(ADMIN, { manifest: manifest("Kit", ["a", "b"], ["crm"]) })).body
    await admin.patch(`${ADMIN}/${toolkit.id}`, { auto_install_on_new_workspaces: true, auto_propagate: true })
    // The OAuth consent connected the user's workspace to the app.
    const published = await admin.post(`${ADMIN}/${toolkit.id}/versions/${toolkit.latest_version_id}/publish`, {})
    expect(published.body.propagation).toEqual({ mode: "normal", workspaces_queued: 1, workspaces_skipped_opted_out: 0 })
    const steps = await eventually(nextSteps, (answer) => answer.body.total === 2)
    expect(steps.body).toEqual({
      items: [
        { key: "a", title: "Step a", description: null, toolkit_id: toolkit.id },
        { key: "b", title: "Step b", description: null, toolkit_id: toolkit.id }
      ],
      total: 2,
      limit: 20,
      offset: 0
    })
    expect((await buttons()).body.items).toEqual([
      { id: `${toolkit.id}:crm`, key: "crm", label: "Open crm", url: "https://crm.example.com/open", toolkit_id: toolkit.id }
    ])
    // Another app the same user connected sees only its own toolkits' (none): this app's are its business.
    const other = client(server.url, (await flow.tokensFor(user, await flow.createApp())).access_token)
    expect((await other.get(`/v1/partner/user/meetings/${meeting.id}/next-steps`)).body).toMatchObject({ items: [], total: 0 })
    expect((await other.get(`/v1/partner/user/meetings/${meeting.id}/action-buttons`)).body).toMatchObject({ items: [], total: 0 })

    const next = await admin.post(`${ADMIN}/${toolkit.id}/versions`, { manifest: manifest("Kit", ["a", "c"]), force: true })
    await admin.post(`${ADMIN}/${toolkit.id}/versions/${next.body.id}/publish`, {})
    const changed = await eventually(nextSteps, (answer) => answer.body.items?.some((step: { key: string }) => step.key === "c"))
    expect(changed.body.items.map((step: { key: string }) => step.key)).toEqual(["a", "c"])
    expect((await buttons()).body).toMatchObject({ items: [], total: 0 })

    // The workspace opts out of automatic toolkit updates (a first-party setting): a normal publish skips it.
    expect((await firstParty.get("/v1/workspace/toolkit-updates")).body).toEqual({ auto_updates: true })
    const optedOut = await firstParty.put("/v1/workspace/toolkit-updates", { auto_updates: false })
    expect(optedOut.status, optedOut.text).toBe(200)
    expect((await firstParty.get("/v1/workspace/toolkit-updates")).body).toEqual({ auto_updates: false })
    expect((await firstParty.put("/v1/workspace/toolkit-updates", { auto_updates: "no" })).status).toBe(400)
    const third = await admin.post(`${ADMIN}/${toolkit.id}/versions`, { manifest: manifest("Kit", ["a", "c", "d"]) })
    const skipped = await admin.post(`${ADMIN}/${toolkit.id}/versions/${third.body.id}/publish`, {})
    expect(skipped.body.propagation).toEqual({ mode: "normal", workspaces_queued: 0, workspaces_skipped_opted_out: 1 })
    expect((await admin.get(`${ADMIN}/${toolkit.id}/installations`)).body.summary).toEqual({ installed: 0, pending: 0, failed: 0, outdated: 1 })
    expect((await nextSteps()).body.items.map((step: { key: string }) => step.key)).toEqual(["a", "c"])

    expect((await admin.delete(`${ADMIN}/${toolkit.id}`)).status).toBe(204)
    expect((await nextSteps()).body).toMatchObject({ items: [], total: 0 })
  })
})

describe("partner toolkits: the distribution's queue is the store's (PostgreSQL)", () => {
  const scope = Effect.runSync(Scope.make())
  afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)), 60_000)

  it("a publish made with no server running is installed by a server started afterwards", async () => {
    const url = await Effect.runPromise(Scope.extend(serverDatabase, scope))
    const ports = await Effect.runPromise(Scope.extend(Layer.build(StorePg.layerPg({ url })), scope)) as Context.Context<StorePorts>
    const store = Layer.succeedContext(ports)
    // The publish, through the core alone: no server, so no distribution runs.
    const count = 40
    const { app, toolkitId } = await Effect.runPromise(Effect.gen(function*() {
      const apps = yield* PartnerApps
      const created = yield* apps.create(CreatePartnerApp.make({ name: "Durable app" }))
      for (let i = 0; i < count; i++) {
        const workspace = yield* (yield* Workspaces).create(new CreateWorkspace({ name: `Client ${i}`, plan: "PRO" }))
        yield* apps.connectWorkspace(created.id, workspace.id)
      }
      const app = Option.getOrThrow(yield* (yield* PartnerStore).get(created.id))
      const toolkits = yield* Toolkits
      const toolkit = yield* toolkits.create(app, new CreateToolkit({ manifest: manifest("Kit", ["a"]) }))
      yield* toolkits.patch(app, toolkit.id, { auto_install_on_new_workspaces: true })
      const published = yield* toolkits.publish(app, toolkit.id, toolkit.latest_version_id, new PublishToolkitVersion({ propagation: "normal" }))
      expect(published.propagation.workspaces_queued).toBe(count)
      return { app: created, toolkitId: toolkit.id }
    }).pipe(Effect.provide(toolkitsOver(store))))

    const server = await startServer({ store })
    try {
      const admin = partnerAdminOf(server.url, app)
      const pending = await admin.get(`${ADMIN}/${toolkitId}/installations`)
      expect(pending.body.total).toBe(count)
      const done = await settled(admin, toolkitId)
      expect(done.body.summary).toEqual({ installed: count, pending: 0, failed: 0, outdated: 0 })
    } finally {
      await server.close()
    }
  }, 90_000)
})
