/**
 * The event stream's feed (GET /v1/user/events): the events of a workspace as they become visible in the log,
 * to every stream open on it, resumable from an event id.
 *
 * - One poller per workspace with open streams reads the log every `pollInterval` (1 s) from where it left off
 *   and hands what it finds to the workspace's streams (a callback each: a stream has no fiber of its own). The log is the store's, so a change made through
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
import { Context, Duration, Effect, Fiber, Layer, Option, Queue, Schema, Stream, SynchronizedRef } from "effect"
import type { Principal, Scope as GrantedScope } from "../identity/Identity.js"
import { InsufficientScope, TooManyStreams } from "../shared/Errors.js"
import type { CredentialId, WorkspaceId } from "../shared/Ids.js"
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
  // What the test needs, taken out of the principal: an open stream holds the test, not the principal.
  const all = principal.scopes.includes("workspace:read")
  const userId = principal.user_id
  return (event: DomainEvent): boolean => all || event.actor_user_id === null || (userId !== null && event.actor_user_id === userId)
}

/**
 * How an attached stream's events are chosen: `caller` (the default) as the event stream's rule says (canSee);
 * `workspace`, every event of the workspace, for a consumer that filters them itself by what the caller may see (an
 * MCP session's resource subscriptions: changes of the meetings the caller could read when subscribing).
 */
export interface AttachOptions {
  readonly events?: "caller" | "workspace"
}

const everyEvent = (): boolean => true

/** Events read from the log at once. */
const batch = 500

/** A stream attached to a workspace's hub: where its events go, and how far it has seen. */
interface Subscriber {
  readonly push: (events: ReadonlyArray<DomainEvent>) => void
  readonly visible: (event: DomainEvent) => boolean
  /** The position of the last event handed to it (or skipped as not visible). */
  seen: number
  /** While its replay reads the log: what the poller found meanwhile, handed over once the replay is done. */
  queued: Array<LoggedEvent> | null
}

interface Hub {
  readonly subscribers: Set<Subscriber>
  poller: Fiber.RuntimeFiber<never> | undefined
}

const isEventId = Schema.is(EventId)

/** Gives `events` (in position order) to the subscriber: those after what it has seen, that it may see. */
const deliver = (subscriber: Subscriber, events: ReadonlyArray<LoggedEvent>) => {
  const fresh: Array<DomainEvent> = []
  for (const logged of events) {
    if (logged.position <= subscriber.seen) continue
    subscriber.seen = logged.position
    if (subscriber.visible(logged.event)) fresh.push(logged.event)
  }
  if (fresh.length > 0) subscriber.push(fresh)
}

/** What the poller found, for one subscriber: queued while its replay runs, else given at once. */
const handOver = (subscriber: Subscriber, events: ReadonlyArray<LoggedEvent>) => {
  if (subscriber.queued === null) deliver(subscriber, events)
  else subscriber.queued.push(...events)
}

