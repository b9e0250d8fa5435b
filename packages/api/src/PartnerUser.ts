/**
 * The partner API's user context (/v1/partner/user): a partner app acts for a user who approved it through the
 * partner OAuth server (/oauth2/authorize), with that user's access token as `Authorization: Bearer <token>`.
 * The routes reuse the first-party rules (who sees and changes a meeting, agenda items, backlog items,
 * attachments) with the token's scopes; every failure is the partner envelope `{error, code, request_id}`.
 * Also here: the pre-signed download URL of an attachment (/v1/partner/files/...), which needs no token.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as OpenApi from "@effect/platform/OpenApi"
import {
  ActionButton,
  AgendaItem,
  AgendaItemId,
  AssignBacklogItem,
  Attachment,
  AttachmentId,
  BacklogAssignment,
  BacklogHistoryItem,
  BacklogItem,
  BacklogItemId,
  Conflict,
  CreateBacklogItem,
  CreatePartnerAgendaItem,
  InsufficientScope,
  MeetingId,
  NextStep,
  NotFound,
  Pagination,
  type PartnerCaller,
  PartnerMeeting,
  PartnerTokenRefused,
  PlanRequired,
  Timestamp,
  UpdateAgendaItem,
  UpdateBacklogItem,
  ValidationError,
  WorkspaceId
} from "@convene/core"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Context, Effect, Schema } from "effect"
import { BodyTooLarge, MalformedBody, MediaTypeUnsupported, wire } from "./Errors.js"
import { honouringKey } from "./Idempotency.js"
import {
  PartnerBodyTooLarge,
  PartnerEnvelope,
  partnerEnvelope,
  PartnerInactive,
  PartnerInvalidRequest,
  PartnerMediaTypeUnsupported,
  PartnerPayloadTooLarge,
  partnerPrefix,
  PartnerUnsupportedMediaType
} from "./Partner.js"
import { PartnerRateLimited } from "./PartnerLimits.js"
import { PageParams } from "./Query.js"

const header = (name: string, value: string) =>
  HttpApp.appendPreResponseHandler((_, response) => Effect.succeed(HttpServerResponse.setHeader(response, name, value)))

// ------------------------------------------------------------------------------------------------------ errors

/*
 * The platform encodes a failure with the first error schema of the whole API that takes its class, so the partner
 * routes fail with classes of their own (the core's errors mapped by `asPartnerFailure`), which only the partner
 * envelopes below encode.
 */

export class PartnerNotFound extends Schema.TaggedError<PartnerNotFound>()("PartnerNotFound", { message: Schema.String }) {}

export class PartnerRefused extends Schema.TaggedError<PartnerRefused>()("PartnerRefused", {
  required: Schema.String,
  message: Schema.String
}) {}

export class PartnerInvalid extends Schema.TaggedError<PartnerInvalid>()("PartnerInvalid", {
  field: Schema.String,
  message: Schema.String
}) {}

export class PartnerStateConflict extends Schema.TaggedError<PartnerStateConflict>()("PartnerStateConflict", {
  message: Schema.String
}) {}

export class PartnerPlanRequired extends Schema.TaggedError<PartnerPlanRequired>()("PartnerPlanRequired", {
  feature: Schema.String,
  current_plan: Schema.String,
  required_plan: Schema.String,
  message: Schema.String
}) {}

/** The partner form of a core failure. */
export type PartnerFailureOf<E> = E extends NotFound ? PartnerNotFound
  : E extends InsufficientScope ? PartnerRefused
  : E extends ValidationError | MalformedBody ? PartnerInvalid
  : E extends BodyTooLarge ? PartnerBodyTooLarge
  : E extends MediaTypeUnsupported ? PartnerMediaTypeUnsupported
  : E extends Conflict ? PartnerStateConflict
  : E extends PlanRequired ? PartnerPlanRequired
  : E

