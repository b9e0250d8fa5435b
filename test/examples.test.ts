import { EmbeddedLive, program } from "@convene/example-embed-memory"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"

describe("examples/embed-memory", () => {
  it.effect("runs a meeting through the embedded core without HTTP", () =>
    Effect.gen(function*() {
      const summary = yield* program.pipe(Effect.provide(EmbeddedLive))
      expect(summary).toEqual({
        meeting: "ended",
        agenda: ["0.5 Warm-up", "1 Goals"],
        action: { status: "completed", is_completed: true },
        late_agenda_item: "Conflict"
      })
    }))
})
