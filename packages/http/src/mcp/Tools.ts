/**
 * The MCP server's tools: each one an endpoint of the REST API (or a few of them, for get_meeting) run through the
 * same core service with the caller's principal, so an assistant sees and changes exactly what its user could
 * through /v1 (the core checks scopes and visibility).
 *
 * - The input schema is made of the endpoint's own path, query and body schemas (Arguments.ts), the output schema of
 *   its success schema, and the description is the endpoint's OpenAPI description: the contract is the only source.
 * - A result carries `structuredContent` (the JSON the REST endpoint answers) and the same JSON as text.
 * - A domain failure is a tool error (`isError: true`) whose text is `code: message`, the code and message the REST
 *   envelope would carry (`insufficient_scope: this credential lacks the scope action-items:write`); invalid
 *   arguments are `validation_error` naming the field. A defect is logged and answered `internal_error` without
 *   detail. Nothing a tool is given makes it throw.
 * - A mutating tool takes an optional `idempotency_key` and runs through the core's Idempotency service as the REST
 *   endpoint does with the Idempotency-Key header (the update tools too, although PATCH on /v1 does not honour the
 *   header: a retried completion is then answered as the first, with no second change and no second event): keys
 *   are the credential's own, a repeat with the same arguments
 *   answers the stored result (marked `_meta["convene/idempotent-replayed"]`), other arguments are
 *   `idempotency_key_reuse`, a repeat while the first runs `idempotency_conflict`. A tool call is fingerprinted as
 *   method `MCP`, path `tools/call/{name}` and the arguments without the key, so a key used on /v1 and on a tool is
 *   two different requests (`idempotency_key_reuse`).
 */
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import type { CallToolResult, Tool as McpTool } from "@modelcontextprotocol/sdk/types.js"
import {
  ActionItems,
  AgendaItems,
  Calendar,
  ContextForPrompt,
  ContextItem,
  Encode,
  Idempotency,
  Meeting,
  MeetingId,
  Meetings,
  Participants,
  type Principal,
  StoredResponse,
  trusted
} from "@convene/core"
import { ActionItemList, ActionItemsApi } from "@convene/api/ActionItems"
import { AgendaItemList, AgendaItemsApi } from "@convene/api/AgendaItems"
import { CalendarApi } from "@convene/api/Calendar"
import { ContextApi } from "@convene/api/Context"
import { MeetingsApi, ParticipantList } from "@convene/api/Meetings"
import { type Cause, Context, Effect, Option, Schema } from "effect"
import { type Decoded, input, type ObjectSchema, objectSchema, type Parts } from "./Arguments.js"

/** The core services the tools run on. */
export type ToolServices =
  | Meetings
  | Participants
  | AgendaItems
  | ActionItems
  | Calendar
  | ContextForPrompt
  | Idempotency

/** A failure of the core: every domain error has a tag and a readable message. */
export interface DomainFailure {
  readonly _tag: string
  readonly message: string
}

/** The envelope's `code` of each domain error the tools' services can fail with (api/Errors.ts). */
const codes: Record<string, string> = {
  ValidationError: "validation_error",
  NotFound: "not_found",
  Conflict: "conflict",
  InsufficientScope: "insufficient_scope",
  PlanRequired: "plan_required",
  IdempotencyKeyInvalid: "idempotency_key_invalid",
  IdempotencyConflict: "idempotency_conflict",
  IdempotencyKeyReuse: "idempotency_key_reuse",
  RateLimited: "rate_limit_exceeded",
  TooManyStreams: "too_many_requests",
  Unauthenticated: "unauthorized"
}

/** `code: message` of a domain failure, as the REST envelope would say it. */
export const failureText = (failure: DomainFailure): string => `${codes[failure._tag] ?? "error"}: ${failure.message}`

const errorResult = (text: string): CallToolResult => ({ isError: true, content: [{ type: "text", text }] })

/** The tool error of a defect: logged here, told without detail. */
export const internalError = (cause: Cause.Cause<unknown>) =>
  Effect.as(
    Effect.logError("an MCP tool call failed unexpectedly", cause),
    errorResult("internal_error: the server could not complete this call; try again later")
  )

const success = (json: unknown, replayed: boolean): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(json) }],
  structuredContent: json as Record<string, unknown>,
  ...(replayed ? { _meta: { "convene/idempotent-replayed": true } } : {})
})

/** Endpoint `name` of `group`, with its schemas' types. */
const endpointOf = <Group extends HttpApiGroup.HttpApiGroup.Any, Name extends HttpApiGroup.HttpApiGroup.Endpoints<Group>["name"]>(
  group: Group,
  name: Name
) => {
  const endpoint = (group as unknown as HttpApiGroup.HttpApiGroup.AnyWithProps).endpoints[name]
  if (endpoint === undefined) throw new Error(`no endpoint ${name} in the group ${group.identifier}`)
  return endpoint as unknown as HttpApiEndpoint.HttpApiEndpoint.WithName<HttpApiGroup.HttpApiGroup.Endpoints<Group>, Name>
}

