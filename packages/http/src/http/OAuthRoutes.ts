/**
 * The OAuth endpoints that machines call, beside the contract (their bodies are forms and their answers RFC
 * 6749's `{error, error_description}`, not the API's envelope):
 * - POST /v1/oauth/token (authorization_code with PKCE, refresh_token), POST /v1/oauth/revoke (RFC 7009, with
 *   the signed-in session as `Authorization: Bearer <session token>` or the session cookie);
 * - the discovery document at /v1/oauth/.well-known/openid-configuration, and the same metadata with the
 *   registration endpoint at the gateway's /.well-known/oauth-authorization-server (also with the issuer's path
 *   appended, RFC 8414 3.1) and /.well-known/openid-configuration; the key set at /v1/oauth/.well-known/jwks.json;
 * - dynamic client registration (RFC 7591) at POST /v1/oauth/register and its management (RFC 7592) at
 *   GET/PUT/DELETE /v1/oauth/register/{client_id} with the registration access token.
 * - the partner OAuth server's token endpoint, POST /oauth2/token, where partner apps authenticate with HTTP Basic
 *   (client_secret_basic) or client_id and client_secret in the form (client_secret_post), and its metadata at
 *   /oauth2/.well-known/openid-configuration and /.well-known/oauth-authorization-server/oauth2 (RFC 8414 3.1).
 * Every answer that carries a token or a secret is `Cache-Control: no-store`.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import {
  type ClientAuthentication,
  AuthorizationServer,
  Clients,
  OAuthError,
  PartnerAuthorizationServer,
  Sessions,
  SigningKeys
} from "@convene/core"
import { Effect, Encoding, Either, Option } from "effect"
import type { HostConfig } from "../Config.js"
import { identityOf } from "../Config.js"
import { readForm, readJson } from "./Body.js"
import * as Browser from "./Browser.js"
import type { ExtraRoute } from "./Routes.js"

export const paths = {
  token: "/v1/oauth/token",
  revoke: "/v1/oauth/revoke",
  discovery: "/v1/oauth/.well-known/openid-configuration",
  jwks: "/v1/oauth/.well-known/jwks.json",
  register: "/v1/oauth/register",
  registration: "/v1/oauth/register/:client_id",
  gatewayAuthorizationServer: "/.well-known/oauth-authorization-server",
  gatewayAuthorizationServerForIssuer: "/.well-known/oauth-authorization-server/v1/oauth",
  gatewayOpenId: "/.well-known/openid-configuration",
  partnerToken: "/oauth2/token",
  partnerDiscovery: "/oauth2/.well-known/openid-configuration",
  partnerAuthorizationServer: "/.well-known/oauth-authorization-server/oauth2"
} as const

export const served: ReadonlyArray<ExtraRoute> = [
  { method: "POST", path: paths.token },
  { method: "POST", path: paths.revoke },
  { method: "GET", path: paths.discovery },
  { method: "GET", path: paths.jwks },
  { method: "POST", path: paths.register },
  { method: "GET", path: paths.registration },
  { method: "PUT", path: paths.registration },
  { method: "DELETE", path: paths.registration },
  { method: "GET", path: paths.gatewayAuthorizationServer },
  { method: "GET", path: paths.gatewayAuthorizationServerForIssuer },
  { method: "GET", path: paths.gatewayOpenId },
  { method: "POST", path: paths.partnerToken },
  { method: "GET", path: paths.partnerDiscovery },
  { method: "GET", path: paths.partnerAuthorizationServer }
]

const noStore = { "cache-control": "no-store", pragma: "no-cache" }

/** An OAuth error answer: 401 for a client or token that is not valid, 400 for the rest (RFC 6749 5.2). */
export const oauthFailure = (error: OAuthError, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson(
    { error: error.error, error_description: error.error_description },
    {
      status: error.error === "invalid_client" || error.error === "invalid_token" ? 401 : 400,
      headers: {
        ...noStore,
        ...(error.error === "invalid_token" ? { "www-authenticate": `Bearer error="invalid_token"` } : {}),
        ...headers
      }
    }
  )

/** The form of a request, or the OAuth error its body is (not a form, too large, not UTF-8). */
const formOf = (request: HttpServerRequest.HttpServerRequest) =>
  readForm(request).pipe(
    Effect.mapError((problem) =>
      OAuthError.of(
        "invalid_request",
        problem._tag === "UnsupportedMediaType"
          ? "the request body must be application/x-www-form-urlencoded"
          : problem._tag === "TooLarge"
          ? "the request body is too large"
          : problem._tag === "Malformed"
          ? problem.reason
          : "the request body ended early"
      )
    )
  )

/** The one value of a form field; a repeated field is invalid_request (RFC 6749 3.1, 3.2). */
const single = (form: ReadonlyArray<readonly [string, string]>, name: string) => {
  const values = form.filter(([key]) => key === name).map(([, value]) => value)
  if (values.length > 1) return Effect.fail(OAuthError.of("invalid_request", `${name} must be given once`))
  return Effect.succeed(values[0] === undefined || values[0] === "" ? undefined : values[0])
}

const required = (form: ReadonlyArray<readonly [string, string]>, name: string) =>
  Effect.flatMap(single(form, name), (value) =>
    value === undefined ? Effect.fail(OAuthError.of("invalid_request", `${name} is missing`)) : Effect.succeed(value))

type Form = ReadonlyArray<readonly [string, string]>

/** The challenge a 401 invalid_client of the partner token endpoint carries (RFC 6749 5.2). */
const basicChallenge = { "www-authenticate": `Basic realm="oauth2", charset="UTF-8"` }

/** RFC 6749 2.3.1: the client id and secret are form-urlencoded before they are joined and base64-encoded. */
const formDecode = (value: string) => {
  try {
    return decodeURIComponent(value.replace(/\+/g, " "))
  } catch {
    return undefined
  }
}

/**
 * How a partner app authenticates at /oauth2/token: HTTP Basic (`client_id:client_secret`), or client_id and
 * client_secret in the form; exactly one of the two (RFC 6749 2.3: a client uses one method per request).
 */
const confidentialClient = (request: HttpServerRequest.HttpServerRequest, form: Form) =>
  Effect.gen(function*() {
    const header = request.headers["authorization"]
    const formId = yield* single(form, "client_id")
    const formSecret = yield* single(form, "client_secret")
    if (header !== undefined && header.trim() !== "") {
      if (formSecret !== undefined) {
        return yield* Effect.fail(OAuthError.of("invalid_request", "send the client secret once: HTTP Basic or the form, not both"))
      }
      const match = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(header)
      const decoded = match === null ? undefined : Encoding.decodeBase64String(match[1]!)
      const text = decoded === undefined || Either.isLeft(decoded) ? undefined : decoded.right
      const colon = text === undefined ? -1 : text.indexOf(":")
      const clientId = colon === -1 ? undefined : formDecode(text!.slice(0, colon))
      const secret = colon === -1 ? undefined : formDecode(text!.slice(colon + 1))
      if (clientId === undefined || secret === undefined || clientId === "") {
        return yield* Effect.fail(
          OAuthError.of("invalid_client", "the Authorization header must be Basic base64(client_id:client_secret)")
        )
      }
      if (formId !== undefined && formId !== clientId) {
        return yield* Effect.fail(OAuthError.of("invalid_request", "client_id in the form is not the one of the Authorization header"))
      }
      return { method: "client_secret_basic", clientId, secret } satisfies ClientAuthentication
    }
    if (formId === undefined || formSecret === undefined) {
      return yield* Effect.fail(
        OAuthError.of(
          "invalid_client",
          "client authentication is required: HTTP Basic with the client id and secret, or client_id and client_secret in the form"
        )
      )
    }
    return { method: "client_secret_post", clientId: formId, secret: formSecret } satisfies ClientAuthentication
  })

/**
 * The token endpoint of one server (RFC 6749 3.2): the authorization_code and refresh_token grants, the client
 * authenticated as `clientOf` says (`undefined`: a first-party refresh that leaves the client unnamed).
 */
const tokenEndpoint = (
  server: AuthorizationServer["Type"],
  clientOf: (
    request: HttpServerRequest.HttpServerRequest,
    form: Form,
    grant: "authorization_code" | "refresh_token"
  ) => Effect.Effect<ClientAuthentication | undefined, OAuthError>,
  failureHeaders: (error: OAuthError) => Record<string, string> = () => ({})
) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const form = yield* formOf(request)
    const grantType = yield* required(form, "grant_type")
    switch (grantType) {
      case "authorization_code": {
        const client = yield* clientOf(request, form, grantType)
        const response = yield* server.exchangeCode({
          code: yield* required(form, "code"),
          code_verifier: yield* single(form, "code_verifier"),
          client: client!,
          redirect_uri: yield* required(form, "redirect_uri")
        })
        return HttpServerResponse.unsafeJson(response, { headers: noStore })
      }
      case "refresh_token": {
        const client = yield* clientOf(request, form, grantType)
        const response = yield* server.refresh({
          refresh_token: yield* required(form, "refresh_token"),
          client,
          scope: yield* single(form, "scope")
        })
        return HttpServerResponse.unsafeJson(response, { headers: noStore })
      }
      default:
        return yield* Effect.fail(
          OAuthError.of("unsupported_grant_type", "grant_type must be authorization_code or refresh_token")
        )
    }
  }).pipe(Effect.catchTag("OAuthError", (error) => Effect.succeed(oauthFailure(error, failureHeaders(error)))))

