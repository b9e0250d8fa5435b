/** The whole HTTP contract of Convene: every group, and the OpenAPI description generated from it. */
import { HttpApi, OpenApi } from "@effect/platform"
import { ActionItemsApi } from "./ActionItems.js"
import { AgendaItemsApi } from "./AgendaItems.js"
import { BadRequest, PayloadTooLarge, UnsupportedMediaType, ValidationFailed } from "./Errors.js"
import { HealthApi } from "./Health.js"
import { IdentityApi } from "./Identity.js"
import { MeetingsApi } from "./Meetings.js"
import * as OpenApiDoc from "./OpenApiDoc.js"
import { OperatorApi } from "./Operator.js"

export class Api extends HttpApi.make("convene")
  .add(MeetingsApi)
  .add(AgendaItemsApi)
  .add(ActionItemsApi)
  .add(IdentityApi)
  .add(OperatorApi)
  .add(HealthApi)
  .addError(ValidationFailed)
  .addError(BadRequest)
  .addError(PayloadTooLarge)
  .addError(UnsupportedMediaType)
  .annotate(OpenApi.Title, "Convene: Meeting Workspace API")
  .annotate(OpenApi.Version, "1.1.0")
  .annotate(OpenApi.Description, OpenApiDoc.description)
  .annotate(OpenApi.Transform, OpenApiDoc.transform)
{}
