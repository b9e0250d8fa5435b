/**
 * Helpers of the OAuth and browser sign-in tests.
 *
 * - `useOAuthServer`: one real server per file whose base URL names the port it listens on. The issuer
 *   (`{base_url}/v1/oauth`), the endpoints of the discovery document and the pages' origin (which the CSRF
 *   defence compares with the Origin header) all derive from the base URL, so it must be where the server
 *   really is; `startServer` leaves the port out of it. The port is reserved first, then the server is built
 *   with it. `baseUrl` may name another origin (an https one, to read the cookies such a server sets), and so
 *   may `authUrl` (CONVENE_AUTH_URL: where a proxy in front serves the browser pages); `browserSignIn: false`
 *   turns browser sign-in off (CONVENE_BROWSER_SIGNIN=false).
 * - Users with a password (sign-in needs one), created through the operator API.
 * - A cookie jar and form posts made the way a browser makes them (Origin header, cookies, no redirect
 *   followed), the sign-in form filled in over HTTP, PKCE values, and the RFC 6749 error check.
 */
import { HttpServer } from "@effect/platform"
import type { StorePorts } from "@convene/core"
import { ConveneWith, defaultLimits, type HostConfig } from "@convene/http"
import * as StoreMemory from "@convene/store-memory"
import * as StorePg from "@convene/store-pg"
import { type Clock, Effect, Exit, Layer, Logger, ManagedRuntime, Option, Redacted, Scope } from "effect"
import { execFileSync } from "node:child_process"
import { createServer } from "node:net"
import * as oauth from "oauth4webapi"
import { afterAll, beforeAll, expect } from "vitest"
import { pgliteMigratedDataDir } from "../../support/pglite.js"
import { client, OPERATOR_TOKEN } from "../../support/server.js"

export const PASSWORD = "correct horse battery staple"

/** A port nobody listens on now (the server binds it a moment later). */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address()
      probe.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))))
    })
  })

