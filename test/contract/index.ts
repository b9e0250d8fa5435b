/**
 * The contract every store adapter answers to: one suite per storage port. An adapter's test file calls
 * `runContractSuites("memory", layer)`; each suite builds the layer once and shares it between its tests,
 * which therefore create their own workspaces and rows and never assume an empty store.
 */
import type { StorePorts } from "@convene/core"
import type { Layer } from "effect"
import * as ActionItemStore from "./ActionItemStore.js"
import * as AgendaItemStore from "./AgendaItemStore.js"
import * as AttachmentStore from "./AttachmentStore.js"
import * as AutomationStore from "./AutomationStore.js"
import * as BlobStore from "./BlobStore.js"
import * as ContextStore from "./ContextStore.js"
import * as BacklogItemStore from "./BacklogItemStore.js"
import * as CredentialStore from "./CredentialStore.js"
import * as EventLog from "./EventLog.js"
import * as IdempotencyStore from "./IdempotencyStore.js"
import * as IdpStore from "./IdpStore.js"
import * as MeetingStore from "./MeetingStore.js"
import * as OAuthStore from "./OAuthStore.js"
import * as PartnerStore from "./PartnerStore.js"
import * as RateLimitStore from "./RateLimitStore.js"
import * as SessionStore from "./SessionStore.js"
import * as SsoSessionStore from "./SsoSessionStore.js"
import * as ToolkitStore from "./ToolkitStore.js"
import * as Transactor from "./Transactor.js"
import * as UserStore from "./UserStore.js"
import * as WebhookStore from "./WebhookStore.js"
import * as WorkflowRunStore from "./WorkflowRunStore.js"
import * as WorkspaceStore from "./WorkspaceStore.js"

/** `sharedCounters`: the store's rate-limit counters are shared by server processes (a PostgreSQL server's). */
export const runContractSuites = (name: string, layer: Layer.Layer<StorePorts, unknown>, sharedCounters = false) => {
  WorkspaceStore.suite(name, layer)
  UserStore.suite(name, layer)
  CredentialStore.suite(name, layer)
  MeetingStore.suite(name, layer)
  AgendaItemStore.suite(name, layer)
  ContextStore.suite(name, layer)
  AttachmentStore.suite(name, layer)
  BlobStore.suite(name, layer)
  ActionItemStore.suite(name, layer)
  BacklogItemStore.suite(name, layer)
  IdempotencyStore.suite(name, layer)
  OAuthStore.suite(name, layer)
  SessionStore.suite(name, layer)
  EventLog.suite(name, layer)
  WebhookStore.suite(name, layer)
  PartnerStore.suite(name, layer)
  AutomationStore.suite(name, layer)
  IdpStore.suite(name, layer)
  SsoSessionStore.suite(name, layer)
  ToolkitStore.suite(name, layer)
  WorkflowRunStore.suite(name, layer)
  RateLimitStore.suite(name, layer, sharedCounters)
  Transactor.suite(name, layer)
}
