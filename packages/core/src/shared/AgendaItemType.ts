/**
 * The kinds of agenda item. Shared vocabulary: agenda items, meeting templates and (later) backlog items and
 * toolkit manifests all speak it, so it lives below every room that uses it.
 */
import { Schema } from "effect"

export const AgendaItemType = Schema.Literal("DISCUSSION", "QUESTIONS_TO_ANSWER", "BREAK", "ADJOURN").annotations({
  identifier: "AgendaItemType"
})
export type AgendaItemType = typeof AgendaItemType.Type
