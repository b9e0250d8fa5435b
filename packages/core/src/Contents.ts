/**
 * What hangs off what, decided once for every store. A room that keeps things on another room's records
 * (agenda items on meetings, action items on meetings and agenda items, everything on users and workspaces) is
 * wired in here, so that creating and deleting the parent takes them along inside the parent's transaction, and
 * no adapter has to know.
 * - A new kind of thing kept on a meeting is added to `meetingContents.deleteAll` (and gets a cascade test).
 * - A new kind of thing that points at a user is added to `identityReferences.detachUser` (sessions, codes and
 *   grants of the OAuth room are).
 * - A new storage port (or a new table of one) is added to `workspaceContents.deleteAll`: deleting a workspace
 *   calls every port's `deleteByWorkspace`.
 * - Webhook endpoints a user created stay (they belong to the workspace) without a creator to e-mail.
 */
import { Effect, Layer } from "effect"
import { ActionItemStore } from "./actions/ActionItemStore.js"
import { AgendaItemReferences } from "./agenda/AgendaItemReferences.js"
import { agendaFromTemplate } from "./agenda/AgendaItems.js"
import { AttachmentStore } from "./attachments/AttachmentStore.js"
import { AgendaItemStore } from "./agenda/AgendaItemStore.js"
import { BacklogItemStore } from "./backlog/BacklogItemStore.js"
import { ContextStore } from "./context/ContextStore.js"
import { IdempotencyStore } from "./idempotency/IdempotencyStore.js"
import { userCredentialKinds } from "./identity/Identity.js"
import { IdentityReferences } from "./identity/IdentityReferences.js"
import { CredentialStore, UserStore } from "./identity/IdentityStore.js"
import { MeetingContents } from "./meetings/MeetingContents.js"
import { MeetingStore } from "./meetings/MeetingStore.js"
import { EventLog } from "./events/EventLog.js"
import { OAuthStore, SessionStore } from "./oauth/OAuthStore.js"
import { PartnerStore } from "./partner/PartnerStore.js"
import { ToolkitStore } from "./partner/toolkits/ToolkitStore.js"
import { WorkflowRunStore } from "./partner/workflows/WorkflowRunStore.js"
import { Crypto } from "./ports/Crypto.js"
import { trusted } from "./shared/Trusted.js"
import { WebhookStore } from "./webhooks/WebhookStore.js"
import { WorkspaceCounts } from "./workspaces/Workspace.js"
import { WorkspaceContents } from "./workspaces/WorkspaceContents.js"

export const meetingContents: Layer.Layer<
  MeetingContents,
  never,
  AgendaItemStore | ActionItemStore | ContextStore | AttachmentStore | Crypto
> = Layer
  .effect(
    MeetingContents,
    Effect.gen(function*() {
      const agenda = yield* AgendaItemStore
      const actions = yield* ActionItemStore
      const context = yield* ContextStore
      // Attachment records go with the meeting; their bytes are left to Attachments.sweep.
      const attachments = yield* AttachmentStore
      const crypto = yield* Crypto
      return MeetingContents.of({
        seed: (meeting, items) =>
          agendaFromTemplate(meeting, items).pipe(
            Effect.flatMap((rows) => Effect.forEach(rows, agenda.insert, { discard: true })),
            Effect.provideService(Crypto, crypto)
          ),
        // Action items first: they may point at the agenda items.
        deleteAll: (workspaceId, meetingId) =>
          Effect.zipRight(actions.deleteByMeeting(workspaceId, meetingId), agenda.deleteByMeeting(workspaceId, meetingId)).pipe(
            Effect.zipRight(context.deleteByMeeting(workspaceId, meetingId)),
            Effect.zipRight(attachments.deleteByMeeting(workspaceId, meetingId))
          )
      })
    })
  )

export const agendaItemReferences: Layer.Layer<AgendaItemReferences, never, ActionItemStore> = Layer.effect(
  AgendaItemReferences,
  Effect.map(ActionItemStore, (actions) => AgendaItemReferences.of({ detach: actions.detachAgendaItem }))
)

/**
 * A deleted user: their participant rows go (the owner's row of the meetings they own too), the meetings they
 * own stay without an owner (as a meeting created with a workspace API key), they stop presenting agenda items
 * and backlog items, their private talking points on both go, and the action items assigned to them stay,
 * unassigned. What is kept per credential (idempotency records) goes with the credentials.
 */
export const identityReferences: Layer.Layer<
  IdentityReferences,
  never,
  | MeetingStore
  | AgendaItemStore
  | ActionItemStore
  | BacklogItemStore
  | IdempotencyStore
  | OAuthStore
  | SessionStore
  | WebhookStore
