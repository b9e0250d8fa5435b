import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { ActionItem, ActionItemId, ActionItemStatus, CreateActionItem, MeetingId, Pagination, UpdateActionItem } from "@convene/core"
import { Schema } from "effect"
import { Forbidden, Missing, StateConflict } from "./Errors.js"
import { idempotent } from "./Idempotency.js"
import { PageParams } from "./Query.js"
import { Authenticate } from "./Security.js"

const ItemPath = Schema.Struct({ id: ActionItemId })
export const ActionItemList = Pagination.ListOf(ActionItem).annotations({ identifier: "ActionItemList" })

export class ActionItemsApi extends HttpApiGroup.make("actionItems")
  .add(
    HttpApiEndpoint.get("list", "/action-items")
      .setUrlParams(Schema.Struct({
        ...PageParams,
        meeting_id: Schema.optional(MeetingId),
        status: Schema.optional(ActionItemStatus)
      }))
      .addSuccess(ActionItemList)
      .addError(Missing)
      .annotate(OpenApi.Summary, "List action items")
      .annotate(
        OpenApi.Description,
        "Action items of the meetings the caller can see, newest first, optionally of one meeting (`meeting_id`; 404 when " +
          "the caller cannot see it) or in one `status`. Scope action-items:read."
      )
  )
  .add(
    HttpApiEndpoint.post("create", "/action-items")
      .setPayload(CreateActionItem)
      .addSuccess(ActionItem, { status: 201 })
      .addError(Missing)
      .pipe(idempotent)
      .annotate(OpenApi.Summary, "Create an action item")
      .annotate(
        OpenApi.Description,
        "Creates an action item on a meeting the caller can see (404 when the meeting is missing or not visible). `status` " +
          "may be any value (default needs_review); `agenda_item_id` must be an agenda item of the same meeting and " +
          "`assigned_to_user_id` a user of the workspace. Honours Idempotency-Key. Scope action-items:write."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/action-items/:id")
      .setPath(ItemPath)
      .addSuccess(ActionItem)
      .addError(Missing)
      .annotate(OpenApi.Summary, "Get an action item")
      .annotate(
        OpenApi.Description,
        "The action item with this id; 404 when it does not exist or its meeting is not visible to the caller. Scope " +
          "action-items:read."
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/action-items/:id")
      .setPath(ItemPath)
      .setPayload(UpdateActionItem)
      .addSuccess(ActionItem)
      .addError(Missing)
      .addError(StateConflict)
      .annotate(OpenApi.Summary, "Update an action item")
      .annotate(
        OpenApi.Description,
        "Only the fields given change. Status changes: needs_review → accepted | cancelled; accepted → in_progress | blocked | " +
          "completed | cancelled; in_progress → blocked | completed | cancelled; blocked → in_progress | cancelled; completed → " +
          "in_progress; cancelled → needs_review; anything else is 409 conflict. Completing sets is_completed and completed_at; " +
          "leaving completed clears both. Scope action-items:write."
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/action-items/:id")
      .setPath(ItemPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Missing)
      .annotate(OpenApi.Summary, "Delete an action item")
      .annotate(
        OpenApi.Description,
        "Deletes the action item; 204 with no body. Deleting it again is 404. Scope action-items:write."
      )
  )
  .middleware(Authenticate)
  .addError(Forbidden)
  .prefix("/v1")
  .annotate(OpenApi.Title, "Action items")
  .annotate(
    OpenApi.Description,
    "The follow-ups of meetings. Action items follow the visibility of their meeting: whoever sees the meeting works on " +
      "its action items, with the scope action-items:read to read and action-items:write to change. Their `status` moves " +
      "along the transitions that Update an action item lists; completing one records when."
  )
{}
