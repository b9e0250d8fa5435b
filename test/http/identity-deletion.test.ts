/**
 * Deleting a user or a workspace through the operator API takes their browser sessions, authorization codes and
 * OAuth grants along, in the same transaction: on the PostgreSQL stores (the http-on-pglite project runs this
 * file again) the foreign keys would refuse the commit otherwise. Afterwards the session, the access token and
 * the refresh token are all refused.
 */
import { createHash, randomBytes } from "node:crypto"
import { describe, expect, it } from "vitest"
import { client, OPERATOR_TOKEN, provision, provisionedPassword } from "../support/server.js"
import { useServer } from "./fixtures.js"

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()

/** A signed-in user with an OAuth grant (access and refresh token, via convene-cli) and an unused code. */
const furnish = async (url: string, email: string) => {
  const page = await fetch(`${url}/signin`)
  const csrf = /convene_csrf=([^;]+)/.exec(page.headers.get("set-cookie") ?? "")![1]!
  const signedIn = await fetch(`${url}/signin`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: `convene_csrf=${csrf}` },
    body: form({ email, password: provisionedPassword, continue: "/account", csrf })
  })
  const session = /convene_session=([^;]+)/.exec(signedIn.headers.get("set-cookie") ?? "")![1]!
  const authorize = async () => {
    const verifier = randomBytes(32).toString("base64url")
    const redirectUri = "http://127.0.0.1:4555/callback"
    const query = form({
      client_id: "convene-cli",
      redirect_uri: redirectUri,
      response_type: "code",
      scope: "meetings:read openid",
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      code_challenge_method: "S256",
      state: "s"
    })
    const answer = await fetch(`${url}/v1/oauth/authorize?${query}`, { redirect: "manual", headers: { cookie: `convene_session=${session}` } })
    const code = new URL(answer.headers.get("location")!).searchParams.get("code")!
    return { code, verifier, redirectUri }
  }
  const first = await authorize()
  const tokens = await fetch(`${url}/v1/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: form({ grant_type: "authorization_code", code: first.code, code_verifier: first.verifier, client_id: "convene-cli", redirect_uri: first.redirectUri })
  }).then((response) => response.json() as Promise<{ access_token: string; refresh_token: string }>)
  await authorize() // a code that is never exchanged
  return { session, ...tokens }
}

const expectAllRefused = async (url: string, held: { session: string; access_token: string; refresh_token: string }) => {
  expect((await client(url, held.access_token).get("/v1/me")).status).toBe(401)
  const issued = await client(url, held.session).post("/v1/user/tokens", { name: "x", scopes: ["meetings:read"], expiry_days: 30 })
  expect(issued.status).toBe(401)
  const refreshed = await fetch(`${url}/v1/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: form({ grant_type: "refresh_token", refresh_token: held.refresh_token })
  })
  expect([refreshed.status, ((await refreshed.json()) as { error: string }).error]).toEqual([400, "invalid_grant"])
}

describe("deleting people who signed in and authorized clients", () => {
  const server = useServer()
  const operator = () => client(server.url, OPERATOR_TOKEN)

  it("DELETE /operator/v1/users/{id}: 204, and their session, tokens and refresh token are refused", async () => {
    const { email, userId } = await provision(server.url)
    const held = await furnish(server.url, email)
    expect((await client(server.url, held.access_token).get("/v1/me")).status).toBe(200)
    expect((await operator().delete(`/operator/v1/users/${userId}`)).status).toBe(204)
    await expectAllRefused(server.url, held)
  })

  it("DELETE /operator/v1/workspaces/{id}: 204, and its users' sessions, tokens and refresh tokens are refused", async () => {
    const { email, workspaceId } = await provision(server.url)
    const held = await furnish(server.url, email)
    expect((await operator().delete(`/operator/v1/workspaces/${workspaceId}`)).status).toBe(204)
    await expectAllRefused(server.url, held)
  })
})
