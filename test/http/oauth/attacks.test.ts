/**
 * The OAuth endpoints and the sign-in form under attack: bad input as an attacker sends it. Every refusal is
 * checked for its status and its RFC 6749 body `{error, error_description}` (never a 500, never a redirect to a
 * URI the client did not register); codes and refresh tokens are single-use and bound to their client,
 * redirect URI and verifier; registration refuses dangerous redirect URIs and workspace scopes; password
 * guessing is throttled; the cookies carry the attributes that keep them to this site; the discovery documents
 * say exactly what the spec lists.
 */
import { FastCheck as fc } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import {
  type Answer,
  authorizationCode,
  authorizeQuery,
  browserRequest,
  CookieJar,
  CSRF_COOKIE,
  expectFormRedirect,
  expectOAuthError,
  hiddenField,
  me,
  newUser,
  pkce,
  post,
  read,
  registerClient,
  SESSION_COOKIE,
  signIn,
  tokenRequest,
  useOAuthServer
} from "./support.js"
import { client, OPERATOR_TOKEN } from "../../support/server.js"

const server = useOAuthServer()

const loopback = "http://127.0.0.1:43117/callback"
const SCOPES = ["meetings:read", "meetings:write", "action-items:read", "action-items:write", "calendar:read", "workspace:read", "workspace:write"]

/** A signed-in jar of a new user, shared by the tests that need codes. */
let jar: CookieJar
/** A registered client with the same loopback redirect URI as the one convene-cli's codes go to. */
let registered: Awaited<ReturnType<typeof registerClient>>

beforeAll(async () => {
  const user = await newUser(server.url)
  jar = (await signIn(server.url, user)).jar
  registered = await registerClient(server.url, { client_name: "Registered", redirect_uris: [loopback, "https://app.example.com/cb"] })
})

/** A fresh code of convene-cli for the loopback URI, and its verifier. */
const cliCode = async () => {
  const values = await pkce()
  const { code } = await authorizationCode(server.url, jar, { clientId: "convene-cli", redirectUri: loopback, scope: "meetings:read", challenge: values.challenge })
  return { code, verifier: values.verifier }
}

const codeForm = (code: string, verifier: string, overrides: Record<string, string> = {}) => ({
  grant_type: "authorization_code",
  code,
  code_verifier: verifier,
  client_id: "convene-cli",
  redirect_uri: loopback,
  ...overrides
})

const form = { "content-type": "application/x-www-form-urlencoded" }

describe("the token endpoint refuses malformed requests", () => {
  it("answers a JSON body with 400 invalid_request, even one with every field right", async () => {
    const { code, verifier } = await cliCode()
    const answer = await post(server.url, "/v1/oauth/token", JSON.stringify(codeForm(code, verifier)), { "content-type": "application/json" })
    expectOAuthError(answer, 400, "invalid_request")
    expect(answer.body.error_description).toContain("application/x-www-form-urlencoded")
    // The code was not spent: the proper form still exchanges it.
    expect((await tokenRequest(server.url, codeForm(code, verifier))).status).toBe(200)
  })

  it("answers a body of another or no content type with 400 invalid_request", async () => {
    const body = new URLSearchParams({ grant_type: "refresh_token", refresh_token: "x" }).toString()
    for (const headers of [{ "content-type": "text/plain" }, { "content-type": "multipart/form-data; boundary=x" }, {}, { "content-type": "application/x-www-form-urlencoded; charset=latin1" }]) {
      expectOAuthError(await post(server.url, "/v1/oauth/token", body, headers), 400, "invalid_request")
    }
  })

  it("answers a missing grant_type with 400 invalid_request", async () => {
    expectOAuthError(await tokenRequest(server.url, {}), 400, "invalid_request")
    expectOAuthError(await tokenRequest(server.url, { code: "abc", client_id: "convene-cli" }), 400, "invalid_request")
    expectOAuthError(await tokenRequest(server.url, { grant_type: "" }), 400, "invalid_request")
  })

  it("answers an unknown grant_type with 400 unsupported_grant_type", async () => {
    for (const grantType of ["password", "client_credentials", "implicit", "urn:ietf:params:oauth:grant-type:device_code", "AUTHORIZATION_CODE", "authorization_code "]) {
      const answer = await tokenRequest(server.url, { grant_type: grantType, username: "a", password: "b" })
      expectOAuthError(answer, 400, "unsupported_grant_type")
    }
  })

  it("answers a repeated parameter with 400 invalid_request (RFC 6749 3.2)", async () => {
    const { code, verifier } = await cliCode()
    const base = Object.entries(codeForm(code, verifier))
    for (const name of ["grant_type", "code", "code_verifier", "client_id", "redirect_uri"]) {
      const repeated = [...base, [name, base.find(([key]) => key === name)![1]] as const]
      const answer = await tokenRequest(server.url, repeated)
      expectOAuthError(answer, 400, "invalid_request")
      expect(answer.body.error_description).toContain(name)
    }
    expectOAuthError(
      await tokenRequest(server.url, [["grant_type", "refresh_token"], ["refresh_token", "a"], ["refresh_token", "b"]]),
      400,
      "invalid_request"
    )
  })

  it("answers a 100 kB body with 400 invalid_request, sent whole or chunked, and keeps serving", async () => {
    const big = `grant_type=authorization_code&code=${"A".repeat(100 * 1024)}`
    expectOAuthError(await post(server.url, "/v1/oauth/token", big), 400, "invalid_request")
    const bytes = new TextEncoder().encode(big)
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let offset = 0; offset < bytes.length; offset += 8 * 1024) controller.enqueue(bytes.slice(offset, offset + 8 * 1024))
        controller.close()
      }
    })
    expectOAuthError(await post(server.url, "/v1/oauth/token", chunked), 400, "invalid_request")
    expectOAuthError(await tokenRequest(server.url, { grant_type: "password" }), 400, "unsupported_grant_type")
  })

  it("answers a body that is not UTF-8 with 400 invalid_request", async () => {
    const prefix = new TextEncoder().encode("grant_type=authorization_code&code=")
    for (const tail of [[0xff, 0xfe], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xe2, 0x82]]) {
      const answer = await post(server.url, "/v1/oauth/token", new Uint8Array([...prefix, ...tail]))
      expectOAuthError(answer, 400, "invalid_request")
    }
  })

  it("answers each missing parameter of authorization_code with 400 invalid_request", async () => {
    const { code, verifier } = await cliCode()
    for (const name of ["code", "code_verifier", "client_id", "redirect_uri"]) {
      const fields = Object.entries(codeForm(code, verifier)).filter(([key]) => key !== name)
      const answer = await tokenRequest(server.url, fields)
      expectOAuthError(answer, 400, "invalid_request")
      expect(answer.body.error_description).toContain(name)
    }
  })
})

