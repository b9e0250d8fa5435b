/**
 * The signed-in browser session as a credential where decisions.md says so: POST /v1/user/tokens takes the
 * session token (the session cookie's value) as the bearer and issues a personal access token with the scopes
 * the user's role grants; every other /v1 endpoint refuses it, and a signed-out session is refused there too.
 */
import { describe, expect, it } from "vitest"
import { client, provision, provisionedPassword } from "../support/server.js"
import { useServer } from "./fixtures.js"

/** Signs in through the form as a browser does; answers the session cookie's value. */
const signIn = async (url: string, email: string) => {
  const page = await fetch(`${url}/signin`)
  const csrfCookie = /convene_csrf=([^;]+)/.exec(page.headers.get("set-cookie") ?? "")![1]!
  const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())![1]!
  expect(csrf).toBe(csrfCookie)
  const signedIn = await fetch(`${url}/signin`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: `convene_csrf=${csrfCookie}` },
    body: new URLSearchParams({ email, password: provisionedPassword, continue: "/account", csrf }).toString()
  })
  expect([signedIn.status, signedIn.headers.get("location")]).toEqual([302, "/account"])
  return { session: /convene_session=([^;]+)/.exec(signedIn.headers.get("set-cookie") ?? "")![1]!, csrf: csrfCookie }
}

describe("the signed-in session on /v1", () => {
  const server = useServer()

  it("issues a personal access token on POST /v1/user/tokens, and is refused everywhere else", async () => {
    const { email } = await provision(server.url, { role: "ADMIN" })
    const { csrf, session } = await signIn(server.url, email)
    expect(session).toMatch(/^svc_ses_v1_[A-Za-z0-9_-]{43}$/)
    const asSession = client(server.url, session)

    const issued = await asSession.post("/v1/user/tokens", { name: "from the browser", scopes: ["meetings:read", "workspace:read"], expiry_days: 30 })
    expect(issued.status).toBe(201)
    expect(issued.body).toMatchObject({ kind: "personal_access_token", scopes: ["meetings:read", "workspace:read"] })
    const me = await client(server.url, issued.body.token).get("/v1/me")
    expect(me.status).toBe(200)

    for (const [method, path] of [["GET", "/v1/me"], ["GET", "/v1/meetings"], ["GET", "/v1/user/tokens"], ["GET", "/v1/auth/introspect"]] as const) {
      const refused = method === "GET" ? await asSession.get(path) : await asSession.post(path, {})
      expect([path, refused.status, refused.body.code]).toEqual([path, 401, "invalid_token"])
    }

    await fetch(`${server.url}/signout`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: `convene_csrf=${csrf}; convene_session=${session}` },
      body: new URLSearchParams({ csrf }).toString()
    })
    const after = await asSession.post("/v1/user/tokens", { name: "too late", scopes: ["meetings:read"], expiry_days: 30 })
    expect([after.status, after.body.code]).toEqual([401, "invalid_token"])
  })

  it("grants no more than the user's role: a MEMBER's session cannot issue a workspace scope", async () => {
    const { email } = await provision(server.url, { role: "MEMBER" })
    const { session } = await signIn(server.url, email)
    const refused = await client(server.url, session).post("/v1/user/tokens", {
      name: "too much",
      scopes: ["workspace:write"],
      expiry_days: 30
    })
    expect([refused.status, refused.body.code]).toEqual([400, "validation_error"])
    expect(refused.body.error).toContain("workspace:write")
  })
})
