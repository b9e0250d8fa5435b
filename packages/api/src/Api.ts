/**
 * The HTTP contract of Convene, in the two documents it is described by:
 * - `PublicApi`: the first-party API (/v1) and the health check, described at /v1/openapi.json and /docs;
 * - `OperatorDocumentApi`: the operator API (/operator/v1), described only to the operator, behind the
 *   operator token (/operator/v1/openapi.json);
 * and `Api`, both together: what the server serves and what HttpApiClient.make takes.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as OpenApi from "@effect/platform/OpenApi"
import { ActionItemsApi } from "./ActionItems.js"
import { AgendaItemsApi } from "./AgendaItems.js"
import { AttachmentsApi } from "./Attachments.js"
import { BacklogApi } from "./Backlog.js"
import { CalendarApi } from "./Calendar.js"
import { ContextApi } from "./Context.js"
import { BadRequest, PayloadTooLarge, UnsupportedMediaType, ValidationFailed } from "./Errors.js"
import { HealthApi } from "./Health.js"
import { IdentityApi } from "./Identity.js"
import { MeetingsApi } from "./Meetings.js"
import * as OAuthDoc from "./OAuthDoc.js"
import * as OpenApiDoc from "./OpenApiDoc.js"
import { OperatorApi } from "./Operator.js"
import * as Partner from "./Partner.js"
import { PartnerFilesApi, PartnerUserApi } from "./PartnerUser.js"
import * as PartnerAutomations from "./PartnerAutomations.js"
import { PartnerSsoApi } from "./PartnerSso.js"
import { PartnerDomainsApi } from "./PartnerDomains.js"
import { PartnerIdpApi } from "./PartnerIdp.js"
import { PartnerToolkitsApi } from "./PartnerToolkits.js"
import { PartnerWorkflowRunsApi, PartnerWorkflowTemplatesApi } from "./PartnerWorkflows.js"
import { WebhooksApi } from "./Webhooks.js"
import { WorkspaceApi } from "./Workspace.js"

/**
 * The version of the contract, in both documents: the first-party document's release history (1.2.0 dynamic client
 * registration and third-party OAuth with consent, 1.3.0 backlog items and meeting attachments).
 */
const version = "1.3.0"

/** The first-party API: what /v1/openapi.json and /docs describe. */
export class PublicApi extends HttpApi.make("convene")
  .add(MeetingsApi)
  .add(AgendaItemsApi)
  .add(ContextApi)
  .add(AttachmentsApi)
  .add(ActionItemsApi)
  .add(BacklogApi)
  .add(CalendarApi)
  .add(IdentityApi)
  .add(WorkspaceApi)
  .add(WebhooksApi)
  .add(Partner.PartnerAdminApi)
  .add(PartnerUserApi)
  .add(PartnerFilesApi)
  .add(PartnerAutomations.PartnerAutomationsApi)
  .add(PartnerSsoApi)
  .add(PartnerDomainsApi)
  .add(PartnerIdpApi)
  .add(PartnerToolkitsApi)
  .add(PartnerWorkflowTemplatesApi)
  .add(PartnerWorkflowRunsApi)
  .add(HealthApi)
  .addError(ValidationFailed)
  .addError(BadRequest)
  .addError(PayloadTooLarge)
  .addError(UnsupportedMediaType)
  .annotate(OpenApi.Title, "Convene: Meeting Workspace API")
  .annotate(OpenApi.Version, version)
  .annotate(OpenApi.Description, OpenApiDoc.description)
  .annotate(OpenApi.License, OpenApiDoc.license)
  .annotate(
    OpenApi.Transform,
    (spec) => OAuthDoc.merge(PartnerAutomations.describe(Partner.transform(OpenApiDoc.transform(spec))))
  )
{}

/** The operator API on its own: what /operator/v1/openapi.json describes. */
export class OperatorDocumentApi extends HttpApi.make("convene-operator")
  .add(OperatorApi)
  .addError(ValidationFailed)
  .addError(BadRequest)
  .addError(PayloadTooLarge)
  .addError(UnsupportedMediaType)
  .annotate(OpenApi.Title, "Convene: operator API")
  .annotate(OpenApi.Version, version)
  .annotate(OpenApi.Description, OpenApiDoc.operatorDescription)
  .annotate(OpenApi.License, OpenApiDoc.license)
  .annotate(OpenApi.Transform, OpenApiDoc.transform)
{}

/** The whole contract the server serves: the first-party API and the operator API. */
export class Api extends PublicApi.add(OperatorApi) {}
