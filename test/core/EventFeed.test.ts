/**
 * The event feed as an embedder uses it (EventFeed.open, an Effect Stream): the workspace's events in order as
 * they are recorded, a resume after an event id replaying what came later exactly once, the visibility rule and
 * the per-credential cap, and a closed scope giving the stream's slot back. Real time, a 10 ms poll.
 */
import { describe, expect, layer } from "@effect/vitest"
import { CreateMeeting, EventFeed, Meetings, TooManyStreams } from "@convene/core"
import { Chunk, Effect, Exit, Fiber, Layer, Option, Stream } from "effect"
import { apiKeyFor, CoreLive, principalFor } from "./fixtures.js"

const Feed = EventFeed.layer({ pollInterval: "10 millis", streamsPerCredential: 2 }).pipe(Layer.provideMerge(CoreLive))

/** The titles of the next `n` meetings the stream carries. */
const takeTitles = (stream: Stream.Stream<{ readonly data: Record<string, unknown> }>, n: number) =>
  Effect.map(Stream.runCollect(Stream.take(stream, n)), (events) =>
    Chunk.toReadonlyArray(events).map((event) => String(event.data.title)))

describe("EventFeed.open", () => {
  layer(Feed, { excludeTestServices: true })((it) => {
    it.scoped("carries the workspace's events in order, and a resume replays exactly what came after the id", () =>
      Effect.gen(function*() {
        const feed = yield* EventFeed
        const meetings = yield* Meetings
        const { principal } = yield* principalFor({
          role: "OWNER",
          kind: "personal_access_token",
          scopes: ["meetings:read", "meetings:write", "workspace:read"]
        })
        const stream = yield* feed.open(principal, Option.none())
        const reading = yield* Effect.fork(Stream.runCollect(Stream.take(stream, 3)))
        for (const title of ["one", "two", "three"]) yield* meetings.create(principal, CreateMeeting.make({ title }))
        const seen = Chunk.toReadonlyArray(yield* Fiber.join(reading))
        expect(seen.map((event) => event.data.title)).toEqual(["one", "two", "three"])

        yield* meetings.create(principal, CreateMeeting.make({ title: "four" }))
        const resumed = yield* feed.open(principal, Option.some(seen[0]!.id))
        expect(yield* takeTitles(resumed, 3)).toEqual(["two", "three", "four"])
      }))

    it.scoped("without workspace:read: the caller's own events and system events, not another user's", () =>
      Effect.gen(function*() {
        const feed = yield* EventFeed
        const meetings = yield* Meetings
        const owner = yield* principalFor({ role: "OWNER", scopes: ["meetings:read", "meetings:write"] })
        const other = yield* principalFor({ workspaceId: owner.workspace.id, role: "OWNER", scopes: ["meetings:write"] })
        const system = yield* apiKeyFor(owner.workspace.id)
        const stream = yield* feed.open(owner.principal, Option.none())
        const reading = yield* Effect.fork(takeTitles(stream, 2))
        yield* meetings.create(other.principal, CreateMeeting.make({ title: "theirs" }))
        yield* meetings.create(owner.principal, CreateMeeting.make({ title: "mine" }))
        yield* meetings.create(system, CreateMeeting.make({ title: "the system's" }))
        expect(yield* Fiber.join(reading)).toEqual(["mine", "the system's"])
      }))

    it.effect("refuses a stream beyond the cap, and closing the scope gives the slot back", () =>
      Effect.gen(function*() {
        const feed = yield* EventFeed
        const { principal } = yield* principalFor({ scopes: ["calendar:read"] })
        const first = yield* Effect.scoped(Effect.gen(function*() {
          const a = yield* feed.open(principal, Option.none())
          const b = yield* feed.open(principal, Option.none())
          const running = [yield* Effect.fork(Stream.runDrain(a)), yield* Effect.fork(Stream.runDrain(b))]
          yield* Effect.sleep("20 millis")
          const third = yield* Effect.exit(feed.open(principal, Option.none()))
          yield* Fiber.interruptAll(running)
          return third
        }))
        expect(Exit.isFailure(first) && first.cause._tag === "Fail" && first.cause.error instanceof TooManyStreams).toBe(true)
        expect(yield* feed.openStreams).toBe(0)
        // Attached for the scope's life, whether or not the stream ever runs.
        yield* Effect.scoped(Effect.gen(function*() {
          yield* feed.open(principal, Option.none())
          expect(yield* feed.openStreams).toBe(1)
        }))
        expect(yield* feed.openStreams).toBe(0)
      }))

    it.scoped("needs one of the read scopes", () =>
      Effect.gen(function*() {
        const feed = yield* EventFeed
        const { principal } = yield* principalFor({ scopes: ["meetings:write"] })
        const refused = yield* Effect.flip(feed.open(principal, Option.none()))
        expect(refused._tag).toBe("InsufficientScope")
      }))
  })
})
