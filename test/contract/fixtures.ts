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
  Credential,
  CredentialId,
  CredentialStore,
  Email,
  IdempotencyRecord,
  Meeting,
  MeetingId,
  MeetingStore,
  ParticipantId,
  ParticipantRow,
  Sequence,
  TemplateId,
  Transactor,
  TranscriptSegment,
  User,
  UserId,
  UserStore,
  Workspace,
  WorkspaceId,
  WorkspaceStore
} from "@convene/core"
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
