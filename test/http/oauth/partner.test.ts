/**
 * The partner OAuth 2.0 server end to end (issue 12), as a partner app's server runs it with panva's oauth4webapi as
 * a confidential client (client_secret_basic, and client_secret_post): discovery at the RFC 8414 address, the
 * authorization request with `state` (PKCE with and without), browser sign-in and the consent page naming the app,
 * the workspace connected by approving, the code exchanged once, refresh-token rotation with replay detection, and
 * the user context reached with the token. Also every refusal of the document: invalid_client with WWW-Authenticate,
 * invalid_grant for a reused code, the redirect URI compared exactly, `state` required, the user context's
 * authentication codes, and the separation of partner tokens from the first-party API in both directions.
 */
import * as oauth from "oauth4webapi"
import { beforeAll, describe, expect, it } from "vitest"
import { client, OPERATOR_TOKEN } from "../../support/server.js"
import { partnerFlow } from "./partner-support.js"
import {
  browserRequest,
  CookieJar,
  expectOAuthError,
  hiddenField,
  me,
  newUser,
  post,
  read,
  useOAuthServer
} from "./support.js"

const server = useOAuthServer()
const { approve, authorizeUrl, createApp, insecure, redirectUri, signedInAuthorize, tokensFor, userGet, metadata } = partnerFlow(server)
let as: oauth.AuthorizationServer

beforeAll(async () => {
  as = await metadata()
})

