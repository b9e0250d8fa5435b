/**
 * EventLog in memory: each workspace's events in the same state value as every other port, so a unit of work
 * commits or rolls back its events with the rest. Positions come from a counter kept in that state: commits are
 * serial, so positions grow in commit order, and an append that rolls back takes its position back with it
 * (nobody outside its unit of work saw the position).
 */
import { EventLog, LoggedEvent, trusted, type WorkspaceId } from "@convene/core"
import { DateTime, Effect, HashMap, Layer, Option } from "effect"
import { appendTo, eventsIn, Memory } from "./Memory.js"

export const layer: Layer.Layer<EventLog, never, Memory> = Layer.effect(
  EventLog,
  Effect.gen(function*() {
    const memory = yield* Memory

    const eventsOf = (workspaceId: WorkspaceId) =>
      Effect.map(memory.read, (state) => Option.match(HashMap.get(state.events, workspaceId), { onNone: () => [], onSome: eventsIn }))

    return EventLog.of({
      append: Effect.fnUntraced(function*(event) {
        yield* memory.modify((state) => {
          const position = state.eventPosition + 1
          const logged = new LoggedEvent({ position, event }, trusted)
          const own = Option.getOrUndefined(HashMap.get(state.events, event.workspace_id))
          return [undefined, {
            ...state,
            events: HashMap.set(state.events, event.workspace_id, appendTo(own, logged)),
            eventPosition: position
          }]
        })
      }),

      after: Effect.fnUntraced(function*(workspaceId, position, limit) {
        const events = yield* eventsOf(workspaceId)
        const start = events.findIndex((logged) => logged.position > position)
        return start < 0 ? [] : events.slice(start, start + Math.max(0, limit))
      }),

      positionOf: Effect.fnUntraced(function*(workspaceId, id) {
        const events = yield* eventsOf(workspaceId)
        return Option.map(Option.fromNullable(events.find((logged) => logged.event.id === id)), (logged) => logged.position)
      }),

      head: Effect.fnUntraced(function*(workspaceId) {
        const events = yield* eventsOf(workspaceId)
        return events.at(-1)?.position ?? 0
      }),

      purge: Effect.fnUntraced(function*(before) {
        yield* memory.modify((state) => [undefined, {
          ...state,
          events: HashMap.filter(
            HashMap.map(state.events, (run) => {
              const log = eventsIn(run).filter((logged) => !DateTime.lessThan(logged.event.occurred_at, before))
              return { log, length: log.length }
            }),
            (run) => run.length > 0
          )
        }])
      }),

      deleteByWorkspace: Effect.fnUntraced(function*(workspaceId) {
        yield* memory.modify((state) => [undefined, { ...state, events: HashMap.remove(state.events, workspaceId) }])
      })
    })
  })
)
