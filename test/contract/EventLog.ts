import { type DomainEvent, EventId, EventLog, type LoggedEvent, type StorePorts, Transactor, UserId, type WorkspaceId } from "@convene/core"
import { addEqualityTesters, expect, layer } from "@effect/vitest"
import { DateTime, Effect, type Layer, Option, Schedule, TestServices } from "effect"
import { at, domainEvent, minutes, seedWorkspace, uuid } from "./fixtures.js"

class Boom {
  readonly _tag = "Boom"
}

/** Every event of the workspace the log lets a reader see. */
const readAll = (workspaceId: WorkspaceId) => Effect.flatMap(EventLog, (log) => log.after(workspaceId, 0, 1000))

const eventsOf = (logged: ReadonlyArray<LoggedEvent>): ReadonlyArray<DomainEvent> => logged.map((entry) => entry.event)
const positionsOf = (logged: ReadonlyArray<LoggedEvent>): ReadonlyArray<number> => logged.map((entry) => entry.position)

/**
 * `read` once its answer passes `ready` (or, after five seconds, whatever it answers then). On a PostgreSQL
 * server a committed event becomes readable once every transaction older than its own has ended, and other test
 * files may be running transactions on the same server; in memory and on PGlite the first answer is final.
 */
const settled = <A, R>(read: Effect.Effect<A, never, R>, ready: (answer: A) => boolean): Effect.Effect<A, never, R> =>
  TestServices.provideLive(
    read.pipe(
      Effect.filterOrFail(ready),
      Effect.retry({ schedule: Schedule.spaced("20 millis"), times: 250 }),
      Effect.orElse(() => read)
    )
  )

/** Every event of the workspace, once there are `n` readable. */
const readSettled = (workspaceId: WorkspaceId, n: number) => settled(readAll(workspaceId), (logged) => logged.length >= n)

/** Appends `events` one after another (each its own unit of work) and answers their positions from `positionOf`. */
const appendAll = (events: ReadonlyArray<DomainEvent>) =>
  Effect.gen(function*() {
    const log = yield* EventLog
    for (const event of events) yield* log.append(event)
    return yield* Effect.forEach(events, (event) =>
      Effect.map(log.positionOf(event.workspace_id, event.id), Option.getOrThrow))
  })

const strictlyIncreasing = (positions: ReadonlyArray<number>) =>
  positions.every((position, index) => index === 0 || position > positions[index - 1]!)

