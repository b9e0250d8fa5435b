/**
 * The built-in meeting templates. A meeting created with `template_id` starts with the template's agenda
 * and, unless the request names one, its detail level. Ids are fixed so that clients can keep them.
 */
import { Schema } from "effect"
import { AgendaItemType } from "../shared/AgendaItemType.js"
import { TemplateId } from "../shared/Ids.js"
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
  agenda_items: Schema.Array(TemplateAgendaItem)
}) {}

const item = (title: string, item_type: AgendaItemType = "DISCUSSION", description: string | null = null) =>
  new TemplateAgendaItem({ title, description, item_type })

const template = (
  id: string,
  name: string,
  description: string,
  detail_level: DetailLevel,
  agenda_items: ReadonlyArray<TemplateAgendaItem>
) => new MeetingTemplate({ id: TemplateId.make(id), name, description, detail_level, agenda_items })

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

export const findTemplate = (id: TemplateId): MeetingTemplate | undefined =>
  builtInTemplates.find((t) => t.id === id)
