/**
 * The MCP endpoint's HTTP mount (issue 15), beside the contract like the OAuth routes: the Streamable HTTP transport of
 * the official SDK (`WebStandardStreamableHTTPServerTransport`) at the path of CONVENE_MCP_URL (default
 * `{base_url}/mcp`), POST for messages, GET for the session's event stream, DELETE to end a session; and the RFC 9728
 * protected-resource metadata that tells an MCP client where Convene's own OAuth server is.
 *
 * Every request, before anything else:
 * - a browser's Origin that is none of this server's (the base URL's, the MCP URL's) is refused 403 (the MCP spec's
 *   defence against DNS rebinding); a request without Origin (any non-browser client) passes;
 * - the bearer credential is authenticated through the core (any first-party credential: OAuth access token,
 *   personal access token, short-lived token, workspace API key), and counted against its request budget as on /v1;
 *   none or a bad one is 401 in the first-party envelope with `WWW-Authenticate: Bearer resource_metadata="..."`, so a
 *   client discovers the authorization server from it (the MCP authorization spec);
 * - a POST's JSON body is read within the host's limits (Body.ts: 1 MiB, 64 levels deep).
 *
 * Sessions are the SDK's stateful ones (`Mcp-Session-Id`), each with its own SDK Server (McpServers.create), kept in
 * this process's memory and bound to the credential's user (a workspace API key: to the key): a session id presented
 * with another user's credential is 404, as an unknown one is. A session ends by DELETE, after 30 minutes without a
 * request (an open event stream keeps it in use), at the sweep after its latest credential stopped authenticating
 * (revoked, expired: the sweep runs every minute at most), and when the server stops (the drain ends every event stream). With
 * several server processes a session lives in the process that created it; a request that reaches another one gets
 * 404 and the client starts a new session (the MCP spec's rule), so no sticky routing is needed beyond that.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Authentication, Crypto, type Principal, RateLimits, type Unauthenticated } from "@convene/core"
import { envelope } from "@convene/api/Errors"
import { CurrentRequestId } from "@convene/api/RequestId"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js"
import { DateTime, Duration, Effect, Either, FiberRef, Layer, Option, Redacted, Runtime, Schedule } from "effect"
import { type HostConfig, type McpConfig, mcpOf } from "../Config.js"
import { maxBodyBytes, readJson } from "../http/Body.js"
import type { ExtraRoute, Routes } from "../http/Routes.js"
import { authenticateRequest, bearerToken, throttle } from "../http/Security.js"
import { Lifecycle } from "../Lifecycle.js"
import { type McpAuthExtra, McpServers } from "./McpServer.js"

/** How long a session may go without a request before it is closed (the default of McpConfig.idleTimeoutMs). */
export const defaultIdleTimeoutMs = 30 * 60 * 1000

/** The sessions one user (or API key) may hold at once; a new one beyond closes the one used least recently. */
export const maxSessionsPerOwner = 20

/** The scopes the MCP tools use, which the protected-resource metadata lists (and a client therefore asks for). */
export const mcpScopes = ["meetings:read", "meetings:write", "action-items:read", "action-items:write", "calendar:read"] as const

const metadataPrefix = "/.well-known/oauth-protected-resource"

/**
 * Where the endpoint is, from its configured URL: the path this server serves (the URL's path, less the base URL's
 * path when the MCP URL lies under the base URL, since a proxy in front strips that prefix for the API's paths too),
 * and the paths of its protected-resource metadata (RFC 9728 3.1: the well-known prefix inserted before the
 * resource's path, the MCP spec's primary location; and the bare well-known path, its fallback).
 */
export const pathsOf = (config: HostConfig) => {
  const mcp = mcpOf(config)
  const url = new URL(mcp.url)
  const base = new URL(config.baseUrl)
  const basePath = base.pathname === "/" ? "" : base.pathname
  const underBase = url.origin === base.origin && basePath !== "" && url.pathname.startsWith(`${basePath}/`)
  const endpoint = (underBase ? url.pathname.slice(basePath.length) : url.pathname) as `/${string}`
  const resourcePath = url.pathname === "/" ? "" : url.pathname
  const metadataUrl = `${url.origin}${metadataPrefix}${resourcePath}`
  const metadata: `/${string}` = `${metadataPrefix}${endpoint === "/" ? "" : endpoint}`
  return {
    /** The resource identifier: the MCP URL as configured. */
    resource: mcp.url,
    endpoint,
    metadata,
    /** The bare well-known path (the same document), when it is not `metadata` itself. */
    rootMetadata: metadata === metadataPrefix ? undefined : (metadataPrefix as `/${string}`),
    /** Where a client is told to find the metadata (WWW-Authenticate's resource_metadata). */
    metadataUrl
  }
}

