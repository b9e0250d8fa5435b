/**
 * A store decorator for fault injection: every write method of every storage port is wrapped so that a test
 * can run one operation and say "die right after its k-th write".
 *
 * - `layer` takes the data ports (and the Transactor, passed through untouched) from the store it is
 *   provided with and answers decorated ones; wire the core on top of it.
 * - `record(operation, { dieAfter: k })` runs the operation with a fresh write counter (counting from the start
 *   of the operation; setup before it and checks after it are not counted) and answers its exit together with
 *   the names of the writes it made, in order. The k-th write completes, then the operation dies with an
 *   `InjectedFault` defect: to everything up the stack that is a driver or a process dying mid-operation.
 *   Only the k-th write dies, once: what the operation does to clean up (a released idempotency key) runs.
 * - The counter lives in a FiberRef, so unarmed code (and other fibers) pass straight through.
 *
 * Which methods write is decided per port in `methods` below, exhaustively: every method of every port must be
 * classified there, so a write method added to a port fails to type-check here until it is listed.
 */
import {
  ActionItemStore,
  AgendaItemStore,
  AttachmentStore,
  AutomationStore,
  IdpStore,
  BlobStore,
  ContextStore,
  BacklogItemStore,
  CredentialStore,
  DomainVerificationStore,
  EventLog,
  IdempotencyStore,
  OAuthStore,
  PartnerStore,
  RateLimitStore,
  SessionStore,
  SsoSessionStore,
  ToolkitStore,
  MeetingStore,
  type StorePorts,
  Transactor,
  UserStore,
  WebhookStore,
  WorkflowRunStore,
  WorkspaceStore
} from "@convene/core"
import { type Context, Data, Effect, type Exit, FiberRef, Layer, Option, Ref } from "effect"

/** The defect an armed write dies with, right after it completed. */
export class InjectedFault extends Data.TaggedError("InjectedFault")<{
  /** Which write of the operation it followed (1 is the first). */
  readonly write: number
  /** `Port.method` of that write. */
  readonly method: string
}> {}

/** How each method of a port touches the store. */
export type Methods<S> = { readonly [K in keyof S]: "read" | "write" }

interface Counter {
  readonly dieAfter: number | undefined
  readonly writes: Ref.Ref<ReadonlyArray<string>>
}

const armed = FiberRef.unsafeMake(Option.none<Counter>())

/** Counts one completed write of `method`; dies when it is the one the test armed. */
const afterWrite = (method: string): Effect.Effect<void> =>
  Effect.flatMap(FiberRef.get(armed), Option.match({
    onNone: () => Effect.void,
    onSome: (counter) =>
      Effect.flatMap(
        Ref.updateAndGet(counter.writes, (writes) => [...writes, method]),
        (writes) => (writes.length === counter.dieAfter
          ? Effect.die(new InjectedFault({ write: writes.length, method }))
          : Effect.void)
      )
  }))

/**
 * `service` with every method `methods` marks "write" wrapped: the call runs as before, then counts (and dies
 * if armed to). The copy has the type of the service; the methods are swapped by name, which TypeScript cannot
 * follow generically, hence `Reflect` (each replaced method is checked to be a function answering an Effect).
 */
export const decorate = <S extends object>(port: string, service: S, methods: Methods<S>): S => {
  const decorated: S = { ...service }
  for (const [name, kind] of Object.entries<"read" | "write">(methods)) {
    if (kind !== "write") continue
    const method: unknown = Reflect.get(service, name)
    if (typeof method !== "function") throw new Error(`${port}.${name} is not a method`)
    const label = `${port}.${name}`
    Reflect.set(decorated, name, (...args: ReadonlyArray<unknown>): Effect.Effect<unknown, unknown, unknown> => {
      const result: unknown = Reflect.apply(method, service, args)
      if (!Effect.isEffect(result)) throw new Error(`${label} did not answer an Effect`)
      return Effect.tap(result, () => afterWrite(label))
    })
  }
  return decorated
}

/** The port behind `tag`, decorated. */
const port = <I, S extends object>(tag: Context.Tag<I, S>, methods: Methods<S>): Layer.Layer<I, never, I> =>
  Layer.effect(tag, Effect.map(tag, (service) => decorate(tag.key.split("/").at(-1) ?? tag.key, service, methods)))

