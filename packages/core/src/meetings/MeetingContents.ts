/**
 * What other rooms keep on a meeting: the agenda a template starts it with, and everything that must go
 * when the meeting goes (agenda items, action items, and whatever is kept on a meeting next). The meetings
 * room calls it inside its own transactions without importing those rooms; core's composition root
 * (Contents.ts) implements it, so the cascade is decided once, in core, for every store.
 */
import { Context, type Effect } from "effect"
import type { MeetingId, WorkspaceId } from "../shared/Ids.js"
import type { Meeting } from "./Meeting.js"
import type { TemplateAgendaItem } from "./Templates.js"

export class MeetingContents extends Context.Tag("@convene/core/MeetingContents")<MeetingContents, {
  /** Puts a template's agenda on a new meeting, in the template's order. */
  readonly seed: (meeting: Meeting, agenda: ReadonlyArray<TemplateAgendaItem>) => Effect.Effect<void>
  /** Deletes everything other rooms keep on the meeting (not the meeting itself). */
  readonly deleteAll: (workspaceId: WorkspaceId, meetingId: MeetingId) => Effect.Effect<void>
}>() {}
