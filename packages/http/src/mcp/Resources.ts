/**
 * The MCP server's resources: a meeting (`convene://meetings/{id}`, the JSON get_meeting answers) and its transcript
 * export (`convene://meetings/{id}/transcript`, the text GET /v1/meetings/{id}/transcript/export answers), read
 * through the same core services as /v1, and subscriptions to them.
 *
 * - resources/list lists the caller's meetings (newest first, as GET /v1/meetings) 50 a page, the cursor being the
 *   offset of the next page; resources/templates/list gives the two templates.
 * - A failure is a JSON-RPC error (resources have no tool-error form) whose message is `code: message` as the REST
 *   envelope says it: not_found is -32002 (the MCP specification's "resource not found"), a malformed URI or cursor
 *   -32602, any other refusal (insufficient_scope, too_many_requests) -32600, a defect -32603 without detail.
 * - Subscriptions: subscribing to a meeting or its transcript, once the caller may read the meeting, attaches the
 *   session to its workspace's event feed (core EventFeed: one of the credential's stream slots per session with
 *   subscriptions, whatever their number; every event of the workspace, filtered here by the meetings subscribed to,
 *   which the caller could read when subscribing: a colleague's change of such a meeting is told too, and a
 *   notification carries only the URI, never the change). An event about a subscribed meeting (meeting.*,
 *   agenda_item.*, action_item.*, participant.* whose data names the meeting) sends
 *   `notifications/resources/updated` with the meeting's URI, once per batch of events; a transcript upload
 *   (context.uploaded of kind transcript) and the meeting's deletion, with the transcript's URI. The last
 *   unsubscribe, and the session's close, detach the feed.
 */
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js"
import type { ListResourcesResult, ReadResourceResult, ResourceTemplate } from "@modelcontextprotocol/sdk/types.js"
import { type DomainEvent, Encode, EventFeed, MeetingId, Meetings, type Principal, ValidationError } from "@convene/core"
import { Cause, Effect, Option, Schema } from "effect"
import { type DomainFailure, failureText, MeetingDocument, meetingDocument, type ToolServices } from "./Tools.js"

export const resourceTemplates: ReadonlyArray<ResourceTemplate> = [
  {
    uriTemplate: "convene://meetings/{id}",
    name: "meeting",
    title: "Meeting",
    description: "A meeting with its participants, agenda items and action items (the first 100 of each), as the tool " +
      "get_meeting answers it. Subscribe to be told when the meeting, its agenda, action items or participants change.",
    mimeType: "application/json"
  },
  {
    uriTemplate: "convene://meetings/{id}/transcript",
    name: "meeting_transcript",
    title: "Meeting transcript",
    description: "The meeting's transcript as GET /v1/meetings/{id}/transcript/export answers it: text/plain, one " +
      "`[hh:mm:ss] Speaker: text` line per segment (empty when there is none).",
    mimeType: "text/plain"
  }
]

/** What a URI addresses. */
type Target = { readonly kind: "meeting" | "transcript"; readonly id: MeetingId }

export const meetingUri = (id: string) => `convene://meetings/${id}`
export const transcriptUri = (id: string) => `convene://meetings/${id}/transcript`

const isMeetingId = Schema.is(MeetingId)

/**
 * A JSON-RPC error as the SDK answers it (`code` and `message` of what a handler throws): the SDK's McpError would
 * prefix the message with "MCP error {code}: ", which the client's McpError adds again.
 */
export class ProtocolError extends Error {
  constructor(readonly code: number, message: string) {
    super(message)
  }
}

/** The MCP spec's code for a resource that does not exist. */
const resourceNotFound = -32002

/** The target of `uri`, or the validation error of a malformed or unknown one. */
export const targetOf = (uri: string): Effect.Effect<Target, ValidationError> => {
  const prefix = "convene://meetings/"
  const rest = uri.startsWith(prefix) ? uri.slice(prefix.length) : undefined
  const [id, tail, ...more] = rest === undefined ? [] : rest.split("/")
  const kind = tail === undefined ? "meeting" : tail === "transcript" && more.length === 0 ? "transcript" : undefined
  if (id === undefined || kind === undefined) {
    return Effect.fail(ValidationError.of("uri", "must be convene://meetings/{id} or convene://meetings/{id}/transcript"))
  }
  if (!isMeetingId(id)) return Effect.fail(ValidationError.of("uri", "the meeting id must be a UUID"))
  return Effect.succeed({ kind, id })
}

/** The JSON-RPC error of a domain failure. */
export const protocolError = (failure: DomainFailure): ProtocolError =>
  new ProtocolError(
    failure._tag === "NotFound"
      ? resourceNotFound
      : failure._tag === "ValidationError"
      ? ErrorCode.InvalidParams
      : ErrorCode.InvalidRequest,
    failureText(failure)
  )

