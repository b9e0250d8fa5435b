/**
 * The MCP tools cannot drift from the REST API: each tool's input schema, as tools/list answers it to the SDK's
 * client, is the JSON Schema of the REST request (the endpoint's path id plus its body, or its query parameters),
 * and `idempotency_key` is there for the mutating tools: those whose endpoint honours Idempotency-Key, and the two
 * update tools (PATCH on /v1 does not honour it; the tools do, so a retried change is answered as the first was); each output schema
 * is the JSON Schema of the endpoint's success. The REST side is made here from the core's request classes and the
 * contract's endpoints (whose bodies are checked to be those classes), every `$ref` inlined on both sides.
 */
import { AddParticipants, CreateActionItem, CreateAgendaItem, Meeting, UpdateActionItem, UpdateAgendaItem } from "@convene/core"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, JSONSchema, Option, type Schema } from "effect"
import { ActionItemsApi } from "../../packages/api/src/ActionItems.js"
import { AgendaItemsApi } from "../../packages/api/src/AgendaItems.js"
import { CalendarApi } from "../../packages/api/src/Calendar.js"
import { ContextApi } from "../../packages/api/src/Context.js"
import { Idempotent } from "../../packages/api/src/Idempotency.js"
import { MeetingsApi } from "../../packages/api/src/Meetings.js"
import { principalFor } from "../core/fixtures.js"
import { connect, McpLive } from "./session.js"

type Json = Record<string, unknown>

/** `document` with every `$ref` replaced by its definition, and without `$schema` and `$defs`. */
const inlined = (document: Json): Json => {
  const defs = (document["$defs"] ?? {}) as Record<string, unknown>
  const walk = (value: unknown, depth: number): unknown => {
    if (depth > 30) throw new Error("a recursive schema: compare it another way")
    if (Array.isArray(value)) return value.map((item) => walk(item, depth + 1))
    if (typeof value !== "object" || value === null) return value
    const node = value as Json
    if (typeof node["$ref"] === "string") {
      const { $ref, ...rest } = node
      const target = walk(defs[($ref as string).replace("#/$defs/", "")], depth + 1) as Json
      return Object.keys(rest).length === 0 ? target : { ...target, ...(walk(rest, depth + 1) as Json) }
    }
    return Object.fromEntries(
      Object.entries(node).filter(([key]) => key !== "$schema" && key !== "$defs").map(([key, member]) => [key, walk(member, depth + 1)])
    )
  }
  return walk(document, 0) as Json
}

const rest = (schema: Schema.Schema.Any) => inlined(JSONSchema.make(schema) as unknown as Json)

const declared = <A>(part: Option.Option<A>) => Option.getOrThrow(part)

interface Endpoint {
  readonly pathSchema: Option.Option<Schema.Schema.Any>
  readonly urlParamsSchema: Option.Option<Schema.Schema.Any>
  readonly payloadSchema: Option.Option<Schema.Schema.Any>
  readonly successSchema: Schema.Schema.Any
  readonly annotations: Context.Context<never>
}

/** A tool's REST counterpart: the request schemas whose properties make its input, and the endpoint. */
interface Counterpart {
  readonly request: ReadonlyArray<Schema.Schema.Any>
  readonly endpoint: Endpoint
  /** The success schema, when the tool answers more than one endpoint does. */
  readonly success?: (output: Json) => void
}

const endpoints = {
  meetings: MeetingsApi.endpoints as unknown as Record<string, Endpoint>,
  agenda: AgendaItemsApi.endpoints as unknown as Record<string, Endpoint>,
  actions: ActionItemsApi.endpoints as unknown as Record<string, Endpoint>,
  calendar: CalendarApi.endpoints as unknown as Record<string, Endpoint>,
  context: ContextApi.endpoints as unknown as Record<string, Endpoint>
}

const properties = (schema: Json) => schema["properties"] as Json

