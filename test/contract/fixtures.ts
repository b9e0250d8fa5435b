/**
 * Rows for the contract suites. Every maker takes the fields a test cares about and fills the rest with
 * valid values and fresh random ids, so that suites sharing one database never meet each other's rows.
 * The `seed*` effects also insert the row (after whatever it references, so foreign keys hold).
 */
import {
  ActionItem,
  ActionItemId,
  ActionItemStore,
  AgendaItemId,
  AgendaItemRow,
  AgendaItemStore,
  AuthorizationCode,
  Credential,
  CredentialId,
  CredentialStore,
  Delivery,
  DeliveryAttempt,
  DeliveryId,
  DomainEvent,
  Email,
  EventId,
  Grant,
  GrantId,
  IdempotencyRecord,
  Meeting,
  MeetingId,
  MeetingStore,
  OAuthClient,
  OAuthStore,
  ParticipantId,
  ParticipantRow,
  Sequence,
  Session,
  SessionId,
  SessionStore,
  SigningKey,
  TemplateId,
  Transactor,
  TranscriptSegment,
  User,
  UserId,
  UserStore,
  WebhookEndpoint,
  WebhookEndpointId,
  WebhookStore,
  Workspace,
  WorkspaceId,
  WorkspaceStore
} from "@convene/core"
import { expect } from "@effect/vitest"
import { DateTime, Effect, Option, Ref } from "effect"
import { randomUUID } from "node:crypto"

/** A point in time from an ISO string with an offset. */
export const at = (iso: string): DateTime.Utc => DateTime.unsafeMake(iso)

/** The instant every row is created at unless a test says otherwise. */
export const T0 = at("2026-03-02T09:00:00.000Z")

/** `T0` moved by whole minutes (negative: earlier). */
export const minutes = (n: number, from: DateTime.Utc = T0): DateTime.Utc => DateTime.add(from, { minutes: n })

export const uuid = (): string => randomUUID()

/** A unique e-mail address in the normalised form core keeps (see Email); `tag` keeps failures readable. */
export const email = (tag = "user"): Email => Email.make(`${tag.toLowerCase()}-${uuid()}@example.com`)

/** Two of the built-in templates (templates are fixed rows of every installation). */
export const templateIds = {
  oneOnOne: TemplateId.make("6a1f3c1e-0b6e-4a53-9d1e-1c5d8f0a0001"),
  retrospective: TemplateId.make("6a1f3c1e-0b6e-4a53-9d1e-1c5d8f0a0003")
}

export const workspace = (fields: Partial<Workspace> = {}): Workspace =>
  new Workspace({
    id: WorkspaceId.make(uuid()),
    name: "Contract workspace",
    plan: "PRO",
    default_detail_level: "standard",
    default_template_id: null,
    created_at: T0,
    updated_at: T0,
    ...fields
  })

export const user = (workspaceId: WorkspaceId, fields: Partial<User> = {}): User =>
  new User({
    id: UserId.make(uuid()),
    workspace_id: workspaceId,
    email: email(),
    name: "Ada Lovelace",
    role: "MEMBER",
    password_hash: null,
    created_at: T0,
    updated_at: T0,
    ...fields
  })

export const credential = (workspaceId: WorkspaceId, fields: Partial<Credential> = {}): Credential =>
  new Credential({
    id: CredentialId.make(uuid()),
    workspace_id: workspaceId,
    user_id: null,
    kind: "api_key",
    name: null,
    scopes: ["meetings:read"],
    token_hash: uuid().replaceAll("-", "") + uuid().replaceAll("-", ""),
    client_id: null,
    expires_at: null,
    revoked_at: null,
    created_at: T0,
    ...fields
  })

export const meeting = (workspaceId: WorkspaceId, fields: Partial<Meeting> = {}): Meeting =>
  new Meeting({
    id: MeetingId.make(uuid()),
    workspace_id: workspaceId,
    title: "Weekly sync",
    status: "scheduled",
    start_time: null,
    end_time: null,
    is_instant: false,
    detail_level: "standard",
    template_id: null,
    owner_user_id: null,
    created_at: T0,
    updated_at: T0,
    ...fields
  })

