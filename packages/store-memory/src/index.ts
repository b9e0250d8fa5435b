/**
 * The in-memory store adapter: every storage port over one immutable state value. Nothing persists; each
 * build of `layer` starts empty. Storage only: the rules live in @convene/core.
 */
import { RateLimitStores, type StorePorts } from "@convene/core"
import { Layer } from "effect"
import * as ActionItemStore from "./ActionItemStore.js"
import * as AgendaItemStore from "./AgendaItemStore.js"
import * as AttachmentStore from "./AttachmentStore.js"
import * as AutomationStore from "./AutomationStore.js"
import * as MemoryBlobStore from "./BlobStore.js"
import * as ContextStore from "./ContextStore.js"
import * as DomainVerificationStore from "./DomainVerificationStore.js"
import * as BacklogItemStore from "./BacklogItemStore.js"
import * as EventLog from "./EventLog.js"
import * as IdempotencyStore from "./IdempotencyStore.js"
import * as IdentityStore from "./IdentityStore.js"
import * as IdpStore from "./IdpStore.js"
import { eventsIn, Memory } from "./Memory.js"
import * as MeetingStore from "./MeetingStore.js"
import * as OAuthStore from "./OAuthStore.js"
import * as PartnerStore from "./PartnerStore.js"
import * as SsoSessionStore from "./SsoSessionStore.js"
import * as ToolkitStore from "./ToolkitStore.js"
import * as Transactor from "./Transactor.js"
import * as WebhookStore from "./WebhookStore.js"
import * as WorkflowRunStore from "./WorkflowRunStore.js"
import * as WorkspaceStore from "./WorkspaceStore.js"

/**
 * The state every port of `layer` reads and writes, for tests that compare everything the store holds before
 * and after an operation (test/faults): `Layer.merge(layer, Memory.layer)` answers the ports together with
 * their `Memory`, since a layer used twice in one build is built once (layers are memoized by reference).
 * Not a port: nothing outside tests should read the state behind the ports' back.
 */
export { eventsIn, Memory }

/** Blobs in memory: the in-memory store's BlobStore (`layer` includes it). */
export { MemoryBlobStore }

export const layer: Layer.Layer<StorePorts> = Layer.mergeAll(
  WorkspaceStore.layer,
  IdentityStore.userLayer,
  IdentityStore.credentialLayer,
  MeetingStore.layer,
  AgendaItemStore.layer,
  ActionItemStore.layer,
  ContextStore.layer,
  AttachmentStore.layer,
  BacklogItemStore.layer,
  IdempotencyStore.layer,
  OAuthStore.oauthLayer,
  OAuthStore.sessionLayer,
  EventLog.layer,
  WebhookStore.layer,
  PartnerStore.layer,
  AutomationStore.layer,
  DomainVerificationStore.layer,
  IdpStore.layer,
  SsoSessionStore.layer,
  ToolkitStore.layer,
  WorkflowRunStore.layer,
  Transactor.layer
).pipe(Layer.provide(Memory.layer), Layer.merge(RateLimitStores.inProcess), Layer.merge(MemoryBlobStore.layer))
