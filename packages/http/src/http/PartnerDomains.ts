/**
 * The partner admin API's domain verification: the app is the one PartnerAdminAuth authenticated (CurrentPartnerApp);
 * the core decides (DomainVerifications). A verify that issued the domain's first challenge answers 201 (the contract's
 * StartedDomainVerification), answered here since the platform would encode the record with the first schema it fits.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { DomainVerifications, DomainVerificationView } from "@convene/core"
import { Effect, Schema } from "effect"
import { Api } from "@convene/api/Api"
import { CurrentPartnerApp } from "@convene/api/Partner"

/** The record as JSON (the 201 is answered here: see StartedDomainVerification). */
const encodeView = (verification: DomainVerificationView) => Effect.orDie(Schema.encode(DomainVerificationView)(verification))

export const PartnerDomainsLive = HttpApiBuilder.group(Api, "partnerDomains", (handlers) =>
  Effect.gen(function*() {
    const verifications = yield* DomainVerifications
    return handlers
      .handle("verifyDomain", ({ path }) =>
        Effect.gen(function*() {
          const app = yield* CurrentPartnerApp
          const { created, verification } = yield* verifications.verify(app.id, path.domain)
          if (!created) return verification
          return HttpServerResponse.unsafeJson(yield* encodeView(verification), { status: 201 })
        }))
      .handle("getDomainVerification", ({ path }) =>
        Effect.flatMap(CurrentPartnerApp, (app) => verifications.status(app.id, path.domain)))
      .handle("checkDomain", ({ path }) => Effect.flatMap(CurrentPartnerApp, (app) => verifications.check(app.id, path.domain)))
  }))
