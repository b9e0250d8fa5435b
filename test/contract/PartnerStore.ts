import {
  DuplicateKey,
  PartnerApp,
  PartnerAppId,
  PartnerStore,
  type StorePorts,
  Transactor,
  WorkspaceId,
  WorkspaceStore
} from "@convene/core"
import { addEqualityTesters, expect, layer } from "@effect/vitest"
import { DateTime, Effect, Exit, FastCheck as fc, type Layer, Option } from "effect"
import { minutes, seedWorkspace, sortedIds, T0, uuid } from "./fixtures.js"

/** A partner app with fresh unique slug and client id unless `fields` say otherwise. */
export const partnerApp = (fields: Partial<PartnerApp> = {}): PartnerApp =>
  new PartnerApp({
    id: PartnerAppId.make(uuid()),
    name: "Acme Notes",
    slug: `acme-${uuid()}`,
    status: "active",
    webhook_url: null,
    co_brand_name: null,
    co_brand_logo_url: null,
    client_id: `cvp_${uuid()}`,
    redirect_uris: [],
    api_key_hash: uuid().replaceAll("-", "") + uuid().replaceAll("-", ""),
    client_secret_hash: uuid().replaceAll("-", "") + uuid().replaceAll("-", ""),
    sealed_webhook_secret: null,
    created_at: T0,
    updated_at: T0,
    ...fields
  })

const seedApp = (fields: Partial<PartnerApp> = {}) =>
  Effect.gen(function*() {
    const app = partnerApp(fields)
    yield* (yield* PartnerStore).insert(app)
    return app
  })

/** Every app of the store, page by page, in the store's order. */
const everyApp = Effect.gen(function*() {
  const store = yield* PartnerStore
  const all: Array<PartnerApp> = []
  for (let offset = 0; ; offset += 100) {
    const slice = yield* store.list({ limit: 100, offset })
    all.push(...slice.items)
    if (slice.items.length < 100) return { all, total: slice.total }
  }
})