/** The schema of an endpoint part the contract declares (a tool is defined from what exists). */
const declared = <A>(part: Option.Option<A>, what: string): A =>
  Option.getOrThrowWith(part, () => new Error(`the contract declares no ${what}`))

const descriptionOf = (endpoint: { readonly annotations: Context.Context<never> }) =>
  Option.getOrElse(Context.getOption(endpoint.annotations, OpenApi.Description), () => "")

/** A tool as the server lists and calls it. */
export interface Tool {
  readonly definition: McpTool
  readonly call: (principal: Principal, args: unknown) => Effect.Effect<CallToolResult, never, ToolServices>
}

interface Spec<Path, Query, Body, Out> {
  readonly name: string
  readonly title: string
  /** What the tool does, in a sentence, and which REST endpoint it is. */
  readonly summary: string
  /** The endpoint whose OpenAPI description follows the summary. */
  readonly endpoint: { readonly annotations: Context.Context<never> }
  readonly input: Parts<Path, Query, Body>
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly output: Schema.Schema<Out, any>
  readonly readOnly: boolean
  readonly run: (principal: Principal, args: Decoded<Path, Query, Body>) => Effect.Effect<Out, DomainFailure, ToolServices>
}

const tool = <Path, Query, Body, Out>(spec: Spec<Path, Query, Body, Out>): Tool => {
  const arguments_ = input(spec.input)
  const outputSchema: ObjectSchema = objectSchema(spec.output)
  const encode = Encode.encoderOf(spec.output)
  const idempotent = spec.input.idempotent === true
  const definition: McpTool = {
    name: spec.name,
    title: spec.title,
    description: `${spec.summary}\n\n${descriptionOf(spec.endpoint)}${
      idempotent
        ? "\n\nTakes an optional `idempotency_key`: a repeat with the same key and the same arguments (same credential, " +
          "within 24 hours) answers the first result again without doing the work twice; the key with other arguments is " +
          "the tool error idempotency_key_reuse."
        : ""
    }`,
    inputSchema: arguments_.jsonSchema as McpTool["inputSchema"],
    outputSchema: outputSchema as McpTool["outputSchema"],
    annotations: {
      title: spec.title,
      readOnlyHint: spec.readOnly,
      destructiveHint: false,
      idempotentHint: spec.readOnly,
      openWorldHint: false
    }
  }
  const call = (principal: Principal, args: unknown): Effect.Effect<CallToolResult, never, ToolServices> =>
    Effect.gen(function*() {
      const decoded = yield* arguments_.decode(args)
      const answer = Effect.map(spec.run(principal, decoded), encode)
      if (!idempotent || Option.isNone(decoded.idempotencyKey)) return success(yield* answer, false)
      const idempotency = yield* Idempotency
      const outcome = yield* idempotency.run(
        {
          scope: principal.credential_id,
          key: decoded.idempotencyKey.value,
          method: "MCP",
          path: `tools/call/${spec.name}`,
          query: [],
          body: decoded.request
        },
        Effect.map(answer, (json) => new StoredResponse({ status: 200, body: JSON.stringify(json) }, trusted))
      )
      return success(JSON.parse(outcome.response.body), outcome.replayed)
    }).pipe(
      Effect.catchAll((failure: DomainFailure) => Effect.succeed(errorResult(failureText(failure)))),
      Effect.catchAllCause(internalError),
      Effect.withSpan("Mcp.callTool", { attributes: { "mcp.tool": spec.name } })
    )
  return { definition, call }
}

/** The first page a document shows of each list (the REST API's largest page). */
const firstPage = { limit: 100, offset: 0 }

/**
 * A meeting as get_meeting and the resource `convene://meetings/{id}` show it: the meeting with the first 100 of
 * its participants, agenda items and action items, as the list endpoints answer them (`total` tells whether there
 * are more). `action_items` is null for a credential without action-items:read (what /v1 would refuse it).
 */
export const MeetingDocument = Schema.Struct({
  meeting: Meeting,
  participants: ParticipantList,
  agenda_items: AgendaItemList,
  action_items: Schema.NullOr(ActionItemList)
}).annotations({ identifier: "MeetingDocument" })

export const meetingDocument = (
  principal: Principal,
  id: MeetingId
): Effect.Effect<typeof MeetingDocument.Type, DomainFailure, ToolServices> =>
  Effect.gen(function*() {
    const meeting = yield* (yield* Meetings).get(principal, id)
    const participants = yield* (yield* Participants).list(principal, id, firstPage)
    const agenda = yield* (yield* AgendaItems).list(principal, { meeting_id: id }, firstPage)
    const actions = yield* (yield* ActionItems).list(principal, { meeting_id: id }, firstPage).pipe(
      Effect.catchTag("InsufficientScope", () => Effect.succeed(null))
    )
    return { meeting, participants, agenda_items: agenda, action_items: actions }
  })

