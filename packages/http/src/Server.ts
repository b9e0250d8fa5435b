/**
 * The composition root: the HTTP contract served by its handlers over the core services, on a chosen store
 * adapter, on Node's HTTP server.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import {
  Attachments,
  ContextPreparation,
  Convene,
  Crypto,
  defaultPolicy,
  DeliveryWorker,
  DomainVerifications,
  EventFeed,
  Events,
  Idempotency,
  PartnerSso,
  IdpConfigs,
  RateLimits,
  Sessions,
  SigningKeys,
  type StorePorts,
  Toolkits
} from "@convene/core"
import {
  JoseJwtSigner,
  LogMailer,
  NodeCrypto,
  NodeDigests,
  NodeDnsResolver,
  NodeOidcClient,
  NodeOutbound,
  NodeSecretBox,
  NodeSecretVault,
  NodeTextExtractor,
  SmtpMailer
} from "@convene/node"
import { ConfigError, Context, Duration, Effect, Either, Layer, Option, Redacted, Schedule } from "effect"
import { createRequire } from "node:module"
import { Api } from "@convene/api/Api"
import * as ContextWorkers from "./context/ContextWorkers.js"
import { defaultDomainSweepIntervalMs, type HostConfig, identityOf, outboundOf, type StoreChoice } from "./Config.js"
import { ActionItemsLive } from "./http/ActionItems.js"
import { AgendaItemsLive } from "./http/AgendaItems.js"
import { AttachmentsLive } from "./http/Attachments.js"
import { BacklogLive } from "./http/Backlog.js"
import * as BrowserRoutes from "./http/BrowserRoutes.js"
import { CalendarLive } from "./http/Calendar.js"
import { ContextLive } from "./http/Context.js"
import * as Documents from "./http/Documents.js"
import * as EventStreams from "./http/EventStreams.js"
import { HealthLive } from "./http/Health.js"
import { ApiMiddlewareLive, hostMiddleware } from "./http/Host.js"
import { IdentityLive } from "./http/Identity.js"
import { MeetingsLive } from "./http/Meetings.js"
import * as OAuthRoutes from "./http/OAuthRoutes.js"
import { OperatorLive } from "./http/Operator.js"
import * as PartnerLimits from "./http/PartnerLimits.js"
import { PartnerAdminAuthLive, PartnerAdminLive } from "./http/Partner.js"
import { PartnerFilesLive, PartnerUserAuthLive, PartnerUserLive } from "./http/PartnerUser.js"
import { PartnerAutomationsLive } from "./http/PartnerAutomations.js"
import { PartnerIdpLive } from "./http/PartnerIdp.js"
import { PartnerToolkitsLive } from "./http/PartnerToolkits.js"
import { PartnerWorkflowRunsLive, PartnerWorkflowTemplatesLive } from "./http/PartnerWorkflows.js"
import { PartnerSsoLive } from "./http/PartnerSso.js"
import { PartnerDomainsLive } from "./http/PartnerDomains.js"
import * as Webhooks from "./http/Webhooks.js"
import { WorkspaceLive } from "./http/Workspace.js"
import { WebhooksLive } from "./http/Webhooks.js"
import * as Routes from "./http/Routes.js"
import { AuthenticateLive, OperatorAuthLive } from "./http/Security.js"
import { MaxUploadBytes } from "./http/Uploads.js"
import * as Lifecycle from "./Lifecycle.js"
import * as McpRoutes from "./mcp/McpRoutes.js"
import * as NodeServer from "./NodeServer.js"
import * as Store from "./Store.js"
import { StoreUnavailable } from "./Store.js"
import * as Telemetry from "./Telemetry.js"

/**
 * Every ten minutes: deletes idempotency records past their window, ended sessions and old sign-in failures,
 * events and finished webhook deliveries older than their retention (7 days), the stored bytes of attachments
 * no record points at any more (those of deleted meetings and workspaces), and partner SSO sessions a day after
 * they expired.
 */
const Sweeper = Layer.scopedDiscard(
  Effect.gen(function*() {
    const idempotency = yield* Idempotency
    const sessions = yield* Sessions
    const events = yield* Events
    const deliveries = yield* DeliveryWorker
    const attachments = yield* Attachments
    const sso = yield* PartnerSso
    yield* Effect.all([
      idempotency.purgeExpired(),
      sessions.purge(),
      events.purge(),
      deliveries.purge(),
      attachments.sweep(),
      sso.purge()
    ], { discard: true }).pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("sweep of expired records failed", cause)),
      Effect.repeat(Schedule.spaced(Duration.minutes(10))),
      Effect.forkScoped
    )
  })
)