/** Runs a resource request: its domain failures become JSON-RPC errors, a defect is logged and told without detail. */
export const asProtocol = <A, R>(effect: Effect.Effect<A, DomainFailure, R>): Effect.Effect<A, ProtocolError, R> =>
  Effect.catchAllCause(effect, (cause) =>
    Option.match(Cause.failureOption(cause), {
      onSome: (failure) => Effect.fail(protocolError(failure)),
      onNone: () =>
        Effect.zipRight(
          Effect.logError("an MCP resource request failed unexpectedly", cause),
          Effect.fail(new ProtocolError(ErrorCode.InternalError, "internal_error: the server could not complete this request"))
        )
    }))

const encodeDocument = Encode.encoderOf(MeetingDocument)

/** resources/read. */
export const read = (principal: Principal, uri: string) =>
  Effect.gen(function*() {
    const target = yield* targetOf(uri)
    if (target.kind === "transcript") {
      const text = yield* (yield* Meetings).exportTranscript(principal, target.id)
      return { contents: [{ uri, mimeType: "text/plain", text }] } satisfies ReadResourceResult
    }
    const document = encodeDocument(yield* meetingDocument(principal, target.id))
    return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify(document) }] } satisfies ReadResourceResult
  })

/** The meetings resources/list gives a page. */
export const listPageSize = 50

/** resources/list: the caller's meetings, newest first, 50 a page; the cursor is the next page's offset. */
export const list = (principal: Principal, cursor: string | undefined) =>
  Effect.gen(function*() {
    const offset = cursor === undefined ? 0 : /^\d{1,9}$/.test(cursor) ? Number(cursor) : undefined
    if (offset === undefined) return yield* Effect.fail(ValidationError.of("cursor", "is not a cursor this server gave"))
    const page = yield* (yield* Meetings).list(principal, {}, { limit: listPageSize, offset })
    const next = offset + page.items.length
    return {
      resources: page.items.map((meeting) => ({
        uri: meetingUri(meeting.id),
        name: meeting.title,
        title: meeting.title,
        mimeType: "application/json",
        description: `meeting, ${meeting.status}`
      })),
      ...(page.items.length > 0 && next < page.total ? { nextCursor: String(next) } : {})
    } satisfies ListResourcesResult
  })

/** The URIs an event tells about (see the module's comment). */
export const urisOf = (event: DomainEvent): ReadonlyArray<string> => {
  const data = event.data
  const [family] = event.type.split(".")
  const meetingId = family === "meeting" ? data["id"] : data["meeting_id"]
  if (typeof meetingId !== "string") return []
  switch (family) {
    case "meeting":
      return event.type === "meeting.deleted" ? [meetingUri(meetingId), transcriptUri(meetingId)] : [meetingUri(meetingId)]
    case "agenda_item":
    case "action_item":
    case "participant":
      return [meetingUri(meetingId)]
    case "context":
      return data["kind"] === "transcript" ? [transcriptUri(meetingId)] : []
    default:
      return []
  }
}

/**
 * One session's subscriptions: the URIs it subscribed to and, while there is one, its attachment to the event feed.
 * `notify` sends the notification (it must not block: it is called from the feed's poller).
 */
export const subscriptions = (notify: (uri: string) => void) =>
  Effect.gen(function*() {
    const feed = yield* EventFeed
    const lock = yield* Effect.makeSemaphore(1)
    const subscribed = new Set<string>()
    let detach: Effect.Effect<void> | undefined
    let closed = false

    const push = (events: ReadonlyArray<DomainEvent>) => {
      const told = new Set<string>()
      for (const event of events) {
        for (const uri of urisOf(event)) if (subscribed.has(uri)) told.add(uri)
      }
      for (const uri of told) notify(uri)
    }

    const detachFeed = Effect.suspend(() => {
      const current = detach
      detach = undefined
      return current ?? Effect.void
    })

    /** resources/subscribe: the caller must be able to read the meeting. */
    const subscribe = (principal: Principal, uri: string) =>
      lock.withPermits(1)(Effect.gen(function*() {
        const target = yield* targetOf(uri)
        yield* (yield* Meetings).get(principal, target.id)
        if (closed) return
        // Every event of the workspace: the subscriptions filter them by the meetings subscribed to, which the caller
        // could read when subscribing (a colleague's change of one is told too; a notification carries only the URI).
        if (detach === undefined) detach = yield* feed.attach(principal, Option.none(), push, { events: "workspace" })
        subscribed.add(uri)
      }))

    /** resources/unsubscribe: a URI not subscribed to is a no-op; the last one detaches the feed. */
    const unsubscribe = (uri: string) =>
      lock.withPermits(1)(Effect.suspend(() => {
        subscribed.delete(uri)
        return subscribed.size === 0 ? detachFeed : Effect.void
      }))

    /** The session closed: every subscription goes, and the feed is detached. */
    const close = lock.withPermits(1)(Effect.suspend(() => {
      closed = true
      subscribed.clear()
      return detachFeed
    }))

    return { subscribe, unsubscribe, close, size: () => subscribed.size } as const
  })

export type Subscriptions = Effect.Effect.Success<ReturnType<typeof subscriptions>>

/** The services resources need. */
export type ResourceServices = ToolServices | EventFeed
