/**
 * Partner single sign-on's handlers: the core decides (PartnerSso); the host answers its redirects and the desktop
 * page. The callback's answer goes to the session's target: a 302 to the app's redirect URI (web), or the page
 * telling the user to return to the app (desktop). Redirects carry no Referer (the callback's URL holds the IdP's
 * code) and are never cached, nor are initiate's and the session's answers (a state, a signed-in user).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { type CallbackAnswer, PartnerSso } from "@convene/core"
import { Effect } from "effect"
import { Api } from "@convene/api/Api"
import { callbackFailureOf, initiateFailureOf, lookupFailureOf } from "@convene/api/PartnerSso"
import * as Pages from "../pages/Pages.js"
import * as Browser from "./Browser.js"

const redirect = (location: string) =>
  HttpServerResponse.empty({
    status: 302,
    headers: { location, "cache-control": "no-store", "referrer-policy": "no-referrer" }
  })

/** `Cache-Control: no-store` on the answer of the request being handled. */
const noStore = HttpApp.appendPreResponseHandler((_, response) =>
  Effect.succeed(HttpServerResponse.setHeader(response, "cache-control", "no-store"))
)

/** Why a desktop sign-in failed, in the words of the page. */
const reasons: Record<Exclude<CallbackAnswer["outcome"], "completed">, string> = {
  session_expired: "The sign-in took longer than 10 minutes.",
  idp_error: "The identity provider did not sign you in.",
  issuer_mismatch: "The answer did not come from the identity provider this application uses.",
  invalid_callback: "The identity provider's answer was incomplete.",
  token_exchange_failed: "The identity provider could not be reached, or refused the sign-in.",
  invalid_id_token: "The identity provider's answer could not be verified.",
  email_missing: "The identity provider did not give your e-mail address.",
  email_not_verified: "The identity provider has not verified your e-mail address.",
  domain_not_allowed: "Your e-mail domain may not sign in to this application.",
  domain_not_verified: "Your e-mail domain is not verified for this application.",
  no_prior_connection: "Connect your Convene account to this application first, then sign in again.",
  sso_not_configured: "Single sign-on is no longer set up for this application."
}

const answer = (result: CallbackAnswer) =>
  result.redirect !== undefined
    ? redirect(result.redirect)
    : Browser.page(Pages.ssoFinished({
      app: result.app_name,
      signedIn: result.outcome === "completed",
      reason: result.outcome === "completed" ? undefined : reasons[result.outcome]
    }), { "referrer-policy": "no-referrer" })

export const PartnerSsoLive = HttpApiBuilder.group(Api, "partnerSso", (handlers) =>
  Effect.gen(function*() {
    const sso = yield* PartnerSso
    return handlers
      .handle("ssoInfo", ({ path }) => sso.info(path.slug).pipe(Effect.mapError(lookupFailureOf)))
      .handle("ssoInitiate", ({ urlParams }) =>
        Effect.zipRight(noStore, sso.initiate({ slug: urlParams.slug, target: urlParams.target ?? "web" })).pipe(
          Effect.map((initiated) => urlParams.auto === "true" ? redirect(initiated.authorization_url) : initiated),
          Effect.mapError(initiateFailureOf)
        ))
      .handle("ssoCallback", ({ urlParams }) => sso.callback(urlParams).pipe(Effect.map(answer), Effect.mapError(callbackFailureOf)))
      .handle("ssoSession", ({ path }) => Effect.zipRight(noStore, sso.session(path.session_id)).pipe(Effect.mapError(lookupFailureOf)))
  }))