describe("codes are bound and single-use", () => {
  it("refuses a code presented by another client (400 invalid_grant)", async () => {
    const { code, verifier } = await cliCode()
    expectOAuthError(await tokenRequest(server.url, codeForm(code, verifier, { client_id: registered.client_id })), 400, "invalid_grant")
  })

  it("refuses an unknown client with 401 invalid_client", async () => {
    const { code, verifier } = await cliCode()
    expectOAuthError(await tokenRequest(server.url, codeForm(code, verifier, { client_id: "cvr_nobody" })), 401, "invalid_client")
  })

  it("refuses a redirect_uri other than the authorization request's (400 invalid_grant)", async () => {
    const { code, verifier } = await cliCode()
    for (const redirectUri of ["http://127.0.0.1:43118/callback", "http://127.0.0.1:43117/callback/", "http://localhost:43117/callback", "https://evil.example/callback"]) {
      expectOAuthError(await tokenRequest(server.url, codeForm(code, verifier, { redirect_uri: redirectUri })), 400, "invalid_grant")
    }
  })

  it("refuses a wrong code_verifier (invalid_grant) and a malformed one (invalid_request)", async () => {
    const { code } = await cliCode()
    const other = await pkce()
    expectOAuthError(await tokenRequest(server.url, codeForm(code, other.verifier)), 400, "invalid_grant")
    for (const verifier of ["short", "A".repeat(129), `${"A".repeat(42)} `, "é".repeat(43)]) {
      expectOAuthError(await tokenRequest(server.url, codeForm(code, verifier)), 400, "invalid_request")
    }
  })

  it("refuses a reused code, and the tokens of its first exchange stop working", async () => {
    const { code, verifier } = await cliCode()
    const first = await tokenRequest(server.url, codeForm(code, verifier))
    expect(first.status).toBe(200)
    expect((await me(server.url, first.body.access_token)).status).toBe(200)

    expectOAuthError(await tokenRequest(server.url, codeForm(code, verifier)), 400, "invalid_grant")
    expect((await me(server.url, first.body.access_token)).status).toBe(401)
    expectOAuthError(await tokenRequest(server.url, { grant_type: "refresh_token", refresh_token: first.body.refresh_token }), 400, "invalid_grant")
  })

  it("refuses codes that are garbage or look expired (400 invalid_grant)", async () => {
    const { verifier } = await cliCode()
    for (const code of ["A".repeat(43), "expired", "x".repeat(2000), "' OR 1=1 --", "\u0000", "💥".repeat(20), "svc_at_v1_" + "A".repeat(43)]) {
      expectOAuthError(await tokenRequest(server.url, codeForm(code, verifier)), 400, "invalid_grant")
    }
  })

  it("refuses refresh tokens that are garbage, another kind of token, or for another client", async () => {
    const { code, verifier } = await cliCode()
    const tokens = (await tokenRequest(server.url, codeForm(code, verifier))).body
    for (const refreshToken of ["garbage", "svc_rt_v1_" + "A".repeat(43), tokens.access_token, "svc_rt_v1_" + "A".repeat(43) + "=="]) {
      expectOAuthError(await tokenRequest(server.url, { grant_type: "refresh_token", refresh_token: refreshToken }), 400, "invalid_grant")
    }
    expectOAuthError(
      await tokenRequest(server.url, { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: registered.client_id }),
      400,
      "invalid_grant"
    )
    // A scope the grant does not hold.
    expectOAuthError(
      await tokenRequest(server.url, { grant_type: "refresh_token", refresh_token: tokens.refresh_token, scope: "meetings:write" }),
      400,
      "invalid_scope"
    )
    // None of these spent the refresh token.
    expect((await tokenRequest(server.url, { grant_type: "refresh_token", refresh_token: tokens.refresh_token })).status).toBe(200)
  })

  it("answers any form an attacker makes up with a 400 or 401 OAuth error, never a 500 (property)", async () => {
    const { code, verifier } = await cliCode()
    const name = fc.constantFrom("grant_type", "code", "code_verifier", "client_id", "redirect_uri", "refresh_token", "scope", "state", "x")
    const value = fc.oneof(
      fc.constantFrom("authorization_code", "refresh_token", "convene-cli", registered.client_id, loopback, code, verifier, "", "openid meetings:read"),
      fc.string({ maxLength: 60 }),
      fc.string({ unit: "binary", maxLength: 30 })
    )
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(name, value), { maxLength: 8 }), async (fields) => {
        const answer = await tokenRequest(server.url, fields)
        // The one made-up form that is a valid request: the real code with everything right.
        if (answer.status === 200) return
        expect([400, 401]).toContain(answer.status)
        expect(Object.keys(answer.body).sort()).toEqual(["error", "error_description"])
        expect(["invalid_request", "invalid_client", "invalid_grant", "unsupported_grant_type", "invalid_scope"]).toContain(answer.body.error)
      }),
      { numRuns: 100 }
    )
  })
})

/** GET /authorize as a browser: the answer and whether it left for somewhere. */
const authorizeAnswer = (query: string, signedIn = true) => browserRequest(server.url, signedIn ? jar : new CookieJar(), `/v1/oauth/authorize?${query}`)

const expectErrorPage = (answer: Awaited<ReturnType<typeof authorizeAnswer>>) => {
  expect({ status: answer.status, location: answer.location }).toEqual({ status: 400, location: null })
  expect(answer.headers.get("content-type")).toBe("text/html; charset=utf-8")
  expect(answer.headers.get("content-security-policy")).toContain("default-src 'none'")
  expect(answer.text).toContain("This sign-in link cannot be used")
}

