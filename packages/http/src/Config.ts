/** The host's configuration, read from the environment at the layer edge (decisions.md, "Host and operator interface"). */
import { Config, Option, type Redacted } from "effect"

export interface HostConfig {
  readonly port: number
  readonly host: string
  readonly baseUrl: string
  readonly operatorToken: Option.Option<Redacted.Redacted<string>>
  readonly accessLog: boolean
  /** Record spans (per request and per service call). Off unless asked for: no exporter is wired yet. */
  readonly tracing: boolean
}

export const hostConfig: Config.Config<HostConfig> = Config.all({
  port: Config.port("PORT").pipe(Config.withDefault(8080)),
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1")),
  baseUrl: Config.string("CONVENE_BASE_URL").pipe(Config.option),
  operatorToken: Config.redacted("CONVENE_OPERATOR_TOKEN").pipe(Config.option),
  accessLog: Config.boolean("CONVENE_ACCESS_LOG").pipe(Config.withDefault(true)),
  tracing: Config.boolean("CONVENE_TRACING").pipe(Config.withDefault(false))
}).pipe(
  Config.map(({ baseUrl, ...rest }) => ({
    ...rest,
    baseUrl: Option.getOrElse(baseUrl, () => `http://localhost:${rest.port}`).replace(/\/+$/, "")
  }))
)

/** Which store adapter runs: `memory` (CONVENE_STORE=memory), a PostgreSQL server (DATABASE_URL) or the embedded one. */
export type StoreChoice =
  | { readonly _tag: "memory" }
  | { readonly _tag: "server"; readonly url: Redacted.Redacted<string> }
  | { readonly _tag: "embedded"; readonly dataDir: string }

export const storeChoice: Config.Config<StoreChoice> = Config.all({
  store: Config.literal("memory")("CONVENE_STORE").pipe(Config.option),
  url: Config.redacted("DATABASE_URL").pipe(Config.option),
  dataDir: Config.string("CONVENE_DATA_DIR").pipe(Config.withDefault("./.convene/data"))
}).pipe(
  Config.map(({ dataDir, store, url }): StoreChoice =>
    Option.isSome(store)
      ? { _tag: "memory" }
      : Option.isSome(url)
      ? { _tag: "server", url: url.value }
      : { _tag: "embedded", dataDir }
  )
)
