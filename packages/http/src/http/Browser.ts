/**
 * What the browser-facing routes share: the session cookie, the CSRF defence of every form, and answering with
 * a page.
 *
 * - The session cookie holds the session token (decisions.md: "the session token is the value of the session
 *   cookie"): HttpOnly, SameSite=Lax, Path=/, for the session's lifetime; on an https auth URL it is also
 *   Secure and named with the `__Host-` prefix (so no subdomain can set or shadow it).
 * - CSRF: every form carries a random token that must equal the one in a second cookie (double submit; the
 *   cookie is SameSite=Strict and HttpOnly, so another site can neither send nor read it), compared in constant
 *   time; and a POST whose Origin header names another origin is refused outright.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Crypto, type LiveSession, sessionPolicy, type Sessions } from "@convene/core"
import { Effect, Encoding, Option } from "effect"
import { type HostConfig, identityOf } from "../Config.js"
import * as Pages from "../pages/Pages.js"
import { type BodyProblem, maxFormBytes } from "./Body.js"

export interface BrowserSettings {
  /** The origin of the pages (scheme, host, port of the auth URL). */
  readonly origin: string
  readonly secure: boolean
  readonly signIn: boolean
  readonly sessionCookie: string
  readonly csrfCookie: string
}

export const settingsOf = (config: HostConfig): BrowserSettings => {
  const identity = identityOf(config)
  const url = new URL(identity.authUrl)
  const secure = url.protocol === "https:"
  return {
    origin: url.origin,
    secure,
    signIn: identity.browserSignIn,
    sessionCookie: secure ? "__Host-convene_session" : "convene_session",
    csrfCookie: secure ? "__Host-convene_csrf" : "convene_csrf"
  }
}

/**
 * The signed-in session of a request: the session cookie, or (where `bearer` allows it: the revocation
 * endpoint) `Authorization: Bearer <session token>`.
 */
export const sessionOfRequest = (
  request: HttpServerRequest.HttpServerRequest,
  settings: BrowserSettings,
  sessions: Sessions["Type"],
  options: { readonly bearer: boolean } = { bearer: false }
): Effect.Effect<Option.Option<LiveSession>> => {
  const header = request.headers["authorization"]
  if (options.bearer && header !== undefined) {
    const match = /^Bearer (\S+)$/.exec(header)
    return match === null ? Effect.succeed(Option.none()) : sessions.resolve(match[1]!)
  }
  const token = request.cookies[settings.sessionCookie]
  return token === undefined ? Effect.succeed(Option.none()) : sessions.resolve(token)
}

export const setSession = (response: HttpServerResponse.HttpServerResponse, settings: BrowserSettings, token: string) =>
  HttpServerResponse.unsafeSetCookie(response, settings.sessionCookie, token, {
    httpOnly: true,
    sameSite: "lax",
    path: "/",
    secure: settings.secure,
    maxAge: sessionPolicy.lifetime
  })

export const clearSession = (response: HttpServerResponse.HttpServerResponse, settings: BrowserSettings) =>
  HttpServerResponse.unsafeSetCookie(response, settings.sessionCookie, "", {
    httpOnly: true,
    sameSite: "lax",
    path: "/",
    secure: settings.secure,
    maxAge: 0
  })

/** The request's CSRF token, or a new one (then `withCsrf` sets its cookie on the answer). */
export const csrfOf = (request: HttpServerRequest.HttpServerRequest, settings: BrowserSettings) =>
  Effect.gen(function*() {
    const existing = request.cookies[settings.csrfCookie]
    if (existing !== undefined && /^[A-Za-z0-9_-]{43}$/.test(existing)) return { token: existing, fresh: false }
    const crypto = yield* Crypto
    return { token: Encoding.encodeBase64Url(yield* crypto.randomBytes(32)), fresh: true }
  })

export const withCsrf = (
  response: HttpServerResponse.HttpServerResponse,
  settings: BrowserSettings,
  csrf: { readonly token: string; readonly fresh: boolean }
) =>
  csrf.fresh
    ? HttpServerResponse.unsafeSetCookie(response, settings.csrfCookie, csrf.token, {
      httpOnly: true,
      sameSite: "strict",
      path: "/",
      secure: settings.secure
    })
    : response

/**
 * Whether a form post is this site's own: the Origin header (sent by browsers on every POST) is absent or this
 * origin, and the form's `csrf` field equals the CSRF cookie.
 */
export const isOwnForm = (
  request: HttpServerRequest.HttpServerRequest,
  settings: BrowserSettings,
  form: ReadonlyArray<readonly [string, string]>
) =>
  Effect.gen(function*() {
    const origin = request.headers["origin"]
    if (origin !== undefined && origin !== settings.origin) return false
    const cookie = request.cookies[settings.csrfCookie]
    const fields = form.filter(([key]) => key === "csrf")
    if (cookie === undefined || fields.length !== 1) return false
    const crypto = yield* Crypto
    return crypto.timingSafeEqual(fields[0]![1], cookie)
  })

/** A page as the answer. */
export const page = (rendered: Pages.Page, extraHeaders: Record<string, string> = {}) =>
  HttpServerResponse.text(rendered.html, {
    status: rendered.status,
    contentType: Pages.contentType,
    headers: { ...Pages.headers(rendered), ...extraHeaders }
  })

/** The page for a form that is not this site's own (or whose CSRF cookie expired). */
export const forbiddenForm = page(
  Pages.error({
    status: 403,
    title: "This form cannot be used",
    message: "The form was sent from another site, or it is too old. Go back, reload the page and try again."
  })
)

/** The page for a body the browser routes cannot read: not a form (415), too large (413), broken (400). */
export const unreadableForm = (problem: BodyProblem) => {
  switch (problem._tag) {
    case "UnsupportedMediaType":
      return page(Pages.error({ status: 415, title: "Not a form", message: "This address takes a submitted HTML form." }))
    case "TooLarge":
      return page(
        Pages.error({ status: 413, title: "Too much data", message: `A form may carry at most ${maxFormBytes / 1024} KiB.` }),
        { connection: "close" }
      )
    case "Malformed":
    case "Aborted":
      return page(Pages.error({ status: 400, title: "Unreadable form", message: "The form could not be read. Go back and try again." }))
  }
}

/** A same-origin path to continue to after sign-in: a path on this server, never another site. */
export const continuePath = (requested: string | undefined, settings: BrowserSettings, fallback: string): string => {
  if (requested === undefined || requested === "") return fallback
  try {
    const url = new URL(requested, settings.origin)
    if (url.origin !== settings.origin) return fallback
    const path = url.pathname + url.search
    return path.startsWith("/") && !path.startsWith("//") && !path.startsWith("/\\") ? path : fallback
  } catch {
    return fallback
  }
}

/** The single value of a form field (the first, when repeated), or undefined. */
export const field = (form: ReadonlyArray<readonly [string, string]>, name: string): string | undefined =>
  form.find(([key]) => key === name)?.[1]

/** The client address a request came from (for the sign-in limit). */
export const addressOf = (request: HttpServerRequest.HttpServerRequest): string =>
  Option.getOrElse(request.remoteAddress, () => "unknown")
