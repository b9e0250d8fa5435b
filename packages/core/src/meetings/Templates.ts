/**
 * The meeting templates a workspace can use: the built-in ones, and the `meeting_templates` of the partner toolkits
 * installed in it. A meeting created with `template_id` starts with the template's agenda and, unless the request
 * names one, its detail level. Ids are fixed so that clients can keep them.
 *
 * Decisions where the documents are silent:
 * - A toolkit's template is the one of the version its installation has in use in the workspace, for the toolkits of
 *   every partner app (first-party callers see all the workspace's installed toolkits). Its id is derived from the
 *   toolkit and the template's key (derivedUuid of `meeting_template:<toolkit_id>:<key>`): the same in every version
 *   and every workspace, and the same again if a later version brings the key back. Its description is the
 *   manifest's name (the toolkit's name in that version), its detail level `standard`, its agenda items' type the
 *   manifest's (DISCUSSION when left out) with no description; `toolkit_id` says where it comes from (null for a
 *   built-in).
 * - A template the installed version no longer has (a new version installed without it, the installation replaced or
 *   the toolkit deleted) is gone from the list and from the lookups: a meeting created with it is 404, as is setting
 *   it as the workspace's default. Meetings already created from it keep their agenda and `template_id`.
 * - The list is the built-in templates first, then the toolkits' by toolkit id, each toolkit's in manifest order.
 */
import { Effect, Schema } from "effect"
import type { Manifest, ManifestMeetingTemplate } from "../partner/toolkits/Manifest.js"
import { ToolkitId } from "../partner/toolkits/Toolkit.js"
import { ToolkitStore } from "../partner/toolkits/ToolkitStore.js"
import { Crypto } from "../ports/Crypto.js"
import { AgendaItemType } from "../shared/AgendaItemType.js"
import { derivedUuid } from "../shared/DerivedId.js"
import { TemplateId, type WorkspaceId } from "../shared/Ids.js"
import { DetailLevel } from "../workspaces/Workspace.js"

export class TemplateAgendaItem extends Schema.Class<TemplateAgendaItem>("TemplateAgendaItem")({
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  item_type: AgendaItemType
}) {}

export class MeetingTemplate extends Schema.Class<MeetingTemplate>("MeetingTemplate")({
  id: TemplateId,
  name: Schema.String,
  description: Schema.String,
  detail_level: DetailLevel,
  agenda_items: Schema.Array(TemplateAgendaItem),
  toolkit_id: Schema.NullOr(ToolkitId).annotations({
    description: "the partner toolkit installed in the workspace that the template comes from; null for a built-in template"
  })
}) {}

const item = (title: string, item_type: AgendaItemType = "DISCUSSION", description: string | null = null) =>
  new TemplateAgendaItem({ title, description, item_type })

const template = (
  id: string,
  name: string,
  description: string,
  detail_level: DetailLevel,
  agenda_items: ReadonlyArray<TemplateAgendaItem>
) => new MeetingTemplate({ id: TemplateId.make(id), name, description, detail_level, agenda_items, toolkit_id: null })

export const builtInTemplates: ReadonlyArray<MeetingTemplate> = [
  template("6a1f3c1e-0b6e-4a53-9d1e-1c5d8f0a0001", "One-on-one", "A recurring conversation between two people", "standard", [
    item("Check-in"),
    item("Priorities since last time"),
    item("Blockers", "QUESTIONS_TO_ANSWER"),
    item("Feedback")
  ]),
  template("6a1f3c1e-0b6e-4a53-9d1e-1c5d8f0a0002", "Team meeting", "The weekly meeting of a team", "standard", [
    item("Wins"),
    item("Updates"),
    item("Open questions", "QUESTIONS_TO_ANSWER"),
    item("Review of action items")
  ]),
  template("6a1f3c1e-0b6e-4a53-9d1e-1c5d8f0a0003", "Retrospective", "Look back on a stretch of work", "detailed", [
    item("What went well"),
    item("What did not go well"),
    item("Ideas to try"),
    item("Break", "BREAK"),
    item("Agree on actions"),
    item("Close", "ADJOURN")
  ]),
  template("6a1f3c1e-0b6e-4a53-9d1e-1c5d8f0a0004", "Project kickoff", "Start a project with a shared picture", "detailed", [
    item("Goals and non-goals"),
    item("Roles"),
    item("Milestones"),
    item("Risks", "QUESTIONS_TO_ANSWER")
  ]),
  template("6a1f3c1e-0b6e-4a53-9d1e-1c5d8f0a0005", "Stand-up", "A short daily sync", "brief", [
    item("Yesterday"),
    item("Today"),
    item("Blockers", "QUESTIONS_TO_ANSWER")
  ])
]

