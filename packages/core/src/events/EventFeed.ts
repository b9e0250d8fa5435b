/**
 * The event stream's feed (GET /v1/user/events): the events of a workspace as they become visible in the log,
 * to every stream open on it, resumable from an event id.
 *
 * - One poller per workspace with open streams reads the log every `pollInterval` (1 s) from where it left off
 *   and publishes what it finds to the workspace's streams. The log is the store's, so a change made through
 *   any server process sharing the store reaches every stream of every process; a workspace whose streams all
 *   closed stops being polled. Ten thousand idle streams on one workspace cost one query a second.
 * - A stream that resumes (`Last-Event-ID`) first replays the log after that event, then follows the poller;
 *   positions grow in the order events become visible, so an event seen in both is told once, and none between
 *   them is missed. An id the log no longer holds (older than its retention, or not an event of the workspace)
 *   starts the stream at the newest event, like a stream without one.
 * - Who sees what (first-party document): any one of meetings:read, action-items:read, calendar:read or
 *   workspace:read opens a stream; with workspace:read it carries every event of the workspace, without it only
 *   system events (no actor) and those the caller caused.
 * - A credential holds at most `streamsPerCredential` open streams in one process; one more is refused
 *   (TooManyStreams, 429) until one closes.
 */
import {
  Chunk,
  Context,
  Duration,
  Effect,
  Exit,
  Fiber,
  Layer,
  Option,
  PubSub,
  Schema,
  Scope,
  Stream,
  SynchronizedRef
} from "effect"
import type { Principal, Scope as GrantedScope } from "../identity/Identity.js"
import { InsufficientScope, TooManyStreams } from "../shared/Errors.js"
import type { WorkspaceId } from "../shared/Ids.js"
import { type DomainEvent, EventId, type LoggedEvent } from "./Event.js"
import { EventLog } from "./EventLog.js"

export interface FeedSettings {
  /** How often a workspace's log is read while it has open streams. */
  readonly pollInterval: Duration.DurationInput
  /** Open streams per credential (per server process). */
  readonly streamsPerCredential: number
}

export const defaultFeedSettings: FeedSettings = { pollInterval: Duration.seconds(1), streamsPerCredential: 10 }

/** Any one of these opens a stream. */
export const streamScopes: ReadonlyArray<GrantedScope> = [
  "meetings:read",
  "action-items:read",
  "calendar:read",
  "workspace:read"
]

/** Whether the stream of `principal` carries `event`: every event with workspace:read, else system events and the caller's own. */
export const canSee = (principal: Principal) => {
  const all = principal.scopes.includes("workspace:read")
  return (event: DomainEvent): boolean =>
    all || event.actor_user_id === null || (principal.user_id !== null && event.actor_user_id === principal.user_id)
}

/** Events read from the log at once. */
const batch = 500

interface Hub {
  readonly pubsub: PubSub.PubSub<LoggedEvent>
  readonly poller: Fiber.RuntimeFiber<never>
  streams: number
}

const isEventId = Schema.is(EventId)

