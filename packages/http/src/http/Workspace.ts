import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { WorkspaceAdmin } from "@convene/core"
import { Effect } from "effect"
import { Api } from "@convene/api/Api"
import { asCaller } from "./Security.js"

export const WorkspaceLive = HttpApiBuilder.group(Api, "workspace", (handlers) =>
  Effect.gen(function*() {
    const admin = yield* WorkspaceAdmin
    return handlers
      .handle("getSettings", asCaller((principal) => admin.getSettings(principal)))
      .handle("updateSettings", asCaller((principal, { payload }) => admin.updateSettings(principal, payload)))
      .handle("getToolkitUpdates", asCaller((principal) => admin.toolkitUpdates(principal)))
      .handle("setToolkitUpdates", asCaller((principal, { payload }) => admin.setToolkitUpdates(principal, payload)))
      .handle("listMembers", asCaller((principal, { urlParams }) => admin.listMembers(principal, urlParams)))
      .handle("changeMemberRole", asCaller((principal, { path, payload }) => admin.changeRole(principal, path.userID, payload)))
      .handle("removeMember", asCaller((principal, { path }) => admin.removeMember(principal, path.userID)))
      .handle("listApiKeys", asCaller((principal, { urlParams }) => admin.listApiKeys(principal, urlParams)))
      .handle("deleteApiKey", asCaller((principal, { path }) => admin.revokeApiKey(principal, path.id)))
  }))