export const suite = (name: string, storeLayer: Layer.Layer<StorePorts, unknown>) => {
  addEqualityTesters()

  layer(storeLayer)(`EventLog (${name})`, (it) => {
    it.effect("append then after answers every field: nested data, number-like strings, actor and timestamps", () =>
      Effect.gen(function*() {
        const ws = yield* seedWorkspace()
        const actor = UserId.make(uuid())
        const rich = domainEvent(ws.id, {
          type: "action_item.completed",
          actor_user_id: actor,
          occurred_at: at("2026-03-02T09:15:30.123Z"),
          data: {
            id: uuid(),
            title: "Ship it — «vite» 日本",
            due_date: "2026-03-09",
            completed_at: "2026-03-02T09:15:30.123Z",
            sequence: "0012",
            exponent: "1e3",
            count: 3,
            ratio: 0.5,
            done: true,
            nothing: null,
            tags: ["a", "2", 2],
            nested: { deeper: { list: [{ x: "007" }], empty: {} } }
          }
        })
        const deletion = domainEvent(ws.id, { type: "meeting.deleted", occurred_at: minutes(1), data: { id: uuid() } })
        const positions = yield* appendAll([rich, deletion])

        const logged = yield* readSettled(ws.id, 2)
        expect(eventsOf(logged)).toEqual([rich, deletion])
        expect(positionsOf(logged)).toEqual(positions)
        expect(strictlyIncreasing(positions)).toBe(true)
        expect(positions[0]!).toBeGreaterThan(0)
        expect(DateTime.toEpochMillis(logged[0]!.event.occurred_at)).toBe(Date.parse("2026-03-02T09:15:30.123Z"))
        expect(logged[0]!.event.data.sequence).toBe("0012")
        expect(logged[0]!.event.data.count).toBe(3)
      }))

    it.effect("after answers the events past a position, oldest first, at most `limit`", () =>
      Effect.gen(function*() {
        const log = yield* EventLog
        const ws = yield* seedWorkspace()
        // Occurrence instants out of order: the log orders by position, not by time.
        const events = [3, 1, 4, 1, 5].map((minute) => domainEvent(ws.id, { occurred_at: minutes(minute) }))
        const positions = yield* appendAll(events)
        expect(strictlyIncreasing(positions)).toBe(true)

        expect(eventsOf(yield* readSettled(ws.id, 5))).toEqual(events)
        expect(eventsOf(yield* log.after(ws.id, 0, 2))).toEqual(events.slice(0, 2))
        expect(eventsOf(yield* log.after(ws.id, positions[1]!, 2))).toEqual(events.slice(2, 4))
        expect(eventsOf(yield* log.after(ws.id, positions[3]!, 10))).toEqual(events.slice(4))
        expect(yield* log.after(ws.id, positions[4]!, 10)).toEqual([])
        expect(positionsOf(yield* log.after(ws.id, 0, 1))).toEqual([positions[0]])
      }))

    it.effect("each workspace reads only its own events; positionOf and head are per workspace", () =>
      Effect.gen(function*() {
        const log = yield* EventLog
        const ws1 = yield* seedWorkspace()
        const ws2 = yield* seedWorkspace()
        const a1 = domainEvent(ws1.id)
        const b1 = domainEvent(ws2.id)
        const a2 = domainEvent(ws1.id)
        const b2 = domainEvent(ws2.id)
        const [pa1, pb1, pa2, pb2] = yield* appendAll([a1, b1, a2, b2])

        expect(eventsOf(yield* readSettled(ws1.id, 2))).toEqual([a1, a2])
        expect(eventsOf(yield* readSettled(ws2.id, 2))).toEqual([b1, b2])
        expect(eventsOf(yield* readAll(ws2.id))).toEqual([b1, b2])
        expect(positionsOf(yield* readAll(ws1.id))).toEqual([pa1, pa2])
        expect(eventsOf(yield* log.after(ws2.id, pa1!, 10))).toEqual([b1, b2])
        expect(yield* log.head(ws1.id)).toBe(pa2)
        expect(yield* log.head(ws2.id)).toBe(pb2)
        expect(yield* log.positionOf(ws2.id, a1.id)).toEqual(Option.none())
        expect(yield* log.positionOf(ws1.id, b1.id)).toEqual(Option.none())
        expect(pb1!).toBeGreaterThan(pa1!)
      }))

    it.effect("positionOf answers the position after shows, none for an unknown event", () =>
      Effect.gen(function*() {
        const log = yield* EventLog
        const ws = yield* seedWorkspace()
        const events = [domainEvent(ws.id), domainEvent(ws.id), domainEvent(ws.id)]
        for (const event of events) yield* log.append(event)
        const logged = yield* readSettled(ws.id, 3)
        expect(eventsOf(logged)).toEqual(events)
        for (const entry of logged) {
          expect(yield* log.positionOf(ws.id, entry.event.id)).toEqual(Option.some(entry.position))
        }
        expect(yield* log.positionOf(ws.id, EventId.make(uuid()))).toEqual(Option.none())
      }))

    it.effect("head is 0 without events, then the newest event's position", () =>
      Effect.gen(function*() {
        const log = yield* EventLog
        const ws = yield* seedWorkspace()
        expect(yield* log.head(ws.id)).toBe(0)
        expect(yield* log.after(ws.id, 0, 10)).toEqual([])
        const [first] = yield* appendAll([domainEvent(ws.id)])
        expect(yield* settled(log.head(ws.id), (head) => head === first)).toBe(first)
        const [, second] = yield* appendAll([domainEvent(ws.id, { occurred_at: minutes(-5) }), domainEvent(ws.id)])
        expect(yield* settled(log.head(ws.id), (head) => head === second)).toBe(second)
      }))

    it.effect("purge deletes the events that occurred before the instant, of every workspace; one at the instant stays", () =>
      Effect.gen(function*() {
        const log = yield* EventLog
        // Long before every other test's events: purge is not scoped to a workspace.
        const before = at("2001-01-01T00:00:00.000Z")
        const millis = (n: number) => DateTime.add(before, { millis: n })
        const ws1 = yield* seedWorkspace()
        const ws2 = yield* seedWorkspace()
        const old1 = domainEvent(ws1.id, { occurred_at: millis(-1) })
        const atInstant = domainEvent(ws1.id, { occurred_at: before })
        const later = domainEvent(ws1.id, { occurred_at: millis(1) })
        const old2 = domainEvent(ws2.id, { occurred_at: DateTime.add(before, { days: -30 }) })
        const recent2 = domainEvent(ws2.id)
        yield* appendAll([old1, atInstant, later, old2, recent2])
        expect(eventsOf(yield* readSettled(ws2.id, 2))).toEqual([old2, recent2])
        expect(eventsOf(yield* readSettled(ws1.id, 3))).toEqual([old1, atInstant, later])

        yield* log.purge(before)
        expect(eventsOf(yield* readAll(ws1.id))).toEqual([atInstant, later])
        expect(eventsOf(yield* readAll(ws2.id))).toEqual([recent2])
        expect(yield* log.positionOf(ws1.id, old1.id)).toEqual(Option.none())
        expect(yield* log.positionOf(ws2.id, old2.id)).toEqual(Option.none())
        expect(Option.isSome(yield* log.positionOf(ws1.id, atInstant.id))).toBe(true)
      }))

    it.effect("deleteByWorkspace deletes the workspace's events and no other's", () =>
      Effect.gen(function*() {
        const log = yield* EventLog
        const gone = yield* seedWorkspace()
        const kept = yield* seedWorkspace()
        const goneEvents = [domainEvent(gone.id), domainEvent(gone.id)]
        const keptEvent = domainEvent(kept.id)
        yield* appendAll([...goneEvents, keptEvent])
        expect(eventsOf(yield* readSettled(gone.id, 2))).toEqual(goneEvents)
        expect(eventsOf(yield* readSettled(kept.id, 1))).toEqual([keptEvent])

        yield* log.deleteByWorkspace(gone.id)
        expect(yield* readAll(gone.id)).toEqual([])
        expect(yield* log.head(gone.id)).toBe(0)
        expect(yield* log.positionOf(gone.id, goneEvents[0]!.id)).toEqual(Option.none())
        expect(eventsOf(yield* readAll(kept.id))).toEqual([keptEvent])
      }))

    it.effect("an append in a unit of work that fails leaves no event; later events take higher positions", () =>
      Effect.gen(function*() {
        const log = yield* EventLog
        const { withTransaction } = yield* Transactor
        const ws = yield* seedWorkspace()
        const first = domainEvent(ws.id)
        const [committed] = yield* appendAll([first])
        const rolledBack = domainEvent(ws.id)
        const failed = yield* Effect.flip(withTransaction(Effect.zipRight(log.append(rolledBack), Effect.fail(new Boom()))))
        expect(failed).toBeInstanceOf(Boom)
        const defect = domainEvent(ws.id)
        yield* Effect.exit(withTransaction(Effect.zipRight(log.append(defect), Effect.die(new Boom()))))

        expect(yield* log.positionOf(ws.id, rolledBack.id)).toEqual(Option.none())
        expect(yield* log.positionOf(ws.id, defect.id)).toEqual(Option.none())
        const next = domainEvent(ws.id)
        const [position] = yield* appendAll([next])
        expect(position!).toBeGreaterThan(committed!)
        const logged = yield* readSettled(ws.id, 2)
        expect(eventsOf(logged)).toEqual([first, next])
        expect(positionsOf(logged)).toEqual([committed, position])
        expect(yield* log.head(ws.id)).toBe(position)
      }))

    it.effect("events appended in a unit of work that commits are read together, in append order", () =>
      Effect.gen(function*() {
        const log = yield* EventLog
        const { withTransaction } = yield* Transactor
        const ws = yield* seedWorkspace()
        const events = [domainEvent(ws.id), domainEvent(ws.id, { type: "meeting.updated" }), domainEvent(ws.id)]
        yield* withTransaction(Effect.forEach(events, log.append, { discard: true }))
        const logged = yield* readSettled(ws.id, 3)
        expect(eventsOf(logged)).toEqual(events)
        expect(strictlyIncreasing(positionsOf(logged))).toBe(true)
        expect(yield* log.head(ws.id)).toBe(logged[2]!.position)
      }))
  })
}