/** The routes for the route table: none when the endpoint is off (so its paths are 404, not 405). */
export const served = (config: HostConfig): ReadonlyArray<ExtraRoute> => {
  if (!mcpOf(config).enabled) return []
  const paths = pathsOf(config)
  return [
    { method: "POST", path: paths.endpoint },
    { method: "GET", path: paths.endpoint },
    { method: "DELETE", path: paths.endpoint },
    { method: "GET", path: paths.metadata },
    ...(paths.rootMetadata === undefined ? [] : [{ method: "GET" as const, path: paths.rootMetadata }])
  ]
}

/**
 * Why the endpoint cannot be served where CONVENE_MCP_URL says (its path or its metadata's is already a route of
 * `routes`, the API's and the pages'), or undefined when it can.
 */
export const clash = (config: HostConfig, routes: Routes): string | undefined => {
  if (!mcpOf(config).enabled) return undefined
  const paths = pathsOf(config)
  const taken = [paths.endpoint, paths.metadata].find((path) => routes.allowed(path).length > 0)
  return taken === undefined
    ? undefined
    : `CONVENE_MCP_URL: the path ${taken} is already one of the server's (the API, its documents or the sign-in pages); ` +
      "choose another path for the MCP endpoint, such as /mcp"
}

/** One MCP session: its SDK server and transport, whom it belongs to, and when it was last used. */
interface Session {
  id: string
  readonly server: Server
  readonly transport: WebStandardStreamableHTTPServerTransport
  /** The user the credentials of its requests must authenticate as (a workspace API key: `api_key:<id>`). */
  readonly owner: string
  lastSeen: number
  /** Its responses still being written (event streams): a session with one open is in use. */
  open: number
  /** The bearer credential of its latest request, checked again by the sweep (a revoked one ends the session). */
  credential: Redacted.Redacted<string>
}

/** The request's bearer credential, as the core authenticates it. */
const credentialOf = (request: HttpServerRequest.HttpServerRequest) => Redacted.make(Option.getOrElse(bearerToken(request), () => ""))

/** Whom a principal's sessions belong to: its user, or the API key itself (which acts as the workspace). */
const ownerOf = (principal: Principal) => principal.user_id ?? `api_key:${principal.credential_id}`

/** The SDK's answer to a session it does not know (404, and the client starts a new one), as JSON-RPC. */
const jsonRpcError = (status: number, code: number, message: string) =>
  HttpServerResponse.unsafeJson({ jsonrpc: "2.0", error: { code, message }, id: null }, { status })

/** The comment an event stream opens with (clients skip comments). */
const opening = new TextEncoder().encode(": open\n\n")

const unknownSession = () => jsonRpcError(404, -32001, "Session not found")

/** The request as the SDK's transport takes it: method, URL and headers (a POST's body is handed over parsed). */
const webRequestOf = (request: HttpServerRequest.HttpServerRequest, origin: string) => {
  const headers = new Headers()
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === "string") headers.set(name, value)
  }
  return new Request(new URL(request.url, origin), { method: request.method, headers })
}

