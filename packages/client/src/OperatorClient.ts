/**
 * The operator API (`/operator/v1`: provisioning workspaces, users, tokens and API keys) as a typed client, for
 * the operator token (`CONVENE_OPERATOR_TOKEN` on the server): a property `operator` with a method per operation.
 */
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import type * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpClient from "@effect/platform/HttpClient"
import { OperatorDocumentApi } from "@convene/api/Api"
import { Config, type ConfigError, Context, Effect, Layer } from "effect"
import { buildOverFetch, type ClientOptions, type FetchClientOptions, httpApiClientOptions } from "./ClientOptions.js"

// A named interface (not an alias), so that declarations and editors refer to it by name instead of expanding it.
/** The typed client of the operator API. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface Client extends HttpApiClient.Client<Groups, ApiError, never> {}

type Groups = typeof OperatorDocumentApi extends HttpApi.HttpApi<infer _Id, infer Groups, infer _E, infer _R> ? Groups : never
type ApiError = typeof OperatorDocumentApi extends HttpApi.HttpApi<infer _Id, infer _Groups, infer E, infer _R> ? E : never

/** The operator client over the `HttpClient` in context. */
export const make = (options: ClientOptions): Effect.Effect<Client, never, HttpClient.HttpClient> =>
  HttpApiClient.make(OperatorDocumentApi, httpApiClientOptions(options))

/** The operator client as a service, for Effect programs. */
export class OperatorClient extends Context.Tag("@convene/client/OperatorClient")<OperatorClient, Client>() {
  /** The client over the `HttpClient` in context. */
  static readonly layer = (options: ClientOptions): Layer.Layer<OperatorClient, never, HttpClient.HttpClient> =>
    Layer.effect(OperatorClient, make(options))

  /** `layer` with its options read from `Config`. */
  static readonly layerConfig = (
    options: Config.Config.Wrap<ClientOptions>
  ): Layer.Layer<OperatorClient, ConfigError.ConfigError, HttpClient.HttpClient> =>
    Layer.effect(OperatorClient, Effect.flatMap(Config.unwrap(options), make))
}

/** The operator client over `fetch`, ready to use from any program: run its methods with `Effect.runPromise`. */
export const makeOperatorClient = (options: FetchClientOptions): Client => buildOverFetch(make(options), options)
