/**
 * The whole in-memory store: one immutable `State` value in a `Ref`, so that a transaction is a copy of a
 * pointer and a commit is one `Ref.set`.
 *
 * - Every write outside a transaction takes the one permit of `lock`; a transaction holds that permit from
 *   start to commit and works on its own copy of the state (kept in a FiberRef), so writes never interleave.
 * - Reads outside a transaction read the committed state without the permit: nobody sees uncommitted writes.
 * - A nested transaction joins the outer one; if it fails, its own writes are undone (like a savepoint) and
 *   the rest commits with the outer one.
 */
import { Context, type DateTime, Effect, FiberRef, HashMap, Layer, Option, Ref } from "effect"
import type {
  ActionItem,
  ActionItemId,
  AgendaItemId,
  AgendaItemRow,
  AttachmentId,
  AttachmentRow,
  AuthorizationCode,
  Automation,
  AutomationId,
  ContextItemId,
  ContextItemRow,
  BacklogItemId,
  BacklogItemRow,
  Credential,
  CredentialId,
  Delivery,
  DeliveryAttempt,
  DomainVerification,
  DeliveryId,
  Email,
  Grant,
  GrantId,
  IdempotencyRecord,
  IdpConfig,
  LoggedEvent,
  Meeting,
  MeetingId,
  OAuthClient,
  ParticipantRow,
  PartnerApp,
  PartnerAppId,
  Session,
  SessionId,
  SigningKey,
  SsoSession,
  SsoSessionId,
  Toolkit,
  ToolkitId,
  ToolkitInstallation,
  ToolkitVersion,
  ToolkitVersionId,
  TranscriptSegment,
  User,
  UserId,
  WebhookEndpoint,
  WebhookEndpointId,
  WorkflowRun,
  WorkflowRunId,
  WorkflowTask,
  WorkflowTaskId,
  Workspace,
  WorkspaceId
} from "@convene/core"

/** A comparator for `Array.prototype.sort`. Lists sort every matching row, so these stay plain functions. */
export type Compare<A> = (a: A, b: A) => number

interface Row {
  readonly id: string
  readonly created_at: DateTime.Utc
}

/** created_at asc, then id asc. */
export const oldestFirst: Compare<Row> = (a, b) =>
  a.created_at.epochMillis - b.created_at.epochMillis || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** created_at desc, then id desc. */
export const newestFirst: Compare<Row> = (a, b) => oldestFirst(b, a)

/** Rows kept per workspace, so that every scoped read and write finds only its own workspace's rows. */
export type ByWorkspace<K, V> = HashMap.HashMap<WorkspaceId, HashMap.HashMap<K, V>>

/**
 * A workspace's events: the first `length` entries of `log`. Appending pushes onto the shared array instead of
 * copying it (a copy per event made each append cost the whole log); a state that rolled back keeps its shorter
 * length, and the next append drops what lies beyond it. Safe because writes are serial (the one permit): every
 * state a reader can hold has a length no greater than the writer's.
 */
export interface EventRun {
  readonly log: Array<LoggedEvent>
  readonly length: number
}

/** The events of a run, oldest first. */
export const eventsIn = (run: EventRun): ReadonlyArray<LoggedEvent> =>
  run.log.length === run.length ? run.log : run.log.slice(0, run.length)

/** `run` with `event` appended. */
export const appendTo = (run: EventRun | undefined, event: LoggedEvent): EventRun => {
  const log = run?.log ?? []
  log.length = run?.length ?? 0
  log.push(event)
  return { log, length: log.length }
}

/** A meeting with everything that belongs to it alone. */
export interface MeetingEntry {
  readonly meeting: Meeting
  /** In insertion order. */
  readonly participants: ReadonlyArray<ParticipantRow>
  /** In insertion order. */
  readonly transcript: ReadonlyArray<TranscriptSegment>
}

