/**
 * Toolkits' meeting templates in the first-party templates (Templates.ts) on the memory store: listed after the
 * built-in ones with an id derived from the toolkit and the key, usable by a meeting's create and as the workspace's
 * default while the installed version has them, and gone (404; a gone default passed over) once it has not.
 */
import {
  CreateMeeting,
  CreatePartnerApp,
  CreateToolkit,
  CreateToolkitVersion,
  derivedUuid,
  type PartnerApp,
  PartnerApps,
  PartnerStore,
  PublishToolkitVersion,
  Scopes,
  type TemplateId,
  type ToolkitId,
  Toolkits,
  toolkitTemplateId,
  type ToolkitVersionId,
  UpdateWorkspaceSettings,
  WorkspaceAdmin,
  Meetings,
  AgendaItems,
  type MeetingId
} from "@convene/core"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { principalFor } from "../fixtures.js"
import { ToolkitsLive } from "./toolkit-fixtures.js"

const UUID_V8 = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

const kickoff = {
  key: "kickoff",
  name: "Deal kickoff",
  agenda: [{ title: "Intro" }, { title: "Open questions", item_type: "QUESTIONS_TO_ANSWER" }, { title: "Pause", item_type: "BREAK" }]
}
const review = { key: "review", name: "Deal review", agenda: [{ title: "Numbers" }] }

const manifest = (name: string, templates: ReadonlyArray<unknown>) => ({ schema_version: 1, name, meeting_templates: templates })

/** An admin of a new workspace connected to a new partner app. */
const setup = Effect.gen(function*() {
  const owner = yield* principalFor({ role: "OWNER", scopes: Scopes, kind: "personal_access_token" })
  const apps = yield* PartnerApps
  const created = yield* apps.create(CreatePartnerApp.make({ name: `Acme ${crypto.randomUUID().slice(0, 8)}` }))
  yield* apps.connectWorkspace(created.id, owner.workspace.id)
  const app: PartnerApp = Option.getOrThrow(yield* (yield* PartnerStore).get(created.id))
  return { ...owner, app }
})

/** Publishes the version to the workspaces that install the toolkit themselves, and installs it. */
const publishAndInstall = (app: PartnerApp, id: ToolkitId, versionId: ToolkitVersionId) =>
  Effect.gen(function*() {
    const toolkits = yield* Toolkits
    yield* toolkits.publish(app, id, versionId, new PublishToolkitVersion({ propagation: "force" }))
    yield* toolkits.installPending()
  })

const toolkitWith = (app: PartnerApp, name: string, templates: ReadonlyArray<unknown>) =>
  Effect.gen(function*() {
    const toolkits = yield* Toolkits
    const toolkit = yield* toolkits.create(app, new CreateToolkit({ manifest: manifest(name, templates) }))
    yield* toolkits.patch(app, toolkit.id, { auto_install_on_new_workspaces: true })
    return toolkit
  })

const listed = (principal: Effect.Effect.Success<typeof setup>["principal"]) =>
  Effect.map(Effect.flatMap(Meetings, (meetings) => meetings.templates(principal, { limit: 100 })), (list) => list.items)

const agendaOf = (principal: Effect.Effect.Success<typeof setup>["principal"], meetingId: MeetingId) =>
  Effect.map(
    Effect.flatMap(AgendaItems, (agenda) => agenda.list(principal, { meeting_id: meetingId }, { limit: 100 })),
    (list) => list.items.map((item) => [item.title, item.item_type])
  )

