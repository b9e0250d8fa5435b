/**
 * The partner admin API's toolkits (/v1/partner/admin/toolkits...), in the admin context: the same authentication
 * (PartnerAdminAuth: X-API-Key and X-Client-ID) and the partner envelope on every failure. The rules are core's
 * (Toolkits and Manifest, whose decisions the descriptions repeat). The routes fail with classes of their own (the
 * platform encodes a failure with the first schema of the whole API that takes its class), and a body that does not
 * decode is `invalid_request_body`, as a manifest that breaks its rules is (`PartnerInvalidCode`).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import {
  CreateToolkit,
  CreateToolkitVersion,
  ExportedToolkits,
  ExportToolkits,
  InstallationList,
  Manifest,
  MAX_MANIFEST_ENTRIES,
  MAX_TEMPLATE_AGENDA,
  MAX_WORKFLOW_ROLES,
  MAX_WORKFLOW_STEPS,
  Pagination,
  PatchToolkit,
  PublishResult,
  PublishToolkitVersion,
  ToolkitConflict,
  ToolkitId,
  type ToolkitRefused,
  ToolkitVersion,
  type ToolkitVersionConflicts,
  ToolkitVersionId,
  ToolkitView,
  UpdateToolkit
} from "@convene/core"
import { Effect, Schema } from "effect"
import { wire } from "./Errors.js"
import {
  PartnerAdminAuth,
  PartnerEnvelope,
  partnerEnvelope,
  PartnerInvalidCode,
  PartnerPayloadTooLarge,
  partnerPrefix,
  PartnerUnsupportedMediaType
} from "./Partner.js"
import { PartnerRateLimited } from "./PartnerLimits.js"
import { PageParams } from "./Query.js"

/** A toolkit request refused as a 400 (a manifest or field), as the toolkit routes' own class. */
export class PartnerToolkitInvalid extends Schema.TaggedError<PartnerToolkitInvalid>()("PartnerToolkitInvalid", {
  message: Schema.String
}) {}

export class PartnerToolkitMissing extends Schema.TaggedError<PartnerToolkitMissing>()("PartnerToolkitMissing", {
  message: Schema.String
}) {}

export const PartnerToolkitBadRequest = wire(
  PartnerToolkitInvalid,
  PartnerEnvelope(
    "PartnerToolkitBadRequest",
    ["invalid_request_body"],
    "the body is not JSON, a field is invalid or unknown, or the manifest breaks a rule; `error` names the path of " +
      "the first problem (`manifest.next_steps[2].key: duplicate key \"x\"`)"
  ),
  400,
  (error, requestId) => Effect.succeed(partnerEnvelope("invalid_request_body", error.message, requestId)),
  (b) => new PartnerToolkitInvalid({ message: b.error })
)

export const PartnerToolkitNotFound = wire(
  PartnerToolkitMissing,
  PartnerEnvelope("PartnerToolkitNotFound", ["not_found"], "the app has no toolkit (or version) with this id"),
  404,
  (error, requestId) => Effect.succeed(partnerEnvelope("not_found", error.message, requestId)),
  (b) => new PartnerToolkitMissing({ message: b.error })
)

/** A new version refused for its conflicts, as the toolkit routes' own class. */
export class PartnerToolkitConflicting extends Schema.TaggedError<PartnerToolkitConflicting>()("PartnerToolkitConflicting", {
  conflicts: Schema.Array(Schema.Struct(ToolkitConflict.fields)),
  message: Schema.String
}) {}

export const PartnerToolkitConflict = wire(
  PartnerToolkitConflicting,
  Schema.Struct({
    error: Schema.String,
    code: Schema.Literal("conflict"),
    request_id: Schema.String,
    conflicts: Schema.Array(ToolkitConflict)
  }).annotations({
    identifier: "PartnerToolkitConflict",
    description: "the new version conflicts with installed toolkits: `conflicts` lists each key with its reason " +
      "(`removed_while_installed`, `held_by_another_toolkit`); send `force: true` to create it anyway"
  }),
  409,
  (error, requestId) => Effect.succeed({ ...partnerEnvelope("conflict", error.message, requestId), conflicts: error.conflicts }),
  (b) => new PartnerToolkitConflicting({ conflicts: b.conflicts, message: b.error })
)