/**
 * The first-party clients are public: they name themselves with client_id (required with a code, optional on a
 * refresh) and prove nothing else (PKCE binds the code to them).
 */
const publicClient = (_request: HttpServerRequest.HttpServerRequest, form: Form, grant: "authorization_code" | "refresh_token") =>
  Effect.map(
    grant === "authorization_code" ? required(form, "client_id") : single(form, "client_id"),
    (clientId): ClientAuthentication | undefined => clientId === undefined ? undefined : { method: "none", clientId }
  )

export const layer = (config: HostConfig) =>
  HttpApiBuilder.Router.use(Effect.fnUntraced(function*(router) {
    const server = yield* AuthorizationServer
    const partnerServer = yield* PartnerAuthorizationServer
    const clients = yield* Clients
    const sessions = yield* Sessions
    const keys = yield* SigningKeys
    const identity = identityOf(config)
    const browser = Browser.settingsOf(config)

    const endpoints = {
      authorization_endpoint: `${identity.authUrl}/v1/oauth/authorize`,
      token_endpoint: `${config.baseUrl}${paths.token}`,
      revocation_endpoint: `${config.baseUrl}${paths.revoke}`,
      jwks_uri: `${config.baseUrl}${paths.jwks}`
    }
    const discovery = server.metadata(endpoints)
    const gateway = server.metadata({ ...endpoints, registration_endpoint: `${config.baseUrl}${paths.register}` })
    const publicJson = (body: unknown) =>
      HttpServerResponse.unsafeJson(body, { headers: { "cache-control": "public, max-age=300", "access-control-allow-origin": "*" } })

    const token = tokenEndpoint(server, publicClient)
    const partnerToken = tokenEndpoint(
      partnerServer,
      confidentialClient,
      (error): Record<string, string> => (error.error === "invalid_client" ? basicChallenge : {})
    )
    const partnerEndpoints = {
      authorization_endpoint: `${config.baseUrl}/oauth2/authorize`,
      token_endpoint: `${config.baseUrl}${paths.partnerToken}`,
      jwks_uri: `${config.baseUrl}${paths.jwks}`
    }
    const partnerDiscovery = partnerServer.metadata(partnerEndpoints)

    /** RFC 7009, with the signed-in session: always 200 once the session is known, whatever the token was. */
    const revoke = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const session = yield* Browser.sessionOfRequest(request, browser, sessions, { bearer: true })
      if (Option.isNone(session)) {
        return oauthFailure(
          OAuthError.of("invalid_token", "revocation needs the signed-in session: Authorization: Bearer <session token>")
        )
      }
      const form = yield* formOf(request)
      const presented = yield* required(form, "token")
      yield* single(form, "token_type_hint")
      yield* server.revoke(presented, session.value)
      return HttpServerResponse.empty({ status: 200, headers: noStore })
    }).pipe(Effect.catchTag("OAuthError", (error) => Effect.succeed(oauthFailure(error))))

    /** The registration access token of an RFC 7592 request (invalid_token when there is none). */
    const registrationToken = (request: HttpServerRequest.HttpServerRequest) => {
      const header = request.headers["authorization"] ?? ""
      const match = /^Bearer ([A-Za-z0-9_-]{1,200})$/.exec(header)
      return match === null
        ? Effect.fail(OAuthError.of("invalid_token", "the registration access token is missing: Authorization: Bearer <token>"))
        : Effect.succeed(match[1]!)
    }

    const jsonBody = (request: HttpServerRequest.HttpServerRequest) =>
      readJson(request).pipe(
        Effect.mapError(() => OAuthError.of("invalid_client_metadata", "the request body must be a JSON object (application/json)")),
        Effect.flatMap(({ value }) =>
          typeof value === "object" && value !== null && !Array.isArray(value)
            ? Effect.succeed(value as Record<string, unknown>)
            : Effect.fail(OAuthError.of("invalid_client_metadata", "the request body must be a JSON object"))
        )
      )

    const withLocation = (client: { readonly client_id: string }) => ({
      ...client,
      registration_client_uri: `${config.baseUrl}${paths.register}/${client.client_id}`
    })

    const register = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const registered = yield* clients.register(yield* jsonBody(request))
      return HttpServerResponse.unsafeJson(withLocation(registered), { status: 201, headers: noStore })
    }).pipe(Effect.catchTag("OAuthError", (error) => Effect.succeed(oauthFailure(error))))

    const management = (
      answer: (clientId: string, token: string, request: HttpServerRequest.HttpServerRequest) => Effect.Effect<HttpServerResponse.HttpServerResponse, OAuthError>
    ) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const params = yield* HttpRouter.params
        return yield* answer(params["client_id"] ?? "", yield* registrationToken(request), request)
      }).pipe(Effect.catchTag("OAuthError", (error) => Effect.succeed(oauthFailure(error))))

    yield* router.post(paths.token, token)
    yield* router.post(paths.partnerToken, partnerToken)
    yield* router.get(paths.partnerDiscovery, Effect.succeed(publicJson(partnerDiscovery)))
    yield* router.get(paths.partnerAuthorizationServer, Effect.succeed(publicJson(partnerDiscovery)))
    yield* router.post(paths.revoke, revoke)
    yield* router.get(paths.discovery, Effect.succeed(publicJson(discovery)))
    yield* router.get(paths.gatewayAuthorizationServer, Effect.succeed(publicJson(gateway)))
    yield* router.get(paths.gatewayAuthorizationServerForIssuer, Effect.succeed(publicJson(gateway)))
    yield* router.get(paths.gatewayOpenId, Effect.succeed(publicJson(gateway)))
    yield* router.get(paths.jwks, Effect.map(keys.jwks(), publicJson))
    yield* router.post(paths.register, register)
    yield* router.get(
      paths.registration,
      management((clientId, token) =>
        Effect.map(clients.read(clientId, token), (client) => HttpServerResponse.unsafeJson(withLocation(client), { headers: noStore })))
    )
    yield* router.put(
      paths.registration,
      management((clientId, token, request) =>
        Effect.flatMap(jsonBody(request), (body) => clients.update(clientId, token, body)).pipe(
          Effect.map((client) => HttpServerResponse.unsafeJson(withLocation(client), { headers: noStore }))
        ))
    )
    yield* router.del(
      paths.registration,
      management((clientId, token) => Effect.as(clients.remove(clientId, token), HttpServerResponse.empty({ status: 204 })))
    )
  }))
