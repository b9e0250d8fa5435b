/**
 * The MCP server's resources through the SDK's own client (in process): the templates, the list of the caller's
 * meetings in pages, reading a meeting and its transcript export, the JSON-RPC errors of an invisible meeting or a
 * malformed URI, and subscriptions: a change made through the core reaches a subscribed client as
 * notifications/resources/updated, only for the meetings it subscribed to; unsubscribing and closing the session
 * give the event feed back (no stream left attached).
 */
import {
  AgendaItems,
  CreateAgendaItem,
  CreateMeeting,
  EventFeed,
  type Meeting,
  Meetings,
  type Principal,
  UpdateMeeting
} from "@convene/core"
import { describe, expect, layer } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { McpError, type ReadResourceResult, ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { Duration, Effect } from "effect"
import { principalFor } from "../core/fixtures.js"
import { callTool, connect, feedSettings, McpLive, structured, uploadContext } from "./session.js"

const scopes = ["meetings:read", "meetings:write", "action-items:read", "action-items:write"] as const

const uriOf = (meeting: Meeting) => `convene://meetings/${meeting.id}`

/** The error a client request fails with (fails when it succeeds). */
const failureOf = <A>(request: () => Promise<A>) =>
  Effect.promise(() => request().then(() => undefined, (error: unknown) => error)).pipe(
    Effect.map((error) => {
      if (!(error instanceof McpError)) throw new Error(`expected an McpError, got ${String(error)}`)
      // The client's McpError prefixes the message the server sent with "MCP error {code}: ".
      return { code: error.code, message: error.message.replace(`MCP error ${error.code}: `, "") }
    })
  )

/** Waits, in real time, until `check` holds (2 s at most). */
const until = <E, R>(check: Effect.Effect<boolean, E, R>) =>
  Effect.gen(function*() {
    for (let waited = 0; waited < 2000; waited += 10) {
      if (yield* check) return
      yield* Effect.sleep(Duration.millis(10))
    }
    expect(yield* check).toBe(true)
  })

const eventually = (check: () => boolean) => until(Effect.sync(check))

/** The text of a resource's content (fails for a blob). */
const textOf = (content: ReadResourceResult["contents"][number] | undefined): string => {
  if (content === undefined || !("text" in content)) throw new Error("expected a text content")
  return content.text
}

/** The URIs the client is told about, as they come. */
const listen = (client: Client) => {
  const told: Array<string> = []
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
    told.push(notification.params.uri)
  })
  return told
}

const openStreams = Effect.flatMap(EventFeed, (feed) => feed.openStreams)

const setup = (options: { readonly principal?: Principal } = {}) =>
  Effect.gen(function*() {
    const owner = yield* principalFor({ role: "OWNER", scopes })
    const principal = options.principal ?? owner.principal
    const meeting = yield* (yield* Meetings).create(owner.principal, CreateMeeting.make({ title: "Design review" }))
    const { client } = yield* connect({ principal })
    return { ...owner, meeting, client }
  })

