import {
  ActionItems,
  ActionItemStatus,
  actionItemTransitions,
  AgendaItemStore,
  CreateActionItem,
  CreateMeeting,
  MeetingFilter,
  Meetings,
  MeetingStore,
  Pagination,
  TemplateId,
  TranscriptLine,
  UpdateActionItem
} from "@convene/core"
import * as StoreMemory from "@convene/store-memory"
import { describe, expect, it, layer } from "@effect/vitest"
import { Cause, Effect, Exit, FastCheck, Layer, TestClock } from "effect"
import { apiKeyFor, CoreLive, coreOver, principalFor } from "./fixtures.js"

const retrospective = TemplateId.make("6a1f3c1e-0b6e-4a53-9d1e-1c5d8f0a0003")

/**
 * The in-memory store, except that inserting a meeting titled "explode" writes the row and then dies: a
 * failure inside Meetings.create's unit of work, after the quota unit was taken.
 */
const InsertThenDie = coreOver(
  Layer.effect(
    MeetingStore,
    Effect.map(MeetingStore, (store) =>
      MeetingStore.of({
        ...store,
        insert: (meeting) =>
          meeting.title === "explode"
            ? Effect.zipRight(store.insert(meeting), Effect.die("the store broke after writing the meeting"))
            : store.insert(meeting)
      }))
  ).pipe(Layer.provideMerge(StoreMemory.layer))
)

const statuses = ActionItemStatus.literals

describe("Action item status machine", () => {
  layer(CoreLive)((it) => {
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
        }),
      { fastCheck: { numRuns: 30 } }
    )
  })
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

    it.effect("a failed create (unknown template) takes no quota unit", () =>
      Effect.gen(function*() {
        const { principal } = yield* principalFor({ plan: "FREE" })
        const meetings = yield* Meetings
        const unknown = TemplateId.make(crypto.randomUUID())
        const bad = yield* Effect.either(meetings.create(principal, CreateMeeting.make({ title: "x", template_id: unknown })))
        expect(bad._tag === "Left" && bad.left._tag).toBe("NotFound")
        yield* Effect.forEach(Array.from({ length: 20 }, (_, i) => i), (i) => meetings.create(principal, CreateMeeting.make({ title: `M${i}` })))
      }))
  })
})

describe("Meetings.create on a store that fails inside its unit of work", () => {
  layer(InsertThenDie)((it) => {
    it.effect("gives the quota unit back, and keeps neither the meeting, nor its owner, nor its agenda", () =>
      Effect.gen(function*() {
        const { principal, user } = yield* principalFor({ plan: "FREE" })
        const meetings = yield* Meetings
        const store = yield* MeetingStore
        const exit = yield* Effect.exit(
          meetings.create(principal, CreateMeeting.make({ title: "explode", template_id: retrospective }))
        )
        expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
        expect(yield* store.meetingIdsOf(principal.workspace_id, user.id)).toEqual([])
        expect((yield* store.list(principal.workspace_id, MeetingFilter.All(), "created_desc", { limit: 100, offset: 0 })).total)
          .toBe(0)
        expect((yield* (yield* AgendaItemStore).list(principal.workspace_id, {}, { limit: 100, offset: 0 })).total).toBe(0)

        // All 20 units of the month are still there, and no more.
        const created = yield* Effect.forEach(
          Array.from({ length: 20 }, (_, i) => i),
          (i) => meetings.create(principal, CreateMeeting.make({ title: `M${i}` }))
        )
        expect(created).toHaveLength(20)
        const refused = yield* Effect.flip(meetings.create(principal, CreateMeeting.make({ title: "one too many" })))
        expect(refused._tag).toBe("PlanRequired")
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

describe("Meetings: reading", () => {
  layer(CoreLive)((it) => {
    it.effect("exports the transcript as [hh:mm:ss] lines in order of offset, hours included", () =>
      Effect.gen(function*() {
        const meetings = yield* Meetings
        const { principal } = yield* principalFor()
        const meeting = yield* meetings.create(principal, CreateMeeting.make({ title: "Recorded" }))
        expect(yield* meetings.exportTranscript(principal, meeting.id)).toBe("")
        yield* meetings.appendTranscript(principal, meeting.id, [
          TranscriptLine.make({ offset_ms: 3_723_999, speaker: "Bob", text: "later" }),
          TranscriptLine.make({ offset_ms: 0, speaker: "Ann", text: "hello" }),
          TranscriptLine.make({ offset_ms: 59_999, speaker: "Cy", text: "almost a minute" }),
          TranscriptLine.make({ offset_ms: 36_000_000 + 61_000, speaker: "Dee", text: "ten hours in" })
        ])
        expect(yield* meetings.exportTranscript(principal, meeting.id)).toBe(
          "[00:00:00] Ann: hello\n[00:00:59] Cy: almost a minute\n[01:02:03] Bob: later\n[10:01:01] Dee: ten hours in\n"
        )
      }))

    it.effect("searches titles with q trimmed; a blank q does not filter", () =>
      Effect.gen(function*() {
        const meetings = yield* Meetings
        const { principal } = yield* principalFor()
        const planning = yield* meetings.create(principal, CreateMeeting.make({ title: "Quarterly planning" }))
        const retro = yield* meetings.create(principal, CreateMeeting.make({ title: "Retro" }))
        const titles = (q: string) =>
          Effect.map(meetings.search(principal, { q }, {}), (list) => list.items.map((m) => m.id).sort())
        expect(yield* titles("  PLANNING ")).toEqual([planning.id])
        expect(yield* titles("   ")).toEqual([planning.id, retro.id].sort())
      }))

    it.effect("a meeting created with a workspace API key has no owner and no participant", () =>
      Effect.gen(function*() {
        const meetings = yield* Meetings
        const { workspace } = yield* principalFor()
        const key = yield* apiKeyFor(workspace.id)
        const meeting = yield* meetings.create(key, CreateMeeting.make({ title: "From a script" }))
        expect(meeting.owner_user_id).toBeNull()
        expect(yield* (yield* MeetingStore).listParticipants(workspace.id, meeting.id)).toEqual([])
      }))
  })
})
