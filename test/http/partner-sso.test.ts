/**
 * Partner single sign-on end to end, against a real OpenID provider: panva's oidc-provider 9 on loopback HTTPS (a
 * test CA that the Convene server trusts through NodeOutbound's `ca`, CONVENE_OUTBOUND_ALLOW_HOSTS-style allowed
 * hosts), with a client whose redirect URI is Convene's callback and its dev interactions (any login, a consent
 * page). The Convene server runs in this process on a real socket over a throwaway PostgreSQL database, with a
 * clock the tests can move forward. The partner app is made through the operator API, its IdP configuration through
 * POST /v1/partner/admin/idp (discovery over HTTPS from the provider), the domain verification through the store; the
 * users connect the app through the real partner OAuth flow. Browsers: headless chromium (one for the file, a fresh
 * context per sign-in), every request off the machine aborted.
 */
import { HttpServer } from "@effect/platform"
import { ConveneWith, defaultLimits, type HostConfig } from "@convene/http"
import { DomainVerification, DomainVerificationStore, EmailDomain, PartnerAppId } from "@convene/core"
import * as StorePg from "@convene/store-pg"
import { Clock, DateTime, Effect, Layer, Logger, ManagedRuntime, Option, Redacted } from "effect"
import { exportJWK, generateKeyPair } from "jose"
import { createServer as createHttpServer, type Server } from "node:http"
import { createServer as createHttpsServer } from "node:https"
import type { AddressInfo } from "node:net"
import Provider from "oidc-provider"
import { type Browser, chromium } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { serverDatabase } from "../../packages/store-pg/test/fixtures.js"
import { client, OPERATOR_TOKEN } from "../support/server.js"
import { makeTestTls, type TestTls } from "../support/tls.js"
import { chromiumPath, freePort, PASSWORD, type PasswordUser } from "./oauth/support.js"
import { type App, partnerFlow } from "./oauth/partner-support.js"

const idpClientId = "convene-sso"
const idpClientSecret = "idp-secret-0123456789-abcdefghijklmnop"
const vaultKey = Buffer.alloc(32, 5).toString("base64")

/** How far the server's clock is ahead of the real one (the expiry and rate-limit tests move it). */
let offsetMs = 0
const base = Clock.make()
const shiftedClock: Clock.Clock = {
  [Clock.ClockTypeId]: Clock.ClockTypeId,
  unsafeCurrentTimeMillis: () => base.unsafeCurrentTimeMillis() + offsetMs,
  currentTimeMillis: Effect.sync(() => base.unsafeCurrentTimeMillis() + offsetMs),
  unsafeCurrentTimeNanos: () => base.unsafeCurrentTimeNanos() + BigInt(offsetMs) * 1_000_000n,
  currentTimeNanos: Effect.sync(() => base.unsafeCurrentTimeNanos() + BigInt(offsetMs) * 1_000_000n),
  sleep: (duration) => base.sleep(duration)
}

let tls: TestTls | undefined
let idpServer: ReturnType<typeof createHttpsServer> | undefined
let landingServer: Server | undefined
let browser: Browser | undefined
let runtime: ManagedRuntime.ManagedRuntime<unknown, unknown> | undefined
let run: <A, E>(effect: Effect.Effect<A, E, DomainVerificationStore>) => Promise<A> = () => Promise.reject(new Error("not started"))

let issuer = ""
let convene = ""
let landing = ""
/** Every request the app's landing page (the web target) got. */
const landed: Array<string> = []

const server = {
  get url() {
    return convene
  }
}
const flow = partnerFlow(server)

const listen = async (target: Server | ReturnType<typeof createHttpsServer>, port = 0) => {
  await new Promise<void>((resolve) => target.listen(port, "127.0.0.1", resolve))
  return (target.address() as AddressInfo).port
}

