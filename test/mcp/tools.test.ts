/**
 * The MCP server's tools through the SDK's own client (in process, InMemoryTransport): each tool's happy path
 * answering the JSON the REST endpoint answers, scopes and visibility decided by the core (insufficient_scope,
 * another workspace's meeting not_found), hostile arguments answered with tool errors while the server keeps
 * answering, idempotency keys replayed and refused as on /v1, and the meeting context as scrubbed text only.
 */
import {
  ActionItem,
  ActionItemId,
  ActionItems,
  AgendaItems,
  CreateActionItem,
  CreateAgendaItem,
  CreateMeeting,
  Encode,
  Meeting,
  Meetings,
  Participants,
  type Principal
} from "@convene/core"
import { describe, expect, layer } from "@effect/vitest"
import { DateTime, Effect, FastCheck } from "effect"
import { MeetingList } from "../../packages/api/src/Meetings.js"
import { contextTextBudget, tools as toolList } from "../../packages/http/src/mcp/Tools.js"
import { apiKeyFor, principalFor } from "../core/fixtures.js"
import { callTool, type Caller, connect, McpLive, structured, textOf, toolError, uploadContext } from "./session.js"

const toolNames = [
  "list_meetings",
  "search_meetings",
  "get_meeting",
  "upcoming_meetings",
  "create_agenda_item",
  "update_agenda_item",
  "create_action_item",
  "update_action_item",
  "add_participants",
  "get_meeting_context",
  "calendar_events"
]

const everyScope = ["meetings:read", "meetings:write", "action-items:read", "action-items:write", "calendar:read"] as const

/** A member of a new workspace with every first-party member scope, a meeting of theirs an hour from now, and a session. */
const member = Effect.gen(function*() {
  const owner = yield* principalFor({ scopes: everyScope })
  const start = DateTime.unsafeMake(Date.now() + 3_600_000)
  const meeting = yield* (yield* Meetings).create(owner.principal, CreateMeeting.make({ title: "Quarterly planning", start_time: start }))
  const caller: Caller = { principal: owner.principal }
  const { client } = yield* connect(caller)
  return { ...owner, meeting, caller, client }
})

type Json = Record<string, unknown>
type Item = Json & { readonly id: string }
type List = { readonly items: ReadonlyArray<Item>; readonly total: number }