describe("authorize never redirects to an untrusted URI", () => {
  const params = async (overrides: Record<string, string>) => {
    const values = await pkce()
    return new URLSearchParams({
      response_type: "code",
      client_id: "convene-cli",
      redirect_uri: loopback,
      scope: "meetings:read",
      code_challenge: values.challenge,
      code_challenge_method: "S256",
      state: "st",
      ...overrides
    })
  }

  it("answers an unknown, missing or repeated client_id with a 400 page and no Location", async () => {
    for (const signedIn of [true, false]) {
      expectErrorPage(await authorizeAnswer((await params({ client_id: "cvr_unknown", redirect_uri: "https://evil.example/cb" })).toString(), signedIn))
      const missing = await params({})
      missing.delete("client_id")
      expectErrorPage(await authorizeAnswer(missing.toString(), signedIn))
      const repeated = await params({})
      repeated.append("client_id", registered.client_id)
      expectErrorPage(await authorizeAnswer(repeated.toString(), signedIn))
    }
  })

  it("answers a redirect_uri the registered client did not register with a 400 page and no Location", async () => {
    for (
      const redirectUri of [
        "https://evil.example/cb",
        "https://app.example.com/cb/",
        "https://app.example.com/cb?next=https://evil.example",
        "https://APP.example.com/cb",
        "https://app.example.com/cb#x",
        "https://app.example.com.evil.example/cb",
        "http://app.example.com/cb"
      ]
    ) {
      for (const signedIn of [true, false]) {
        expectErrorPage(await authorizeAnswer((await params({ client_id: registered.client_id, redirect_uri: redirectUri, scope: "meetings:read" })).toString(), signedIn))
      }
    }
  })

  it("answers convene-cli with a redirect_uri that is not loopback with a 400 page and no Location", async () => {
    for (
      const redirectUri of [
        "https://evil.example/callback",
        "http://evil.example:8080/callback",
        "http://127.0.0.1.evil.example:8080/callback",
        "http://localhost:80@evil.example/callback",
        "http://127.0.0.1/callback",
        "javascript:alert(1)//127.0.0.1:80/",
        "com.example.app:/callback",
        ""
      ]
    ) {
      expectErrorPage(await authorizeAnswer((await params({ redirect_uri: redirectUri })).toString()))
    }
    const twice = await params({})
    twice.append("redirect_uri", "http://127.0.0.1:1/other")
    expectErrorPage(await authorizeAnswer(twice.toString()))
  })

  it("answers a redirect_uri with a line break, NUL, tab or non-ASCII character with a 400 page, never a 500 or a redirect", async () => {
    // The URL parser drops tabs and line breaks and percent-encodes the rest, so each of these parses as a
    // loopback URI; written as it is into Location, Node would refuse the header.
    for (
      const redirectUri of [
        "http://127.0.0.1:8000/cb\r\nSet-Cookie: pwn=1",
        "http://127.0.0.1:8000/cb\n",
        "http://127.0.0.1:8000/c\tb",
        "http://127.0.0.1:8000/cb\u0000",
        "http://127.0.0.1:8000/cb\u2028",
        "http://127.0.0.1:8000/caf\u00e9",
        "http://127.0.0.1:8000/a b"
      ]
    ) {
      for (const signedIn of [true, false]) {
        const answer = await authorizeAnswer((await params({ redirect_uri: redirectUri })).toString(), signedIn)
        expectErrorPage(answer)
        expect(answer.headers.getSetCookie().some((line) => line.startsWith("pwn")), JSON.stringify(redirectUri)).toBe(false)
      }
    }
  })

  it("answers any redirect_uri, control and Unicode characters included, without a 5xx, redirecting only to a URI it may use (property)", async () => {
    const printable = /^[\x21-\x7e]*$/
    // The registered loopback URI matches on any port (RFC 8252 7.3).
    const anyPort = (uri: string) => uri.replace(/^http:\/\/127\.0\.0\.1:\d+/, "http://127.0.0.1")
    const character = fc.oneof(
      fc.integer({ min: 0, max: 0x20 }),
      fc.integer({ min: 0x7f, max: 0xd7ff }),
      fc.integer({ min: 0xe000, max: 0x10ffff })
    ).map((code) => String.fromCodePoint(code))
    // A URI the client may use with one bad character put anywhere, or any text at all.
    const spoiled = fc.tuple(fc.constantFrom(loopback, "https://app.example.com/cb"), character, fc.nat()).map(([uri, bad, at]) => {
      const position = at % (uri.length + 1)
      return uri.slice(0, position) + bad + uri.slice(position)
    })
    const anything = fc.oneof(fc.string({ unit: "binary", maxLength: 40 }), fc.string({ unit: "grapheme", maxLength: 40 }))
      .map((text) => `http://127.0.0.1:8000/${text}`)
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(spoiled, anything, fc.string({ unit: "binary", maxLength: 40 })),
        fc.constantFrom("convene-cli", registered.client_id),
        fc.boolean(),
        async (redirectUri, clientId, signedIn) => {
          const answer = await authorizeAnswer((await params({ client_id: clientId, redirect_uri: redirectUri })).toString(), signedIn)
          expect(answer.status, JSON.stringify(redirectUri)).toBeLessThan(500)
          if (answer.location === null) return
          // A redirect goes to the sign-in page of this server or back to the URI the request named, and only
          // once that URI is printable and allowed.
          const back = answer.location.startsWith(`${redirectUri}?`) || answer.location.startsWith(`${redirectUri}&`)
          expect(back || answer.location.startsWith("/signin?"), answer.location).toBe(true)
          expect(printable.test(redirectUri), JSON.stringify(redirectUri)).toBe(true)
          if (clientId === "convene-cli") expect(redirectUri).toMatch(/^http:\/\/(127\.0\.0\.1|localhost):\d{1,5}([/?]|$)/i)
          else expect([loopback, "https://app.example.com/cb"].map(anyPort)).toContain(anyPort(redirectUri))
        }
      ),
      { numRuns: 150 }
    )
  })

  it("sends the other errors back to the client: plain PKCE is 302 with error=invalid_request, state and iss", async () => {
    const cases: ReadonlyArray<readonly [Record<string, string>, string]> = [
      [{ code_challenge_method: "plain" }, "invalid_request"],
      [{ code_challenge_method: "" }, "invalid_request"],
      [{ code_challenge: "" }, "invalid_request"],
      [{ code_challenge: "too-short" }, "invalid_request"],
      [{ response_type: "token" }, "unsupported_response_type"],
      [{ response_type: "" }, "invalid_request"],
      [{ scope: "admin" }, "invalid_scope"],
      [{ scope: "" }, "invalid_request"]
    ]
    for (const signedIn of [false, true]) {
      for (const [overrides, error] of cases) {
        const answer = await authorizeAnswer((await params(overrides)).toString(), signedIn)
        expect(answer.status, JSON.stringify(overrides)).toBe(302)
        const location = new URL(answer.location!)
        expect(`${location.origin}${location.pathname}`).toBe(loopback)
        expect(Object.fromEntries(location.searchParams)).toMatchObject({ error, state: "st", iss: `${server.url}/v1/oauth` })
        expect(location.searchParams.get("code")).toBeNull()
        expect(location.searchParams.get("error_description")).toBeTruthy()
      }
    }
    // A repeated parameter (after client and redirect URI are known) goes back too.
    const repeated = await params({})
    repeated.append("code_challenge_method", "plain")
    const answer = await authorizeAnswer(repeated.toString())
    expect(new URL(answer.location!).searchParams.get("error")).toBe("invalid_request")
  })

  it("keeps the state it echoes to one parameter: nothing can be injected into the redirect", async () => {
    const state = "x&code=injected&iss=https://evil.example&error=#frag"
    const values = await pkce()
    const { params } = await authorizationCode(server.url, jar, { clientId: "convene-cli", redirectUri: loopback, scope: "meetings:read", challenge: values.challenge, state })
    expect(params.getAll("state")).toEqual([state])
    expect(params.getAll("code")).toHaveLength(1)
    expect(params.get("code")).not.toBe("injected")
    expect(params.getAll("iss")).toEqual([`${server.url}/v1/oauth`])
    expect(params.has("error")).toBe(false)
  })

  it("shows a registered client's name as text on a consent page that cannot be framed or cached", async () => {
    const hostile = await registerClient(server.url, { client_name: "<script>alert(1)</script><b onmouseover=x>\"'", redirect_uris: [loopback] })
    const values = await pkce()
    const page = await browserRequest(server.url, jar, authorizeQuery({ clientId: hostile.client_id, redirectUri: loopback, scope: "meetings:read", challenge: values.challenge, state: "\"><script>alert(2)</script>" }))
    expect(page.status).toBe(200)
    expect(page.text).not.toContain("<script")
    expect(page.text).not.toContain("<b onmouseover")
    expect(page.text).toContain("&lt;script&gt;alert(1)&lt;/script&gt;")
    expect(page.headers.get("x-frame-options")).toBe("DENY")
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
    expect(page.headers.get("cache-control")).toBe("no-store")
  })

  it("never grants a registered client a workspace scope", async () => {
    const owner = await newUser(server.url, { role: "OWNER" })
    const ownerJar = (await signIn(server.url, owner)).jar
    const answer = await browserRequest(server.url, ownerJar, `/v1/oauth/authorize?${(await params({ client_id: registered.client_id, scope: "workspace:read workspace:write" })).toString()}`)
    expect(answer.status).toBe(302)
    expect(new URL(answer.location!).searchParams.get("error")).toBe("invalid_scope")
  })

  it("answers a program without a session with 401 login_required (no redirect to sign-in)", async () => {
    const response = await fetch(`${server.url}/v1/oauth/authorize?${(await params({})).toString()}`, { redirect: "manual", headers: { accept: "application/json" } })
    const answer = await read(response)
    expect(answer.status).toBe(401)
    expect(answer.headers.get("location")).toBeNull()
    expect(answer.body).toMatchObject({ error: "login_required" })
  })

  it("refuses the consent form posted from another origin or without its CSRF token (403, no redirect)", async () => {
    const values = await pkce()
    const query = authorizeQuery({ clientId: registered.client_id, redirectUri: loopback, scope: "meetings:read", challenge: values.challenge, state: "st" })
    const page = await browserRequest(server.url, jar, query)
    expect(page.status).toBe(200)
    const fields = { csrf: hiddenField(page.text, "csrf"), request: hiddenField(page.text, "request"), decision: "approve" }
    const forged = [
      { form: fields, headers: { origin: "https://evil.example" } },
      { form: { ...fields, csrf: "A".repeat(43) }, headers: {} },
      { form: { request: fields.request, decision: "approve" }, headers: {} }
    ]
    for (const attempt of forged) {
      const answer = await browserRequest(server.url, jar, "/v1/oauth/authorize", { form: attempt.form, headers: attempt.headers })
      expect({ status: answer.status, location: answer.location }, JSON.stringify(attempt.headers)).toEqual({ status: 403, location: null })
    }
    // The same form, as this site posts it, approves.
    const approved = await browserRequest(server.url, jar, "/v1/oauth/authorize", { form: fields })
    expectFormRedirect(approved.status)
    expect(new URL(approved.location!).searchParams.get("code")).toBeTruthy()
  })
})

