/**
 * The partner admin API's IdP configuration: the app is the one PartnerAdminAuth authenticated (CurrentPartnerApp);
 * the core decides (IdpConfigs), and its refusals are answered with the IdP routes' own wire classes
 * (asPartnerIdpFailure), each with its status.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { IdpConfigs } from "@convene/core"
import { Effect } from "effect"
import { Api } from "@convene/api/Api"
import { CurrentPartnerApp } from "@convene/api/Partner"
import { asPartnerIdpFailure } from "@convene/api/PartnerIdp"

export const PartnerIdpLive = HttpApiBuilder.group(Api, "partnerIdp", (handlers) =>
  Effect.gen(function*() {
    const configs = yield* IdpConfigs
    return handlers
      .handle("createIdpConfig", ({ payload }) =>
        Effect.flatMap(CurrentPartnerApp, (app) => configs.create(app, payload)).pipe(Effect.mapError(asPartnerIdpFailure)))
      .handle("getIdpConfig", () =>
        Effect.flatMap(CurrentPartnerApp, (app) => configs.get(app)).pipe(Effect.mapError(asPartnerIdpFailure)))
      .handle("updateIdpConfig", ({ payload }) =>
        Effect.flatMap(CurrentPartnerApp, (app) => configs.update(app, payload)).pipe(Effect.mapError(asPartnerIdpFailure)))
      .handle("deleteIdpConfig", () =>
        Effect.flatMap(CurrentPartnerApp, (app) => configs.remove(app)).pipe(Effect.mapError(asPartnerIdpFailure)))
  }))