/** The toolkit routes' class of a core refusal. */
export const asPartnerToolkitFailure = (refused: ToolkitRefused): PartnerToolkitInvalid | PartnerToolkitMissing =>
  refused.code === "not_found"
    ? new PartnerToolkitMissing({ message: refused.message })
    : new PartnerToolkitInvalid({ message: refused.message })

/** The version route's class of a core refusal or of the version's conflicts. */
export const asPartnerVersionFailure = (
  refused: ToolkitRefused | ToolkitVersionConflicts
): PartnerToolkitInvalid | PartnerToolkitMissing | PartnerToolkitConflicting =>
  refused._tag === "ToolkitVersionConflicts"
    ? new PartnerToolkitConflicting({ conflicts: refused.conflicts, message: refused.message })
    : asPartnerToolkitFailure(refused)

export const ToolkitList = Pagination.ListOf(ToolkitView).annotations({ identifier: "ToolkitList" })
export const ToolkitVersionList = Pagination.ListOf(ToolkitVersion).annotations({ identifier: "ToolkitVersionList" })

const toolkitPath = Schema.Struct({ id: ToolkitId })
const versionPath = Schema.Struct({ id: ToolkitId, version_id: ToolkitVersionId })

const authentication = "Authenticated as the other admin routes (X-API-Key and X-Client-ID: 401 `missing_api_key`, " +
  "`missing_client_id` or `invalid_credentials`, 403 `partner_app_inactive`)."

const bodies = "A body over 1 MiB is 413 `payload_too_large`, one not sent as application/json 415 `unsupported_media_type`."

const toolkitAnswer = "Answers the toolkit `{id, name, description, auto_propagate, auto_install_on_new_workspaces, " +
  "latest_version_id, published_version_id, created_at, updated_at}`."

const versionAnswer = "A version is `{id, toolkit_id, number, manifest, status (draft or published), created_at, published_at}`."

export const manifestRules = "A manifest (version 1) is `{schema_version: 1, name, description?, next_steps?: [{key, " +
  "title, description?}], action_buttons?: [{key, label, url}], meeting_templates?: [{key, name, agenda: [{title, " +
  "item_type?}]}], workflow_templates?: [{key, name, description?, roles: [string], steps: [{key, type, title, role?, " +
  "url?}]}]}`. Keys are 1 to 100 letters, digits, `_`, `-` or `.` (starting with a letter or digit), unique within " +
  "their list; `name`, titles and labels 1 to 200 characters (trimmed), descriptions at most 2000; at most " +
  `${MAX_MANIFEST_ENTRIES} entries per list, ${MAX_TEMPLATE_AGENDA} agenda items per meeting template, ` +
  `${MAX_WORKFLOW_ROLES} roles and ${MAX_WORKFLOW_STEPS} steps per workflow template (at least one of each). ` +
  "`item_type` is DISCUSSION, QUESTIONS_TO_ANSWER, BREAK or ADJOURN; a step's `type` is task, approval or webhook, " +
  "a webhook step (and only it) has `url`, and a step's `role` names one of the template's roles. URLs are absolute " +
  "HTTPS without user information (an action button's is opened by the user's browser; a webhook step's meets the " +
  "outbound rules when a run calls it). `restricted_to_leads` is accepted anywhere and dropped; any other unknown " +
  "field is refused. A manifest that breaks a rule is 400 `invalid_request_body` naming the path of its first " +
  "problem (`manifest.next_steps[2].key: duplicate key \"x\"`)."