const register = (body: unknown, headers: Record<string, string> = { "content-type": "application/json" }) =>
  post(server.url, "/v1/oauth/register", typeof body === "string" ? body : JSON.stringify(body), headers)

describe("dynamic client registration (RFC 7591) refuses what it must", () => {
  it("answers dangerous or malformed redirect URIs with 400 invalid_redirect_uri", async () => {
    for (
      const uris of [
        ["javascript:alert(document.cookie)"],
        ["JavaScript://example.com/%0aalert(1)"],
        ["data:text/html,<script>alert(1)</script>"],
        ["file:///etc/passwd"],
        ["http://example.com/callback"],
        ["http://127.0.0.1/callback"],
        ["https://app.example.com/cb#fragment"],
        ["https://user:pass@app.example.com/cb"],
        ["/relative/callback"],
        ["myapp:/callback"],
        ["https://app.example.com/cb", "javascript:alert(1)"],
        ["https://evil.example/cb\r\nSet-Cookie: x=1"],
        ["https://app.example.com/cb", "http://127.0.0.1:8000/cb\u0000"],
        ["com.example.app:/cb\u2028"],
        ["https://app.example.com/caf\u00e9"],
        [],
        "https://app.example.com/cb",
        [42],
        Array.from({ length: 21 }, (_, index) => `https://app.example.com/cb${index}`)
      ]
    ) {
      expectOAuthError(await register({ client_name: "Bad", redirect_uris: uris }), 400, "invalid_redirect_uri")
    }
    expectOAuthError(await register({ client_name: "None" }), 400, "invalid_redirect_uri")
  })

  it("answers the operator's first-party client with a control or non-ASCII character in a redirect URI with 400 validation_error", async () => {
    const operator = client(server.url, OPERATOR_TOKEN)
    for (const uri of ["http://127.0.0.1:8000/cb\r\nSet-Cookie: x=1", "http://127.0.0.1:8000/cb\u0000", "http://127.0.0.1:8000/caf\u00e9"]) {
      const answer = await operator.post("/operator/v1/oauth-clients", { name: "Desk app", redirect_uris: [uri] })
      expect(answer.status, JSON.stringify(uri)).toBe(400)
      expect(answer.body.code).toBe("validation_error")
    }
    expect((await operator.post("/operator/v1/oauth-clients", { name: "Desk app", redirect_uris: ["http://127.0.0.1:8000/cb"] })).status).toBe(201)
  })

  it("answers workspace scopes and other metadata it does not allow with 400 invalid_client_metadata", async () => {
    const good = { redirect_uris: ["https://app.example.com/cb"] }
    for (
      const metadata of [
        { scope: "workspace:read" },
        { scope: "meetings:read workspace:write" },
        { scope: "admin" },
        { scope: ["meetings:read"] },
        { token_endpoint_auth_method: "client_secret_basic" },
        { grant_types: ["client_credentials"] },
        { grant_types: ["refresh_token"] },
        { response_types: ["token"] },
        { client_name: "" },
        { client_name: "x".repeat(201) },
        { client_name: "line\nbreak" },
        { client_uri: "javascript:alert(1)" },
        { logo_uri: "http://example.com/logo.png" }
      ]
    ) {
      expectOAuthError(await register({ ...good, ...metadata }), 400, "invalid_client_metadata")
    }
  })

  it("answers a body that is not a JSON object with 400 invalid_client_metadata", async () => {
    const cases: ReadonlyArray<readonly [string, Record<string, string>]> = [
      ["redirect_uris=https%3A%2F%2Fapp.example.com%2Fcb", { "content-type": "application/x-www-form-urlencoded" }],
      ["{\"redirect_uris\": [", { "content-type": "application/json" }],
      ["[\"https://app.example.com/cb\"]", { "content-type": "application/json" }],
      ["\"https://app.example.com/cb\"", { "content-type": "application/json" }],
      ["null", { "content-type": "application/json" }],
      ["", { "content-type": "application/json" }],
      ["{\"redirect_uris\": [\"https://app.example.com/cb\"]}", { "content-type": "text/plain" }]
    ]
    for (const [body, headers] of cases) {
      expectOAuthError(await register(body, headers), 400, "invalid_client_metadata")
    }
    const invalidUtf8 = await post(server.url, "/v1/oauth/register", new Uint8Array([0x7b, 0xff, 0x7d]), { "content-type": "application/json" })
    expectOAuthError(invalidUtf8, 400, "invalid_client_metadata")
  })

  it("registers a public client: no secret, its registration access token once, never cached", async () => {
    const answer = await register({ client_name: "Good app", redirect_uris: ["https://app.example.com/cb", "com.example.app:/cb", "http://127.0.0.1:9/cb"], scope: "meetings:read" })
    expect(answer.status).toBe(201)
    expect(answer.headers.get("cache-control")).toBe("no-store")
    expect(answer.body).toMatchObject({
      client_name: "Good app",
      redirect_uris: ["https://app.example.com/cb", "com.example.app:/cb", "http://127.0.0.1:9/cb"],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      scope: "meetings:read",
      registration_client_uri: `${server.url}/v1/oauth/register/${answer.body.client_id}`
    })
    expect(answer.body).not.toHaveProperty("client_secret")
    expect(typeof answer.body.registration_access_token).toBe("string")
  })

  it("answers any metadata with 201 or a registration error, never a 500 (property)", async () => {
    const uri = fc.oneof(
      fc.webUrl({ withFragments: true, withQueryParameters: true }),
      fc.constantFrom("javascript:alert(1)", "http://127.0.0.1:8/cb", "com.example.app:/cb", "data:,x", "", "http://[::1]:8/cb"),
      fc.string({ maxLength: 40 })
    )
    const metadata = fc.record({
      redirect_uris: fc.oneof(fc.array(uri, { maxLength: 3 }), fc.anything()),
      client_name: fc.oneof(fc.string({ maxLength: 30 }), fc.anything()),
      scope: fc.oneof(fc.subarray([...SCOPES, "openid", "admin"]).map((items) => items.join(" ")), fc.anything()),
      client_uri: fc.oneof(fc.webUrl(), fc.anything()),
      grant_types: fc.oneof(fc.subarray(["authorization_code", "refresh_token", "password"]), fc.anything())
    }, { requiredKeys: [] })
    await fc.assert(
      fc.asyncProperty(metadata, async (body) => {
        const answer = await register(body)
        if (answer.status === 201) {
          expect(typeof answer.body.client_id).toBe("string")
          expect(answer.body.scope ?? "").not.toMatch(/workspace:/)
          return
        }
        expect(answer.status).toBe(400)
        expect(["invalid_redirect_uri", "invalid_client_metadata"]).toContain(answer.body.error)
      }),
      { numRuns: 100 }
    )
  })
})