/**
 * Domain verification's sweep (DomainVerifications.runSweeps), every minute unless the configuration says otherwise:
 * expires the pending challenges whose 7 days are over and re-validates the verified domains a day after their last
 * check. Every server process sharing a store runs it; each transition happens once all the same (core locks).
 */
const DomainSweep = (config: HostConfig) =>
  Layer.scopedDiscard(
    Effect.flatMap(DomainVerifications, (verifications) =>
      Effect.forkScoped(verifications.runSweeps(Duration.millis(config.dns?.sweepIntervalMs ?? defaultDomainSweepIntervalMs))))
  )

/**
 * The IdP configurations' background work, every hour: the discovery documents of the active configurations fetched
 * more than 24 hours ago, 100 at a time (IdpConfigs.refreshStale), and the client secrets sealed under an older key of
 * CONVENE_SECRETS_KEY sealed again under the first (resealStale). Every server process sharing a store runs it; two
 * doing one configuration at once both store the same, and a PUT made meanwhile wins.
 */
const IdpRefresh = Layer.scopedDiscard(
  Effect.flatMap(IdpConfigs, (configs) =>
    Effect.zipRight(configs.refreshStale(100), configs.resealStale(100)).pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("refresh of IdP discovery documents failed", cause)),
      Effect.repeat(Schedule.spaced(Duration.hours(1))),
      Effect.forkScoped
    ))
)

/**
 * The toolkits' distribution (Toolkits.installPending): every second, the pending installations a publish queued,
 * 50 at a time and again at once until none is left. The queue is the store's, so a publish to many workspaces
 * resumes after a restart; every server process sharing a store runs it, and each installation is taken by one
 * (SKIP LOCKED on PostgreSQL).
 */
const ToolkitDistribution = Layer.scopedDiscard(
  Effect.flatMap(Toolkits, (toolkits) =>
    toolkits.installPending().pipe(
      Effect.repeat({ while: (taken) => taken > 0 }),
      Effect.catchAllCause((cause) => Effect.logWarning("distribution of toolkit installations failed", cause)),
      Effect.repeat(Schedule.spaced(Duration.seconds(1))),
      Effect.forkScoped
    ))
)

/**
 * CONVENE_SECRETS_KEY as the SecretVault, which encrypts identity providers' client secrets; unset, the vault is
 * unavailable and creating an IdP configuration is refused (503 secrets_key_not_configured).
 */
const SecretVaultLive = (config: HostConfig) =>
  Option.match(config.secretsKey ?? Option.none(), {
    onNone: () => NodeSecretVault.unavailableLayer,
    onSome: (text) =>
      Either.match(NodeSecretVault.parseKeys(Redacted.value(text)), {
        onLeft: (problem) => Layer.die(new Error(problem)),
        onRight: (keys) => NodeSecretVault.layer(keys)
      })
  })

/**
 * The installation's secret key as the SecretBox: it seals the private signing keys and the webhook secrets in the
 * store. None configured: a random one for the process (what is sealed with it cannot be opened after a restart,
 * which only a server built in code without a key does; the server command always has one).
 */
const SecretBoxLive = (config: HostConfig) =>
  Option.match(identityOf(config).secretKey, {
    onSome: (text) =>
      Either.match(NodeSecretBox.parseKey(Redacted.value(text)), {
        onLeft: (problem) => Layer.die(new Error(`CONVENE_SECRET_KEY: ${problem}`)),
        onRight: (key) => NodeSecretBox.layer(Redacted.make(key))
      }),
    onNone: () =>
      Layer.unwrapEffect(Effect.map(Crypto, (crypto) =>
        Layer.unwrapEffect(Effect.map(crypto.randomBytes(32), (key) => NodeSecretBox.layer(Redacted.make(key))))))
  })

/**
 * The OAuth room: the core's authorization server with its issuer, RSA keys and JWTs by jose. At start the
 * signing key is made or opened, so a wrong secret key stops the server at once.
 */