export class PartnerToolkitsApi extends HttpApiGroup.make("partnerToolkits")
  .add(
    HttpApiEndpoint.get("listToolkits", "/toolkits")
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(ToolkitList)
      .annotate(OpenApi.Summary, "List the toolkits")
      .annotate(
        OpenApi.Description,
        "The app's toolkits, newest first, in the list envelope `{items, total, limit, offset}` (limit 20 by default, " +
          `at most 100). ${toolkitAnswer} ${authentication}`
      )
  )
  .add(
    HttpApiEndpoint.post("createToolkit", "/toolkits")
      .setPayload(CreateToolkit)
      .addSuccess(ToolkitView, { status: 201 })
      .addError(PartnerPayloadTooLarge)
      .addError(PartnerUnsupportedMediaType)
      .annotate(OpenApi.Summary, "Create a toolkit from a manifest")
      .annotate(
        OpenApi.Description,
        "Takes `{manifest}` and creates the toolkit with version 1 (draft): its `name` and `description` are the " +
          "manifest's, `auto_propagate` and `auto_install_on_new_workspaces` start false. " +
          `${manifestRules} ${toolkitAnswer} ${bodies} ${authentication}`
      )
  )
  .add(
    HttpApiEndpoint.post("exportToolkits", "/toolkits/export")
      .setPayload(ExportToolkits)
      .addSuccess(ExportedToolkits)
      .addError(PartnerPayloadTooLarge)
      .addError(PartnerUnsupportedMediaType)
      .annotate(OpenApi.Summary, "Export toolkits")
      .annotate(
        OpenApi.Description,
        "Takes `{toolkit_ids?}` and answers `{toolkits: [{id, manifest}]}`, oldest toolkit first: the toolkits listed " +
          "(all the app's when left out), each with the manifest of its published version, else of its latest. An id " +
          `that is not one of the app's toolkits is 404 \`not_found\`. ${bodies} ${authentication}`
      )
  )
  .add(
    HttpApiEndpoint.get("getToolkit", "/toolkits/:id")
      .setPath(toolkitPath)
      .addSuccess(ToolkitView)
      .annotate(OpenApi.Summary, "Get a toolkit")
      .annotate(OpenApi.Description, `${toolkitAnswer} 404 \`not_found\` for an id that is not one of the app's toolkits. ${authentication}`)
  )
  .add(
    HttpApiEndpoint.put("updateToolkit", "/toolkits/:id")
      .setPath(toolkitPath)
      .setPayload(UpdateToolkit)
      .addSuccess(ToolkitView)
      .addError(PartnerPayloadTooLarge)
      .addError(PartnerUnsupportedMediaType)
      .annotate(OpenApi.Summary, "Rename a toolkit")
      .annotate(
        OpenApi.Description,
        "Changes the toolkit's own `name` (1 to 200 characters) and `description` (at most 2000; null clears it), " +
          "each when given. Versions keep their manifests (a new version's manifest sets both again): a manifest " +
          `changes through a new version. ${toolkitAnswer} ${bodies} ${authentication}`
      )
  )
  .add(
    HttpApiEndpoint.patch("patchToolkit", "/toolkits/:id")
      .setPath(toolkitPath)
      .setPayload(PatchToolkit)
      .addSuccess(ToolkitView)
      .addError(PartnerPayloadTooLarge)
      .addError(PartnerUnsupportedMediaType)
      .annotate(OpenApi.Summary, "Change a toolkit's distribution")
      .annotate(
        OpenApi.Description,
        "Optional `auto_propagate` (a publish without `propagation` is `normal` when true, `none` when false) and " +
          "`auto_install_on_new_workspaces` (a workspace newly connected to the app gets the published version; a publish " +
          "also queues the first install in the connected workspaces that do not have it). " +
          `${toolkitAnswer} ${bodies} ${authentication}`
      )
  )
  .add(
    HttpApiEndpoint.del("deleteToolkit", "/toolkits/:id")
      .setPath(toolkitPath)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "Delete a toolkit")
      .annotate(
        OpenApi.Description,
        "Deletes the toolkit with its versions and installations, for good: its next steps, action buttons, meeting " +
          "templates and workflow templates leave every workspace at once (meetings made from its templates keep " +
          "their agenda, and workflow runs already started go on with the template they started with). 204; 404 " +
          `\`not_found\` for an unknown id. ${authentication}`
      )
  )
  .add(
    HttpApiEndpoint.get("exportToolkit", "/toolkits/:id/export")
      .setPath(toolkitPath)
      .addSuccess(Manifest)
      .annotate(OpenApi.Summary, "Export a toolkit's manifest")
      .annotate(
        OpenApi.Description,
        "The manifest of the toolkit's published version, else of its latest; creating a toolkit from it makes the " +
          `same manifest again. ${authentication}`
      )
  )
  .add(
    HttpApiEndpoint.get("listToolkitVersions", "/toolkits/:id/versions")
      .setPath(toolkitPath)
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(ToolkitVersionList)
      .annotate(OpenApi.Summary, "List a toolkit's versions")
      .annotate(OpenApi.Description, `Newest first, in the list envelope. ${versionAnswer} ${authentication}`)
  )
  .add(
    HttpApiEndpoint.post("createToolkitVersion", "/toolkits/:id/versions")
      .setPath(toolkitPath)
      .setPayload(CreateToolkitVersion)
      .addSuccess(ToolkitVersion, { status: 201 })
      .addError(PartnerToolkitConflict)
      .addError(PartnerPayloadTooLarge)
      .addError(PartnerUnsupportedMediaType)
      .annotate(OpenApi.Summary, "Create a version")
      .annotate(
        OpenApi.Description,
        "Takes `{manifest, force?}` and creates the next version (draft), which becomes the toolkit's latest (its " +
          "name and description are the manifest's). It conflicts when it drops a key of the version installed in a " +
          "workspace (`removed_while_installed`) or takes a key that another toolkit installed in one of those " +
          "workspaces holds (`held_by_another_toolkit`); keys are compared qualified by their list " +
          "(`next_steps.follow-up`, `action_buttons.crm`, `meeting_templates.kickoff`, `workflow_templates.deal`). " +
          "Conflicts are 409 `{error, code: \"conflict\", request_id, conflicts: [{key, reason}]}` unless the body " +
          `says \`force: true\`. ${manifestRules} ${versionAnswer} ${bodies} ${authentication}`
      )
  )
  .add(
    HttpApiEndpoint.get("getToolkitVersion", "/toolkits/:id/versions/:version_id")
      .setPath(versionPath)
      .addSuccess(ToolkitVersion)
      .annotate(OpenApi.Summary, "Get a version")
      .annotate(OpenApi.Description, `${versionAnswer} 404 \`not_found\` for an unknown toolkit or version. ${authentication}`)
  )
  .add(
    HttpApiEndpoint.post("publishToolkitVersion", "/toolkits/:id/versions/:version_id/publish")
      .setPath(versionPath)
      .setPayload(PublishToolkitVersion)
      .addSuccess(PublishResult)
      .addError(PartnerPayloadTooLarge)
      .addError(PartnerUnsupportedMediaType)
      .annotate(OpenApi.Summary, "Publish a version")
      .annotate(
        OpenApi.Description,
        "Takes `{propagation?}` (`none`, `normal` or `force`; left out: `normal` when the toolkit's `auto_propagate` " +
          "is true, else `none`) and makes the version the toolkit's published one (an older version may be published " +
          "again, to roll back). The workspaces it reaches are those with an installation of the toolkit and, when " +
          "`auto_install_on_new_workspaces` is true, the workspaces connected to the app without one. `none` queues " +
          "none; `normal` queues those that did not opt out of automatic toolkit updates (a workspace setting: " +
          "`toolkit_auto_updates` of the first-party workspace settings), counting the others in " +
          "`workspaces_skipped_opted_out`; `force` queues every one. An installation on an older version that is not " +
          "queued becomes `outdated`. Queued installations are `pending` until the background distribution installs " +
          "them (durable: it resumes after a restart), then `installed`, or `failed` with a `reason` (the workspace is " +
          "no longer connected to the app, or another toolkit installed there holds one of the version's keys); " +
          "publishing again retries them. Answers `{version, propagation: {mode, workspaces_queued, " +
          `workspaces_skipped_opted_out}}\`. ${bodies} ${authentication}`
      )
  )
  .add(
    HttpApiEndpoint.get("listToolkitInstallations", "/toolkits/:id/installations")
      .setPath(toolkitPath)
      .addSuccess(InstallationList)
      .annotate(OpenApi.Summary, "List a toolkit's installations")
      .annotate(
        OpenApi.Description,
        "Every installation of the toolkit `{workspace_id, toolkit_id, version_id, status, reason, updated_at}` by " +
          "workspace id (not paged), with `total` and `summary {installed, pending, failed, outdated}`. `version_id` " +
          "is the version being installed (pending, failed) or in use (installed, outdated); while a new version is " +
          `pending or failed, the workspace keeps the one it had. ${authentication}`
      )
  )
  .addError(PartnerToolkitBadRequest)
  .addError(PartnerToolkitNotFound)
  .middleware(PartnerAdminAuth)
  .addError(PartnerRateLimited)
  .prefix(`${partnerPrefix}/admin`)
  .annotate(PartnerInvalidCode, "invalid_request_body")
  .annotate(OpenApi.Title, "Partner toolkits")
  .annotate(
    OpenApi.Description,
    "The partner app's toolkits, in the admin context: manifests of next steps, action buttons, meeting and workflow " +
      "templates, versioned, published and distributed to the workspaces connected to the app."
  )
{}
