/**
 * Starts the real Convene HTTP server in this process on a free port (a real socket), on a given store
 * layer, for end-to-end tests driven with fetch. Also provisions workspaces, users and tokens through the
 * real operator API.
 */
import { HttpServer } from "@effect/platform"
import type { StorePorts } from "@convene/core"
import { ConveneWith, defaultLimits, type HostConfig, Logging, type ServerLimits } from "@convene/http"
import * as StoreMemory from "@convene/store-memory"
import * as StorePg from "@convene/store-pg"
import { type Clock, Effect, Exit, Layer, Logger, ManagedRuntime, Option, Redacted, Scope } from "effect"
import { pgliteMigratedDataDir } from "./pglite.js"

export const OPERATOR_TOKEN = "test-operator-token-0123456789-abcdef"

/** What the server's runtime provides: the core's services among them (for what no endpoint does, as embedders do). */
export type ServerServices = Layer.Layer.Success<ReturnType<typeof ConveneWith>>

export interface RunningServer {
  readonly url: string
  /** Runs `effect` in the server's own runtime: on its services, store and clock. */
  readonly run: <A, E>(effect: Effect.Effect<A, E, ServerServices>) => Promise<A>
  readonly close: () => Promise<void>
}

/**
 * The store a test server runs on when the test names none: CONVENE_TEST_STORE=pglite runs the suites on
 * the embedded default (a fresh copy of the migrated PGlite template cluster per server, see ./pglite.ts), anything else in memory.
 */