beforeAll(async () => {
  tls = await makeTestTls()
  idpServer = createHttpsServer({ key: tls.keyPem, cert: tls.certPem })
  issuer = `https://localhost:${await listen(idpServer)}`
  landingServer = createHttpServer((request, response) => {
    landed.push(request.url ?? "")
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
      .end(`<!doctype html><html lang="en"><head><link rel="icon" href="data:,"><title>Acme</title></head><body><p>Back at Acme</p></body></html>`)
  })
  landing = `http://127.0.0.1:${await listen(landingServer)}`
  const port = await freePort()
  convene = `http://127.0.0.1:${port}`

  const keys = await generateKeyPair("RS256", { extractable: true })
  const provider = new Provider(issuer, {
    clients: [{
      client_id: idpClientId,
      client_secret: idpClientSecret,
      redirect_uris: [`${convene}/v1/partner/sso/callback`],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic"
    }],
    // The dev interactions take any login: it is the account's e-mail address here.
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub, email: sub, email_verified: true }) }),
    claims: { openid: ["sub"], email: ["email", "email_verified"] },
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: true } },
    ttl: { AccessToken: 600, Grant: 600, IdToken: 600, Interaction: 600, Session: 600 },
    cookies: { keys: ["sso-test-cookie-key-0123456789"] },
    jwks: { keys: [{ ...(await exportJWK(keys.privateKey)), kid: "idp-key-1", alg: "RS256", use: "sig" }] }
  })
  idpServer.on("request", provider.callback())

  const config: HostConfig = {
    port,
    host: "127.0.0.1",
    baseUrl: convene,
    operatorToken: Option.some(Redacted.make(OPERATOR_TOKEN)),
    accessLog: false,
    tracing: false,
    limits: defaultLimits,
    identity: { authUrl: convene, browserSignIn: true, secretKey: Option.none() },
    outbound: { allowHosts: ["127.0.0.1", "localhost"], ca: [tls.caPem], smtpUrl: Option.none(), mailFrom: Option.none() },
    secretsKey: Option.some(Redacted.make(vaultKey))
  }
  const store = Layer.unwrapScoped(Effect.map(serverDatabase, (url) => StorePg.layerPg({ url })))
  const started = ManagedRuntime.make(
    // The store's ports beside the server (one build of `store`: layers are memoized by reference), for the tests' setup.
    Layer.merge(ConveneWith(config, store), store).pipe(
      Layer.provide(Logger.remove(Logger.defaultLogger)),
      Layer.provide(Layer.setClock(shiftedClock))
    )
  )
  runtime = started as ManagedRuntime.ManagedRuntime<unknown, unknown>
  await started.runPromise(HttpServer.HttpServer)
  run = (effect) => started.runPromise(effect)
  browser = await chromium.launch({ executablePath: chromiumPath(), args: ["--no-sandbox"] })
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await runtime?.dispose()
  await new Promise((resolve) => idpServer?.close(resolve))
  await new Promise((resolve) => landingServer?.close(resolve))
  await tls?.cleanup()
})

const operator = () => client(convene, OPERATOR_TOKEN)
const uid = () => crypto.randomUUID().slice(0, 8)

/** A Convene user with this e-mail address (and the tests' password), in a new workspace. */
const userWith = async (email: string): Promise<PasswordUser> => {
  const workspace = await operator().post("/operator/v1/workspaces", { name: "SSO workspace", plan: "PRO" })
  const name = "Ann Lee"
  const created = await operator().post(`/operator/v1/workspaces/${workspace.body.id}/users`, { email, name, role: "MEMBER", password: PASSWORD })
  if (created.status !== 201) throw new Error(`user creation failed: ${created.text}`)
  return { userId: created.body.id, workspaceId: workspace.body.id, email, name, role: "MEMBER", password: PASSWORD }
}

/** The app's domain, verified by the app (through the store: domain verification has its own end-to-end tests). */
const setVerification = (appId: string, domain: string, status: "verified" | "revoked") =>
  run(Effect.gen(function*() {
    const at = yield* DateTime.now
    yield* (yield* DomainVerificationStore).put(new DomainVerification({
      partner_app_id: PartnerAppId.make(appId),
      domain: EmailDomain.make(domain),
      status,
      challenge: `convene-domain-verification=${uid()}`,
      issued_at: at,
      expires_at: DateTime.add(at, { days: 7 }),
      verified_at: at,
      last_checked_at: at,
      last_proven_at: at,
      created_at: at,
      updated_at: at
    }))
  }))

/** POST /v1/partner/admin/idp for the app (its discovery document fetched from the provider over HTTPS). */
const configureIdp = async (app: App, body: Record<string, unknown>) => {
  const answer = await client(convene).post("/v1/partner/admin/idp", {
    name: "Acme IdP",
    discovery_url: `${issuer}/.well-known/openid-configuration`,
    idp_client_id: idpClientId,
    idp_client_secret: idpClientSecret,
    ...body
  }, { "x-api-key": app.api_key, "x-client-id": app.client_id })
  if (answer.status !== 201) throw new Error(`IdP configuration failed: ${answer.status} ${answer.text}`)
  return answer.body
}