/** Every write of every port (the lists follow the port interfaces in packages/core/src). */
export const methods = {
  WorkspaceStore: { insert: "write", update: "write", get: "read", list: "read", delete: "write", consume: "write", lock: "read", share: "read" },
  UserStore: {
    insert: "write",
    update: "write",
    get: "read",
    getMany: "read",
    findByEmail: "read",
    list: "read",
    countByWorkspace: "read",
    delete: "write",
    deleteByWorkspace: "write"
  },
  CredentialStore: {
    insert: "write",
    findByHashWithOwner: "read",
    get: "read",
    listByUser: "read",
    list: "read",
    countLive: "read",
    revoke: "write",
    deleteByUser: "write",
    deleteByWorkspace: "write"
  },
  MeetingStore: {
    insert: "write",
    update: "write",
    get: "read",
    delete: "write",
    deleteByWorkspace: "write",
    countByWorkspace: "read",
    detachOwner: "write",
    list: "read",
    addParticipants: "write",
    meetingIdsOf: "read",
    listParticipants: "read",
    findParticipant: "read",
    updateParticipant: "write",
    removeParticipant: "write",
    removeUserParticipants: "write",
    appendTranscript: "write",
    transcript: "read"
  },
  AgendaItemStore: {
    insert: "write",
    update: "write",
    get: "read",
    delete: "write",
    deleteByMeeting: "write",
    deleteByWorkspace: "write",
    removePresenter: "write",
    deleteTalkingPointsOf: "write",
    list: "read",
    listByMeeting: "read",
    lastSequence: "read",
    talkingPoints: "read",
    setTalkingPoints: "write"
  },
  ActionItemStore: {
    insert: "write",
    update: "write",
    get: "read",
    delete: "write",
    deleteByMeeting: "write",
    deleteByWorkspace: "write",
    unassignUser: "write",
    detachAgendaItem: "write",
    list: "read"
  },
  BacklogItemStore: {
    insert: "write",
    update: "write",
    get: "read",
    listOpen: "read",
    listClosed: "read",
    deleteByWorkspace: "write",
    removePresenter: "write",
    talkingPoints: "read",
    talkingPointsOfEveryone: "read",
    setTalkingPoints: "write",
    deleteTalkingPointsOf: "write"
  },
  ContextStore: {
    insert: "write",
    get: "read",
    text: "read",
    list: "read",
    delete: "write",
    deleteByMeeting: "write",
    deleteByWorkspace: "write"
  },
  AttachmentStore: {
    insert: "write",
    get: "read",
    list: "read",
    delete: "write",
    deleteByMeeting: "write",
    deleteByWorkspace: "write",
    existing: "read"
  },
  IdempotencyStore: { begin: "write", complete: "write", release: "write", deleteByScopes: "write", purgeExpired: "write" },
  OAuthStore: {
    insertClient: "write",
    getClient: "read",
    updateClient: "write",
    deleteClient: "write",
    insertCode: "write",
    getCode: "read",
    consumeCode: "write",
    purgeCodes: "write",
    insertGrant: "write",
    getGrant: "read",
    revokeGrant: "write",
    addGrantCredential: "write",
    grantCredentials: "read",
    clientCredentials: "read",
    grantOf: "read",
    hasLiveGrant: "read",
    signingKeys: "read",
    insertSigningKey: "write",
    retireSigningKey: "write",
    deleteByUser: "write",
    deleteByWorkspace: "write"
  },
  SessionStore: {
    insert: "write",
    findByHash: "read",
    revoke: "write",
    purge: "write",
    deleteByUser: "write",
    deleteByWorkspace: "write",
    recordAttempt: "write",
    forgetAttempt: "write",
    failuresSince: "read",
    clearFailures: "write",
    purgeFailures: "write"
  },
  EventLog: {
    append: "write",
    after: "read",
    positionOf: "read",
    head: "read",
    purge: "write",
    deleteByWorkspace: "write"
  },
  WebhookStore: {
    insertEndpoint: "write",
    getEndpoint: "read",
    updateEndpoint: "write",
    listEndpoints: "read",
    countActive: "read",
    subscribers: "read",
    claimChallenges: "write",
    detachCreator: "write",
    enqueue: "write",
    claimDue: "write",
    outbox: "read",
    recordAttempt: "write",
    getDelivery: "read",
    listDeliveries: "read",
    purgeDeliveries: "write",
    deleteByWorkspace: "write"
  },
  PartnerStore: {
    insert: "write",
    update: "write",
    get: "read",
    getByClientId: "read",
    getBySlug: "read",
    list: "read",
    connect: "write",
    listWorkspaces: "read",
    setWebhookSecret: "write",
    connectedApps: "read",
    getByClientIdFor: "read",
    deleteByWorkspace: "write"
  },
  AutomationStore: {
    insert: "write",
    list: "read",
    withTrigger: "read",
    getByAction: "read"
  },
  DomainVerificationStore: {
    get: "read",
    put: "write",
    verifiedOwner: "read",
    lockDomain: "read",
    due: "read"
  },
  IdpStore: {
    getByApp: "read",
    getByAppForUpdate: "read",
    insert: "write",
    update: "write",
    deleteByApp: "write",
    claimingApps: "read",
    staleDiscovery: "read",
    storeDiscovery: "write",
    page: "read",
    replaceSealedSecret: "write"
  },
  SsoSessionStore: {
    insert: "write",
    get: "read",
    getByStateHash: "read",
    finish: "write",
    consume: "write",
    purge: "write"
  },
  ToolkitStore: {
    insertToolkit: "write",
    updateToolkit: "write",
    getToolkit: "read",
    getToolkitForUpdate: "read",
    listToolkits: "read",
    toolkitsOf: "read",
    deleteToolkit: "write",
    insertVersion: "write",
    updateVersion: "write",
    getVersion: "read",
    versionsOf: "read",
    listVersions: "read",
    putInstallation: "write",
    installationsOf: "read",
    installationsIn: "read",
    claimPending: "read",
    autoUpdates: "read",
    setAutoUpdates: "write",
    deleteByWorkspace: "write"
  },
  WorkflowRunStore: {
    insertRun: "write",
    updateRun: "write",
    getRun: "read",
    getRunForUpdate: "read",
    listRuns: "read",
    insertTask: "write",
    updateTask: "write",
    getTask: "read",
    tasksOf: "read",
    deleteByWorkspace: "write"
  }
} as const satisfies {
  readonly WorkspaceStore: Methods<Context.Tag.Service<WorkspaceStore>>
  readonly UserStore: Methods<Context.Tag.Service<UserStore>>
  readonly CredentialStore: Methods<Context.Tag.Service<CredentialStore>>
  readonly MeetingStore: Methods<Context.Tag.Service<MeetingStore>>
  readonly AgendaItemStore: Methods<Context.Tag.Service<AgendaItemStore>>
  readonly ActionItemStore: Methods<Context.Tag.Service<ActionItemStore>>
  readonly BacklogItemStore: Methods<Context.Tag.Service<BacklogItemStore>>
  readonly ContextStore: Methods<Context.Tag.Service<ContextStore>>
  readonly AttachmentStore: Methods<Context.Tag.Service<AttachmentStore>>
  readonly IdempotencyStore: Methods<Context.Tag.Service<IdempotencyStore>>
  readonly OAuthStore: Methods<Context.Tag.Service<OAuthStore>>
  readonly SessionStore: Methods<Context.Tag.Service<SessionStore>>
  readonly EventLog: Methods<Context.Tag.Service<EventLog>>
  readonly WebhookStore: Methods<Context.Tag.Service<WebhookStore>>
  readonly PartnerStore: Methods<Context.Tag.Service<PartnerStore>>
  readonly AutomationStore: Methods<Context.Tag.Service<AutomationStore>>
  readonly DomainVerificationStore: Methods<Context.Tag.Service<DomainVerificationStore>>
  readonly IdpStore: Methods<Context.Tag.Service<IdpStore>>
  readonly SsoSessionStore: Methods<Context.Tag.Service<SsoSessionStore>>
  readonly ToolkitStore: Methods<Context.Tag.Service<ToolkitStore>>
  readonly WorkflowRunStore: Methods<Context.Tag.Service<WorkflowRunStore>>
}

