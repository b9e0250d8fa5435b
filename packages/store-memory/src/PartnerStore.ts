/** PartnerStore in memory: partner apps, and the workspaces connected to them, in the one state value. */
import { ConnectedWorkspace, DuplicateKey, Pagination, PartnerApp, PartnerStore, trusted } from "@convene/core"
import { Effect, HashMap, Layer, Option } from "effect"
import { type Compare, Memory, newestFirst, type PartnerConnection } from "./Memory.js"

const connectionKey = (appId: string, workspaceId: string) => JSON.stringify([appId, workspaceId])

/** connected_at desc, then workspace id desc. */
const newestConnectionFirst: Compare<PartnerConnection> = (a, b) =>
  b.connected_at.epochMillis - a.connected_at.epochMillis ||
  (a.workspace_id < b.workspace_id ? 1 : a.workspace_id > b.workspace_id ? -1 : 0)

/** connected_at asc, then app id asc. */
const oldestConnectionFirst: Compare<PartnerConnection> = (a, b) =>
  a.connected_at.epochMillis - b.connected_at.epochMillis ||
  (a.partner_app_id < b.partner_app_id ? -1 : a.partner_app_id > b.partner_app_id ? 1 : 0)

export const layer: Layer.Layer<PartnerStore, never, Memory> = Layer.effect(
  PartnerStore,
  Effect.gen(function*() {
    const memory = yield* Memory

    return PartnerStore.of({
      insert: (app) =>
        Effect.flatMap(
          memory.modify((state) => {
            const apps = HashMap.toValues(state.partnerApps)
            const clash = HashMap.has(state.partnerApps, app.id)
              ? "partner_apps_pkey"
              : apps.some((other) => other.slug === app.slug)
              ? "partner_apps_slug_key"
              : apps.some((other) => other.client_id === app.client_id)
              ? "partner_apps_client_id_key"
              : undefined
            return clash === undefined
              ? [undefined, { ...state, partnerApps: HashMap.set(state.partnerApps, app.id, app) }]
              : [clash, state]
          }),
          (constraint) => constraint === undefined ? Effect.void : Effect.fail(new DuplicateKey({ constraint }))
        ),

      // The stored webhook secret stays: only setWebhookSecret writes it.
      update: Effect.fnUntraced(function*(app) {
        yield* memory.modify((state) => [
          undefined,
          Option.match(HashMap.get(state.partnerApps, app.id), {
            onNone: () => state,
            onSome: (stored) => ({
              ...state,
              partnerApps: HashMap.set(
                state.partnerApps,
                app.id,
                new PartnerApp({ ...app, sealed_webhook_secret: stored.sealed_webhook_secret }, trusted)
              )
            })
          })
        ])
      }),

      setWebhookSecret: (id, sealed, at) =>
        memory.modify((state) =>
          Option.match(HashMap.get(state.partnerApps, id), {
            onNone: () => [false, state],
            onSome: (stored) => [true, {
              ...state,
              partnerApps: HashMap.set(
                state.partnerApps,
                id,
                new PartnerApp({ ...stored, sealed_webhook_secret: sealed, updated_at: at }, trusted)
              )
            }]
          })
        ),

      get: Effect.fnUntraced(function*(id) {
        return HashMap.get((yield* memory.read).partnerApps, id)
      }),

      getByClientId: Effect.fnUntraced(function*(clientId) {
        return HashMap.findFirst((yield* memory.read).partnerApps, (app) => app.client_id === clientId).pipe(
          Option.map(([, app]) => app)
        )
      }),

      getBySlug: Effect.fnUntraced(function*(slug) {
        return HashMap.findFirst((yield* memory.read).partnerApps, (app) => app.slug === slug).pipe(
          Option.map(([, app]) => app)
        )
      }),

      list: Effect.fnUntraced(function*(page) {
        return Pagination.sliceOf(HashMap.toValues((yield* memory.read).partnerApps).sort(newestFirst), page)
      }),

      connect: ({ appId, at, workspaceId }) =>
        memory.modify((state) => {
          const key = connectionKey(appId, workspaceId)
          const existing = HashMap.get(state.partnerConnections, key)
          if (Option.isSome(existing)) return [existing.value.connected_at, state]
          const connection: PartnerConnection = { partner_app_id: appId, workspace_id: workspaceId, connected_at: at }
          return [at, { ...state, partnerConnections: HashMap.set(state.partnerConnections, key, connection) }]
        }),

      listWorkspaces: Effect.fnUntraced(function*(appId, page) {
        const state = yield* memory.read
        const connections = HashMap.toValues(state.partnerConnections)
          .filter((connection) => connection.partner_app_id === appId)
          .sort(newestConnectionFirst)
        const rows = connections.flatMap((connection) =>
          Option.match(HashMap.get(state.workspaces, connection.workspace_id), {
            onNone: () => [],
            onSome: (workspace) => [
              new ConnectedWorkspace({
                id: workspace.id,
                name: workspace.name,
                plan: workspace.plan,
                connected_at: connection.connected_at
              }, trusted)
            ]
          })
        )
        return Pagination.sliceOf(rows, page)
      }),

      getByClientIdFor: Effect.fnUntraced(function*(clientId, workspaceId) {
        const state = yield* memory.read
        const app = HashMap.toValues(state.partnerApps).find((candidate) => candidate.client_id === clientId)
        if (app === undefined) return Option.none()
        return Option.some({ app, connected: HashMap.has(state.partnerConnections, connectionKey(app.id, workspaceId)) })
      }),


      connectedApps: Effect.fnUntraced(function*(workspaceId) {
        const state = yield* memory.read
        return HashMap.toValues(state.partnerConnections)
          .filter((connection) => connection.workspace_id === workspaceId)
          .sort(oldestConnectionFirst)
          .flatMap((connection) => Option.toArray(HashMap.get(state.partnerApps, connection.partner_app_id)))
      }),

      deleteByWorkspace: Effect.fnUntraced(function*(workspaceId) {
        yield* memory.modify((state) => [undefined, {
          ...state,
          partnerConnections: HashMap.filter(state.partnerConnections, (connection) => connection.workspace_id !== workspaceId)
        }])
      })
    })
  })
)