const defaultStore = (): { readonly layer: Layer.Layer<StorePorts, unknown>; readonly release: () => Promise<void> } => {
  if (process.env.CONVENE_TEST_STORE !== "pglite") return { layer: StoreMemory.layer, release: async () => {} }
  const scope = Effect.runSync(Scope.make())
  const layer = Layer.unwrapEffect(
    Effect.map(Scope.extend(pgliteMigratedDataDir, scope), (dataDir) => StorePg.layerPglite({ dataDir }))
  )
  return { layer, release: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

export const startServer = async (options: {
  readonly store?: Layer.Layer<StorePorts, unknown>
  readonly operatorToken?: string | null
  readonly limits?: Partial<ServerLimits>
  /** The request budgets (decisions.md's when left out, as a server started from the environment). */
  readonly rateLimits?: HostConfig["rateLimits"]
  /** The proxies whose X-Forwarded-For the server believes (none when left out). */
  readonly trustedProxies?: HostConfig["trustedProxies"]
  /** Where the server's log lines go, as JSON (with the access log on); none: nowhere. */
  readonly logLines?: Array<string>
  /** Whom calls out (webhooks) may reach, and the extra authorities they trust; none: no private host, Node's CAs. */
  readonly outbound?: HostConfig["outbound"]
  /** The clock of everything the server runs (a test moves it on to make a retry due); the live one by default. */
  readonly clock?: Clock.Clock
  /** Domain verification's DNS servers, lookup timeout and sweep interval; none: the system's resolver, a sweep a minute. */
  readonly dns?: HostConfig["dns"]
  /** CONVENE_SECRETS_KEY's text (IdP client secrets); none: the vault is unavailable, IdP configurations refused. */
  readonly secretsKey?: string
} = {}): Promise<RunningServer> => {
  const config: HostConfig = {
    port: 0,
    host: "127.0.0.1",
    baseUrl: "http://127.0.0.1",
    operatorToken: options.operatorToken === null
      ? Option.none()
      : Option.some(Redacted.make(options.operatorToken ?? OPERATOR_TOKEN)),
    accessLog: options.logLines !== undefined,
    tracing: false,
    limits: { ...defaultLimits, ...options.limits },
    rateLimits: options.rateLimits,
    trustedProxies: options.trustedProxies,
    outbound: options.outbound,
    dns: options.dns,
    secretsKey: options.secretsKey === undefined ? Option.none() : Option.some(Redacted.make(options.secretsKey))
  }
  const fallback = options.store === undefined ? defaultStore() : undefined
  // The servers' own log lines (startup, access, shutdown) are tested in test/http/observability.test.ts and
  // lifecycle.test.ts; here they would only bury the test output, unless a test collects them.
  const logger = options.logLines === undefined
    ? Logger.remove(Logger.defaultLogger)
    : Logger.replace(Logger.defaultLogger, Logging.collecting("json", options.logLines))
  const runtime = ManagedRuntime.make(
    ConveneWith(config, options.store ?? fallback!.layer).pipe(
      Layer.provide(logger),
      Layer.provide(options.clock === undefined ? Layer.empty : Layer.setClock(options.clock))
    )
  )
  const server = await runtime.runPromise(HttpServer.HttpServer)
  const address = server.address
  if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
  return {
    url: `http://127.0.0.1:${address.port}`,
    run: (effect) => runtime.runPromise(effect),
    close: async () => {
      await runtime.dispose()
      await fallback?.release()
    }
  }
}

/** A small fetch client for tests: JSON in, `{status, headers, body}` out (body parsed when JSON). */
export const client = (baseUrl: string, token?: string) => {
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(baseUrl + path, {
      method,
      headers: {
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...headers
      },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
    })
    const text = await response.text()
    // The one `any` of the tests: a parsed JSON body, whose fields each test reads and asserts itself.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    let parsed: any = text
    if ((response.headers.get("content-type") ?? "").includes("application/json") && text.length > 0) parsed = JSON.parse(text)
    return { status: response.status, headers: response.headers, body: parsed, text }
  }
  return {
    get: (path: string, headers?: Record<string, string>) => call("GET", path, undefined, headers),
    post: (path: string, body?: unknown, headers?: Record<string, string>) => call("POST", path, body, headers),
    patch: (path: string, body?: unknown, headers?: Record<string, string>) => call("PATCH", path, body, headers),
    put: (path: string, body?: unknown, headers?: Record<string, string>) => call("PUT", path, body, headers),
    delete: (path: string, headers?: Record<string, string>) => call("DELETE", path, undefined, headers),
    call
  }
}

export type Client = ReturnType<typeof client>

/** The password of every user `provision` creates. */
export const provisionedPassword = "correct horse battery"

/** Provisions a workspace with one user of the given role and a token for them, through the operator API. */
export const provision = async (baseUrl: string, options: {
  readonly plan?: "FREE" | "PRO" | "ELITE" | "ENTERPRISE"
  readonly role?: "OWNER" | "ADMIN" | "MEMBER"
  readonly scopes?: ReadonlyArray<string>
  readonly workspaceId?: string
} = {}) => {
  const operator = client(baseUrl, OPERATOR_TOKEN)
  const workspaceId = options.workspaceId ??
    (await operator.post("/operator/v1/workspaces", { name: "Test workspace", plan: options.plan ?? "PRO" })).body.id
  const role = options.role ?? "MEMBER"
  const email = `user-${crypto.randomUUID()}@example.com`
  const user = await operator.post(`/operator/v1/workspaces/${workspaceId}/users`, {
    email,
    name: "Test User",
    role,
    password: provisionedPassword
  })
  if (user.status !== 201) throw new Error(`user creation failed: ${user.text}`)
  const scopes = options.scopes ??
    (role === "MEMBER"
      ? ["meetings:read", "meetings:write", "action-items:read", "action-items:write", "calendar:read"]
      : ["meetings:read", "meetings:write", "action-items:read", "action-items:write", "calendar:read", "workspace:read", "workspace:write"])
  // Paid plans get a personal access token (which may carry workspace scopes); FREE a short-lived token.
  const token = await operator.post(
    `/operator/v1/users/${user.body.id}/tokens`,
    (options.plan ?? "PRO") === "FREE"
      ? { kind: "short_lived", scopes: scopes.filter((s) => !s.startsWith("workspace:")), expiry_hours: 6 }
      : { kind: "personal_access_token", scopes, expiry_days: 30 }
  )
  if (token.status !== 201) throw new Error(`token issue failed: ${token.text}`)
  return {
    workspaceId,
    userId: user.body.id as string,
    email,
    token: token.body.token as string,
    api: client(baseUrl, token.body.token)
  }
}