/** A participant row; a guest with a fresh address unless `user_id` or `guest_email` is given. */
export const participant = (of: Meeting, fields: Partial<ParticipantRow> = {}): ParticipantRow =>
  new ParticipantRow({
    id: ParticipantId.make(uuid()),
    workspace_id: of.workspace_id,
    meeting_id: of.id,
    user_id: null,
    guest_email: fields.user_id ? null : email("guest"),
    role: "VIEWER",
    is_attended: false,
    created_at: T0,
    updated_at: T0,
    ...fields
  })

export const segment = (of: Meeting, fields: Partial<TranscriptSegment> = {}): TranscriptSegment =>
  new TranscriptSegment({
    meeting_id: of.id,
    offset_ms: 0,
    speaker: "Ada",
    text: "Hello",
    created_at: T0,
    ...fields
  })

export const agendaItem = (
  of: Meeting,
  fields: Omit<Partial<AgendaItemRow>, "sequence"> & { readonly sequence?: string } = {}
): AgendaItemRow =>
  new AgendaItemRow({
    id: AgendaItemId.make(uuid()),
    workspace_id: of.workspace_id,
    meeting_id: of.id,
    title: "Status",
    description: null,
    item_type: "DISCUSSION",
    presenters: [],
    created_at: T0,
    updated_at: T0,
    ...fields,
    sequence: Sequence.make(fields.sequence ?? "1")
  })

export const actionItem = (of: Meeting, fields: Partial<ActionItem> = {}): ActionItem =>
  new ActionItem({
    id: ActionItemId.make(uuid()),
    workspace_id: of.workspace_id,
    meeting_id: of.id,
    agenda_item_id: null,
    assigned_to_user_id: null,
    title: "Send the notes",
    description: null,
    due_date: null,
    status: "needs_review",
    is_completed: false,
    completed_at: null,
    created_at: T0,
    updated_at: T0,
    ...fields
  })

/** A pending claim made at `T0` that expires five minutes later, in a scope of its own. */
export const pendingClaim = (fields: Partial<IdempotencyRecord> = {}): IdempotencyRecord =>
  new IdempotencyRecord({
    scope: uuid(),
    key: `key-${uuid()}`,
    fingerprint: "POST /v1/meetings abc",
    response: null,
    created_at: T0,
    expires_at: minutes(5),
    ...fields
  })

/** A `meeting.created` event in the workspace by no user, at `T0`. */
export const domainEvent = (workspaceId: WorkspaceId, fields: Partial<DomainEvent> = {}): DomainEvent =>
  new DomainEvent({
    id: EventId.make(uuid()),
    type: "meeting.created",
    workspace_id: workspaceId,
    actor_user_id: null,
    occurred_at: T0,
    data: { id: uuid(), title: "Weekly sync" },
    ...fields
  })

/** A SHA-256 in hex, as the OAuth records keep their secrets: fresh and random. */
export const hash = (): string => (uuid() + uuid()).replaceAll("-", "")

/** A registered client with every optional field set. */
export const oauthClient = (fields: Partial<OAuthClient> = {}): OAuthClient =>
  new OAuthClient({
    client_id: `client-${uuid()}`,
    kind: "registered",
    name: "Contract client",
    redirect_uris: ["https://app.example.com/callback", "http://127.0.0.1/cb"],
    scope: ["meetings:read", "action-items:write"],
    client_uri: "https://app.example.com",
    logo_uri: "https://app.example.com/logo.png",
    registration_token_hash: hash(),
    created_at: T0,
    updated_at: T0,
    ...fields
  })

/** A session of the user, made at `T0`, live for twelve hours. */
export const session = (of: User, fields: Partial<Session> = {}): Session =>
  new Session({
    id: SessionId.make(uuid()),
    token_hash: hash(),
    user_id: of.id,
    workspace_id: of.workspace_id,
    created_at: T0,
    expires_at: minutes(12 * 60),
    revoked_at: null,
    ...fields
  })

/** An unconsumed code of the user for `clientId`, made at `T0`, expiring a minute later. */
export const authorizationCode = (of: User, clientId: string, fields: Partial<AuthorizationCode> = {}): AuthorizationCode =>
  new AuthorizationCode({
    code_hash: hash(),
    grant_id: GrantId.make(uuid()),
    client_id: clientId,
    redirect_uri: "http://127.0.0.1:53682/callback",
    user_id: of.id,
    workspace_id: of.workspace_id,
    scopes: ["meetings:read", "meetings:write"],
    openid: true,
    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    nonce: "n-0S6_WzA2Mj",
    created_at: T0,
    expires_at: minutes(1),
    consumed_at: null,
    ...fields
  })

