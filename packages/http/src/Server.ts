/**
 * The composition root: the HTTP contract served by its handlers over the core services, on a chosen store
 * adapter, on Node's HTTP server.
 */
import { HttpApiBuilder, HttpApiScalar, HttpMiddleware, HttpRouter, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Convene, Crypto, Idempotency, type StorePorts } from "@convene/core"
import { NodeCrypto } from "@convene/node"
import * as StoreMemory from "@convene/store-memory"
import * as StorePg from "@convene/store-pg"
import { Duration, Effect, Layer, Option, Schedule } from "effect"
import { Api } from "./api/Api.js"
import type { HostConfig, StoreChoice } from "./Config.js"
import { ActionItemsLive } from "./http/ActionItems.js"
import { AgendaItemsLive } from "./http/AgendaItems.js"
import { HealthLive } from "./http/Health.js"
import { ApiMiddlewareLive, hostMiddleware } from "./http/Host.js"
import { IdentityLive } from "./http/Identity.js"
import { MeetingsLive } from "./http/Meetings.js"
import { OperatorLive } from "./http/Operator.js"
import * as Routes from "./http/Routes.js"
import { AuthenticateLive, OperatorAuthLive } from "./http/Security.js"
import * as NodeServer from "./NodeServer.js"

/** The store adapter for a choice. A store that cannot start (unreachable server, locked data directory) fails the layer. */
export const storeLayer = (choice: StoreChoice): Layer.Layer<StorePorts, unknown> => {
  switch (choice._tag) {
    case "memory":
      return StoreMemory.layer
    case "server":
      return StorePg.layerPg({ url: choice.url })
    case "embedded":
      return StorePg.layerPglite({ dataDir: choice.dataDir })
  }
}

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

/** The documents served beside the API. */
const documents = { openApi: "/v1/openapi.json", docs: "/docs" } as const

/** The API (contract + handlers + security), needing the core services. */
export const ApiLive = (config: HostConfig) =>
  HttpApiBuilder.api(Api).pipe(
    Layer.provide([MeetingsLive, AgendaItemsLive, ActionItemsLive, IdentityLive, OperatorLive, HealthLive]),
    Layer.provide([AuthenticateLive, OperatorAuthLive(config)])
  )

/** The HTTP server serving the API, its OpenAPI document and docs; needs the core services and the Crypto port. */
export const HttpLive = (config: HostConfig) =>
  ServeLive(config).pipe(
    HttpServer.withLogAddress,
    Layer.provideMerge(Layer.unwrapEffect(Effect.map(Crypto, (crypto) =>
      NodeHttpServer.layer(
        () => NodeServer.make(config.limits, () => Effect.runSync(crypto.randomUUID)),
        { port: config.port, host: config.host }
      ))))
  )

/**
 * The API served on whatever HttpServer is provided: Node's (HttpLive) or NodeHttpServer.layerTest (for
 * in-process tests with HttpApiClient).
 */
export const ServeLive = (config: HostConfig) => {
  const routes = Routes.make({ operator: Option.isSome(config.operatorToken), documents: Object.values(documents) })
  return HttpApiBuilder.serve((app) => {
    const served = hostMiddleware(routes)(app)
    return config.accessLog ? HttpMiddleware.logger(served) : served
  }).pipe(
    Layer.provide(HttpApiScalar.layer({ path: documents.docs })),
    Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: documents.openApi })),
    Layer.provide(ApiMiddlewareLive),
    Layer.provide(ApiLive(config)),
    Layer.provide(IdempotencySweeper),
    // The router matches paths exactly, as the route table does (Routes.routerConfig).
    Layer.provide(HttpRouter.setRouterConfig(Routes.routerConfig)),
    // Spans cost per request even with no exporter (docs/benchmarks.md measures it): off unless asked for.
    HttpMiddleware.withTracerDisabledWhen(() => !config.tracing),
    Layer.provide(Layer.setTracerEnabled(config.tracing))
  )
}

/** Everything on a given store layer: the server (its HttpServer service tells the bound address). */
export const ConveneWith = <E, R>(config: HostConfig, store: Layer.Layer<StorePorts, E, R>) =>
  HttpLive(config).pipe(
    Layer.provide(Convene.layer),
    Layer.provide(Layer.merge(store, NodeCrypto.layer))
  )

/** Everything: the server on the store the configuration chooses. */
export const ConveneLive = (config: HostConfig, store: StoreChoice) => ConveneWith(config, storeLayer(store))