describe("client management (RFC 7592) needs the registration access token", () => {
  const manage = (method: "GET" | "PUT" | "DELETE", clientId: string, token: string | undefined, body?: unknown) =>
    fetch(`${server.url}/v1/oauth/register/${clientId}`, {
      method,
      headers: {
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        ...(body === undefined ? {} : { "content-type": "application/json" })
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    }).then(read)

  const expectInvalidToken = (answer: Answer) => {
    expectOAuthError(answer, 401, "invalid_token")
    expect(answer.headers.get("www-authenticate")).toMatch(/^Bearer\b/)
  }

  it("answers GET, PUT and DELETE with a wrong, missing or another client's token with 401 invalid_token", async () => {
    const mine = await registerClient(server.url, { client_name: "Mine", redirect_uris: ["https://mine.example/cb"] })
    const theirs = await registerClient(server.url, { client_name: "Theirs", redirect_uris: ["https://theirs.example/cb"] })
    const update = { client_id: mine.client_id, client_name: "Taken over", redirect_uris: ["https://evil.example/cb"] }
    for (const method of ["GET", "PUT", "DELETE"] as const) {
      for (const token of [undefined, "", "svc_rat_v1_" + "A".repeat(43), theirs.registration_access_token, `${mine.registration_access_token}x`]) {
        expectInvalidToken(await manage(method, mine.client_id, token, method === "PUT" ? update : undefined))
      }
      // A token sent another way than as a bearer token.
      const basic = await fetch(`${server.url}/v1/oauth/register/${mine.client_id}`, { method, headers: { authorization: `Basic ${btoa(`${mine.client_id}:${mine.registration_access_token}`)}` } })
      expectInvalidToken(await read(basic))
      // The built-in client has no registration to manage.
      expectInvalidToken(await manage(method, "convene-cli", mine.registration_access_token, method === "PUT" ? { ...update, client_id: "convene-cli" } : undefined))
    }
    // Nothing changed: the right token reads the client as registered, then manages it.
    const read1 = await manage("GET", mine.client_id, mine.registration_access_token)
    expect(read1.status).toBe(200)
    expect(read1.body).toMatchObject({ client_name: "Mine", redirect_uris: ["https://mine.example/cb"] })
    expect(read1.body).not.toHaveProperty("registration_access_token")
    const changed = await manage("PUT", mine.client_id, mine.registration_access_token, { ...update, client_name: "Mine, renamed", redirect_uris: ["https://mine.example/cb2"] })
    expect(changed.status).toBe(200)
    expect(changed.body).toMatchObject({ client_name: "Mine, renamed", redirect_uris: ["https://mine.example/cb2"] })
    // An update may not name another client, nor take workspace scopes.
    expectOAuthError(await manage("PUT", mine.client_id, mine.registration_access_token, { ...update, client_id: theirs.client_id }), 400, "invalid_client_metadata")
    expectOAuthError(await manage("PUT", mine.client_id, mine.registration_access_token, { ...update, redirect_uris: ["https://mine.example/cb"], scope: "workspace:write" }), 400, "invalid_client_metadata")
    const deleted = await manage("DELETE", mine.client_id, mine.registration_access_token)
    expect(deleted.status).toBe(204)
    expectInvalidToken(await manage("GET", mine.client_id, mine.registration_access_token))
    // The other client was never touched.
    expect((await manage("GET", theirs.client_id, theirs.registration_access_token)).status).toBe(200)
  })

  it("revokes the tokens of a deleted client", async () => {
    const client = await registerClient(server.url, { client_name: "Short-lived app", redirect_uris: [loopback] })
    const values = await pkce()
    const { code } = await authorizationCode(server.url, jar, { clientId: client.client_id, redirectUri: loopback, scope: "meetings:read", challenge: values.challenge })
    const tokens = (await tokenRequest(server.url, { grant_type: "authorization_code", code, code_verifier: values.verifier, client_id: client.client_id, redirect_uri: loopback })).body
    expect((await me(server.url, tokens.access_token)).status).toBe(200)
    expect((await manage("DELETE", client.client_id, client.registration_access_token)).status).toBe(204)
    expect((await me(server.url, tokens.access_token)).status).toBe(401)
    expectOAuthError(await tokenRequest(server.url, { grant_type: "refresh_token", refresh_token: tokens.refresh_token }), 400, "invalid_grant")
  })
})

describe("password guessing", () => {
  it("answers the 6th attempt within the window with 429 and Retry-After, even with the right password", async () => {
    const user = await newUser(server.url)
    for (let attempt = 1; attempt <= 5; attempt++) {
      const { response } = await signIn(server.url, { email: user.email, password: `guess ${attempt}` })
      expect(response.status, `attempt ${attempt}`).toBe(401)
      expect(response.headers.getSetCookie().some((cookie) => cookie.startsWith(`${SESSION_COOKIE}=`))).toBe(false)
    }
    const { response, jar: guesser } = await signIn(server.url, user)
    expect(response.status).toBe(429)
    const retryAfter = Number(response.headers.get("retry-after"))
    expect(Number.isInteger(retryAfter) && retryAfter > 0 && retryAfter <= 15 * 60).toBe(true)
    expect(response.text).toContain("Too many failed attempts")
    expect(guesser.get(SESSION_COOKIE)).toBeUndefined()
    // The same address signs another account in: the limit is the guessed account's.
    const other = await newUser(server.url)
    expectFormRedirect((await signIn(server.url, other)).response.status)
    // The e-mail written another way is the same account.
    for (const email of [user.email.toUpperCase(), ` ${user.email} `, `${user.email}\t`]) {
      expect((await signIn(server.url, { email, password: user.password })).response.status, JSON.stringify(email)).toBe(429)
    }
  })

  it("answers an unknown account and a wrong password alike", async () => {
    const user = await newUser(server.url)
    const unknown = await signIn(server.url, { email: `nobody-${crypto.randomUUID()}@example.com`, password: "whatever" })
    const wrong = await signIn(server.url, { email: user.email, password: "whatever" })
    expect(unknown.response.status).toBe(401)
    expect(wrong.response.status).toBe(401)
    const message = (page: string) => /<div id="form-error" class="alert" role="alert"><p>([^<]*)<\/p>/.exec(page)?.[1]
    expect(message(unknown.response.text)).toBe("Wrong e-mail address or password.")
    expect(message(wrong.response.text)).toBe(message(unknown.response.text))
  })
})

describe("password guessing spread over accounts", () => {
  // A server of its own: the limit it reaches is the one of every test's address.
  const spread = useOAuthServer()

  it("answers 429 from the address that failed 20 times within the window, whichever account it tries next", async () => {
    const victim = await newUser(spread.url)
    for (let attempt = 1; attempt <= 20; attempt++) {
      const { response } = await signIn(spread.url, { email: `guess-${attempt}@example.com`, password: "guess" })
      expect(response.status, `attempt ${attempt}`).toBe(401)
    }
    const { response } = await signIn(spread.url, victim)
    expect(response.status).toBe(429)
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0)
  })
})

