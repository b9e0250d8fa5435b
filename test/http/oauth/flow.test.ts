/**
 * The first-party OAuth flow as a third-party program runs it, with panva's oauth4webapi (discovery, PKCE,
 * the authorization response, the token endpoint, the ID token's claims) and jose (the ID token's signature
 * against the server's jwks_uri). Sign-in is done with real HTTP requests, as a browser would: GET /signin for
 * the CSRF cookie and field, POST /signin, then authorize with the session cookie; the redirect to the loopback
 * callback is read from the Location header (no listener is needed).
 */
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from "jose"
import * as oauth from "oauth4webapi"
import { beforeAll, describe, expect, it } from "vitest"
import {
  authorizationCode,
  authorizeQuery,
  browserRequest,
  CookieJar,
  expectFormRedirect,
  hiddenField,
  me,
  newUser,
  type PasswordUser,
  pkce,
  post,
  read,
  SESSION_COOKIE,
  signIn,
  tokenRequest,
  useOAuthServer
} from "./support.js"

const server = useOAuthServer()

const cli: oauth.Client = { client_id: "convene-cli" }
const redirectUri = "http://127.0.0.1:43117/callback"
const scope = "openid meetings:read action-items:read"
/** The server is plain http on loopback: oauth4webapi refuses that unless told. */
const insecure = { [oauth.allowInsecureRequests]: true } as const

let as: oauth.AuthorizationServer

beforeAll(async () => {
  const issuer = new URL(`${server.url}/v1/oauth`)
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: "oidc", ...insecure }))
})

/** Signs `user` in over HTTP and runs authorize for convene-cli: the code's callback parameters, validated. */
const authorize = async (user: PasswordUser, values: Awaited<ReturnType<typeof pkce>>) => {
  const jar = new CookieJar()
  const query = authorizeQuery({ clientId: cli.client_id, redirectUri, scope, challenge: values.challenge, state: values.state, nonce: values.nonce })
  // A browser without a session is sent to the sign-in page, with the authorization request to continue to.
  const first = await browserRequest(server.url, jar, query)
  expect(first.status).toBe(302)
  expect(first.location).toBe(`/signin?continue=${encodeURIComponent(query)}`)
  const { response } = await signIn(server.url, user, { jar, continue: query })
  expectFormRedirect(response.status)
  expect(response.location).toBe(query)
  expect(jar.get(SESSION_COOKIE)).toMatch(/^svc_ses_v1_[A-Za-z0-9_-]{43}$/)
  // Signed in, a first-party client is approved without a consent page: 302 to the loopback callback.
  const back = await browserRequest(server.url, jar, response.location!)
  expect(back.status).toBe(302)
  const location = new URL(back.location!)
  expect(`${location.origin}${location.pathname}`).toBe(redirectUri)
  const params = oauth.validateAuthResponse(as, cli, location, values.state)
  return { params, jar, session: jar.get(SESSION_COOKIE)! }
}

const exchange = async (params: URLSearchParams, values: Awaited<ReturnType<typeof pkce>>) =>
  oauth.processAuthorizationCodeResponse(
    as,
    cli,
    await oauth.authorizationCodeGrantRequest(as, cli, oauth.None(), params, redirectUri, values.verifier, insecure),
    { expectedNonce: values.nonce, requireIdToken: true }
  )

/** The ResponseBodyError an oauth4webapi call fails with. */
const bodyError = async (promise: Promise<unknown>) => {
  const error = await promise.then(() => undefined, (error: unknown) => error)
  expect(error).toBeInstanceOf(oauth.ResponseBodyError)
  return error as oauth.ResponseBodyError
}

describe("discovery", () => {
  it("is the issuer {url}/v1/oauth for oauth4webapi's OpenID Connect discovery, with endpoints on this server", () => {
    expect(as.issuer).toBe(`${server.url}/v1/oauth`)
    expect(as.authorization_endpoint).toBe(`${server.url}/v1/oauth/authorize`)
    expect(as.token_endpoint).toBe(`${server.url}/v1/oauth/token`)
    expect(as.revocation_endpoint).toBe(`${server.url}/v1/oauth/revoke`)
    expect(as.jwks_uri).toBe(`${server.url}/v1/oauth/.well-known/jwks.json`)
    expect(as.code_challenge_methods_supported).toEqual(["S256"])
    expect(as.authorization_response_iss_parameter_supported).toBe(true)
  })

  it("publishes an RS256 key set that jose reads", async () => {
    const response = await fetch(as.jwks_uri!)
    expect(response.status).toBe(200)
    const { keys } = await response.json() as { keys: ReadonlyArray<Record<string, unknown>> }
    expect(keys.length).toBeGreaterThan(0)
    for (const key of keys) {
      expect(key).toMatchObject({ kty: "RSA", alg: "RS256", use: "sig" })
      expect(typeof key.kid).toBe("string")
      // Public keys only.
      expect(Object.keys(key)).not.toContain("d")
    }
  })
})

