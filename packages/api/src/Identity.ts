import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { CredentialId, Introspection, IssuedToken, IssuePersonalAccessToken, Pagination, TokenRecord, UserView } from "@convene/core"
import { Schema } from "effect"
import { Forbidden, Missing, PlanGate, StreamLimit } from "./Errors.js"
import { PageParams } from "./Query.js"
import { Authenticate } from "./Security.js"

export const TokenList = Pagination.ListOf(TokenRecord).annotations({ identifier: "TokenList" })

export class IdentityApi extends HttpApiGroup.make("identity")
  .add(
    HttpApiEndpoint.get("introspect", "/auth/introspect")
      .addSuccess(Introspection)
      .annotate(OpenApi.Summary, "Introspect the calling token")
      .annotate(
        OpenApi.Description,
        "Describes the calling token: `{active: true, token_id, kind, user_id, workspace_id, scopes, client_id, " +
          "expires_at}`. `kind` is access_token, personal_access_token, short_lived or api_key; `scopes` are those the token " +
          "holds now (limited by its user's current role). Any valid first-party token; no scope needed. An invalid one is 401."
      )
  )
  .add(
    HttpApiEndpoint.get("listTokens", "/user/tokens")
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(TokenList)
      .annotate(OpenApi.Summary, "List the caller's tokens")
      .annotate(
        OpenApi.Description,
        "The caller's live personal access tokens (neither expired nor revoked), newest first; never the token values. A " +
          "workspace API key, which is no user, gets an empty list. Any valid first-party token."
      )
  )
  .add(
    HttpApiEndpoint.post("issueToken", "/user/tokens")
      .setPayload(IssuePersonalAccessToken)
      .addSuccess(IssuedToken, { status: 201 })
      .addError(PlanGate)
      .addError(Missing)
      .annotate(OpenApi.Summary, "Issue a personal access token")
      .annotate(
        OpenApi.Description,
        "Issues a personal access token (svc_pat_v1_; PRO plan and higher, 402 otherwise), valid `expiry_days` 30, 60, 90, " +
          "180 or 365 days, with scopes the calling token holds (400 naming the others). The token " +
          "is shown once. Only a personal access token, an OAuth access token or the signed-in session (its token, the " +
          "session cookie's value, as the bearer; with every scope the user's role grants) may issue one: a short-lived " +
          "token (which must not outlive itself) or a workspace API key (no user) gets 403 insufficient_scope. The " +
          "session is accepted on no other /v1 endpoint."
      )
  )
  .add(
    HttpApiEndpoint.del("deleteToken", "/user/tokens/:id")
      .setPath(Schema.Struct({ id: CredentialId }))
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Missing)
      .annotate(OpenApi.Summary, "Revoke one of the caller's tokens")
      .annotate(
        OpenApi.Description,
        "Revokes one of the caller's personal access tokens by its id (not its value); 204 with no body. Every client using " +
          "it gets 401 from then on. Another user's token is 403; an unknown or already revoked one is 404."
      )
  )
  .add(
    HttpApiEndpoint.get("events", "/user/events")
      .setHeaders(Schema.Struct({
        "last-event-id": Schema.optional(Schema.String).annotations({
          description: "the id of the last event received: the stream resumes after it"
        })
      }))
      .addSuccess(HttpApiSchema.Text({ contentType: "text/event-stream" }))
      .addError(StreamLimit)
      .annotate(OpenApi.Summary, "Stream the workspace's events")
      .annotate(
        OpenApi.Description,
        "Server-Sent Events: every event of the caller's workspace as it happens, without end. Each event is a frame " +
          "`id: <event_id>`, `event: <event_type>`, `data: <the webhook envelope as JSON>` and a blank line; a comment " +
          "line `: keep-alive` opens the stream and follows every 15 seconds. The types are those a webhook may subscribe " +
          "to (the challenge `webhook.verification` is never streamed).\n\n" +
          "Any one of the scopes meetings:read, action-items:read, calendar:read or workspace:read opens a stream " +
          "(403 insufficient_scope without). With workspace:read the stream carries every event; without it only " +
          "system events (empty `actor_user_id`) and those the caller caused.\n\n" +
          "Resuming: send `Last-Event-ID` with the id of the last event received (EventSource clients do so when they " +
          "reconnect) and the stream first replays every later event still in the log (events are kept 7 days), then " +
          "goes on. An id the log no longer holds starts the stream at the newest event, as a stream without one. " +
          "The server never retries on the client's behalf.\n\n" +
          "Events reach the stream within about a second of their change (the log is read once a second, so changes " +
          "made through any server process sharing the store arrive). One credential may hold 10 streams open at once " +
          "per server process (CONVENE_STREAMS_PER_CREDENTIAL); one more is 429 too_many_requests. The stream ends when " +
          "the server shuts down; reconnect with Last-Event-ID."
      )
  )
  .add(
    HttpApiEndpoint.get("me", "/me")
      .addSuccess(UserView)
      .addError(Missing)
      .annotate(OpenApi.Summary, "Get the current user")
      .annotate(
        OpenApi.Description,
        "The user behind the token: `{id, email, name, workspace_id, role}`. Any valid user token; a workspace API key has " +
          "no user (404)."
      )
  )
  .middleware(Authenticate)
  .addError(Forbidden)
  .prefix("/v1")
  .annotate(OpenApi.Title, "Tokens")
  .annotate(
    OpenApi.Description,
    "The calling credential and its user, and the caller's personal access tokens. A token is shown once, when it is " +
      "issued; only its SHA-256 hash is stored. Personal access tokens need a paid plan (PRO and higher) and keep only the " +
      "scopes their user's current role grants."
  )
{}