describe("password guessing all at once", () => {
  // A server of its own: every test's sign-ins come from the same address, and count against its limit.
  const burst = useOAuthServer()

  it("checks at most 5 passwords of a burst of 30 wrong ones sent at once, and answers the rest 429", async () => {
    const user = await newUser(burst.url)
    // Each guesser has its own sign-in form (and CSRF cookie), as 30 browsers would; then all post together.
    const forms = await Promise.all(Array.from({ length: 30 }, async () => {
      const guesser = new CookieJar()
      const page = await browserRequest(burst.url, guesser, "/signin")
      return { guesser, csrf: hiddenField(page.text, "csrf") }
    }))
    const answers = await Promise.all(forms.map(({ csrf, guesser }, index) =>
      browserRequest(burst.url, guesser, "/signin", { form: { csrf, continue: "/account", email: user.email, password: `guess ${index}` } })
    ))
    const statuses = answers.map((answer) => answer.status)
    expect(statuses.filter((status) => status === 401)).toHaveLength(5)
    expect(statuses.filter((status) => status === 429)).toHaveLength(25)
    // The right password is refused too until the window has passed.
    expect((await signIn(burst.url, user)).response.status).toBe(429)
  })
})

describe("continue never leaves the site", () => {
  it("sends a signed-in user to a path of this server whatever continue says", async () => {
    const user = await newUser(server.url)
    const targets = [
      "https://evil.example/",
      "//evil.example/",
      "/\\evil.example/",
      "\\\\evil.example/",
      "/\t/evil.example/",
      "https:evil.example",
      "javascript:alert(1)",
      "data:text/html,<script>alert(1)</script>",
      "http://127.0.0.1:1/elsewhere",
      ` ${server.url}.evil.example/`
    ]
    for (const target of targets) {
      // The form never carries it...
      const signedIn = new CookieJar()
      const form = await browserRequest(server.url, signedIn, `/signin?continue=${encodeURIComponent(target)}`)
      expect(hiddenField(form.text, "continue"), target).toBe("/account")
      // ...and posted all the same, it is held to the same rule.
      const posted = await browserRequest(server.url, signedIn, "/signin", {
        form: { csrf: hiddenField(form.text, "csrf"), continue: target, email: user.email, password: user.password }
      })
      expectFormRedirect(posted.status, target)
      expect(posted.location, target).toBe("/account")
      // Signed in, GET /signin goes straight on, to the same place.
      expect((await browserRequest(server.url, signedIn, `/signin?continue=${encodeURIComponent(target)}`)).location, target).toBe("/account")
    }
    // A path of this server is followed, query included.
    const { response } = await signIn(server.url, user, { continue: "/v1/oauth/authorize?client_id=x&state=y" })
    expect(response.location).toBe("/v1/oauth/authorize?client_id=x&state=y")
  })
})

