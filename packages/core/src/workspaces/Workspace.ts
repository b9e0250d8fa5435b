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

/** What a workspace holds, for the operator (see WorkspaceContents.counts for what each number counts). */
export class WorkspaceCounts extends Schema.Class<WorkspaceCounts>("WorkspaceCounts")({
  users: Schema.NonNegativeInt.annotations({ description: "users of the workspace" }),
  meetings: Schema.NonNegativeInt.annotations({ description: "meetings of the workspace, whatever their status" }),
  tokens: Schema.NonNegativeInt.annotations({
    description: "tokens its users hold that authenticate now (not revoked, not expired): personal access, short-lived and OAuth tokens"
  }),
  api_keys: Schema.NonNegativeInt.annotations({ description: "workspace API keys that authenticate now (not revoked)" })
}) {}

/** A workspace with its counts, as the operator API shows it. */
export class WorkspaceOverview extends Schema.Class<WorkspaceOverview>("WorkspaceOverview")({
  ...Workspace.fields,
  counts: WorkspaceCounts
}) {}
