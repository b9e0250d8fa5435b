/**
 * Every core service, wired to each other. Provide a store adapter (StorePorts) and the Crypto and
 * PasswordHasher ports, and the whole domain runs: this is what the HTTP host and embedders use. Recording an
 * event enqueues its webhook deliveries in `layer` already (so no event is ever lost for a subscriber); managing
 * endpoints and sending deliveries is `webhooksLayer`, for hosts that also provide Outbound, Mailer and SecretBox.
 */
import { Effect, Layer } from "effect"
import { ActionItems } from "./actions/ActionItems.js"
import { WorkspaceAdmin } from "./administration/WorkspaceAdmin.js"
import { AgendaItems } from "./agenda/AgendaItems.js"
import { Attachments } from "./attachments/Attachments.js"
import type { Digests } from "./attachments/BlobStore.js"
import { BacklogItems } from "./backlog/Backlog.js"
import { Calendar } from "./calendar/Calendar.js"
import * as Contents from "./Contents.js"
import { ContextForPrompt } from "./context/ContextForPrompt.js"
import { ContextItems } from "./context/ContextItems.js"
import type { ContextPreparation } from "./context/Preparation.js"
import { EventFanOut } from "./events/EventFanOut.js"
import { Events } from "./events/Events.js"
import { Idempotency } from "./idempotency/Idempotency.js"
import { Authentication } from "./identity/Authentication.js"
import { Tokens } from "./identity/Tokens.js"
import { Users } from "./identity/Users.js"
import { MeetingAccess } from "./meetings/MeetingAccess.js"
import { Meetings } from "./meetings/Meetings.js"
import { Participants } from "./meetings/Participants.js"
import { Automations } from "./partner/Automations.js"
import * as PartnerDeliveries from "./partner/PartnerDeliveries.js"
import * as PartnerEvents from "./partner/PartnerEvents.js"
import { PartnerApps } from "./partner/PartnerApps.js"
import { DomainVerifications } from "./partner/idp/DomainVerifications.js"
import { PartnerAuthorizationServer, PartnerOAuth } from "./partner/PartnerOAuth.js"
import type { OidcClient } from "./partner/idp/OidcClient.js"
import { PartnerSso } from "./partner/idp/PartnerSso.js"
import { AttachmentLinks } from "./partner/AttachmentLinks.js"
import { PartnerUserContext } from "./partner/PartnerUserContext.js"
import { Toolkits } from "./partner/toolkits/Toolkits.js"
import { Workflows } from "./partner/workflows/Workflows.js"
import { AuthorizationServer } from "./oauth/AuthorizationServer.js"
import { Clients } from "./oauth/Clients.js"
import { Sessions } from "./oauth/Sessions.js"
import type { JwtSigner, SecretBox } from "./oauth/Signing.js"
import { SigningKeys } from "./oauth/SigningKeys.js"
import type { Crypto, PasswordHasher } from "./ports/Crypto.js"
import type { DnsResolver } from "./ports/DnsResolver.js"
import type { Mailer } from "./ports/Mailer.js"
import type { Outbound } from "./ports/Outbound.js"
import type { SecretVault } from "./ports/SecretVault.js"
import { IdpConfigs } from "./partner/idp/IdpConfigs.js"
import type { StorePorts } from "./StorePorts.js"
import { DeliveryWorker } from "./webhooks/DeliveryWorker.js"
import * as WebhookFanOut from "./webhooks/WebhookFanOut.js"
import { Webhooks } from "./webhooks/Webhooks.js"
import { Workspaces } from "./workspaces/Workspaces.js"

export type Services =
  | Workspaces
  | Users
  | Tokens
  | Authentication
  | Meetings
  | Participants
  | AgendaItems
  | ActionItems
  | BacklogItems
  | Calendar
  | WorkspaceAdmin
  | Idempotency
  | Events

/**
 * What recording an event also does, in its unit of work: the deliveries to the workspace's webhook endpoints and to
 * the partner apps connected to it (their webhooks and their automations' calls), in the one outbox.
 */
