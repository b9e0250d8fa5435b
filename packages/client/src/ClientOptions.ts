/** What every Convene client takes: where the server answers and the bearer token it sends. */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { Effect, type Redacted } from "effect"

export interface ClientOptions {
  /**
   * The server's base URL, such as `https://convene.example.com` or `http://127.0.0.1:8080` (without `/v1`; a
   * trailing slash is dropped, since the server matches paths exactly).
   */
  readonly baseUrl: string | URL
  /**
   * The bearer token sent with every request: a first-party token (personal access, short-lived or OAuth access
   * token, or a workspace API key) for the public API, the operator token for the operator API. Prefer a
   * `Redacted` value: it stays out of logs and traces.
   */
  readonly token: string | Redacted.Redacted<string>
}

/** `ClientOptions` with a `fetch` of one's own (a browser's, undici's, a test double); the global `fetch` otherwise. */
export interface FetchClientOptions extends ClientOptions {
  readonly fetch?: typeof globalThis.fetch | undefined
}

/** The options HttpApiClient.make takes for these: the base URL, and a bearer token on every request. */
export const httpApiClientOptions = (options: ClientOptions) => ({
  baseUrl: options.baseUrl.toString().replace(/\/+$/, ""),
  transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(options.token))
})

/**
 * Builds a client over `fetch`, outside any Effect program: building one does no I/O, so it is synchronous.
 * The client keeps the `fetch` it was built with.
 */
export const buildOverFetch = <A>(make: Effect.Effect<A, never, HttpClient.HttpClient>, options: FetchClientOptions): A =>
  make.pipe(
    Effect.provide(FetchHttpClient.layer),
    options.fetch === undefined ? (self) => self : Effect.provideService(FetchHttpClient.Fetch, options.fetch),
    Effect.runSync
  )