export interface State {
  readonly workspaces: HashMap.HashMap<WorkspaceId, Workspace>
  /** Usage counters by `usageKey`. */
  readonly usage: HashMap.HashMap<string, number>
  readonly users: HashMap.HashMap<UserId, User>
  /** User ids by e-mail (core keeps addresses normalised). */
  readonly userEmails: HashMap.HashMap<Email, UserId>
  readonly credentials: HashMap.HashMap<CredentialId, Credential>
  /** Credential ids by token hash. */
  readonly tokenHashes: HashMap.HashMap<string, CredentialId>
  readonly meetings: ByWorkspace<MeetingId, MeetingEntry>
  readonly agendaItems: ByWorkspace<AgendaItemId, AgendaItemRow>
  /** Talking points by item, then by subject. */
  readonly talkingPoints: HashMap.HashMap<AgendaItemId, HashMap.HashMap<string, ReadonlyArray<string>>>
  readonly actionItems: ByWorkspace<ActionItemId, ActionItem>
  readonly backlogItems: ByWorkspace<BacklogItemId, BacklogItemRow>
  /** Talking points on backlog items by item, then by subject. */
  readonly backlogTalkingPoints: HashMap.HashMap<BacklogItemId, HashMap.HashMap<string, ReadonlyArray<string>>>
  /** Context items with their (scrubbed) text. */
  readonly contextItems: ByWorkspace<ContextItemId, { readonly row: ContextItemRow; readonly text: string }>
  /** Attachment records (their bytes are in the BlobStore, outside this state). */
  readonly attachments: ByWorkspace<AttachmentId, AttachmentRow>
  /** Idempotency records by `JSON.stringify([scope, key])`. */
  readonly idempotency: HashMap.HashMap<string, IdempotencyRecord>
  /** OAuth clients by client_id. */
  readonly oauthClients: HashMap.HashMap<string, OAuthClient>
  /** Authorization codes by code hash. */
  readonly authorizationCodes: HashMap.HashMap<string, AuthorizationCode>
  readonly grants: HashMap.HashMap<GrantId, Grant>
  /** The credentials issued under each grant, in the order they were added. */
  readonly grantCredentials: HashMap.HashMap<GrantId, ReadonlyArray<CredentialId>>
  /** The grant each credential of `grantCredentials` was issued under. */
  readonly credentialGrants: HashMap.HashMap<CredentialId, GrantId>
  /** Signing keys by kid. */
  readonly signingKeys: HashMap.HashMap<string, SigningKey>
  readonly sessions: HashMap.HashMap<SessionId, Session>
  /** Session ids by token hash. */
  readonly sessionHashes: HashMap.HashMap<string, SessionId>
  /** The sign-in attempts counted against the limit (each with its id and instant), by key, in the order they were recorded. */
  readonly signInFailures: HashMap.HashMap<string, ReadonlyArray<{ readonly attempt: string; readonly at: DateTime.Utc }>>
  /** Each workspace's events, oldest first (positions ascending). */
  readonly events: HashMap.HashMap<WorkspaceId, EventRun>
  /** The position the last appended event took (0 before any): a rolled-back append rolls it back too. */
  readonly eventPosition: number
  readonly webhookEndpoints: ByWorkspace<WebhookEndpointId, WebhookEndpoint>
  /** The outbox, every workspace's (and none's) deliveries by id. */
  readonly deliveries: HashMap.HashMap<DeliveryId, Delivery>
  /** Each delivery's attempts, oldest first. */
  readonly deliveryAttempts: HashMap.HashMap<DeliveryId, ReadonlyArray<DeliveryAttempt>>
  readonly partnerApps: HashMap.HashMap<PartnerAppId, PartnerApp>
  /** Workspaces connected to partner apps by `JSON.stringify([partner_app_id, workspace_id])`. */
  readonly partnerConnections: HashMap.HashMap<string, PartnerConnection>
  /** Partner apps' automations (each with its actions) by id. */
  readonly automations: HashMap.HashMap<AutomationId, Automation>
  /** Partner apps' domain verifications by `JSON.stringify([partner_app_id, domain])`. */
  readonly domainVerifications: HashMap.HashMap<string, DomainVerification>
  /** Partner apps' IdP configurations (at most one each) by app id. */
  readonly idpConfigs: HashMap.HashMap<PartnerAppId, IdpConfig>
  /** Partner SSO sessions by id. */
  readonly ssoSessions: HashMap.HashMap<SsoSessionId, SsoSession>
  /** Partner apps' toolkits by id. */
  readonly toolkits: HashMap.HashMap<ToolkitId, Toolkit>
  /** Toolkits' versions by id. */
  readonly toolkitVersions: HashMap.HashMap<ToolkitVersionId, ToolkitVersion>
  /** Toolkit installations by `JSON.stringify([workspace_id, toolkit_id])`. */
  readonly toolkitInstallations: HashMap.HashMap<string, ToolkitInstallation>
  /** The workspaces that opted out of automatic toolkit updates. */
  readonly toolkitOptOuts: HashMap.HashMap<WorkspaceId, true>
  /** Partner apps' workflow runs (each with its steps) by id. */
  readonly workflowRuns: HashMap.HashMap<WorkflowRunId, WorkflowRun>
  /** Workflow runs' human tasks by id (at most one per run and step key). */
  readonly workflowTasks: HashMap.HashMap<WorkflowTaskId, WorkflowTask>
}

/** A workspace connected to a partner app. */
export interface PartnerConnection {
  readonly partner_app_id: PartnerAppId
  readonly workspace_id: WorkspaceId
  readonly connected_at: DateTime.Utc
}

