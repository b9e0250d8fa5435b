/** AgendaItems: where appended items go (and the renumbering at the top of the range), sequences, presenters. */
import {
  type AgendaItem,
  AgendaItems,
  AgendaItemStore,
  CreateAgendaItem,
  CreateMeeting,
  Meetings,
  type MeetingId,
  type Principal,
  Sequence,
  sequenceAfter,
  UpdateAgendaItem,
  UserId
} from "@convene/core"
import { describe, expect, it, layer } from "@effect/vitest"
import { BigDecimal, DateTime, Effect, Either, FastCheck, Option, ParseResult, Schema, TestClock } from "effect"
import { CoreLive, principalFor } from "./fixtures.js"

const NOW = DateTime.unsafeMake("2026-03-02T09:00:00.000Z")

/** The largest whole sequence (12 digits). */
const TOP = "999999999999"

const everything = { limit: 100 }

/** The clock at NOW, a member with a meeting of theirs, and helpers on its agenda. */
const setup = Effect.gen(function*() {
  yield* TestClock.setTime(DateTime.toEpochMillis(NOW))
  const { principal, user, workspace } = yield* principalFor()
  const meetings = yield* Meetings
  const agenda = yield* AgendaItems
  const meeting = yield* meetings.create(principal, CreateMeeting.make({ title: "Planning" }))
  const add = (title: string, sequence?: string, meetingId: MeetingId = meeting.id) =>
    agenda.create(
      principal,
      CreateAgendaItem.make({ meeting_id: meetingId, title, ...(sequence === undefined ? {} : { sequence: Sequence.make(sequence) }) })
    )
  const listed = (principal_: Principal = principal, meetingId: MeetingId = meeting.id) =>
    Effect.map(agenda.list(principal_, { meeting_id: meetingId }, everything), (list) => list.items)
  return { agenda, meetings, principal, user, workspace, meeting, add, listed }
})

const view = (items: ReadonlyArray<AgendaItem>) => items.map((item) => [item.title, item.sequence])

/** The decode failure's issues as `path: message` lines. */
const issuesOf = <A, I>(schema: Schema.Schema<A, I>, input: unknown) =>
  Either.match(Schema.decodeUnknownEither(schema)(input), {
    onLeft: (error) => ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => `${issue.path.join(".")}: ${issue.message}`),
    onRight: () => []
  })

