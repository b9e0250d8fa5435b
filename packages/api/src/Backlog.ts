import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import {
  AssignBacklogItem,
  BacklogAssignment,
  BacklogHistoryItem,
  BacklogItem,
  BacklogItemId,
  CreateBacklogItem,
  Pagination,
  UpdateBacklogItem
} from "@convene/core"
import { Schema } from "effect"
import { Forbidden, Missing, StateConflict } from "./Errors.js"
import { PageParams } from "./Query.js"
import { Authenticate } from "./Security.js"

const ItemPath = Schema.Struct({ id: BacklogItemId })
export const BacklogItemList = Pagination.ListOf(BacklogItem).annotations({ identifier: "BacklogItemList" })
export const BacklogHistoryList = Pagination.ListOf(BacklogHistoryItem).annotations({ identifier: "BacklogHistoryList" })

export class BacklogApi extends HttpApiGroup.make("backlogItems")
  .add(
    HttpApiEndpoint.get("list", "/backlog-items")
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(BacklogItemList)
      .annotate(OpenApi.Summary, "List backlog items")
      .annotate(
        OpenApi.Description,
        "The workspace's open backlog items (`status` `open`), oldest first (by `created_at`, then `id`). `talking_points` " +
          "are the caller's own. Assigned and deleted items are in the history instead. Scope meetings:read."
      )
  )
  .add(
    HttpApiEndpoint.post("create", "/backlog-items")
      .setPayload(CreateBacklogItem)
      .addSuccess(BacklogItem, { status: 201 })
      .annotate(OpenApi.Summary, "Create a backlog item")
      .annotate(
        OpenApi.Description,
        "Adds an item to the workspace's backlog: an agenda item not attached to a meeting yet, with `status` `open`. " +
          "`title` is required (1 to 500 characters, trimmed); `description` at most 10000 characters; `talking_points` " +
          "(at most 50 of at most 2000 characters) are private to the caller; `presenters` (at most 50) must be users of " +
          "the workspace (400 naming the entry). Any member of the workspace may create backlog items. Idempotency-Key is " +
          "not honoured here (a repeated request creates another item). Scope meetings:write."
      )
  )
  .add(
    HttpApiEndpoint.get("history", "/backlog-items/history")
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(BacklogHistoryList)
      .annotate(OpenApi.Summary, "List the backlog's history")
      .annotate(
        OpenApi.Description,
        "The items that left the backlog, most recently closed first (by `assigned_at` or `deleted_at`, then `id` " +
          "descending). An assigned item has `status` `assigned`, `assigned_at` and `destination_meeting_id` (kept even " +
          "if that meeting is deleted later) and `deleted_at` null; a deleted one has `status` `deleted` and `deleted_at`. " +
          "`talking_points` are the caller's own, as they were when the item was closed. Scope meetings:read."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/backlog-items/:id")
      .setPath(ItemPath)
      .addSuccess(BacklogItem)
      .addError(Missing)
      .annotate(OpenApi.Summary, "Get a backlog item")
      .annotate(
        OpenApi.Description,
        "The open backlog item with this id, with the caller's own `talking_points` and the presenters' names " +
          "(`presenter_details`). An item that was assigned or deleted answers 404 (see the history). Scope meetings:read."
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/backlog-items/:id")
      .setPath(ItemPath)
      .setPayload(UpdateBacklogItem)
      .addSuccess(BacklogItem)
      .addError(Missing)
      .annotate(OpenApi.Summary, "Update a backlog item")
      .annotate(
        OpenApi.Description,
        "Only the fields given change. `talking_points` replaces the caller's own; `presenters` must be users of the " +
          "workspace (400 naming the entry). An assigned or deleted item answers 404. Scope meetings:write."
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/backlog-items/:id")
      .setPath(ItemPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Missing)
      .annotate(OpenApi.Summary, "Delete a backlog item")
      .annotate(
        OpenApi.Description,
        "Removes the item from the backlog; 204 with no body. It is kept in the history with `status` `deleted` and " +
          "`deleted_at`, and reads 404 from then on; deleting it again answers 404, as does deleting an assigned item. " +
          "Scope meetings:write."
      )
  )
  .add(
    HttpApiEndpoint.post("assign", "/backlog-items/:id/assign")
      .setPath(ItemPath)
      .setPayload(AssignBacklogItem)
      .addSuccess(BacklogAssignment)
      .addError(Missing)
      .addError(StateConflict)
      .annotate(OpenApi.Summary, "Assign a backlog item to a meeting")
      .annotate(
        OpenApi.Description,
        "Creates a new agenda item on the meeting `destination_meeting_id` and closes the backlog item, in one " +
          "transaction: either both happen or neither. The agenda item is created as POST /v1/agenda-items would create " +
          "it: the caller must be allowed to change that meeting's agenda (meeting OWNER or EDITOR, or a workspace admin " +
          "or API key; a VIEWER gets 403), an ended meeting answers 409, the item is appended after the meeting's last " +
          "one, and its `item_type` is DISCUSSION. It carries the backlog item's `title`, `description` and " +
          "`presenters`, and every person's talking points (each still private to its writer). Answers 200 " +
          "`{agenda_item, backlog_item}`: the new agenda item, and the backlog item as it now reads in the history " +
          "(`status` `assigned`, `assigned_at`, `destination_meeting_id`). Afterwards the item reads 404. An item " +
          "already assigned or deleted answers 404, and so does a meeting that is missing or that the caller cannot " +
          "see. Records the events agenda_item.created and backlog_item.assigned (whose `data` is the backlog item " +
          "without talking points, plus `agenda_item_id`). Idempotency-Key is not honoured. Scope meetings:write."
      )
  )
  .middleware(Authenticate)
  .addError(Forbidden)
  .prefix("/v1")
  .annotate(OpenApi.Title, "Backlog items")
  .annotate(
    OpenApi.Description,
    "The workspace's backlog: agenda items not attached to a meeting, to be assigned to one later. Backlog items " +
      "belong to the workspace: every member reads them (scope meetings:read) and creates, changes, deletes and assigns " +
      "them (meetings:write), whatever their role; the workspace API key too. `status` is `open` while an item is in " +
      "the backlog, `assigned` once it was moved to a meeting, `deleted` once it was removed; closed items are listed " +
      "in the history. As on agenda items, `talking_points` are private (each caller reads and writes only their own) " +
      "and `presenters` are users of the workspace, shown with their names in `presenter_details`; a deleted user " +
      "stops presenting, and their talking points go."
  )
{}
