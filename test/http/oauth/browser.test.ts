/**
 * Browser sign-in, consent and the account page in real chromium (Debian's, driven by playwright-core; one
 * browser for the file, a fresh context per test). The client is registered through POST /v1/oauth/register
 * with the loopback callback of a tiny server the test starts, so the browser never leaves the machine: every
 * other request is aborted. On every page: no console error, no uncaught exception, no Content-Security-Policy
 * violation, and each of the server's pages carries its policy.
 */
import { createServer, type Server } from "node:http"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, OPERATOR_TOKEN } from "../../support/server.js"
import {
  authorizeQuery,
  chromiumPath,
  me,
  newUser,
  type PasswordUser,
  pkce,
  read,
  registerClient,
  tokenRequest,
  useOAuthServer
} from "./support.js"

const server = useOAuthServer()

let browser: Browser | undefined
let callbackServer: Server | undefined
/** The callback server's origin (another port: another origin than the Convene server's, on the same site). */
let callbackOrigin = ""
/** Every request the callback server got: path and query. */
const arrived: Array<string> = []
/** The page an attacker serves: a form that posts to the Convene server's sign-in. */
let evilPage = ""

const clientName = "Acme Notes"
let clientId = ""

beforeAll(async () => {
  browser = await chromium.launch({ executablePath: chromiumPath(), args: ["--no-sandbox"] })
  callbackServer = createServer((request, response) => {
    arrived.push(request.url ?? "")
    const body = request.url?.startsWith("/evil") === true
      ? evilPage
      : `<!doctype html><html lang="en"><head><link rel="icon" href="data:,"><title>Done</title></head><body><p>You can close this window.</p></body></html>`
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(body)
  })
  await new Promise<void>((resolve) => callbackServer!.listen(0, "127.0.0.1", resolve))
  const address = callbackServer.address()
  if (typeof address !== "object" || address === null) throw new Error("no callback address")
  callbackOrigin = `http://127.0.0.1:${address.port}`
  const registered = await registerClient(server.url, {
    client_name: clientName,
    redirect_uris: [`${callbackOrigin}/callback`],
    scope: "openid meetings:read action-items:read"
  })
  clientId = registered.client_id
})

afterAll(async () => {
  await browser?.close()
  await new Promise((resolve) => callbackServer?.close(resolve))
})

/**
 * A new context and page that watch for problems: console errors, uncaught exceptions, CSP violations (as the
 * page sees them, from a listener set before any page script), server pages without a policy, and requests to
 * anywhere but the two local servers (aborted).
 */
