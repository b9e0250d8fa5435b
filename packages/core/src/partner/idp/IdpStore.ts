import { Context, type Effect, type Option } from "effect"
import type { PartnerAppId } from "../PartnerApp.js"
import type { IdpConfig } from "./IdpConfig.js"

/**
 * Port: IdP configurations, at most one per partner app (an insert for an app that has one is IdpConfigTaken).
 * Storage only: the rules are core's (IdpConfigs). Writes join the caller's unit of work (Transactor).
 */
export class IdpStore extends Context.Tag("@convene/core/IdpStore")<IdpStore, {
  readonly getByApp: (appId: PartnerAppId) => Effect.Effect<Option.Option<IdpConfig>>
  /** Stores a new configuration; false when the app has one already (nothing stored). */
  readonly insert: (config: IdpConfig) => Effect.Effect<boolean>
  /** Replaces the configuration with the same id (nothing when there is none). */
  readonly update: (config: IdpConfig) => Effect.Effect<void>
  /** Deletes the app's configuration; answers whether there was one. */
  readonly deleteByApp: (appId: PartnerAppId) => Effect.Effect<boolean>
  /** The apps other than `except` whose configuration lists `domain` among its allowed e-mail domains. */
  readonly claimingApps: (domain: string, except: PartnerAppId) => Effect.Effect<ReadonlyArray<PartnerAppId>>
}>() {}