const partnerFailureOf = (error: unknown): unknown => {
  if (error instanceof NotFound) return new PartnerNotFound({ message: error.message })
  if (error instanceof InsufficientScope) return new PartnerRefused({ required: error.required, message: error.message })
  if (error instanceof ValidationError) return new PartnerInvalid({ field: error.field, message: error.message })
  if (error instanceof MalformedBody) return new PartnerInvalid({ field: "body", message: error.message })
  if (error instanceof BodyTooLarge) return new PartnerBodyTooLarge({ message: error.message })
  if (error instanceof MediaTypeUnsupported) return new PartnerMediaTypeUnsupported({ message: error.message })
  if (error instanceof Conflict) return new PartnerStateConflict({ message: error.message })
  if (error instanceof PlanRequired) {
    return new PartnerPlanRequired({
      feature: error.feature,
      current_plan: error.current_plan,
      required_plan: error.required_plan,
      message: error.message
    })
  }
  return error
}

/** The effect, failing with the partner forms of the core's failures a user-context route can meet. */
export const asPartnerFailure = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, PartnerFailureOf<E>, R> =>
  Effect.mapError(effect, (error) => partnerFailureOf(error) as PartnerFailureOf<E>)

export const PartnerUserUnauthorized = wire(
  PartnerTokenRefused,
  PartnerEnvelope(
    "PartnerUserUnauthorized",
    ["missing_authorization", "invalid_authorization_format", "unauthorized"],
    "no valid access token: `missing_authorization` without an Authorization header, `invalid_authorization_format` " +
      "when it is not `Bearer <token>`, `unauthorized` when the token is unknown, expired, revoked, not a partner " +
      "access token, or its workspace is no longer connected to the app"
  ),
  401,
  (error, requestId) =>
    Effect.as(
      header("www-authenticate", error.code === "unauthorized" ? `Bearer error="invalid_token"` : "Bearer"),
      partnerEnvelope(error.code, error.message, requestId)
    ),
  (b) => new PartnerTokenRefused({ code: b.code, message: b.error })
)

/** Scopes the partner's tokens hold: a refusal naming one is `insufficient_scope`; a role the user lacks, `forbidden`. */
const scopeNames = new Set([
  "meetings:read",
  "meetings:write",
  "action-items:read",
  "action-items:write",
  "partner-api/workflows:read",
  "partner-api/workflows:write",
  "profile"
])

export const PartnerForbidden = wire(
  PartnerRefused,
  PartnerEnvelope(
    "PartnerForbidden",
    ["insufficient_scope", "forbidden"],
    "`insufficient_scope` when the token lacks the scope the route needs; `forbidden` when the user may not do this " +
      "(e.g. change a meeting they only view)"
  ),
  403,
  (error, requestId) =>
    scopeNames.has(error.required)
      ? Effect.as(
        header("www-authenticate", `Bearer error="insufficient_scope", scope="${error.required}"`),
        partnerEnvelope("insufficient_scope", error.message, requestId)
      )
      : Effect.succeed(partnerEnvelope("forbidden", error.message, requestId)),
  (b) => new PartnerRefused({ required: "", message: b.error })
)

export const PartnerMissing = wire(
  PartnerNotFound,
  PartnerEnvelope("PartnerNotFound", ["not_found"], "missing, or not visible to the user (another workspace's meeting is 404)"),
  404,
  (error, requestId) => Effect.succeed(partnerEnvelope("not_found", error.message, requestId)),
  (b) => new PartnerNotFound({ message: b.error })
)

export const PartnerValidation = wire(
  PartnerInvalid,
  PartnerEnvelope(
    "PartnerValidationFailed",
    ["invalid_request", "invalid_item_type"],
    "a field is invalid (`error` names it); `invalid_item_type` when `item_type` is not one of the four types"
  ),
  400,
  (error, requestId) =>
    Effect.succeed(partnerEnvelope(error.field === "item_type" ? "invalid_item_type" : "invalid_request", error.message, requestId)),
  (b) => new PartnerInvalid({ field: b.code === "invalid_item_type" ? "item_type" : "", message: b.error })
)

