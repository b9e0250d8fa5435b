/**
 * The routes people use in a browser, on the auth URL (decisions.md, "Browser sign-in"):
 * - GET /signin (the form), POST /signin (a session cookie, then 303 to `continue`, a path on this server),
 *   POST /signout;
 * - GET /v1/oauth/authorize: back to the client with a code (or an error) when it can be, to /signin when nobody
 *   is signed in (401 for a request that is not a browser's, or when browser sign-in is off), the consent page
 *   for a registered client, an error page when the client or redirect URI cannot be trusted; POST
 *   /v1/oauth/authorize: the consent page's decision;
 * - GET and POST /oauth2/authorize: the same for the partner OAuth server (partner apps; the consent page every
 *   time, naming the app and the workspace that approving connects to it);
 * - GET /account: the signed-in user's tokens; POST /account/tokens issues a short-lived token or a personal
 *   access token (shown once), POST /account/tokens/{id}/delete deletes one;
 * - GET /assets/convene.css, the pages' one stylesheet.
 * Every form post must be this site's own (Browser.isOwnForm), or it is refused with 403; a body that is not a
 * form is 415, one over 64 KiB 413 (with the connection closed), as on the API.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import {
  AuthorizationServer,
  type AuthorizeOutcome,
  type HeldScope,
  PartnerAuthorizationServer,
  Crypto,
  CredentialId,
  grantsOf,
  IssueToken,
  isWorkspaceScope,
  type LiveSession,
  openIdScope,
  Plans,
  RedirectUris,
  scopeDescriptions,
  Scopes,
  Sessions,
  Tokens,
  Workspaces
} from "@convene/core"
import { Effect, Either, Option, ParseResult, Schema } from "effect"
import type { HostConfig } from "../Config.js"
import * as Pages from "../pages/Pages.js"
import * as Stylesheet from "../pages/Stylesheet.js"
import { readForm } from "./Body.js"
import * as Browser from "./Browser.js"
import type { ExtraRoute } from "./Routes.js"

export const paths = {
  signIn: "/signin",
  signOut: "/signout",
  authorize: "/v1/oauth/authorize",
  partnerAuthorize: "/oauth2/authorize",
  account: "/account",
  issueToken: "/account/tokens",
  deleteToken: "/account/tokens/:id/delete",
  stylesheet: Stylesheet.path
} as const

export const served = (config: { readonly signIn: boolean }): ReadonlyArray<ExtraRoute> => [
  { method: "GET", path: paths.authorize },
  { method: "POST", path: paths.authorize },
  { method: "GET", path: paths.partnerAuthorize },
  { method: "POST", path: paths.partnerAuthorize },
  { method: "GET", path: paths.stylesheet },
  ...(config.signIn
    ? [
      { method: "GET", path: paths.signIn },
      { method: "POST", path: paths.signIn },
      { method: "POST", path: paths.signOut },
      { method: "GET", path: paths.account },
      { method: "POST", path: paths.issueToken },
      { method: "POST", path: paths.deleteToken }
    ] as const
    : [])
]

const redirect = (location: string, status = 303) =>
  HttpServerResponse.empty({ status, headers: { location, "cache-control": "no-store", "referrer-policy": "same-origin" } })

/** A navigation of a browser (it takes HTML), as opposed to a program calling the endpoint. */
const isBrowser = (request: HttpServerRequest.HttpServerRequest) =>
  (request.headers["accept"] ?? "").includes("text/html") || request.headers["sec-fetch-mode"] === "navigate"

const queryOf = (url: string) => {
  const index = url.indexOf("?")
  return index === -1 ? "" : url.slice(index + 1)
}

const describeScopes = (scopes: ReadonlyArray<HeldScope>, openid: boolean) => [
  ...(openid ? [{ scope: openIdScope, description: "Know who you are (your user id)" }] : []),
  ...scopes.map((scope) => ({ scope, description: scopeDescriptions[scope] }))
]