/**
 * The most characters of context text one get_meeting_context answer carries (an item may hold 5 Mi characters, a
 * meeting 100 items): past it each text is cut and marked `truncated`; /v1's `/content` reads an item whole.
 */
export const contextTextBudget = 1_048_576

/** A meeting's context as a prompt reads it: each item's description and its scrubbed text, oldest first. */
export const MeetingContext = Schema.Struct({
  meeting_id: MeetingId,
  items: Schema.Array(Schema.Struct({
    item: ContextItem,
    text: Schema.String.annotations({ description: "the item's normalised, PII-scrubbed text (what a prompt reads)" }),
    truncated: Schema.Boolean.annotations({
      description: `true when the text is cut short: one answer carries at most ${contextTextBudget} characters of text ` +
        "in all (GET /v1/meetings/{id}/context/{context_id}/content reads an item whole)"
    })
  }))
}).annotations({ identifier: "MeetingContext" })

/** The items with their texts cut to the budget, in order. */
const withinBudget = (items: ReadonlyArray<{ readonly item: ContextItem; readonly text: string }>) => {
  let left = contextTextBudget
  return items.map(({ item, text }) => {
    // A cut between the halves of a surrogate pair keeps neither.
    const end = text.length <= left ? text.length : /[\uD800-\uDBFF]/.test(text.charAt(left - 1)) ? left - 1 : left
    const kept = text.slice(0, Math.max(end, 0))
    left -= kept.length
    return { item, text: kept, truncated: kept.length < text.length }
  })
}

const meetings = {
  list: endpointOf(MeetingsApi, "list"),
  search: endpointOf(MeetingsApi, "search"),
  upcoming: endpointOf(MeetingsApi, "upcoming"),
  get: endpointOf(MeetingsApi, "get"),
  addParticipants: endpointOf(MeetingsApi, "addParticipants")
}
const agenda = { create: endpointOf(AgendaItemsApi, "create"), update: endpointOf(AgendaItemsApi, "update") }
const actions = { create: endpointOf(ActionItemsApi, "create"), update: endpointOf(ActionItemsApi, "update") }
const calendar = endpointOf(CalendarApi, "listEvents")
const context = { list: endpointOf(ContextApi, "list"), content: endpointOf(ContextApi, "content") }