layer(McpLive, { excludeTestServices: true })("MCP tools", (it) => {
  it.scoped("lists its eleven tools, each with a description and object input and output schemas", () =>
    Effect.gen(function*() {
      const { client } = yield* member
      const { tools } = yield* Effect.promise(() => client.listTools())
      expect(tools.map((tool) => tool.name)).toEqual(toolNames)
      for (const tool of tools) {
        expect(tool.description?.length).toBeGreaterThan(40)
        expect(tool.inputSchema.type).toBe("object")
        expect(tool.outputSchema?.type).toBe("object")
        expect(tool.inputSchema["additionalProperties"]).toBe(false)
        const mutating = tool.annotations?.readOnlyHint === false
        expect("idempotency_key" in (tool.inputSchema.properties ?? {})).toBe(mutating)
      }
      expect(client.getServerCapabilities()).toEqual({ tools: {}, resources: { subscribe: true, listChanged: false } })
    }))

  it.scoped("list, search, upcoming and get answer what the REST endpoints answer", () =>
    Effect.gen(function*() {
      const { client, meeting, principal } = yield* member
      const meetings = yield* Meetings
      const other = yield* meetings.create(principal, CreateMeeting.make({ title: "Retro" }))
      const encodeList = Encode.encoderOf(MeetingList)

      const listed = structured<List>(yield* callTool(client, "list_meetings", { limit: 1 }))
      expect(listed).toEqual(encodeList(yield* meetings.list(principal, {}, { limit: 1 })))
      expect(listed.items.map((item) => item.id)).toEqual([other.id])
      expect(listed.total).toBe(2)

      const found = structured<List>(yield* callTool(client, "search_meetings", { q: "QUARTERLY", status: "scheduled" }))
      expect(found.items.map((item) => item.id)).toEqual([meeting.id])

      const upcoming = structured<List>(yield* callTool(client, "upcoming_meetings", {}))
      expect(upcoming.items.map((item) => item.id)).toEqual([meeting.id])

      yield* (yield* AgendaItems).create(principal, CreateAgendaItem.make({ meeting_id: meeting.id, title: "Budget" }))
      yield* (yield* ActionItems).create(principal, CreateActionItem.make({ meeting_id: meeting.id, title: "Send notes" }))
      const got = structured<{
        meeting: Item
        participants: List
        agenda_items: List
        action_items: List
      }>(yield* callTool(client, "get_meeting", { id: meeting.id }))
      expect(got.meeting).toEqual(Encode.encoderOf(Meeting)(meeting))
      expect(got.participants.items.map((p) => [p["user_id"], p["role"]])).toEqual([[principal.user_id, "OWNER"]])
      expect(got.agenda_items.items.map((item) => item["title"])).toEqual(["Budget"])
      expect(got.action_items.items.map((item) => item["title"])).toEqual(["Send notes"])
    }))

  it.scoped("get_meeting without action-items:read shows the meeting and null action items", () =>
    Effect.gen(function*() {
      const { meeting, workspace, principal: owner } = yield* member
      const reader = yield* principalFor({ workspaceId: workspace.id, role: "ADMIN", scopes: ["meetings:read"] })
      const { client } = yield* connect({ principal: reader.principal })
      const got = structured<{ meeting: Item; action_items: unknown }>(yield* callTool(client, "get_meeting", { id: meeting.id }))
      expect(got.meeting.id).toBe(meeting.id)
      expect(got.action_items).toBeNull()
      expect(owner.user_id).not.toBe(reader.user.id)
    }))

  it.scoped("creates and updates agenda items and action items, and adds participants", () =>
    Effect.gen(function*() {
      const { client, meeting, principal, workspace } = yield* member
      const agendaItem = structured<Item>(
        yield* callTool(client, "create_agenda_item", { meeting_id: meeting.id, title: "Hiring", item_type: "QUESTIONS_TO_ANSWER" })
      )
      expect(agendaItem).toMatchObject({ meeting_id: meeting.id, title: "Hiring", item_type: "QUESTIONS_TO_ANSWER", sequence: "1" })
      const moved = structured<Item>(
        yield* callTool(client, "update_agenda_item", { id: agendaItem.id, title: "Hiring plan", talking_points: ["two roles"] })
      )
      expect(moved).toMatchObject({ id: agendaItem.id, title: "Hiring plan", talking_points: ["two roles"] })

      const colleague = yield* principalFor({ workspaceId: workspace.id })
      const action = structured<Item>(yield* callTool(client, "create_action_item", {
        meeting_id: meeting.id,
        title: "Draft the job ad",
        due_date: "2026-12-01",
        agenda_item_id: agendaItem.id
      }))
      expect(action).toMatchObject({ status: "needs_review", is_completed: false, due_date: "2026-12-01" })
      const assigned = structured<Item>(
        yield* callTool(client, "update_action_item", { id: action.id, assigned_to_user_id: colleague.user.id, status: "accepted" })
      )
      expect(assigned).toMatchObject({ assigned_to_user_id: colleague.user.id, status: "accepted" })
      const completed = structured<Item>(yield* callTool(client, "update_action_item", { id: action.id, status: "completed" }))
      expect(completed).toMatchObject({ status: "completed", is_completed: true })
      expect(completed["completed_at"]).toEqual(expect.any(String))
      expect((yield* (yield* ActionItems).get(principal, ActionItemId.make(action.id))).status).toBe("completed")

      const refused = toolError(yield* callTool(client, "update_action_item", { id: action.id, status: "needs_review" }))
      expect(refused).toMatch(/^conflict: /)

      const added = structured<{ participants: ReadonlyArray<Item> }>(yield* callTool(client, "add_participants", {
        id: meeting.id,
        participants: [{ user_id: colleague.user.id, role: "EDITOR" }, { guest_email: "Guest@Example.com ", role: "VIEWER" }]
      }))
      expect(added.participants.map((p) => [p["user_id"], p["email"], p["role"]])).toEqual([
        [colleague.user.id, colleague.user.email, "EDITOR"],
        [null, "guest@example.com", "VIEWER"]
      ])
      const onMeeting = yield* (yield* Participants).list(principal, meeting.id, { limit: 10 })
      expect(onMeeting.total).toBe(3)
    }))

  it.scoped("calendar_events lists the window's meetings; a window that ends before it starts is a validation error", () =>
    Effect.gen(function*() {
      const { client, meeting } = yield* member
      const now = Date.now()
      const window = {
        start_date: new Date(now).toISOString(),
        end_date: new Date(now + 86_400_000).toISOString(),
        limit: 10
      }
      const events = structured<List>(yield* callTool(client, "calendar_events", window))
      expect(events.items.map((event) => [event.id, event["title"]])).toEqual([[meeting.id, "Quarterly planning"]])
      const backwards = toolError(yield* callTool(client, "calendar_events", { start_date: window.end_date, end_date: window.start_date }))
      expect(backwards).toMatch(/^validation_error: end_date/)
      expect(toolError(yield* callTool(client, "calendar_events", {}))).toMatch(/^validation_error: start_date: is required/)
    }))

  it.scoped("get_meeting_context answers each item's scrubbed text, never the upload", () =>
    Effect.gen(function*() {
      const { client, meeting, principal } = yield* member
      const raw = "Budget review\nMail alice@example.com or call +44 20 7946 0958\nCard 4111 1111 1111 1111\n"
      yield* uploadContext(principal, meeting.id, { name: "notes.txt", contentType: "text/plain", text: raw, kind: "notes" })
      const result = yield* callTool(client, "get_meeting_context", { id: meeting.id })
      const context = structured<{ meeting_id: string; items: ReadonlyArray<{ item: Json; text: string; truncated: boolean }> }>(result)
      expect(context.meeting_id).toBe(meeting.id)
      expect(context.items.map(({ item, text, truncated }) => [item["file_name"], item["kind"], text, truncated])).toEqual([
        ["notes.txt", "notes", "Budget review\nMail [EMAIL] or call [PHONE]\nCard [CARD]\n", false]
      ])
      const wire = textOf(result)
      for (const secret of ["alice@example.com", "7946", "4111"]) expect(wire).not.toContain(secret)
      expect(Object.keys(context.items[0]!.item).sort()).toEqual(
        ["content_type", "created_at", "file_name", "id", "kind", "meeting_id", "size"]
      )
    }))

  it.scoped("get_meeting_context carries at most its budget of text: the item past it is cut and marked truncated", () =>
    Effect.gen(function*() {
      const { client, meeting, principal } = yield* member
      const line = "the quarterly numbers look fine to everyone here\n"
      const long = line.repeat(Math.ceil(contextTextBudget * 0.7 / line.length))
      for (const name of ["one.txt", "two.txt", "three.txt"]) {
        yield* uploadContext(principal, meeting.id, { name, contentType: "text/plain", text: long, kind: "document" })
      }
      const context = structured<{ items: ReadonlyArray<{ item: Json; text: string; truncated: boolean }> }>(
        yield* callTool(client, "get_meeting_context", { id: meeting.id })
      )
      expect(context.items.map(({ item, text, truncated }) => [item["file_name"], text.length, truncated])).toEqual([
        ["one.txt", long.length, false],
        ["two.txt", contextTextBudget - long.length, true],
        ["three.txt", 0, true]
      ])
      expect(context.items[1]!.text).toBe(long.slice(0, contextTextBudget - long.length))
    }), { timeout: 60_000 })

  it.scoped("a token without action-items:write cannot complete an action item", () =>
    Effect.gen(function*() {
      const { meeting, principal, workspace } = yield* member
      const item = yield* (yield* ActionItems).create(principal, CreateActionItem.make({
        meeting_id: meeting.id,
        title: "Book the room",
        status: "accepted"
      }))
      const readOnly = yield* principalFor({ workspaceId: workspace.id, role: "OWNER", scopes: ["meetings:read", "action-items:read"] })
      const { client } = yield* connect({ principal: readOnly.principal })
      const result = yield* callTool(client, "update_action_item", { id: item.id, status: "completed" })
      expect(toolError(result)).toBe("insufficient_scope: this credential lacks the scope action-items:write")
      expect((yield* (yield* ActionItems).get(principal, item.id)).status).toBe("accepted")
      // It still reads what its scopes allow.
      expect(structured<List>(yield* callTool(client, "list_meetings")).total).toBe(1)
      expect(toolError(yield* callTool(client, "create_agenda_item", { meeting_id: meeting.id, title: "x" })))
        .toBe("insufficient_scope: this credential lacks the scope meetings:write")
    }))

  it.scoped("another workspace's meeting is invisible: not_found for every tool, absent from lists", () =>
    Effect.gen(function*() {
      const { client } = yield* member
      const stranger = yield* principalFor({ role: "OWNER", scopes: everyScope })
      const theirs = yield* (yield* Meetings).create(stranger.principal, CreateMeeting.make({ title: "Secret merger" }))
      const item = yield* (yield* ActionItems).create(stranger.principal, CreateActionItem.make({ meeting_id: theirs.id, title: "Sign" }))
      const notFound = `not_found: meeting ${theirs.id} was not found`
      expect(toolError(yield* callTool(client, "get_meeting", { id: theirs.id }))).toBe(notFound)
      expect(toolError(yield* callTool(client, "get_meeting_context", { id: theirs.id }))).toBe(notFound)
      expect(toolError(yield* callTool(client, "create_action_item", { meeting_id: theirs.id, title: "Peek" }))).toBe(notFound)
      expect(toolError(yield* callTool(client, "add_participants", { id: theirs.id, participants: [{ guest_email: "a@b.co", role: "VIEWER" }] })))
        .toBe(notFound)
      expect(toolError(yield* callTool(client, "update_action_item", { id: item.id, status: "completed" }))).toMatch(/^not_found: /)
      const searched = structured<List>(yield* callTool(client, "search_meetings", { q: "merger" }))
      expect(searched.total).toBe(0)
      // Nor does a workspace API key of this workspace see it.
      const key = yield* apiKeyFor((yield* member).workspace.id)
      const { client: keyClient } = yield* connect({ principal: key })
      expect(toolError(yield* callTool(keyClient, "get_meeting", { id: theirs.id }))).toBe(notFound)
    }))

  it.scoped("hostile arguments are tool errors naming the field, and the server keeps answering", () =>
    Effect.gen(function*() {
      const { client, meeting } = yield* member
      const errorOf = (name: string, args: Record<string, unknown>) => Effect.map(callTool(client, name, args), toolError)

      expect(yield* errorOf("get_meeting", { id: "not-a-uuid" })).toBe("validation_error: id: must be a UUID")
      expect(yield* errorOf("get_meeting", { id: 42 })).toMatch(/^validation_error: id: must be a (string|UUID)/)
      expect(yield* errorOf("get_meeting", {})).toBe("validation_error: id: is required")
      expect(yield* errorOf("get_meeting", { id: meeting.id, extra: true })).toBe("validation_error: extra: is not a field of this request")
      expect(yield* errorOf("create_action_item", { meeting_id: meeting.id, title: 7 })).toBe("validation_error: title: must be a string")
      expect(yield* errorOf("create_action_item", { meeting_id: meeting.id, title: "x".repeat(2_000_000) }))
        .toMatch(/^validation_error: title: /)
      expect(yield* errorOf("list_meetings", { limit: "ten" })).toBe("validation_error: limit: must be an integer")
      expect(yield* errorOf("list_meetings", { limit: 1e300 })).toBe("validation_error: limit: must be an integer")
      expect(yield* errorOf("list_meetings", { status: { $ne: null } })).toMatch(/^validation_error: status: /)
      expect(yield* errorOf("add_participants", { id: meeting.id, participants: [[[[[]]]]] })).toMatch(/^validation_error: participants\[0\]/)
      expect(yield* errorOf("update_action_item", { id: meeting.id, idempotency_key: 5 }))
        .toBe("validation_error: idempotency_key: must be a string")
      expect(yield* errorOf("create_action_item", { meeting_id: meeting.id, title: "x", idempotency_key: " " }))
        .toMatch(/^idempotency_key_invalid: /)
      expect(yield* errorOf("list_meetings", { idempotency_key: "k" })).toBe("validation_error: idempotency_key: is not a field of this request")

      // Prototype pollution: the keys arrive as own fields (JSON.parse makes them so) and are refused as unknown.
      const polluted = JSON.parse(`{"meeting_id":"${meeting.id}","title":"x","__proto__":{"isAdmin":true},"constructor":{"prototype":{"isAdmin":true}}}`)
      const refused = yield* errorOf("create_action_item", polluted)
      expect(refused).toMatch(/^validation_error: (__proto__|constructor): is not a field of this request/)
      expect(({} as Record<string, unknown>)["isAdmin"]).toBeUndefined()

      // An unknown tool is a protocol error (InvalidParams); the session goes on.
      const unknown = yield* Effect.promise(() => client.callTool({ name: "drop_tables", arguments: {} }).then(() => undefined, (error: Error) => error))
      expect(unknown?.message).toBe(`MCP error -32602: unknown tool "drop_tables"`)

      expect(structured<List>(yield* callTool(client, "list_meetings")).items.map((item) => item.id)).toEqual([meeting.id])
    }))

  it.scoped("random arguments never crash a tool: a result or a tool error, every time", () =>
    Effect.gen(function*() {
      const { client, meeting } = yield* member
      const values = FastCheck.oneof(
        FastCheck.jsonValue({ maxDepth: 3 }),
        FastCheck.constant(meeting.id),
        FastCheck.string({ maxLength: 600 })
      )
      const argumentsOf = (tool: string) =>
        FastCheck.dictionary(
          FastCheck.oneof(
            FastCheck.constantFrom(...Object.keys(toolList.find((t) => t.definition.name === tool)!.definition.inputSchema.properties ?? {})),
            FastCheck.constantFrom("__proto__", "constructor", "toString", ""),
            FastCheck.string({ maxLength: 20 })
          ),
          values,
          { maxKeys: 5 }
        )
      const cases = FastCheck.sample(
        FastCheck.tuple(FastCheck.constantFrom(...toolNames), FastCheck.constant(null)).chain(([tool]) =>
          FastCheck.tuple(FastCheck.constant(tool), argumentsOf(tool))
        ),
        { numRuns: 300, seed: 15 }
      )
      const outcomes = { results: 0, errors: 0 }
      for (const [tool, args] of cases) {
        const result = yield* callTool(client, tool, args)
        outcomes[result.isError === true ? "errors" : "results"]++
        if (result.isError === true) expect(textOf(result)).toMatch(/^(validation_error|not_found|conflict|insufficient_scope|idempotency_key_invalid|idempotency_key_reuse): ./s)
        else expect(result.structuredContent).toBeTypeOf("object")
        expect(textOf(result)).not.toMatch(/internal_error|Error:|at .*\.ts/)
      }
      expect(outcomes.results).toBeGreaterThan(10)
      expect(outcomes.errors).toBeGreaterThan(100)
      expect(structured<List>(yield* callTool(client, "get_meeting", { id: meeting.id }))).toBeTypeOf("object")
    }), { timeout: 60_000 })

  describe("idempotency_key", () => {
    it.scoped("a repeat with the same arguments replays the first result; other arguments are idempotency_key_reuse", () =>
      Effect.gen(function*() {
        const { client, meeting, principal } = yield* member
        const args = { meeting_id: meeting.id, title: "Write the summary", idempotency_key: "summary-1" }
        const first = yield* callTool(client, "create_action_item", args)
        const again = yield* callTool(client, "create_action_item", { ...args })
        expect(structured(again)).toEqual(structured(first))
        expect(first._meta).toBeUndefined()
        expect(again._meta).toEqual({ "convene/idempotent-replayed": true })
        const reused = yield* callTool(client, "create_action_item", { ...args, title: "Something else" })
        expect(toolError(reused)).toBe(
          "idempotency_key_reuse: this Idempotency-Key was already used with a different request (method, path or body)"
        )
        const listed = yield* (yield* ActionItems).list(principal, { meeting_id: meeting.id }, {})
        expect(listed.items.map((item) => item.title)).toEqual(["Write the summary"])
        // The same key on another tool is another request.
        expect(toolError(yield* callTool(client, "create_agenda_item", { meeting_id: meeting.id, title: "x", idempotency_key: "summary-1" })))
          .toMatch(/^idempotency_key_reuse: /)
      }))

    it.scoped("an update tool honours the key too: a retried completion is answered as the first, not done again", () =>
      Effect.gen(function*() {
        const { client, meeting, principal } = yield* member
        const item = yield* (yield* ActionItems).create(principal, CreateActionItem.make({
          meeting_id: meeting.id,
          title: "Ship it",
          status: "in_progress"
        }))
        const args = { id: item.id, status: "completed", idempotency_key: "complete-ship-it" }
        const first = structured<Item>(yield* callTool(client, "update_action_item", args))
        yield* Effect.sleep("5 millis")
        const retry = yield* callTool(client, "update_action_item", args)
        expect(retry._meta).toEqual({ "convene/idempotent-replayed": true })
        expect(structured(retry)).toEqual(first)
        const stored = Encode.encoderOf(ActionItem)(yield* (yield* ActionItems).get(principal, item.id)) as Item
        expect(stored["updated_at"]).toBe(first["updated_at"])
      }))

    it.scoped("keys are the credential's own, and a call that failed releases its key", () =>
      Effect.gen(function*() {
        const { client, meeting, principal, workspace, caller } = yield* member
        const missing = "7f0c3a52-6f5e-4d7e-9a51-0d2f8f1b9c44"
        const failed = yield* callTool(client, "create_agenda_item", { meeting_id: missing, title: "Intro", idempotency_key: "k" })
        expect(toolError(failed)).toBe(`not_found: meeting ${missing} was not found`)
        const corrected = structured<Item>(yield* callTool(client, "create_agenda_item", { meeting_id: meeting.id, title: "Intro", idempotency_key: "k" }))
        expect(corrected["title"]).toBe("Intro")

        // Another credential of another user with the same key and arguments does the work itself.
        const colleague = yield* principalFor({ workspaceId: workspace.id, role: "ADMIN", scopes: everyScope })
        const previous: Principal = caller.principal
        caller.principal = colleague.principal
        const theirs = structured<Item>(yield* callTool(client, "create_agenda_item", { meeting_id: meeting.id, title: "Intro", idempotency_key: "k" }))
        expect(theirs.id).not.toBe(corrected.id)
        caller.principal = previous
        const agenda = yield* (yield* AgendaItems).list(principal, { meeting_id: meeting.id }, {})
        expect(agenda.total).toBe(2)
      }))
  })

  it.scoped("a request without a principal is refused", () =>
    Effect.gen(function*() {
      const { meeting } = yield* member
      const { client } = yield* connect({ principal: undefined as unknown as Principal })
      expect(toolError(yield* callTool(client, "get_meeting", { id: meeting.id })))
        .toBe("unauthorized: this request carries no authenticated credential")
    }))
})