export const layer = (config: HostConfig) =>
  HttpApiBuilder.Router.use(Effect.fnUntraced(function*(router) {
    const firstParty = yield* AuthorizationServer
    const partnerServer = yield* PartnerAuthorizationServer
    const sessions = yield* Sessions
    const tokens = yield* Tokens
    const workspaces = yield* Workspaces
    const settings = Browser.settingsOf(config)
    const crypto = yield* Crypto
    const routed = <A, E, R>(handler: Effect.Effect<A, E, R>) => Effect.provideService(handler, Crypto, crypto)

    const sessionOf = (request: HttpServerRequest.HttpServerRequest) => Browser.sessionOfRequest(request, settings, sessions)
    const signInLocation = (next: string) => `${paths.signIn}?continue=${encodeURIComponent(next)}`

    /** A form post of this site, or the 403 page. */
    const ownForm = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        const form = yield* Effect.either(readForm(request))
        if (Either.isLeft(form)) return Either.left(Browser.unreadableForm(form.left))
        return (yield* Browser.isOwnForm(request, settings, form.right))
          ? Either.right(form.right)
          : Either.left(Browser.forbiddenForm)
      })

    // ----------------------------------------------------------------------------------------------- sign-in

    const signInPage = (
      request: HttpServerRequest.HttpServerRequest,
      input: Omit<Pages.SignIn, "csrfToken">,
      headers: Record<string, string> = {}
    ) =>
      Effect.map(Browser.csrfOf(request, settings), (csrf) =>
        Browser.withCsrf(Browser.page(Pages.signIn({ ...input, csrfToken: csrf.token }), headers), settings, csrf))

    const getSignIn = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const next = Browser.continuePath(new URLSearchParams(queryOf(request.url)).get("continue") ?? undefined, settings, paths.account)
      if (Option.isSome(yield* sessionOf(request))) return redirect(next)
      return yield* signInPage(request, { continueUrl: next })
    })

    const postSignIn = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const form = yield* ownForm(request)
      if (Either.isLeft(form)) return form.left
      const email = Browser.field(form.right, "email") ?? ""
      const next = Browser.continuePath(Browser.field(form.right, "continue"), settings, paths.account)
      const signedIn = yield* Effect.either(
        sessions.signIn({ email, password: Browser.field(form.right, "password") ?? "", address: Browser.addressOf(request) })
      )
      // decisions.md: 302 to `continue`.
      if (signedIn._tag === "Right") return Browser.setSession(redirect(next, 302), settings, signedIn.right.token)
      const failure = signedIn.left
      return yield* signInPage(
        request,
        failure._tag === "SignInThrottled"
          ? { continueUrl: next, email, status: 429, error: { field: "form", message: `Too many failed attempts. Try again in ${Math.ceil(failure.retry_after_seconds / 60)} minutes.` } }
          : { continueUrl: next, email, status: 401, error: { field: "form", message: "Wrong e-mail address or password." } },
        failure._tag === "SignInThrottled" ? { "retry-after": String(failure.retry_after_seconds) } : {}
      )
    })

    const postSignOut = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const form = yield* ownForm(request)
      if (Either.isLeft(form)) return form.left
      const token = request.cookies[settings.sessionCookie]
      if (token !== undefined) yield* sessions.signOut(token)
      return Browser.clearSession(redirect(paths.signIn), settings)
    })

    // --------------------------------------------------------------------------------------------- authorize

    /** The authorization endpoint of one server: the first-party one, or the partner one (`partner`). */
    const authorizeRoutes = (server: AuthorizationServer["Type"], path: string, partner: boolean) => {
    const answer = (
      request: HttpServerRequest.HttpServerRequest,
      outcome: AuthorizeOutcome,
      query: string,
      session: Option.Option<LiveSession>
    ) =>
      Effect.gen(function*() {
        switch (outcome._tag) {
          case "Refused":
            return Browser.page(Pages.error({ status: 400, title: "This sign-in link cannot be used", message: `${outcome.description}.` }))
          case "Redirect":
            return redirect(outcome.location, request.method === "GET" ? 302 : 303)
          case "SignInRequired": {
            if (settings.signIn && isBrowser(request)) return redirect(signInLocation(`${path}?${query}`), 302)
            return HttpServerResponse.unsafeJson(
              {
                error: "login_required",
                error_description: settings.signIn
                  ? "nobody is signed in: open this URL in a browser to sign in"
                  : "browser sign-in is off on this server"
              },
              { status: 401, headers: { "cache-control": "no-store" } }
            )
          }
          case "ConsentRequired": {
            const csrf = yield* Browser.csrfOf(request, settings)
            const workspace = partner && Option.isSome(session)
              ? Option.some(yield* workspaces.get(session.value.user.workspace_id).pipe(Effect.orDie))
              : Option.none()
            const rendered = Pages.consent({
              partner: Option.match(workspace, { onNone: () => undefined, onSome: (found) => ({ workspaceName: found.name }) }),
              clientName: outcome.client.name,
              clientUri: outcome.client.client_uri,
              redirectOrigin: RedirectUris.formActionSource(outcome.redirectUri).replace(/:\*$/, ""),
              scopes: describeScopes(outcome.scopes, outcome.openid),
              csrfToken: csrf.token,
              requestToken: query,
              userEmail: Option.match(session, { onNone: () => "", onSome: (live) => live.user.email }),
              formActionSources: [RedirectUris.formActionSource(outcome.redirectUri)]
            })
            return Browser.withCsrf(Browser.page(rendered), settings, csrf)
          }
        }
      })

    const getAuthorize = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const query = queryOf(request.url)
      const session = yield* sessionOf(request)
      const outcome = yield* server.authorize([...new URLSearchParams(query).entries()], session, Option.none())
      return yield* answer(request, outcome, query, session)
    })

    const postAuthorize = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const form = yield* ownForm(request)
      if (Either.isLeft(form)) return form.left
      const query = Browser.field(form.right, "request") ?? ""
      const session = yield* sessionOf(request)
      if (Option.isNone(session)) return redirect(signInLocation(`${path}?${query}`))
      const decision = Browser.field(form.right, "decision")
      if (decision !== "approve" && decision !== "deny") {
        return Browser.page(Pages.error({ status: 400, title: "No decision", message: "Choose Approve or Deny." }))
      }
      const outcome = yield* server.authorize([...new URLSearchParams(query).entries()], session, Option.some(decision))
      return yield* answer(request, outcome, query, session)
    })
    return { getAuthorize, postAuthorize } as const
    }
    const firstPartyAuthorize = authorizeRoutes(firstParty, paths.authorize, false)
    const partnerAuthorize = authorizeRoutes(partnerServer, paths.partnerAuthorize, true)

    // ----------------------------------------------------------------------------------------------- account

    const accountPage = (
      request: HttpServerRequest.HttpServerRequest,
      live: LiveSession,
      extra: Pick<Pages.Account, "issued" | "error" | "values" | "status"> = {}
    ) =>
      Effect.gen(function*() {
        const csrf = yield* Browser.csrfOf(request, settings)
        const workspace = yield* workspaces.get(live.user.workspace_id).pipe(Effect.orDie)
        const allowed = Plans.atLeast(workspace.plan, Plans.personalAccessTokensFrom)
        const granted = grantsOf(live.user.role)
        const rows = yield* tokens.listOwn(live.user.id)
        const rendered = Pages.account({
          userEmail: live.user.email,
          csrfToken: csrf.token,
          tokens: rows.map((row) => ({ ...row, expires_at: row.expires_at, created_at: row.created_at })),
          scopeChoices: Scopes.map((scope) => ({
            scope,
            description: scopeDescriptions[scope],
            allowed: granted.includes(scope),
            personalAccessTokenOnly: isWorkspaceScope(scope)
          })),
          personalAccessTokensAllowed: allowed,
          ...(allowed ? {} : { planMessage: `Personal access tokens come with the ${Plans.personalAccessTokensFrom} plan or higher.` }),
          ...extra
        })
        return Browser.withCsrf(Browser.page(rendered), settings, csrf)
      })

    const requireSession = (request: HttpServerRequest.HttpServerRequest) => sessionOf(request)

    const getAccount = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const live = yield* requireSession(request)
      if (Option.isNone(live)) return redirect(signInLocation(paths.account), 302)
      return yield* accountPage(request, live.value)
    })

    const decodeIssue = Schema.decodeUnknown(IssueToken)

    const postIssue = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const form = yield* ownForm(request)
      if (Either.isLeft(form)) return form.left
      const live = yield* requireSession(request)
      if (Option.isNone(live)) return redirect(signInLocation(paths.account))
      const kind = Browser.field(form.right, "kind")
      const scopes = form.right.filter(([key]) => key === "scopes").map(([, value]) => value)
      const name = (Browser.field(form.right, "name") ?? "").trim()
      const hours = Number(Browser.field(form.right, "expiry_hours"))
      const days = Number(Browser.field(form.right, "expiry_days"))
      const values = {
        ...(name === "" ? {} : { name }),
        ...(kind === "short_lived" || kind === "personal_access_token" ? { kind: kind as Pages.TokenKindChoice } : {}),
        scopes,
        ...(Number.isFinite(hours) ? { expiry_hours: hours } : {}),
        ...(Number.isFinite(days) ? { expiry_days: days } : {})
      } as const
      const input = yield* Effect.either(decodeIssue({
        kind,
        scopes,
        ...(name === "" ? {} : { name }),
        ...(kind === "personal_access_token" ? { expiry_days: days } : { expiry_hours: hours })
      }))
      if (input._tag === "Left") {
        const issue = ParseResult.ArrayFormatter.formatErrorSync(input.left)[0]
        const field = String(issue?.path[0] ?? "form")
        return yield* accountPage(request, live.value, {
          status: 400,
          values,
          error: {
            field: (["name", "kind", "scopes", "expiry_hours", "expiry_days"].includes(field) ? field : "form") as Pages.FieldError<Pages.AccountField>["field"],
            message: field === "kind" ? "Choose the kind of token." : field === "scopes" ? "Choose at least one permission." : `Check ${field.replace("_", " ")}.`
          }
        })
      }
      const issued = yield* Effect.either(tokens.issue(live.value.user.id, input.right))
      if (issued._tag === "Right") {
        return yield* accountPage(request, live.value, {
          status: 201,
          issued: { token: issued.right.token, kind: issued.right.kind, expires_at: issued.right.expires_at }
        })
      }
      const failure = issued.left
      return yield* accountPage(request, live.value, {
        status: failure._tag === "PlanRequired" ? 402 : 400,
        values,
        error: failure._tag === "ValidationError"
          ? { field: (failure.field === "scopes" || failure.field === "expiry_days" || failure.field === "expiry_hours" ? failure.field : "form"), message: failure.message }
          : { field: "form", message: failure.message }
      })
    })

    const postDelete = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const form = yield* ownForm(request)
      if (Either.isLeft(form)) return form.left
      const live = yield* requireSession(request)
      if (Option.isNone(live)) return redirect(signInLocation(paths.account))
      const id = Schema.decodeUnknownOption(CredentialId)((yield* HttpRouter.params)["id"])
      if (Option.isSome(id)) {
        yield* tokens.revokeOwn({ workspace_id: live.value.user.workspace_id, user_id: live.value.user.id }, id.value).pipe(
          Effect.catchAll(() => Effect.void)
        )
      }
      return redirect(paths.account)
    })

    const stylesheet = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
      const headers = { etag: Stylesheet.etag, "cache-control": "no-cache", "x-content-type-options": "nosniff" }
      return request.headers["if-none-match"] === Stylesheet.etag
        ? HttpServerResponse.empty({ status: 304, headers })
        : HttpServerResponse.text(Stylesheet.css, { contentType: Stylesheet.contentType, headers })
    })

    yield* router.get(paths.authorize, routed(firstPartyAuthorize.getAuthorize))
    yield* router.post(paths.authorize, routed(firstPartyAuthorize.postAuthorize))
    yield* router.get(paths.partnerAuthorize, routed(partnerAuthorize.getAuthorize))
    yield* router.post(paths.partnerAuthorize, routed(partnerAuthorize.postAuthorize))
    yield* router.get(paths.stylesheet, routed(stylesheet))
    if (settings.signIn) {
      yield* router.get(paths.signIn, routed(getSignIn))
      yield* router.post(paths.signIn, routed(postSignIn))
      yield* router.post(paths.signOut, routed(postSignOut))
      yield* router.get(paths.account, routed(getAccount))
      yield* router.post(paths.issueToken, routed(postIssue))
      yield* router.post(paths.deleteToken, routed(postDelete))
    }
  }))
