/**
 * The authorization server's pages (packages/http/src/pages), rendered by their functions and served with their
 * own Content-Security-Policy by a small node:http server in this file, then loaded in Debian's chromium driven
 * by playwright-core (no browser is downloaded; CHROMIUM_PATH names another binary). One browser for the file.
 * Chromium reports a policy violation as a console error, so "no console error" covers "no violation"; one test
 * shows a violation is seen (the consent form without its redirect target in form-action).
 */
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { type Browser, chromium, type Page as BrowserPage, type Response } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Html, Pages, Stylesheet } from "../../packages/http/src/pages/index.js"

/** The chromium binary: CHROMIUM_PATH, else the one on the PATH (Debian: `apt-get install -y chromium`). */
const chromiumPath = (): string => {
  if (process.env.CHROMIUM_PATH !== undefined && process.env.CHROMIUM_PATH !== "") return process.env.CHROMIUM_PATH
  try {
    return execFileSync("which", ["chromium"], { encoding: "utf8" }).trim()
  } catch {
    throw new Error("the pages' browser test needs chromium: `apt-get install -y chromium`, or set CHROMIUM_PATH")
  }
}

const hostileName = "<script>alert(1)</script>"
const hostileEmail = `"'><img src=x onerror=alert(2)>@example.com`
const postedEmail = "o'neil&co@example.com"
const hostileRequest = `r"><script>alert(3)</script>&amp;`
const loopback = "http://127.0.0.1:*"

const scopes = [
  { scope: "meetings:read", description: "See your meetings" },
  { scope: "action-items:write", description: "Create and change action items" }
]

const consentInput = {
  clientName: "Acme Notes",
  clientUri: "https://notes.example.com/",
  redirectOrigin: "http://127.0.0.1",
  scopes,
  csrfToken: "csrf-consent",
  requestToken: "request-1",
  userEmail: "ada@example.com",
  formActionSources: [loopback]
}

const accountInput = {
  userEmail: "ada@example.com",
  csrfToken: "csrf-account",
  tokens: [
    {
      id: "0b6f6f3e-5a7c-4f7e-9c1d-2f0a1b2c3d4e",
      name: "laptop",
      kind: "personal_access_token",
      scopes: ["meetings:read"],
      expires_at: "2031-01-01T00:00:00.000Z",
      created_at: "2030-10-03T09:15:00.000Z"
    },
    { id: "1c7e", name: null, kind: "short_lived", scopes: ["meetings:read", "calendar:read"], expires_at: null, created_at: "2030-10-03T09:20:00Z" }
  ],
  scopeChoices: [
    { scope: "meetings:read", description: "See your meetings", allowed: true },
    { scope: "calendar:read", description: "See your calendar", allowed: true },
    { scope: "workspace:write", description: "Manage the workspace", allowed: false, personalAccessTokenOnly: true }
  ],
  personalAccessTokensAllowed: true
}

const issuedToken = "svc_slt_v1_Zm9vYmFyYmF6cXV4cXV1eHF1dXhxdXV4cXV1eHF1dXg"

/** The pages the test server serves, by path. */
const pages: Record<string, Pages.Page> = {
  "/signin": Pages.signIn({ continueUrl: "/v1/oauth/authorize?client_id=a&state=b", csrfToken: "csrf-signin", notice: "You have signed out." }),
  "/signin-field-error": Pages.signIn({
    continueUrl: "/",
    csrfToken: "csrf-signin",
    email: "ada@example",
    error: { field: "email", message: "Enter an e-mail address such as ada@example.com." }
  }),
  "/signin-form-error": Pages.signIn({
    continueUrl: "/",
    csrfToken: "csrf-signin",
    email: hostileEmail,
    error: { field: "form", message: "Too many attempts: try again in 5 minutes." },
    status: 429
  }),
  "/consent": Pages.consent(consentInput),
  "/consent-hostile": Pages.consent({
    ...consentInput,
    clientName: hostileName,
    clientUri: "javascript:alert(4)",
    userEmail: hostileEmail,
    requestToken: hostileRequest
  }),
  "/consent-self-only": Pages.consent({ ...consentInput, formActionSources: [] }),
  "/error": Pages.error({
    status: 400,
    title: "Unknown application",
    message: "This link names an application that this server does not know."
  }),
  "/account": Pages.account(accountInput),
  "/account-issued": Pages.account({
    ...accountInput,
    issued: { token: issuedToken, kind: "short_lived", expires_at: "2030-10-03T10:20:00Z" }
  }),
  "/account-error": Pages.account({
    ...accountInput,
    personalAccessTokensAllowed: false,
    planMessage: "Personal access tokens come with the Pro plan.",
    values: { name: "ci", scopes: [] },
    error: { field: "scopes", message: "Choose at least one scope." }
  })
}