const empty: State = {
  workspaces: HashMap.empty(),
  usage: HashMap.empty(),
  users: HashMap.empty(),
  userEmails: HashMap.empty(),
  credentials: HashMap.empty(),
  tokenHashes: HashMap.empty(),
  meetings: HashMap.empty(),
  agendaItems: HashMap.empty(),
  talkingPoints: HashMap.empty(),
  actionItems: HashMap.empty(),
  backlogItems: HashMap.empty(),
  backlogTalkingPoints: HashMap.empty(),
  contextItems: HashMap.empty(),
  attachments: HashMap.empty(),
  idempotency: HashMap.empty(),
  oauthClients: HashMap.empty(),
  authorizationCodes: HashMap.empty(),
  grants: HashMap.empty(),
  grantCredentials: HashMap.empty(),
  credentialGrants: HashMap.empty(),
  signingKeys: HashMap.empty(),
  sessions: HashMap.empty(),
  sessionHashes: HashMap.empty(),
  signInFailures: HashMap.empty(),
  events: HashMap.empty(),
  eventPosition: 0,
  webhookEndpoints: HashMap.empty(),
  deliveries: HashMap.empty(),
  deliveryAttempts: HashMap.empty(),
  partnerApps: HashMap.empty(),
  partnerConnections: HashMap.empty(),
  automations: HashMap.empty(),
  domainVerifications: HashMap.empty(),
  idpConfigs: HashMap.empty(),
  ssoSessions: HashMap.empty(),
  toolkits: HashMap.empty(),
  toolkitVersions: HashMap.empty(),
  toolkitInstallations: HashMap.empty(),
  toolkitOptOuts: HashMap.empty(),
  workflowRuns: HashMap.empty(),
  workflowTasks: HashMap.empty()
}

/** The rows of one workspace (empty when it has none). */
export const rowsOf = <K, V>(table: ByWorkspace<K, V>, workspaceId: WorkspaceId): HashMap.HashMap<K, V> =>
  Option.getOrElse(HashMap.get(table, workspaceId), () => HashMap.empty<K, V>())

export const getRow = <K, V>(table: ByWorkspace<K, V>, workspaceId: WorkspaceId, id: K): Option.Option<V> =>
  HashMap.get(rowsOf(table, workspaceId), id)

export const putRow = <K, V>(table: ByWorkspace<K, V>, workspaceId: WorkspaceId, id: K, row: V): ByWorkspace<K, V> =>
  HashMap.set(table, workspaceId, HashMap.set(rowsOf(table, workspaceId), id, row))

export const removeRow = <K, V>(table: ByWorkspace<K, V>, workspaceId: WorkspaceId, id: K): ByWorkspace<K, V> =>
  HashMap.set(table, workspaceId, HashMap.remove(rowsOf(table, workspaceId), id))

/** Applies `f` to the rows of one workspace. */
export const mapRows = <K, V>(
  table: ByWorkspace<K, V>,
  workspaceId: WorkspaceId,
  f: (rows: HashMap.HashMap<K, V>) => HashMap.HashMap<K, V>
): ByWorkspace<K, V> => HashMap.set(table, workspaceId, f(rowsOf(table, workspaceId)))

export class Memory extends Context.Tag("@convene/store-memory/Memory")<Memory, {
  /** The state this fiber sees: its transaction's working copy, or the committed state. */
  readonly read: Effect.Effect<State>
  /** Atomically replaces the state with the second half of `f`'s answer; answers the first half. */
  readonly modify: <A>(f: (state: State) => readonly [A, State]) => Effect.Effect<A>
  /** Runs `effect` as one unit of work: every write through `modify` commits together or not at all. */
  readonly withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>() {
  static readonly layer: Layer.Layer<Memory> = Layer.scoped(
    Memory,
    Effect.gen(function*() {
      const committed = yield* Ref.make(empty)
      const lock = yield* Effect.makeSemaphore(1)
      // The working copy of the transaction the current fiber runs in. Forked fibers share their parent's;
      // a joining child never hands its own back (the transaction is lexical).
      const working = yield* FiberRef.make(Option.none<Ref.Ref<State>>(), { join: (parent) => parent })

      const read = Effect.flatMap(
        FiberRef.get(working),
        Option.match({ onNone: () => Ref.get(committed), onSome: Ref.get })
      )

      const modify = <A>(f: (state: State) => readonly [A, State]): Effect.Effect<A> =>
        Effect.flatMap(
          FiberRef.get(working),
          Option.match({
            onNone: () => lock.withPermits(1)(Ref.modify(committed, f)),
            onSome: (ref) => Ref.modify(ref, f)
          })
        )

      const withTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
        Effect.flatMap(
          FiberRef.get(working),
          Option.match({
            onSome: (ref) =>
              Effect.flatMap(Ref.get(ref), (savepoint) => Effect.onError(effect, () => Ref.set(ref, savepoint))),
            onNone: () =>
              lock.withPermits(1)(
                Effect.gen(function*() {
                  const ref = yield* Ref.make(yield* Ref.get(committed))
                  const result = yield* Effect.locally(effect, working, Option.some(ref))
                  yield* Ref.set(committed, yield* Ref.get(ref))
                  return result
                })
              )
          })
        )

      return { read, modify, withTransaction }
    })
  )
}
