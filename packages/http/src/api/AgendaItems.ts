import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
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
      .annotate(OpenApi.Description, "Agenda items of the meetings the caller can see, ordered by sequence. Scope meetings:read.")
  )
  .add(
    HttpApiEndpoint.post("create", "/agenda-items")
      .setPayload(CreateAgendaItem)
      .addSuccess(AgendaItem, { status: 201 })
      .addError(Missing)
      .addError(StateConflict)
      .pipe(idempotent)
      .annotate(
        OpenApi.Description,
        "Adds an agenda item to a meeting. Without `sequence` it is appended: it gets the next whole number after the " +
          "meeting's last item; when that would pass the range (12 digits before the point), the meeting's items are " +
          "first renumbered 1, 2, 3, ... in their order, so appending always works. An ended meeting answers 409. " +
          "`talking_points` are private to the caller; `presenters` must be users of the workspace (400 otherwise). " +
          "Honours Idempotency-Key. Scope meetings:write."
      )
  )
  .add(HttpApiEndpoint.get("get", "/agenda-items/:id").setPath(ItemPath).addSuccess(AgendaItem).addError(Missing))
  .add(
    HttpApiEndpoint.patch("update", "/agenda-items/:id")
      .setPath(ItemPath)
      .setPayload(UpdateAgendaItem)
      .addSuccess(AgendaItem)
      .addError(Missing)
      .annotate(
        OpenApi.Description,
        "Only the fields given change; an omitted `sequence` keeps the item in place. `presenters` must be users of the workspace."
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/agenda-items/:id")
      .setPath(ItemPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Missing)
      .annotate(
        OpenApi.Description,
        "Deletes the item with everyone's talking points on it; action items that pointed at it stay, with agenda_item_id null."
      )
  )
  .middleware(Authenticate)
  .addError(Forbidden)
  .prefix("/v1")
  .annotate(OpenApi.Title, "Agenda items")
{}