/** A live grant of the user to `clientId`. */
export const grant = (of: User, clientId: string, fields: Partial<Grant> = {}): Grant =>
  new Grant({
    id: GrantId.make(uuid()),
    workspace_id: of.workspace_id,
    user_id: of.id,
    client_id: clientId,
    scopes: ["meetings:read"],
    openid: false,
    nonce: null,
    created_at: T0,
    revoked_at: null,
    ...fields
  })

/** An active signing key made at `T0`. */
export const signingKey = (fields: Partial<SigningKey> = {}): SigningKey =>
  new SigningKey({
    kid: `kid-${uuid()}`,
    algorithm: "RS256",
    public_jwk: JSON.stringify({ kty: "RSA", n: uuid(), e: "AQAB" }),
    sealed_private_jwk: `sealed.${uuid()}`,
    created_at: T0,
    retired_at: null,
    ...fields
  })

/**
 * A verified endpoint of the workspace subscribed to meeting.created and action_item.completed, made at `T0`, with
 * no creator. Verified by default, so that no other test's endpoint is ever due for a challenge (claims span
 * every workspace): a test that makes verifying endpoints deletes its workspace's rows when it is done.
 */
export const webhookEndpoint = (workspaceId: WorkspaceId, fields: Partial<WebhookEndpoint> = {}): WebhookEndpoint =>
  new WebhookEndpoint({
    id: WebhookEndpointId.make(uuid()),
    workspace_id: workspaceId,
    url: `https://hooks.example.com/${uuid()}`,
    subscribed_events: ["meeting.created", "action_item.completed"],
    status: "verified",
    verification_state: "verified",
    verification_attempt_count: 1,
    verification_last_sent_at: T0,
    verification_retry_until: minutes(24 * 60),
    verified_at: T0,
    last_success_at: null,
    consecutive_failure_count: 0,
    created_at: T0,
    updated_at: T0,
    created_by: null,
    sealed_signing_secret: `sealed.${uuid()}`,
    sealed_verification_token: `sealed.${uuid()}`,
    challenge_claimed_until: null,
    deleted_at: null,
    revision: 0,
    ...fields
  })

/**
 * A delivery of a fresh meeting.created event to the endpoint, made at `T0`. Delivered by default (never due), so
 * that no other test's delivery is ever claimed (claims span every workspace); a test that makes pending ones
 * deletes its workspace's rows when it is done.
 */
export const delivery = (of: WebhookEndpoint, fields: Partial<Delivery> = {}): Delivery =>
  new Delivery({
    id: DeliveryId.make(uuid()),
    workspace_id: of.workspace_id,
    addressee_kind: "workspace_endpoint",
    addressee_id: of.id,
    event_id: EventId.make(uuid()),
    event_type: "meeting.created",
    occurred_at: T0,
    body: JSON.stringify({ event_type: "meeting.created", data: { title: "Ünïcode ✓ \"quoted\"" } }),
    idempotency_key: hash().slice(0, 64),
    state: "delivered",
    attempt_count: 1,
    next_attempt_at: null,
    claimed_until: null,
    created_at: T0,
    updated_at: T0,
    ...fields
  })

export const deliveryAttempt = (of: Delivery, fields: Partial<DeliveryAttempt> = {}): DeliveryAttempt =>
  new DeliveryAttempt({
    delivery_id: of.id,
    number: 1,
    at: T0,
    status_code: 200,
    latency_ms: 42,
    error: null,
    ...fields
  })

export const seedEndpoint = (workspaceId: WorkspaceId, fields: Partial<WebhookEndpoint> = {}) =>
  Effect.gen(function*() {
    const row = webhookEndpoint(workspaceId, fields)
    expect(yield* (yield* WebhookStore).insertEndpoint(row, undefined)).toBe(true)
    return row
  })

export const seedWorkspace = (fields: Partial<Workspace> = {}) =>
  Effect.gen(function*() {
    const row = workspace(fields)
    yield* (yield* WorkspaceStore).insert(row)
    return row
  })

export const seedUser = (workspaceId: WorkspaceId, fields: Partial<User> = {}) =>
  Effect.gen(function*() {
    const row = user(workspaceId, fields)
    yield* (yield* UserStore).insert(row)
    return row
  })