> = Layer.effect(
  IdentityReferences,
  Effect.gen(function*() {
    const meetings = yield* MeetingStore
    const agenda = yield* AgendaItemStore
    const actions = yield* ActionItemStore
    const backlog = yield* BacklogItemStore
    const idempotency = yield* IdempotencyStore
    const oauth = yield* OAuthStore
    const sessions = yield* SessionStore
    const webhooks = yield* WebhookStore
    return IdentityReferences.of({
      detachUser: (workspaceId, userId) =>
        Effect.gen(function*() {
          yield* meetings.removeUserParticipants(workspaceId, userId)
          yield* meetings.detachOwner(workspaceId, userId)
          yield* agenda.removePresenter(workspaceId, userId)
          // Talking points are kept per subject: a user's subject is their user id (see Access.subjectOf).
          yield* agenda.deleteTalkingPointsOf(workspaceId, userId)
          yield* backlog.removePresenter(workspaceId, userId)
          yield* backlog.deleteTalkingPointsOf(workspaceId, userId)
          yield* actions.unassignUser(workspaceId, userId)
          // Their sessions, authorization codes and grants (which point at their credentials, deleted next).
          yield* sessions.deleteByUser(userId)
          yield* oauth.deleteByUser(userId)
          yield* webhooks.detachCreator(userId)
        }),
      // Idempotency records are scoped to the credential's id (see IdempotentRequest.scope).
      forgetCredentials: idempotency.deleteByScopes
    })
  })
)

/**
 * Counting and deleting what a workspace holds, through every storage port: each port deletes its own rows of the
 * workspace (`deleteByWorkspace`), things that point at other things first, the workspace's row last (by the
 * caller, Workspaces.delete).
 */
export const workspaceContents: Layer.Layer<
  WorkspaceContents,
  never,
  | UserStore
  | CredentialStore
  | MeetingStore
  | AgendaItemStore
  | ActionItemStore
  | BacklogItemStore
  | ContextStore
  | AttachmentStore
  | IdempotencyStore
  | OAuthStore
  | SessionStore
  | EventLog
  | WebhookStore
  | PartnerStore
  | ToolkitStore
  | WorkflowRunStore
> = Layer.effect(
  WorkspaceContents,
  Effect.gen(function*() {
    const events = yield* EventLog
    const oauth = yield* OAuthStore
    const sessions = yield* SessionStore
    const users = yield* UserStore
    const credentials = yield* CredentialStore
    const meetings = yield* MeetingStore
    const agenda = yield* AgendaItemStore
    const actions = yield* ActionItemStore
    const backlog = yield* BacklogItemStore
    const context = yield* ContextStore
    const attachments = yield* AttachmentStore
    const idempotency = yield* IdempotencyStore
    const webhooks = yield* WebhookStore
    const partners = yield* PartnerStore
    const toolkits = yield* ToolkitStore
    const workflowRuns = yield* WorkflowRunStore
    return WorkspaceContents.of({
      counts: (workspaceIds, at) =>
        Effect.gen(function*() {
          if (workspaceIds.length === 0) return new Map()
          const [people, held, keys, meetingCounts] = yield* Effect.all([
            users.countByWorkspace(workspaceIds),
            credentials.countLive({ workspaceIds, kinds: userCredentialKinds, liveAt: at }),
            credentials.countLive({ workspaceIds, kinds: ["api_key"], liveAt: at }),
            meetings.countByWorkspace(workspaceIds)
          ])
          return new Map(workspaceIds.map((id) => [
            id,
            new WorkspaceCounts({
              users: people.get(id) ?? 0,
              meetings: meetingCounts.get(id) ?? 0,
              tokens: held.get(id) ?? 0,
              api_keys: keys.get(id) ?? 0
            }, trusted)
          ]))
        }),
      deleteAll: (workspaceId) =>
        Effect.gen(function*() {
          // Action items point at agenda items, both at meetings; meetings and credentials at users.
          yield* actions.deleteByWorkspace(workspaceId)
          yield* agenda.deleteByWorkspace(workspaceId)
          yield* context.deleteByWorkspace(workspaceId)
          // Attachment records; their bytes are left to Attachments.sweep.
          yield* attachments.deleteByWorkspace(workspaceId)
          yield* meetings.deleteByWorkspace(workspaceId)
          yield* backlog.deleteByWorkspace(workspaceId)
          yield* events.deleteByWorkspace(workspaceId)
          // Endpoints point at their creators (users): they go before the users.
          yield* webhooks.deleteByWorkspace(workspaceId)
          // Its partner workflow runs (with their tasks), its partner toolkits' installations and opt-out, then its
          // connections to partner apps (the apps stay).
          yield* workflowRuns.deleteByWorkspace(workspaceId)
          yield* toolkits.deleteByWorkspace(workspaceId)
          yield* partners.deleteByWorkspace(workspaceId)
          // Sessions, codes and grants point at users and credentials.
          yield* sessions.deleteByWorkspace(workspaceId)
          yield* oauth.deleteByWorkspace(workspaceId)
          const gone = yield* credentials.deleteByWorkspace(workspaceId)
          yield* idempotency.deleteByScopes(gone)
          yield* users.deleteByWorkspace(workspaceId)
        })
    })
  })
)

export const layer = Layer.mergeAll(meetingContents, agendaItemReferences, identityReferences, workspaceContents)
