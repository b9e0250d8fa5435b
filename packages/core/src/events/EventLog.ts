import { Context, type DateTime, type Effect, type Option } from "effect"
import type { WorkspaceId } from "../shared/Ids.js"
import type { DomainEvent, EventId, LoggedEvent } from "./Event.js"

/**
 * Port: the event log (the outbox). `append` joins the caller's unit of work (Transactor): the event commits
 * with the change or not at all. Positions are the store's: they grow in the order events become visible, so a
 * reader that has seen everything up to position p never later finds an event below p (on PostgreSQL an event
 * is read only once every transaction that began before it ended; in memory commits are serial).
 */
export class EventLog extends Context.Tag("@convene/core/EventLog")<EventLog, {
  readonly append: (event: DomainEvent) => Effect.Effect<void>
  /** Events of the workspace after `position` (0: from the start), oldest first, at most `limit`. */
  readonly after: (workspaceId: WorkspaceId, position: number, limit: number) => Effect.Effect<ReadonlyArray<LoggedEvent>>
  /** The position of an event of the workspace (to resume after it), if it is still in the log. */
  readonly positionOf: (workspaceId: WorkspaceId, id: EventId) => Effect.Effect<Option.Option<number>>
  /** The position of the workspace's newest readable event (0 when it has none). */
  readonly head: (workspaceId: WorkspaceId) => Effect.Effect<number>
  /** Deletes events that occurred before `before`. */
  readonly purge: (before: DateTime.Utc) => Effect.Effect<void>
  readonly deleteByWorkspace: (workspaceId: WorkspaceId) => Effect.Effect<void>
}>() {}