const counterparts: Record<string, Counterpart> = {
  list_meetings: { request: [declared(endpoints.meetings["list"]!.urlParamsSchema)], endpoint: endpoints.meetings["list"]! },
  search_meetings: { request: [declared(endpoints.meetings["search"]!.urlParamsSchema)], endpoint: endpoints.meetings["search"]! },
  upcoming_meetings: { request: [declared(endpoints.meetings["upcoming"]!.urlParamsSchema)], endpoint: endpoints.meetings["upcoming"]! },
  get_meeting: {
    request: [declared(endpoints.meetings["get"]!.pathSchema)],
    endpoint: endpoints.meetings["get"]!,
    success: (output) => {
      expect(properties(output)["meeting"]).toEqual(rest(Meeting))
      expect(properties(output)["agenda_items"]).toEqual(rest(endpoints.agenda["list"]!.successSchema))
    }
  },
  create_agenda_item: { request: [CreateAgendaItem], endpoint: endpoints.agenda["create"]! },
  update_agenda_item: { request: [declared(endpoints.agenda["update"]!.pathSchema), UpdateAgendaItem], endpoint: endpoints.agenda["update"]! },
  create_action_item: { request: [CreateActionItem], endpoint: endpoints.actions["create"]! },
  update_action_item: { request: [declared(endpoints.actions["update"]!.pathSchema), UpdateActionItem], endpoint: endpoints.actions["update"]! },
  add_participants: {
    request: [declared(endpoints.meetings["addParticipants"]!.pathSchema), AddParticipants],
    endpoint: endpoints.meetings["addParticipants"]!
  },
  get_meeting_context: {
    request: [declared(endpoints.context["list"]!.pathSchema)],
    endpoint: endpoints.context["list"]!,
    success: (output) => expect(Object.keys(properties(output))).toEqual(["meeting_id", "items"])
  },
  calendar_events: { request: [declared(endpoints.calendar["listEvents"]!.urlParamsSchema)], endpoint: endpoints.calendar["listEvents"]! }
}

layer(McpLive)("the MCP tools and the REST API", (it) => {
  it.effect("the contract's request bodies are the core's request classes the comparison uses", () =>
    Effect.sync(() => {
      for (const [endpoint, body] of [
        [endpoints.agenda["create"]!, CreateAgendaItem],
        [endpoints.agenda["update"]!, UpdateAgendaItem],
        [endpoints.actions["create"]!, CreateActionItem],
        [endpoints.actions["update"]!, UpdateActionItem],
        [endpoints.meetings["addParticipants"]!, AddParticipants]
      ] as const) {
        expect(rest(declared(endpoint.payloadSchema))).toEqual(rest(body))
      }
    }))

  it.scoped("each tool's input schema is its REST request's, and its output schema the REST answer's", () =>
    Effect.gen(function*() {
      const { principal } = yield* principalFor()
      const { client } = yield* connect({ principal })
      const { tools } = yield* Effect.promise(() => client.listTools())
      expect(tools.map((tool) => tool.name).sort()).toEqual(Object.keys(counterparts).sort())
      for (const tool of tools) {
        const counterpart = counterparts[tool.name]!
        const input = inlined(tool.inputSchema as Json)
        const { idempotency_key, ...fields } = properties(input)
        const expected = counterpart.request.map(rest)
        expect({ tool: tool.name, fields }).toEqual({
          tool: tool.name,
          fields: Object.assign({}, ...expected.map(properties))
        })
        expect(input["required"]).toEqual(expected.flatMap((schema) => schema["required"] as Array<string>))
        expect(input["additionalProperties"]).toBe(false)

        // Every endpoint that honours Idempotency-Key is a mutating tool's, which takes idempotency_key; the update
        // tools take it too (their PATCH endpoints do not honour the header: a decision of the MCP server).
        const honoursKey = Context.getOrElse(counterpart.endpoint.annotations, Idempotent, () => false)
        const mutating = tool.annotations?.readOnlyHint === false
        expect({ tool: tool.name, key: idempotency_key !== undefined }).toEqual({ tool: tool.name, key: mutating })
        if (honoursKey) expect({ tool: tool.name, mutating }).toEqual({ tool: tool.name, mutating: true })
        expect(mutating).toBe(honoursKey || ["update_agenda_item", "update_action_item"].includes(tool.name))

        const output = inlined(tool.outputSchema as Json)
        if (counterpart.success === undefined) expect(output).toEqual(rest(counterpart.endpoint.successSchema))
        else counterpart.success(output)
      }
    }))
})
