import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { AgendaItem, AgendaItemId, CreateAgendaItem, MeetingId, Pagination, UpdateAgendaItem } from "@convene/core"
import { Schema } from "effect"
import { Forbidden, Missing, StateConflict } from "./Errors.js"
import { idempotent } from "./Idempotency.js"
import { PageParams } from "./Query.js"
import { Authenticate } from "./Security.js"

const ItemPath = Schema.Struct({ id: AgendaItemId })
export const AgendaItemList = Pagination.ListOf(AgendaItem).annotations({ identifier: "AgendaItemList" })

export class AgendaItemsApi extends HttpApiGroup.make("agendaItems")
  .add(
    HttpApiEndpoint.get("list", "/agenda-items")
      .setUrlParams(Schema.Struct({ ...PageParams, meeting_id: Schema.optional(MeetingId) }))
      .addSuccess(AgendaItemList)
      .addError(Missing)
      .annotate(OpenApi.Summary, "List agenda items")
      .annotate(
        OpenApi.Description,
        "Agenda items of the meetings the caller can see, ordered by `sequence`; with `meeting_id`, only that meeting's (404 " +
          "when the caller cannot see it). `talking_points` are the caller's own. Scope meetings:read."
      )
  )
  .add(
    HttpApiEndpoint.post("create", "/agenda-items")
      .setPayload(CreateAgendaItem)
      .addSuccess(AgendaItem, { status: 201 })
      .addError(Missing)
      .addError(StateConflict)
      .pipe(idempotent)
      .annotate(OpenApi.Summary, "Create an agenda item")
      .annotate(
        OpenApi.Description,
        "Adds an agenda item to a meeting (404 when the meeting is missing or not visible; meeting OWNER or EDITOR, or a " +
          "workspace admin). `item_type` is DISCUSSION (default), QUESTIONS_TO_ANSWER, BREAK or ADJOURN; `sequence` is a " +
          "decimal string with at most 12 digits before the point and 6 after. Without `sequence` it is appended: it gets the next whole number after the " +
          "meeting's last item; when that would pass the range (12 digits before the point), the meeting's items are " +
          "first renumbered 1, 2, 3, ... in their order, so appending always works. An ended meeting answers 409. " +
          "`talking_points` are private to the caller; `presenters` must be users of the workspace (400 otherwise). " +
          "Honours Idempotency-Key. Scope meetings:write."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/agenda-items/:id")
      .setPath(ItemPath)
      .addSuccess(AgendaItem)
      .addError(Missing)
      .annotate(OpenApi.Summary, "Get an agenda item")
      .annotate(
        OpenApi.Description,
        "The agenda item with this id, with the caller's own `talking_points` and the presenters' names " +
          "(`presenter_details`). 404 when its meeting is not visible to the caller. Scope meetings:read."
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/agenda-items/:id")
      .setPath(ItemPath)
      .setPayload(UpdateAgendaItem)
      .addSuccess(AgendaItem)
      .addError(Missing)
      .annotate(OpenApi.Summary, "Update an agenda item")
      .annotate(
        OpenApi.Description,
        "Only the fields given change; an omitted `sequence` keeps the item in place. `talking_points` replaces the caller's " +
          "own. `presenters` must be users of the workspace (400 naming the entry). Meeting OWNER or EDITOR, or a workspace " +
          "admin. Scope meetings:write."
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/agenda-items/:id")
      .setPath(ItemPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Missing)
      .annotate(OpenApi.Summary, "Delete an agenda item")
      .annotate(
        OpenApi.Description,
        "Deletes the item with everyone's talking points on it; 204 with no body. Action items that pointed at it stay, with " +
          "`agenda_item_id` null. Meeting OWNER or EDITOR, or a workspace admin. Scope meetings:write."
      )
  )
  .middleware(Authenticate)
  .addError(Forbidden)
  .prefix("/v1")
  .annotate(OpenApi.Title, "Agenda items")
  .annotate(
    OpenApi.Description,
    "The agenda of a meeting, ordered by `sequence`. Agenda items follow their meeting: whoever sees the meeting reads them " +
      "(scope meetings:read), and whoever may change the meeting changes them (meetings:write). `talking_points` are " +
      "private: each caller reads and writes only their own."
  )
{}
