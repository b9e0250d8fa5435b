/** An unexpected failure inside the server answers 500 in the envelope, with no internals, and the server goes on. */
import { MeetingStore } from "@convene/core"
import * as StoreMemory from "@convene/store-memory"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { provision, type RunningServer, startServer } from "../support/server.js"

// The in-memory store, except that listing meetings dies with an error whose text must never reach a client.
const FaultyStore = Layer.effect(
  MeetingStore,
  Effect.map(MeetingStore, (store) => ({
    ...store,
    list: () => Effect.die(new Error("connection to postgres://admin:hunter2@db failed"))
  }))
).pipe(Layer.provideMerge(StoreMemory.layer))

let server: RunningServer
beforeAll(async () => {
  server = await startServer({ store: FaultyStore })
})
afterAll(() => server.close())

describe("unexpected defects", () => {
  it("answer 500 internal_server_error in the envelope without internals, and the server keeps serving", async () => {
    const { api } = await provision(server.url)
    const failed = await api.get("/v1/meetings")
    expect(failed.status).toBe(500)
    expect(failed.body).toEqual({
      error: expect.any(String),
      code: "internal_server_error",
      request_id: failed.headers.get("x-request-id"),
      message: failed.body.error
    })
    expect(failed.text).not.toContain("hunter2")
    expect(failed.text).not.toContain("postgres://")
    const created = await api.post("/v1/meetings", { title: "still here" })
    expect(created.status).toBe(201)
    expect((await api.get(`/v1/meetings/${created.body.id}`)).status).toBe(200)
  })
})