describe("the partner authorization code flow", () => {
  it("publishes its metadata: the /oauth2 endpoints, confidential client methods, the partner scopes", async () => {
    const document = await fetch(`${server.url}/.well-known/oauth-authorization-server/oauth2`).then(read)
    expect(document.status).toBe(200)
    expect(document.body).toMatchObject({
      issuer: `${server.url}/oauth2`,
      authorization_endpoint: `${server.url}/oauth2/authorize`,
      token_endpoint: `${server.url}/oauth2/token`,
      token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
      code_challenge_methods_supported: ["S256"]
    })
    expect(document.body.scopes_supported).toEqual([
      "openid", "profile", "meetings:read", "meetings:write", "action-items:read", "action-items:write",
      "partner-api/workflows:read", "partner-api/workflows:write"
    ])
    const same = await fetch(`${server.url}/oauth2/.well-known/openid-configuration`).then(read)
    expect(same.body).toEqual(document.body)
  })

  it("runs end to end with client_secret_basic and PKCE: consent connects the workspace, the token reaches the user context", async () => {
    const user = await newUser(server.url, { role: "ADMIN" })
    const app = await createApp()
    const admin = { "x-api-key": app.api_key, "x-client-id": app.client_id }
    expect((await client(server.url).get("/v1/partner/admin/workspaces", admin)).body.total).toBe(0)

    const tokens = await tokensFor(user, app)
    expect(tokens.token_type).toBe("bearer")
    expect(tokens.expires_in).toBe(86400)
    expect(tokens.access_token).toMatch(/^svc_pua_v1_[A-Za-z0-9_-]{43}$/)
    expect(tokens.refresh_token).toMatch(/^svc_pur_v1_[A-Za-z0-9_-]{43}$/)
    expect(tokens.scope).toBe("openid profile meetings:read meetings:write")
    const claims = oauth.getValidatedIdTokenClaims(tokens)!
    expect(claims).toMatchObject({ iss: `${server.url}/oauth2`, sub: user.userId, aud: app.client_id, name: user.name, email: user.email })

    const connected = await client(server.url).get("/v1/partner/admin/workspaces", admin)
    expect(connected.body.items.map((item: { id: string }) => item.id)).toEqual([user.workspaceId])

    const meetings = await userGet("/meetings", tokens.access_token)
    expect(meetings.status).toBe(200)
    expect(meetings.body).toMatchObject({ items: [], total: 0, limit: 20, offset: 0 })
  })

  it("works without PKCE and with client_secret_post; a verifier sent without a challenge is refused", async () => {
    const user = await newUser(server.url)
    const app = await createApp()
    const state = oauth.generateRandomState()
    const appClient: oauth.Client = { client_id: app.client_id }
    const callback = await approve(user, app, { scope: "meetings:read", state })
    const params = oauth.validateAuthResponse(as, appClient, callback, state)
    const downgraded = await post(server.url, "/oauth2/token", new URLSearchParams({
      grant_type: "authorization_code",
      code: params.get("code")!,
      redirect_uri: redirectUri,
      code_verifier: oauth.generateRandomCodeVerifier(),
      client_id: app.client_id,
      client_secret: app.client_secret
    }))
    expectOAuthError(downgraded, 400, "invalid_grant")

    const again = await approve(user, app, { scope: "meetings:read", state })
    const fresh = oauth.validateAuthResponse(as, appClient, again, state)
    const response = await oauth.authorizationCodeGrantRequest(
      as, appClient, oauth.ClientSecretPost(app.client_secret), fresh, redirectUri, oauth.nopkce, insecure
    )
    const tokens = await oauth.processAuthorizationCodeResponse(as, appClient, response)
    expect(tokens.scope).toBe("meetings:read")
    expect((await userGet("/meetings", tokens.access_token)).status).toBe(200)
  })

  it("rotates refresh tokens; a replayed one is invalid_grant and revokes every token of the grant", async () => {
    const user = await newUser(server.url)
    const app = await createApp()
    const appClient: oauth.Client = { client_id: app.client_id }
    const first = await tokensFor(user, app, "meetings:read")
    const refreshed = await oauth.processRefreshTokenResponse(
      as, appClient,
      await oauth.refreshTokenGrantRequest(as, appClient, oauth.ClientSecretBasic(app.client_secret), first.refresh_token!, insecure)
    )
    expect(refreshed.refresh_token).not.toBe(first.refresh_token)
    expect((await userGet("/meetings", refreshed.access_token)).status).toBe(200)

    const replay = await post(server.url, "/oauth2/token", new URLSearchParams({ grant_type: "refresh_token", refresh_token: first.refresh_token! }), {
      "content-type": "application/x-www-form-urlencoded",
      authorization: `Basic ${btoa(`${app.client_id}:${app.client_secret}`)}`
    })
    expectOAuthError(replay, 400, "invalid_grant")
    const revoked = await userGet("/meetings", refreshed.access_token)
    expect({ status: revoked.status, code: revoked.body.code }).toEqual({ status: 401, code: "unauthorized" })
  })

  it("refuses a code used twice (invalid_grant) and revokes what its first use issued", async () => {
    const user = await newUser(server.url)
    const app = await createApp()
    const state = "s-1"
    const callback = await approve(user, app, { scope: "meetings:read", state })
    const form = new URLSearchParams({ grant_type: "authorization_code", code: callback.searchParams.get("code")!, redirect_uri: redirectUri })
    const basic = {
      "content-type": "application/x-www-form-urlencoded",
      authorization: `Basic ${btoa(`${app.client_id}:${app.client_secret}`)}`
    }
    const issued = await post(server.url, "/oauth2/token", form, basic)
    expect(issued.status).toBe(200)
    expectOAuthError(await post(server.url, "/oauth2/token", form, basic), 400, "invalid_grant")
    expect((await userGet("/meetings", issued.body.access_token)).status).toBe(401)
  })

  it("answers invalid_client 401 with a Basic challenge for a wrong secret, an unknown client or no authentication", async () => {
    const app = await createApp()
    const form = new URLSearchParams({ grant_type: "authorization_code", code: "x", redirect_uri: redirectUri })
    for (
      const authorization of [
        `Basic ${btoa(`${app.client_id}:svc_pcs_v1_wrong`)}`,
        `Basic ${btoa(`cvp_unknown:${app.client_secret}`)}`,
        "Basic not-base64!",
        undefined
      ]
    ) {
      const answer = await post(server.url, "/oauth2/token", form, {
        "content-type": "application/x-www-form-urlencoded",
        ...(authorization === undefined ? {} : { authorization })
      })
      expectOAuthError(answer, 401, "invalid_client")
      expect(answer.headers.get("www-authenticate")).toMatch(/^Basic realm=/)
    }
    // The secret sent twice (header and form) is invalid_request.
    const twice = await post(server.url, "/oauth2/token", new URLSearchParams({ ...Object.fromEntries(form), client_secret: app.client_secret }), {
      "content-type": "application/x-www-form-urlencoded",
      authorization: `Basic ${btoa(`${app.client_id}:${app.client_secret}`)}`
    })
    expectOAuthError(twice, 400, "invalid_request")
  })

  it("needs state, a registered redirect URI equal character for character, and known scopes", async () => {
    const user = await newUser(server.url)
    const app = await createApp()
    // Another port of the registered loopback URI: refused on the error page, never redirected to (before sign-in).
    const { jar } = await signedInAuthorize(user, authorizeUrl(app, { scope: "meetings:read", state: "s" }))
    const page = await browserRequest(
      server.url,
      jar,
      authorizeUrl(app, { scope: "meetings:read", state: "s", redirect_uri: "http://127.0.0.1:43119/partner/callback" })
    )
    expect(page.status).toBe(400)
    expect(page.location).toBeNull()
    expect(page.text).toContain("character for character")
    const noState = await browserRequest(server.url, jar, authorizeUrl(app, { scope: "meetings:read" }))
    expect(noState.status).toBe(302)
    const refused = new URL(noState.location!)
    expect(refused.origin + refused.pathname).toBe(redirectUri)
    expect(refused.searchParams.get("error")).toBe("invalid_request")
    const badScope = await browserRequest(server.url, jar, authorizeUrl(app, { scope: "workspace:read", state: "s" }))
    expect(new URL(badScope.location!).searchParams.get("error")).toBe("invalid_scope")
    // A first-party client is unknown to the partner server.
    const cli = await browserRequest(server.url, jar, `/oauth2/authorize?${new URLSearchParams({ response_type: "code", client_id: "convene-cli", redirect_uri: redirectUri, scope: "meetings:read", state: "s" })}`)
    expect(cli.status).toBe(400)
  })

  it("answers access_denied to the app when the user denies, and connects nothing", async () => {
    const user = await newUser(server.url)
    const app = await createApp()
    const { jar, page } = await signedInAuthorize(user, authorizeUrl(app, { scope: "meetings:read", state: "st" }))
    const answer = await browserRequest(server.url, jar, "/oauth2/authorize", {
      form: { csrf: hiddenField(page.text, "csrf"), request: hiddenField(page.text, "request"), decision: "deny" }
    })
    const location = new URL(answer.location!)
    expect(location.searchParams.get("error")).toBe("access_denied")
    expect(location.searchParams.get("state")).toBe("st")
    const listed = await client(server.url).get("/v1/partner/admin/workspaces", { "x-api-key": app.api_key, "x-client-id": app.client_id })
    expect(listed.body.total).toBe(0)
  })
})