describe("AgendaItems", () => {
  layer(CoreLive)((it) => {
    it.effect("appends after the last item: the next whole number above it", () =>
      Effect.gen(function*() {
        const { add, listed } = yield* setup
        expect((yield* add("first")).sequence).toBe("1")
        expect((yield* add("explicit", "7.25")).sequence).toBe("7.25")
        expect((yield* add("after 7.25")).sequence).toBe("8")
        expect((yield* add("negative", "-3.5")).sequence).toBe("-3.5")
        expect((yield* add("still after 8")).sequence).toBe("9")
        expect(view(yield* listed())).toEqual([["negative", "-3.5"], ["first", "1"], ["explicit", "7.25"], ["after 7.25", "8"], ["still after 8", "9"]])
      }))

    for (const last of [TOP, `${TOP}.5`]) {
      it.effect(`appending after ${last} renumbers the items 1..n in their order and appends n+1`, () =>
        Effect.gen(function*() {
          const { add, agenda, listed, meeting, meetings, principal } = yield* setup
          const low = yield* add("low", "-5")
          const tieA = yield* add("tie a", "3.5")
          yield* TestClock.adjust("1 second")
          const tieB = yield* add("tie b", "3.5")
          const top = yield* add("top", last)
          const otherMeeting = yield* meetings.create(principal, CreateMeeting.make({ title: "Other" }))
          const untouched = yield* add("elsewhere", "42", otherMeeting.id)

          yield* TestClock.adjust("1 minute")
          const appended = yield* add("appended")
          expect(appended.sequence).toBe("5")
          const renumbered = yield* listed()
          expect(view(renumbered)).toEqual([["low", "1"], ["tie a", "2"], ["tie b", "3"], ["top", "4"], ["appended", "5"]])
          expect(renumbered.map((item) => item.id)).toEqual([low.id, tieA.id, tieB.id, top.id, appended.id])
          // The renumbered items are changed now; created_at stays.
          for (const [item, before] of [[renumbered[0], low], [renumbered[1], tieA], [renumbered[2], tieB], [renumbered[3], top]] as const) {
            expect(item?.updated_at).toEqual(DateTime.add(NOW, { minutes: 1, seconds: 1 }))
            expect(item?.created_at).toEqual(before.created_at)
          }
          // Nothing of another meeting moves.
          expect(yield* agenda.get(principal, untouched.id)).toEqual(untouched)

          // And the agenda goes on as usual.
          yield* TestClock.adjust("1 minute")
          expect((yield* add("next")).sequence).toBe("6")
          expect((yield* add("between", "2.5")).sequence).toBe("2.5")
          const final = yield* listed()
          expect(view(final)).toEqual([
            ["low", "1"], ["tie a", "2"], ["between", "2.5"], ["tie b", "3"], ["top", "4"], ["appended", "5"], ["next", "6"]
          ])
          // No second renumbering: the earlier items kept their updated_at.
          expect(final[0]?.updated_at).toEqual(DateTime.add(NOW, { minutes: 1, seconds: 1 }))
          expect((yield* agenda.list(principal, { meeting_id: meeting.id }, { limit: 2, offset: 5 })).items.map((i) => i.title))
            .toEqual(["appended", "next"])
        }))
    }

    it.effect("the largest and the smallest sequences are accepted as given; appending after the smallest is no renumbering", () =>
      Effect.gen(function*() {
        const { add, listed } = yield* setup
        expect((yield* add("lowest", `-${TOP}.999999`)).sequence).toBe(`-${TOP}.999999`)
        expect((yield* add("next")).sequence).toBe(`-${TOP}`)
        expect((yield* add("highest", `${TOP}.999999`)).sequence).toBe(`${TOP}.999999`)
        expect(view(yield* listed())).toEqual([["lowest", `-${TOP}.999999`], ["next", `-${TOP}`], ["highest", `${TOP}.999999`]])
      }))

    it.effect("presenters must be users of the workspace: ValidationError naming presenters[i]", () =>
      Effect.gen(function*() {
        const { agenda, listed, meeting, principal, user } = yield* setup
        const colleague = yield* principalFor({ workspaceId: principal.workspace_id })
        const stranger = yield* principalFor()
        const unknown = UserId.make(crypto.randomUUID())

        const fromOtherWorkspace = yield* Effect.flip(agenda.create(
          principal,
          CreateAgendaItem.make({ meeting_id: meeting.id, title: "x", presenters: [user.id, stranger.user.id] })
        ))
        expect(fromOtherWorkspace).toMatchObject({ _tag: "ValidationError", field: "presenters[1]" })
        expect(fromOtherWorkspace.message).toContain(stranger.user.id)
        const unknownFirst = yield* Effect.flip(agenda.create(
          principal,
          CreateAgendaItem.make({ meeting_id: meeting.id, title: "x", presenters: [unknown, user.id] })
        ))
        expect(unknownFirst).toMatchObject({ _tag: "ValidationError", field: "presenters[0]" })
        expect(yield* listed()).toEqual([])

        const item = yield* agenda.create(
          principal,
          CreateAgendaItem.make({ meeting_id: meeting.id, title: "Status", presenters: [colleague.user.id, user.id] })
        )
        expect(item.presenters).toEqual([colleague.user.id, user.id])
        expect(item.presenter_details.map((p) => [p.user_id, p.email])).toEqual([
          [colleague.user.id, colleague.user.email],
          [user.id, user.email]
        ])

        const refusedUpdate = yield* Effect.flip(
          agenda.update(principal, item.id, UpdateAgendaItem.make({ title: "changed", presenters: [user.id, user.id, unknown] }))
        )
        expect(refusedUpdate).toMatchObject({ _tag: "ValidationError", field: "presenters[2]" })
        expect(yield* agenda.get(principal, item.id)).toEqual(item)
        const updated = yield* agenda.update(principal, item.id, UpdateAgendaItem.make({ presenters: [] }))
        expect(updated.presenters).toEqual([])
      }))
  })

  describe("sequences", () => {
    const outOfRange = ["1000000000000", "-1000000000000", "1.1234567", "0.0000001", "1e3", "1.", ".5", "", " 1", "1,5", "+1"]
    const inRange = [TOP, `-${TOP}`, `${TOP}.999999`, `-${TOP}.999999`, "0", "-0.5", "007", "2.50"]

    it("CreateAgendaItem and UpdateAgendaItem refuse a sequence out of range, naming the field", () => {
      const meeting_id = crypto.randomUUID()
      for (const sequence of outOfRange) {
        for (const issues of [issuesOf(CreateAgendaItem, { meeting_id, title: "x", sequence }), issuesOf(UpdateAgendaItem, { sequence })]) {
          // (The optional field also reports that the value is not undefined.)
          expect(issues.filter((issue) => !issue.startsWith("sequence: Expected undefined, actual")), sequence)
            .toEqual([expect.stringMatching(/^sequence: .*at most 12 digits before the point and 6 after/)])
          expect(issues.every((issue) => issue.startsWith("sequence: ")), sequence).toBe(true)
        }
      }
      for (const sequence of inRange) {
        expect(issuesOf(CreateAgendaItem, { meeting_id, title: "x", sequence }), sequence).toEqual([])
        expect(issuesOf(UpdateAgendaItem, { sequence }), sequence).toEqual([])
      }
    })

    /** Any sequence the schema accepts, by its parts. */
    const sequences = FastCheck.tuple(
      FastCheck.boolean(),
      FastCheck.bigInt({ min: 0n, max: 10n ** 12n - 1n }),
      FastCheck.option(FastCheck.stringMatching(/^\d{1,6}$/), { nil: undefined })
    ).map(([negative, whole, fraction]) => `${negative ? "-" : ""}${whole}${fraction === undefined ? "" : `.${fraction}`}`)

    it.prop("sequenceAfter answers the next whole number above any sequence, or none when it would leave the range", [sequences], ([last]) => {
      expect(Schema.is(Sequence)(last)).toBe(true)
      const next = sequenceAfter(Option.some(Sequence.make(last)))
      const value = Option.getOrThrow(BigDecimal.fromString(last))
      // The next whole number above `last`, computed with bigint floor division.
      const floor = value.scale <= 0
        ? value.value * 10n ** BigInt(-value.scale)
        : value.value >= 0n
        ? value.value / 10n ** BigInt(value.scale)
        : -((-value.value + 10n ** BigInt(value.scale) - 1n) / 10n ** BigInt(value.scale))
      const expected = floor + 1n
      if (expected >= 10n ** 12n) {
        expect(next).toEqual(Option.none())
      } else {
        expect(next).toEqual(Option.some(String(expected)))
        expect(Schema.is(Sequence)(Option.getOrThrow(next))).toBe(true)
      }
    })

    it("sequenceAfter starts an empty agenda at 1", () => {
      expect(sequenceAfter(Option.none())).toEqual(Option.some("1"))
    })
  })
})

describe("AgendaItemStore after renumbering", () => {
  layer(CoreLive)((it) => {
    it.effect("lastSequence answers the new numbering, so the next append needs none", () =>
      Effect.gen(function*() {
        const { add, meeting, workspace } = yield* setup
        yield* add("top", TOP)
        yield* add("appended")
        expect(yield* (yield* AgendaItemStore).lastSequence(workspace.id, meeting.id)).toEqual(Option.some("2"))
      }))
  })
})
