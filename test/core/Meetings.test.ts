import {
  ActionItems,
  ActionItemStatus,
  actionItemTransitions,
  CreateActionItem,
  CreateMeeting,
  Meetings,
  Pagination,
  UpdateActionItem
} from "@convene/core"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, FastCheck, TestClock } from "effect"
import { CoreLive, principalFor } from "./fixtures.js"

const statuses = ActionItemStatus.literals

describe("Action item status machine", () => {
  // Model-based: the model is the documented transition table; any sequence of requested changes must be
  // accepted exactly when the table allows it, and is_completed/completed_at must follow the status.
  it.effect.prop(
    "follows the documented transitions for any sequence of requested changes",
    [FastCheck.constantFrom(...statuses), FastCheck.array(FastCheck.constantFrom(...statuses), { maxLength: 25 })],
    ([initial, requested]) =>
      Effect.gen(function*() {
        const { principal } = yield* principalFor()
        const meetings = yield* Meetings
        const items = yield* ActionItems
        const meeting = yield* meetings.create(principal, CreateMeeting.make({ title: "Model" }))
        let model = initial
        let item = yield* items.create(principal, CreateActionItem.make({ meeting_id: meeting.id, title: "x", status: initial }))
        for (const target of requested) {
          const result = yield* Effect.either(items.update(principal, item.id, UpdateActionItem.make({ status: target })))
          const allowed = target === model || actionItemTransitions[model].includes(target)
          if (allowed) {
            expect(result._tag).toBe("Right")
            if (result._tag === "Right") item = result.right
            model = target
          } else {
            expect(result._tag === "Left" && result.left._tag).toBe("Conflict")
          }
          expect(item.status).toBe(model)
          expect(item.is_completed).toBe(model === "completed")
          expect(item.completed_at === null).toBe(model !== "completed")
        }
      }).pipe(Effect.provide(CoreLive)),
    { fastCheck: { numRuns: 30 } }
  )
})

describe("Meetings", () => {
  layer(CoreLive)((it) => {
    it.effect("caps FREE workspaces at 20 meetings a calendar month, also under concurrent creates", () =>
      Effect.gen(function*() {
        const { principal } = yield* principalFor({ plan: "FREE" })
        const meetings = yield* Meetings
        const attempts = yield* Effect.forEach(
          Array.from({ length: 30 }, (_, i) => i),
          (i) => Effect.either(meetings.create(principal, CreateMeeting.make({ title: `M${i}` }))),
          { concurrency: "unbounded" }
        )
        expect(attempts.filter((a) => a._tag === "Right")).toHaveLength(20)
        const refused = attempts.filter((a) => a._tag === "Left")
        expect(refused.every((a) => a._tag === "Left" && a.left._tag === "PlanRequired")).toBe(true)
        yield* TestClock.adjust("32 days")
        expect((yield* Effect.either(meetings.create(principal, CreateMeeting.make({ title: "next month" }))))._tag).toBe("Right")
      }))

    it.effect("does not cap paid plans", () =>
      Effect.gen(function*() {
        const { principal } = yield* principalFor({ plan: "PRO" })
        const meetings = yield* Meetings
        yield* Effect.forEach(Array.from({ length: 25 }, (_, i) => i), (i) => meetings.create(principal, CreateMeeting.make({ title: `M${i}` })))
        const list = yield* meetings.list(principal, {}, { limit: 100 })
        expect(list.total).toBe(25)
      }))

    it.effect("gives back a quota unit when the create fails after taking it", () =>
      Effect.gen(function*() {
        const { principal } = yield* principalFor({ plan: "FREE" })
        const meetings = yield* Meetings
        const bad = yield* Effect.either(meetings.create(principal, CreateMeeting.make({ title: "x", template_id: crypto.randomUUID() as never })))
        expect(bad._tag === "Left" && bad.left._tag).toBe("NotFound")
        yield* Effect.forEach(Array.from({ length: 20 }, (_, i) => i), (i) => meetings.create(principal, CreateMeeting.make({ title: `M${i}` })))
      }))
  })
})

describe("Pagination", () => {
  it.prop("clamps any limit and offset to the documented ranges", [FastCheck.option(FastCheck.integer()), FastCheck.option(FastCheck.integer())], ([limit, offset]) => {
    const page = Pagination.clamp({ limit: limit ?? undefined, offset: offset ?? undefined })
    expect(page.limit).toBe(limit === null || limit < 1 ? 20 : Math.min(limit, 100))
    expect(page.offset).toBe(offset === null || offset < 0 ? 0 : offset)
  })

  it.prop(
    "answers min(limit, total - offset) items and the total, for any page of any list",
    [FastCheck.array(FastCheck.integer(), { maxLength: 250 }), FastCheck.integer({ min: -5, max: 300 }), FastCheck.integer({ min: -5, max: 300 })],
    ([all, limit, offset]) => {
      const page = Pagination.clamp({ limit, offset })
      const list = Pagination.toList(Pagination.sliceOf(all, page), page)
      expect(list.total).toBe(all.length)
      expect(list.items).toHaveLength(Math.max(0, Math.min(page.limit, all.length - page.offset)))
      expect(list.items).toEqual(all.slice(page.offset, page.offset + page.limit))
    }
  )
})