const open = async (): Promise<{ readonly context: BrowserContext; readonly page: Page; readonly problems: Array<string>; readonly requested: Array<string> }> => {
  if (browser === undefined) throw new Error("the browser did not start")
  const context = await browser.newContext()
  const page = await context.newPage()
  const problems: Array<string> = []
  const requested: Array<string> = []
  const allowed = [new URL(server.url).origin, callbackOrigin]
  await context.route("**/*", (route) => {
    const url = route.request().url()
    requested.push(url)
    return allowed.includes(new URL(url).origin) || url.startsWith("data:") ? route.continue() : route.abort("blockedbyclient")
  })
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console error on ${page.url()}: ${message.text()}`)
  })
  page.on("pageerror", (error) => {
    problems.push(`uncaught on ${page.url()}: ${error.message}`)
  })
  page.on("response", (response) => {
    if (response.request().resourceType() !== "document" || !response.url().startsWith(server.url)) return
    const status = response.status()
    if (status >= 300 && status < 400) return
    const policy = response.headers()["content-security-policy"] ?? ""
    if (!policy.includes("default-src 'none'")) problems.push(`no policy on ${response.url()} (${status})`)
  })
  await context.exposeFunction("reportViolation", (violation: string) => {
    problems.push(`CSP violation: ${violation}`)
  })
  // (Given as text: the tests are compiled without the DOM's types.)
  await context.addInitScript({
    content: `document.addEventListener("securitypolicyviolation", (event) => {
      window.reportViolation(event.effectiveDirective + " blocked " + (event.blockedURI || "inline") + " on " + location.href)
    })`
  })
  return { context, page, problems, requested }
}

/**
 * The problems but Chromium's console line for a page served with an expected error status ("Failed to load
 * resource: the server responded with a status of 401"): the status is the page's, and the test checks it.
 */
const unexpected = (problems: ReadonlyArray<string>, statuses: ReadonlyArray<number>) =>
  problems.filter((problem) => !statuses.some((status) => problem.includes(`Failed to load resource: the server responded with a status of ${status} `)))

/** Fills the sign-in form by its labels and submits it; answers the POST's response. */
const submitSignIn = async (page: Page, email: string, password: string) => {
  await page.getByLabel("E-mail address").fill(email)
  await page.getByLabel("Password").fill(password)
  const [response] = await Promise.all([
    page.waitForResponse((response) => response.url() === `${server.url}/signin` && response.request().method() === "POST"),
    page.getByRole("button", { name: "Sign in" }).click()
  ])
  await page.waitForLoadState("load")
  return response
}

/** Starts an authorization request of the registered client and signs in: answers on the consent page. */
const toConsent = async (page: Page, user: PasswordUser) => {
  const values = await pkce()
  const redirectUri = `${callbackOrigin}/callback`
  const query = authorizeQuery({ clientId, redirectUri, scope: "openid meetings:read action-items:read", challenge: values.challenge, state: values.state })
  await page.goto(server.url + query)
  expect(new URL(page.url()).pathname).toBe("/signin")
  expect(new URL(page.url()).searchParams.get("continue")).toBe(query)
  await submitSignIn(page, user.email, user.password)
  expect(page.url()).toBe(server.url + query)
  return { values, redirectUri }
}

/** The query the callback server got last. */
const lastCallback = () => {
  const last = arrived.filter((path) => path.startsWith("/callback")).at(-1)
  if (last === undefined) throw new Error("the callback was not reached")
  return new URL(last, callbackOrigin).searchParams
}

describe("the consent flow of a registered client", () => {
  it("goes authorize → sign-in → consent → Approve → the callback with code, state and iss; the code gives tokens", async () => {
    const { context, page, problems, requested } = await open()
    const user = await newUser(server.url)
    const { values, redirectUri } = await toConsent(page, user)

    // The consent page names the client and lists the scopes asked for, in words and by name.
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toContain(clientName)
    const items = await page.getByRole("listitem").allTextContents()
    expect(items.map((item) => item.replace(/\s+/g, " ").trim())).toEqual([
      "Know who you are (your user id) openid",
      "Read your meetings, their agenda items and context meetings:read",
      "Read action items action-items:read"
    ])
    await expect(page.getByText(user.email).first().isVisible()).resolves.toBe(true)

    await page.getByRole("button", { name: "Approve" }).click()
    await page.waitForURL((url) => url.origin === callbackOrigin)
    const params = lastCallback()
    expect(params.get("state")).toBe(values.state)
    expect(params.get("iss")).toBe(`${server.url}/v1/oauth`)
    expect(params.get("error")).toBeNull()
    const code = params.get("code")
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/)

    const tokens = await tokenRequest(server.url, {
      grant_type: "authorization_code",
      code: code!,
      code_verifier: values.verifier,
      client_id: clientId,
      redirect_uri: redirectUri
    })
    expect(tokens.status).toBe(200)
    expect(tokens.body).toMatchObject({ token_type: "Bearer", expires_in: 3600 })
    expect(tokens.body.access_token).toMatch(/^svc_at_v1_/)
    expect(tokens.body.refresh_token).toMatch(/^svc_rt_v1_/)
    expect(tokens.body.scope.split(" ").sort()).toEqual(["action-items:read", "meetings:read", "openid"])
    expect(typeof tokens.body.id_token).toBe("string")
    const identity = await me(server.url, tokens.body.access_token)
    expect(identity.status).toBe(200)
    expect(identity.body.id).toBe(user.userId)
    // Only what was approved: reading meetings, not writing them.
    const auth = { authorization: `Bearer ${tokens.body.access_token}`, "content-type": "application/json" }
    expect((await fetch(`${server.url}/v1/meetings`, { headers: auth })).status).toBe(200)
    expect((await fetch(`${server.url}/v1/meetings`, { method: "POST", headers: auth, body: JSON.stringify({ title: "x" }) })).status).toBe(403)

    expect(requested.filter((url) => !url.startsWith(server.url) && !url.startsWith(callbackOrigin))).toEqual([])
    expect(problems).toEqual([])
    await context.close()
  })

  it("Deny goes back to the callback with error=access_denied, the state and iss, and no code", async () => {
    const { context, page, problems } = await open()
    const user = await newUser(server.url)
    const { values } = await toConsent(page, user)
    await page.getByRole("button", { name: "Deny" }).click()
    await page.waitForURL((url) => url.origin === callbackOrigin)
    const params = lastCallback()
    expect(params.get("error")).toBe("access_denied")
    expect(params.get("state")).toBe(values.state)
    expect(params.get("iss")).toBe(`${server.url}/v1/oauth`)
    expect(params.get("code")).toBeNull()
    expect(problems).toEqual([])
    await context.close()
  })
})

describe("the sign-in page", () => {
  it("shows a wrong password next to the form, announced, keeps the e-mail; the right one then signs in", async () => {
    const { context, page, problems } = await open()
    const user = await newUser(server.url)
    await page.goto(`${server.url}/signin`)
    const response = await submitSignIn(page, user.email, "not the password")
    expect(response.status()).toBe(401)
    expect(new URL(page.url()).pathname).toBe("/signin")

    const alert = page.getByRole("alert")
    await expect(alert.textContent()).resolves.toContain("Wrong e-mail address or password.")
    // The message is the form's description (announced with it), and it comes right before the form.
    const alertId = await alert.getAttribute("id")
    await expect(page.locator("form[action='/signin']").getAttribute("aria-describedby")).resolves.toBe(alertId)
    await expect(page.locator(`#${alertId} + form`).count()).resolves.toBe(1)
    await expect(page.getByLabel("E-mail address").inputValue()).resolves.toBe(user.email)
    await expect(page.getByLabel("Password").inputValue()).resolves.toBe("")

    await submitSignIn(page, user.email, user.password)
    expect(new URL(page.url()).pathname).toBe("/account")
    expect(unexpected(problems, [401])).toEqual([])
    await context.close()
  })

  it("refuses (403) a sign-in form posted from another origin, even with the right CSRF token", async () => {
    const { context, page, problems } = await open()
    const user = await newUser(server.url)
    // The victim has the sign-in page open (so the browser holds the CSRF cookie); the attacker even knows the
    // form's token. Its page on another origin posts the form to the server.
    await page.goto(`${server.url}/signin`)
    const csrf = await page.locator("input[name=csrf]").inputValue()
    evilPage = `<!doctype html><html lang="en"><head><link rel="icon" href="data:,"><title>Win a prize</title></head><body>
<form method="post" action="${server.url}/signin">
<input type="hidden" name="csrf" value="${csrf}">
<input type="hidden" name="email" value="${user.email}">
<input type="hidden" name="password" value="${user.password}">
<input type="hidden" name="continue" value="/account">
<button type="submit">Claim</button>
</form></body></html>`
    await page.goto(`${callbackOrigin}/evil`)
    const [response] = await Promise.all([
      page.waitForResponse((response) => response.url() === `${server.url}/signin` && response.request().method() === "POST"),
      page.getByRole("button", { name: "Claim" }).click()
    ])
    expect(response.status()).toBe(403)
    await page.waitForLoadState("load")
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("This form cannot be used")
    // Nobody was signed in.
    await page.goto(`${server.url}/account`)
    expect(new URL(page.url()).pathname).toBe("/signin")
    expect(unexpected(problems, [403])).toEqual([])
    await context.close()
  })

  it("refuses (403) its own form when the CSRF cookie is gone", async () => {
    const { context, page, problems } = await open()
    const user = await newUser(server.url)
    await page.goto(`${server.url}/signin`)
    await context.clearCookies()
    const response = await submitSignIn(page, user.email, user.password)
    expect(response.status()).toBe(403)
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("This form cannot be used")
    expect((await context.cookies()).map((cookie) => cookie.name)).not.toContain("convene_session")
    expect(unexpected(problems, [403])).toEqual([])
    await context.close()
  })

  it("never continues to another site: continue=https://evil.example/ ends on /account", async () => {
    const { context, page, problems, requested } = await open()
    const user = await newUser(server.url)
    for (const target of ["https://evil.example/", "//evil.example/", "/\\evil.example/"]) {
      await context.clearCookies()
      await page.goto(`${server.url}/signin?continue=${encodeURIComponent(target)}`)
      await submitSignIn(page, user.email, user.password)
      expect(page.url(), target).toBe(`${server.url}/account`)
    }
    expect(requested.filter((url) => new URL(url).hostname === "evil.example")).toEqual([])
    expect(problems).toEqual([])
    await context.close()
  })
})