const fanOut = Layer.effect(
  EventFanOut,
  Effect.gen(function*() {
    const endpoints = yield* WebhookFanOut.make
    const partners = yield* PartnerEvents.make
    return EventFanOut.of({
      publish: (event, origin) => Effect.zipRight(endpoints.publish(event, origin), partners.publish(event, origin))
    })
  })
)

/** Recording events, with their fan-out (one layer value: provided several times below, it is built once). */
const events = Events.layer.pipe(Layer.provide(fanOut))

// Contents.layer (the cascades) is one layer value: provided twice below, it is built once.
const identity = Tokens.layer.pipe(
  Layer.provideMerge(Users.layer),
  Layer.provideMerge(Workspaces.layer),
  Layer.provide(Contents.layer)
)

// BacklogItems creates agenda items through AgendaItems (the same layer value: built once).
const meetings = Layer.mergeAll(
  Meetings.layer,
  Participants.layer,
  AgendaItems.layer,
  ActionItems.layer,
  Calendar.layer,
  BacklogItems.layer.pipe(Layer.provide(AgendaItems.layer))
).pipe(
  Layer.provide(MeetingAccess.layer),
  Layer.provideMerge(events),
  Layer.provide(Contents.layer),
  Layer.provide(identity)
)

export const layer: Layer.Layer<Services, never, StorePorts | Crypto | PasswordHasher> = Layer.mergeAll(
  identity,
  meetings,
  WorkspaceAdmin.layer.pipe(Layer.provide(identity)),
  Authentication.layer,
  Idempotency.layer
)

export type OAuthServices = Clients | Sessions | SigningKeys | AuthorizationServer

/**
 * The first-party OAuth 2.1 authorization server with `issuer` (`{base_url}/v1/oauth`): clients, browser
 * sessions, signing keys and the authorization server's rules. Besides the store it needs the JwtSigner and
 * SecretBox ports (@convene/node: JoseJwtSigner, NodeSecretBox).
 */
export const oauthLayer = (
  issuer: string
): Layer.Layer<OAuthServices, never, StorePorts | Crypto | PasswordHasher | JwtSigner | SecretBox> =>
  AuthorizationServer.layer(issuer).pipe(
    Layer.provideMerge(Layer.mergeAll(Clients.layer, SigningKeys.layer)),
    Layer.merge(Sessions.layer)
  )

/** Workflow templates and runs, with the toolkits they come from (stateless: each layer that needs them builds its own). */
const workflowsLayer = Workflows.layer.pipe(Layer.provide(Toolkits.layer))

export type WebhookServices = Webhooks | DeliveryWorker

/**
 * Workspace webhooks: the endpoint rules the HTTP routes call (Webhooks) and the outbox's worker the host runs in
 * a loop (DeliveryWorker.runOnce, runChallenges, purge), which also sends the partner apps' webhooks and automation
 * calls (PartnerDeliveries). Besides the store it needs the Outbound port (the calls out, with the outbound safety
 * rules), the Mailer (a disabled endpoint's creator is told) and the SecretBox (endpoint and partner app secrets are
 * stored sealed). The deliveries themselves are enqueued by `layer`.
 */
export const webhooksLayer: Layer.Layer<WebhookServices, never, StorePorts | Crypto | Outbound | Mailer | SecretBox> = Layer
  .mergeAll(Webhooks.layer, DeliveryWorker.layer.pipe(Layer.provide(PartnerDeliveries.layer), Layer.provide(workflowsLayer)))

export type ContextServices = ContextItems | ContextForPrompt

/**
 * Meeting context: uploads normalised, scrubbed and stored as text (ContextItems), and the one reader of that text
 * (ContextForPrompt). Besides the store it needs the ContextPreparation port, which says where an upload's text is
 * prepared: `ContextPreparation.inProcess` on the caller's thread, with the TextExtractor port (@convene/node:
 * NodeTextExtractor) reading PDF and DOCX files; @convene/http's server runs it in worker processes.
 */
export const contextLayer: Layer.Layer<ContextServices, never, StorePorts | Crypto | ContextPreparation> = Layer.mergeAll(
  ContextItems.layer.pipe(Layer.provide(events)),
  ContextForPrompt.layer
).pipe(Layer.provide(MeetingAccess.layer))

