import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Clients, PartnerApps, SigningKeys, Tokens, Users, UserView, Workspaces } from "@convene/core"
import { Effect } from "effect"
import { Api } from "@convene/api/Api"
import { RotatedSigningKey } from "@convene/api/Operator"

export const OperatorLive = HttpApiBuilder.group(Api, "operator", (handlers) =>
  Effect.gen(function*() {
    const workspaces = yield* Workspaces
    const users = yield* Users
    const tokens = yield* Tokens
    const clients = yield* Clients
    const keys = yield* SigningKeys
    const partnerApps = yield* PartnerApps
    return handlers
      .handle("listWorkspaces", ({ urlParams }) => workspaces.list(urlParams))
      .handle("createWorkspace", ({ payload }) => workspaces.create(payload))
      .handle("getWorkspace", ({ path }) => workspaces.overview(path.id))
      .handle("updateWorkspace", ({ path, payload }) => workspaces.update(path.id, payload))
      .handle("deleteWorkspace", ({ path }) => workspaces.delete(path.id))
      .handle("listWorkspaceUsers", ({ path, urlParams }) => users.list({ workspaceId: path.id }, urlParams))
      .handle("createUser", ({ path, payload }) => Effect.map(users.create(path.id, payload), UserView.of))
      .handle("listUsers", ({ urlParams: { email, ...page } }) => users.list({ email }, page))
      .handle("getUser", ({ path }) => Effect.map(users.get(path.id), UserView.of))
      .handle("updateUser", ({ path, payload }) => Effect.map(users.update(path.id, payload), UserView.of))
      .handle("deleteUser", ({ path }) => users.delete(path.id))
      .handle("listUserTokens", ({ path, urlParams }) => tokens.listForUser(path.id, urlParams))
      .handle("issueToken", ({ path, payload }) => tokens.issue(path.id, payload))
      .handle("listWorkspaceTokens", ({ path, urlParams }) => tokens.listForWorkspace(path.id, urlParams))
      .handle("listApiKeys", ({ path, urlParams }) => tokens.listApiKeys(path.id, urlParams))
      .handle("createApiKey", ({ path, payload }) => tokens.issueApiKey(path.id, payload))
      .handle("revokeToken", ({ path }) => tokens.revoke(path.id))
      .handle("createOAuthClient", ({ payload }) => clients.createFirstParty(payload))
      .handle("rotateSigningKey", () => Effect.map(keys.rotate(), (kid) => new RotatedSigningKey({ kid })))
      .handle("listPartnerApps", ({ urlParams }) => partnerApps.list(urlParams))
      .handle("createPartnerApp", ({ payload }) => partnerApps.create(payload))
      .handle("getPartnerApp", ({ path }) => partnerApps.get(path.id))
      .handle("updatePartnerApp", ({ path, payload }) => partnerApps.update(path.id, payload))
      .handle("rotatePartnerAppWebhookSecret", ({ path }) => partnerApps.rotateWebhookSecret(path.id))
      .handle("connectPartnerAppWorkspace", ({ path, payload }) => partnerApps.connectWorkspace(path.id, payload.workspace_id))
  }))