/** The store of test/support/server.ts: PGlite under CONVENE_TEST_STORE=pglite (the http-on-pglite project), else memory. */
const defaultStore = (): { readonly layer: Layer.Layer<StorePorts, unknown>; readonly release: () => Promise<void> } => {
  if (process.env.CONVENE_TEST_STORE !== "pglite") return { layer: StoreMemory.layer, release: async () => {} }
  const scope = Effect.runSync(Scope.make())
  const layer = Layer.unwrapEffect(Effect.map(Scope.extend(pgliteMigratedDataDir, scope), (dataDir) => StorePg.layerPglite({ dataDir })))
  return { layer, release: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

export interface OAuthServer {
  /** Where the server listens: `http://127.0.0.1:<port>`. */
  readonly url: string
  /** The configured base URL (the same as `url` unless another was asked for). */
  readonly baseUrl: string
  readonly close: () => Promise<void>
}

export interface OAuthServerOptions {
  readonly baseUrl?: (port: number) => string
  /** CONVENE_AUTH_URL (default: the base URL). */
  readonly authUrl?: string
  /** CONVENE_BROWSER_SIGNIN (default: true). */
  readonly browserSignIn?: boolean
  /** Whom calls out (webhooks) may reach, and the extra authorities they trust; none: no private host, Node's CAs. */
  readonly outbound?: HostConfig["outbound"]
  /** The store the server runs on (built by the caller, who releases it); none: the default of ./server.ts. */
  readonly store?: Layer.Layer<StorePorts, unknown>
  /** The clock of everything the server runs (a test moves it on to make a retry due); the live one by default. */
  readonly clock?: Clock.Clock
  /** The MCP endpoint's settings, given the base URL (CONVENE_MCP, CONVENE_MCP_URL); none: on, at `{base_url}/mcp`. */
  readonly mcp?: (baseUrl: string) => HostConfig["mcp"]
}

export const startOAuthServer = async (options: OAuthServerOptions = {}): Promise<OAuthServer> => {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const baseUrl = options.baseUrl?.(port) ?? url
  const config: HostConfig = {
    port,
    host: "127.0.0.1",
    baseUrl,
    operatorToken: Option.some(Redacted.make(OPERATOR_TOKEN)),
    accessLog: false,
    tracing: false,
    limits: defaultLimits,
    identity: { authUrl: options.authUrl ?? baseUrl, browserSignIn: options.browserSignIn ?? true, secretKey: Option.none() },
    outbound: options.outbound,
    mcp: options.mcp?.(baseUrl)
  }
  const store = options.store === undefined ? defaultStore() : { layer: options.store, release: async () => {} }
  const runtime = ManagedRuntime.make(
    ConveneWith(config, store.layer).pipe(
      Layer.provide(Logger.remove(Logger.defaultLogger)),
      Layer.provide(options.clock === undefined ? Layer.empty : Layer.setClock(options.clock))
    )
  )
  const server = await runtime.runPromise(HttpServer.HttpServer)
  if (server.address._tag !== "TcpAddress" || server.address.port !== port) throw new Error("the server did not bind the reserved port")
  return {
    url,
    baseUrl,
    close: async () => {
      await runtime.dispose()
      await store.release()
    }
  }
}

/** One server for the enclosing file (or describe block). */
export const useOAuthServer = (options: OAuthServerOptions = {}) => {
  let server: OAuthServer | undefined
  beforeAll(async () => {
    server = await startOAuthServer(options)
  })
  afterAll(async () => {
    await server?.close()
  })
  const running = () => {
    if (server === undefined) throw new Error("the server has not started")
    return server
  }
  return {
    get url(): string {
      return running().url
    },
    get baseUrl(): string {
      return running().baseUrl
    },
    /** The issuer: `{base_url}/v1/oauth`. */
    get issuer(): string {
      return `${running().baseUrl}/v1/oauth`
    }
  }
}

export type Role = "OWNER" | "ADMIN" | "MEMBER"

export interface PasswordUser {
  readonly userId: string
  readonly workspaceId: string
  readonly email: string
  readonly name: string
  readonly role: Role
  readonly password: string
}

/** A new workspace with one user who has a password (through the operator API). */
export const newUser = async (
  url: string,
  options: { readonly role?: Role; readonly plan?: "FREE" | "PRO" | "ELITE" | "ENTERPRISE"; readonly workspaceId?: string } = {}
): Promise<PasswordUser> => {
  const operator = client(url, OPERATOR_TOKEN)
  const workspaceId = options.workspaceId ??
    (await operator.post("/operator/v1/workspaces", { name: "OAuth workspace", plan: options.plan ?? "PRO" })).body.id
  const role = options.role ?? "MEMBER"
  const email = `user-${crypto.randomUUID()}@example.com`
  const name = `Ada ${role.toLowerCase()}`
  const created = await operator.post(`/operator/v1/workspaces/${workspaceId}/users`, { email, name, role, password: PASSWORD })
  if (created.status !== 201) throw new Error(`user creation failed: ${created.status} ${created.text}`)
  return { userId: created.body.id, workspaceId, email, name, role, password: PASSWORD }
}

/** Cookies as a browser keeps them for one site (attributes are read by the tests from Set-Cookie themselves). */
export class CookieJar {
  private readonly cookies = new Map<string, string>()

  /** Takes the cookies a response sets (an empty value or Max-Age=0 deletes one). */
  absorb(response: Response): this {
    for (const line of response.headers.getSetCookie()) {
      const [pair = "", ...attributes] = line.split(";")
      const index = pair.indexOf("=")
      const name = pair.slice(0, index).trim()
      const value = pair.slice(index + 1).trim()
      const expired = attributes.some((attribute) => /^\s*max-age=0\s*$/i.test(attribute))
      if (value === "" || expired) this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
    return this
  }

  get(name: string): string | undefined {
    return this.cookies.get(name)
  }

  delete(name: string): void {
    this.cookies.delete(name)
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ")
  }
}

/**
 * A request as a browser sends it to `url`'s site: the jar's cookies, the cookies of the answer kept, no
 * redirect followed (the test reads Location). POSTs carry the site's Origin header, as browsers send it.
 */
export const browserRequest = async (
  url: string,
  jar: CookieJar,
  path: string,
  init: { readonly method?: "GET" | "POST"; readonly form?: Record<string, string> | URLSearchParams; readonly headers?: Record<string, string> } = {}
) => {
  const method = init.method ?? (init.form === undefined ? "GET" : "POST")
  const cookie = jar.header()
  const response = await fetch(url + path, {
    method,
    redirect: "manual",
    headers: {
      accept: "text/html,application/xhtml+xml",
      ...(cookie === "" ? {} : { cookie }),
      ...(method === "POST" ? { origin: new URL(url).origin } : {}),
      ...(init.form === undefined ? {} : { "content-type": "application/x-www-form-urlencoded" }),
      ...init.headers
    },
    ...(init.form === undefined ? {} : { body: new URLSearchParams(init.form).toString() })
  })
  jar.absorb(response)
  return { status: response.status, headers: response.headers, text: await response.text(), location: response.headers.get("location") }
}

const entities: Record<string, string> = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": "\"", "&#39;": "'" }

/** The value of a page's hidden form field `name` (the pages write `<input type="hidden" name=".." value="..">`). */
export const hiddenField = (page: string, name: string): string => {
  const match = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(page)
  if (match === null) throw new Error(`no hidden field ${name} in the page:\n${page}`)
  return match[1]!.replace(/&(amp|lt|gt|quot|#39);/g, (entity) => entities[entity] ?? entity)
}

/**
 * Signs in over HTTP the way a browser does: GET /signin (the CSRF cookie and the form's fields), then POST
 * the form. Answers the POST's response; the jar then holds the session cookie when it succeeded.
 */
export const signIn = async (
  url: string,
  user: { readonly email: string; readonly password: string },
  options: { readonly jar?: CookieJar; readonly continue?: string } = {}
) => {
  const jar = options.jar ?? new CookieJar()
  const form = await browserRequest(url, jar, `/signin${options.continue === undefined ? "" : `?continue=${encodeURIComponent(options.continue)}`}`)
  if (form.status !== 200) throw new Error(`GET /signin answered ${form.status}`)
  const response = await browserRequest(url, jar, "/signin", {
    form: { csrf: hiddenField(form.text, "csrf"), continue: hiddenField(form.text, "continue"), email: user.email, password: user.password }
  })
  return { jar, response, page: form.text }
}

/** The session cookie's name on an http base URL. */
export const SESSION_COOKIE = "convene_session"
export const CSRF_COOKIE = "convene_csrf"

/** A PKCE pair, a state and a nonce, made by oauth4webapi as a client makes them. */
export const pkce = async () => {
  const verifier = oauth.generateRandomCodeVerifier()
  return {
    verifier,
    challenge: await oauth.calculatePKCECodeChallenge(verifier),
    state: oauth.generateRandomState(),
    nonce: oauth.generateRandomNonce()
  }
}

/** The query of an authorization request (S256, response_type=code); `extra` adds or replaces parameters. */
export const authorizeQuery = (options: {
  readonly clientId: string
  readonly redirectUri: string
  readonly scope: string
  readonly challenge: string
  readonly state?: string
  readonly nonce?: string
  readonly extra?: Record<string, string>
}) => {
  const params = new URLSearchParams({
    response_type: "code",
    client_id: options.clientId,
    redirect_uri: options.redirectUri,
    scope: options.scope,
    code_challenge: options.challenge,
    code_challenge_method: "S256",
    ...(options.state === undefined ? {} : { state: options.state }),
    ...(options.nonce === undefined ? {} : { nonce: options.nonce }),
    ...options.extra
  })
  return `/v1/oauth/authorize?${params.toString()}`
}

/**
 * A code for `clientId` through a signed-in jar: GET /authorize (and the consent page's Approve for a registered
 * client). Answers the code and the redirect's parameters.
 */
export const authorizationCode = async (
  url: string,
  jar: CookieJar,
  request: Parameters<typeof authorizeQuery>[0]
) => {
  let answer = await browserRequest(url, jar, authorizeQuery(request))
  if (answer.status === 200) {
    // The consent page: approve it.
    answer = await browserRequest(url, jar, "/v1/oauth/authorize", {
      form: { csrf: hiddenField(answer.text, "csrf"), request: hiddenField(answer.text, "request"), decision: "approve" }
    })
  }
  if (answer.location === null || !answer.location.startsWith(request.redirectUri)) {
    throw new Error(`authorize answered ${answer.status} ${answer.location ?? answer.text}`)
  }
  const params = new URL(answer.location).searchParams
  const code = params.get("code")
  if (code === null) throw new Error(`no code in ${answer.location}`)
  return { code, params }
}

/** A POST to the token endpoint (or any OAuth endpoint) with a raw body; JSON answers parsed. */
export const post = async (
  url: string,
  path: string,
  body: string | Uint8Array | URLSearchParams | ReadableStream<Uint8Array>,
  headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" }
) => {
  const response = await fetch(url + path, {
    method: "POST",
    redirect: "manual",
    headers,
    body: body instanceof URLSearchParams ? body.toString() : body,
    ...(body instanceof ReadableStream ? { duplex: "half" } : {})
  } as RequestInit)
  return read(response)
}

/** A response as the tests read it: status, headers, the text, and the JSON value when it is JSON. */
export const read = async (response: Response) => {
  const text = await response.text()
  // The one `any` of these tests: a parsed JSON body, whose fields each test reads and asserts itself.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let body: any = undefined
  if ((response.headers.get("content-type") ?? "").includes("application/json") && text.length > 0) body = JSON.parse(text)
  return { status: response.status, headers: response.headers, text, body }
}

export type Answer = Awaited<ReturnType<typeof read>>

/** The token endpoint's answer to a form. */
export const tokenRequest = (url: string, form: Record<string, string> | ReadonlyArray<readonly [string, string]>) =>
  post(url, "/v1/oauth/token", new URLSearchParams(form as Record<string, string>))

/**
 * RFC 6749 5.2's error answer: the status, JSON `{error, error_description}` and nothing else, never cached,
 * never a redirect.
 */
export const expectOAuthError = (answer: Answer, status: number, error: string) => {
  expect({ status: answer.status, error: answer.body?.error }, answer.text).toEqual({ status, error })
  expect(answer.headers.get("content-type") ?? "").toContain("application/json")
  expect(answer.headers.get("location")).toBeNull()
  expect(Object.keys(answer.body).sort()).toEqual(["error", "error_description"])
  expect(typeof answer.body.error_description).toBe("string")
  expect(answer.body.error_description.length).toBeGreaterThan(0)
  expect(answer.headers.get("cache-control")).toBe("no-store")
}

/**
 * The redirect that answers a form post: 303 See Other (what the server sends, RFC 9110 15.4.4) or 302 (what
 * decisions.md names for POST /signin); browsers follow both with a GET.
 */
export const expectFormRedirect = (status: number, message?: string) => {
  expect([302, 303], message).toContain(status)
}

/** GET /v1/me with a bearer token. */
export const me = (url: string, token: string) => fetch(`${url}/v1/me`, { headers: { authorization: `Bearer ${token}` } }).then(read)

/** Registers a client (RFC 7591) and answers the registration. */
export const registerClient = async (url: string, metadata: Record<string, unknown>) => {
  const answer = await post(url, "/v1/oauth/register", JSON.stringify(metadata), { "content-type": "application/json" })
  if (answer.status !== 201) throw new Error(`registration failed: ${answer.status} ${answer.text}`)
  return answer.body as { readonly client_id: string; readonly registration_access_token: string; readonly registration_client_uri: string }
}

/** The chromium binary: CHROMIUM_PATH, else the one on the PATH (Debian: `apt-get install -y chromium`), as in docs.test.ts. */
export const chromiumPath = (): string => {
  if (process.env.CHROMIUM_PATH !== undefined && process.env.CHROMIUM_PATH !== "") return process.env.CHROMIUM_PATH
  try {
    return execFileSync("which", ["chromium"], { encoding: "utf8" }).trim()
  } catch {
    throw new Error("the browser tests need chromium: `apt-get install -y chromium`, or set CHROMIUM_PATH")
  }
}
