/**
 * The event stream across server processes sharing one PostgreSQL server, as a scaled-out installation runs:
 * changes made through one process reach a stream held by another, and when that process restarts, the
 * `eventsource` client reconnects by itself with Last-Event-ID and receives what happened meanwhile, once.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Redacted, Scope } from "effect"
import { EventSource } from "eventsource"
import { serverDatabase } from "../packages/store-pg/test/fixtures.js"
import { startServerProcess } from "./support/process.js"
import { provision } from "./support/server.js"

const scope = Effect.runSync(Scope.make())
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)), 60_000)

const waitFor = async (condition: () => boolean, what: string, ms = 20_000) => {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

describe("the event stream on two server processes sharing one PostgreSQL", () => {
  it("carries changes made through the other process, and resumes by itself across a restart", async () => {
    const url = Redacted.value(await Effect.runPromise(Scope.extend(serverDatabase, scope)))
    const writer = await startServerProcess({ DATABASE_URL: url })
    let reader = await startServerProcess({ DATABASE_URL: url })
    const source = { close: () => {} }
    try {
      const admin = await provision(writer.url, { role: "ADMIN" })
      const received: Array<{ id: string; meeting: string }> = []
      const opened: Array<string | null> = []
      const events = new EventSource(`${reader.url}/v1/user/events`, {
        fetch: (input, init) => {
          opened.push((init.headers as Record<string, string>)["Last-Event-ID"] ?? null)
          return fetch(input, { ...init, headers: { ...init.headers, authorization: `Bearer ${admin.token}` } })
        }
      })
      source.close = () => events.close()
      events.addEventListener("meeting.created", (event) => {
        const envelope = JSON.parse(event.data) as { event_id: string; data: { id: string } }
        expect(envelope.event_id).toBe(event.lastEventId)
        received.push({ id: event.lastEventId, meeting: envelope.data.id })
      })
      await waitFor(() => events.readyState === EventSource.OPEN, "the stream to open")

      const create = async (title: string) => {
        const response = await admin.api.post("/v1/meetings", { title, start_time: "2026-12-01T09:00:00Z" })
        expect(response.status).toBe(201)
        return response.body.id as string
      }
      const first = await create("Through the writer")
      await waitFor(() => received.length === 1, "the first event through the other process")
      expect(received[0]!.meeting).toBe(first)

      // The reader restarts on its port; meanwhile two more changes.
      const port = new URL(reader.url).port
      await reader.stop()
      const missed = [await create("While the reader was down, 1"), await create("While the reader was down, 2")]
      reader = await startServerProcess({ DATABASE_URL: url, PORT: port })
      await waitFor(() => received.length === 3, "the missed events after the client reconnected", 30_000)
      const last = await create("After the restart")
      await waitFor(() => received.length === 4, "the live event after the restart")
      await new Promise((resolve) => setTimeout(resolve, 1_500))

      expect(received.map((event) => event.meeting)).toEqual([first, ...missed, last])
      expect(new Set(received.map((event) => event.id)).size).toBe(4)
      // The client sent the id of the last event it had seen when it reconnected.
      expect(opened[0]).toBeNull()
      expect(opened.slice(1)).toContain(received[0]!.id)
    } finally {
      source.close()
      await writer.stop()
      await reader.stop()
    }
  }, 120_000)
})