interface Setup {
  readonly app: App
  readonly slug: string
  readonly domain: string
  /** A user of the domain who connected the app through its OAuth consent. */
  readonly ann: PasswordUser
}

/** A partner app whose landing page is the first redirect URI, strict mode over its verified domain, and Ann. */
const setup = async (): Promise<Setup> => {
  const app = await flow.createApp({ redirect_uris: [`${landing}/sso/done`, flow.redirectUri] })
  const domain = `corp-${uid()}.example`
  await setVerification(app.id, domain, "verified")
  await configureIdp(app, { mode: "strict", allowed_email_domains: [domain] })
  const ann = await userWith(`ann-${uid()}@${domain}`)
  await flow.tokensFor(ann, app, "openid profile meetings:read")
  return { app, slug: slugOf(app), domain, ann }
}

/** The app's slug (the operator's create answer shows it). */
const slugOf = (app: App) => (app as App & { readonly slug: string }).slug

/**
 * Drives a browser from `start` through the provider's sign-in (as `login`) and consent to wherever Convene sends it;
 * answers where the browser ended, the callback URL it passed through and the page's text.
 */
const signInWithBrowser = async (start: string, login: string, options: { readonly abort?: boolean } = {}) => {
  if (browser === undefined) throw new Error("no browser")
  const context = await browser.newContext({ ignoreHTTPSErrors: true })
  const local = [new URL(convene).origin, new URL(landing).origin, new URL(issuer).origin]
  await context.route("**/*", (route) => {
    const url = route.request().url()
    return local.includes(new URL(url).origin) || url.startsWith("data:") ? route.continue() : route.abort("blockedbyclient")
  })
  const page = await context.newPage()
  const visited: Array<string> = []
  page.on("request", (request) => {
    if (request.isNavigationRequest()) visited.push(request.url())
  })
  try {
    await page.goto(start)
    await page.waitForSelector('input[name="login"]')
    if (options.abort === true) {
      await page.click("text=[ Cancel ]")
    } else {
      await page.fill('input[name="login"]', login)
      await page.fill('input[name="password"]', "any password")
      await page.click('button[type="submit"]')
      await page.waitForSelector('button:has-text("Continue")')
      await page.click('button:has-text("Continue")')
    }
    await page.waitForURL((url) => url.origin === new URL(landing).origin || url.pathname === "/v1/partner/sso/callback")
    return {
      url: new URL(page.url()),
      callback: visited.find((url) => url.startsWith(`${convene}/v1/partner/sso/callback`)),
      text: (await page.textContent("body")) ?? ""
    }
  } finally {
    await context.close()
  }
}

const session = (id: string) => client(convene).get(`/v1/partner/sso/session/${id}`)

const expectEnvelope = (answer: { readonly status: number; readonly body: Record<string, unknown> }, status: number, code: string) => {
  expect(answer.status).toBe(status)
  expect(answer.body).toMatchObject({ code, request_id: expect.any(String), error: expect.any(String) })
  expect(Object.keys(answer.body).sort()).toEqual(["code", "error", "request_id"])
}