/** The id of a toolkit's meeting template (see the module's decisions). */
export const toolkitTemplateId = (toolkitId: ToolkitId, key: string): Effect.Effect<TemplateId, never, Crypto> =>
  Effect.map(derivedUuid(`meeting_template:${toolkitId}:${key}`), (id) => TemplateId.make(id))

/** The meeting template of a toolkit's manifest entry (see the module's decisions). */
export const toolkitTemplate = (
  toolkitId: ToolkitId,
  manifest: Manifest,
  entry: ManifestMeetingTemplate
): Effect.Effect<MeetingTemplate, never, Crypto> =>
  Effect.map(toolkitTemplateId(toolkitId, entry.key), (id) =>
    new MeetingTemplate({
      id,
      name: entry.name,
      description: manifest.name,
      detail_level: "standard",
      agenda_items: entry.agenda.map((agendaItem) => item(agendaItem.title, agendaItem.item_type)),
      toolkit_id: toolkitId
    }))

/** A workspace's templates (see the module's decisions); built from the toolkit store and Crypto (for the ids). */
export interface TemplateCatalog {
  /** Every template the workspace can use: the built-in ones, then its installed toolkits'. */
  readonly list: (workspaceId: WorkspaceId) => Effect.Effect<ReadonlyArray<MeetingTemplate>>
  /** The workspace's template `id` (a built-in one, or one of its installed toolkits'), or undefined. */
  readonly find: (workspaceId: WorkspaceId, id: TemplateId) => Effect.Effect<MeetingTemplate | undefined>
}

export const templateCatalog: Effect.Effect<TemplateCatalog, never, ToolkitStore | Crypto> = Effect.gen(function*() {
  const store = yield* ToolkitStore
  const crypto = yield* Crypto

  /** The installed toolkits' templates, each toolkit in the version its installation has in use (every app's). */
  const installed = (workspaceId: WorkspaceId) =>
    Effect.gen(function*() {
      const inUse = (yield* store.installationsIn(workspaceId)).flatMap((installation) =>
        installation.installed_version_id === null ? [] : [installation.installed_version_id]
      )
      if (inUse.length === 0) return []
      const versions = yield* store.versionsOf(inUse)
      return yield* Effect.forEach(inUse, (versionId) => {
        const version = versions.find((candidate) => candidate.id === versionId)
        return version === undefined ? Effect.succeed([]) : Effect.forEach(
          version.manifest.meeting_templates ?? [],
          (entry) => toolkitTemplate(version.toolkit_id, version.manifest, entry)
        )
      }).pipe(Effect.map((templates) => templates.flat()), Effect.provideService(Crypto, crypto))
    })

  return {
    list: (workspaceId) => Effect.map(installed(workspaceId), (templates) => [...builtInTemplates, ...templates]),
    find: (workspaceId, id) => {
      const builtIn = builtInTemplates.find((t) => t.id === id)
      return builtIn !== undefined
        ? Effect.succeed(builtIn)
        : Effect.map(installed(workspaceId), (templates) => templates.find((t) => t.id === id))
    }
  }
})