describe("cookies on an http base URL", () => {
  it("sets the session cookie HttpOnly, SameSite=Lax, Path=/, without Secure; the CSRF cookie HttpOnly and SameSite=Strict", async () => {
    const user = await newUser(server.url)
    const first = await fetch(`${server.url}/signin`)
    const csrfLine = first.headers.getSetCookie().find((line) => line.startsWith(`${CSRF_COOKIE}=`))!
    expect(attributes(csrfLine)).toMatchObject({ httponly: true, samesite: "Strict", path: "/" })
    expect(attributes(csrfLine)).not.toHaveProperty("secure")
    expect(attributes(csrfLine)).not.toHaveProperty("domain")

    const { response } = await signIn(server.url, user)
    const sessionLine = response.headers.getSetCookie().find((line) => line.startsWith(`${SESSION_COOKIE}=`))!
    expect(attributes(sessionLine)).toMatchObject({ httponly: true, samesite: "Lax", path: "/", "max-age": String(12 * 60 * 60) })
    expect(attributes(sessionLine)).not.toHaveProperty("secure")
    expect(attributes(sessionLine)).not.toHaveProperty("domain")
  })

  it("ends the session on sign-out: the cookie is cleared and its token no longer names a session", async () => {
    const user = await newUser(server.url)
    const { jar: session } = await signIn(server.url, user)
    const token = session.get(SESSION_COOKIE)!
    const account = await browserRequest(server.url, session, "/account")
    expect(account.status).toBe(200)
    const out = await browserRequest(server.url, session, "/signout", { form: { csrf: hiddenField(account.text, "csrf") } })
    expectFormRedirect(out.status)
    expect(out.location).toBe("/signin")
    const cleared = out.headers.getSetCookie().find((line) => line.startsWith(`${SESSION_COOKIE}=`))!
    expect(attributes(cleared)).toMatchObject({ "max-age": "0" })
    // The old cookie, kept by an attacker, is worth nothing.
    const replayed = await browserRequest(server.url, new CookieJar(), "/account", { headers: { cookie: `${SESSION_COOKIE}=${token}` } })
    expect(replayed.status).toBe(302)
    expect(replayed.location).toMatch(/^\/signin\?/)
    const revoke = await post(server.url, "/v1/oauth/revoke", new URLSearchParams({ token: "x" }), { ...form, authorization: `Bearer ${token}` })
    expect(revoke.status).toBe(401)
  })

  it("is no credential on the API: the session cookie or token alone gets 401 on /v1", async () => {
    const user = await newUser(server.url)
    const { jar: session } = await signIn(server.url, user)
    expect((await fetch(`${server.url}/v1/me`, { headers: { cookie: session.header() } })).status).toBe(401)
    expect((await me(server.url, session.get(SESSION_COOKIE)!)).status).toBe(401)
  })
})

describe("the session's forms refuse what another site posts", () => {
  it("answers POST /signout, /account/tokens and /account/tokens/{id}/delete from another origin, without the CSRF cookie or with a wrong token with 403, and changes nothing", async () => {
    const user = await newUser(server.url, { plan: "PRO" })
    const { jar: session } = await signIn(server.url, user)
    const account = await browserRequest(server.url, session, "/account")
    const csrf = hiddenField(account.text, "csrf")
    // A token to delete, issued the right way.
    const issued = await browserRequest(server.url, session, "/account/tokens", {
      form: { csrf, name: "Kept", kind: "short_lived", scopes: "meetings:read", expiry_hours: "1" }
    })
    expect(issued.status).toBe(201)
    const token = /<input id="issued-token" type="text" readonly value="([^"]+)"/.exec(issued.text)![1]!
    const deleteAction = /<form method="post" action="(\/account\/tokens\/[^"]+\/delete)">/.exec(issued.text)![1]!

    // The session cookie alone, as a cross-site form post carries it (SameSite=Lax lets a top-level POST
    // through in some browsers; the CSRF cookie is SameSite=Strict and never comes along).
    const withoutCsrfCookie = new CookieJar()
    withoutCsrfCookie.absorb(new Response(null, { headers: { "set-cookie": `${SESSION_COOKIE}=${session.get(SESSION_COOKIE)}` } }))
    const forgeries = [
      { name: "another origin", jar: session, form: { csrf }, headers: { origin: "https://evil.example" } },
      { name: "an opaque origin (null)", jar: session, form: { csrf }, headers: { origin: "null" } },
      { name: "no CSRF cookie", jar: withoutCsrfCookie, form: { csrf }, headers: {} },
      { name: "a wrong CSRF token", jar: session, form: { csrf: "A".repeat(43) }, headers: {} },
      { name: "no CSRF token", jar: session, form: {}, headers: {} }
    ]
    for (const forgery of forgeries) {
      for (const [path, fields] of [
        ["/signout", {}],
        ["/account/tokens", { name: "Planted", kind: "short_lived", scopes: "meetings:read", expiry_hours: "6" }],
        [deleteAction, {}]
      ] as const) {
        const answer = await browserRequest(server.url, forgery.jar, path, { form: { ...fields, ...forgery.form }, headers: forgery.headers })
        expect({ status: answer.status, location: answer.location }, `${path}: ${forgery.name}`).toEqual({ status: 403, location: null })
        expect(answer.text, `${path}: ${forgery.name}`).not.toContain("svc_")
      }
    }
    // Nothing changed: still signed in, no token planted, the token still works.
    const after = await browserRequest(server.url, session, "/account")
    expect(after.status).toBe(200)
    expect(after.text).not.toContain("Planted")
    expect(after.text).toContain("Kept")
    expect((await me(server.url, token)).status).toBe(200)
  })
})

describe("browser sign-in off (CONVENE_BROWSER_SIGNIN=false)", () => {
  const off = useOAuthServer({ browserSignIn: false })

  it("has no /signin, /signout or /account, and authorize answers a browser 401 login_required instead of a sign-in redirect", async () => {
    const jar = new CookieJar()
    for (const [method, path] of [["GET", "/signin"], ["POST", "/signin"], ["POST", "/signout"], ["GET", "/account"], ["POST", "/account/tokens"]] as const) {
      const answer = await browserRequest(off.url, jar, path, method === "POST" ? { form: { csrf: "x" } } : {})
      expect(answer.status, `${method} ${path}`).toBe(404)
    }
    const values = await pkce()
    const query = authorizeQuery({ clientId: "convene-cli", redirectUri: loopback, scope: "meetings:read", challenge: values.challenge, state: "st" })
    const browser = await browserRequest(off.url, jar, query)
    expect({ status: browser.status, location: browser.location }).toEqual({ status: 401, location: null })
    expect(JSON.parse(browser.text)).toMatchObject({ error: "login_required" })
    const program = await read(await fetch(off.url + query, { redirect: "manual", headers: { accept: "application/json" } }))
    expect({ status: program.status, location: program.headers.get("location") }).toEqual({ status: 401, location: null })
    // An untrusted client or redirect URI is still the 400 page, never a redirect.
    const untrusted = await browserRequest(off.url, jar, authorizeQuery({ clientId: "convene-cli", redirectUri: "https://evil.example/cb", scope: "meetings:read", challenge: values.challenge }))
    expect({ status: untrusted.status, location: untrusted.location }).toEqual({ status: 400, location: null })
  })
})

