/**
 * What hangs off what, decided once for every store. A room that keeps things on another room's records
 * (agenda items on meetings, action items on meetings and agenda items) is wired in here, so that creating
 * and deleting the parent takes them along inside the parent's transaction, and no adapter has to know.
 * A new kind of thing kept on a meeting is added to `deleteAll` below (and gets a cascade test).
 */
import { Effect, Layer } from "effect"
import { ActionItemStore } from "./actions/ActionItemStore.js"
import { AgendaItemReferences } from "./agenda/AgendaItemReferences.js"
import { agendaFromTemplate } from "./agenda/AgendaItems.js"
import { AgendaItemStore } from "./agenda/AgendaItemStore.js"
import { MeetingContents } from "./meetings/MeetingContents.js"
import { Crypto } from "./ports/Crypto.js"

export const meetingContents: Layer.Layer<MeetingContents, never, AgendaItemStore | ActionItemStore | Crypto> = Layer
  .effect(
    MeetingContents,
    Effect.gen(function*() {
      const agenda = yield* AgendaItemStore
      const actions = yield* ActionItemStore
      const crypto = yield* Crypto
      return MeetingContents.of({
        seed: (meeting, items) =>
          agendaFromTemplate(meeting, items).pipe(
            Effect.flatMap((rows) => Effect.forEach(rows, agenda.insert, { discard: true })),
            Effect.provideService(Crypto, crypto)
          ),
        // Action items first: they may point at the agenda items.
        deleteAll: (workspaceId, meetingId) =>
          Effect.zipRight(actions.deleteByMeeting(workspaceId, meetingId), agenda.deleteByMeeting(workspaceId, meetingId))
      })
    })
  )

export const agendaItemReferences: Layer.Layer<AgendaItemReferences, never, ActionItemStore> = Layer.effect(
  AgendaItemReferences,
  Effect.map(ActionItemStore, (actions) => AgendaItemReferences.of({ detach: actions.detachAgendaItem }))
)

export const layer = Layer.merge(meetingContents, agendaItemReferences)
