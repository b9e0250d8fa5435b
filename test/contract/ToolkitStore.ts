import {
  decodeManifest,
  type Manifest,
  PartnerStore,
  type StorePorts,
  Toolkit,
  ToolkitId,
  ToolkitInstallation,
  ToolkitStore,
  ToolkitVersion,
  ToolkitVersionId,
  Transactor,
  type WorkspaceId
} from "@convene/core"
import { addEqualityTesters, expect, layer } from "@effect/vitest"
import { Deferred, Effect, Either, Fiber, type Layer, Option } from "effect"
import { at, minutes, seedWorkspace, uuid } from "./fixtures.js"
import { partnerApp } from "./PartnerStore.js"

const manifest = (name = "Kit"): Manifest =>
  Either.getOrThrow(decodeManifest({
    schema_version: 1,
    name,
    description: "A kit",
    next_steps: [{ key: "follow-up", title: "Follow up" }],
    action_buttons: [{ key: "crm", label: "CRM", url: "https://crm.example.com" }],
    meeting_templates: [{ key: "kickoff", name: "Kickoff", agenda: [{ title: "Intro", item_type: "BREAK" }] }],
    workflow_templates: [{
      key: "deal",
      name: "Deal",
      roles: ["owner"],
      steps: [{ key: "notify", type: "webhook", title: "Notify", role: "owner", url: "https://hooks.example.com" }]
    }]
  }))

const seedToolkit = (fields: Partial<Toolkit> = {}) =>
  Effect.gen(function*() {
    const app = partnerApp()
    yield* (yield* PartnerStore).insert(app)
    const toolkit = new Toolkit({
      id: ToolkitId.make(uuid()),
      partner_app_id: app.id,
      name: "Kit",
      description: "A kit",
      auto_propagate: true,
      auto_install_on_new_workspaces: false,
      latest_version_id: ToolkitVersionId.make(uuid()),
      published_version_id: null,
      created_at: minutes(0),
      updated_at: minutes(0),
      ...fields
    })
    yield* (yield* ToolkitStore).insertToolkit(toolkit)
    return toolkit
  })

const version = (toolkit: Toolkit, number: number, fields: Partial<ToolkitVersion> = {}) =>
  new ToolkitVersion({
    id: ToolkitVersionId.make(uuid()),
    toolkit_id: toolkit.id,
    number,
    manifest: manifest(`Kit ${number}`),
    status: "draft",
    created_at: minutes(number),
    published_at: null,
    ...fields
  })

const installation = (workspaceId: WorkspaceId, toolkit: Toolkit, fields: Partial<ToolkitInstallation> = {}) =>
  new ToolkitInstallation({
    workspace_id: workspaceId,
    toolkit_id: toolkit.id,
    version_id: toolkit.latest_version_id,
    installed_version_id: null,
    status: "pending",
    reason: null,
    updated_at: minutes(0),
    ...fields
  })