const make = (settings: FeedSettings) =>
  Effect.gen(function*() {
    const log = yield* EventLog
    const feedScope = yield* Effect.scope
    const hubs = yield* SynchronizedRef.make(new Map<WorkspaceId, Hub>())
    const open = new Map<string, number>()

    /** The events after `position`, all of them, in batches; the last position read. */
    const readFrom = (workspaceId: WorkspaceId, position: number, publish: (events: ReadonlyArray<LoggedEvent>) => Effect.Effect<unknown>): Effect.Effect<number> =>
      Effect.flatMap(log.after(workspaceId, position, batch), (events) => {
        if (events.length === 0) return Effect.succeed(position)
        const last = events[events.length - 1]!.position
        return Effect.zipRight(publish(events), events.length === batch ? readFrom(workspaceId, last, publish) : Effect.succeed(last))
      })

    /** Reads the workspace's log forever, publishing what is new; a failed read is logged and tried again. */
    const poll = (workspaceId: WorkspaceId, pubsub: PubSub.PubSub<LoggedEvent>, from: number): Effect.Effect<never> =>
      Effect.sleep(settings.pollInterval).pipe(
        Effect.zipRight(readFrom(workspaceId, from, (events) => PubSub.publishAll(pubsub, events))),
        Effect.catchAllCause((cause) =>
          Effect.as(Effect.logWarning("reading the event log for the event stream failed; trying again", cause), from)
        ),
        Effect.flatMap((next) => poll(workspaceId, pubsub, next))
      )

    const join = (workspaceId: WorkspaceId) =>
      SynchronizedRef.modifyEffect(hubs, (map) => {
        const known = map.get(workspaceId)
        if (known !== undefined) {
          known.streams += 1
          return Effect.succeed([known, map] as const)
        }
        return Effect.gen(function*() {
          const pubsub = yield* PubSub.unbounded<LoggedEvent>()
          const head = yield* log.head(workspaceId)
          // Joined from an acquire (uninterruptible): the poller must be made interruptible, or nothing stops it.
          const poller = yield* Effect.forkIn(Effect.interruptible(poll(workspaceId, pubsub, head)), feedScope)
          const hub: Hub = { pubsub, poller, streams: 1 }
          map.set(workspaceId, hub)
          return [hub, map] as const
        })
      })

    const leave = (workspaceId: WorkspaceId) =>
      SynchronizedRef.updateEffect(hubs, (map) => {
        const hub = map.get(workspaceId)
        if (hub === undefined) return Effect.succeed(map)
        hub.streams -= 1
        if (hub.streams > 0) return Effect.succeed(map)
        map.delete(workspaceId)
        return Effect.as(Effect.zipRight(Fiber.interrupt(hub.poller), PubSub.shutdown(hub.pubsub)), map)
      })

    /** One of the credential's stream slots, given back when the scope closes. */
    const slot = (principal: Principal) =>
      Effect.acquireRelease(
        Effect.suspend(() => {
          const held = open.get(principal.credential_id) ?? 0
          if (held >= settings.streamsPerCredential) {
            return Effect.fail(
              new TooManyStreams({
                limit: settings.streamsPerCredential,
                message: `this credential already has ${held} open event streams, the most allowed; close one first`
              })
            )
          }
          open.set(principal.credential_id, held + 1)
          return Effect.void
        }),
        () =>
          Effect.sync(() => {
            const held = (open.get(principal.credential_id) ?? 1) - 1
            if (held === 0) open.delete(principal.credential_id)
            else open.set(principal.credential_id, held)
          })
      )

    /** Where a stream starts: after the event it last saw, when the log still holds it; else after the newest. */
    const startOf = (workspaceId: WorkspaceId, lastEventId: Option.Option<string>) =>
      Option.match(Option.filter(lastEventId, isEventId), {
        onNone: () => log.head(workspaceId),
        onSome: (id) =>
          Effect.flatMap(log.positionOf(workspaceId, id), Option.match({ onNone: () => log.head(workspaceId), onSome: Effect.succeed }))
      })

    const subscribe = (principal: Principal, lastEventId: Option.Option<string>) =>
      Effect.gen(function*() {
        if (!streamScopes.some((scope) => principal.scopes.includes(scope))) {
          return yield* Effect.fail(
            new InsufficientScope({
              required: streamScopes.join(" "),
              message: `the event stream needs one of the scopes ${streamScopes.join(", ")}`
            })
          )
        }
        yield* slot(principal)
        const workspaceId = principal.workspace_id
        const hub = yield* Effect.acquireRelease(join(workspaceId), () => leave(workspaceId))
        // Subscribed before the replay reads the log: what the poller publishes meanwhile is queued, not missed.
        const live = yield* PubSub.subscribe(hub.pubsub)
        const start = yield* startOf(workspaceId, lastEventId)
        const replay = Stream.paginateChunkEffect(start, (position) =>
          Effect.map(log.after(workspaceId, position, batch), (events) =>
            [
              Chunk.unsafeFromArray(events),
              events.length === batch ? Option.some(events[events.length - 1]!.position) : Option.none<number>()
            ] as const))
        let seen = start
        const visible = canSee(principal)
        return Stream.concat(replay, Stream.fromQueue(live)).pipe(
          Stream.filter((logged) => {
            if (logged.position <= seen) return false
            seen = logged.position
            return true
          }),
          Stream.map((logged) => logged.event),
          Stream.filter(visible)
        )
      })

    /**
     * Opens a stream for `principal`, resuming after `lastEventId` when given: fails at once when the credential
     * may not (InsufficientScope, TooManyStreams); else the events, without end, until the stream is dropped.
     */
    const openStream = (principal: Principal, lastEventId: Option.Option<string>) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function*() {
          const scope = yield* Scope.make()
          const stream = yield* restore(Scope.extend(subscribe(principal, lastEventId), scope)).pipe(
            Effect.onExit((exit) => Exit.isFailure(exit) ? Scope.close(scope, exit) : Effect.void)
          )
          return stream.pipe(Stream.ensuring(Scope.close(scope, Exit.void)))
        })
      )

    /** Open streams in this process. */
    const openStreams = Effect.sync(() => [...open.values()].reduce((sum, count) => sum + count, 0))

    return { open: openStream, openStreams } as const
  })

export class EventFeed extends Context.Tag("@convene/core/EventFeed")<
  EventFeed,
  Effect.Effect.Success<ReturnType<typeof make>>
>() {
  static readonly layer = (settings: FeedSettings = defaultFeedSettings): Layer.Layer<EventFeed, never, EventLog> =>
    Layer.scoped(EventFeed, make(settings))
}
