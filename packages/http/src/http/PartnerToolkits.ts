/**
 * The partner admin API's toolkits: the app is the one PartnerAdminAuth authenticated (CurrentPartnerApp); the core
 * decides (Toolkits), and its refusals are answered with the toolkit routes' own wire classes
 * (asPartnerToolkitFailure; a version's conflicts as the 409 with `conflicts`).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { type PartnerApp, type ToolkitRefused, Toolkits } from "@convene/core"
import { Effect } from "effect"
import { Api } from "@convene/api/Api"
import { CurrentPartnerApp } from "@convene/api/Partner"
import { asPartnerToolkitFailure, asPartnerVersionFailure } from "@convene/api/PartnerToolkits"

/** Runs `f` for the authenticated app, its refusals as the toolkit routes' classes. */
const asApp = <A>(f: (app: PartnerApp) => Effect.Effect<A, ToolkitRefused>) =>
  Effect.flatMap(CurrentPartnerApp, f).pipe(Effect.mapError(asPartnerToolkitFailure))

export const PartnerToolkitsLive = HttpApiBuilder.group(Api, "partnerToolkits", (handlers) =>
  Effect.gen(function*() {
    const toolkits = yield* Toolkits
    return handlers
      .handle("listToolkits", ({ urlParams }) => asApp((app) => toolkits.list(app, urlParams)))
      .handle("createToolkit", ({ payload }) => asApp((app) => toolkits.create(app, payload)))
      .handle("exportToolkits", ({ payload }) => asApp((app) => toolkits.exportMany(app, payload)))
      .handle("getToolkit", ({ path }) => asApp((app) => toolkits.get(app, path.id)))
      .handle("updateToolkit", ({ path, payload }) => asApp((app) => toolkits.update(app, path.id, payload)))
      .handle("patchToolkit", ({ path, payload }) => asApp((app) => toolkits.patch(app, path.id, payload)))
      .handle("deleteToolkit", ({ path }) => asApp((app) => toolkits.remove(app, path.id)))
      .handle("exportToolkit", ({ path }) => asApp((app) => toolkits.exportOne(app, path.id)))
      .handle("listToolkitVersions", ({ path, urlParams }) => asApp((app) => toolkits.listVersions(app, path.id, urlParams)))
      .handle("createToolkitVersion", ({ path, payload }) =>
        Effect.flatMap(CurrentPartnerApp, (app) => toolkits.createVersion(app, path.id, payload)).pipe(
          Effect.mapError(asPartnerVersionFailure)
        ))
      .handle("getToolkitVersion", ({ path }) => asApp((app) => toolkits.getVersion(app, path.id, path.version_id)))
      .handle("publishToolkitVersion", ({ path, payload }) =>
        asApp((app) => toolkits.publish(app, path.id, path.version_id, payload)))
      .handle("listToolkitInstallations", ({ path }) => asApp((app) => toolkits.installations(app, path.id)))
  }))
