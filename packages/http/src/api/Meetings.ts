/** The meetings group: meetings, their participants, contacts and transcript, and templates. */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
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
      .annotate(OpenApi.Description, "Meetings the caller can see, newest first. Scope meetings:read.")
  )
  .add(
    HttpApiEndpoint.post("create", "/meetings")
      .setPayload(CreateMeeting)
      .addSuccess(Meeting, { status: 201 })
      .addError(PlanGate)
      .addError(Missing)
      .pipe(idempotent)
      .annotate(
        OpenApi.Description,
        "Creates a meeting; the caller becomes its OWNER participant. `is_instant: true` starts it now (`start_time` " +
          "is then not given). `template_id` selects a meeting template (404 when unknown) whose agenda the meeting " +
          "starts with. FREE workspaces may create 20 meetings a calendar month (then 402). Honours Idempotency-Key. " +
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
      .annotate(OpenApi.Description, "Searches the meetings the caller can see, newest first. Scope meetings:read.")
  )
  .add(
    HttpApiEndpoint.get("upcoming", "/meetings/upcoming")
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(MeetingList)
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
  )
  .add(
    HttpApiEndpoint.patch("update", "/meetings/:id")
      .setPath(MeetingPath)
      .setPayload(UpdateMeeting)
      .addSuccess(Meeting)
      .addError(Missing)
      .addError(StateConflict)
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
      .annotate(
        OpenApi.Description,
        "Deletes the meeting with its participants, transcript, agenda items and action items. Meeting OWNER or a workspace admin. Scope meetings:write."
      )
  )
  .add(
    HttpApiEndpoint.get("exportTranscript", "/meetings/:id/transcript/export")
      .setPath(MeetingPath)
      .addSuccess(Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/plain; charset=utf-8" })))
      .addError(Missing)
      .annotate(OpenApi.Description, "The transcript as plain text, one `[hh:mm:ss] Speaker: text` line per segment; empty when there is none.")
  )
  .add(
    HttpApiEndpoint.get("contacts", "/meetings/:id/contacts")
      .setPath(MeetingPath)
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(ContactList)
      .addError(Missing)
  )
  .add(
    HttpApiEndpoint.get("listParticipants", "/meetings/:id/participants")
      .setPath(MeetingPath)
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(ParticipantList)
      .addError(Missing)
  )
  .add(
    HttpApiEndpoint.post("addParticipants", "/meetings/:id/participants")
      .setPath(MeetingPath)
      .setPayload(AddParticipants)
      .addSuccess(AddedParticipants, { status: 201 })
      .addError(Missing)
      .pipe(idempotent)
      .annotate(
        OpenApi.Description,
        "Adds workspace users (user_id) or guests (guest_email), exactly one per entry. Someone already on the meeting is " +
          "a no-op for that entry: the answer lists, per entry in order, the participant as it now is. Guest e-mail " +
          "addresses are kept trimmed and lower-cased. Honours Idempotency-Key."
      )
  )
  .add(
    HttpApiEndpoint.del("removeParticipant", "/meetings/:id/participants/:userId")
      .setPath(ParticipantPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Missing)
      .addError(StateConflict)
      .annotate(OpenApi.Description, "Removes a participant; the meeting's OWNER cannot be removed (409).")
  )
  .add(
    HttpApiEndpoint.patch("changeParticipantRole", "/meetings/:id/participants/:userId/role")
      .setPath(ParticipantPath)
      .setPayload(ChangeRole)
      .addSuccess(Participant)
      .addError(Missing)
      .addError(StateConflict)
      .annotate(OpenApi.Description, "Sets the role to EDITOR or VIEWER; the OWNER's role cannot change (409).")
  )
  .add(
    HttpApiEndpoint.get("templates", "/meeting-templates")
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(TemplateList)
      .annotate(OpenApi.Description, "The built-in meeting templates. Scope meetings:read.")
  )
  .middleware(Authenticate)
  .addError(Forbidden)
  .prefix("/v1")
  .annotate(OpenApi.Title, "Meetings")
{}
