import { MeetingFilter, MeetingStore, type StorePorts, Transactor, UserStore, WorkspaceStore } from "@convene/core"
import { addEqualityTesters, expect, layer } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber, type Layer, Option } from "effect"
import { meeting, minutes, seedMeeting, seedWorkspace, user, workspace } from "./fixtures.js"

class Boom {
  readonly _tag = "Boom"
}

/** The tag of the expected error an exit failed with. */
const failureTag = (exit: Exit.Exit<unknown, { readonly _tag: string }>): Option.Option<string> =>
  Exit.isFailure(exit) ? Option.map(Cause.failureOption(exit.cause), (error) => error._tag) : Option.none()

export const suite = (name: string, storeLayer: Layer.Layer<StorePorts, unknown>) => {
  addEqualityTesters()

  layer(storeLayer)(`Transactor (${name})`, (it) => {
    it.effect("a successful unit commits every write and answers its value", () =>
      Effect.gen(function*() {
        const { withTransaction } = yield* Transactor
        const workspaces = yield* WorkspaceStore
        const users = yield* UserStore
        const meetings = yield* MeetingStore
        const ws = workspace()
        const owner = user(ws.id)
        const m = meeting(ws.id, { owner_user_id: owner.id })
        const answer = yield* withTransaction(Effect.gen(function*() {
          yield* workspaces.insert(ws)
          yield* users.insert(owner)
          yield* meetings.insert(m)
          // Reads inside the unit see its own writes.
          expect(yield* meetings.get(ws.id, m.id)).toEqual(Option.some(m))
          return "done"
        }))
        expect(answer).toBe("done")
        expect(yield* workspaces.get(ws.id)).toEqual(Option.some(ws))
        expect(yield* users.get(owner.id)).toEqual(Option.some(owner))
        expect(yield* meetings.get(ws.id, m.id)).toEqual(Option.some(m))
      }))

    it.effect("a failing unit leaves no trace in any store", () =>
      Effect.gen(function*() {
        const { withTransaction } = yield* Transactor
        const workspaces = yield* WorkspaceStore
        const users = yield* UserStore
        const meetings = yield* MeetingStore
        const existing = yield* seedWorkspace()
        const kept = yield* seedMeeting(existing.id)
        const doomed = yield* seedMeeting(existing.id)
        const ws = workspace()
        const newcomer = user(existing.id)
        const newMeeting = meeting(existing.id)
        const usage = { workspaceId: existing.id, counter: "meetings", period: "2026-03", limit: 1 }

        const exit = yield* Effect.exit(withTransaction(Effect.gen(function*() {
          yield* workspaces.insert(ws)
          yield* workspaces.update(workspace({ ...existing, name: "Renamed", updated_at: minutes(1) }))
          yield* users.insert(newcomer)
          yield* meetings.insert(newMeeting)
          yield* meetings.update(meeting(existing.id, { ...kept, title: "Changed" }))
          expect(yield* meetings.delete(existing.id, doomed.id)).toBe(true)
          expect(yield* workspaces.consume(usage)).toBe(true)
          return yield* Effect.fail(new Boom())
        })))

        expect(failureTag(exit)).toEqual(Option.some("Boom"))
        expect(Option.isNone(yield* workspaces.get(ws.id))).toBe(true)
        expect(yield* workspaces.get(existing.id)).toEqual(Option.some(existing))
        expect(Option.isNone(yield* users.get(newcomer.id))).toBe(true)
        expect(Option.isNone(yield* users.findByEmail(newcomer.email))).toBe(true)
        expect(Option.isNone(yield* meetings.get(existing.id, newMeeting.id))).toBe(true)
        expect(yield* meetings.get(existing.id, kept.id)).toEqual(Option.some(kept))
        expect(yield* meetings.get(existing.id, doomed.id)).toEqual(Option.some(doomed))
        // The unit consumed from the allowance; the rollback gave it back.
        expect(yield* workspaces.consume(usage)).toBe(true)
      }))

    it.effect("a defect rolls back too", () =>
      Effect.gen(function*() {
        const { withTransaction } = yield* Transactor
        const meetings = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const m = meeting(ws.id)
        const exit = yield* Effect.exit(withTransaction(Effect.zipRight(meetings.insert(m), Effect.die("crash"))))
        expect(Exit.isFailure(exit)).toBe(true)
        expect(Option.isNone(yield* meetings.get(ws.id, m.id))).toBe(true)
      }))

    it.effect("a nested unit joins the outer one: it commits with it and rolls back with it", () =>
      Effect.gen(function*() {
        const { withTransaction } = yield* Transactor
        const meetings = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const inner = meeting(ws.id)
        const outer = meeting(ws.id)

        const exit = yield* Effect.exit(withTransaction(Effect.gen(function*() {
          yield* withTransaction(meetings.insert(inner))
          expect(yield* meetings.get(ws.id, inner.id)).toEqual(Option.some(inner))
          yield* meetings.insert(outer)
          return yield* Effect.fail(new Boom())
        })))
        expect(failureTag(exit)).toEqual(Option.some("Boom"))
        expect(Option.isNone(yield* meetings.get(ws.id, inner.id))).toBe(true)
        expect(Option.isNone(yield* meetings.get(ws.id, outer.id))).toBe(true)

        yield* withTransaction(Effect.gen(function*() {
          yield* withTransaction(meetings.insert(inner))
          yield* meetings.insert(outer)
        }))
        expect(yield* meetings.get(ws.id, inner.id)).toEqual(Option.some(inner))
        expect(yield* meetings.get(ws.id, outer.id)).toEqual(Option.some(outer))
      }))

    it.effect("nobody outside a unit sees its writes before it commits", () =>
      Effect.gen(function*() {
        const { withTransaction } = yield* Transactor
        const meetings = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const m = meeting(ws.id)
        const written = yield* Deferred.make<void>()
        const finish = yield* Deferred.make<void>()

        const unit = yield* Effect.fork(withTransaction(Effect.gen(function*() {
          yield* meetings.insert(m)
          yield* Deferred.succeed(written, undefined)
          yield* Deferred.await(finish)
          return yield* Effect.fail(new Boom())
        })))
        yield* Deferred.await(written)
        // An adapter may make the reader wait for the unit to end, or answer from the last commit; either
        // way it must never see the row, which is rolled back.
        const reader = yield* Effect.fork(meetings.get(ws.id, m.id))
        for (let i = 0; i < 10; i++) yield* Effect.yieldNow()
        yield* Deferred.succeed(finish, undefined)
        expect(failureTag(yield* Fiber.await(unit))).toEqual(Option.some("Boom"))
        expect(Option.isNone(yield* Fiber.join(reader))).toBe(true)
        expect(Option.isNone(yield* meetings.get(ws.id, m.id))).toBe(true)
      }))

    it.effect("a write outside a unit that runs meanwhile is not lost when the unit commits", () =>
      Effect.gen(function*() {
        const { withTransaction } = yield* Transactor
        const meetings = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const inside = meeting(ws.id)
        const outside = meeting(ws.id)
        const written = yield* Deferred.make<void>()
        const finish = yield* Deferred.make<void>()

        const unit = yield* Effect.fork(withTransaction(Effect.gen(function*() {
          yield* meetings.insert(inside)
          yield* Deferred.succeed(written, undefined)
          yield* Deferred.await(finish)
        })))
        yield* Deferred.await(written)
        const writer = yield* Effect.fork(meetings.insert(outside))
        for (let i = 0; i < 10; i++) yield* Effect.yieldNow()
        yield* Deferred.succeed(finish, undefined)
        yield* Fiber.join(unit)
        yield* Fiber.join(writer)
        expect(yield* meetings.get(ws.id, inside.id)).toEqual(Option.some(inside))
        expect(yield* meetings.get(ws.id, outside.id)).toEqual(Option.some(outside))
      }))

    it.effect("concurrent units do not lose each other's writes", () =>
      Effect.gen(function*() {
        const { withTransaction } = yield* Transactor
        const workspaces = yield* WorkspaceStore
        const meetings = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const usage = { workspaceId: ws.id, counter: "meetings", period: "2026-03", limit: 20 }
        const rows = Array.from({ length: 30 }, (_, i) => meeting(ws.id, { title: `meeting ${i}` }))

        // Each unit takes one unit of the allowance and creates a meeting only if it got one.
        const created = yield* Effect.all(
          rows.map((row) =>
            withTransaction(Effect.gen(function*() {
              if (!(yield* workspaces.consume(usage))) return false
              yield* Effect.yieldNow()
              yield* meetings.insert(row)
              return true
            }))
          ),
          { concurrency: "unbounded" }
        )
        expect(created.filter((ok) => ok)).toHaveLength(20)
        const listed = yield* meetings.list(ws.id, MeetingFilter.All(), "created_desc", { limit: 100, offset: 0 })
        expect(listed.total).toBe(20)
        expect([...listed.items.map((m) => m.id)].sort()).toEqual(rows.filter((_, i) => created[i]).map((m) => m.id).sort())
        expect(yield* workspaces.consume(usage)).toBe(false)
      }))

    it.effect("units failing at random among concurrent ones roll back only themselves", () =>
      Effect.gen(function*() {
        const { withTransaction } = yield* Transactor
        const meetings = yield* MeetingStore
        const ws = yield* seedWorkspace()
        const rows = Array.from({ length: 20 }, () => meeting(ws.id))
        yield* Effect.all(
          rows.map((row, i) =>
            Effect.exit(withTransaction(Effect.gen(function*() {
              yield* meetings.insert(row)
              yield* Effect.yieldNow()
              if (i % 3 === 0) return yield* Effect.fail(new Boom())
            })))
          ),
          { concurrency: "unbounded" }
        )
        const listed = yield* meetings.list(ws.id, MeetingFilter.All(), "created_desc", { limit: 100, offset: 0 })
        expect([...listed.items.map((m) => m.id)].sort()).toEqual(rows.filter((_, i) => i % 3 !== 0).map((m) => m.id).sort())
      }))
  })
}