const OAuthLive = (config: HostConfig) => {
  const opened = Layer.effectDiscard(
    Effect.flatMap(SigningKeys, (keys) => keys.ensure()).pipe(
      Effect.mapError(() =>
        new StoreUnavailable({
          message: "the store's signing key cannot be opened with this secret key: CONVENE_SECRET_KEY (or the key file) is not " +
            "the one the store was set up with"
        })
      )
    )
  )
  return Layer.provideMerge(opened, Convene.oauthLayer(`${config.baseUrl}/v1/oauth`)).pipe(Layer.provide(JoseJwtSigner.layer))
}

/**
 * The webhooks room: the endpoint rules and the outbox's worker, calling out through NodeOutbound (private
 * addresses refused unless allowed, no redirects, 10 s per call, 64 KiB answers) and mailing through SMTP when
 * CONVENE_SMTP_URL is set (else the mails are only logged).
 */
const WebhooksRoomLive = (config: HostConfig) => {
  const outbound = outboundOf(config)
  const mailer = Option.match(outbound.smtpUrl, {
    onNone: () => LogMailer.layer,
    onSome: (url) => SmtpMailer.layer(url, Option.match(outbound.mailFrom, { onNone: () => ({}), onSome: (from) => ({ from }) }))
  })
  return Convene.webhooksLayer.pipe(Layer.provide([OutboundLive(config), mailer]))
}

/** Calls out (webhooks, automations) under the outbound rules, trusting the configured extra authorities. */
const OutboundLive = (config: HostConfig) => {
  const outbound = outboundOf(config)
  return NodeOutbound.layer({ allowHosts: outbound.allowHosts, ...(outbound.ca === undefined ? {} : { ca: outbound.ca }) })
}

/**
 * Partner apps and their automations, whose webhook and action URLs pass the same outbound rules as workspace
 * endpoints'.
 */
const PartnerRoomLive = (config: HostConfig) =>
  Layer.merge(
    Convene.partnerLayer.pipe(Layer.provide(OutboundLive(config))),
    Convene.domainVerificationsLayer.pipe(Layer.provide(DnsResolverLive(config)))
  )

/** The TXT lookups of domain verification: through CONVENE_DNS_SERVERS, or the system's resolver. */
const DnsResolverLive = (config: HostConfig) =>
  NodeDnsResolver.layer({
    servers: config.dns?.servers ?? [],
    timeoutMs: config.dns?.timeoutMs,
    tries: config.dns?.tries
  })

/**
 * Partner single sign-on, its callback at {base_url}/v1/partner/sso/callback: the OIDC client calls the identity
 * providers (token endpoint, keys) under the same outbound rules as webhooks.
 */
const PartnerSsoRoomLive = (config: HostConfig) =>
  Convene.partnerSsoLayer(`${config.baseUrl}/v1/partner/sso/callback`).pipe(
    Layer.provide(NodeOidcClient.layer.pipe(Layer.provide(OutboundLive(config))))
  )

/** The API (contract + handlers + security), needing the core services. */
export const ApiLive = (config: HostConfig) =>
  HttpApiBuilder.api(Api).pipe(
    Layer.provide([
      MeetingsLive,
      AgendaItemsLive,
      ContextLive,
      AttachmentsLive,
      ActionItemsLive,
      BacklogLive,
      CalendarLive,
      WorkspaceLive,
      IdentityLive,
      WebhooksLive,
      OperatorLive,
      PartnerAdminLive,
      PartnerAutomationsLive,
      PartnerIdpLive,
      PartnerToolkitsLive,
      PartnerWorkflowTemplatesLive,
      PartnerWorkflowRunsLive,
      PartnerSsoLive,
      PartnerDomainsLive,
      PartnerUserLive(config),
      PartnerFilesLive,
      HealthLive
    ]),
    Layer.provide([AuthenticateLive, OperatorAuthLive(config), PartnerAdminAuthLive, PartnerUserAuthLive]),
    Layer.provide(EventStreams.layer({ keepAlive: Duration.millis(config.limits.streamKeepAliveMs) })),
    // Every upload reader (Uploads.ts) holds files to this cap.
    Layer.provide(Layer.succeed(MaxUploadBytes, config.limits.maxUploadBytes))
  )

/**
 * Where meeting context uploads are prepared: in CONVENE_CONTEXT_WORKERS worker processes (context/ContextWorkers.ts),
 * or on the main thread when it says 0.
 */
