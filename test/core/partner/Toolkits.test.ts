/**
 * Toolkits' rules on the memory store: the manifest v1 schema with the path of its first problem, and (below) the
 * toolkits, versions, conflicts, publish and installations of core's Toolkits.
 */
import {
  CreatePartnerApp,
  CreateToolkit,
  CreateToolkitVersion,
  CreateWorkspace,
  decodeManifest,
  Manifest,
  type PartnerApp,
  PartnerApps,
  PartnerStore,
  PublishToolkitVersion,
  type ToolkitId,
  Toolkits,
  type ToolkitVersionId,
  Workspaces
} from "@convene/core"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import { ToolkitsLive } from "./toolkit-fixtures.js"

const base = { schema_version: 1, name: "Sales kit" }

const problemOf = (input: unknown) => Either.match(decodeManifest(input), { onLeft: (problem) => problem, onRight: () => "ok" })

describe("Manifest v1", () => {
  it("decodes every list, drops restricted_to_leads at any depth and keeps the rest as given", () => {
    const decoded = decodeManifest({
      ...base,
      restricted_to_leads: true,
      description: "For sales",
      next_steps: [{ key: "follow-up", title: " Follow up ", restricted_to_leads: false }],
      action_buttons: [{ key: "crm", label: "Open CRM", url: "https://crm.example.com/x?y=1" }],
      meeting_templates: [{ key: "kickoff", name: "Kickoff", agenda: [{ title: "Intro", item_type: "BREAK", restricted_to_leads: 1 }, { title: "Plan" }] }],
      workflow_templates: [{
        key: "deal",
        name: "Deal review",
        roles: ["owner", "approver"],
        steps: [
          { key: "draft", type: "task", title: "Draft", role: "owner" },
          { key: "approve", type: "approval", title: "Approve", role: "approver" },
          { key: "notify", type: "webhook", title: "Notify", url: "https://hooks.example.com/deal" }
        ]
      }]
    })
    expect(Either.isRight(decoded)).toBe(true)
    const manifest = Either.getOrThrow(decoded)
    expect(manifest).toBeInstanceOf(Manifest)
    expect(JSON.stringify(manifest)).not.toContain("restricted_to_leads")
    expect(manifest.next_steps?.[0]?.title).toBe("Follow up")
    expect(manifest.meeting_templates?.[0]?.agenda[0]?.item_type).toBe("BREAK")
  })

  it.each([
    [{}, "manifest.schema_version: is required"],
    ["text", "manifest: must be a JSON object"],
    [{ ...base, schema_version: 2 }, "manifest.schema_version: must be 1"],
    [{ ...base, name: 3 }, "manifest.name: must be a string"],
    [{ ...base, name: "  " }, "manifest.name: must not be empty"],
    [{ ...base, colour: "red" }, "manifest.colour: is not a field of a toolkit manifest"],
    [{ ...base, next_steps: {} }, "manifest.next_steps: must be an array"],
    [
      { ...base, next_steps: [{ key: "x", title: "A" }, { key: "y", title: "B" }, { key: "x", title: "C" }] },
      "manifest.next_steps[2].key: duplicate key \"x\""
    ],
    [{ ...base, next_steps: [{ key: "bad key", title: "A" }] }, "manifest.next_steps[0].key: must be letters, digits, '_', '-' or '.', starting with a letter or a digit"],
    [{ ...base, next_steps: [{ key: "a", title: "A", extra: 1 }] }, "manifest.next_steps[0].extra: is not a field of a toolkit manifest"],
    [{ ...base, action_buttons: [{ key: "a", label: "A", url: "http://crm.example.com" }] }, "manifest.action_buttons[0].url: must be an HTTPS URL (https://...)"],
    [{ ...base, action_buttons: [{ key: "a", label: "A", url: "crm" }] }, "manifest.action_buttons[0].url: must be an absolute HTTPS URL"],
    [{ ...base, action_buttons: [{ key: "a", label: "A", url: "https://u:p@crm.example.com" }] }, "manifest.action_buttons[0].url: must not carry a user name or password"],
    [
      { ...base, meeting_templates: [{ key: "k", name: "K", agenda: [{ title: "t", item_type: "DECISION" }] }] },
      "manifest.meeting_templates[0].agenda[0].item_type: must be one of DISCUSSION, QUESTIONS_TO_ANSWER, BREAK, ADJOURN"
    ],
    [
      { ...base, workflow_templates: [{ key: "w", name: "W", roles: ["r"], steps: [{ key: "s", type: "task", title: "S", role: "q" }] }] },
      "manifest.workflow_templates[0].steps[0].role: \"q\" is not one of the template's roles"
    ],
    [
      { ...base, workflow_templates: [{ key: "w", name: "W", roles: ["r"], steps: [{ key: "s", type: "webhook", title: "S" }] }] },
      "manifest.workflow_templates[0].steps[0].url: is required for a webhook step"
    ],
    [
      { ...base, workflow_templates: [{ key: "w", name: "W", roles: ["r"], steps: [{ key: "s", type: "run", title: "S" }] }] },
      "manifest.workflow_templates[0].steps[0].type: must be one of task, approval, webhook"
    ],
    [
      { ...base, workflow_templates: [{ key: "w", name: "W", roles: ["r", "r"], steps: [{ key: "s", type: "task", title: "S" }] }] },
      "manifest.workflow_templates[0].roles[1]: duplicate role \"r\""
    ],
    [
      { ...base, next_steps: Array.from({ length: 51 }, (_, i) => ({ key: `k${i}`, title: "T" })) },
      "manifest.next_steps: may list at most 50 next steps"
    ]
  ])("refuses %j naming the first problem", (input, problem) => {
    expect(problemOf(input)).toBe(problem)
  })
})


