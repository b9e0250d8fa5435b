/**
 * The partner API's admin context: its authentication (X-API-Key and X-Client-ID, decided by the core's
 * PartnerApps.authenticateAdmin) and its handlers. The access line names the app's client id as the credential,
 * never the key.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { type PartnerApp, PartnerApps, PartnerAppView } from "@convene/core"
import { Effect, Layer } from "effect"
import { Api } from "@convene/api/Api"
import { CurrentPartnerApp, PartnerAdminAuth } from "@convene/api/Partner"
import * as RequestLog from "./RequestLog.js"

/** Who called, for the access line: the app's public client id (never its key). */
const noteApp = (request: HttpServerRequest.HttpServerRequest, app: PartnerApp) => {
  const log = RequestLog.entryOf(request)
  if (log === undefined) return
  log.credentialKind = "partner_api_key"
  log.credentialId = app.client_id
}

export const PartnerAdminAuthLive = Layer.effect(
  PartnerAdminAuth,
  Effect.gen(function*() {
    const apps = yield* PartnerApps
    return {
      partnerApiKey: (apiKey) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const app = yield* apps.authenticateAdmin(apiKey, request.headers["x-client-id"])
          noteApp(request, app)
          return app
        })
    }
  })
)

export const PartnerAdminLive = HttpApiBuilder.group(Api, "partnerAdmin", (handlers) =>
  Effect.gen(function*() {
    const apps = yield* PartnerApps
    return handlers
      .handle("getApp", () => Effect.map(CurrentPartnerApp, PartnerAppView.of))
      .handle("listWorkspaces", ({ urlParams }) => Effect.flatMap(CurrentPartnerApp, (app) => apps.listWorkspaces(app.id, urlParams)))
  }))