const ContextPreparationLive = (config: HostConfig) =>
  config.limits.contextWorkers === 0
    ? ContextPreparation.inProcess.pipe(Layer.provide(NodeTextExtractor.layer))
    : ContextWorkers.layer({ size: config.limits.contextWorkers })

/** The request budgets the configuration asks for (none when it says "off"). */
const RateLimitsLive = (config: HostConfig) =>
  config.rateLimits === "off" ? Layer.empty : RateLimits.layerWith(config.rateLimits ?? defaultPolicy)

/**
 * Every core service the API uses, the OAuth room included, on the store ports and the Crypto and PasswordHasher
 * ports (NodeCrypto): what `ServeLive` needs below it.
 */
export const CoreLive = (config: HostConfig) =>
  Layer.mergeAll(
    // The partner OAuth server shares the first-party server's signing keys, and finds its clients among the partner apps.
    Convene.partnerOAuthLayer(`${config.baseUrl}/oauth2`).pipe(
      Layer.provideMerge(Layer.mergeAll(OAuthLive(config), PartnerRoomLive(config)))
    ),
    WebhooksRoomLive(config),
    Convene.idpLayer.pipe(Layer.provide(OutboundLive(config))),
    PartnerSsoRoomLive(config),
    Convene.contextLayer.pipe(Layer.provide(ContextPreparationLive(config))),
    Convene.attachmentsLayer.pipe(Layer.provide(NodeDigests.layer))
  ).pipe(
    Layer.provide(SecretBoxLive(config)),
    Layer.provide(SecretVaultLive(config)),
    Layer.provideMerge(Convene.layer),
    Layer.merge(RateLimitsLive(config)),
    Layer.merge(EventFeed.layer({
      pollInterval: Duration.millis(config.limits.eventPollMs),
      streamsPerCredential: config.limits.streamsPerCredential
    }))
  )

/**
 * The API served on whatever HttpServer is provided: Node's (HttpLive) or NodeHttpServer.layerTest (for
 * in-process tests with HttpApiClient).
 */
export const ServeLive = (config: HostConfig) => {
  const operator = Option.isSome(config.operatorToken)
  const identity = identityOf(config)
  const extra = [...Documents.served({ operator }), ...OAuthRoutes.served, ...BrowserRoutes.served({ signIn: identity.browserSignIn })]
  // The MCP endpoint's path (CONVENE_MCP_URL) must be free: not one of the API's or the pages' paths.
  const clash = McpRoutes.clash(config, Routes.make({ operator: true, extra }))
  const routes = Routes.make({ operator, extra: clash === undefined ? [...extra, ...McpRoutes.served(config)] : extra })
  return HttpApiBuilder.serve(hostMiddleware(routes)).pipe(
    Layer.provide(McpRoutes.layer(config)),
    Layer.provide(PartnerLimits.layer(config)),
    Layer.provide(Documents.layer(config)),
    Layer.provide(OAuthRoutes.layer(config)),
    Layer.provide(BrowserRoutes.layer(config)),
    Layer.provide(ApiMiddlewareLive),
    Layer.provide(ApiLive(config)),
    Layer.provide(Sweeper),
    Layer.provide(IdpRefresh),
    Layer.provide(ToolkitDistribution),
    Layer.provide(DomainSweep(config)),
    Layer.provide(Webhooks.worker({
      interval: Duration.millis(250),
      stopTimeout: Duration.min(Duration.millis(config.limits.shutdownTimeoutMs), Duration.seconds(10))
    })),
    // The router matches paths exactly, as the route table does (Routes.routerConfig).
    Layer.provide(HttpRouter.setRouterConfig(Routes.routerConfig)),
    // Built first: a clash stops the server before anything else starts.
    Layer.provide(Layer.effectDiscard(clash === undefined ? Effect.void : Effect.fail(ConfigError.InvalidData([], clash))))
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
          operator_api: Option.isSome(config.operatorToken) ? "on" : "off",
          mcp: McpRoutes.describe(config),
          // IdP configurations (partner SSO) need CONVENE_SECRETS_KEY to encrypt the IdP client secrets.
          partner_sso: Option.isSome(config.secretsKey ?? Option.none()) ? "on" : "off (CONVENE_SECRETS_KEY is not set)"
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
    Layer.provideMerge(CoreLive(config)),
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
