/**
 * The API reference at /docs, in a real browser: Debian's chromium driven by playwright-core (no browser is
 * downloaded; CHROMIUM_PATH names another binary). One browser, one page load: the operations render, every
 * request the page makes goes to the server itself, and no Content-Security-Policy violation, console error
 * or uncaught exception occurs. An installation in a private network must not call out.
 */
import { execFileSync } from "node:child_process"
import { type Browser, chromium } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { useServer } from "./fixtures.js"

/** The chromium binary: CHROMIUM_PATH, else the one on the PATH (Debian: `apt-get install -y chromium`). */
const chromiumPath = (): string => {
  if (process.env.CHROMIUM_PATH !== undefined && process.env.CHROMIUM_PATH !== "") return process.env.CHROMIUM_PATH
  try {
    return execFileSync("which", ["chromium"], { encoding: "utf8" }).trim()
  } catch {
    throw new Error("the /docs browser test needs chromium: `apt-get install -y chromium`, or set CHROMIUM_PATH")
  }
}

// The store plays no part in the reference page: it runs once, in the suite on the in-memory store
// (test/vitest.config.ts leaves it out of the PGlite project).
describe("/docs in a browser", () => {
  const server = useServer()
  let browser: Browser | undefined

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: chromiumPath(), args: ["--no-sandbox"] })
  })
  afterAll(async () => {
    await browser?.close()
  })

  it("renders the operations from this server alone, with no CSP violation or console error", async () => {
    if (browser === undefined) throw new Error("the browser did not start")
    const origin = new URL(server.url).origin
    const context = await browser.newContext()
    const page = await context.newPage()
    const requests: Array<string> = []
    const problems: Array<string> = []
    page.on("request", (request) => {
      requests.push(request.url())
    })
    // Errors only: the bundle warns about its own strict reading of nullable schemas (`anyOf` with
    // `{type: "null"}`, valid OpenAPI 3.1), which changes nothing on the page.
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(`console error: ${message.text()}`)
    })
    page.on("pageerror", (error) => {
      problems.push(`uncaught: ${error.message}`)
    })
    // Nothing may leave the machine even if a request were attempted: anything not for the server is aborted
    // (and still recorded above).
    await context.route("**/*", (route) =>
      new URL(route.request().url()).origin === origin ? route.continue() : route.abort("blockedbyclient"))
    // Violations of the page's policy as the page sees them, reported by a listener set before any page script
    // runs. One is expected and harmless: the bundle's schema library probes once whether it may compile
    // validators with `new Function` and, refused, interprets them instead.
    const violations: Array<string> = []
    await page.exposeFunction("reportViolation", (violation: string) => {
      violations.push(violation)
    })
    // (Given as text: the tests are compiled without the DOM's types.)
    await page.addInitScript({
      content: `document.addEventListener("securitypolicyviolation", (event) => {
        window.reportViolation((event.effectiveDirective + " blocked " + (event.blockedURI || "inline") + " " + event.sample).trim())
      })`
    })

    const response = await page.goto(`${server.url}/docs`, { waitUntil: "load" })
    expect(response?.status()).toBe(200)
    const policy = response?.headers()["content-security-policy"] ?? ""
    expect(policy).toContain("default-src 'none'")
    expect(policy).toContain("script-src 'self'")
    expect(policy).not.toMatch(/https?:|\*|'unsafe-eval'/)
    expect(policy.split(";").find((directive) => directive.trim().startsWith("script-src"))).not.toContain("'unsafe-inline'")

    // Operations of several groups, by the summaries the contract gives them. The reference renders the later
    // groups lazily in the browser's idle time: on a machine whose cores the rest of the suite keeps busy that took
    // over 45 s in one CI run (4 s when quiet), hence the long wait.
    for (const summary of ["Create a meeting", "List meetings", "Create an agenda item", "Create an action item", "Issue a personal access token"]) {
      await page.getByText(summary, { exact: true }).first().waitFor({ state: "visible", timeout: 120_000 })
    }
    // The document was read from this server, and the operator's paths are not in it.
    expect(requests).toContain(`${origin}/v1/openapi.json`)
    await expect(page.getByText("/operator/v1", { exact: false }).count()).resolves.toBe(0)
    // Give late requests (fonts, telemetry, lazy chunks) a moment to show up.
    await page.waitForTimeout(500)

    const external = requests.filter((url) => !url.startsWith("data:") && new URL(url).origin !== origin)
    expect(external, `requests that left the server:\n${external.join("\n")}`).toEqual([])
    expect(problems, problems.join("\n")).toEqual([])
    expect(violations.filter((violation) => violation !== "script-src blocked eval")).toEqual([])
    await context.close()
  }, 300_000)
})