/**
 * Meeting attachments: files kept byte for byte, their bytes in the store's BlobStore. Besides the store it needs the
 * Digests port (@convene/node: NodeDigests), which hashes the bytes as they stream.
 */
export const attachmentsLayer: Layer.Layer<Attachments, never, StorePorts | Crypto | Digests> = Attachments.layer.pipe(
  Layer.provide(events),
  Layer.provide(MeetingAccess.layer)
)

export type PartnerServices = PartnerApps | Automations | Toolkits | Workflows

/**
 * Partner apps (the partner API's admin context, the operator's provisioning of apps) and their automations. Besides
 * the store it needs the Outbound port, whose rules a partner app's webhook URL and an automation's action URLs must
 * pass (as a workspace endpoint's), and the SecretBox (an app's webhook secret is stored sealed). Their webhooks and
 * automation calls are enqueued by `layer` and sent by `webhooksLayer`'s worker. With them, the apps' toolkits
 * (Toolkits), whose distribution the host runs in the background (`Toolkits.installPending`), and the workflow
 * templates and runs of the installed toolkits (Workflows), whose webhook steps `webhooksLayer`'s worker sends.
 */
export const partnerLayer: Layer.Layer<PartnerServices, never, StorePorts | Crypto | Outbound | SecretBox> = Layer.mergeAll(
  PartnerApps.layer,
  Automations.layer,
  Toolkits.layer,
  workflowsLayer
)

/**
 * The partner apps' domain verifications (the admin API's /idp/domains routes and the sweep that expires and
 * re-validates them). Besides the store it needs the DnsResolver port (@convene/node: NodeDnsResolver), which reads
 * the TXT records; the domain events are enqueued in the one outbox and sent by `webhooksLayer`'s worker. Apart from
 * `partnerLayer` so that what needs only the apps does not need a resolver.
 */
export const domainVerificationsLayer: Layer.Layer<DomainVerifications, never, StorePorts | Crypto | DnsResolver> =
  DomainVerifications.layer

/**
 * Partner single sign-on (the public /v1/partner/sso routes) with `callbackUrl` (`{base_url}/v1/partner/sso/callback`,
 * the redirect URI registered at the identity providers). Besides the store it needs the OidcClient (@convene/node:
 * NodeOidcClient, which calls the providers through the Outbound port), the SecretVault (the providers' client secrets)
 * and the SecretBox (the sessions' PKCE verifiers).
 */
export const partnerSsoLayer = (
  callbackUrl: string
): Layer.Layer<PartnerSso, never, StorePorts | Crypto | SecretBox | SecretVault | OidcClient> => PartnerSso.layer(callbackUrl)

export type PartnerOAuthServices = PartnerOAuth | PartnerAuthorizationServer | AttachmentLinks | PartnerUserContext

/**
 * The partner OAuth 2.0 server with `issuer` (`{base_url}/oauth2`), the user context's token authentication and
 * its own rules, and the attachments' pre-signed URLs. It shares the first-party server's signing keys
 * (`oauthLayer`'s SigningKeys), the partner apps and toolkits (`partnerLayer`) and the meeting services (`layer`).
 */
export const partnerOAuthLayer = (
  issuer: string
): Layer.Layer<PartnerOAuthServices, never, StorePorts | Crypto | PartnerApps | Toolkits | SigningKeys | Meetings | AgendaItems> =>
  Layer.mergeAll(
    PartnerAuthorizationServer.layer(issuer).pipe(Layer.provideMerge(PartnerOAuth.layer)),
    AttachmentLinks.layer,
    PartnerUserContext.layer.pipe(Layer.provide(MeetingAccess.layer))
  )

/**
 * Partner IdP configurations (/v1/partner/admin/idp): the rules of IdpConfigs, and the background refresh of their
 * discovery documents (`IdpConfigs.refreshStale`, which the host runs on a schedule). Besides the store it needs the
 * Outbound port (the discovery document is fetched under the outbound rules) and the SecretVault (the IdP's client
 * secret is stored encrypted; without a key, creating a configuration is refused).
 */
export const idpLayer: Layer.Layer<IdpConfigs, never, StorePorts | Crypto | Outbound | SecretVault> = IdpConfigs.layer
