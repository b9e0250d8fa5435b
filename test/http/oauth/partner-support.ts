/**
 * The partner OAuth flow as the tests drive it (test/http/oauth/partner.test.ts, test/http/partner-user.test.ts):
 * partner apps made through the operator API, the authorization request signed in and approved over HTTP as a
 * browser does it, and the code exchanged by oauth4webapi as a confidential client (client_secret_basic).
 */
import * as oauth from "oauth4webapi"
import { expect } from "vitest"
import { client, OPERATOR_TOKEN } from "../../support/server.js"
import { browserRequest, CookieJar, hiddenField, type PasswordUser, read, signIn } from "./support.js"

export interface App {
  readonly id: string
  readonly client_id: string
  readonly client_secret: string
  readonly api_key: string
  readonly name: string
}

/** The flow's helpers against the server `server` (its `url` read when called). */
export const partnerFlow = (server: { readonly url: string }) => {
  const insecure = { [oauth.allowInsecureRequests]: true } as const
  const redirectUri = "http://127.0.0.1:43118/partner/callback"
  let as: oauth.AuthorizationServer | undefined

  /** The server's metadata, discovered at the RFC 8414 address of the issuer `{base_url}/oauth2`. */
  const metadata = async () => {
    const issuer = new URL(`${server.url}/oauth2`)
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...insecure }))
    return as
  }

  const createApp = async (extra: Record<string, unknown> = {}): Promise<App> => {
    const name = `Acme Notes ${crypto.randomUUID().slice(0, 6)}`
    const created = await client(server.url, OPERATOR_TOKEN).post("/operator/v1/partner-apps", {
      name,
      redirect_uris: [redirectUri, "https://acme.example/oauth/callback"],
      ...extra
    })
    if (created.status !== 201) throw new Error(`app creation failed: ${created.status} ${created.text}`)
    return created.body
  }

  const authorizeUrl = (app: App, params: Record<string, string | undefined>) => {
    const query = new URLSearchParams()
    for (const [key, value] of Object.entries({ response_type: "code", client_id: app.client_id, redirect_uri: redirectUri, ...params })) {
      if (value !== undefined) query.set(key, value)
    }
    return `/oauth2/authorize?${query.toString()}`
  }

  /** Signs the user in and answers the page or redirect GET /oauth2/authorize gives then. */
  const signedInAuthorize = async (user: PasswordUser, path: string) => {
    const jar = new CookieJar()
    const first = await browserRequest(server.url, jar, path)
    expect(first.status).toBe(302)
    expect(first.location).toBe(`/signin?continue=${encodeURIComponent(path)}`)
    await signIn(server.url, user, { jar, continue: path })
    return { jar, page: await browserRequest(server.url, jar, path) }
  }

  /** Runs the flow to the callback: sign-in, the consent page (naming the app), Approve. Answers the callback URL. */
  const approve = async (user: PasswordUser, app: App, params: Record<string, string | undefined>) => {
    const { jar, page } = await signedInAuthorize(user, authorizeUrl(app, params))
    expect(page.status).toBe(200)
    expect(page.text).toContain(app.name)
    const answer = await browserRequest(server.url, jar, "/oauth2/authorize", {
      form: { csrf: hiddenField(page.text, "csrf"), request: hiddenField(page.text, "request"), decision: "approve" }
    })
    expect(answer.status).toBe(303)
    expect(answer.location?.startsWith(redirectUri)).toBe(true)
    return new URL(answer.location!)
  }

  /** A whole flow with oauth4webapi (PKCE, client_secret_basic): the token endpoint's validated answer. */
  const tokensFor = async (user: PasswordUser, app: App, scope = "openid profile meetings:read meetings:write") => {
    const server = as ?? (await metadata())
    const state = oauth.generateRandomState()
    const verifier = oauth.generateRandomCodeVerifier()
    const callback = await approve(user, app, {
      scope,
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256"
    })
    const appClient: oauth.Client = { client_id: app.client_id }
    const params = oauth.validateAuthResponse(server, appClient, callback, state)
    const response = await oauth.authorizationCodeGrantRequest(
      server, appClient, oauth.ClientSecretBasic(app.client_secret), params, redirectUri, verifier, insecure
    )
    return oauth.processAuthorizationCodeResponse(server, appClient, response)
  }

  /** GET of a user-context path with the token. */
  const userGet = (path: string, token: string) =>
    fetch(`${server.url}/v1/partner/user${path}`, { headers: { authorization: `Bearer ${token}` } }).then(read)

  return { approve, authorizeUrl, createApp, insecure, metadata, redirectUri, signedInAuthorize, tokensFor, userGet }
}
