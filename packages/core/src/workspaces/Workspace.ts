import { Schema } from "effect"
import { TemplateId, WorkspaceId } from "../shared/Ids.js"
import { Title } from "../shared/Text.js"
import { Timestamp } from "../shared/Time.js"

export const Plan = Schema.Literal("FREE", "PRO", "ELITE", "ENTERPRISE").annotations({ identifier: "Plan" })
export type Plan = typeof Plan.Type

export const DetailLevel = Schema.Literal("brief", "standard", "detailed").annotations({ identifier: "DetailLevel" })
export type DetailLevel = typeof DetailLevel.Type

export const WorkspaceName = Title(200)

export class Workspace extends Schema.Class<Workspace>("Workspace")({
  id: WorkspaceId,
  name: Schema.String,
  plan: Plan,
  default_detail_level: DetailLevel,
  default_template_id: Schema.NullOr(TemplateId),
  created_at: Timestamp,
  updated_at: Timestamp
}) {}