interface Posted {
  readonly path: string
  readonly form: URLSearchParams
}

const readBody = (request: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    request.on("error", reject)
  })

const listen = (server: Server): Promise<string> =>
  new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))
  })

const close = (server: Server | undefined): Promise<void> =>
  new Promise((resolve) => (server === undefined ? resolve() : server.close(() => resolve())))

describe("the authorization server's pages", () => {
  let browser: Browser | undefined
  let page: BrowserPage | undefined
  let seen: { problems: Array<string>; dialogs: Array<string> } = { problems: [], dialogs: [] }
  let app: Server | undefined
  let callback: Server | undefined
  let origin = ""
  let callbackOrigin = ""
  const posted: Array<Posted> = []

  beforeAll(async () => {
    // The client's redirect target: another origin (another port), as a loopback redirect URI is.
    callback = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end("back at the client")
    })
    app = createServer((request, response) => {
      const path = new URL(request.url ?? "/", "http://localhost").pathname
      if (request.method === "POST") {
        void readBody(request).then((body) => {
          posted.push({ path, form: new URLSearchParams(body) })
          // The authorization response goes to the client; every other form comes back to this server.
          const location = path === Pages.actions.authorize ? `${callbackOrigin}/callback?code=c` : "/received"
          response.writeHead(303, { location }).end()
        })
        return
      }
      if (path === Stylesheet.path) {
        response.writeHead(200, {
          "content-type": Stylesheet.contentType,
          etag: Stylesheet.etag,
          "x-content-type-options": "nosniff"
        }).end(Stylesheet.css)
        return
      }
      if (path === "/favicon.ico") {
        // Asked for by the plain-text page that answers a post (the pages themselves name an empty icon).
        response.writeHead(204).end()
        return
      }
      if (path === "/received") {
        response.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end("received")
        return
      }
      const page = pages[path]
      if (page === undefined) {
        response.writeHead(404).end()
        return
      }
      response.writeHead(page.status, { ...Pages.headers(page), "content-type": Pages.contentType }).end(page.html)
    })
    ;[origin, callbackOrigin] = await Promise.all([listen(app), listen(callback)])
    browser = await chromium.launch({ executablePath: chromiumPath(), args: ["--no-sandbox"] })
    const opened = await browser.newPage()
    opened.on("console", (message) => {
      if (message.type() !== "error") return
      // A page served with an error status (400, 429) is logged as a failed load of the document itself.
      const documentStatus = /^Failed to load resource: the server responded with a status of \d+/.test(message.text()) &&
        message.location().url === opened.url()
      if (!documentStatus) seen.problems.push(`console error: ${message.text()}`)
    })
    opened.on("pageerror", (error) => seen.problems.push(`uncaught: ${error.message}`))
    opened.on("dialog", (dialog) => {
      seen.dialogs.push(dialog.message())
      void dialog.dismiss()
    })
    opened.on("requestfailed", (request) => seen.problems.push(`failed: ${request.url()}`))
    opened.on("request", (request) => {
      const url = request.url()
      if (!url.startsWith("data:") && ![origin, callbackOrigin].includes(new URL(url).origin)) seen.problems.push(`left: ${url}`)
    })
    page = opened
  })
  afterAll(async () => {
    await browser?.close()
    await Promise.all([close(app), close(callback)])
  })

  /**
   * The file's one page at `path`, with what goes wrong there from now on: console errors (CSP violations among
   * them), uncaught exceptions, dialogs (an alert would mean injected script ran), failed requests and requests
   * to anywhere but the two test servers. (One page for the file: a new one costs a renderer process.)
   */
  const open = async (path: string) => {
    if (page === undefined) throw new Error("the browser did not start")
    seen = { problems: [], dialogs: [] }
    const response = await page.goto(`${origin}${path}`, { waitUntil: "load" })
    if (response === null) throw new Error(`no response for ${path}`)
    return { page, ...seen, response }
  }

  const lastPost = (path: string): URLSearchParams => {
    const post = posted.filter((entry) => entry.path === path).at(-1)
    if (post === undefined) throw new Error(`nothing was posted to ${path}`)
    return post.form
  }

  /** Every control the accessibility tree exposes, with its role and accessible name and description. */
  const controls = async (page: BrowserPage) => {
    const cdp = await page.context().newCDPSession(page)
    const { nodes } = await cdp.send("Accessibility.getFullAXTree")
    await cdp.detach()
    const roles = ["textbox", "checkbox", "radio", "combobox", "button", "searchbox", "spinbutton"]
    return nodes
      .filter((node) => node.ignored !== true && roles.includes(String(node.role?.value)))
      .map((node) => ({
        role: String(node.role?.value),
        name: String(node.name?.value ?? ""),
        description: String(node.description?.value ?? "")
      }))
  }

  /** What an element's `aria-describedby` points at: every id resolves, and their texts. */
  const describedBy = async (page: BrowserPage, selector: string): Promise<string> => {
    const ids = (await page.locator(selector).first().getAttribute("aria-describedby"))?.split(" ") ?? []
    const texts: Array<string> = []
    for (const id of ids) {
      await expect(page.locator(`[id="${id}"]`).count()).resolves.toBe(1)
      texts.push(await page.locator(`[id="${id}"]`).innerText())
    }
    return texts.join(" ")
  }

  const policy = (response: Response) => response.headers()["content-security-policy"]

  it("escapes text and attribute values, composes fragments and arrays, and drops null, undefined and false", () => {
    const text = `& < > " '`
    expect(Html.render(Html.html`<p title="${text}">${text}</p>`)).toBe(
      `<p title="&amp; &lt; &gt; &quot; &#39;">&amp; &lt; &gt; &quot; &#39;</p>`
    )
    const item = (value: string) => Html.html`<li>${value}</li>`
    expect(Html.render(Html.html`<ul>${["a", "<b>"].map(item)}${null}${undefined}${false}${0}</ul>`)).toBe(
      "<ul><li>a</li><li>&lt;b&gt;</li>0</ul>"
    )
    // A look-alike object is text, not markup: only `html` makes fragments.
    expect(Html.render(Html.html`${String({ text: "<b>" })}`)).toBe("[object Object]")
  })

  it("gives each page its policy, and refuses a form-action source that would add to the header", () => {
    const base = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    for (const path of ["/signin", "/error", "/account", "/consent-self-only"]) {
      expect(pages[path]?.contentSecurityPolicy).toBe(base)
    }
    expect(pages["/consent"]?.contentSecurityPolicy).toBe(
      "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self' http://127.0.0.1:*; base-uri 'none'; frame-ancestors 'none'"
    )
    expect(Pages.contentSecurityPolicy(["com.example.app:", "https://app.example.com", "com.example.app:"])).toContain(
      "form-action 'self' com.example.app: https://app.example.com;"
    )
    for (const source of ["https://a.example; script-src *", "https://a.example https://b.example", "'unsafe-inline'", "a,b", ""]) {
      expect(() => Pages.contentSecurityPolicy([source]), source).toThrow(/CSP source/)
    }
    expect(Pages.headers(pages["/signin"]!)).toEqual({
      "x-content-type-options": "nosniff",
      "referrer-policy": "same-origin",
      "cache-control": "no-store",
      "x-frame-options": "DENY",
      "content-security-policy": base
    })
    expect(Stylesheet.etag).toBe(`"${createHash("sha256").update(Stylesheet.css).digest("base64url").slice(0, 27)}"`)
  })

  it("every page: a whole document with one main and one h1, no script or inline style, styled, no console error", async () => {
    for (const [path, rendered] of Object.entries(pages)) {
      expect(rendered.html.startsWith("<!doctype html>\n<html lang=\"en\">"), path).toBe(true)
      expect(rendered.html, path).toContain(`<meta name="viewport" content="width=device-width, initial-scale=1">`)
      expect(rendered.html, path).toContain(`<link rel="stylesheet" href="/assets/convene.css">`)
      expect(rendered.html, path).toContain(`<link rel="icon" href="data:,">`)
      expect(rendered.html, path).not.toMatch(/<script|<style|\sstyle=/i)

      const { page, problems, dialogs, response } = await open(path)
      expect(response.status(), path).toBe(rendered.status)
      expect(policy(response), path).toBe(rendered.contentSecurityPolicy)
      await expect(page.title(), path).resolves.toMatch(/ · Convene$/)
      await expect(page.locator("main").count(), path).resolves.toBe(1)
      await expect(page.locator("h1").count(), path).resolves.toBe(1)
      await expect(page.locator("script, style, [style], img").count(), path).resolves.toBe(0)
      // The stylesheet applied: the column is narrowed (unstyled, main has no max-width).
      await expect(page.evaluate("getComputedStyle(document.querySelector('main')).maxWidth"), path).resolves.toMatch(/^\d+px$/)
      // Every control has an accessible name.
      const unnamed = (await controls(page)).filter((control) => control.name.trim() === "")
      expect(unnamed, path).toEqual([])
      expect(problems, `${path}\n${problems.join("\n")}`).toEqual([])
      expect(dialogs, path).toEqual([])
    }
  })

  it("sign-in: labelled fields, errors linked to their field, and the form posts email, password, continue and csrf", async () => {
    const fieldError = await open("/signin-field-error")
    const email = fieldError.page.getByLabel("E-mail address")
    await expect(email.getAttribute("aria-invalid")).resolves.toBe("true")
    await expect(describedBy(fieldError.page, "#email")).resolves.toBe("Enter an e-mail address such as ada@example.com.")
    await expect(fieldError.page.getByRole("alert").innerText()).resolves.toBe("Enter an e-mail address such as ada@example.com.")
    const emailControl = (await controls(fieldError.page)).find((control) => control.name === "E-mail address")
    expect(emailControl?.description).toBe("Enter an e-mail address such as ada@example.com.")
    await expect(fieldError.page.getByLabel("Password").getAttribute("aria-invalid")).resolves.toBeNull()

    const formError = await open("/signin-form-error")
    await expect(formError.page.locator("form").getAttribute("aria-describedby")).resolves.toBe("form-error")
    await expect(formError.page.getByRole("alert").innerText()).resolves.toBe("Too many attempts: try again in 5 minutes.")
    await expect(formError.page.locator("[aria-invalid]").count()).resolves.toBe(0)
    // The hostile address is the field's value, character for character, and nothing ran.
    await expect(formError.page.getByLabel("E-mail address").inputValue()).resolves.toBe(hostileEmail)
    // (Not a valid address for the browser's own check: a valid one with characters to escape is sent.)
    await formError.page.getByLabel("E-mail address").fill(postedEmail)
    await formError.page.getByLabel("Password").fill("correct horse")
    await formError.page.getByRole("button", { name: "Sign in" }).click()
    await formError.page.waitForURL(`${origin}/received`, { timeout: 5_000 })
    const form = lastPost(Pages.actions.signIn)
    expect([...form.keys()].sort()).toEqual(["continue", "csrf", "email", "password"])
    expect(form.get("email")).toBe(postedEmail)
    expect(form.get("password")).toBe("correct horse")
    expect(form.get("csrf")).toBe("csrf-signin")
    expect(form.get("continue")).toBe("/")
    expect(formError.problems).toEqual([])
    expect(formError.dialogs).toEqual([])

    const plain = await open("/signin")
    await expect(plain.page.getByRole("status").innerText()).resolves.toBe("You have signed out.")
    await expect(plain.page.getByLabel("E-mail address").getAttribute("autocomplete")).resolves.toBe("username")
    await expect(plain.page.getByLabel("Password").getAttribute("autocomplete")).resolves.toBe("current-password")
  })

  it("consent: each button posts its decision with csrf and request, and the redirect to the client is allowed", async () => {
    for (const decision of ["approve", "deny"] as const) {
      const { page, problems } = await open("/consent")
      await expect(page.getByRole("heading", { level: 1 }).innerText()).resolves.toContain("Acme Notes")
      await expect(page.locator("header").innerText()).resolves.toContain("Signed in as ada@example.com")
      await expect(page.locator("main").innerText()).resolves.toMatch(/registered by a third party/)
      await expect(page.locator("main").innerText()).resolves.toContain("http://127.0.0.1")
      const listed = await page.locator(".scopes li").allInnerTexts()
      expect(listed.map((text) => text.replace(/\s+/g, " "))).toEqual([
        "See your meetings meetings:read",
        "Create and change action items action-items:write"
      ])
      await page.getByRole("button", { name: decision === "approve" ? "Approve" : "Deny" }).click()
      await page.waitForURL(`${callbackOrigin}/callback?code=c`, { timeout: 5_000 })
      const form = lastPost(Pages.actions.authorize)
      expect(Object.fromEntries(form)).toEqual({ csrf: "csrf-consent", request: "request-1", decision })
      expect(problems, problems.join("\n")).toEqual([])
    }
  })

  it("consent: without the client's source in form-action, Chromium blocks the redirect and reports it", async () => {
    const { page, problems } = await open("/consent-self-only")
    const reported = page.waitForEvent("console", {
      predicate: (message) => message.type() === "error" && /form-action/.test(message.text()),
      timeout: 5_000
    })
    await page.getByRole("button", { name: "Approve" }).click()
    await reported
    expect(lastPost(Pages.actions.authorize).get("decision")).toBe("approve")
    expect(page.url().startsWith(callbackOrigin)).toBe(false)
    expect(problems.some((problem) => problem.includes("form-action"))).toBe(true)
  })

  it("consent: hostile client name, e-mail and request token are shown and posted as text; nothing runs", async () => {
    const { page, problems, dialogs } = await open("/consent-hostile")
    await expect(page.getByRole("heading", { level: 1 }).innerText()).resolves.toBe(`Allow ${hostileName} to use your Convene account?`)
    await expect(page.locator("header").innerText()).resolves.toContain(hostileEmail)
    await expect(page.locator("script, img").count()).resolves.toBe(0)
    // A client URI that is not http(s) is not a link.
    await expect(page.locator("a").count()).resolves.toBe(0)
    await expect(page.locator("main code").first().innerText()).resolves.toBe("javascript:alert(4)")
    await page.getByRole("button", { name: "Deny" }).click()
    await page.waitForURL(`${callbackOrigin}/callback?code=c`, { timeout: 5_000 })
    expect(lastPost(Pages.actions.authorize).get("request")).toBe(hostileRequest)
    expect(dialogs).toEqual([])
    expect(problems, problems.join("\n")).toEqual([])
  })

  it("error page: the title and message in plain words", async () => {
    const { page } = await open("/error")
    await expect(page.getByRole("heading", { level: 1 }).innerText()).resolves.toBe("Unknown application")
    await expect(page.locator("main").innerText()).resolves.toContain("This link names an application that this server does not know.")
    await expect(page.locator("form").count()).resolves.toBe(0)
  })

  it("account: the issued token once, in a read-only field; the issue form, delete and sign-out post their fields", async () => {
    const issued = await open("/account-issued")
    const field = issued.page.getByLabel("Your new short-lived token")
    await expect(field.inputValue()).resolves.toBe(issuedToken)
    await expect(field.isEditable()).resolves.toBe(false)
    await expect(describedBy(issued.page, "#issued-token")).resolves.toMatch(/will not be shown again/)
    expect((await issued.page.content()).split(issuedToken).length - 1).toBe(1)

    const { page, problems } = await open("/account")
    await expect(page.locator("#issued-token").count()).resolves.toBe(0)
    expect(pages["/account"]?.html).not.toContain("svc_")
    // The live tokens, one row each, with a delete button named after its token.
    await expect(page.locator("tbody tr").count()).resolves.toBe(2)
    await expect(page.getByRole("button", { name: /^Delete laptop/ }).count()).resolves.toBe(1)
    await expect(page.getByRole("button", { name: /^Delete Short-lived token/ }).count()).resolves.toBe(1)
    await expect(page.getByRole("group", { name: "Scopes" }).count()).resolves.toBe(1)
    await expect(page.getByRole("group", { name: "Kind" }).count()).resolves.toBe(1)
    await expect(page.getByLabel("Manage the workspace").isDisabled()).resolves.toBe(true)

    await page.getByLabel("Name").fill("backup script")
    await page.getByRole("radio", { name: /^Personal access token/ }).check()
    await page.getByLabel("A personal access token expires after").selectOption("90")
    await page.getByLabel("See your meetings").check()
    await page.getByLabel("See your calendar").check()
    await page.getByRole("button", { name: "Issue token" }).click()
    await page.waitForURL(`${origin}/received`, { timeout: 5_000 })
    const form = lastPost(Pages.actions.issueToken)
    expect({ ...Object.fromEntries(form), scopes: form.getAll("scopes") }).toEqual({
      csrf: "csrf-account",
      name: "backup script",
      kind: "personal_access_token",
      expiry_hours: "1",
      expiry_days: "90",
      scopes: ["meetings:read", "calendar:read"]
    })

    await page.goto(`${origin}/account`)
    await page.getByRole("button", { name: /^Delete laptop/ }).click()
    await page.waitForURL(`${origin}/received`, { timeout: 5_000 })
    expect(Object.fromEntries(lastPost(Pages.actions.deleteToken("0b6f6f3e-5a7c-4f7e-9c1d-2f0a1b2c3d4e")))).toEqual({
      csrf: "csrf-account"
    })

    await page.goto(`${origin}/account`)
    await page.getByRole("button", { name: "Sign out" }).click()
    await page.waitForURL(`${origin}/received`, { timeout: 5_000 })
    expect(Object.fromEntries(lastPost(Pages.actions.signOut))).toEqual({ csrf: "csrf-account" })
    expect(problems, problems.join("\n")).toEqual([])
  })

  it("account: an error is linked to its field; without the plan, the personal access token kind is off", async () => {
    const { page } = await open("/account-error")
    await expect(page.getByRole("alert").innerText()).resolves.toBe("Choose at least one scope.")
    await expect(page.getByLabel("See your meetings").getAttribute("aria-invalid")).resolves.toBe("true")
    await expect(describedBy(page, "#scope-0")).resolves.toBe("Choose at least one scope.")
    await expect(describedBy(page, "fieldset:has(#scope-0)")).resolves.toBe("Choose at least one scope.")
    await expect(page.getByLabel("Name").inputValue()).resolves.toBe("ci")
    await expect(page.getByLabel("Name").getAttribute("aria-invalid")).resolves.toBeNull()
    const personal = page.getByRole("radio", { name: /^Personal access token/ })
    await expect(personal.isDisabled()).resolves.toBe(true)
    await expect(describedBy(page, "#kind-personal")).resolves.toBe("Personal access tokens come with the Pro plan.")
    await expect(page.getByLabel("A personal access token expires after").isDisabled()).resolves.toBe(true)
    await expect(page.getByRole("radio", { name: /^Short-lived token/ }).isChecked()).resolves.toBe(true)
  })
}, 60_000)
