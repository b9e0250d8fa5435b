/**
 * What goes with what, decided in core (Contents.ts) for every store: deleting a meeting deletes its agenda
 * items (with their talking points) and action items; deleting an agenda item detaches the action items that
 * pointed at it. Each in one unit of work with the delete itself.
 */
import {
  type ActionItem,
  ActionItems,
  ActionItemStore,
  type AgendaItem,
  AgendaItems,
  AgendaItemStore,
  CreateActionItem,
  CreateAgendaItem,
  CreateMeeting,
  type Meeting,
  Meetings,
  MeetingStore,
  TemplateId
} from "@convene/core"
import * as StoreMemory from "@convene/store-memory"
import { describe, expect, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option } from "effect"
import { CoreLive, coreOver, principalFor } from "./fixtures.js"

const retrospective = TemplateId.make("6a1f3c1e-0b6e-4a53-9d1e-1c5d8f0a0003")
const everything = { limit: 100, offset: 0 }

/** A member's meeting from a template, with an extra agenda item, talking points and action items. */
const furnishedMeeting = Effect.gen(function*() {
  const { principal, user } = yield* principalFor()
  const meetings = yield* Meetings
  const agenda = yield* AgendaItems
  const actions = yield* ActionItems
  const furnish = (title: string) =>
    Effect.gen(function*() {
      const meeting = yield* meetings.create(principal, CreateMeeting.make({ title, template_id: retrospective }))
      const item = yield* agenda.create(
        principal,
        CreateAgendaItem.make({ meeting_id: meeting.id, title: `${title}: extra`, talking_points: [`${title} point`] })
      )
      const pointing = yield* actions.create(
        principal,
        CreateActionItem.make({ meeting_id: meeting.id, title: `${title}: follow up`, agenda_item_id: item.id })
      )
      const loose = yield* actions.create(principal, CreateActionItem.make({ meeting_id: meeting.id, title: `${title}: loose` }))
      return { meeting, item, pointing, loose }
    })
  return { principal, user, furnish }
})

/** What the stores hold of a meeting: its agenda items, the subject's talking points on them, its action items. */
const storedOf = (meeting: Meeting, subject: string) =>
  Effect.gen(function*() {
    const agendaStore = yield* AgendaItemStore
    const items = yield* agendaStore.listByMeeting(meeting.workspace_id, meeting.id)
    const points = yield* agendaStore.talkingPoints(items.map((item) => item.id), subject)
    const actions = yield* (yield* ActionItemStore).list(meeting.workspace_id, { meetingIds: [meeting.id] }, everything)
    const participants = yield* (yield* MeetingStore).listParticipants(meeting.workspace_id, meeting.id)
    return { items, points: new Map(points), actions: actions.items, participants }
  })

/** The core on the in-memory store, except that MeetingStore.delete dies (after contents.deleteAll ran). */
const MeetingDeleteDies = coreOver(
  Layer.effect(
    MeetingStore,
    Effect.map(MeetingStore, (store) => MeetingStore.of({ ...store, delete: () => Effect.die("the store broke deleting the meeting") }))
  ).pipe(Layer.provideMerge(StoreMemory.layer))
)

/** The core on the in-memory store, except that AgendaItemStore.delete dies (after the detach ran). */
const AgendaDeleteDies = coreOver(
  Layer.effect(
    AgendaItemStore,
    Effect.map(AgendaItemStore, (store) =>
      AgendaItemStore.of({ ...store, delete: () => Effect.die("the store broke deleting the agenda item") }))
  ).pipe(Layer.provideMerge(StoreMemory.layer))
)


