/**
 * What other rooms keep that points at an agenda item (action items do). The agenda room lets go of them
 * before it deletes an item, inside the same transaction, without importing those rooms; core's composition
 * root (Contents.ts) implements it.
 */
import { Context, type Effect } from "effect"
import type { AgendaItemId, WorkspaceId } from "../shared/Ids.js"

export class AgendaItemReferences extends Context.Tag("@convene/core/AgendaItemReferences")<AgendaItemReferences, {
  /** Makes everything that points at the item point nowhere. */
  readonly detach: (workspaceId: WorkspaceId, agendaItemId: AgendaItemId) => Effect.Effect<void>
}>() {}
