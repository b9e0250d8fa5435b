/**
 * A partner app's toolkits, their versions and their installations in workspaces (decisions.md "Toolkit", "Publish").
 * The records as stored, and as the admin API shows them.
 */
import { Schema } from "effect"
import { Uuid, WorkspaceId } from "../../shared/Ids.js"
import { requestBody } from "../../shared/Text.js"
import { Timestamp } from "../../shared/Time.js"
import { trusted } from "../../shared/Trusted.js"
import { PartnerAppId } from "../PartnerApp.js"
import { Manifest } from "./Manifest.js"

export const ToolkitId = Uuid.pipe(Schema.brand("ToolkitId"))
export type ToolkitId = typeof ToolkitId.Type

export const ToolkitVersionId = Uuid.pipe(Schema.brand("ToolkitVersionId"))
export type ToolkitVersionId = typeof ToolkitVersionId.Type

/** A toolkit as the admin API shows it (decisions.md). */
const toolkitFields = {
  id: ToolkitId,
  name: Schema.String.annotations({ description: "the name of its latest version's manifest" }),
  description: Schema.NullOr(Schema.String),
  auto_propagate: Schema.Boolean.annotations({ description: "a publish without `propagation` is `normal` when true, `none` when false" }),
  auto_install_on_new_workspaces: Schema.Boolean,
  latest_version_id: ToolkitVersionId,
  published_version_id: Schema.NullOr(ToolkitVersionId),
  created_at: Timestamp,
  updated_at: Timestamp
}

export class ToolkitView extends Schema.Class<ToolkitView>("Toolkit")(toolkitFields) {}

/** A toolkit as stored: its app beside the fields the API shows. */
export class Toolkit extends Schema.Class<Toolkit>("ToolkitRecord")({
  ...toolkitFields,
  partner_app_id: PartnerAppId
}) {
  get view(): ToolkitView {
    const { partner_app_id: _, ...fields } = this
    return new ToolkitView(fields, trusted)
  }
}

export const VersionStatus = Schema.Literal("draft", "published")
export type VersionStatus = typeof VersionStatus.Type

/** A version of a toolkit (decisions.md): numbered from 1, its manifest kept as given. */
export class ToolkitVersion extends Schema.Class<ToolkitVersion>("ToolkitVersion")({
  id: ToolkitVersionId,
  toolkit_id: ToolkitId,
  number: Schema.Int,
  manifest: Manifest,
  status: VersionStatus.annotations({
    description: "draft until published; the toolkit's published_version_id is the one in use"
  }),
  created_at: Timestamp,
  published_at: Schema.NullOr(Timestamp)
}) {}

export const InstallationStatus = Schema.Literal("pending", "installed", "failed", "outdated")
export type InstallationStatus = typeof InstallationStatus.Type

/** A toolkit's installation in a workspace as the admin API shows it (decisions.md, with `reason`). */
const installationFields = {
  workspace_id: WorkspaceId,
  toolkit_id: ToolkitId,
  version_id: ToolkitVersionId.annotations({
    description: "the version being installed (pending, failed) or installed (installed, outdated)"
  }),
  status: InstallationStatus.annotations({
    description: "pending: queued; installed: the version is in use; failed: see reason (publishing again retries); " +
      "outdated: an older version is in use while a newer one is published"
  }),
  reason: Schema.NullOr(Schema.String).annotations({ description: "why it failed; null otherwise" }),
  updated_at: Timestamp
}

export class ToolkitInstallationView extends Schema.Class<ToolkitInstallationView>("ToolkitInstallation")(installationFields) {}

/**
 * An installation as stored: beside what the API shows, the version whose contributions the workspace has now
 * (`installed_version_id`, null before the first install completes), which stays in use while a newer one is pending
 * or failed.
 */
export class ToolkitInstallation extends Schema.Class<ToolkitInstallation>("ToolkitInstallationRecord")({
  ...installationFields,
  installed_version_id: Schema.NullOr(ToolkitVersionId)
}) {
  get view(): ToolkitInstallationView {
    const { installed_version_id: _, ...fields } = this
    return new ToolkitInstallationView(fields, trusted)
  }
}

/**
 * GET and PUT /v1/workspace/toolkit-updates (first-party workspace settings): whether partner toolkits' new versions
 * reach the workspace when their app publishes with `propagation: normal` (a `force` publish reaches it all the same).
 */
export class ToolkitUpdates extends Schema.Class<ToolkitUpdates>("ToolkitUpdates")({
  auto_updates: Schema.Boolean.annotations({
    description: "true (the default): new versions of installed partner toolkits are installed when published; false: " +
      "the workspace keeps the version it has (shown `outdated` to the partner) unless the partner forces the update"
  })
}, requestBody) {}
