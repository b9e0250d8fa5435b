/** IdpStore in memory: partner apps' IdP configurations, at most one per app, in the one state value. */
import { IdpConfig, IdpStore, trusted } from "@convene/core"
import { DateTime, Effect, HashMap, Layer, Option } from "effect"
import { Memory } from "./Memory.js"

export const layer: Layer.Layer<IdpStore, never, Memory> = Layer.effect(
  IdpStore,
  Effect.gen(function*() {
    const memory = yield* Memory

    return IdpStore.of({
      getByApp: Effect.fnUntraced(function*(appId) {
        return HashMap.get((yield* memory.read).idpConfigs, appId)
      }),

      // Units of work run one at a time on the store's one permit: holding is reading.
      getByAppForUpdate: Effect.fnUntraced(function*(appId) {
        return HashMap.get((yield* memory.read).idpConfigs, appId)
      }),

      insert: (config) =>
        memory.modify((state) =>
          HashMap.has(state.idpConfigs, config.partner_app_id)
            ? [false, state]
            : [true, { ...state, idpConfigs: HashMap.set(state.idpConfigs, config.partner_app_id, config) }]
        ),

      update: (config) =>
        memory.modify((state) => {
          const current = HashMap.get(state.idpConfigs, config.partner_app_id)
          return Option.isSome(current) && current.value.id === config.id
            ? [undefined, { ...state, idpConfigs: HashMap.set(state.idpConfigs, config.partner_app_id, config) }]
            : [undefined, state]
        }),

      deleteByApp: (appId) =>
        memory.modify((state) =>
          HashMap.has(state.idpConfigs, appId)
            ? [true, { ...state, idpConfigs: HashMap.remove(state.idpConfigs, appId) }]
            : [false, state]
        ),

      claimingApps: Effect.fnUntraced(function*(domain, except) {
        return HashMap.toValues((yield* memory.read).idpConfigs)
          .filter((config) => config.partner_app_id !== except && config.allowed_email_domains.some((listed) => listed === domain))
          .map((config) => config.partner_app_id)
          .sort()
      }),

      staleDiscovery: Effect.fnUntraced(function*(before, limit) {
        return HashMap.toValues((yield* memory.read).idpConfigs)
          .filter((config) => config.is_active && DateTime.lessThan(config.discovery_last_fetched_at, before))
          .sort((a, b) =>
            DateTime.Order(a.discovery_last_fetched_at, b.discovery_last_fetched_at) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
          )
          .slice(0, limit)
      }),

      storeDiscovery: (id, discoveryUrl, endpoints, fetchedAt) =>
        memory.modify((state) => {
          const current = HashMap.findFirst(state.idpConfigs, (config) => config.id === id)
          if (Option.isNone(current) || current.value[1].discovery_url !== discoveryUrl) return [false, state]
          const [appId, config] = current.value
          const refreshed = new IdpConfig({ ...config, ...endpoints, discovery_last_fetched_at: fetchedAt }, trusted)
          return [true, { ...state, idpConfigs: HashMap.set(state.idpConfigs, appId, refreshed) }]
        }),

      page: Effect.fnUntraced(function*(after, limit) {
        return HashMap.toValues((yield* memory.read).idpConfigs)
          .filter((config) => after === undefined || config.id > after)
          .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
          .slice(0, limit)
      }),

      replaceSealedSecret: (id, expected, sealed) =>
        memory.modify((state) => {
          const current = HashMap.findFirst(state.idpConfigs, (config) => config.id === id)
          if (Option.isNone(current) || current.value[1].sealed_client_secret !== expected) return [false, state]
          const [appId, config] = current.value
          const resealed = new IdpConfig({ ...config, sealed_client_secret: sealed }, trusted)
          return [true, { ...state, idpConfigs: HashMap.set(state.idpConfigs, appId, resealed) }]
        })
    })
  })
)