describe("authorization code with PKCE, as oauth4webapi runs it", () => {
  it("signs in, gets a code with state and iss, exchanges it for tokens and a signed ID token, and calls /v1/me", async () => {
    const user = await newUser(server.url)
    const values = await pkce()
    const { params } = await authorize(user, values)
    expect(params.get("iss")).toBe(as.issuer)
    expect(params.get("code")).toMatch(/^[A-Za-z0-9_-]{43}$/)

    const tokens = await exchange(params, values)
    expect(tokens.token_type).toBe("bearer")
    expect(tokens.expires_in).toBe(3600)
    expect(tokens.access_token).toMatch(/^svc_at_v1_/)
    expect(tokens.refresh_token).toMatch(/^svc_rt_v1_/)
    expect(tokens.scope?.split(" ").sort()).toEqual(["action-items:read", "meetings:read", "openid"])

    // oauth4webapi checked the ID token's claims (iss, aud, exp, iat, nonce); jose checks its signature.
    const claims = oauth.getValidatedIdTokenClaims(tokens)!
    expect(claims).toMatchObject({ iss: as.issuer, sub: user.userId, aud: "convene-cli", nonce: values.nonce })
    const jwks = createRemoteJWKSet(new URL(as.jwks_uri!))
    const verified = await jwtVerify(tokens.id_token!, jwks, { issuer: as.issuer, audience: "convene-cli", algorithms: ["RS256"] })
    expect(verified.payload.sub).toBe(user.userId)
    expect(verified.protectedHeader.alg).toBe("RS256")
    expect(typeof decodeProtectedHeader(tokens.id_token!).kid).toBe("string")
    // A forged signature is refused by the key set (so the check above can fail).
    const [header, payload] = tokens.id_token!.split(".")
    const forged = `${header}.${payload}.${Buffer.from("not the signature").toString("base64url")}`
    await expect(jwtVerify(forged, jwks)).rejects.toThrow()

    const identity = await me(server.url, tokens.access_token)
    expect(identity.status).toBe(200)
    expect(identity.body).toEqual({ id: user.userId, email: user.email, name: user.name, workspace_id: user.workspaceId, role: user.role })
    // Introspection names the client the access token was issued to, and the scopes granted (never `openid`).
    const introspected = await fetch(`${server.url}/v1/auth/introspect`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    expect(await introspected.json()).toMatchObject({
      active: true,
      kind: "access_token",
      client_id: "convene-cli",
      user_id: user.userId,
      scopes: tokens.scope!.split(" ").filter((scope) => scope !== "openid")
    })
  })

  it("rotates the refresh token; replaying the old one is invalid_grant and revokes the whole chain", async () => {
    const user = await newUser(server.url)
    const values = await pkce()
    const { params } = await authorize(user, values)
    const first = await exchange(params, values)

    const second = await oauth.processRefreshTokenResponse(
      as,
      cli,
      await oauth.refreshTokenGrantRequest(as, cli, oauth.None(), first.refresh_token!, insecure)
    )
    expect(second.access_token).toMatch(/^svc_at_v1_/)
    expect(second.refresh_token).toMatch(/^svc_rt_v1_/)
    expect(second.access_token).not.toBe(first.access_token)
    expect(second.refresh_token).not.toBe(first.refresh_token)
    expect(second.expires_in).toBe(3600)
    expect(second.scope?.split(" ").sort()).toEqual(["action-items:read", "meetings:read", "openid"])
    expect((await me(server.url, second.access_token)).status).toBe(200)

    // The rotated-out refresh token, presented again: someone else may hold it.
    const replay = await bodyError(
      oauth.processRefreshTokenResponse(as, cli, await oauth.refreshTokenGrantRequest(as, cli, oauth.None(), first.refresh_token!, insecure))
    )
    expect(replay.error).toBe("invalid_grant")
    expect(replay.status).toBe(400)
    // ...and every token of the chain stops working, the newest included.
    expect((await me(server.url, second.access_token)).status).toBe(401)
    expect((await me(server.url, first.access_token)).status).toBe(401)
    const newest = await bodyError(
      oauth.processRefreshTokenResponse(as, cli, await oauth.refreshTokenGrantRequest(as, cli, oauth.None(), second.refresh_token!, insecure))
    )
    expect(newest.error).toBe("invalid_grant")
  })
})

describe("revocation with the signed-in session", () => {
  it("revokes a fresh chain with the session token as Authorization: Bearer", async () => {
    const user = await newUser(server.url)
    const values = await pkce()
    const { params, session } = await authorize(user, values)
    const tokens = await exchange(params, values)
    expect((await me(server.url, tokens.access_token)).status).toBe(200)

    // oauth4webapi keeps the Authorization header to itself (client authentication): the session goes in
    // through its fetch hook, as a program holding a session would send it.
    const revoked = await oauth.revocationRequest(as, cli, oauth.None(), tokens.refresh_token!, {
      ...insecure,
      additionalParameters: { token_type_hint: "refresh_token" },
      [oauth.customFetch]: (url, init) => {
        const headers = new Headers(init.headers)
        headers.set("authorization", `Bearer ${session}`)
        return fetch(url, { ...init, headers })
      }
    })
    expect(revoked.status).toBe(200)
    await oauth.processRevocationResponse(revoked)
    expect(revoked.headers.get("cache-control")).toBe("no-store")

    // The refresh token named the chain: its access token is revoked with it.
    expect((await me(server.url, tokens.access_token)).status).toBe(401)
    const refresh = await tokenRequest(server.url, { grant_type: "refresh_token", refresh_token: tokens.refresh_token! })
    expect({ status: refresh.status, error: refresh.body.error }).toEqual({ status: 400, error: "invalid_grant" })
  })

  it("revokes by the access token too, and answers 200 for a token it does not know", async () => {
    const user = await newUser(server.url)
    const values = await pkce()
    const { params, session } = await authorize(user, values)
    const tokens = await exchange(params, values)
    const bearer = { "content-type": "application/x-www-form-urlencoded", authorization: `Bearer ${session}` }

    const unknown = await post(server.url, "/v1/oauth/revoke", new URLSearchParams({ token: "svc_at_v1_" + "A".repeat(43) }), bearer)
    expect(unknown.status).toBe(200)
    const garbage = await post(server.url, "/v1/oauth/revoke", new URLSearchParams({ token: "not a token at all" }), bearer)
    expect(garbage.status).toBe(200)
    expect((await me(server.url, tokens.access_token)).status).toBe(200)

    const byAccess = await post(server.url, "/v1/oauth/revoke", new URLSearchParams({ token: tokens.access_token }), bearer)
    expect(byAccess.status).toBe(200)
    expect((await me(server.url, tokens.access_token)).status).toBe(401)
    const refresh = await tokenRequest(server.url, { grant_type: "refresh_token", refresh_token: tokens.refresh_token! })
    expect(refresh.body.error).toBe("invalid_grant")
  })

  it("answers 401 invalid_token without a session, and changes nothing", async () => {
    const user = await newUser(server.url)
    const values = await pkce()
    const { params } = await authorize(user, values)
    const tokens = await exchange(params, values)
    const form = new URLSearchParams({ token: tokens.access_token })

    for (
      const headers of [
        { "content-type": "application/x-www-form-urlencoded" },
        { "content-type": "application/x-www-form-urlencoded", authorization: "Bearer svc_ses_v1_" + "A".repeat(43) },
        // An access token is not a session.
        { "content-type": "application/x-www-form-urlencoded", authorization: `Bearer ${tokens.access_token}` }
      ]
    ) {
      const answer = await post(server.url, "/v1/oauth/revoke", form, headers)
      expect(answer.status).toBe(401)
      expect(answer.body).toMatchObject({ error: "invalid_token" })
      expect(answer.headers.get("www-authenticate")).toMatch(/^Bearer\b/)
    }
    expect((await me(server.url, tokens.access_token)).status).toBe(200)
  })

  it("does not revoke another user's tokens (the answer is 200 all the same)", async () => {
    const owner = await newUser(server.url)
    const values = await pkce()
    const { params } = await authorize(owner, values)
    const tokens = await exchange(params, values)
    const stranger = await newUser(server.url)
    const { jar } = await signIn(server.url, stranger)

    const answer = await post(server.url, "/v1/oauth/revoke", new URLSearchParams({ token: tokens.refresh_token! }), {
      "content-type": "application/x-www-form-urlencoded",
      authorization: `Bearer ${jar.get(SESSION_COOKIE)}`
    })
    expect(answer.status).toBe(200)
    expect((await me(server.url, tokens.access_token)).status).toBe(200)
  })

  it("takes the session cookie instead of the Authorization header", async () => {
    const user = await newUser(server.url)
    const values = await pkce()
    const { params, jar } = await authorize(user, values)
    const tokens = await exchange(params, values)
    const answer = await post(server.url, "/v1/oauth/revoke", new URLSearchParams({ token: tokens.refresh_token! }), {
      "content-type": "application/x-www-form-urlencoded",
      cookie: jar.header()
    })
    expect(answer.status).toBe(200)
    expect((await me(server.url, tokens.access_token)).status).toBe(401)
  })
})

describe("the authorization request without openid", () => {
  it("issues no ID token, and the code is bound to the first-party client's loopback URI on any port", async () => {
    const user = await newUser(server.url)
    const { jar } = await signIn(server.url, user)
    const values = await pkce()
    const otherPort = "http://localhost:51234/cb"
    const { code, params } = await authorizationCode(server.url, jar, {
      clientId: "convene-cli",
      redirectUri: otherPort,
      scope: "meetings:read",
      challenge: values.challenge,
      state: values.state
    })
    expect(params.get("state")).toBe(values.state)
    const answer = await tokenRequest(server.url, {
      grant_type: "authorization_code",
      code,
      code_verifier: values.verifier,
      client_id: "convene-cli",
      redirect_uri: otherPort
    })
    expect(answer.status).toBe(200)
    expect(answer.body.scope).toBe("meetings:read")
    expect(answer.body).not.toHaveProperty("id_token")
    expect(Object.keys(answer.body).sort()).toEqual(["access_token", "expires_in", "refresh_token", "scope", "token_type"])
    expect(answer.headers.get("cache-control")).toBe("no-store")
  })
})

describe("the account page's forms, over HTTP as a browser posts them", () => {
  it("issues a personal access token (shown once), lists it, and deletes it: it stops working at once", async () => {
    const user = await newUser(server.url, { plan: "PRO" })
    const { jar } = await signIn(server.url, user)
    const account = await browserRequest(server.url, jar, "/account")
    expect(account.status).toBe(200)
    const csrf = hiddenField(account.text, "csrf")

    const issued = await browserRequest(server.url, jar, "/account/tokens", {
      form: new URLSearchParams([
        ["csrf", csrf],
        ["name", "CI pipeline"],
        ["kind", "personal_access_token"],
        ["scopes", "meetings:read"],
        ["scopes", "action-items:read"],
        ["expiry_hours", "1"],
        ["expiry_days", "30"]
      ])
    })
    expect(issued.status).toBe(201)
    expect(issued.headers.get("cache-control")).toBe("no-store")
    const token = /<input id="issued-token" type="text" readonly value="([^"]+)"/.exec(issued.text)?.[1]
    expect(token).toMatch(/^svc_pat_v1_/)
    expect(issued.text.split(token!).length - 1).toBe(1)

    const identity = await me(server.url, token!)
    expect(identity.status).toBe(200)
    expect(identity.body.email).toBe(user.email)
    const introspected = await read(await fetch(`${server.url}/v1/auth/introspect`, { headers: { authorization: `Bearer ${token}` } }))
    expect(introspected.body).toMatchObject({ kind: "personal_access_token", scopes: ["meetings:read", "action-items:read"] })
    expect(Math.abs(Date.parse(introspected.body.expires_at) - (Date.now() + 30 * 86_400_000))).toBeLessThan(120_000)

    // The page opened again lists it by name, never its value, with a delete form.
    const listed = await browserRequest(server.url, jar, "/account")
    expect(listed.text).not.toContain(token!)
    expect(listed.text).toContain("CI pipeline")
    const deleteAction = /<form method="post" action="(\/account\/tokens\/[^"]+\/delete)">/.exec(listed.text)?.[1]
    expect(deleteAction).toBeDefined()
    const deleted = await browserRequest(server.url, jar, deleteAction!, { form: { csrf: hiddenField(listed.text, "csrf") } })
    expectFormRedirect(deleted.status)
    expect(deleted.location).toBe("/account")
    expect((await me(server.url, token!)).status).toBe(401)
    expect((await browserRequest(server.url, jar, "/account")).text).not.toContain("CI pipeline")
  })
})