export const seedCredential = (workspaceId: WorkspaceId, fields: Partial<Credential> = {}) =>
  Effect.gen(function*() {
    const row = credential(workspaceId, fields)
    yield* (yield* CredentialStore).insert(row)
    return row
  })

export const seedMeeting = (workspaceId: WorkspaceId, fields: Partial<Meeting> = {}) =>
  Effect.gen(function*() {
    const row = meeting(workspaceId, fields)
    yield* (yield* MeetingStore).insert(row)
    return row
  })

export const seedAgendaItem = (of: Meeting, fields: Parameters<typeof agendaItem>[1] = {}) =>
  Effect.gen(function*() {
    const row = agendaItem(of, fields)
    yield* (yield* AgendaItemStore).insert(row)
    return row
  })

export const seedActionItem = (of: Meeting, fields: Partial<ActionItem> = {}) =>
  Effect.gen(function*() {
    const row = actionItem(of, fields)
    yield* (yield* ActionItemStore).insert(row)
    return row
  })

export const seedOAuthClient = (fields: Partial<OAuthClient> = {}) =>
  Effect.gen(function*() {
    const row = oauthClient(fields)
    yield* (yield* OAuthStore).insertClient(row)
    return row
  })

export const seedSession = (of: User, fields: Partial<Session> = {}) =>
  Effect.gen(function*() {
    const row = session(of, fields)
    yield* (yield* SessionStore).insert(row)
    return row
  })

export const seedCode = (of: User, clientId: string, fields: Partial<AuthorizationCode> = {}) =>
  Effect.gen(function*() {
    const row = authorizationCode(of, clientId, fields)
    yield* (yield* OAuthStore).insertCode(row)
    return row
  })

export const seedGrant = (of: User, clientId: string, fields: Partial<Grant> = {}) =>
  Effect.gen(function*() {
    const row = grant(of, clientId, fields)
    yield* (yield* OAuthStore).insertGrant(row)
    return row
  })

/** A credential of the grant's user, recorded under the grant. */
export const seedGrantCredential = (of: Grant, fields: Partial<Credential> = {}) =>
  Effect.gen(function*() {
    const row = yield* seedCredential(of.workspace_id, {
      user_id: of.user_id,
      kind: "short_lived",
      client_id: of.client_id,
      ...fields
    })
    yield* (yield* OAuthStore).addGrantCredential(of.id, row.id)
    return row
  })

/** A workspace with one meeting in it. */
export const seedMeetingInNewWorkspace = (fields: Partial<Meeting> = {}) =>
  Effect.gen(function*() {
    const ws = yield* seedWorkspace()
    return yield* seedMeeting(ws.id, fields)
  })

/** Makes `user` a participant of `of`. */
export const seedParticipant = (of: Meeting, fields: Partial<ParticipantRow> = {}) =>
  Effect.gen(function*() {
    const [row] = yield* (yield* MeetingStore).addParticipants([participant(of, fields)])
    return row!
  })

/** Ids of rows, to compare lists by identity and order. */
export const ids = (rows: ReadonlyArray<{ readonly id: string }>): ReadonlyArray<string> => rows.map((row) => row.id)

/** `n` distinct ids in ascending order (ids break ties in several orderings). */
export const sortedIds = (n: number): ReadonlyArray<string> => Array.from({ length: n }, uuid).sort()

/** The defect `rolledBack` ends its unit of work with (recognised by class: adapters may hand back a copy). */
class RollBack {
  readonly _tag = "RollBack"
}

/**
 * Runs `effect` inside a unit of work (Transactor), answers what it answered, and rolls the unit back. For
 * looking at a state that must never be committed: on PostgreSQL the deferred foreign keys refuse at commit
 * what the memory store would keep (a meeting deleted while its agenda items remain).
 */
export const rolledBack = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | Transactor> =>
  Effect.gen(function*() {
    const { withTransaction } = yield* Transactor
    const seen = yield* Ref.make(Option.none<A>())
    yield* withTransaction(
      Effect.flatMap(effect, (value) => Effect.zipRight(Ref.set(seen, Option.some(value)), Effect.die(new RollBack())))
    ).pipe(Effect.catchSomeDefect((defect) => (defect instanceof RollBack ? Option.some(Effect.void) : Option.none())))
    return Option.getOrThrow(yield* Ref.get(seen))
  })
