/**
 * The MCP server in process: the core on the memory store (test/core/fixtures.ts), meeting context prepared on the
 * test's thread, the event feed polling every 10 ms, and `McpServers`; `connect` joins the SDK's own `Client` to one
 * server over the SDK's InMemoryTransport, each request carrying the principal as the HTTP mount passes it
 * (`authInfo.extra.principal`, McpAuthExtra).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import {
  ContextItems,
  ContextPreparation,
  Convene,
  EventFeed,
  ExtractionFailed,
  type MeetingId,
  type Principal,
  TextExtractor
} from "@convene/core"
import { Effect, Layer } from "effect"
import { McpServers } from "../../packages/http/src/mcp/McpServer.js"
import { CoreLive } from "../core/fixtures.js"

/** Text uploads only: a PDF or DOCX is refused (no extractor here). */
const NoExtractor = Layer.succeed(
  TextExtractor,
  TextExtractor.of({ extract: () => Effect.fail(new ExtractionFailed({ unsupported: true, reason: "not in these tests" })) })
)

export const feedSettings = { pollInterval: "10 millis", streamsPerCredential: 3 } as const

export const McpLive = McpServers.layer.pipe(
  Layer.provideMerge(EventFeed.layer(feedSettings)),
  Layer.provideMerge(Convene.contextLayer.pipe(Layer.provide(ContextPreparation.inProcess), Layer.provide(NoExtractor))),
  Layer.provideMerge(CoreLive)
)

/** Who the next requests come from: change `principal` to change the caller (as a token refresh would). */
export interface Caller {
  principal: Principal
}

/**
 * A client connected to a new server of `McpServers`, closed with the scope; every request the client sends carries
 * `caller.principal`.
 */
export const connect = (caller: Caller) =>
  Effect.gen(function*() {
    const server = (yield* McpServers).create()
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair()
    const send = clientTransport.send.bind(clientTransport)
    clientTransport.send = (message, options) =>
      send(message, caller.principal === undefined ? options : {
        ...options,
        authInfo: {
          token: "opaque",
          clientId: caller.principal.client_id ?? "test",
          scopes: [...caller.principal.scopes],
          extra: { principal: caller.principal }
        }
      })
    const client = new Client({ name: "convene-test", version: "1.0.0" })
    yield* Effect.promise(() => server.connect(serverTransport))
    yield* Effect.acquireRelease(
      Effect.promise(() => client.connect(clientTransport)),
      () => Effect.promise(() => client.close())
    )
    return { client, server }
  })

/** The result of tools/call as the SDK client checks it (its outputSchema included). */
export const callTool = (client: Client, name: string, args: Record<string, unknown> = {}) =>
  Effect.promise(() => client.callTool({ name, arguments: args }) as Promise<CallToolResult>)

/** The single text of a result. */
export const textOf = (result: CallToolResult): string => {
  const [first] = result.content
  if (first?.type !== "text" || result.content.length !== 1) throw new Error(`expected one text content: ${JSON.stringify(result)}`)
  return first.text
}

/** The structured content of a successful call, checked to be the same JSON as its text. */
export const structured = <A = Record<string, unknown>>(result: CallToolResult): A => {
  if (result.isError === true) throw new Error(`the tool failed: ${textOf(result)}`)
  const text = textOf(result)
  if (JSON.stringify(result.structuredContent) !== text) throw new Error("the text is not the structured content's JSON")
  return result.structuredContent as A
}

/** The text of a tool error (fails when the call succeeded). */
export const toolError = (result: CallToolResult): string => {
  if (result.isError !== true) throw new Error(`expected a tool error: ${JSON.stringify(result)}`)
  if (result.structuredContent !== undefined) throw new Error("a tool error carries no structured content")
  return textOf(result)
}

/** Uploads `text` as context of the meeting through the core (as POST /v1/meetings/{id}/context would). */
export const uploadContext = (
  principal: Principal,
  meetingId: MeetingId,
  file: { readonly name: string; readonly contentType: string; readonly text: string; readonly kind: string }
) =>
  Effect.flatMap(ContextItems, (items) =>
    items.upload(principal, meetingId, Effect.succeed({
      fileName: file.name,
      contentType: file.contentType,
      bytes: new TextEncoder().encode(file.text),
      kind: file.kind
    })))