describe("the browser pages on another origin (CONVENE_AUTH_URL)", () => {
  const split = useOAuthServer({ authUrl: "https://auth.example" })

  it("publishes authorization_endpoint on the auth URL, and the issuer and the other endpoints on the base URL", async () => {
    const document = (await read(await fetch(`${split.url}/v1/oauth/.well-known/openid-configuration`))).body
    expect(document).toMatchObject({
      issuer: `${split.url}/v1/oauth`,
      authorization_endpoint: "https://auth.example/v1/oauth/authorize",
      token_endpoint: `${split.url}/v1/oauth/token`,
      revocation_endpoint: `${split.url}/v1/oauth/revoke`,
      jwks_uri: `${split.url}/v1/oauth/.well-known/jwks.json`
    })
    const gateway = (await read(await fetch(`${split.url}/.well-known/oauth-authorization-server`))).body
    expect(gateway).toMatchObject({ authorization_endpoint: "https://auth.example/v1/oauth/authorize", registration_endpoint: `${split.url}/v1/oauth/register` })
  })

  it("serves the pages for the auth URL's origin: its cookies (https: __Host-), its Origin on forms, sign-in redirects on its host", async () => {
    const user = await newUser(split.url)
    const values = await pkce()
    // A browser without a session goes to /signin on the host it is on (the auth URL's, through the proxy).
    const query = authorizeQuery({ clientId: "convene-cli", redirectUri: loopback, scope: "meetings:read", challenge: values.challenge, state: "st" })
    const toSignIn = await browserRequest(split.url, new CookieJar(), query)
    expect(toSignIn.status).toBe(302)
    expect(toSignIn.location).toBe(`/signin?continue=${encodeURIComponent(query)}`)

    const first = await fetch(`${split.url}/signin`)
    const csrfLine = first.headers.getSetCookie().find((line) => line.startsWith("__Host-convene_csrf="))
    expect(csrfLine).toBeDefined()
    const csrfCookie = `__Host-convene_csrf=${csrfLine!.split(";")[0]!.slice("__Host-convene_csrf=".length)}`
    const page = await first.text()
    const body = new URLSearchParams({ csrf: hiddenField(page, "csrf"), continue: query, email: user.email, password: user.password })
    // Posted from the base URL's origin, the form is another site's.
    const fromBase = await post(split.url, "/signin", body, { ...form, origin: split.url, cookie: csrfCookie })
    expect(fromBase.status).toBe(403)
    const signedIn = await post(split.url, "/signin", body, { ...form, origin: "https://auth.example", cookie: csrfCookie })
    expectFormRedirect(signedIn.status)
    expect(signedIn.headers.get("location")).toBe(query)
    const sessionLine = signedIn.headers.getSetCookie().find((line) => line.startsWith("__Host-convene_session="))
    expect(sessionLine).toBeDefined()
    // With that session, authorize answers the client with a code.
    const approved = await fetch(split.url + query, { redirect: "manual", headers: { accept: "text/html", cookie: sessionLine!.split(";")[0]! } })
    expect(approved.status).toBe(302)
    const location = new URL(approved.headers.get("location")!)
    expect(`${location.origin}${location.pathname}`).toBe(loopback)
    expect(location.searchParams.get("code")).toBeTruthy()
    expect(location.searchParams.get("iss")).toBe(`${split.url}/v1/oauth`)
  })
})

/** The attributes of a Set-Cookie line, by lower-case name (flags as `true`). */
const attributes = (line: string): Record<string, string | true> =>
  Object.fromEntries(
    line.split(";").slice(1).map((part) => {
      const [name = "", ...value] = part.trim().split("=")
      return [name.toLowerCase(), value.length === 0 ? true : value.join("=")] as const
    })
  )

describe("cookies on an https base URL", () => {
  const secure = useOAuthServer({ baseUrl: () => "https://convene.example" })

  it("sets both cookies Secure with the __Host- prefix (read without TLS)", async () => {
    const user = await newUser(secure.url)
    const first = await fetch(`${secure.url}/signin`)
    const csrfLine = first.headers.getSetCookie().find((line) => line.startsWith("__Host-convene_csrf="))
    expect(csrfLine).toBeDefined()
    expect(attributes(csrfLine!)).toMatchObject({ secure: true, httponly: true, samesite: "Strict", path: "/" })
    expect(attributes(csrfLine!)).not.toHaveProperty("domain")
    const csrf = csrfLine!.split(";")[0]!.slice("__Host-convene_csrf=".length)

    const page = await first.text()
    const body = new URLSearchParams({ csrf: hiddenField(page, "csrf"), continue: hiddenField(page, "continue"), email: user.email, password: user.password })
    // The browser on https://convene.example posts the form: its Origin is the base URL's.
    const posted = await post(secure.url, "/signin", body, { ...form, origin: "https://convene.example", cookie: `__Host-convene_csrf=${csrf}` })
    expectFormRedirect(posted.status)
    const sessionLine = posted.headers.getSetCookie().find((line) => line.startsWith("__Host-convene_session="))
    expect(sessionLine).toBeDefined()
    expect(attributes(sessionLine!)).toMatchObject({ secure: true, httponly: true, samesite: "Lax", path: "/" })
    expect(attributes(sessionLine!)).not.toHaveProperty("domain")
    // The plain http names are not used there.
    expect(posted.headers.getSetCookie().some((line) => line.startsWith(`${SESSION_COOKIE}=`))).toBe(false)
    // And the http origin is another origin for that server.
    const fromHttp = await post(secure.url, "/signin", body, { ...form, origin: secure.url, cookie: `__Host-convene_csrf=${csrf}` })
    expect(fromHttp.status).toBe(403)
  })

  it("names the https base URL in its issuer and endpoints", async () => {
    const document = await (await fetch(`${secure.url}/v1/oauth/.well-known/openid-configuration`)).json()
    expect(document).toMatchObject({
      issuer: "https://convene.example/v1/oauth",
      authorization_endpoint: "https://convene.example/v1/oauth/authorize",
      token_endpoint: "https://convene.example/v1/oauth/token"
    })
  })
})

describe("discovery documents", () => {
  it("lists exactly the spec's values at /v1/oauth/.well-known/openid-configuration", async () => {
    const response = await fetch(`${server.url}/v1/oauth/.well-known/openid-configuration`)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("application/json")
    const document = (await read(response)).body
    expect(document).toMatchObject({
      issuer: `${server.url}/v1/oauth`,
      authorization_endpoint: `${server.url}/v1/oauth/authorize`,
      token_endpoint: `${server.url}/v1/oauth/token`,
      revocation_endpoint: `${server.url}/v1/oauth/revoke`,
      jwks_uri: `${server.url}/v1/oauth/.well-known/jwks.json`
    })
    expect(document.response_types_supported).toEqual(["code"])
    expect(document.grant_types_supported).toEqual(["authorization_code", "refresh_token"])
    expect(document.code_challenge_methods_supported).toEqual(["S256"])
    expect(document.token_endpoint_auth_methods_supported).toEqual(["none"])
    expect(document.id_token_signing_alg_values_supported).toEqual(["RS256"])
    expect(document.subject_types_supported).toEqual(["public"])
    expect(document.scopes_supported).toEqual(SCOPES)
    expect(document).not.toHaveProperty("registration_endpoint")
  })

  it("publishes the same metadata with registration_endpoint at the gateway's well-known addresses", async () => {
    const discovery = (await read(await fetch(`${server.url}/v1/oauth/.well-known/openid-configuration`))).body
    for (const path of ["/.well-known/oauth-authorization-server", "/.well-known/oauth-authorization-server/v1/oauth", "/.well-known/openid-configuration"]) {
      const response = await fetch(server.url + path)
      expect(response.status, path).toBe(200)
      expect(await response.json(), path).toEqual({ ...discovery, registration_endpoint: `${server.url}/v1/oauth/register` })
    }
  })
})