layer(McpLive, { excludeTestServices: true })("MCP resources", (it) => {
  it.scoped("templates; the caller's meetings listed 50 a page with a cursor; another workspace's not at all", () =>
    Effect.gen(function*() {
      const { client, meeting, principal } = yield* setup()
      const { resourceTemplates } = yield* Effect.promise(() => client.listResourceTemplates())
      expect(resourceTemplates.map((template) => [template.uriTemplate, template.mimeType])).toEqual([
        ["convene://meetings/{id}", "application/json"],
        ["convene://meetings/{id}/transcript", "text/plain"]
      ])
      const stranger = yield* principalFor({ role: "OWNER", scopes })
      yield* (yield* Meetings).create(stranger.principal, CreateMeeting.make({ title: "Not yours" }))
      const meetings = yield* Meetings
      for (let n = 0; n < 54; n++) yield* meetings.create(principal, CreateMeeting.make({ title: `Meeting ${n}` }))

      const first = yield* Effect.promise(() => client.listResources())
      expect(first.resources).toHaveLength(50)
      expect(first.nextCursor).toBe("50")
      const second = yield* Effect.promise(() => client.listResources({ cursor: first.nextCursor! }))
      expect(second.resources).toHaveLength(5)
      expect(second.nextCursor).toBeUndefined()
      const listed = [...first.resources, ...second.resources]
      expect(listed.map((resource) => resource.name).sort()).toEqual(
        ["Design review", ...Array.from({ length: 54 }, (_, n) => `Meeting ${n}`)].sort()
      )
      expect(listed.find((resource) => resource.name === "Design review")).toEqual({
        uri: uriOf(meeting),
        name: "Design review",
        title: "Design review",
        mimeType: "application/json",
        description: "meeting, scheduled"
      })
      expect(new Set(listed.map((resource) => resource.uri)).size).toBe(55)

      const bad = yield* failureOf(() => client.listResources({ cursor: "../../etc" }))
      expect(bad).toEqual({ code: -32602, message: expect.stringContaining("validation_error: cursor: is not a cursor this server gave") })
    }))

  it.scoped("reads a meeting as get_meeting answers it, and its transcript export as text", () =>
    Effect.gen(function*() {
      const { client, meeting, principal } = yield* setup()
      yield* (yield* AgendaItems).create(principal, CreateAgendaItem.make({ meeting_id: meeting.id, title: "Mockups" }))
      const read = yield* Effect.promise(() => client.readResource({ uri: uriOf(meeting) }))
      const [content] = read.contents
      expect(content).toMatchObject({ uri: uriOf(meeting), mimeType: "application/json" })
      const tool = structured(yield* callTool(client, "get_meeting", { id: meeting.id }))
      expect(JSON.parse(textOf(content))).toEqual(tool)

      const empty = yield* Effect.promise(() => client.readResource({ uri: `${uriOf(meeting)}/transcript` }))
      expect(empty.contents).toEqual([{ uri: `${uriOf(meeting)}/transcript`, mimeType: "text/plain", text: "" }])
      const srt = "1\n00:00:01,000 --> 00:00:04,000\nAlice: mail me at alice@example.com\n\n2\n00:01:02,500 --> 00:01:05,000\nBob: will do\n"
      yield* uploadContext(principal, meeting.id, { name: "call.srt", contentType: "application/x-subrip", text: srt, kind: "transcript" })
      const transcript = yield* Effect.promise(() => client.readResource({ uri: `${uriOf(meeting)}/transcript` }))
      expect(textOf(transcript.contents[0])).toBe("[00:00:01] Alice: mail me at [EMAIL]\n[00:01:02] Bob: will do\n")
    }))

  it.scoped("an invisible meeting is -32002 not_found; a malformed URI -32602; a missing scope -32600", () =>
    Effect.gen(function*() {
      const { client, workspace } = yield* setup()
      const stranger = yield* principalFor({ role: "OWNER", scopes })
      const theirs = yield* (yield* Meetings).create(stranger.principal, CreateMeeting.make({ title: "Theirs" }))
      expect(yield* failureOf(() => client.readResource({ uri: uriOf(theirs) }))).toEqual({
        code: -32002,
        message: `not_found: meeting ${theirs.id} was not found`
      })
      expect(yield* failureOf(() => client.readResource({ uri: `${uriOf(theirs)}/transcript` }))).toMatchObject({ code: -32002 })
      for (const uri of ["convene://meetings/nope", "https://example.com/", `${uriOf(theirs)}/secrets`, "convene://meetings/"]) {
        expect(yield* failureOf(() => client.readResource({ uri }))).toMatchObject({ code: -32602, message: expect.stringContaining("validation_error: uri:") })
      }
      const calendarOnly = yield* principalFor({ workspaceId: workspace.id, scopes: ["calendar:read"] })
      const { client: narrow } = yield* connect({ principal: calendarOnly.principal })
      expect(yield* failureOf(() => narrow.listResources())).toEqual({
        code: -32600,
        message: "insufficient_scope: this credential lacks the scope meetings:read"
      })
    }))

  describe("subscriptions", () => {
    it.scoped("a change through the core is told to the subscribed client, for its meetings only", () =>
      Effect.gen(function*() {
        const { client, meeting, principal } = yield* setup()
        const other = yield* (yield* Meetings).create(principal, CreateMeeting.make({ title: "Other" }))
        const told = listen(client)
        const before = yield* openStreams
        yield* Effect.promise(() => client.subscribeResource({ uri: uriOf(meeting) }))
        yield* Effect.promise(() => client.subscribeResource({ uri: `${uriOf(meeting)}/transcript` }))
        expect(yield* openStreams).toBe(before + 1)

        const agenda = yield* AgendaItems
        yield* agenda.create(principal, CreateAgendaItem.make({ meeting_id: other.id, title: "Not watched" }))
        yield* agenda.create(principal, CreateAgendaItem.make({ meeting_id: meeting.id, title: "Watched" }))
        yield* eventually(() => told.length >= 1)
        yield* (yield* Meetings).update(principal, meeting.id, UpdateMeeting.make({ title: "Design review (moved)" }))
        yield* eventually(() => told.length >= 2)
        yield* Effect.sleep(Duration.millis(50))
        expect(told).toEqual([uriOf(meeting), uriOf(meeting)])

        yield* Effect.promise(() => client.unsubscribeResource({ uri: uriOf(meeting) }))
        expect(yield* openStreams).toBe(before + 1)
        yield* Effect.promise(() => client.unsubscribeResource({ uri: `${uriOf(meeting)}/transcript` }))
        expect(yield* openStreams).toBe(before)
        yield* agenda.create(principal, CreateAgendaItem.make({ meeting_id: meeting.id, title: "After" }))
        yield* Effect.sleep(Duration.millis(100))
        expect(told).toHaveLength(2)
      }))

    it.scoped("closing the session detaches it from the event feed", () =>
      Effect.gen(function*() {
        const before = yield* openStreams
        const { client, meeting } = yield* setup()
        yield* Effect.promise(() => client.subscribeResource({ uri: uriOf(meeting) }))
        expect(yield* openStreams).toBe(before + 1)
        yield* Effect.promise(() => client.close())
        yield* until(Effect.map(openStreams, (open) => open === before))
      }))

    it.scoped("subscribing to a meeting the caller cannot see is refused and attaches nothing", () =>
      Effect.gen(function*() {
        const { client } = yield* setup()
        const stranger = yield* principalFor({ role: "OWNER", scopes })
        const theirs = yield* (yield* Meetings).create(stranger.principal, CreateMeeting.make({ title: "Theirs" }))
        const before = yield* openStreams
        expect(yield* failureOf(() => client.subscribeResource({ uri: uriOf(theirs) }))).toMatchObject({ code: -32002 })
        expect(yield* failureOf(() => client.subscribeResource({ uri: "convene://meetings/x" }))).toMatchObject({ code: -32602 })
        expect(yield* openStreams).toBe(before)
      }))

    it.scoped("another user's change of a subscribed meeting is told, with or without workspace:read; another meeting's is not", () =>
      Effect.gen(function*() {
        const owner = yield* principalFor({ role: "OWNER", scopes })
        const meeting = yield* (yield* Meetings).create(owner.principal, CreateMeeting.make({ title: "Shared" }))
        const unwatched = yield* (yield* Meetings).create(owner.principal, CreateMeeting.make({ title: "Unwatched" }))
        const watcher = yield* principalFor({
          workspaceId: owner.workspace.id,
          role: "ADMIN",
          kind: "personal_access_token",
          scopes: [...scopes, "workspace:read"]
        })
        const colleague = yield* principalFor({ workspaceId: owner.workspace.id, role: "ADMIN", scopes })
        const withRead = yield* connect({ principal: watcher.principal })
        const without = yield* connect({ principal: colleague.principal })
        const toldWithRead = listen(withRead.client)
        const toldWithout = listen(without.client)
        yield* Effect.promise(() => withRead.client.subscribeResource({ uri: uriOf(meeting) }))
        yield* Effect.promise(() => without.client.subscribeResource({ uri: uriOf(meeting) }))
        yield* (yield* AgendaItems).create(owner.principal, CreateAgendaItem.make({ meeting_id: unwatched.id, title: "Elsewhere" }))
        yield* (yield* AgendaItems).create(owner.principal, CreateAgendaItem.make({ meeting_id: meeting.id, title: "By the owner" }))
        yield* eventually(() => toldWithRead.length === 1 && toldWithout.length === 1)
        yield* Effect.sleep(Duration.millis(50))
        expect(toldWithRead).toEqual([uriOf(meeting)])
        expect(toldWithout).toEqual([uriOf(meeting)])
      }))

    it.scoped("sessions of one credential hold at most its event stream slots: one more subscribing is too_many_requests", () =>
      Effect.gen(function*() {
        const { meeting, principal } = yield* setup()
        for (let n = 0; n < feedSettings.streamsPerCredential; n++) {
          const { client } = yield* connect({ principal })
          yield* Effect.promise(() => client.subscribeResource({ uri: uriOf(meeting) }))
        }
        const { client } = yield* connect({ principal })
        const refused = yield* failureOf(() => client.subscribeResource({ uri: uriOf(meeting) }))
        expect(refused).toMatchObject({ code: -32600, message: expect.stringContaining("too_many_requests: this credential already has 3 open event streams") })
        // The session still answers.
        expect(structured(yield* callTool(client, "get_meeting", { id: meeting.id }))).toBeTypeOf("object")
      }))
  })
})
