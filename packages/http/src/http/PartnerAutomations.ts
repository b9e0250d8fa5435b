/**
 * The partner admin API's automations: the app is the one PartnerAdminAuth authenticated (CurrentPartnerApp); the
 * core decides (Automations). A field the core refuses (an action URL the outbound rules refuse) is answered as every
 * partner 400 is: `invalid_request` in the partner envelope, naming the field.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Automations } from "@convene/core"
import { Effect } from "effect"
import { Api } from "@convene/api/Api"
import { CurrentPartnerApp, PartnerRequestInvalid } from "@convene/api/Partner"

export const PartnerAutomationsLive = HttpApiBuilder.group(Api, "partnerAutomations", (handlers) =>
  Effect.gen(function*() {
    const automations = yield* Automations
    return handlers
      .handle("listAutomations", ({ urlParams }) => Effect.flatMap(CurrentPartnerApp, (app) => automations.list(app, urlParams)))
      .handle("createAutomation", ({ payload }) =>
        Effect.flatMap(CurrentPartnerApp, (app) => automations.create(app, payload)).pipe(
          Effect.catchTag("ValidationError", (invalid) => Effect.fail(new PartnerRequestInvalid({ message: invalid.message })))
        ))
  }))