/** The store's ports with every write counted (and armed to die); provide the real store below it. */
export const layer: Layer.Layer<StorePorts, never, StorePorts> = Layer.mergeAll(
  port(WorkspaceStore, methods.WorkspaceStore),
  port(UserStore, methods.UserStore),
  port(CredentialStore, methods.CredentialStore),
  port(MeetingStore, methods.MeetingStore),
  port(AgendaItemStore, methods.AgendaItemStore),
  port(ActionItemStore, methods.ActionItemStore),
  port(BacklogItemStore, methods.BacklogItemStore),
  port(ContextStore, methods.ContextStore),
  port(AttachmentStore, methods.AttachmentStore),
  port(IdempotencyStore, methods.IdempotencyStore),
  port(OAuthStore, methods.OAuthStore),
  port(SessionStore, methods.SessionStore),
  port(EventLog, methods.EventLog),
  port(WebhookStore, methods.WebhookStore),
  port(PartnerStore, methods.PartnerStore),
  port(AutomationStore, methods.AutomationStore),
  port(DomainVerificationStore, methods.DomainVerificationStore),
  port(IdpStore, methods.IdpStore),
  port(SsoSessionStore, methods.SsoSessionStore),
  port(ToolkitStore, methods.ToolkitStore),
  port(WorkflowRunStore, methods.WorkflowRunStore),
  // Units of work are the store's own: a transaction is exactly what the faults test.
  Layer.service(Transactor),
  // Blobs are written outside transactions (core pairs them with records itself): passed through untouched.
  Layer.service(BlobStore),
  // Request counters are no part of any unit of work.
  Layer.service(RateLimitStore)
)

export interface Recorded<A, E> {
  readonly exit: Exit.Exit<A, E>
  /** `Port.method` of every write the operation made, in order (the one that died included). */
  readonly writes: ReadonlyArray<string>
}

/** Runs `operation` counting its writes; with `dieAfter: k`, it dies right after its k-th write. */
export const record = <A, E, R>(
  operation: Effect.Effect<A, E, R>,
  options: { readonly dieAfter?: number | undefined } = {}
): Effect.Effect<Recorded<A, E>, never, R> =>
  Effect.gen(function*() {
    const writes = yield* Ref.make<ReadonlyArray<string>>([])
    const exit = yield* Effect.exit(
      Effect.locally(operation, armed, Option.some({ dieAfter: options.dieAfter, writes }))
    )
    return { exit, writes: yield* Ref.get(writes) }
  })