export const PartnerConflict = wire(
  PartnerStateConflict,
  PartnerEnvelope("PartnerConflict", ["conflict"], "the request does not fit the resource's current state"),
  409,
  (error, requestId) => Effect.succeed(partnerEnvelope("conflict", error.message, requestId)),
  (b) => new PartnerStateConflict({ message: b.error })
)

export const PartnerPlanGate = wire(
  PartnerPlanRequired,
  Schema.Struct({
    ...PartnerEnvelope("", ["plan_required"], "").fields,
    feature: Schema.String,
    current_plan: Schema.String,
    required_plan: Schema.String
  }).annotations({ identifier: "PartnerPlanRequired", description: "the workspace's plan does not include this feature" }),
  402,
  (error, requestId) =>
    Effect.succeed({
      ...partnerEnvelope("plan_required", error.message, requestId),
      feature: error.feature,
      current_plan: error.current_plan,
      required_plan: error.required_plan
    }),
  (b) => new PartnerPlanRequired({ feature: b.feature, current_plan: b.current_plan, required_plan: b.required_plan, message: b.error })
)

/** The Idempotency-Key refusals of the partner routes (classes of their own: see the note above). */
export class PartnerKeyInvalid extends Schema.TaggedError<PartnerKeyInvalid>()("PartnerKeyInvalid", { message: Schema.String }) {}

export class PartnerKeyInFlight extends Schema.TaggedError<PartnerKeyInFlight>()("PartnerKeyInFlight", {
  retry_after_seconds: Schema.Number,
  message: Schema.String
}) {}

export class PartnerKeyReused extends Schema.TaggedError<PartnerKeyReused>()("PartnerKeyReused", { message: Schema.String }) {}

export const PartnerInvalidIdempotencyKey = wire(
  PartnerKeyInvalid,
  PartnerEnvelope(
    "PartnerIdempotencyKeyInvalid",
    ["idempotency_key_invalid"],
    "the Idempotency-Key is empty, white space, longer than 255 characters or not printable ASCII"
  ),
  400,
  (error, requestId) => Effect.succeed(partnerEnvelope("idempotency_key_invalid", error.message, requestId)),
  (b) => new PartnerKeyInvalid({ message: b.error })
)

export const PartnerInFlight = wire(
  PartnerKeyInFlight,
  PartnerEnvelope(
    "PartnerIdempotencyConflict",
    ["idempotency_conflict"],
    "a request with this Idempotency-Key is still in flight; retry after Retry-After seconds"
  ),
  409,
  (error, requestId) =>
    Effect.as(header("retry-after", String(error.retry_after_seconds)), partnerEnvelope("idempotency_conflict", error.message, requestId)),
  (b) => new PartnerKeyInFlight({ retry_after_seconds: 1, message: b.error })
)

export const PartnerKeyReuse = wire(
  PartnerKeyReused,
  PartnerEnvelope("PartnerIdempotencyKeyReuse", ["idempotency_key_reuse"], "this Idempotency-Key was used with another body or route"),
  422,
  (error, requestId) => Effect.succeed(partnerEnvelope("idempotency_key_reuse", error.message, requestId)),
  (b) => new PartnerKeyReused({ message: b.error })
)

/** A Range past the end of the file: 416 with `Content-Range: bytes * /size`. */
export class PartnerRangeUnsatisfiable extends Schema.TaggedError<PartnerRangeUnsatisfiable>()("PartnerRangeUnsatisfiable", {
  size: Schema.Number,
  message: Schema.String
}) {}

