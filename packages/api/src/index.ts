/**
 * @convene/api: the contract of Convene's HTTP API as @effect/platform `HttpApi` values, with no handler and
 * no server. The server (@convene/http) implements it and the client (@convene/client) is derived from it, so
 * both sides encode and decode with the same schemas.
 *
 * - `Api`: everything the server serves; `PublicApi` (/v1, described at /v1/openapi.json) and
 *   `OperatorDocumentApi` (/operator/v1, described behind the operator token).
 * - The groups (`MeetingsApi`, ...), the error classes of the envelope (`Errors`), the security middleware tags
 *   (`Authenticate`, `OperatorAuth`) and the OpenAPI post-processing (`OpenApiDoc`).
 * Each module is also importable alone: `@convene/api/Meetings`, `@convene/api/Errors`, ...
 */
export { ActionItemsApi } from "./ActionItems.js"
export { AgendaItemsApi } from "./AgendaItems.js"
export { Api, OperatorDocumentApi, PublicApi } from "./Api.js"
export { AttachmentsApi } from "./Attachments.js"
export { BacklogApi } from "./Backlog.js"
export { CalendarApi } from "./Calendar.js"
export { ContextApi } from "./Context.js"
export * as Errors from "./Errors.js"
export { HealthApi } from "./Health.js"
export * as Idempotency from "./Idempotency.js"
export { IdentityApi } from "./Identity.js"
export { MeetingsApi } from "./Meetings.js"
export * as OpenApiDoc from "./OpenApiDoc.js"
export { OperatorApi } from "./Operator.js"
export * as Partner from "./Partner.js"
export * as PartnerAutomations from "./PartnerAutomations.js"
export { WorkspaceApi } from "./Workspace.js"
export * as Query from "./Query.js"
export * as RequestId from "./RequestId.js"
export * from "./Security.js"