describe("the account page", () => {
  it("issues a short-lived token through the form, shows it once; it works on /v1/me until it is deleted", async () => {
    const { context, page, problems } = await open()
    const user = await newUser(server.url)
    await page.goto(`${server.url}/account`)
    expect(new URL(page.url()).pathname).toBe("/signin")
    await submitSignIn(page, user.email, user.password)
    expect(page.url()).toBe(`${server.url}/account`)

    await page.getByLabel("Name").fill("Laptop script")
    await page.getByLabel(/^Short-lived token/).check()
    await page.getByLabel("A short-lived token expires after").selectOption("1")
    await page.getByLabel(/^Read your meetings/).check()
    const [issued] = await Promise.all([
      page.waitForResponse((response) => response.url() === `${server.url}/account/tokens` && response.request().method() === "POST"),
      page.getByRole("button", { name: "Issue token" }).click()
    ])
    expect(issued.status()).toBe(201)
    await page.waitForLoadState("load")
    const token = await page.getByLabel("Your new short-lived token").inputValue()
    expect(token).toMatch(/^svc_slt_v1_/)
    await expect(page.getByText("it will not be shown again", { exact: false }).isVisible()).resolves.toBe(true)

    const identity = await me(server.url, token)
    expect(identity.status).toBe(200)
    expect(identity.body.email).toBe(user.email)
    const introspected = await read(await fetch(`${server.url}/v1/auth/introspect`, { headers: { authorization: `Bearer ${token}` } }))
    const expires = Date.parse(introspected.body.expires_at)
    expect(Math.abs(expires - (Date.now() + 3_600_000))).toBeLessThan(120_000)

    // Shown once: the page opened again lists the token by name, not its value.
    await page.goto(`${server.url}/account`)
    await expect(page.content()).resolves.not.toContain(token)
    const row = page.getByRole("row").filter({ hasText: "Laptop script" })
    await expect(row.count()).resolves.toBe(1)
    await row.getByRole("button", { name: /^Delete/ }).click()
    await page.waitForURL(`${server.url}/account`)
    await expect(page.getByRole("row").filter({ hasText: "Laptop script" }).count()).resolves.toBe(0)
    expect((await me(server.url, token)).status).toBe(401)
    expect(problems).toEqual([])
    await context.close()
  })
})