export const PartnerRangeNotSatisfiable = wire(
  PartnerRangeUnsatisfiable,
  PartnerEnvelope(
    "PartnerRangeNotSatisfiable",
    ["range_not_satisfiable"],
    "the Range header asks only for bytes past the end of the file; Content-Range tells its size"
  ),
  416,
  (error, requestId) =>
    Effect.as(header("content-range", `bytes */${error.size}`), partnerEnvelope("range_not_satisfiable", error.message, requestId)),
  (b) => new PartnerRangeUnsatisfiable({ size: 0, message: b.error })
)

/** The endpoint, honouring an opt-in Idempotency-Key with the same service as the first-party API (partner envelope). */
export const idempotent = honouringKey({ invalid: PartnerInvalidIdempotencyKey, inFlight: PartnerInFlight, reuse: PartnerKeyReuse })

// ------------------------------------------------------------------------------------------------ security

/** The user and app a user-context request acts as. */
export class CurrentPartnerCaller extends Context.Tag("@convene/api/CurrentPartnerCaller")<CurrentPartnerCaller, PartnerCaller>() {}

export const partnerBearerScheme = "partnerBearer"

/**
 * `Authorization: Bearer <access token>` of the partner OAuth server (svc_pua_v1_...). The middleware reads the
 * header itself, so that a missing header and a malformed one answer the document's own codes.
 */
export class PartnerUserAuth extends HttpApiMiddleware.Tag<PartnerUserAuth>()("PartnerUserAuth", {
  failure: Schema.Union(PartnerUserUnauthorized, PartnerInactive),
  provides: CurrentPartnerCaller,
  security: {
    [partnerBearerScheme]: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(
        OpenApi.Description,
        "An access token of the partner OAuth server (/oauth2/token, svc_pua_v1_...), valid 24 hours, for the user who " +
          "approved the app"
      )
    )
  }
}) {}

// ------------------------------------------------------------------------------------------------ endpoints

const MeetingPath = Schema.Struct({ id: MeetingId })
const ItemPath = Schema.Struct({ id: MeetingId, item_id: AgendaItemId })
const BacklogPath = Schema.Struct({ id: BacklogItemId })
const AttachmentPath = Schema.Struct({ id: MeetingId, attachment_id: AttachmentId })
const ButtonPath = Schema.Struct({ id: MeetingId, button_id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)) })

export const PartnerMeetingList = Pagination.ListOf(PartnerMeeting).annotations({ identifier: "PartnerMeetingList" })
export const PartnerAgendaItemList = Pagination.ListOf(AgendaItem).annotations({ identifier: "PartnerAgendaItemList" })
export const PartnerBacklogItemList = Pagination.ListOf(BacklogItem).annotations({ identifier: "PartnerBacklogItemList" })
export const PartnerBacklogHistoryList = Pagination.ListOf(BacklogHistoryItem).annotations({ identifier: "PartnerBacklogHistoryList" })
export const NextStepList = Pagination.ListOf(NextStep).annotations({ identifier: "NextStepList" })
export const ActionButtonList = Pagination.ListOf(ActionButton).annotations({ identifier: "ActionButtonList" })

/** An attachment with a fresh pre-signed download URL (decisions.md). */
export class PartnerAttachment extends Schema.Class<PartnerAttachment>("PartnerAttachment")({
  ...Attachment.fields,
  download_url: Schema.String.annotations({
    description: "absolute URL of the file's bytes, HMAC-signed, usable without a token until download_url_expires_at"
  }),
  download_url_expires_at: Timestamp.annotations({ description: "15 minutes after this answer" })
}) {}

export const PartnerAttachmentList = Pagination.ListOf(PartnerAttachment).annotations({ identifier: "PartnerAttachmentList" })

export const TriggerAnswer = Schema.Struct({
  invocation_id: Schema.String.annotations({ description: "the id of this invocation, also in the webhook it sends" })
}).annotations({ identifier: "ActionButtonTriggered" })

/** The multipart form of an upload (the host streams the body itself). */
const UploadForm = Schema.Struct({
  file: Schema.String.annotations({ description: "the file, any type; kept byte for byte", jsonSchema: { type: "string", format: "binary" } })
}).annotations({ identifier: "PartnerAttachmentUpload" })

