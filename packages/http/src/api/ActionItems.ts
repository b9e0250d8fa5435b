import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
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
      .annotate(OpenApi.Description, "Action items of the meetings the caller can see, newest first. Scope action-items:read.")
  )
  .add(
    HttpApiEndpoint.post("create", "/action-items")
      .setPayload(CreateActionItem)
      .addSuccess(ActionItem, { status: 201 })
      .addError(Missing)
      .pipe(idempotent)
      .annotate(
        OpenApi.Description,
        "Creates an action item on a meeting (404 when the meeting is missing or not visible). `status` may be any value " +
          "(default needs_review). Honours Idempotency-Key. Scope action-items:write."
      )
  )
  .add(HttpApiEndpoint.get("get", "/action-items/:id").setPath(ItemPath).addSuccess(ActionItem).addError(Missing))
  .add(
    HttpApiEndpoint.patch("update", "/action-items/:id")
      .setPath(ItemPath)
      .setPayload(UpdateActionItem)
      .addSuccess(ActionItem)
      .addError(Missing)
      .addError(StateConflict)
      .annotate(
        OpenApi.Description,
        "Only the fields given change. Status changes: needs_review → accepted | cancelled; accepted → in_progress | blocked | " +
          "completed | cancelled; in_progress → blocked | completed | cancelled; blocked → in_progress | cancelled; completed → " +
          "in_progress; cancelled → needs_review; anything else is 409 conflict. Completing sets is_completed and completed_at; " +
          "leaving completed clears both."
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/action-items/:id")
      .setPath(ItemPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Missing)
  )
  .middleware(Authenticate)
  .addError(Forbidden)
  .prefix("/v1")
  .annotate(OpenApi.Title, "Action items")
{}
