import { Context, type DateTime, type Effect, type Option } from "effect"
import type { PartnerAppId } from "../PartnerApp.js"
import type { IdpConfig, IdpConfigId } from "./IdpConfig.js"

/** The endpoints a discovery document gave, as an IdP configuration caches them. */
export interface DiscoveredEndpoints {
  readonly issuer: string
  readonly authorization_endpoint: string
  readonly token_endpoint: string
  readonly userinfo_endpoint: string | null
  readonly jwks_uri: string
}

/**
 * Port: IdP configurations, at most one per partner app (an insert for an app that has one is refused: false).
 * Storage only: the rules are core's (IdpConfigs). Writes join the caller's unit of work (Transactor).
 */
export class IdpStore extends Context.Tag("@convene/core/IdpStore")<IdpStore, {
  readonly getByApp: (appId: PartnerAppId) => Effect.Effect<Option.Option<IdpConfig>>
  /**
   * The app's configuration, held for the caller's unit of work (PostgreSQL: its row locked FOR UPDATE), so that two
   * changes of one configuration apply one after the other, the second to what the first committed.
   */
  readonly getByAppForUpdate: (appId: PartnerAppId) => Effect.Effect<Option.Option<IdpConfig>>
  /** Stores a new configuration; false when the app has one already (nothing stored). */
  readonly insert: (config: IdpConfig) => Effect.Effect<boolean>
  /** Replaces the configuration with the same id (nothing when there is none). */
  readonly update: (config: IdpConfig) => Effect.Effect<void>
  /** Deletes the app's configuration; answers whether there was one. */
  readonly deleteByApp: (appId: PartnerAppId) => Effect.Effect<boolean>
  /** The apps other than `except` whose configuration lists `domain` among its allowed e-mail domains. */
  readonly claimingApps: (domain: string, except: PartnerAppId) => Effect.Effect<ReadonlyArray<PartnerAppId>>
  /**
   * Up to `limit` active configurations whose discovery document was last fetched before `before`, the longest
   * unfetched first (discovery_last_fetched_at, id).
   */
  readonly staleDiscovery: (before: DateTime.Utc, limit: number) => Effect.Effect<ReadonlyArray<IdpConfig>>
  /**
   * Atomically stores freshly fetched endpoints and `fetchedAt` on the configuration `id`, only while its discovery
   * URL is still `discoveryUrl` (a change made meanwhile wins); nothing else changes. Answers whether it stored them.
   */
  readonly storeDiscovery: (
    id: IdpConfigId,
    discoveryUrl: string,
    endpoints: DiscoveredEndpoints,
    fetchedAt: DateTime.Utc
  ) => Effect.Effect<boolean>
  /** Up to `limit` configurations whose id sorts after `after` (from the first when undefined), by id. */
  readonly page: (after: IdpConfigId | undefined, limit: number) => Effect.Effect<ReadonlyArray<IdpConfig>>
  /**
   * Atomically replaces the sealed client secret of the configuration `id` with `sealed`, only while it is still
   * `expected` (a new secret given meanwhile wins); nothing else changes. Answers whether it replaced it.
   */
  readonly replaceSealedSecret: (id: IdpConfigId, expected: string, sealed: string) => Effect.Effect<boolean>
}>() {}