/** A download's body: the file's bytes with its own media type. */
const FileBytes = Schema.Uint8ArrayFromSelf.pipe(
  HttpApiSchema.withEncoding({ kind: "Uint8Array", contentType: "application/octet-stream" })
).annotations({ description: "the file's bytes, with the attachment's `content_type` as Content-Type" })

/** The SRT transcript. */
const Srt = Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "application/x-subrip" })).annotations({
  description: "SubRip: numbered cues `hh:mm:ss,mmm --> hh:mm:ss,mmm` with `Speaker: text`, CRLF line ends"
})

const read = "Scope meetings:read."
const write = "Scope meetings:write. Honours an opt-in Idempotency-Key (replays answer `Idempotent-Replayed: true`)."

export class PartnerUserApi extends HttpApiGroup.make("partnerUser")
  .add(
    HttpApiEndpoint.get("listMeetings", "/meetings")
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(PartnerMeetingList)
      .annotate(OpenApi.Summary, "List the user's meetings")
      .annotate(
        OpenApi.Description,
        "The meetings the user sees (workspace OWNERs and ADMINs every meeting of the workspace, MEMBERs those they take " +
          "part in), newest first, as `{id, title, scheduled_start, scheduled_end, status}` in `{items, total, limit, " +
          `offset}\` (limit 20 by default, at most 100). ${read}`
      )
  )
  .add(
    HttpApiEndpoint.get("listAgendaItems", "/meetings/:id/agenda-items")
      .setPath(MeetingPath)
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(PartnerAgendaItemList)
      .addError(PartnerMissing)
      .annotate(OpenApi.Summary, "List a meeting's agenda items")
      .annotate(
        OpenApi.Description,
        "The meeting's agenda, ordered by `sequence`, with the user's own `talking_points`, the deprecated `presenters` " +
          `and \`presenter_details\` in the same order. 404 when the user does not see the meeting. ${read}`
      )
  )
  .add(
    idempotent(
      HttpApiEndpoint.post("createAgendaItem", "/meetings/:id/agenda-items")
        .setPath(MeetingPath)
        .setPayload(CreatePartnerAgendaItem)
        .addSuccess(AgendaItem, { status: 201 })
        .addError(PartnerMissing)
        .addError(PartnerConflict)
        .addError(PartnerValidation)
    )
      .annotate(OpenApi.Summary, "Add an agenda item")
      .annotate(
        OpenApi.Description,
        "`item_type` is DISCUSSION (default), QUESTIONS_TO_ANSWER, BREAK or ADJOURN (anything else: 400 " +
          "`invalid_item_type`); `sequence` a decimal number as a string (not one: 400 `invalid_request`), appended after " +
          "the last item when left out; `talking_points` are private to the user; `presenters` users of the workspace. " +
          `An ended meeting is 409. Meeting OWNER or EDITOR, or a workspace admin (else 403 \`forbidden\`). ${write}`
      )
  )
  .add(
    idempotent(
      HttpApiEndpoint.put("updateAgendaItem", "/meetings/:id/agenda-items/:item_id")
        .setPath(ItemPath)
        .setPayload(UpdateAgendaItem)
        .addSuccess(AgendaItem)
        .addError(PartnerMissing)
        .addError(PartnerValidation)
    )
      .annotate(OpenApi.Summary, "Update an agenda item")
      .annotate(
        OpenApi.Description,
        "Only the fields sent change: `item_type` is applied, an omitted `sequence` keeps the item in place. The answer " +
          "carries the item's real presenters (`presenters` and `presenter_details`). An item of another meeting is 404. " +
          write
      )
  )
  .add(
    HttpApiEndpoint.get("listBacklogItems", "/backlog-items")
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(PartnerBacklogItemList)
      .annotate(OpenApi.Summary, "List backlog items")
      .annotate(OpenApi.Description, `The workspace's active backlog items (not assigned, not deleted), newest first. ${read}`)
  )
  .add(
    idempotent(
      HttpApiEndpoint.post("createBacklogItem", "/backlog-items")
        .setPayload(CreateBacklogItem)
        .addSuccess(BacklogItem, { status: 201 })
        .addError(PartnerValidation)
    )
      .annotate(OpenApi.Summary, "Create a backlog item")
      .annotate(OpenApi.Description, `An agenda item not attached to a meeting, with talking points and presenters. ${write}`)
  )
  .add(
    HttpApiEndpoint.get("backlogHistory", "/backlog-items/history")
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(PartnerBacklogHistoryList)
      .annotate(OpenApi.Summary, "Backlog history")
      .annotate(OpenApi.Description, `Backlog items that were assigned to a meeting or deleted, newest first. ${read}`)
  )
  .add(
    HttpApiEndpoint.get("getBacklogItem", "/backlog-items/:id")
      .setPath(BacklogPath)
      .addSuccess(BacklogItem)
      .addError(PartnerMissing)
      .annotate(OpenApi.Summary, "Get a backlog item")
      .annotate(OpenApi.Description, `An active backlog item (an assigned or deleted one is 404 and shows in the history). ${read}`)
  )
  .add(
    idempotent(
      HttpApiEndpoint.put("updateBacklogItem", "/backlog-items/:id")
        .setPath(BacklogPath)
        .setPayload(UpdateBacklogItem)
        .addSuccess(BacklogItem)
        .addError(PartnerMissing)
        .addError(PartnerValidation)
    )
      .annotate(OpenApi.Summary, "Update a backlog item")
      .annotate(OpenApi.Description, `Only the fields sent change. ${write}`)
  )
  .add(
    idempotent(
      HttpApiEndpoint.del("deleteBacklogItem", "/backlog-items/:id")
        .setPath(BacklogPath)
        .addSuccess(HttpApiSchema.NoContent)
        .addError(PartnerMissing)
    )
      .annotate(OpenApi.Summary, "Delete a backlog item")
      .annotate(OpenApi.Description, `204; the item leaves the active list and stays in the history. ${write}`)
  )
  .add(
    idempotent(
      HttpApiEndpoint.post("assignBacklogItem", "/backlog-items/:id/assign")
        .setPath(BacklogPath)
        .setPayload(AssignBacklogItem)
        .addSuccess(BacklogAssignment)
        .addError(PartnerMissing)
        .addError(PartnerConflict)
        .addError(PartnerValidation)
    )
      .annotate(OpenApi.Summary, "Assign a backlog item to a meeting")
      .annotate(
        OpenApi.Description,
        "Creates an agenda item on the destination meeting and closes the backlog item (afterwards it reads 404 and " +
          `shows in the history). ${write}`
      )
  )
  .add(
    HttpApiEndpoint.get("listAttachments", "/meetings/:id/attachments")
      .setPath(MeetingPath)
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(PartnerAttachmentList)
      .addError(PartnerMissing)
      .annotate(OpenApi.Summary, "List a meeting's attachments")
      .annotate(OpenApi.Description, `Oldest first, each with a fresh pre-signed download URL (15 minutes). ${read}`)
  )
  .add(
    HttpApiEndpoint.post("uploadAttachment", "/meetings/:id/attachments")
      .setPath(MeetingPath)
      .setPayload(HttpApiSchema.MultipartStream(UploadForm))
      .addSuccess(PartnerAttachment, { status: 201 })
      .addError(PartnerMissing)
      .addError(PartnerValidation)
      .addError(PartnerPayloadTooLarge)
      .addError(PartnerUnsupportedMediaType)
      .annotate(OpenApi.Summary, "Upload an attachment")
      .annotate(
        OpenApi.Description,
        "`multipart/form-data` with the file in the field `file`, kept byte for byte (the first-party upload's rules: " +
          "size limit 413, other media types 415, a malformed body 400 `invalid_request`). Answers 201 `{id, meeting_id, " +
          "file_name, content_type, size, sha256, created_at, download_url, download_url_expires_at}`. Idempotency-Key " +
          "is not honoured. Meeting OWNER or EDITOR, or a workspace admin. Scope meetings:write."
      )
  )
  .add(
    HttpApiEndpoint.get("getAttachment", "/meetings/:id/attachments/:attachment_id")
      .setPath(AttachmentPath)
      .addSuccess(PartnerAttachment)
      .addError(PartnerMissing)
      .annotate(OpenApi.Summary, "Get an attachment")
      .annotate(OpenApi.Description, `The attachment with a fresh pre-signed download URL. ${read}`)
  )
  .add(
    idempotent(
      HttpApiEndpoint.del("deleteAttachment", "/meetings/:id/attachments/:attachment_id")
        .setPath(AttachmentPath)
        .addSuccess(HttpApiSchema.NoContent)
        .addError(PartnerMissing)
    )
      .annotate(OpenApi.Summary, "Delete an attachment")
      .annotate(OpenApi.Description, `204; its download URLs stop working. ${write}`)
  )
  .add(
    HttpApiEndpoint.get("downloadAttachment", "/meetings/:id/attachments/:attachment_id/download")
      .setPath(AttachmentPath)
      .addSuccess(FileBytes)
      .addSuccess(FileBytes, { status: 206 })
      .addError(PartnerMissing)
      .addError(PartnerRangeNotSatisfiable)
      .annotate(OpenApi.Summary, "Download an attachment")
      .annotate(
        OpenApi.Description,
        "The bytes exactly as uploaded, with the attachment's Content-Type, `Content-Disposition: attachment`, an ETag " +
          `(the SHA-256) and one byte range when asked (as the first-party download). ${read}`
      )
  )
  .add(
    HttpApiEndpoint.get("exportTranscript", "/meetings/:id/transcript/export")
      .setPath(MeetingPath)
      .addSuccess(Srt)
      .addError(PartnerMissing)
      .addError(PartnerPlanGate)
      .annotate(OpenApi.Summary, "Export the transcript as SRT")
      .annotate(
        OpenApi.Description,
        "The meeting's transcript as SubRip (`application/x-subrip`): a cue per segment, from its offset to the next " +
          "segment's (the last lasts 5 seconds), `Speaker: text`; empty when there is none. The workspace's plan must be " +
          `ELITE or ENTERPRISE: other plans get 402 \`plan_required\` with \`feature\`, \`current_plan\` and \`required_plan\`. ${read}`
      )
  )
  .add(
    HttpApiEndpoint.get("nextSteps", "/meetings/:id/next-steps")
      .setPath(MeetingPath)
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(NextStepList)
      .addError(PartnerMissing)
      .annotate(OpenApi.Summary, "List the meeting's next steps")
      .annotate(
        OpenApi.Description,
        "The next steps `{key, title, description, toolkit_id}` of the calling app's toolkits installed in the " +
          "meeting's workspace, in manifest order (another app's toolkits are not shown; empty while none is " +
          `installed). ${read}`
      )
  )
  .add(
    HttpApiEndpoint.get("actionButtons", "/meetings/:id/action-buttons")
      .setPath(MeetingPath)
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(ActionButtonList)
      .addError(PartnerMissing)
      .annotate(OpenApi.Summary, "List the meeting's action buttons")
      .annotate(
        OpenApi.Description,
        "The action buttons `{id, key, label, url, toolkit_id}` of the calling app's toolkits installed in the " +
          "meeting's workspace (id `<toolkit_id>:<key>`; another app's toolkits are not shown; empty while none is " +
          `installed). ${read}`
      )
  )
  .add(
    idempotent(
      HttpApiEndpoint.post("triggerActionButton", "/meetings/:id/action-buttons/:button_id/trigger")
        .setPath(ButtonPath)
        .addSuccess(TriggerAnswer, { status: 202 })
        .addError(PartnerMissing)
    )
      .annotate(OpenApi.Summary, "Trigger an action button")
      .annotate(
        OpenApi.Description,
        "Triggers one of the calling app's action buttons installed in the meeting's workspace (`button_id` as listed " +
          "by GET .../action-buttons: `<toolkit_id>:<key>`). Answers 202 `{invocation_id}` (a fresh UUID), and the app's " +
          "webhook URL receives `action_button.triggered` in the partner envelope with `data {invocation_id, button_id, " +
          "meeting_id, user_id, occurred_at}`, enqueued with the answer and signed as every partner webhook. As for the " +
          "other partner events, nothing is sent (the answer is still 202) when the app has no webhook URL, or its " +
          "webhook filter leaves `action_button.triggered` out. Any other button id (another app's included) is 404, as " +
          "is a meeting the user does not see. A retry with the same Idempotency-Key replays the same invocation_id and " +
          `sends nothing again. ${write}`
      )
  )
  .middleware(PartnerUserAuth)
  .addError(PartnerForbidden)
  .addError(PartnerMissing)
  .addError(PartnerInvalidRequest)
  .addError(PartnerPayloadTooLarge)
  .addError(PartnerUnsupportedMediaType)
  .addError(PartnerRateLimited)
  .prefix(`${partnerPrefix}/user`)
  .annotate(OpenApi.Title, "Partner user context")
  .annotate(
    OpenApi.Description,
    "A partner app acting for a user who approved it at /oauth2/authorize, with the user's access token. 401 " +
      "`missing_authorization` without an Authorization header, `invalid_authorization_format` when it is not `Bearer " +
      "<token>`, `unauthorized` for a token that is not valid (or whose workspace is no longer connected to the app); " +
      "403 `partner_app_inactive` when the app is suspended, `insufficient_scope` when the token lacks the route's " +
      "scope. A token reaches only its user's workspace; another workspace's meeting is 404. A first-party token is " +
      "no credential here, and a partner token none on the first-party API."
  )
{}