const make = (settings: FeedSettings) =>
  Effect.gen(function*() {
    const log = yield* EventLog
    const feedScope = yield* Effect.scope
    const hubs = yield* SynchronizedRef.make(new Map<WorkspaceId, Hub>())
    const open = new Map<string, number>()

    /** The events after `position`, all of them, in batches; the last position read. */
    const readFrom = (
      workspaceId: WorkspaceId,
      position: number,
      publish: (events: ReadonlyArray<LoggedEvent>) => void
    ): Effect.Effect<number> =>
      Effect.flatMap(log.after(workspaceId, position, batch), (events) => {
        if (events.length === 0) return Effect.succeed(position)
        publish(events)
        const last = events[events.length - 1]!.position
        return events.length === batch ? readFrom(workspaceId, last, publish) : Effect.succeed(last)
      })

    /** Reads the workspace's log forever, handing what is new to its subscribers; a failed read is logged and tried again. */
    const poll = (workspaceId: WorkspaceId, hub: Hub, from: number): Effect.Effect<never> =>
      Effect.sleep(settings.pollInterval).pipe(
        Effect.zipRight(readFrom(workspaceId, from, (events) => {
          for (const subscriber of hub.subscribers) handOver(subscriber, events)
        })),
        Effect.catchAllCause((cause) =>
          Effect.as(Effect.logWarning("reading the event log for the event stream failed; trying again", cause), from)
        ),
        Effect.flatMap((next) => poll(workspaceId, hub, next))
      )

    const join = (workspaceId: WorkspaceId, subscriber: Subscriber) =>
      SynchronizedRef.updateEffect(hubs, (map) => {
        const known = map.get(workspaceId)
        if (known !== undefined) {
          known.subscribers.add(subscriber)
          return Effect.succeed(map)
        }
        return Effect.gen(function*() {
          const hub: Hub = { subscribers: new Set([subscriber]), poller: undefined }
          const head = yield* log.head(workspaceId)
          // Joined in an uninterruptible region: the poller must be made interruptible, or nothing stops it.
          hub.poller = yield* Effect.forkIn(Effect.interruptible(poll(workspaceId, hub, head)), feedScope)
          map.set(workspaceId, hub)
          return map
        })
      })

    const leave = (workspaceId: WorkspaceId, subscriber: Subscriber) =>
      SynchronizedRef.updateEffect(hubs, (map) => {
        const hub = map.get(workspaceId)
        if (hub === undefined || !hub.subscribers.delete(subscriber) || hub.subscribers.size > 0) return Effect.succeed(map)
        map.delete(workspaceId)
        return Effect.as(hub.poller === undefined ? Effect.void : Fiber.interrupt(hub.poller), map)
      })

    /** Takes one of the credential's stream slots. */
    const takeSlot = (credential: CredentialId) =>
      Effect.suspend(() => {
        const held = open.get(credential) ?? 0
        if (held >= settings.streamsPerCredential) {
          return Effect.fail(
            new TooManyStreams({
              limit: settings.streamsPerCredential,
              message: `this credential already has ${held} open event streams, the most allowed; close one first`
            })
          )
        }
        open.set(credential, held + 1)
        return Effect.void
      })

    const giveSlotBack = (credential: CredentialId) => {
      const left = (open.get(credential) ?? 1) - 1
      if (left === 0) open.delete(credential)
      else open.set(credential, left)
    }

    /**
     * What detaches a stream: gives its slot back and takes it off its hub, the first time it runs. Made apart
     * from `attach` so that it holds only these (an open stream holds its detach).
     */
    const detacher = (credential: CredentialId, workspaceId: WorkspaceId, subscriber: Subscriber): Effect.Effect<void> => {
      let attached = true
      return Effect.suspend(() => {
        if (!attached) return Effect.void
        attached = false
        giveSlotBack(credential)
        return leave(workspaceId, subscriber)
      })
    }

    /** Where a stream starts: after the event it last saw, when the log still holds it; else after the newest. */
    const startOf = (workspaceId: WorkspaceId, lastEventId: Option.Option<string>) =>
      Option.match(Option.filter(lastEventId, isEventId), {
        onNone: () => log.head(workspaceId),
        onSome: (id) =>
          Effect.flatMap(log.positionOf(workspaceId, id), Option.match({ onNone: () => log.head(workspaceId), onSome: Effect.succeed }))
      })

    /**
     * Attaches a stream for `principal`, resuming after `lastEventId` when given: fails at once when the credential
     * may not (InsufficientScope, TooManyStreams); else `push` receives the events, in order, from the poller's
     * fiber (it must not block), until the returned effect detaches it. No fiber of its own: ten thousand idle
     * streams cost their subscribers' records. A caller that must not lose the detach to an interruption calls it
     * in an uninterruptible region and keeps the detach there; the replay stays interruptible even then (an
     * interrupted replay detaches the stream itself).
     */
    const attach = (
      principal: Principal,
      lastEventId: Option.Option<string>,
      push: (events: ReadonlyArray<DomainEvent>) => void,
      options: AttachOptions = {}
    ): Effect.Effect<Effect.Effect<void>, InsufficientScope | TooManyStreams> =>
      Effect.uninterruptible(
        Effect.gen(function*() {
          if (!streamScopes.some((scope) => principal.scopes.includes(scope))) {
            return yield* Effect.fail(
              new InsufficientScope({
                required: streamScopes.join(" "),
                message: `the event stream needs one of the scopes ${streamScopes.join(", ")}`
              })
            )
          }
          yield* takeSlot(principal.credential_id)
          const workspaceId = principal.workspace_id
          const visible = options.events === "workspace" ? everyEvent : canSee(principal)
          const subscriber: Subscriber = { push, visible, seen: 0, queued: [] }
          const detach = detacher(principal.credential_id, workspaceId, subscriber)
          // Joined before the replay reads the log: what the poller finds meanwhile is queued, not missed.
          yield* join(workspaceId, subscriber).pipe(Effect.onError(() => detach))
          const replay = Effect.gen(function*() {
            const start = yield* startOf(workspaceId, lastEventId)
            subscriber.seen = start
            yield* readFrom(workspaceId, start, (events) => deliver(subscriber, events))
            // Then what the poller found meanwhile (what the replay already gave is skipped by position).
            const queued = subscriber.queued ?? []
            subscriber.queued = null
            deliver(subscriber, queued)
          })
          yield* Effect.interruptible(replay).pipe(Effect.onError(() => detach))
          return detach
        })
      )

    /**
     * The same as an Effect stream, attached for the life of the scope (closing it detaches the stream, whether
     * or not it was ever run): the events, without end. Fails at once when the credential may not
     * (InsufficientScope, TooManyStreams).
     */
    const openStream = (principal: Principal, lastEventId: Option.Option<string>) =>
      Effect.gen(function*() {
        const queue = yield* Queue.unbounded<DomainEvent>()
        yield* Effect.acquireRelease(
          attach(principal, lastEventId, (events) => {
            for (const event of events) Queue.unsafeOffer(queue, event)
          }),
          (detach) => Effect.zipRight(detach, Queue.shutdown(queue))
        )
        return Stream.fromQueue(queue)
      })

    /** Open streams in this process. */
    const openStreams = Effect.sync(() => [...open.values()].reduce((sum, count) => sum + count, 0))

    return { attach, open: openStream, openStreams } as const
  })

export class EventFeed extends Context.Tag("@convene/core/EventFeed")<
  EventFeed,
  Effect.Effect.Success<ReturnType<typeof make>>
>() {
  static readonly layer = (settings: FeedSettings = defaultFeedSettings): Layer.Layer<EventFeed, never, EventLog> =>
    Layer.scoped(EventFeed, make(settings))
}