export const layer = (config: HostConfig) => {
  const mcp = mcpOf(config)
  if (!mcp.enabled) return Layer.empty
  return HttpApiBuilder.Router.use(Effect.fnUntraced(function*(router) {
    const authentication = yield* Authentication
    const limits = yield* Effect.serviceOption(RateLimits)
    const crypto = yield* Crypto
    const servers = yield* McpServers
    const clock = yield* Effect.clock
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const paths = pathsOf(config)
    const idleTimeoutMs = mcp.idleTimeoutMs ?? defaultIdleTimeoutMs
    const origins = new Set([new URL(config.baseUrl).origin, new URL(mcp.url).origin])
    const sessions = new Map<string, Session>()
    const now = () => clock.unsafeCurrentTimeMillis()

    const metadata = {
      resource: paths.resource,
      authorization_servers: [`${config.baseUrl}/v1/oauth`],
      scopes_supported: [...mcpScopes],
      bearer_methods_supported: ["header"],
      resource_name: "Convene"
    }
    const metadataAnswer = Effect.succeed(
      HttpServerResponse.unsafeJson(metadata, {
        headers: { "cache-control": "public, max-age=300", "access-control-allow-origin": "*" }
      })
    )

    const close = (session: Session) =>
      Effect.promise(() => session.server.close().catch(() => undefined)).pipe(
        Effect.ensuring(Effect.sync(() => sessions.delete(session.id)))
      )
    const closeAll = Effect.suspend(() => Effect.forEach([...sessions.values()], close, { discard: true, concurrency: "unbounded" }))

    // Idle sessions are closed, and those whose latest credential no longer authenticates (revoked, expired, its user
    // deleted: an open event stream must not outlive it by more than a sweep); when the drain starts, every session is
    // closed, so that its event streams end.
    yield* Effect.suspend(() => {
      const cutoff = now() - idleTimeoutMs
      const idle = [...sessions.values()].filter((session) => session.open === 0 && session.lastSeen <= cutoff)
      const live = [...sessions.values()].filter((session) => !idle.includes(session))
      return Effect.zipRight(
        Effect.forEach(idle, close, { discard: true }),
        Effect.forEach(live, (session) =>
          Effect.flatMap(Effect.either(authentication.authenticate(session.credential)), (checked) =>
            Either.isLeft(checked) || ownerOf(checked.right) !== session.owner ? close(session) : Effect.void), { discard: true })
      )
    }).pipe(
      Effect.repeat(Schedule.spaced(Duration.millis(Math.max(100, Math.min(60_000, Math.floor(idleTimeoutMs / 2)))))),
      Effect.forkScoped
    )
    const lifecycle = yield* Effect.serviceOption(Lifecycle)
    if (Option.isSome(lifecycle)) yield* Effect.forkScoped(Effect.zipRight(lifecycle.value.draining, closeAll))
    yield* Effect.addFinalizer(() => closeAll)

    /** A failure in the first-party envelope, with the request id the host gave the request. */
    const failure = (status: number, code: string, text: string, headers: Record<string, string> = {}) =>
      Effect.map(FiberRef.get(CurrentRequestId), (requestId) =>
        HttpServerResponse.unsafeJson(envelope(code, text, requestId), { status, headers }))

    const challenge = (error: Unauthenticated) => {
      const missing = error.reason === "missing"
      return failure(401, missing ? "unauthorized" : "invalid_token", error.message, {
        "www-authenticate": missing
          ? `Bearer resource_metadata="${paths.metadataUrl}"`
          : `Bearer error="invalid_token", resource_metadata="${paths.metadataUrl}"`
      })
    }

    /**
     * Origin, then the credential, then the budget: the principal of the request, or the answer that refuses it.
     */
    const admit = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        const origin = request.headers["origin"]
        if (origin !== undefined && !origins.has(origin)) {
          return Either.left(
            yield* failure(403, "forbidden", "the request's Origin is not this server's; the MCP endpoint refuses requests from other sites' pages")
          )
        }
        const authenticated = yield* Effect.either(authenticateRequest(authentication, request))
        if (Either.isLeft(authenticated)) {
          yield* throttle(limits, { _tag: "Address", address: Option.getOrElse(request.remoteAddress, () => "unknown") })
          return Either.left(yield* challenge(authenticated.left))
        }
        yield* throttle(limits, { _tag: "Credential", principal: authenticated.right })
        return Either.right(authenticated.right)
      }).pipe(
        Effect.catchTag("RateLimited", (refused) =>
          Effect.map(FiberRef.get(CurrentRequestId), (requestId) =>
            Either.left(HttpServerResponse.unsafeJson(
              { code: "rate_limit_exceeded", message: refused.message, request_id: requestId },
              { status: 429, headers: { "retry-after": String(refused.retry_after_seconds) } }
            ))))
      )

    const authInfoOf = (request: HttpServerRequest.HttpServerRequest, principal: Principal): AuthInfo => ({
      token: Option.getOrElse(bearerToken(request), () => ""),
      clientId: principal.client_id ?? principal.credential_id,
      scopes: [...principal.scopes],
      ...(principal.expires_at === null
        ? {}
        : { expiresAt: Math.floor(DateTime.toEpochMillis(principal.expires_at) / 1000) }),
      extra: { principal } satisfies McpAuthExtra as unknown as Record<string, unknown>
    })

    /**
     * Counts a response's body as open until it ends or its client goes away (an event stream keeps its session in
     * use). An event stream starts with a comment, so that its head is sent at once (Node sends a head with the first
     * bytes of the body, and the SDK writes nothing on a quiet stream until its first keep-alive, 15 s later).
     */
    const tracked = (session: Session, response: Response): Response => {
      if (response.body === null) return response
      const reader = response.body.getReader()
      const eventStream = response.headers.get("content-type")?.startsWith("text/event-stream") === true
      session.open++
      let finished = false
      const finish = () => {
        if (finished) return
        finished = true
        session.open--
        session.lastSeen = now()
      }
      const body = new ReadableStream<Uint8Array>({
        start: (controller) => {
          if (eventStream) controller.enqueue(opening)
        },
        pull: async (controller) => {
          try {
            const next = await reader.read()
            if (next.done) {
              finish()
              controller.close()
            } else {
              controller.enqueue(next.value)
            }
          } catch (error) {
            finish()
            controller.error(error)
          }
        },
        cancel: async (reason) => {
          finish()
          await reader.cancel(reason)
        }
      })
      return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers })
    }

    /** Past the per-owner limit, the owner's sessions used least recently are closed. */
    const evictBeyondLimit = (owner: string) => {
      const owned = [...sessions.values()].filter((session) => session.owner === owner)
      if (owned.length <= maxSessionsPerOwner) return
      owned.sort((a, b) => a.lastSeen - b.lastSeen)
      for (const session of owned.slice(0, owned.length - maxSessionsPerOwner)) runFork(close(session))
    }

    /** A new session for `owner`: its own SDK server, connected to its own transport, registered once initialized. */
    const open = (owner: string, credential: Redacted.Redacted<string>) =>
      Effect.promise(async () => {
        const server = servers.create()
        const session: Session = {
          id: "",
          server,
          owner,
          lastSeen: now(),
          open: 0,
          credential,
          transport: new WebStandardStreamableHTTPServerTransport({
            sessionIdGenerator: () => Effect.runSync(crypto.randomUUID),
            onsessioninitialized: (id) => {
              session.id = id
              sessions.set(id, session)
              evictBeyondLimit(owner)
            },
            onsessionclosed: (id) => {
              sessions.delete(id)
            }
          })
        }
        session.transport.onclose = () => {
          if (session.id !== "") sessions.delete(session.id)
        }
        await server.connect(session.transport)
        return session
      })

    /** The session a request names, if it exists and belongs to the request's owner. */
    const sessionOf = (request: HttpServerRequest.HttpServerRequest, principal: Principal) => {
      const id = request.headers["mcp-session-id"]
      if (id === undefined) return undefined
      const session = sessions.get(id)
      return session !== undefined && session.owner === ownerOf(principal) ? session : null
    }

    const handle = (
      session: Session,
      request: HttpServerRequest.HttpServerRequest,
      principal: Principal,
      parsedBody?: unknown
    ) =>
      Effect.gen(function*() {
        session.lastSeen = now()
        session.credential = credentialOf(request)
        const response = yield* Effect.promise(() =>
          session.transport.handleRequest(webRequestOf(request, paths.resource), {
            ...(parsedBody === undefined ? {} : { parsedBody }),
            authInfo: authInfoOf(request, principal)
          })
        )
        return HttpServerResponse.fromWeb(tracked(session, response))
      })

    const post = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const admitted = yield* admit(request)
      if (Either.isLeft(admitted)) return admitted.left
      const principal = admitted.right
      const body = yield* Effect.either(readJson(request))
      if (Either.isLeft(body)) {
        const problem = body.left
        switch (problem._tag) {
          case "TooLarge":
            return yield* failure(413, "payload_too_large", `the request body is larger than ${maxBodyBytes} bytes`, { connection: "close" })
          case "UnsupportedMediaType":
            return yield* failure(415, "unsupported_media_type", "the MCP endpoint takes JSON-RPC messages as application/json (charset utf-8 or none)")
          case "Malformed":
            return yield* failure(400, "bad_request", problem.reason)
          case "Aborted":
            return yield* failure(400, "bad_request", "the request body ended before it was complete")
        }
      }
      const message = body.right.value
      const named = sessionOf(request, principal)
      if (named === null) return unknownSession()
      if (named !== undefined) return yield* handle(named, request, principal, message)
      const initializes = Array.isArray(message) ? message.some(isInitializeRequest) : isInitializeRequest(message)
      if (!initializes) {
        return jsonRpcError(400, -32000, "Bad Request: Mcp-Session-Id header is required (or start a session with initialize)")
      }
      return yield* handle(yield* open(ownerOf(principal), credentialOf(request)), request, principal, message)
    })

    /** GET (the session's event stream) and DELETE (its end) name an existing session. */
    const inSession = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const admitted = yield* admit(request)
      if (Either.isLeft(admitted)) return admitted.left
      const session = sessionOf(request, admitted.right)
      if (session === null) return unknownSession()
      if (session === undefined) return jsonRpcError(400, -32000, "Bad Request: Mcp-Session-Id header is required")
      return yield* handle(session, request, admitted.right)
    })

    yield* router.post(paths.endpoint, post)
    yield* router.get(paths.endpoint, inSession)
    yield* router.del(paths.endpoint, inSession)
    yield* router.get(paths.metadata, metadataAnswer)
    if (paths.rootMetadata !== undefined) yield* router.get(paths.rootMetadata, metadataAnswer)
  })).pipe(Layer.provide(McpServers.layer))
}

/** The start-up line's words for the endpoint: `on (<url>)` or `off`. */
export const describe = (config: HostConfig): string => {
  const mcp: McpConfig = mcpOf(config)
  return mcp.enabled ? `on (${mcp.url})` : "off"
}