/** A new partner app with `workspaces` workspaces connected to it. */
const appWith = (workspaces: number) =>
  Effect.gen(function*() {
    const apps = yield* PartnerApps
    const created = yield* apps.create(CreatePartnerApp.make({ name: `Acme ${crypto.randomUUID().slice(0, 8)}` }))
    const app: PartnerApp = Option.getOrThrow(yield* (yield* PartnerStore).get(created.id))
    const ids = []
    for (let i = 0; i < workspaces; i++) {
      const workspace = yield* (yield* Workspaces).create(new CreateWorkspace({ name: `W${i}`, plan: "PRO" }))
      yield* apps.connectWorkspace(app.id, workspace.id)
      ids.push(workspace.id)
    }
    return { app, workspaces: ids }
  })

const manifestWith = (name: string, steps: ReadonlyArray<string>) => ({
  schema_version: 1,
  name,
  next_steps: steps.map((key) => ({ key, title: `Step ${key}` }))
})

const publish = (app: PartnerApp, id: ToolkitId, versionId: ToolkitVersionId, propagation?: "none" | "normal" | "force") =>
  Effect.flatMap(Toolkits, (toolkits) =>
    toolkits.publish(app, id, versionId, new PublishToolkitVersion(propagation === undefined ? {} : { propagation })))

const drain = Effect.flatMap(Toolkits, (toolkits) => toolkits.installPending())

