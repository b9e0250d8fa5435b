import { type StorePorts, Transactor, WorkspaceId, WorkspaceStore } from "@convene/core"
import { addEqualityTesters, expect, layer } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import { at, ids, minutes, seedWorkspace, sortedIds, templateIds, uuid, workspace } from "./fixtures.js"

export const suite = (name: string, storeLayer: Layer.Layer<StorePorts, unknown>) => {
  addEqualityTesters()

  layer(storeLayer)(`WorkspaceStore (${name})`, (it) => {
    it.effect("insert then get answers every field", () =>
      Effect.gen(function*() {
        const store = yield* WorkspaceStore
        const plain = workspace({ name: "Plain", plan: "FREE" })
        const full = workspace({
          name: "Full",
          plan: "ENTERPRISE",
          default_detail_level: "detailed",
          default_template_id: templateIds.retrospective,
          created_at: minutes(-60),
          updated_at: minutes(30)
        })
        yield* store.insert(plain)
        yield* store.insert(full)
        expect(yield* store.get(plain.id)).toEqual(Option.some(plain))
        expect(yield* store.get(full.id)).toEqual(Option.some(full))
      }))

    it.effect("lock holds nothing outside a transaction and inside one changes nothing, of a known or an unknown id", () =>
      Effect.gen(function*() {
        const store = yield* WorkspaceStore
        const transactor = yield* Transactor
        const known = yield* seedWorkspace()
        yield* store.lock(known.id)
        yield* store.lock(WorkspaceId.make(uuid()))
        yield* transactor.withTransaction(Effect.zipRight(store.lock(known.id), store.lock(known.id)))
        expect(yield* store.get(known.id)).toEqual(Option.some(known))
        // Released at the end of the transaction: another transaction takes it at once.
        yield* transactor.withTransaction(store.lock(known.id))
      }))

    it.effect("share answers whether the workspace exists, in and out of a transaction, and lets lock follow it", () =>
      Effect.gen(function*() {
        const store = yield* WorkspaceStore
        const transactor = yield* Transactor
        const known = yield* seedWorkspace()
        const unknown = WorkspaceId.make(uuid())
        expect(yield* store.share(known.id)).toBe(true)
        expect(yield* store.share(unknown)).toBe(false)
        // Two shares in one transaction do not wait for each other; a deletion in it is seen by the next share.
        expect(yield* transactor.withTransaction(Effect.all([store.share(known.id), store.share(known.id), store.share(unknown)])))
          .toEqual([true, true, false])
        const gone = yield* seedWorkspace()
        expect(yield* transactor.withTransaction(Effect.gen(function*() {
          yield* store.share(gone.id)
          yield* store.delete(gone.id)
          return yield* store.share(gone.id)
        }))).toBe(false)
        // Released at the end of the transaction: a lock is taken at once.
        yield* transactor.withTransaction(store.lock(known.id))
        expect(yield* store.get(known.id)).toEqual(Option.some(known))
      }))

    it.effect("get of an unknown id answers none", () =>
      Effect.gen(function*() {
        const store = yield* WorkspaceStore
        expect(Option.isNone(yield* store.get(WorkspaceId.make(uuid())))).toBe(true)
      }))

    it.effect("update replaces the stored fields", () =>
      Effect.gen(function*() {
        const store = yield* WorkspaceStore
        const original = yield* seedWorkspace()
        const changed = workspace({
          id: original.id,
          name: "Renamed",
          plan: "ELITE",
          default_detail_level: "brief",
          default_template_id: templateIds.oneOnOne,
          created_at: original.created_at,
          updated_at: minutes(10)
        })
        yield* store.update(changed)
        expect(yield* store.get(original.id)).toEqual(Option.some(changed))

        const cleared = workspace({ ...changed, default_template_id: null, updated_at: minutes(20) })
        yield* store.update(cleared)
        expect(yield* store.get(original.id)).toEqual(Option.some(cleared))
      }))

    it.effect("consume counts up to the limit, then refuses", () =>
      Effect.gen(function*() {
        const store = yield* WorkspaceStore
        const ws = yield* seedWorkspace()
        const input = { workspaceId: ws.id, counter: "meetings", period: "2026-03", limit: 3 }
        const answers = [
          yield* store.consume(input),
          yield* store.consume(input),
          yield* store.consume(input),
          yield* store.consume(input),
          yield* store.consume(input)
        ]
        expect(answers).toEqual([true, true, true, false, false])
        // A higher limit lets the same counter go on from where it stands.
        expect(yield* store.consume({ ...input, limit: 4 })).toBe(true)
        expect(yield* store.consume({ ...input, limit: 4 })).toBe(false)
      }))

    it.effect("consume with limit 0 never consumes", () =>
      Effect.gen(function*() {
        const store = yield* WorkspaceStore
        const ws = yield* seedWorkspace()
        expect(yield* store.consume({ workspaceId: ws.id, counter: "meetings", period: "2026-03", limit: 0 })).toBe(false)
        expect(yield* store.consume({ workspaceId: ws.id, counter: "meetings", period: "2026-03", limit: 1 })).toBe(true)
      }))

    it.effect("counters are kept apart by workspace, counter and period", () =>
      Effect.gen(function*() {
        const store = yield* WorkspaceStore
        const a = yield* seedWorkspace()
        const b = yield* seedWorkspace()
        const base = { workspaceId: a.id, counter: "meetings", period: "2026-03", limit: 1 }
        expect(yield* store.consume(base)).toBe(true)
        expect(yield* store.consume(base)).toBe(false)
        expect(yield* store.consume({ ...base, workspaceId: b.id })).toBe(true)
        expect(yield* store.consume({ ...base, counter: "uploads" })).toBe(true)
        expect(yield* store.consume({ ...base, period: "2026-04" })).toBe(true)
        expect(yield* store.consume({ ...base, workspaceId: b.id })).toBe(false)
      }))

    it.effect("30 racing consumes with limit 20: exactly 20 succeed", () =>
      Effect.gen(function*() {
        const store = yield* WorkspaceStore
        const ws = yield* seedWorkspace()
        const input = { workspaceId: ws.id, counter: "meetings", period: "2026-03", limit: 20 }
        const answers = yield* Effect.all(
          Array.from({ length: 30 }, () => store.consume(input)),
          { concurrency: "unbounded" }
        )
        expect(answers.filter((taken) => taken)).toHaveLength(20)
        expect(yield* store.consume(input)).toBe(false)
      }))

    it.effect("list answers every workspace newest first, ties by id descending, with the total", () =>
      Effect.gen(function*() {
        const store = yield* WorkspaceStore
        const before = (yield* store.list({ limit: 1, offset: 0 })).total
        // Far in the future, so that these four come first whatever else the store holds.
        const far = at("2999-01-01T00:00:00.000Z")
        const [low, high] = sortedIds(2).map((id) => WorkspaceId.make(id))
        const oldest = yield* seedWorkspace({ created_at: minutes(-1, far) })
        const tieLow = yield* seedWorkspace({ id: low!, created_at: far })
        const newest = yield* seedWorkspace({ created_at: minutes(1, far), name: "Newest", plan: "ELITE" })
        const tieHigh = yield* seedWorkspace({ id: high!, created_at: far })

        const first = yield* store.list({ limit: 3, offset: 0 })
        expect(ids(first.items)).toEqual(ids([newest, tieHigh, tieLow]))
        expect(first.items[0]).toEqual(newest)
        expect(first.total).toBe(before + 4)
        const second = yield* store.list({ limit: 3, offset: 3 })
        expect(second.items[0]).toEqual(oldest)
        expect(second.total).toBe(before + 4)
        const past = yield* store.list({ limit: 3, offset: before + 4 })
        expect(past).toEqual({ items: [], total: before + 4 })
      }))

    it.effect("delete removes the workspace with its usage counters, answers whether it existed, and leaves others", () =>
      Effect.gen(function*() {
        const store = yield* WorkspaceStore
        const doomed = yield* seedWorkspace()
        const kept = yield* seedWorkspace()
        const counter = (workspaceId: WorkspaceId) => ({ workspaceId, counter: "meetings", period: "2026-03", limit: 1 })
        expect(yield* store.consume(counter(doomed.id))).toBe(true)
        expect(yield* store.consume(counter(kept.id))).toBe(true)

        expect(yield* store.delete(doomed.id)).toBe(true)
        expect(Option.isNone(yield* store.get(doomed.id))).toBe(true)
        expect(yield* store.delete(doomed.id)).toBe(false)
        expect(yield* store.delete(WorkspaceId.make(uuid()))).toBe(false)
        expect(yield* store.get(kept.id)).toEqual(Option.some(kept))
        expect(yield* store.consume(counter(kept.id))).toBe(false)

        // The same id again starts with fresh counters: the old ones went with the workspace.
        yield* store.insert(doomed)
        expect(yield* store.consume(counter(doomed.id))).toBe(true)
      }))
  })
}