/** GET /v1/partner/files/{workspace_id}/{meeting_id}/{attachment_id}: a pre-signed download URL's query. */
export const FileLinkParams = Schema.Struct({
  expires: Schema.String.annotations({ description: "Unix seconds after which the URL is refused" }),
  kid: Schema.String.annotations({ description: "the key the URL was signed with" }),
  signature: Schema.String.annotations({ description: "hex HMAC-SHA256 over the URL's parts" })
})

export class PartnerFilesApi extends HttpApiGroup.make("partnerFiles")
  .add(
    HttpApiEndpoint.get("download", "/files/:workspace_id/:meeting_id/:attachment_id")
      .setPath(Schema.Struct({ workspace_id: WorkspaceId, meeting_id: MeetingId, attachment_id: AttachmentId }))
      .setUrlParams(FileLinkParams)
      .addSuccess(FileBytes)
      .addSuccess(FileBytes, { status: 206 })
      .addError(PartnerMissing)
      .addError(PartnerRangeNotSatisfiable)
      .addError(PartnerInvalidRequest)
      .annotate(OpenApi.Summary, "Download through a pre-signed URL")
      .annotate(
        OpenApi.Description,
        "The `download_url` of a partner attachment answer: no token needed. The URL is valid 15 minutes for that one " +
          "attachment; after its expiry, with any part of it changed, or when the attachment is gone, it is 404 " +
          "`not_found` (the same answer for each, so a URL tells nothing it does not grant). The bytes as the " +
          "authenticated download answers them, Range included."
      )
  )
  .prefix(partnerPrefix)
  .annotate(OpenApi.Title, "Partner files")
  .annotate(OpenApi.Description, "Pre-signed download URLs of partner attachments.")
{}