describe("the consent flow of a partner app", () => {
  it("names the app, its scopes and the workspace; Approve connects the workspace and the code gives partner tokens", async () => {
    const { context, page, problems, requested } = await open()
    const user = await newUser(server.url, { role: "ADMIN" })
    const operator = client(server.url, OPERATOR_TOKEN)
    const redirectUri = `${callbackOrigin}/partner-callback`
    const created = await operator.post("/operator/v1/partner-apps", { name: "Acme Partner Notes", redirect_uris: [redirectUri] })
    expect(created.status).toBe(201)
    const app = created.body
    const state = "partner-state"
    const query = `/oauth2/authorize?${new URLSearchParams({
      response_type: "code",
      client_id: app.client_id,
      redirect_uri: redirectUri,
      scope: "meetings:read meetings:write",
      state
    })}`
    await page.goto(server.url + query)
    expect(new URL(page.url()).pathname).toBe("/signin")
    await submitSignIn(page, user.email, user.password)
    expect(page.url()).toBe(server.url + query)

    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toContain("Acme Partner Notes")
    const items = await page.getByRole("listitem").allTextContents()
    expect(items.map((item) => item.replace(/\s+/g, " ").trim())).toEqual([
      "Read your meetings, their agenda items and context meetings:read",
      "Create, change and delete meetings, agenda items and context meetings:write"
    ])
    await expect(page.getByText("OAuth workspace").first().isVisible()).resolves.toBe(true)
    await page.getByRole("button", { name: "Approve" }).click()
    await page.waitForURL((url) => url.origin === callbackOrigin)
    const params = new URL(arrived.filter((path) => path.startsWith("/partner-callback")).at(-1)!, callbackOrigin).searchParams
    expect(params.get("state")).toBe(state)
    expect(params.get("iss")).toBe(`${server.url}/oauth2`)

    const tokens = await fetch(`${server.url}/oauth2/token`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${btoa(`${app.client_id}:${app.client_secret}`)}`
      },
      body: new URLSearchParams({ grant_type: "authorization_code", code: params.get("code")!, redirect_uri: redirectUri })
    }).then(read)
    expect(tokens.status).toBe(200)
    expect(tokens.body.access_token).toMatch(/^svc_pua_v1_/)
    const workspaces = await client(server.url).get("/v1/partner/admin/workspaces", { "x-api-key": app.api_key, "x-client-id": app.client_id })
    expect(workspaces.body.items.map((item: { id: string }) => item.id)).toEqual([user.workspaceId])

    expect(requested.filter((url) => !url.startsWith(server.url) && !url.startsWith(callbackOrigin))).toEqual([])
    expect(problems).toEqual([])
    await context.close()
  })
})
