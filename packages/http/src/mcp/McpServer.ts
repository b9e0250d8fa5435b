/**
 * The MCP server (Model Context Protocol) of one session: the SDK's low-level `Server` with Convene's tools
 * (Tools.ts) and resources (Resources.ts), capabilities `{ tools: {}, resources: { subscribe: true, listChanged: false } }`.
 *
 * The HTTP mount (McpRoutes.ts) makes one per MCP session with `McpServers.create()` and passes the caller, authenticated
 * on every HTTP request, in the SDK's AuthInfo: `authInfo.extra.principal` (`McpAuthExtra`). Each handler runs an
 * Effect on the core services with that principal, in the runtime this layer was built in; a request the client
 * cancels interrupts it. A request that carries no principal is refused (`unauthorized`).
 *
 * Closing the server (or its transport) detaches its resource subscriptions from the event feed. The cleanup is kept
 * apart from `onclose`: the mount may set `server.onclose` to a handler of its own, which runs after it.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema
} from "@modelcontextprotocol/sdk/types.js"
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js"
import { Principal } from "@convene/core"
import { Cause, Context, Effect, Exit, Layer, Option, Runtime } from "effect"
import * as Resources from "./Resources.js"
import { ProtocolError } from "./Resources.js"
import { toolNamed, tools } from "./Tools.js"

/** What the mount puts in the SDK's AuthInfo for each HTTP request (re-authenticated on every request). */
export interface McpAuthExtra {
  readonly principal: Principal
}

/** The server's name and version in the initialize answer. */
export const serverInfo = { name: "convene", title: "Convene", version: "1.0.0" } as const

const instructions =
  "Convene's meetings, agendas, action items and calendar, with the rights of the credential that signed in: the tools " +
  "answer what the REST API (/v1) would answer it, and a refusal is a tool error `code: message` " +
  "(insufficient_scope, not_found, validation_error, conflict, ...). Mutating tools take an optional idempotency_key. " +
  "Resources convene://meetings/{id} (JSON) and convene://meetings/{id}/transcript (text) can be read and subscribed to."

/** Refused when the mount passed no principal (it always does; this is the guard, not a path). */
const unauthorized = "unauthorized: this request carries no authenticated credential"

const principalOf = (authInfo: AuthInfo | undefined): Option.Option<Principal> => {
  const principal = authInfo?.extra?.["principal"]
  return principal instanceof Principal ? Option.some(principal) : Option.none()
}

const make = Effect.gen(function*() {
  const runtime = yield* Effect.runtime<Resources.ResourceServices>()
  /** Runs `effect` for the SDK: its value, or its failure as it is (a ProtocolError for the SDK to answer). */
  const run = <A, E>(effect: Effect.Effect<A, E, Resources.ResourceServices>, signal?: AbortSignal): Promise<A> =>
    Runtime.runPromiseExit(runtime, effect, signal === undefined ? undefined : { signal }).then((exit) => {
      if (Exit.isSuccess(exit)) return exit.value
      throw Option.getOrElse(
        Cause.failureOption(exit.cause),
        () => new ProtocolError(ErrorCode.InternalError, "internal_error: the request was cancelled or could not complete")
      )
    })

  const create = (): Server => {
    const server = new Server(serverInfo, {
      capabilities: { tools: {}, resources: { subscribe: true, listChanged: false } },
      instructions
    })
    const definitions = tools.map((tool) => tool.definition)

    const caller = (authInfo: AuthInfo | undefined) =>
      Option.match(principalOf(authInfo), {
        onNone: () => Effect.fail(new ProtocolError(ErrorCode.InvalidRequest, unauthorized)),
        onSome: Effect.succeed
      })

    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: definitions }))

    server.setRequestHandler(CallToolRequestSchema, (request, extra): Promise<CallToolResult> => {
      const { name } = request.params
      const tool = toolNamed(name)
      if (Option.isNone(tool)) throw new ProtocolError(ErrorCode.InvalidParams, `unknown tool ${JSON.stringify(name.slice(0, 100))}`)
      const principal = principalOf(extra.authInfo)
      if (Option.isNone(principal)) return Promise.resolve({ isError: true, content: [{ type: "text", text: unauthorized }] })
      return run(tool.value.call(principal.value, request.params.arguments), extra.signal)
    })

    server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [...Resources.resourceTemplates] }))

    server.setRequestHandler(ListResourcesRequestSchema, (request, extra) =>
      run(
        Effect.flatMap(caller(extra.authInfo), (principal) => Resources.asProtocol(Resources.list(principal, request.params?.cursor))),
        extra.signal
      ))

    server.setRequestHandler(ReadResourceRequestSchema, (request, extra) =>
      run(
        Effect.flatMap(caller(extra.authInfo), (principal) => Resources.asProtocol(Resources.read(principal, request.params.uri))),
        extra.signal
      ))

    // Made once, on the first subscribe; detached when the server closes.
    let subscriptions: Promise<Resources.Subscriptions> | undefined
    const subscriptionsOf = () =>
      subscriptions ??= run(
        Resources.subscriptions((uri) => {
          server.sendResourceUpdated({ uri }).catch(() => undefined)
        })
      )

    server.setRequestHandler(SubscribeRequestSchema, async (request, extra) => {
      const session = await subscriptionsOf()
      await run(
        Effect.flatMap(caller(extra.authInfo), (principal) => Resources.asProtocol(session.subscribe(principal, request.params.uri))),
        extra.signal
      )
      return {}
    })

    server.setRequestHandler(UnsubscribeRequestSchema, async (request, extra) => {
      if (subscriptions !== undefined) await run((await subscriptions).unsubscribe(request.params.uri), extra.signal)
      return {}
    })

    // The mount's own onclose, if it sets one, runs after the subscriptions are detached.
    let onclose: (() => void) | undefined
    Object.defineProperty(server, "onclose", {
      configurable: true,
      get: () => () => {
        if (subscriptions !== undefined) {
          subscriptions.then((session) => run(session.close)).catch(() => undefined)
        }
        onclose?.()
      },
      set: (handler: (() => void) | undefined) => {
        onclose = handler
      }
    })
    return server
  }

  return { create } as const
})

/** Builds one SDK Server per MCP session. Handlers take the caller from `extra.authInfo.extra.principal`. */
export class McpServers extends Context.Tag("@convene/http/McpServers")<McpServers, {
  readonly create: () => Server
}>() {
  static readonly layer: Layer.Layer<McpServers, never, Resources.ResourceServices> = Layer.effect(McpServers, make)
}