describe("Cascades", () => {
  layer(CoreLive)((it) => {
    it.effect("Meetings.delete removes the meeting's agenda items with their talking points and its action items, and nothing of other meetings", () =>
      Effect.gen(function*() {
        const { furnish, principal, user } = yield* furnishedMeeting
        const doomed = yield* furnish("doomed")
        const kept = yield* furnish("kept")
        const keptBefore = yield* storedOf(kept.meeting, user.id)
        const doomedBefore = yield* storedOf(doomed.meeting, user.id)
        expect(doomedBefore.items).toHaveLength(7)
        expect(doomedBefore.points.get(doomed.item.id)).toEqual(["doomed point"])
        expect(doomedBefore.actions).toHaveLength(2)

        yield* (yield* Meetings).delete(principal, doomed.meeting.id)

        expect(yield* storedOf(doomed.meeting, user.id)).toEqual({ items: [], points: new Map(), actions: [], participants: [] })
        const agendaStore = yield* AgendaItemStore
        for (const item of doomedBefore.items) expect(Option.isNone(yield* agendaStore.get(principal.workspace_id, item.id))).toBe(true)
        expect((yield* agendaStore.talkingPoints(doomedBefore.items.map((item) => item.id), user.id)).size).toBe(0)
        const actionStore = yield* ActionItemStore
        for (const action of [doomed.pointing, doomed.loose]) {
          expect(Option.isNone(yield* actionStore.get(principal.workspace_id, action.id))).toBe(true)
        }
        expect(yield* Effect.flip((yield* AgendaItems).get(principal, doomed.item.id))).toMatchObject({ _tag: "NotFound" })

        expect(yield* storedOf(kept.meeting, user.id)).toEqual(keptBefore)
      }))

    it.effect("AgendaItems.delete detaches the action items that pointed at it and removes its talking points", () =>
      Effect.gen(function*() {
        const { furnish, principal, user } = yield* furnishedMeeting
        const { item, loose, meeting, pointing } = yield* furnish("agenda")
        const agenda = yield* AgendaItems
        const actions = yield* ActionItems
        const other = yield* agenda.create(
          principal,
          CreateAgendaItem.make({ meeting_id: meeting.id, title: "other", talking_points: ["other point"] })
        )
        const pointingElsewhere = yield* actions.create(
          principal,
          CreateActionItem.make({ meeting_id: meeting.id, title: "elsewhere", agenda_item_id: other.id })
        )

        yield* agenda.delete(principal, item.id)

        expect(yield* Effect.flip(agenda.get(principal, item.id))).toMatchObject({ _tag: "NotFound" })
        expect(yield* actions.get(principal, pointing.id)).toEqual({ ...pointing, agenda_item_id: null })
        expect(yield* actions.get(principal, loose.id)).toEqual(loose)
        expect(yield* actions.get(principal, pointingElsewhere.id)).toEqual(pointingElsewhere)
        const agendaStore = yield* AgendaItemStore
        expect(new Map(yield* agendaStore.talkingPoints([item.id, other.id], user.id))).toEqual(new Map([[other.id, ["other point"]]]))
        expect((yield* agenda.get(principal, other.id)).talking_points).toEqual(["other point"])
      }))
  })

  layer(MeetingDeleteDies)((it) => {
    it.effect("Meetings.delete is one unit: when deleting the meeting fails, its agenda and action items stay", () =>
      Effect.gen(function*() {
        const { furnish, principal, user } = yield* furnishedMeeting
        const { meeting } = yield* furnish("survivor")
        const before = yield* storedOf(meeting, user.id)
        const exit = yield* Effect.exit((yield* Meetings).delete(principal, meeting.id))
        expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
        expect(yield* storedOf(meeting, user.id)).toEqual(before)
        expect(before.items).toHaveLength(7)
        expect(before.actions).toHaveLength(2)
      }))
  })

  layer(AgendaDeleteDies)((it) => {
    it.effect("AgendaItems.delete is one unit: when deleting the item fails, the action items still point at it", () =>
      Effect.gen(function*() {
        const { furnish, principal } = yield* furnishedMeeting
        const { item, pointing } = yield* furnish("survivor")
        const exit = yield* Effect.exit((yield* AgendaItems).delete(principal, item.id))
        expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
        const after: ActionItem = yield* (yield* ActionItems).get(principal, pointing.id)
        expect(after.agenda_item_id).toBe(item.id)
        const stillThere: AgendaItem = yield* (yield* AgendaItems).get(principal, item.id)
        expect(stillThere.id).toBe(item.id)
      }))
  })
})
