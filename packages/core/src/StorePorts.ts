import type { ActionItemStore } from "./actions/ActionItemStore.js"
import type { AgendaItemStore } from "./agenda/AgendaItemStore.js"
import type { AttachmentStore } from "./attachments/AttachmentStore.js"
import type { BlobStore } from "./attachments/BlobStore.js"
import type { BacklogItemStore } from "./backlog/BacklogItemStore.js"
import type { ContextStore } from "./context/ContextStore.js"
import type { CredentialStore, UserStore } from "./identity/IdentityStore.js"
import type { IdempotencyStore } from "./idempotency/IdempotencyStore.js"
import type { MeetingStore } from "./meetings/MeetingStore.js"
import type { WorkspaceStore } from "./workspaces/WorkspaceStore.js"
import type { EventLog } from "./events/EventLog.js"
import type { OAuthStore, SessionStore } from "./oauth/OAuthStore.js"
import type { AutomationStore } from "./partner/AutomationStore.js"
import type { PartnerStore } from "./partner/PartnerStore.js"
import type { DomainVerificationStore } from "./partner/idp/DomainVerificationStore.js"
import type { IdpStore } from "./partner/idp/IdpStore.js"
import type { SsoSessionStore } from "./partner/idp/SsoSessionStore.js"
import type { ToolkitStore } from "./partner/toolkits/ToolkitStore.js"
import type { WorkflowRunStore } from "./partner/workflows/WorkflowRunStore.js"
import type { Transactor } from "./ports/Transactor.js"
import type { RateLimitStore } from "./ratelimits/RateLimitStore.js"
import type { WebhookStore } from "./webhooks/WebhookStore.js"

/** Every storage port a store adapter provides. */
export type StorePorts =
  | WorkspaceStore
  | UserStore
  | CredentialStore
  | MeetingStore
  | AgendaItemStore
  | ActionItemStore
  | BacklogItemStore
  | ContextStore
  | AttachmentStore
  | BlobStore
  | IdempotencyStore
  | OAuthStore
  | EventLog
  | SessionStore
  | WebhookStore
  | PartnerStore
  | AutomationStore
  | DomainVerificationStore
  | IdpStore
  | SsoSessionStore
  | ToolkitStore
  | WorkflowRunStore
  | RateLimitStore
  | Transactor
