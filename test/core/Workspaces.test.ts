/** Provisioning workspaces (workspaces/Workspaces.ts): what create sets, what update changes and keeps, NotFound. */
import { CreateWorkspace, UpdateWorkspace, WorkspaceId, Workspaces, WorkspaceStore } from "@convene/core"
import { describe, expect, layer } from "@effect/vitest"
import { DateTime, Effect, Option, TestClock } from "effect"
import { CoreLive } from "./fixtures.js"

describe("Workspaces", () => {
  layer(CoreLive)((it) => {
    it.effect("create stores the name and plan with the default settings, created and updated now", () =>
      Effect.gen(function*() {
        yield* TestClock.adjust("1 hour")
        const workspaces = yield* Workspaces
        const created = yield* workspaces.create(CreateWorkspace.make({ name: "Acme", plan: "ELITE" }))
        expect(created).toMatchObject({ name: "Acme", plan: "ELITE", default_detail_level: "standard", default_template_id: null })
        expect(DateTime.toEpochMillis(created.created_at)).toBe(3_600_000)
        expect(created.updated_at).toEqual(created.created_at)
        expect(yield* workspaces.get(created.id)).toEqual(created)
      }))

    it.effect("update changes the name and the plan, keeps everything else, and stores the result", () =>
      Effect.gen(function*() {
        const workspaces = yield* Workspaces
        const created = yield* workspaces.create(CreateWorkspace.make({ name: "Acme", plan: "FREE" }))
        yield* TestClock.adjust("2 minutes")
        const updated = yield* workspaces.update(created.id, UpdateWorkspace.make({ name: "Acme Corp", plan: "PRO" }))
        expect(updated).toEqual({
          ...created,
          name: "Acme Corp",
          plan: "PRO",
          updated_at: DateTime.add(created.updated_at, { minutes: 2 })
        })
        expect(yield* workspaces.get(created.id)).toEqual(updated)
        expect(yield* (yield* WorkspaceStore).get(created.id)).toEqual(Option.some(updated))
      }))

    it.effect("update keeps what the request leaves out", () =>
      Effect.gen(function*() {
        const workspaces = yield* Workspaces
        const created = yield* workspaces.create(CreateWorkspace.make({ name: "Acme", plan: "FREE" }))
        const planOnly = yield* workspaces.update(created.id, UpdateWorkspace.make({ plan: "ENTERPRISE" }))
        expect([planOnly.name, planOnly.plan]).toEqual(["Acme", "ENTERPRISE"])
        const nameOnly = yield* workspaces.update(created.id, UpdateWorkspace.make({ name: "Renamed" }))
        expect([nameOnly.name, nameOnly.plan]).toEqual(["Renamed", "ENTERPRISE"])
        const nothing = yield* workspaces.update(created.id, UpdateWorkspace.make({}))
        expect([nothing.name, nothing.plan]).toEqual(["Renamed", "ENTERPRISE"])
      }))

    it.effect("get and update of an unknown workspace are NotFound naming the workspace and its id", () =>
      Effect.gen(function*() {
        const workspaces = yield* Workspaces
        const id = WorkspaceId.make(crypto.randomUUID())
        const expected = { _tag: "NotFound", resource: "workspace", id, message: `workspace ${id} was not found` }
        expect(yield* Effect.flip(workspaces.get(id))).toMatchObject(expected)
        expect(yield* Effect.flip(workspaces.update(id, UpdateWorkspace.make({ name: "Ghost" })))).toMatchObject(expected)
        expect(Option.isNone(yield* (yield* WorkspaceStore).get(id))).toBe(true)
      }))
  })
})