describe("partner single sign-on against oidc-provider", () => {
  let world: Setup

  beforeAll(async () => {
    world = await setup()
  }, 120_000)

  it("the web target: initiate?auto=true, sign-in and consent at the IdP, the callback, the app's page; the session reads completed once", async () => {
    const start = `${convene}/v1/partner/sso/initiate?slug=${world.slug}&auto=true`
    const redirect = await fetch(start, { redirect: "manual" })
    expect(redirect.status).toBe(302)
    const authorize = new URL(redirect.headers.get("location")!)
    expect(authorize.origin).toBe(issuer)
    expect(authorize.searchParams.get("code_challenge_method")).toBe("S256")

    const done = await signInWithBrowser(start, world.ann.email)
    expect(`${done.url.origin}${done.url.pathname}`).toBe(`${landing}/sso/done`)
    expect(done.url.searchParams.get("error")).toBeNull()
    const id = done.url.searchParams.get("sso_session_id")!
    // HEAD (a link checker, a prefetcher) cannot use the outcome up: only GET reads it.
    const head = await fetch(`${convene}/v1/partner/sso/session/${id}`, { method: "HEAD" })
    expect(head.status).toBe(405)
    expect(head.headers.get("allow")).toBe("GET")
    const polled = await session(id)
    expect(polled.status).toBe(200)
    expect(polled.headers.get("cache-control")).toBe("no-store")
    expect(polled.body).toMatchObject({
      session_id: id,
      status: "completed",
      target: "web",
      user: { user_id: world.ann.userId, email: world.ann.email, name: world.ann.name, workspace_id: world.ann.workspaceId }
    })
    expect(JSON.stringify(polled.body)).not.toMatch(/token/)
    expectEnvelope(await session(id), 404, "not_found")

    // The callback replayed: refused, nothing changes.
    expect(done.callback).toBeDefined()
    expect((await fetch(done.callback!, { method: "HEAD", redirect: "manual" })).status).toBe(405)
    const replay = await client(convene).get(done.callback!.slice(convene.length))
    expectEnvelope(replay, 409, "session_already_processed")
  })

  it("the desktop target: initiate answers the session and the URL; the browser ends on Convene's page while the app polls", async () => {
    const started = await client(convene).get(`/v1/partner/sso/initiate?slug=${world.slug}&target=desktop`)
    expect(started.status).toBe(200)
    expect(Object.keys(started.body).sort()).toEqual(["authorization_url", "expires_at", "session_id", "target"])
    expect((await session(started.body.session_id)).body).toMatchObject({ status: "pending", target: "desktop" })
    const done = await signInWithBrowser(started.body.authorization_url, world.ann.email)
    expect(done.url.pathname).toBe("/v1/partner/sso/callback")
    expect(done.text).toContain("Signed in")
    expect(done.text).toContain(world.app.name)
    expect((await session(started.body.session_id)).body).toMatchObject({ status: "completed", user: { user_id: world.ann.userId } })
  })

  it("an e-mail of a domain the configuration does not allow: the app's page with error=domain_not_allowed", async () => {
    const done = await signInWithBrowser(`${convene}/v1/partner/sso/initiate?slug=${world.slug}&auto=true`, `eve-${uid()}@other-${uid()}.example`)
    expect(done.url.searchParams.get("error")).toBe("domain_not_allowed")
    const polled = await session(done.url.searchParams.get("sso_session_id")!)
    expect(polled.body).toMatchObject({ status: "failed", error: "domain_not_allowed" })
    expect(polled.body.user).toBeUndefined()
  })

  it("strict mode with the domain's verification lost: error=domain_not_verified", async () => {
    await setVerification(world.app.id, world.domain, "revoked")
    try {
      const done = await signInWithBrowser(`${convene}/v1/partner/sso/initiate?slug=${world.slug}&auto=true`, world.ann.email)
      expect(done.url.searchParams.get("error")).toBe("domain_not_verified")
      expect((await session(done.url.searchParams.get("sso_session_id")!)).body).toMatchObject({ status: "failed", error: "domain_not_verified" })
    } finally {
      await setVerification(world.app.id, world.domain, "verified")
    }
  })

  it("a user of the domain who never connected the app: error=no_prior_connection (and the same for an unknown e-mail)", async () => {
    const bob = await userWith(`bob-${uid()}@${world.domain}`)
    for (const login of [bob.email, `ghost-${uid()}@${world.domain}`]) {
      const done = await signInWithBrowser(`${convene}/v1/partner/sso/initiate?slug=${world.slug}&auto=true`, login)
      expect(done.url.searchParams.get("error")).toBe("no_prior_connection")
    }
  })

  it("the user cancels at the IdP: its error parameter ends the session failed with idp_error", async () => {
    const done = await signInWithBrowser(`${convene}/v1/partner/sso/initiate?slug=${world.slug}&auto=true`, "", { abort: true })
    expect(done.url.searchParams.get("error")).toBe("idp_error")
    const polled = await session(done.url.searchParams.get("sso_session_id")!)
    expect(polled.body).toMatchObject({ status: "failed", error: "idp_error" })
    expect(polled.body.error_description).toContain("access_denied")
  })

  it("a session expires after 10 minutes: polled expired, and its late callback sends the browser back with session_expired", async () => {
    const started = await client(convene).get(`/v1/partner/sso/initiate?slug=${world.slug}`)
    const state = new URL(started.body.authorization_url).searchParams.get("state")!
    offsetMs = 10 * 60_000 + 1000
    try {
      expect((await session(started.body.session_id)).body).toMatchObject({ status: "expired" })
      const late = await fetch(`${convene}/v1/partner/sso/callback?code=late&state=${state}`, { redirect: "manual" })
      expect(late.status).toBe(302)
      const location = new URL(late.headers.get("location")!)
      expect(location.searchParams.get("error")).toBe("session_expired")
      expect(location.searchParams.get("sso_session_id")).toBe(started.body.session_id)
      expect((await session(started.body.session_id)).body).toMatchObject({ status: "expired" })
    } finally {
      offsetMs = 0
    }
  })

  it("a tampered or missing state cannot be tied to a session: 400 invalid_state in the partner envelope", async () => {
    const started = await client(convene).get(`/v1/partner/sso/initiate?slug=${world.slug}`)
    const state = new URL(started.body.authorization_url).searchParams.get("state")!
    const tampered = `${state.slice(0, 10)}${state[10] === "A" ? "B" : "A"}${state.slice(11)}`
    expectEnvelope(await client(convene).get(`/v1/partner/sso/callback?code=x&state=${tampered}`), 400, "invalid_state")
    expectEnvelope(await client(convene).get("/v1/partner/sso/callback?code=x"), 400, "invalid_state")
    // The session itself is untouched.
    expect((await session(started.body.session_id)).body).toMatchObject({ status: "pending" })
  })

  it("info and initiate: the app's fields, and every refusal in the partner envelope", async () => {
    const info = await client(convene).get(`/v1/partner/sso/info/${world.slug}`)
    expect(info.status).toBe(200)
    expect(info.body).toEqual({
      slug: world.slug,
      name: world.app.name,
      co_brand_name: null,
      co_brand_logo_url: null,
      has_idp_config: true,
      is_active: true
    })
    expectEnvelope(await client(convene).get("/v1/partner/sso/info/no-such-app"), 404, "not_found")
    expectEnvelope(await client(convene).get("/v1/partner/sso/initiate?slug=no-such-app"), 404, "not_found")
    expectEnvelope(await client(convene).get(`/v1/partner/sso/initiate?slug=${world.slug}&target=mobile`), 400, "invalid_request")
    expectEnvelope(await client(convene).get("/v1/partner/sso/initiate"), 400, "invalid_request")
    expectEnvelope(await client(convene).get("/v1/partner/sso/session/no-such-session"), 404, "not_found")
    const bare = await flow.createApp()
    const bareSlug = slugOf(bare)
    expect((await client(convene).get(`/v1/partner/sso/info/${bareSlug}`)).body).toMatchObject({ has_idp_config: false, is_active: false })
    expectEnvelope(await client(convene).get(`/v1/partner/sso/initiate?slug=${bareSlug}`), 400, "sso_not_configured")
    await operator().patch(`/operator/v1/partner-apps/${bare.id}`, { status: "suspended" })
    expectEnvelope(await client(convene).get(`/v1/partner/sso/initiate?slug=${bareSlug}`), 403, "partner_app_inactive")
  })

  it("info allows 30 requests a minute per client address, then 429 with Retry-After in the partner body", async () => {
    // The server's clock moved to the start of a minute nobody has used yet.
    const now = Date.now()
    offsetMs = Math.ceil((now + 60_000) / 60_000) * 60_000 - now + 100
    try {
      const statuses: Array<number> = []
      for (let i = 0; i < 30; i++) statuses.push((await client(convene).get(`/v1/partner/sso/info/${world.slug}`)).status)
      expect(statuses).toEqual(Array<number>(30).fill(200))
      const refused = await client(convene).get(`/v1/partner/sso/info/${world.slug}`)
      expect(refused.status).toBe(429)
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
      expect(refused.body).toMatchObject({ error: "rate_limit_exceeded", code: "rate_limit_exceeded", request_id: expect.any(String) })
      // Only info is counted so: initiate and polling go on.
      expect((await client(convene).get(`/v1/partner/sso/initiate?slug=${world.slug}`)).status).toBe(200)
    } finally {
      offsetMs = 0
    }
  })
})