describe("the user context's authentication", () => {
  it("answers the document's codes: missing_authorization, invalid_authorization_format, unauthorized", async () => {
    const none = await fetch(`${server.url}/v1/partner/user/meetings`).then(read)
    expect({ status: none.status, code: none.body.code }).toEqual({ status: 401, code: "missing_authorization" })
    expect(Object.keys(none.body).sort()).toEqual(["code", "error", "request_id"])
    for (const header of ["Basic abc", "Bearer", "svc_pua_v1_x", "Bearer a b"]) {
      const answer = await fetch(`${server.url}/v1/partner/user/meetings`, { headers: { authorization: header } }).then(read)
      expect({ status: answer.status, code: answer.body.code }, header).toEqual({ status: 401, code: "invalid_authorization_format" })
    }
    const unknown = await userGet("/meetings", `svc_pua_v1_${"A".repeat(43)}`)
    expect({ status: unknown.status, code: unknown.body.code }).toEqual({ status: 401, code: "unauthorized" })
  })

  it("keeps partner tokens and first-party tokens apart, in both directions, and the admin key apart from both", async () => {
    const user = await newUser(server.url, { role: "ADMIN" })
    const app = await createApp()
    const tokens = await tokensFor(user, app, "meetings:read")
    const onFirstParty = await me(server.url, tokens.access_token)
    expect({ status: onFirstParty.status, code: onFirstParty.body.code }).toEqual({ status: 401, code: "invalid_token" })
    const operator = client(server.url, OPERATOR_TOKEN)
    const issued = await operator.post(`/operator/v1/users/${user.userId}/tokens`, { kind: "personal_access_token", scopes: ["meetings:read"], expiry_days: 30 })
    expect(issued.status).toBe(201)
    const firstPartyHere = await userGet("/meetings", issued.body.token)
    expect({ status: firstPartyHere.status, code: firstPartyHere.body.code }).toEqual({ status: 401, code: "unauthorized" })
    const keyHere = await userGet("/meetings", app.api_key)
    expect({ status: keyHere.status, code: keyHere.body.code }).toEqual({ status: 401, code: "unauthorized" })
    const tokenAsAdmin = await client(server.url).get("/v1/partner/admin/app", { authorization: `Bearer ${tokens.access_token}` })
    expect({ status: tokenAsAdmin.status, code: tokenAsAdmin.body.code }).toEqual({ status: 401, code: "missing_api_key" })
  })

  it("answers insufficient_scope 403 for a route the token's scopes do not cover", async () => {
    const user = await newUser(server.url, { role: "ADMIN" })
    const app = await createApp()
    const tokens = await tokensFor(user, app, "meetings:read")
    const answer = await fetch(`${server.url}/v1/partner/user/backlog-items`, {
      method: "POST",
      headers: { authorization: `Bearer ${tokens.access_token}`, "content-type": "application/json" },
      body: JSON.stringify({ title: "Later" })
    }).then(read)
    expect({ status: answer.status, code: answer.body.code }, answer.text).toEqual({ status: 403, code: "insufficient_scope" })
    expect(Object.keys(answer.body).sort()).toEqual(["code", "error", "request_id"])
  })

  it("refuses a suspended app's tokens with partner_app_inactive, and its authorization requests and token requests", async () => {
    const user = await newUser(server.url)
    const app = await createApp()
    const tokens = await tokensFor(user, app, "meetings:read")
    const operator = client(server.url, OPERATOR_TOKEN)
    expect((await operator.patch(`/operator/v1/partner-apps/${app.id}`, { status: "suspended" })).status).toBe(200)
    const answer = await userGet("/meetings", tokens.access_token)
    expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 403, code: "partner_app_inactive" })
    const refresh = await post(server.url, "/oauth2/token", new URLSearchParams({ grant_type: "refresh_token", refresh_token: tokens.refresh_token! }), {
      "content-type": "application/x-www-form-urlencoded",
      authorization: `Basic ${btoa(`${app.client_id}:${app.client_secret}`)}`
    })
    expectOAuthError(refresh, 400, "unauthorized_client")
    const page = await browserRequest(server.url, new CookieJar(), authorizeUrl(app, { scope: "meetings:read", state: "s" }))
    expect(page.status).toBe(400)
    expect(page.text).toContain("suspended")
    await operator.patch(`/operator/v1/partner-apps/${app.id}`, { status: "active" })
    expect((await userGet("/meetings", tokens.access_token)).status).toBe(200)
  })
})
