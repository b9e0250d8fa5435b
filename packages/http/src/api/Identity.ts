import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { CredentialId, Introspection, IssuedToken, IssuePersonalAccessToken, Pagination, TokenRecord, UserView } from "@convene/core"
import { Schema } from "effect"
import { Forbidden, Missing, PlanGate } from "./Errors.js"
import { PageParams } from "./Query.js"
import { Authenticate } from "./Security.js"

export const TokenList = Pagination.ListOf(TokenRecord).annotations({ identifier: "TokenList" })

export class IdentityApi extends HttpApiGroup.make("identity")
  .add(
    HttpApiEndpoint.get("introspect", "/auth/introspect")
      .addSuccess(Introspection)
      .annotate(OpenApi.Description, "Describes the calling token. Any valid first-party token; no scope needed.")
  )
  .add(
    HttpApiEndpoint.get("listTokens", "/user/tokens")
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(TokenList)
      .annotate(OpenApi.Description, "The caller's live personal access tokens, newest first; never the token values.")
  )
  .add(
    HttpApiEndpoint.post("issueToken", "/user/tokens")
      .setPayload(IssuePersonalAccessToken)
      .addSuccess(IssuedToken, { status: 201 })
      .addError(PlanGate)
      .addError(Missing)
      .annotate(
        OpenApi.Description,
        "Issues a personal access token (PRO plan and higher; 402 otherwise) with scopes the calling token holds. The token " +
          "is shown once. Only a personal access token or an OAuth access token may issue one: a short-lived token (which " +
          "must not outlive itself) or a workspace API key (no user) gets 403 insufficient_scope."
      )
  )
  .add(
    HttpApiEndpoint.del("deleteToken", "/user/tokens/:id")
      .setPath(Schema.Struct({ id: CredentialId }))
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Missing)
      .annotate(OpenApi.Description, "Revokes one of the caller's tokens by id: every client using it gets 401 from then on. Another user's token is 403.")
  )
  .add(
    HttpApiEndpoint.get("me", "/me")
      .addSuccess(UserView)
      .addError(Missing)
      .annotate(OpenApi.Description, "The user behind the token (any valid user token; a workspace API key has none: 404).")
  )
  .middleware(Authenticate)
  .addError(Forbidden)
  .prefix("/v1")
  .annotate(OpenApi.Title, "Tokens")
{}