export const suite = (name: string, storeLayer: Layer.Layer<StorePorts, unknown>) => {
  addEqualityTesters()

  layer(storeLayer)(`ToolkitStore (${name})`, (it) => {
    it.effect("a toolkit reads back whole, only for its app; lists newest first; update replaces it", () =>
      Effect.gen(function*() {
        const store = yield* ToolkitStore
        const first = yield* seedToolkit()
        const second = new Toolkit({ ...first, id: ToolkitId.make(uuid()), description: null, created_at: minutes(1) })
        yield* store.insertToolkit(second)
        expect(yield* store.getToolkit(first.partner_app_id, first.id)).toEqual(Option.some(first))
        const other = yield* seedToolkit()
        expect(yield* store.getToolkit(other.partner_app_id, first.id)).toEqual(Option.none())
        const listed = yield* store.listToolkits(first.partner_app_id, { limit: 1, offset: 0 })
        expect(listed).toEqual({ items: [second], total: 2 })
        expect(yield* store.toolkitsOf(first.partner_app_id)).toEqual([first, second])
        expect(yield* store.toolkitsOf(first.partner_app_id, [second.id, other.id])).toEqual([second])
        const changed = new Toolkit({
          ...first,
          name: "Renamed",
          auto_propagate: false,
          auto_install_on_new_workspaces: true,
          published_version_id: first.latest_version_id,
          updated_at: minutes(9)
        })
        yield* store.updateToolkit(changed)
        expect(yield* store.getToolkit(first.partner_app_id, first.id)).toEqual(Option.some(changed))
      }))

    it.effect("getToolkitForUpdate holds the toolkit: a second unit of work reading it so waits and reads what the first committed", () =>
      Effect.gen(function*() {
        const store = yield* ToolkitStore
        const { withTransaction } = yield* Transactor
        const toolkit = yield* seedToolkit()
        expect(yield* store.getToolkitForUpdate(toolkit.partner_app_id, toolkit.id)).toEqual(Option.some(toolkit))
        expect(yield* store.getToolkitForUpdate(partnerApp().id, toolkit.id)).toEqual(Option.none())

        const held = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const first = yield* Effect.fork(withTransaction(Effect.gen(function*() {
          const read = Option.getOrThrow(yield* store.getToolkitForUpdate(toolkit.partner_app_id, toolkit.id))
          yield* Deferred.succeed(held, undefined)
          yield* Deferred.await(release)
          yield* store.updateToolkit(new Toolkit({ ...read, name: "First" }))
        })))
        yield* Deferred.await(held)
        const second = yield* Effect.fork(withTransaction(
          Effect.map(store.getToolkitForUpdate(toolkit.partner_app_id, toolkit.id), Option.map((read) => read.name))
        ))
        // The second is now waiting (for the row, or for the store's one unit of work at a time).
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 150)))
        expect(second.unsafePoll()).toBeNull()
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(first)
        expect(yield* Fiber.join(second)).toEqual(Option.some("First"))
      }))

    it.effect("versions keep their manifest; listed by number, newest first; versionsOf finds them by id", () =>
      Effect.gen(function*() {
        const store = yield* ToolkitStore
        const toolkit = yield* seedToolkit()
        const one = version(toolkit, 1)
        const two = version(toolkit, 2)
        yield* store.insertVersion(one)
        yield* store.insertVersion(two)
        expect(yield* store.getVersion(toolkit.id, one.id)).toEqual(Option.some(one))
        expect(yield* store.getVersion((yield* seedToolkit()).id, one.id)).toEqual(Option.none())
        expect(yield* store.listVersions(toolkit.id, { limit: 10, offset: 0 })).toEqual({ items: [two, one], total: 2 })
        const published = new ToolkitVersion({ ...one, status: "published", published_at: minutes(5) })
        yield* store.updateVersion(published)
        const found = yield* store.versionsOf([two.id, one.id, ToolkitVersionId.make(uuid())])
        expect([...found].sort((a, b) => a.number - b.number)).toEqual([published, two])
        expect(yield* store.versionsOf([])).toEqual([])
      }))

    it.effect("an installation is one per workspace and toolkit: put replaces it; listed by toolkit and by workspace", () =>
      Effect.gen(function*() {
        const store = yield* ToolkitStore
        const toolkit = yield* seedToolkit()
        const other = yield* seedToolkit()
        const a = (yield* seedWorkspace()).id
        const b = (yield* seedWorkspace()).id
        yield* store.putInstallation(installation(a, toolkit))
        const installed = installation(a, toolkit, {
          status: "installed",
          installed_version_id: toolkit.latest_version_id,
          updated_at: minutes(3)
        })
        yield* store.putInstallation(installed)
        const failed = installation(b, toolkit, { status: "failed", reason: "conflict" })
        yield* store.putInstallation(failed)
        const elsewhere = installation(a, other)
        yield* store.putInstallation(elsewhere)
        expect(yield* store.installationsOf(toolkit.id)).toEqual([installed, failed].sort((x, y) => x.workspace_id < y.workspace_id ? -1 : 1))
        expect(yield* store.installationsIn(a)).toEqual([installed, elsewhere].sort((x, y) => x.toolkit_id < y.toolkit_id ? -1 : 1))
      }))

    it.effect("claimPending answers pending installations, oldest change first, up to the limit", () =>
      Effect.gen(function*() {
        const store = yield* ToolkitStore
        const toolkit = yield* seedToolkit()
        // Long before any other test's rows, so that these come first.
        const old = at("1990-01-01T00:00:00.000Z")
        const w = [(yield* seedWorkspace()).id, (yield* seedWorkspace()).id, (yield* seedWorkspace()).id]
        const second = installation(w[0]!, toolkit, { updated_at: minutes(2, old) })
        const first = installation(w[1]!, toolkit, { updated_at: minutes(1, old) })
        yield* store.putInstallation(second)
        yield* store.putInstallation(first)
        yield* store.putInstallation(installation(w[2]!, toolkit, { status: "failed", updated_at: minutes(0, old) }))
        const claimed = yield* (yield* Transactor).withTransaction(store.claimPending(2))
        expect(claimed).toEqual([first, second])
      }))

    it.effect("deleting a toolkit deletes its versions and installations, not another toolkit's", () =>
      Effect.gen(function*() {
        const store = yield* ToolkitStore
        const toolkit = yield* seedToolkit()
        const kept = yield* seedToolkit()
        const workspaceId = (yield* seedWorkspace()).id
        const one = version(toolkit, 1)
        yield* store.insertVersion(one)
        yield* store.putInstallation(installation(workspaceId, toolkit))
        const keptInstallation = installation(workspaceId, kept)
        yield* store.putInstallation(keptInstallation)
        yield* store.deleteToolkit(toolkit.id)
        expect(yield* store.getToolkit(toolkit.partner_app_id, toolkit.id)).toEqual(Option.none())
        expect(yield* store.versionsOf([one.id])).toEqual([])
        expect(yield* store.installationsIn(workspaceId)).toEqual([keptInstallation])
      }))

    it.effect("a workspace takes automatic updates until it opts out, and again after opting back in", () =>
      Effect.gen(function*() {
        const store = yield* ToolkitStore
        const workspaceId = (yield* seedWorkspace()).id
        expect(yield* store.autoUpdates(workspaceId)).toBe(true)
        yield* store.setAutoUpdates(workspaceId, false)
        yield* store.setAutoUpdates(workspaceId, false)
        expect(yield* store.autoUpdates(workspaceId)).toBe(false)
        yield* store.setAutoUpdates(workspaceId, true)
        expect(yield* store.autoUpdates(workspaceId)).toBe(true)
      }))

    it.effect("deleteByWorkspace deletes the workspace's installations and opt-out, not another workspace's", () =>
      Effect.gen(function*() {
        const store = yield* ToolkitStore
        const toolkit = yield* seedToolkit()
        const gone = (yield* seedWorkspace()).id
        const kept = (yield* seedWorkspace()).id
        yield* store.putInstallation(installation(gone, toolkit))
        const keptInstallation = installation(kept, toolkit)
        yield* store.putInstallation(keptInstallation)
        yield* store.setAutoUpdates(gone, false)
        yield* store.setAutoUpdates(kept, false)
        yield* store.deleteByWorkspace(gone)
        expect(yield* store.installationsIn(gone)).toEqual([])
        expect(yield* store.installationsOf(toolkit.id)).toEqual([keptInstallation])
        expect(yield* store.autoUpdates(gone)).toBe(true)
        expect(yield* store.autoUpdates(kept)).toBe(false)
      }))
  })
}
