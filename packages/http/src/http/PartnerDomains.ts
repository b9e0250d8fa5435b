/**
 * The partner admin API's domain verification: the app is the one PartnerAdminAuth authenticated (CurrentPartnerApp);
 * the core decides (DomainVerifications). A verify that issued the domain's first challenge answers 201.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { DomainVerifications } from "@convene/core"
import { Effect } from "effect"
import { Api } from "@convene/api/Api"
import { CurrentPartnerApp } from "@convene/api/Partner"
import { StartedDomainVerification } from "@convene/api/PartnerDomains"

export const PartnerDomainsLive = HttpApiBuilder.group(Api, "partnerDomains", (handlers) =>
  Effect.gen(function*() {
    const verifications = yield* DomainVerifications
    return handlers
      .handle("verifyDomain", ({ path }) =>
        Effect.gen(function*() {
          const app = yield* CurrentPartnerApp
          const { created, verification } = yield* verifications.verify(app.id, path.domain)
          return created ? new StartedDomainVerification(verification) : verification
        }))
      .handle("getDomainVerification", ({ path }) =>
        Effect.flatMap(CurrentPartnerApp, (app) => verifications.status(app.id, path.domain)))
      .handle("checkDomain", ({ path }) => Effect.flatMap(CurrentPartnerApp, (app) => verifications.check(app.id, path.domain)))
  }))