export const suite = (name: string, storeLayer: Layer.Layer<StorePorts, unknown>) => {
  addEqualityTesters()

  layer(storeLayer)(`PartnerStore (${name})`, (it) => {
    it.effect("insert then get, getByClientId and getBySlug answer every field; unknown ones answer none", () =>
      Effect.gen(function*() {
        const store = yield* PartnerStore
        const plain = yield* seedApp()
        const full = yield* seedApp({
          name: "Full",
          status: "suspended",
          webhook_url: "https://hooks.example.com/partner",
          co_brand_name: "Acme",
          co_brand_logo_url: "https://cdn.example.com/logo.png",
          redirect_uris: ["https://acme.example/cb", "http://127.0.0.1:8000/cb"],
          created_at: minutes(-60),
          updated_at: minutes(30)
        })
        for (const app of [plain, full]) {
          expect(yield* store.get(app.id)).toEqual(Option.some(app))
          expect(yield* store.getByClientId(app.client_id)).toEqual(Option.some(app))
          expect(yield* store.getBySlug(app.slug)).toEqual(Option.some(app))
        }
        expect(Option.isNone(yield* store.get(PartnerAppId.make(uuid())))).toBe(true)
        expect(Option.isNone(yield* store.getByClientId(`cvp_${uuid()}`))).toBe(true)
        expect(Option.isNone(yield* store.getBySlug(`none-${uuid()}`))).toBe(true)
        // Exact matches only: a client id or slug differing in case is another.
        expect(Option.isNone(yield* store.getByClientId(plain.client_id.toUpperCase()))).toBe(true)
        expect(Option.isNone(yield* store.getBySlug(plain.slug.toUpperCase()))).toBe(true)
      }))

    it.effect("a repeated slug or client id is DuplicateKey, and nothing is stored", () =>
      Effect.gen(function*() {
        const store = yield* PartnerStore
        const first = yield* seedApp()
        const sameSlug = partnerApp({ slug: first.slug })
        const sameClient = partnerApp({ client_id: first.client_id })
        for (const clash of [sameSlug, sameClient]) {
          const exit = yield* Effect.exit(store.insert(clash))
          expect(Exit.isFailure(exit)).toBe(true)
          const error = yield* Effect.flip(store.insert(clash))
          expect(error).toBeInstanceOf(DuplicateKey)
          expect(Option.isNone(yield* store.get(clash.id))).toBe(true)
        }
        expect((yield* Effect.flip(store.insert(sameSlug))).constraint).toContain("slug")
        expect((yield* Effect.flip(store.insert(sameClient))).constraint).toContain("client_id")
      }))

    it.effect("a DuplicateKey inside a unit of work leaves it usable", () =>
      Effect.gen(function*() {
        const store = yield* PartnerStore
        const transactor = yield* Transactor
        const first = yield* seedApp()
        const next = partnerApp()
        yield* transactor.withTransaction(Effect.gen(function*() {
          yield* Effect.flip(store.insert(partnerApp({ slug: first.slug })))
          yield* store.insert(next)
        }))
        expect(yield* store.get(next.id)).toEqual(Option.some(next))
      }))

    it.effect("update replaces the stored fields; of an unknown id it stores nothing", () =>
      Effect.gen(function*() {
        const store = yield* PartnerStore
        const original = yield* seedApp({ webhook_url: "https://hooks.example.com/a" })
        const changed = new PartnerApp({
          ...original,
          name: "Renamed",
          status: "suspended",
          webhook_url: null,
          co_brand_name: "Co",
          redirect_uris: ["https://b.example/cb"],
          updated_at: minutes(5)
        })
        yield* store.update(changed)
        expect(yield* store.get(original.id)).toEqual(Option.some(changed))
        const stranger = partnerApp()
        yield* store.update(stranger)
        expect(Option.isNone(yield* store.get(stranger.id))).toBe(true)
      }))

    it.effect("setWebhookSecret stores the sealed secret and updated_at alone; update keeps the stored secret", () =>
      Effect.gen(function*() {
        const store = yield* PartnerStore
        const original = yield* seedApp({ sealed_webhook_secret: "sealed-first", name: "Before" })
        expect(yield* store.setWebhookSecret(original.id, "sealed-second", minutes(7))).toBe(true)
        const rotated = new PartnerApp({ ...original, sealed_webhook_secret: "sealed-second", updated_at: minutes(7) })
        expect(yield* store.get(original.id)).toEqual(Option.some(rotated))
        // A change computed from the read before the rotation does not bring the old secret back.
        const stale = new PartnerApp({ ...original, name: "After", updated_at: minutes(8) })
        yield* store.update(stale)
        expect(yield* store.get(original.id)).toEqual(
          Option.some(new PartnerApp({ ...stale, sealed_webhook_secret: "sealed-second" }))
        )
        // An app made without one gets its first.
        const bare = yield* seedApp()
        expect(yield* store.setWebhookSecret(bare.id, "sealed-made", minutes(9))).toBe(true)
        expect(Option.map(yield* store.get(bare.id), (app) => app.sealed_webhook_secret)).toEqual(Option.some("sealed-made"))
        expect(yield* store.setWebhookSecret(PartnerAppId.make(uuid()), "sealed-none", minutes(9))).toBe(false)
      }))

    it.effect("connectedApps: the apps the workspace is connected to, whole, oldest connection first (ties by app id)", () =>
      Effect.gen(function*() {
        const store = yield* PartnerStore
        const [low, high] = sortedIds(2) as [string, string]
        const late = yield* seedApp({ status: "suspended", sealed_webhook_secret: "sealed" })
        const tieHigh = yield* seedApp({ id: PartnerAppId.make(high) })
        const tieLow = yield* seedApp({ id: PartnerAppId.make(low), webhook_url: "https://hooks.example.com/low" })
        const stranger = yield* seedApp()
        const ws = yield* seedWorkspace()
        const other = yield* seedWorkspace()
        yield* store.connect({ appId: late.id, workspaceId: ws.id, at: minutes(5) })
        yield* store.connect({ appId: tieHigh.id, workspaceId: ws.id, at: minutes(1) })
        yield* store.connect({ appId: tieLow.id, workspaceId: ws.id, at: minutes(1) })
        yield* store.connect({ appId: stranger.id, workspaceId: other.id, at: minutes(1) })
        expect(yield* store.connectedApps(ws.id)).toEqual([tieLow, tieHigh, late])
        expect(yield* store.connectedApps(other.id)).toEqual([stranger])
        expect(yield* store.connectedApps(WorkspaceId.make(uuid()))).toEqual([])
      }))

    it.effect("list is newest first (created_at desc, id desc) with the total", () =>
      Effect.gen(function*() {
        const late = DateTime.unsafeMake("2099-01-01T00:00:00Z")
        const [a, b, c] = sortedIds(3) as [string, string, string]
        const older = yield* seedApp({ id: PartnerAppId.make(a), created_at: late })
        const tieHigh = yield* seedApp({ id: PartnerAppId.make(c), created_at: DateTime.add(late, { minutes: 1 }) })
        const tieLow = yield* seedApp({ id: PartnerAppId.make(b), created_at: DateTime.add(late, { minutes: 1 }) })
        const { all, total } = yield* everyApp
        expect(total).toBe(all.length)
        const mine = all.filter((app) => [older.id, tieHigh.id, tieLow.id].includes(app.id)).map((app) => app.id)
        expect(mine).toEqual([tieHigh.id, tieLow.id, older.id])
        for (let index = 1; index < all.length; index++) {
          const [before, after] = [all[index - 1]!, all[index]!]
          const order = DateTime.toEpochMillis(before.created_at) - DateTime.toEpochMillis(after.created_at)
          expect(order > 0 || (order === 0 && before.id > after.id)).toBe(true)
        }
        const page = yield* (yield* PartnerStore).list({ limit: 1, offset: total })
        expect(page).toEqual({ items: [], total })
      }))

    it.effect("connect answers the instant it keeps: the first one, however often the pair is connected again", () =>
      Effect.gen(function*() {
        const store = yield* PartnerStore
        const app = yield* seedApp()
        const ws = yield* seedWorkspace({ name: "Connected", plan: "ELITE" })
        const first = yield* store.connect({ appId: app.id, workspaceId: ws.id, at: minutes(1) })
        expect(first).toEqual(minutes(1))
        expect(yield* store.connect({ appId: app.id, workspaceId: ws.id, at: minutes(9) })).toEqual(minutes(1))
        const listed = yield* store.listWorkspaces(app.id, { limit: 20, offset: 0 })
        expect(listed.total).toBe(1)
        expect(listed.items.map((row) => ({ ...row }))).toEqual([{ id: ws.id, name: "Connected", plan: "ELITE", connected_at: minutes(1) }])
      }))

    it.effect("getByClientIdFor answers the app whole and whether the workspace is connected to it; none for an unknown client id", () =>
      Effect.gen(function*() {
        const store = yield* PartnerStore
        const app = yield* seedApp()
        const other = yield* seedApp()
        const ws = yield* seedWorkspace({ name: "Connected", plan: "PRO" })
        const connected = (clientId: string) =>
          Effect.map(store.getByClientIdFor(clientId, ws.id), Option.map((found) => found.connected))
        expect(yield* connected(app.client_id)).toEqual(Option.some(false))
        yield* store.connect({ appId: app.id, workspaceId: ws.id, at: minutes(1) })
        const found = yield* store.getByClientIdFor(app.client_id, ws.id)
        expect(Option.map(found, (value) => ({ ...value.app }))).toEqual(Option.some({ ...(yield* store.get(app.id)).pipe(Option.getOrThrow) }))
        expect(yield* connected(app.client_id)).toEqual(Option.some(true))
        expect(yield* connected(other.client_id)).toEqual(Option.some(false))
        expect(yield* connected("cvp_unknown")).toEqual(Option.none())
        yield* store.deleteByWorkspace(ws.id)
        expect(yield* connected(app.client_id)).toEqual(Option.some(false))
      }))

    it.effect("racing connects of one pair make one connection, and all answer its instant", () =>
      Effect.gen(function*() {
        const store = yield* PartnerStore
        const app = yield* seedApp()
        const ws = yield* seedWorkspace()
        const answers = yield* Effect.all(
          Array.from({ length: 8 }, (_, index) => store.connect({ appId: app.id, workspaceId: ws.id, at: minutes(index) })),
          { concurrency: "unbounded" }
        )
        expect(new Set(answers.map(DateTime.toEpochMillis)).size).toBe(1)
        const listed = yield* store.listWorkspaces(app.id, { limit: 20, offset: 0 })
        expect(listed.total).toBe(1)
        expect(listed.items[0]!.connected_at).toEqual(answers[0])
      }))

    it.effect("listWorkspaces is the app's alone, newest connection first (ties by id desc), a page at a time", () =>
      Effect.gen(function*() {
        const store = yield* PartnerStore
        const app = yield* seedApp()
        const other = yield* seedApp()
        const [low, high] = sortedIds(2) as [string, string]
        const early = yield* seedWorkspace()
        const tieLow = yield* seedWorkspace({ id: WorkspaceId.make(low) })
        const tieHigh = yield* seedWorkspace({ id: WorkspaceId.make(high) })
        yield* store.connect({ appId: app.id, workspaceId: early.id, at: minutes(1) })
        yield* store.connect({ appId: app.id, workspaceId: tieLow.id, at: minutes(2) })
        yield* store.connect({ appId: app.id, workspaceId: tieHigh.id, at: minutes(2) })
        yield* store.connect({ appId: other.id, workspaceId: early.id, at: minutes(3) })
        const all = yield* store.listWorkspaces(app.id, { limit: 20, offset: 0 })
        expect(all.total).toBe(3)
        expect(all.items.map((row) => row.id)).toEqual([tieHigh.id, tieLow.id, early.id])
        const second = yield* store.listWorkspaces(app.id, { limit: 1, offset: 1 })
        expect({ ids: second.items.map((row) => row.id), total: second.total }).toEqual({ ids: [tieLow.id], total: 3 })
        expect(yield* store.listWorkspaces(app.id, { limit: 5, offset: 7 })).toEqual({ items: [], total: 3 })
        expect((yield* store.listWorkspaces(other.id, { limit: 20, offset: 0 })).items.map((row) => row.id)).toEqual([early.id])
        expect(yield* store.listWorkspaces(PartnerAppId.make(uuid()), { limit: 20, offset: 0 })).toEqual({ items: [], total: 0 })
      }))

    it.effect("deleteByWorkspace deletes the workspace's connections to every app and no other; the workspace can then be deleted", () =>
      Effect.gen(function*() {
        const store = yield* PartnerStore
        const workspaces = yield* WorkspaceStore
        const transactor = yield* Transactor
        const a = yield* seedApp()
        const b = yield* seedApp()
        const gone = yield* seedWorkspace()
        const kept = yield* seedWorkspace()
        for (const app of [a, b]) {
          for (const ws of [gone, kept]) yield* store.connect({ appId: app.id, workspaceId: ws.id, at: T0 })
        }
        yield* transactor.withTransaction(Effect.gen(function*() {
          yield* store.deleteByWorkspace(gone.id)
          expect(yield* workspaces.delete(gone.id)).toBe(true)
        }))
        for (const app of [a, b]) {
          expect((yield* store.listWorkspaces(app.id, { limit: 20, offset: 0 })).items.map((row) => row.id)).toEqual([kept.id])
        }
        // Of a workspace without connections: nothing to do.
        yield* store.deleteByWorkspace(WorkspaceId.make(uuid()))
      }))

    it.effect.prop(
      "whatever pairs are connected in whatever order, each app lists each of its workspaces once, with its first instant",
      [fc.array(fc.tuple(fc.nat(2), fc.nat(3), fc.nat(100)), { minLength: 1, maxLength: 15 })],
      ([steps]) =>
        Effect.gen(function*() {
          const store = yield* PartnerStore
          const apps = yield* Effect.all(Array.from({ length: 3 }, () => seedApp()))
          const spaces = yield* Effect.all(Array.from({ length: 4 }, () => seedWorkspace()))
          const model = new Map<string, number>()
          for (const [appIndex, wsIndex, minute] of steps) {
            const app = apps[appIndex]!
            const ws = spaces[wsIndex]!
            const key = `${app.id} ${ws.id}`
            const answered = yield* store.connect({ appId: app.id, workspaceId: ws.id, at: minutes(minute) })
            if (!model.has(key)) model.set(key, minute)
            expect(answered).toEqual(minutes(model.get(key)!))
          }
          for (const app of apps) {
            const listed = yield* store.listWorkspaces(app.id, { limit: 100, offset: 0 })
            const expected = spaces
              .filter((ws) => model.has(`${app.id} ${ws.id}`))
              .map((ws) => ({ id: ws.id, minute: model.get(`${app.id} ${ws.id}`)! }))
              .sort((x, y) => y.minute - x.minute || (x.id < y.id ? 1 : -1))
            expect(listed.total).toBe(expected.length)
            expect(listed.items.map((row) => [row.id, row.connected_at])).toEqual(expected.map((row) => [row.id, minutes(row.minute)]))
          }
        }),
      { fastCheck: { numRuns: 10 } }
    )
  })
}