describe("toolkit meeting templates", () => {
  it.effect("the id is derivedUuid of meeting_template:<toolkit_id>:<key>: a UUID v8, stable, distinct per key and toolkit", () =>
    Effect.gen(function*() {
      const toolkit = "0b8a2c6e-3f0a-4b7e-9d55-2a1f3e4d5c6b" as ToolkitId
      const id = yield* toolkitTemplateId(toolkit, "kickoff")
      expect(id).toMatch(UUID_V8)
      expect(id).toBe(yield* derivedUuid(`meeting_template:${toolkit}:kickoff`))
      expect(yield* toolkitTemplateId(toolkit, "kickoff")).toBe(id)
      expect(yield* toolkitTemplateId(toolkit, "review")).not.toBe(id)
      expect(yield* toolkitTemplateId("0b8a2c6e-3f0a-4b7e-9d55-2a1f3e4d5c6c" as ToolkitId, "kickoff")).not.toBe(id)
      // A workflow template of the same key is another thing, with another id.
      expect(yield* derivedUuid(`workflow_template:${toolkit}:kickoff`)).not.toBe(id)
    }).pipe(Effect.provide(ToolkitsLive)))

  layer(ToolkitsLive)((it) => {
    it.effect("installed templates are listed after the built-in ones and start a meeting with their agenda", () =>
      Effect.gen(function*() {
        const { app, principal } = yield* setup
        const before = yield* listed(principal)
        expect(before).toHaveLength(5)
        expect(before.every((template) => template.toolkit_id === null)).toBe(true)
        const toolkit = yield* toolkitWith(app, "Sales kit", [kickoff, review])
        // A draft, or a published version not yet installed, shows nothing.
        expect(yield* listed(principal)).toHaveLength(5)
        yield* publishAndInstall(app, toolkit.id, toolkit.latest_version_id)

        const after = yield* listed(principal)
        expect(after.slice(0, 5)).toEqual(before)
        const kickoffId = yield* toolkitTemplateId(toolkit.id, "kickoff")
        expect(after.slice(5).map((template) => ({ ...template }))).toEqual([
          {
            id: kickoffId,
            name: "Deal kickoff",
            description: "Sales kit",
            detail_level: "standard",
            agenda_items: [
              { title: "Intro", description: null, item_type: "DISCUSSION" },
              { title: "Open questions", description: null, item_type: "QUESTIONS_TO_ANSWER" },
              { title: "Pause", description: null, item_type: "BREAK" }
            ].map((item) => expect.objectContaining(item)),
            toolkit_id: toolkit.id
          },
          expect.objectContaining({ id: yield* toolkitTemplateId(toolkit.id, "review"), name: "Deal review", toolkit_id: toolkit.id })
        ])

        const meetings = yield* Meetings
        const meeting = yield* meetings.create(principal, CreateMeeting.make({ title: "Kickoff", template_id: kickoffId }))
        expect(meeting).toMatchObject({ template_id: kickoffId, detail_level: "standard" })
        expect(yield* agendaOf(principal, meeting.id)).toEqual([
          ["Intro", "DISCUSSION"],
          ["Open questions", "QUESTIONS_TO_ANSWER"],
          ["Pause", "BREAK"]
        ])
      }))

    it.effect("another workspace does not see them, nor can it use them (404)", () =>
      Effect.gen(function*() {
        const { app } = yield* setup
        const toolkit = yield* toolkitWith(app, "Sales kit", [kickoff])
        yield* publishAndInstall(app, toolkit.id, toolkit.latest_version_id)
        const stranger = yield* principalFor({ role: "OWNER", scopes: Scopes, kind: "personal_access_token" })
        expect(yield* listed(stranger.principal)).toHaveLength(5)
        const id = yield* toolkitTemplateId(toolkit.id, "kickoff")
        const refused = yield* Effect.flip((yield* Meetings).create(stranger.principal, CreateMeeting.make({ title: "X", template_id: id })))
        expect(refused).toMatchObject({ _tag: "NotFound", resource: "meeting template" })
        const settings = yield* Effect.flip(
          (yield* WorkspaceAdmin).updateSettings(stranger.principal, UpdateWorkspaceSettings.make({ default_template_id: id }))
        )
        expect(settings).toMatchObject({ _tag: "NotFound", resource: "meeting template" })
      }))

    it.effect("a version without a template removes it: 404 on create, a default pointing at it is passed over; it comes back with its id", () =>
      Effect.gen(function*() {
        const { app, principal } = yield* setup
        const toolkits = yield* Toolkits
        const meetings = yield* Meetings
        const admin = yield* WorkspaceAdmin
        const toolkit = yield* toolkitWith(app, "Sales kit", [kickoff, review])
        yield* publishAndInstall(app, toolkit.id, toolkit.latest_version_id)
        const kickoffId = yield* toolkitTemplateId(toolkit.id, "kickoff")
        const settings = yield* admin.updateSettings(principal, UpdateWorkspaceSettings.make({ default_template_id: kickoffId }))
        expect(settings.default_template_id).toBe(kickoffId)
        const early = yield* meetings.create(principal, CreateMeeting.make({ title: "By default" }))
        expect(early.template_id).toBe(kickoffId)

        // Dropping an installed key is a conflict unless forced.
        const v2 = yield* toolkits.createVersion(
          app,
          toolkit.id,
          new CreateToolkitVersion({ manifest: manifest("Sales kit 2", [review]), force: true })
        )
        yield* publishAndInstall(app, toolkit.id, v2.id)
        const after = yield* listed(principal)
        expect(after.map((template) => template.id)).not.toContain(kickoffId)
        expect(after.slice(5)).toEqual([expect.objectContaining({ name: "Deal review", description: "Sales kit 2", toolkit_id: toolkit.id })])
        expect(yield* Effect.flip(meetings.create(principal, CreateMeeting.make({ title: "X", template_id: kickoffId }))))
          .toMatchObject({ _tag: "NotFound", resource: "meeting template" })
        expect(yield* Effect.flip(admin.updateSettings(principal, UpdateWorkspaceSettings.make({ default_template_id: kickoffId }))))
          .toMatchObject({ _tag: "NotFound", resource: "meeting template" })
        // The default is kept and passed over: no template, no agenda.
        const plain = yield* meetings.create(principal, CreateMeeting.make({ title: "Default gone" }))
        expect(plain.template_id).toBeNull()
        expect(yield* agendaOf(principal, plain.id)).toEqual([])
        // The meeting made from it keeps its agenda.
        expect(yield* agendaOf(principal, early.id)).toHaveLength(3)

        // A later version bringing the key back brings the same id back, and the default works again.
        const v3 = yield* toolkits.createVersion(app, toolkit.id, new CreateToolkitVersion({ manifest: manifest("Sales kit", [kickoff, review]) }))
        yield* publishAndInstall(app, toolkit.id, v3.id)
        expect((yield* listed(principal)).map((template) => template.id)).toContain(kickoffId)
        expect((yield* meetings.create(principal, CreateMeeting.make({ title: "Back" }))).template_id).toBe(kickoffId)

        // Deleting the toolkit removes its templates.
        yield* toolkits.remove(app, toolkit.id)
        expect(yield* listed(principal)).toHaveLength(5)
      }))

    it.effect("every app's installed toolkits count, in toolkit id order", () =>
      Effect.gen(function*() {
        const { app, principal, workspace } = yield* setup
        const apps = yield* PartnerApps
        const second = yield* apps.create(CreatePartnerApp.make({ name: `Other ${crypto.randomUUID().slice(0, 8)}` }))
        yield* apps.connectWorkspace(second.id, workspace.id)
        const secondApp = Option.getOrThrow(yield* (yield* PartnerStore).get(second.id))
        const first = yield* toolkitWith(app, "First", [kickoff])
        const other = yield* toolkitWith(secondApp, "Second", [{ ...review, key: "other-review" }])
        yield* publishAndInstall(app, first.id, first.latest_version_id)
        yield* publishAndInstall(secondApp, other.id, other.latest_version_id)
        const fromToolkits = (yield* listed(principal)).slice(5)
        const expected = [
          { toolkit_id: first.id, id: yield* toolkitTemplateId(first.id, "kickoff") },
          { toolkit_id: other.id, id: yield* toolkitTemplateId(other.id, "other-review") }
        ].sort((a, b) => a.toolkit_id < b.toolkit_id ? -1 : 1)
        expect(fromToolkits.map(({ id, toolkit_id }) => ({ toolkit_id, id }))).toEqual(expected)
        const templateIds: ReadonlyArray<TemplateId> = fromToolkits.map((template) => template.id)
        expect(new Set(templateIds).size).toBe(2)
      }))
  })
})
