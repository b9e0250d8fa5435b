/**
 * The composition root: the HTTP contract served by its handlers over the core services, on a chosen store
 * adapter, on Node's HTTP server.
 */
import { HttpApiBuilder, HttpMiddleware, HttpRouter, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Convene, Crypto, Idempotency, type StorePorts } from "@convene/core"
import { NodeCrypto } from "@convene/node"
import { Context, Duration, Effect, Layer, Option, Schedule } from "effect"
import { createRequire } from "node:module"
import { Api } from "@convene/api/Api"
import type { HostConfig, StoreChoice } from "./Config.js"
import { ActionItemsLive } from "./http/ActionItems.js"
import { AgendaItemsLive } from "./http/AgendaItems.js"
import * as Documents from "./http/Documents.js"
import { HealthLive } from "./http/Health.js"
import { ApiMiddlewareLive, hostMiddleware } from "./http/Host.js"
import { IdentityLive } from "./http/Identity.js"
import { MeetingsLive } from "./http/Meetings.js"
import { OperatorLive } from "./http/Operator.js"
import * as Routes from "./http/Routes.js"
import { AuthenticateLive, OperatorAuthLive } from "./http/Security.js"
import * as Lifecycle from "./Lifecycle.js"
import * as NodeServer from "./NodeServer.js"
import * as Store from "./Store.js"
import * as Telemetry from "./Telemetry.js"

/** Deletes idempotency records past their window every ten minutes. */
const IdempotencySweeper = Layer.scopedDiscard(
  Effect.gen(function*() {
    const idempotency = yield* Idempotency
    yield* idempotency.purgeExpired().pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("idempotency sweep failed", cause)),
      Effect.repeat(Schedule.spaced(Duration.minutes(10))),
      Effect.forkScoped
    )
  })
)


/** The API (contract + handlers + security), needing the core services. */
export const ApiLive = (config: HostConfig) =>
  HttpApiBuilder.api(Api).pipe(
    Layer.provide([MeetingsLive, AgendaItemsLive, ActionItemsLive, IdentityLive, OperatorLive, HealthLive]),
    Layer.provide([AuthenticateLive, OperatorAuthLive(config)])
  )

/**
 * The API served on whatever HttpServer is provided: Node's (HttpLive) or NodeHttpServer.layerTest (for
 * in-process tests with HttpApiClient).
 */
export const ServeLive = (config: HostConfig) => {
  const operator = Option.isSome(config.operatorToken)
  const routes = Routes.make({ operator, documents: Documents.served({ operator }) })
  return HttpApiBuilder.serve(hostMiddleware(routes)).pipe(
    Layer.provide(Documents.layer(config)),
    Layer.provide(ApiMiddlewareLive),
    Layer.provide(ApiLive(config)),
    Layer.provide(IdempotencySweeper),
    // The router matches paths exactly, as the route table does (Routes.routerConfig).
    Layer.provide(HttpRouter.setRouterConfig(Routes.routerConfig))
  )
}

/** The version of this package, for the startup line. */
export const version: string = (createRequire(import.meta.url)("../package.json") as { version: string }).version

/**
 * Node's HTTP server listening on the configured address, with the gate in front (Lifecycle.ts): it answers
 * /healthz and /readyz at once, and the API once the API is served on the stand-in HttpServer it provides.
 */
const ListeningLive = (config: HostConfig, storeName: string) =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const crypto = yield* Crypto
    const { scrape } = yield* Telemetry.MetricsScrape
    const server = NodeServer.make(config.limits, () => Effect.runSync(crypto.randomUUID))
    const metrics = Option.map(config.operatorToken, (token) => ({ token, scrape }))
    return Lifecycle.layer(server, { accessLog: config.accessLog, metrics }).pipe(
      Layer.tap((context) =>
        Effect.logInfo(`Convene ${version} listening`).pipe(Effect.annotateLogs({
          address: addressOf(Context.get(context, HttpServer.HttpServer).address),
          base_url: config.baseUrl,
          store: storeName,
          operator_api: Option.isSome(config.operatorToken) ? "on" : "off"
        }))
      ),
      Layer.provide(NodeHttpServer.layer(() => server, { port: config.port, host: config.host })),
      Layer.merge(NodeHttpServer.layerContext),
      // Built first, so released last: after the drain, the API and the store.
      Layer.merge(Layer.scopedDiscard(Effect.addFinalizer(() => Effect.logInfo("stopped"))))
    )
  }))

const addressOf = (address: HttpServer.Address) =>
  address._tag === "UnixAddress" ? address.path : `http://${address.hostname}:${address.port}`

/**
 * Everything on a given store layer, in the order it starts: the socket (answering /healthz at once), the
 * store and the core, the API; and it stops the other way round, draining the requests in flight first. Its
 * HttpServer service tells the bound address.
 */
export const ConveneWith = <E, R>(config: HostConfig, store: Layer.Layer<StorePorts, E, R>, storeName = "custom") => {
  const telemetry = config.telemetry ?? Telemetry.noTelemetry
  // Spans cost per request even with no exporter (docs/benchmarks.md measures it): off unless asked for,
  // or exported.
  const tracing = config.tracing || telemetry.traces
  const api = ServeLive(config).pipe(
    Layer.tap(() => Effect.logInfo("ready: the store is open and the API is served")),
    Layer.provide(Convene.layer),
    Layer.provide(store)
  )
  return Lifecycle.drainOnClose(Duration.millis(config.limits.shutdownTimeoutMs)).pipe(
    Layer.provideMerge(api),
    Layer.provideMerge(ListeningLive(config, storeName)),
    Layer.provide(NodeCrypto.layer),
    HttpMiddleware.withTracerDisabledWhen(() => !tracing),
    Layer.provide(Layer.setTracerEnabled(tracing)),
    Layer.provide(Telemetry.layer(telemetry, { version, host: config.host }))
  )
}

/** Everything: the server on the store the configuration chooses. */
export const ConveneLive = (config: HostConfig, store: StoreChoice) =>
  ConveneWith(config, Store.layer(store), Store.describe(store))
