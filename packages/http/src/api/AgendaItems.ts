import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { AgendaItem, AgendaItemId, CreateAgendaItem, MeetingId, Pagination, UpdateAgendaItem } from "@convene/core"
import { Schema } from "effect"
import { Forbidden, InFlight, InvalidIdempotencyKey, KeyReuse, Missing, StateConflict } from "./Errors.js"
import { IdempotencyHeaders, PageParams } from "./Query.js"
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
      .setHeaders(IdempotencyHeaders)
      .addSuccess(AgendaItem, { status: 201 })
      .addError(Missing)
      .addError(StateConflict)
      .addError(InvalidIdempotencyKey)
      .addError(InFlight)
      .addError(KeyReuse)
      .annotate(
        OpenApi.Description,
        "Adds an agenda item to a meeting; appended after the last item unless `sequence` is given. An ended meeting " +
          "answers 409. `talking_points` are private to the caller. Honours Idempotency-Key. Scope meetings:write."
      )
  )
  .add(HttpApiEndpoint.get("get", "/agenda-items/:id").setPath(ItemPath).addSuccess(AgendaItem).addError(Missing))
  .add(
    HttpApiEndpoint.patch("update", "/agenda-items/:id")
      .setPath(ItemPath)
      .setPayload(UpdateAgendaItem)
      .addSuccess(AgendaItem)
      .addError(Missing)
      .annotate(OpenApi.Description, "Only the fields given change; an omitted `sequence` keeps the item in place.")
  )
  .add(
    HttpApiEndpoint.del("delete", "/agenda-items/:id")
      .setPath(ItemPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Missing)
  )
  .middleware(Authenticate)
  .addError(Forbidden)
  .prefix("/v1")
  .annotate(OpenApi.Title, "Agenda items")
{}
