/**
 * What the server and its context worker processes say to each other (ContextWorkers.ts, Worker.ts): one request,
 * an upload to prepare, answered by core's PreparedContext or one of its refusals.
 */
import { ContextSource, PreparationError, PreparedContext } from "@convene/core"
import { Schema } from "effect"

export class PrepareContext extends Schema.TaggedRequest<PrepareContext>()("PrepareContext", {
  failure: PreparationError,
  success: PreparedContext,
  payload: { source: ContextSource }
}) {}