describe("Toolkits", () => {
  layer(ToolkitsLive)((it) => {
    it.effect("create makes version 1 as a draft; export answers its manifest, which creates the same again", () =>
      Effect.gen(function*() {
        const toolkits = yield* Toolkits
        const { app } = yield* appWith(0)
        const input = { ...manifestWith("Kit", ["a", "b"]), description: "d", restricted_to_leads: true }
        const toolkit = yield* toolkits.create(app, new CreateToolkit({ manifest: input }))
        expect(toolkit).toMatchObject({ name: "Kit", description: "d", auto_propagate: false, published_version_id: null })
        const version = yield* toolkits.getVersion(app, toolkit.id, toolkit.latest_version_id)
        expect(version).toMatchObject({ number: 1, status: "draft", published_at: null })
        const exported = yield* toolkits.exportOne(app, toolkit.id)
        const again = yield* toolkits.create(app, new CreateToolkit({ manifest: JSON.parse(JSON.stringify(exported)) }))
        expect(yield* toolkits.exportOne(app, again.id)).toEqual(exported)
        const bulk = yield* toolkits.exportMany(app, {})
        // Oldest first; both may be made in the same millisecond (then by id).
        expect(bulk.toolkits.map((entry) => entry.id).sort()).toEqual([toolkit.id, again.id].sort())
      }))

    it.effect("a manifest that breaks a rule is refused naming its first problem; another app's toolkit is not found", () =>
      Effect.gen(function*() {
        const toolkits = yield* Toolkits
        const { app } = yield* appWith(0)
        const refused = yield* Effect.flip(toolkits.create(app, new CreateToolkit({ manifest: manifestWith("Kit", ["x", "y", "x"]) })))
        expect(refused).toMatchObject({ code: "invalid_request_body", message: "manifest.next_steps[2].key: duplicate key \"x\"" })
        const toolkit = yield* toolkits.create(app, new CreateToolkit({ manifest: manifestWith("Kit", []) }))
        const { app: other } = yield* appWith(0)
        expect(yield* Effect.flip(toolkits.get(other, toolkit.id))).toMatchObject({ code: "not_found" })
      }))

    it.effect("publish counts queued and opted-out workspaces per mode; the worker installs; outdated when left behind", () =>
      Effect.gen(function*() {
        const toolkits = yield* Toolkits
        const { app, workspaces } = yield* appWith(3)
        const toolkit = yield* toolkits.create(app, new CreateToolkit({ manifest: manifestWith("Kit", ["a"]) }))
        // Nobody has it and it does not install itself: nothing to reach.
        expect((yield* publish(app, toolkit.id, toolkit.latest_version_id, "normal")).propagation)
          .toEqual({ mode: "normal", workspaces_queued: 0, workspaces_skipped_opted_out: 0 })
        yield* toolkits.patch(app, toolkit.id, { auto_install_on_new_workspaces: true, auto_propagate: true })
        expect((yield* publish(app, toolkit.id, toolkit.latest_version_id)).propagation)
          .toEqual({ mode: "normal", workspaces_queued: 3, workspaces_skipped_opted_out: 0 })
        expect((yield* toolkits.installations(app, toolkit.id)).summary).toEqual({ installed: 0, pending: 3, failed: 0, outdated: 0 })
        expect(yield* drain).toBe(3)
        expect((yield* toolkits.installations(app, toolkit.id)).summary).toEqual({ installed: 3, pending: 0, failed: 0, outdated: 0 })

        yield* toolkits.setAutoUpdates(workspaces[1]!, false)
        const v2 = yield* toolkits.createVersion(app, toolkit.id, new CreateToolkitVersion({ manifest: manifestWith("Kit", ["a", "b"]) }))
        expect(v2.number).toBe(2)
        expect((yield* publish(app, toolkit.id, v2.id, "normal")).propagation)
          .toEqual({ mode: "normal", workspaces_queued: 2, workspaces_skipped_opted_out: 1 })
        yield* drain
        const listed = yield* toolkits.installations(app, toolkit.id)
        expect(listed.summary).toEqual({ installed: 2, pending: 0, failed: 0, outdated: 1 })
        expect(listed.items.find((item) => item.workspace_id === workspaces[1])).toMatchObject({ status: "outdated", version_id: toolkit.latest_version_id })
        const installed = yield* toolkits.installedIn(workspaces[0]!, app.id)
        expect(installed.map((entry) => entry.manifest.next_steps?.map((step) => step.key))).toEqual([["a", "b"]])

        expect((yield* publish(app, toolkit.id, v2.id, "none")).propagation)
          .toEqual({ mode: "none", workspaces_queued: 0, workspaces_skipped_opted_out: 0 })
        expect((yield* publish(app, toolkit.id, v2.id, "force")).propagation)
          .toEqual({ mode: "force", workspaces_queued: 3, workspaces_skipped_opted_out: 0 })
        yield* drain
        expect((yield* toolkits.installations(app, toolkit.id)).summary).toEqual({ installed: 3, pending: 0, failed: 0, outdated: 0 })
      }))

    it.effect("a newly connected workspace gets the published toolkits that install themselves, opted out or not, once", () =>
      Effect.gen(function*() {
        const toolkits = yield* Toolkits
        const apps = yield* PartnerApps
        const { app } = yield* appWith(0)
        const automatic = yield* toolkits.create(app, new CreateToolkit({ manifest: manifestWith("Auto", ["a"]) }))
        yield* toolkits.patch(app, automatic.id, { auto_install_on_new_workspaces: true })
        yield* publish(app, automatic.id, automatic.latest_version_id, "none")
        // Not published, or not installing itself: not queued.
        const draft = yield* toolkits.create(app, new CreateToolkit({ manifest: manifestWith("Draft", ["b"]) }))
        yield* toolkits.patch(app, draft.id, { auto_install_on_new_workspaces: true })
        const manual = yield* toolkits.create(app, new CreateToolkit({ manifest: manifestWith("Manual", ["c"]) }))
        yield* publish(app, manual.id, manual.latest_version_id, "none")

        const workspace = yield* (yield* Workspaces).create(new CreateWorkspace({ name: "New", plan: "PRO" }))
        yield* toolkits.setAutoUpdates(workspace.id, false)
        yield* apps.connectWorkspace(app.id, workspace.id)
        yield* apps.connectWorkspace(app.id, workspace.id)
        expect((yield* toolkits.installations(app, automatic.id)).items).toMatchObject([
          { workspace_id: workspace.id, version_id: automatic.latest_version_id, status: "pending" }
        ])
        expect((yield* toolkits.installations(app, draft.id)).total).toBe(0)
        expect((yield* toolkits.installations(app, manual.id)).total).toBe(0)
        yield* drain
        expect((yield* toolkits.installedIn(workspace.id, app.id)).map((entry) => entry.toolkit_id)).toEqual([automatic.id])
      }))

    it.effect("a version conflicts when it drops an installed key or takes another installed toolkit's; force creates it", () =>
      Effect.gen(function*() {
        const toolkits = yield* Toolkits
        const { app, workspaces } = yield* appWith(1)
        const first = yield* toolkits.create(app, new CreateToolkit({ manifest: manifestWith("One", ["a", "b"]) }))
        const second = yield* toolkits.create(app, new CreateToolkit({ manifest: manifestWith("Two", ["x"]) }))
        for (const toolkit of [first, second]) {
          yield* toolkits.patch(app, toolkit.id, { auto_install_on_new_workspaces: true })
          yield* publish(app, toolkit.id, toolkit.latest_version_id, "normal")
        }
        yield* drain
        const next = new CreateToolkitVersion({ manifest: manifestWith("One", ["a", "x"]) })
        const refused = yield* Effect.flip(toolkits.createVersion(app, first.id, next))
        expect(refused).toMatchObject({
          _tag: "ToolkitVersionConflicts",
          conflicts: [{ key: "next_steps.b", reason: "removed_while_installed" }, { key: "next_steps.x", reason: "held_by_another_toolkit" }]
        })
        expect((yield* toolkits.get(app, first.id)).latest_version_id).toBe(first.latest_version_id)
        const forced = yield* toolkits.createVersion(app, first.id, new CreateToolkitVersion({ ...next, force: true }))
        yield* publish(app, first.id, forced.id, "normal")
        yield* drain
        const [installation] = (yield* toolkits.installations(app, first.id)).items
        expect(installation).toMatchObject({
          workspace_id: workspaces[0],
          status: "failed",
          reason: "the key next_steps.x is held by another toolkit installed in the workspace"
        })
        // The version in use stays: the workspace keeps a and b.
        const inUse = (yield* toolkits.installedIn(workspaces[0]!, app.id)).find((entry) => entry.toolkit_id === first.id)
        expect(inUse?.manifest.next_steps?.map((step) => step.key)).toEqual(["a", "b"])
        // Deleting the other toolkit frees the key: publishing again retries.
        yield* toolkits.remove(app, second.id)
        yield* publish(app, first.id, forced.id, "normal")
        yield* drain
        expect((yield* toolkits.installations(app, first.id)).summary).toEqual({ installed: 1, pending: 0, failed: 0, outdated: 0 })
      }))
  })
})