/** Every tool, in the order tools/list answers them. */
export const tools: ReadonlyArray<Tool> = [
  tool({
    name: "list_meetings",
    title: "List meetings",
    summary: "Lists the meetings the caller can see, newest first (GET /v1/meetings).",
    endpoint: meetings.list,
    input: { query: declared(meetings.list.urlParamsSchema, "query of GET /v1/meetings") },
    output: meetings.list.successSchema,
    readOnly: true,
    run: (principal, { query }) => Effect.flatMap(Meetings, (service) => service.list(principal, query, query))
  }),
  tool({
    name: "search_meetings",
    title: "Search meetings",
    summary: "Searches the caller's meetings by title, status and start time (GET /v1/meetings/search).",
    endpoint: meetings.search,
    input: { query: declared(meetings.search.urlParamsSchema, "query of GET /v1/meetings/search") },
    output: meetings.search.successSchema,
    readOnly: true,
    run: (principal, { query }) => Effect.flatMap(Meetings, (service) => service.search(principal, query, query))
  }),
  tool({
    name: "get_meeting",
    title: "Get a meeting",
    summary: "Reads one meeting with its participants, agenda items and action items (GET /v1/meetings/{id}, " +
      "/v1/meetings/{id}/participants, /v1/agenda-items and /v1/action-items of the meeting: the first 100 of each; " +
      "`action_items` is null when the credential lacks action-items:read). Also the resource convene://meetings/{id}.",
    endpoint: meetings.get,
    input: { path: declared(meetings.get.pathSchema, "path of GET /v1/meetings/{id}") },
    output: MeetingDocument,
    readOnly: true,
    run: (principal, { path }) => meetingDocument(principal, path.id)
  }),
  tool({
    name: "upcoming_meetings",
    title: "Upcoming meetings",
    summary: "Lists the caller's scheduled or running meetings that are not over, soonest first (GET /v1/meetings/upcoming).",
    endpoint: meetings.upcoming,
    input: { query: declared(meetings.upcoming.urlParamsSchema, "query of GET /v1/meetings/upcoming") },
    output: meetings.upcoming.successSchema,
    readOnly: true,
    run: (principal, { query }) => Effect.flatMap(Meetings, (service) => service.upcoming(principal, query))
  }),
  tool({
    name: "create_agenda_item",
    title: "Create an agenda item",
    summary: "Adds an agenda item to a meeting (POST /v1/agenda-items).",
    endpoint: agenda.create,
    input: { body: declared(agenda.create.payloadSchema, "body of POST /v1/agenda-items"), idempotent: true },
    output: agenda.create.successSchema,
    readOnly: false,
    run: (principal, { body }) => Effect.flatMap(AgendaItems, (service) => service.create(principal, body))
  }),
  tool({
    name: "update_agenda_item",
    title: "Update an agenda item",
    summary: "Changes the given fields of the agenda item `id` (PATCH /v1/agenda-items/{id}).",
    endpoint: agenda.update,
    input: {
      path: declared(agenda.update.pathSchema, "path of PATCH /v1/agenda-items/{id}"),
      body: declared(agenda.update.payloadSchema, "body of PATCH /v1/agenda-items/{id}"),
      idempotent: true
    },
    output: agenda.update.successSchema,
    readOnly: false,
    run: (principal, { body, path }) => Effect.flatMap(AgendaItems, (service) => service.update(principal, path.id, body))
  }),
  tool({
    name: "create_action_item",
    title: "Create an action item",
    summary: "Creates an action item on a meeting (POST /v1/action-items).",
    endpoint: actions.create,
    input: { body: declared(actions.create.payloadSchema, "body of POST /v1/action-items"), idempotent: true },
    output: actions.create.successSchema,
    readOnly: false,
    run: (principal, { body }) => Effect.flatMap(ActionItems, (service) => service.create(principal, body))
  }),
  tool({
    name: "update_action_item",
    title: "Update an action item",
    summary: "Changes the given fields of the action item `id` (PATCH /v1/action-items/{id}): complete it with " +
      "`status: \"completed\"`, assign it with `assigned_to_user_id` (null unassigns), move it along the statuses below.",
    endpoint: actions.update,
    input: {
      path: declared(actions.update.pathSchema, "path of PATCH /v1/action-items/{id}"),
      body: declared(actions.update.payloadSchema, "body of PATCH /v1/action-items/{id}"),
      idempotent: true
    },
    output: actions.update.successSchema,
    readOnly: false,
    run: (principal, { body, path }) => Effect.flatMap(ActionItems, (service) => service.update(principal, path.id, body))
  }),
  tool({
    name: "add_participants",
    title: "Add participants",
    summary: "Adds users or guests to the meeting `id` (POST /v1/meetings/{id}/participants).",
    endpoint: meetings.addParticipants,
    input: {
      path: declared(meetings.addParticipants.pathSchema, "path of POST /v1/meetings/{id}/participants"),
      body: declared(meetings.addParticipants.payloadSchema, "body of POST /v1/meetings/{id}/participants"),
      idempotent: true
    },
    output: meetings.addParticipants.successSchema,
    readOnly: false,
    run: (principal, { body, path }) =>
      Effect.map(
        Effect.flatMap(Participants, (service) => service.add(principal, path.id, body)),
        (added) => ({ participants: added })
      )
  }),
  tool({
    name: "get_meeting_context",
    title: "Get a meeting's context",
    summary: "Reads the context of the meeting `id` as an AI prompt may see it: every context item (GET " +
      "/v1/meetings/{id}/context), oldest first, at most 100, each with its normalised, PII-scrubbed text (GET " +
      "/v1/meetings/{id}/context/{context_id}/content), at most 1 Mi characters of text in all (an item past that is cut " +
      "and marked `truncated`). Never the uploads themselves (they are not kept) nor attachments.",
    endpoint: context.content,
    input: { path: declared(context.list.pathSchema, "path of GET /v1/meetings/{id}/context") },
    output: MeetingContext,
    readOnly: true,
    run: (principal, { path }) =>
      Effect.map(
        Effect.flatMap(ContextForPrompt, (prompt) => prompt.forMeeting(principal, path.id)),
        (items) => ({ meeting_id: path.id, items: withinBudget(items) })
      )
  }),
  tool({
    name: "calendar_events",
    title: "Calendar events",
    summary: "Lists the caller's calendar events (meetings) that start in the window [start_date, end_date) " +
      "(GET /v1/calendar/events).",
    endpoint: calendar,
    input: { query: declared(calendar.urlParamsSchema, "query of GET /v1/calendar/events") },
    output: calendar.successSchema,
    readOnly: true,
    run: (principal, { query }) => Effect.flatMap(Calendar, (service) => service.list(principal, query, query))
  })
]

const byName = new Map(tools.map((entry) => [entry.definition.name, entry]))

/** The tool named `name`, if there is one. */
export const toolNamed = (name: string): Option.Option<Tool> => Option.fromNullable(byName.get(name))
