/**
 * The first-party API (`/v1`, and the health checks) as a typed client: a property per group of the contract
 * (`meetings`, `agendaItems`, `actionItems`, `calendar`, `identity`, `workspace`, `webhooks`, `health`), a method per operation, each answering an
 * Effect that succeeds with the decoded body and fails with the domain error of the status (`NotFound`,
 * `Conflict`, `InsufficientScope`, ... from @convene/core), an `HttpClientError` or a `ParseError`.
 */
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import type * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpClient from "@effect/platform/HttpClient"
import { PublicApi } from "@convene/api/Api"
import { Config, type ConfigError, Context, Effect, Layer } from "effect"
import { buildOverFetch, type ClientOptions, type FetchClientOptions, httpApiClientOptions } from "./ClientOptions.js"

// A named interface (not an alias), so that declarations and editors refer to it by name instead of expanding it.
/** The typed client of the first-party API. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface Client extends HttpApiClient.Client<Groups, ApiError, never> {}

type Groups = typeof PublicApi extends HttpApi.HttpApi<infer _Id, infer Groups, infer _E, infer _R> ? Groups : never
type ApiError = typeof PublicApi extends HttpApi.HttpApi<infer _Id, infer _Groups, infer E, infer _R> ? E : never

/** The client over the `HttpClient` in context (FetchHttpClient, NodeHttpClient, a test client). */
export const make = (options: ClientOptions): Effect.Effect<Client, never, HttpClient.HttpClient> =>
  HttpApiClient.make(PublicApi, httpApiClientOptions(options))

/** The client as a service, for Effect programs. */
export class ConveneClient extends Context.Tag("@convene/client/ConveneClient")<ConveneClient, Client>() {
  /** The client over the `HttpClient` in context. */
  static readonly layer = (options: ClientOptions): Layer.Layer<ConveneClient, never, HttpClient.HttpClient> =>
    Layer.effect(ConveneClient, make(options))

  /** `layer` with its options read from `Config` (say `{ baseUrl: Config.string("CONVENE_URL"), token: Config.redacted("CONVENE_TOKEN") }`). */
  static readonly layerConfig = (
    options: Config.Config.Wrap<ClientOptions>
  ): Layer.Layer<ConveneClient, ConfigError.ConfigError, HttpClient.HttpClient> =>
    Layer.effect(ConveneClient, Effect.flatMap(Config.unwrap(options), make))
}

/**
 * The client over `fetch` (the global one unless `options.fetch` says otherwise), ready to use from any program:
 * run its methods with `Effect.runPromise`.
 */
export const makeClient = (options: FetchClientOptions): Client => buildOverFetch(make(options), options)
