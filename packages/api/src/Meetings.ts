/** The meetings group: meetings, their participants, contacts and transcript, and templates. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import {
  AddParticipants,
  ChangeRole,
  Contact,
  CreateMeeting,
  Meeting,
  MeetingId,
  MeetingStatus,
  MeetingTemplate,
  Pagination,
  Participant,
  SearchText,
  Timestamp,
  UpdateMeeting,
  Uuid
} from "@convene/core"
import { Schema } from "effect"
import { Forbidden, Missing, PlanGate, StateConflict } from "./Errors.js"
import { idempotent } from "./Idempotency.js"
import { PageParams } from "./Query.js"
import { Authenticate } from "./Security.js"

const MeetingPath = Schema.Struct({ id: MeetingId })
const ParticipantPath = Schema.Struct({
  id: MeetingId,
  userId: Uuid.annotations({ description: "the participant's user id (a guest is addressed by its participant id)" })
})

export const MeetingList = Pagination.ListOf(Meeting).annotations({ identifier: "MeetingList" })
export const ParticipantList = Pagination.ListOf(Participant).annotations({ identifier: "ParticipantList" })
export const ContactList = Pagination.ListOf(Contact).annotations({ identifier: "ContactList" })
export const TemplateList = Pagination.ListOf(MeetingTemplate).annotations({ identifier: "MeetingTemplateList" })
export const AddedParticipants = Schema.Struct({ participants: Schema.Array(Participant) }).annotations({
  identifier: "AddedParticipants"
})

export class MeetingsApi extends HttpApiGroup.make("meetings")
  .add(
    HttpApiEndpoint.get("list", "/meetings")
      .setUrlParams(Schema.Struct({ ...PageParams, status: Schema.optional(MeetingStatus) }))
      .addSuccess(MeetingList)
      .annotate(OpenApi.Summary, "List meetings")
      .annotate(
        OpenApi.Description,
        "The meetings the caller can see, newest first, optionally only those in one `status`. Workspace API keys and " +
          "OWNER/ADMIN users see every meeting of the workspace; MEMBERs see the meetings they take part in. Scope meetings:read."
      )
  )
  .add(
    HttpApiEndpoint.post("create", "/meetings")
      .setPayload(CreateMeeting)
      .addSuccess(Meeting, { status: 201 })
      .addError(PlanGate)
      .addError(Missing)
      .pipe(idempotent)
      .annotate(OpenApi.Summary, "Create a meeting")
      .annotate(
        OpenApi.Description,
        "Creates a meeting; the caller becomes its OWNER participant (a workspace API key, which is no user, leaves it without one). `is_instant: true` starts it now (`start_time` " +
          "is then not given). `template_id` selects a meeting template of GET /v1/meeting-templates (404 when unknown: a " +
          "toolkit's template is known while the version of its toolkit installed in the workspace has it) whose agenda " +
          "the meeting starts with; without it, the workspace's default template, if any (a default toolkit template that " +
          "is gone is passed over: the meeting starts with no template and `template_id` null). `end_time` before " +
          "`start_time` is 400. FREE " +
          "workspaces may create 20 meetings a UTC calendar month (then 402 `plan_required`; deleting meetings does not give the " +
          "allowance back). Honours Idempotency-Key. " +
          "Scope meetings:write."
      )
  )
  .add(
    HttpApiEndpoint.get("search", "/meetings/search")
      .setUrlParams(Schema.Struct({
        ...PageParams,
        q: Schema.optional(SearchText).annotations({ description: "case-insensitive substring of the title (at most 500 characters)" }),
        status: Schema.optional(MeetingStatus),
        start_after: Schema.optional(Timestamp).annotations({ description: "start_time at or after this instant" }),
        start_before: Schema.optional(Timestamp).annotations({ description: "start_time before this instant" })
      }))
      .addSuccess(MeetingList)
      .annotate(OpenApi.Summary, "Search meetings")
      .annotate(
        OpenApi.Description,
        "The meetings the caller can see that match every filter given: `q` in the title (case-insensitive), `status`, and " +
          "`start_time` at or after `start_after` and before `start_before`. Newest first. Scope meetings:read."
      )
  )
  .add(
    HttpApiEndpoint.get("upcoming", "/meetings/upcoming")
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(MeetingList)
      .annotate(OpenApi.Summary, "List upcoming meetings")
      .annotate(
        OpenApi.Description,
        "Scheduled or running meetings that are not over: with an end time, ending now or later; without one, running or " +
          "starting now or later. Soonest first; meetings without a start time are not listed. Scope meetings:read."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/meetings/:id")
      .setPath(MeetingPath)
      .addSuccess(Meeting)
      .addError(Missing)
      .annotate(OpenApi.Summary, "Get a meeting")
      .annotate(
        OpenApi.Description,
        "The meeting with this id. 404 when it does not exist, belongs to another workspace, or the caller may not see it " +
          "(a MEMBER who does not take part in it). Scope meetings:read."
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/meetings/:id")
      .setPath(MeetingPath)
      .setPayload(UpdateMeeting)
      .addSuccess(Meeting)
      .addError(Missing)
      .addError(StateConflict)
      .annotate(OpenApi.Summary, "Update a meeting")
      .annotate(
        OpenApi.Description,
        "Changes the fields given. Status changes: scheduled → in_progress | ended | cancelled; in_progress → ended | " +
          "cancelled; cancelled → scheduled; ended is final (409 `conflict` otherwise, saying which changes are allowed). " +
          "Times record what happened unless the request gives them: starting a meeting sets `start_time` to now, and a " +
          "planned `end_time` moves with it (the planned length is kept; an end planned without a start that has passed " +
          "is dropped); ending it sets `end_time` to now, and a " +
          "`start_time` that is unset or later than that becomes the end time too. Cancelling and restoring keep the " +
          "times. An `end_time` before the `start_time` is 400, naming the field the request set. " +
          "Meeting OWNER or EDITOR, or a workspace admin. Scope meetings:write."
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/meetings/:id")
      .setPath(MeetingPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Missing)
      .annotate(OpenApi.Summary, "Delete a meeting")
      .annotate(
        OpenApi.Description,
        "Deletes the meeting with its participants, transcript, agenda items, action items and context items, in one " +
          "transaction; 204 " +
          "with no body. Meeting OWNER or a workspace admin (an EDITOR or VIEWER gets 403). Scope meetings:write."
      )
  )
  .add(
    HttpApiEndpoint.get("exportTranscript", "/meetings/:id/transcript/export")
      .setPath(MeetingPath)
      .addSuccess(Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/plain; charset=utf-8" })))
      .addError(Missing)
      .annotate(OpenApi.Summary, "Export a meeting's transcript")
      .annotate(
        OpenApi.Description,
        "The transcript as `text/plain; charset=utf-8`, one `[hh:mm:ss] Speaker: text` line per segment (the time is the " +
          "segment's offset in the recording); empty when there is none. A context upload of kind `transcript` (WebVTT or " +
          "SRT, POST /v1/meetings/{id}/context) adds its cues, PII-scrubbed. Scope meetings:read."
      )
  )
  .add(
    HttpApiEndpoint.get("contacts", "/meetings/:id/contacts")
      .setPath(MeetingPath)
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(ContactList)
      .addError(Missing)
      .annotate(OpenApi.Summary, "List a meeting's contacts")
      .annotate(
        OpenApi.Description,
        "The people on the meeting, one per e-mail address: users with their current name, guests by their address " +
          "(`is_guest`). Scope meetings:read."
      )
  )
  .add(
    HttpApiEndpoint.get("listParticipants", "/meetings/:id/participants")
      .setPath(MeetingPath)
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(ParticipantList)
      .addError(Missing)
      .annotate(OpenApi.Summary, "List a meeting's participants")
      .annotate(
        OpenApi.Description,
        "The meeting's participants, users and guests, with their role on the meeting (OWNER, EDITOR or VIEWER). Scope meetings:read."
      )
  )
  .add(
    HttpApiEndpoint.post("addParticipants", "/meetings/:id/participants")
      .setPath(MeetingPath)
      .setPayload(AddParticipants)
      .addSuccess(AddedParticipants, { status: 201 })
      .addError(Missing)
      .pipe(idempotent)
      .annotate(OpenApi.Summary, "Add participants to a meeting")
      .annotate(
        OpenApi.Description,
        "Adds workspace users (user_id; a user of another workspace or none is 404) or guests (guest_email), exactly one per " +
          "entry (400 otherwise), each as EDITOR or VIEWER. Someone already on the meeting is " +
          "a no-op for that entry: the answer lists, per entry in order, the participant as it now is. Guest e-mail " +
          "addresses are kept trimmed and lower-cased. Meeting OWNER or EDITOR, or a workspace admin. Honours Idempotency-Key. " +
          "Scope meetings:write."
      )
  )
  .add(
    HttpApiEndpoint.del("removeParticipant", "/meetings/:id/participants/:userId")
      .setPath(ParticipantPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Missing)
      .addError(StateConflict)
      .annotate(OpenApi.Summary, "Remove a participant")
      .annotate(
        OpenApi.Description,
        "Removes a participant, addressed by user id (a guest by its participant id); 204 with no body. The meeting's OWNER " +
          "cannot be removed (409). Meeting OWNER or EDITOR, or a workspace admin. Scope meetings:write."
      )
  )
  .add(
    HttpApiEndpoint.patch("changeParticipantRole", "/meetings/:id/participants/:userId/role")
      .setPath(ParticipantPath)
      .setPayload(ChangeRole)
      .addSuccess(Participant)
      .addError(Missing)
      .addError(StateConflict)
      .annotate(OpenApi.Summary, "Change a participant's role")
      .annotate(
        OpenApi.Description,
        "Sets the participant's role to EDITOR or VIEWER; the OWNER's role cannot change (409). Meeting OWNER or EDITOR, or " +
          "a workspace admin. Scope meetings:write."
      )
  )
  .add(
    HttpApiEndpoint.get("templates", "/meeting-templates")
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(TemplateList)
      .annotate(OpenApi.Summary, "List meeting templates")
      .annotate(
        OpenApi.Description,
        "The five built-in meeting templates (fixed ids, `toolkit_id` null), then the `meeting_templates` of the partner " +
          "toolkits installed in the workspace, of every partner app, each in the version its installation has in use " +
          "(by toolkit id, then in manifest order). A toolkit's template has `toolkit_id`, an id derived from the toolkit " +
          "and the template's key (the same in every version and workspace), the manifest's name as `description`, " +
          "`detail_level` `standard`, and agenda items of the manifest's type (DISCUSSION when left out) with no " +
          "description; once the installed version no longer has it (a new version without it, the toolkit deleted) it " +
          "is gone from here and cannot start a meeting (meetings made from it keep their agenda). A meeting created " +
          "with a `template_id` starts with the template's agenda. Scope meetings:read."
      )
  )
  .middleware(Authenticate)
  .addError(Forbidden)
  .prefix("/v1")
  .annotate(OpenApi.Title, "Meetings")
  .annotate(
    OpenApi.Description,
    "Meetings of the workspace with their participants, contacts and transcript, and the meeting templates. Workspace API " +
      "keys and OWNER/ADMIN users see and change every meeting of the workspace; MEMBERs see the meetings they take part in " +
      "(404 otherwise) and change them as the meeting's OWNER or an EDITOR (a VIEWER gets 403). Reading needs the scope " +
      "meetings:read, changing meetings:write."
  )
{}
