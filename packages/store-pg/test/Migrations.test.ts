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
  Delivery,
  DeliveryAttempt,
  DeliveryId,
  Email,
  EndpointStates,
  EventId,
  foldCase,
  IdempotencyRecord,
  Grant,
  GrantId,
  IdempotencyStore,
  Meeting,
  MeetingFilter,
  MeetingId,
  MeetingStore,
  OAuthStore,
  AuthorizationCode,
  Automation,
  AutomationAction,
  AutomationActionId,
  AutomationId,
  AutomationStore,
  PartnerApp,
  PartnerAppId,
  PartnerStore,
  ParticipantId,
  ParticipantRow,
  Sequence,
  Session,
  SessionId,
  SessionStore,
  StoredResponse,
  Transactor,
  TranscriptSegment,
  User,
  UserId,
  UserStore,
  WebhookEndpointId,
  WebhookStore,
  Workspace,
  WorkspaceId,
  WorkspaceStore
} from "@convene/core"
import { Migrator, SqlClient, SqlError } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { addEqualityTesters, describe, expect, it, layer } from "@effect/vitest"
import { Cause, Context, DateTime, Effect, Either, Exit, Layer, Option, type Redacted, Ref } from "effect"
import { randomUUID } from "node:crypto"
import { layer as storeLayer, layerPg, layerPglite, Migrations, PgliteClient } from "../src/index.js"
import { pgliteDataDir, serverDatabase } from "./fixtures.js"

addEqualityTesters()

const migrationRows = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ migration_id: number; name: string }>`SELECT migration_id, name FROM ${sql(Migrations.table)} ORDER BY migration_id`)

/** Every migration as the Migrator reports it, `[id, name]`, in order. */
const allMigrations = Object.keys(Migrations.migrations).sort().map((key) => [Number(key.slice(0, 4)), key.slice(5)] as const)

/** Runs the migrations through a client (and pool) of its own, as another process would. */
const migrateAlone = (url: Redacted.Redacted) =>
  Effect.scoped(Effect.gen(function*() {
    const context = yield* Layer.build(PgClient.layer({ url, maxConnections: 1 }))
    return yield* Effect.provide(Migrations.run, context)
  }))

const withServerClient = <A, E>(url: Redacted.Redacted, effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.scoped(Effect.flatMap(Layer.build(PgClient.layer({ url })), (context) => Effect.provide(effect, context)))

describe("Migrations on the PostgreSQL server", () => {
  it.scoped("runners starting together on a fresh database all succeed, and each migration runs once", () =>
    Effect.gen(function*() {
      expect(allMigrations.map(([, name]) => name)).toEqual(["init", "rules_in_core", "folded_titles", "operator_administration", "oauth", "events", "webhooks", "backlog", "attachments", "context", "rate_limits", "sign_in_attempts", "partner_apps", "partner_events", "partner_oauth", "partner_rate_limits", "partner_domain_verifications", "partner_idp_configs", "partner_sso_sessions", "partner_toolkits", "partner_workflow_runs"])
      for (let round = 0; round < 3; round++) {
        const url = yield* serverDatabase
        const ran = yield* Effect.all(Array.from({ length: 4 }, () => migrateAlone(url)), { concurrency: "unbounded" })
        expect(ran.filter((migrations) => migrations.length > 0)).toEqual([allMigrations])
        expect(yield* withServerClient(url, migrationRows))
          .toEqual(allMigrations.map(([migration_id, name]) => ({ migration_id, name })))
        expect(yield* migrateAlone(url)).toEqual([])
      }
    }), 60_000)

  it.scoped("two adapter layers starting at once on a fresh database both come up and share the schema", () =>
    Effect.gen(function*() {
      const url = yield* serverDatabase
      const [one, two] = yield* Effect.all([Layer.build(layerPg({ url })), Layer.build(layerPg({ url }))], {
        concurrency: "unbounded"
      })
      const now = DateTime.unsafeMake("2026-03-02T09:00:00.000Z")
      const workspace = new Workspace({
        id: WorkspaceId.make(randomUUID()),
        name: "Shared",
        plan: "FREE",
        default_detail_level: "standard",
        default_template_id: null,
        created_at: now,
        updated_at: now
      })
      yield* Context.get(one, WorkspaceStore).insert(workspace)
      expect(yield* Context.get(two, WorkspaceStore).get(workspace.id)).toEqual(Option.some(workspace))
      const input = { workspaceId: workspace.id, counter: "meetings", period: "2026-03", limit: 1 }
      expect(yield* Context.get(two, WorkspaceStore).consume(input)).toBe(true)
      expect(yield* Context.get(one, WorkspaceStore).consume(input)).toBe(false)
    }), 60_000)
})

describe("Migrations on PGlite", () => {
  it.scoped("migrate concurrently on one client, and only once per directory", () =>
    Effect.gen(function*() {
      const dataDir = yield* pgliteDataDir
      const first = yield* Effect.scoped(Effect.gen(function*() {
        const context = yield* Layer.build(PgliteClient.layer({ dataDir }))
        const ran = yield* Effect.provide(
          Effect.all([Migrations.run, Migrations.run, Migrations.run], { concurrency: "unbounded" }),
          context
        )
        return { ran, rows: yield* Effect.provide(migrationRows, context) }
      }))
      expect(first.ran.filter((migrations) => migrations.length > 0)).toEqual([allMigrations])
      expect(first.rows).toEqual(allMigrations.map(([migration_id, name]) => ({ migration_id, name })))

      // Reopened, the adapter finds the schema in place.
      const again = yield* Effect.scoped(Effect.gen(function*() {
        const context = yield* Layer.build(layerPglite({ dataDir }))
        return yield* Effect.provide(Migrations.run, context)
      }))
      expect(again).toEqual([])
    }), 60_000)
})

// --- Migrations.pending: what `run` would apply, read without applying anything ----------------------------------

const migrationsTableExists = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{ present: boolean }>`SELECT to_regclass(${Migrations.table}) IS NOT NULL AS present`,
    ([row]) => row?.present === true
  ))

/** A fresh database: every migration pending and nothing created; after 0001 alone, the rest; after `run`, none. */
const pendingThenRun = Effect.gen(function*() {
  expect(yield* Migrations.pending).toEqual(allMigrations)
  expect(yield* migrationsTableExists).toBe(false)
  expect(yield* Migrations.pending).toEqual(allMigrations)

  const first = Object.fromEntries(Object.entries(Migrations.migrations).filter(([key]) => key === "0001_init"))
  yield* Migrator.make({})({ loader: Migrator.fromRecord(first), table: Migrations.table })
  expect(yield* Migrations.pending).toEqual(allMigrations.slice(1))
  expect(yield* Migrations.run).toEqual(allMigrations.slice(1))
  expect(yield* Migrations.pending).toEqual([])
  expect(yield* migrationRows).toEqual(allMigrations.map(([migration_id, name]) => ({ migration_id, name })))
})

describe("Migrations.pending", () => {
  it.scoped("on the PostgreSQL server: reads what is pending and applies nothing", () =>
    Effect.flatMap(serverDatabase, (url) => withServerClient(url, pendingThenRun)), 60_000)

  it.scoped("on PGlite: reads what is pending and applies nothing", () =>
    Effect.gen(function*() {
      const dataDir = yield* pgliteDataDir
      yield* Effect.scoped(Effect.flatMap(Layer.build(PgliteClient.layer({ dataDir })), (context) =>
        Effect.provide(pendingThenRun, context)))
    }), 60_000)
})

// --- 0002_rules_in_core: a database of 0001 with data, upgraded; then the foreign keys it leaves ----------------

const T0 = DateTime.unsafeMake("2026-03-02T09:00:00.000Z")
const minutes = (n: number) => DateTime.add(T0, { minutes: n })

/** The rows written under 0001, with the ids the upgrade tests look for. */
const legacy = {
  workspace: WorkspaceId.make(randomUUID()),
  ann: UserId.make(randomUUID()),
  bob: UserId.make(randomUUID()),
  carol: UserId.make(randomUUID()),
  credential: CredentialId.make(randomUUID()),
  tokenHash: randomUUID().replaceAll("-", "").repeat(2),
  meeting: MeetingId.make(randomUUID()),
  ownerRow: ParticipantId.make(randomUUID()),
  guestRow: ParticipantId.make(randomUUID()),
  agendaItem: AgendaItemId.make(randomUUID()),
  actionItem: ActionItemId.make(randomUUID())
}

/** How many rows of each table the legacy database holds. */
const legacyCounts = {
  workspaces: 1,
  workspace_usage: 1,
  users: 3,
  credentials: 1,
  meetings: 1,
  participants: 2,
  transcript_segments: 2,
  agenda_items: 1,
  talking_points: 1,
  action_items: 1,
  idempotency_records: 1
}

const countRows = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const counts: Record<string, number> = {}
  for (const table of Object.keys(legacyCounts)) {
    const [row] = yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM ${sql(table)}`
    counts[table] = row?.n ?? -1
  }
  return counts
})

/** Runs 0001 only and writes the legacy rows in raw SQL (addresses as 0001 let them be: any case, padded). */
const legacyDatabase = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const first = Object.fromEntries(Object.entries(Migrations.migrations).filter(([key]) => key === "0001_init"))
  expect(yield* Migrator.make({})({ loader: Migrator.fromRecord(first), table: Migrations.table })).toEqual([[1, "init"]])
  const at = DateTime.toDateUtc(T0)
  yield* sql`INSERT INTO workspaces ${sql.insert({ id: legacy.workspace, name: "Legacy", plan: "FREE", default_detail_level: "standard", default_template_id: null, created_at: at, updated_at: at })}`
  yield* sql`INSERT INTO workspace_usage ${sql.insert({ workspace_id: legacy.workspace, counter: "meetings", period: "2026-03", used: 3 })}`
  for (const [id, email] of [[legacy.ann, "Ann.Mixed@Example.COM"], [legacy.bob, "  bob@example.org "], [legacy.carol, "carol@example.net"]] as const) {
    yield* sql`INSERT INTO users ${sql.insert({ id, workspace_id: legacy.workspace, email, name: "Legacy user", role: "MEMBER", password_hash: null, created_at: at, updated_at: at })}`
  }
  yield* sql`INSERT INTO credentials (id, workspace_id, user_id, kind, name, scopes, token_hash, client_id, expires_at, revoked_at, created_at)
    VALUES (${legacy.credential}, ${legacy.workspace}, ${legacy.ann}, 'personal_access_token', 'laptop',
      ${["meetings:read", "meetings:write"]}::text[], ${legacy.tokenHash}, NULL, NULL, NULL, ${at})`
  yield* sql`INSERT INTO meetings ${sql.insert({ id: legacy.meeting, workspace_id: legacy.workspace, title: "ΟΔΟΣ Legacy Meeting", status: "scheduled", start_time: at, end_time: null, is_instant: false, detail_level: "standard", template_id: null, owner_user_id: legacy.ann, created_at: at, updated_at: at })}`
  yield* sql`INSERT INTO participants ${sql.insert([
    { id: legacy.ownerRow, workspace_id: legacy.workspace, meeting_id: legacy.meeting, user_id: legacy.ann, guest_email: null, role: "OWNER", is_attended: false, created_at: at, updated_at: at },
    { id: legacy.guestRow, workspace_id: legacy.workspace, meeting_id: legacy.meeting, user_id: null, guest_email: "Guest.Person@Example.COM", role: "VIEWER", is_attended: true, created_at: DateTime.toDateUtc(minutes(1)), updated_at: at }
  ])}`
  yield* sql`INSERT INTO transcript_segments ${sql.insert([
    { workspace_id: legacy.workspace, meeting_id: legacy.meeting, offset_ms: 0, speaker: "Ann", text: "Hello", created_at: at },
    { workspace_id: legacy.workspace, meeting_id: legacy.meeting, offset_ms: 1500, speaker: "Guest", text: "Hi", created_at: at }
  ])}`
  yield* sql`INSERT INTO agenda_items (id, workspace_id, meeting_id, title, description, item_type, sequence, presenters, created_at, updated_at)
    VALUES (${legacy.agendaItem}, ${legacy.workspace}, ${legacy.meeting}, 'Status', NULL, 'DISCUSSION', 2.50, ${[legacy.bob]}::text[], ${at}, ${at})`
  yield* sql`INSERT INTO talking_points (agenda_item_id, subject, points) VALUES (${legacy.agendaItem}, ${legacy.ann}, ${["first", "second"]}::text[])`
  yield* sql`INSERT INTO action_items ${sql.insert({ id: legacy.actionItem, workspace_id: legacy.workspace, meeting_id: legacy.meeting, agenda_item_id: legacy.agendaItem, assigned_to_user_id: legacy.carol, title: "Send notes", description: null, due_date: null, status: "accepted", is_completed: false, completed_at: null, created_at: at, updated_at: at })}`
  yield* sql`INSERT INTO idempotency_records ${sql.insert({ scope: legacy.credential, key: "legacy-key", fingerprint: "f", response_status: 201, response_body: "{}", created_at: at, expires_at: DateTime.toDateUtc(minutes(24 * 60)) })}`
  expect(yield* countRows).toEqual(legacyCounts)
})

/** What migrating the legacy database ran. */
class Upgrade extends Context.Tag("store-pg-test/Upgrade")<Upgrade, ReadonlyArray<readonly [number, string]>>() {}

/** The adapter over a database that was migrated to 0001, given data, then brought up to date. */
const upgradedFrom0001 = <E>(client: Layer.Layer<SqlClient.SqlClient, E>) =>
  storeLayer.pipe(
    Layer.provideMerge(Layer.effect(Upgrade, Effect.zipRight(legacyDatabase, Effect.orDie(Migrations.run)))),
    Layer.provideMerge(client)
  )

/** The unit failed with a foreign key violation of `constraint` (23503), raised when it committed. */
const foreignKeyViolation = (exit: Exit.Exit<unknown, unknown>): ReadonlyArray<string> =>
  Exit.isSuccess(exit) ? [] : [...Cause.defects(exit.cause)].flatMap((defect) => {
    if (!(defect instanceof SqlError.SqlError)) return []
    const cause: unknown = defect.cause
    return typeof cause === "object" && cause !== null && "code" in cause && cause.code === "23503" &&
        "constraint" in cause && typeof cause.constraint === "string"
      ? [cause.constraint]
      : []
  })

const newWorkspace = Effect.gen(function*() {
  const workspace = new Workspace({
    id: WorkspaceId.make(randomUUID()),
    name: "After 0002",
    plan: "PRO",
    default_detail_level: "standard",
    default_template_id: null,
    created_at: T0,
    updated_at: T0
  })
  yield* (yield* WorkspaceStore).insert(workspace)
  return workspace
})

const newMeeting = (workspaceId: WorkspaceId) =>
  Effect.gen(function*() {
    const meeting = new Meeting({
      id: MeetingId.make(randomUUID()),
      workspace_id: workspaceId,
      title: "Doomed?",
      status: "scheduled",
      start_time: null,
      end_time: null,
      is_instant: false,
      detail_level: "standard",
      template_id: null,
      owner_user_id: null,
      created_at: T0,
      updated_at: T0
    })
    yield* (yield* MeetingStore).insert(meeting)
    return meeting
  })

const newAgendaItem = (meeting: Meeting) =>
  Effect.gen(function*() {
    const row = new AgendaItemRow({
      id: AgendaItemId.make(randomUUID()),
      workspace_id: meeting.workspace_id,
      meeting_id: meeting.id,
      title: "Item",
      description: null,
      item_type: "DISCUSSION",
      sequence: Sequence.make("1"),
      presenters: [],
      created_at: T0,
      updated_at: T0
    })
    yield* (yield* AgendaItemStore).insert(row)
    return row
  })

const newActionItem = (meeting: Meeting, agendaItemId: AgendaItemId | null) =>
  Effect.gen(function*() {
    const item = new ActionItem({
      id: ActionItemId.make(randomUUID()),
      workspace_id: meeting.workspace_id,
      meeting_id: meeting.id,
      agenda_item_id: agendaItemId,
      assigned_to_user_id: null,
      title: "Action",
      description: null,
      due_date: null,
      status: "needs_review",
      is_completed: false,
      completed_at: null,
      created_at: T0,
      updated_at: T0
    })
    yield* (yield* ActionItemStore).insert(item)
    return item
  })

/** Runs `work` in a unit of work; answers what it answered inside (if it got that far) and how the unit ended. */
const inUnit = <A>(work: Effect.Effect<A, never, StorePortsOf>) =>
  Effect.gen(function*() {
    const { withTransaction } = yield* Transactor
    const answered = yield* Ref.make(Option.none<A>())
    const exit = yield* Effect.exit(withTransaction(Effect.tap(work, (a) => Ref.set(answered, Option.some(a)))))
    return { inside: yield* Ref.get(answered), exit }
  })

type StorePortsOf = MeetingStore | AgendaItemStore | ActionItemStore

const upgradeSuite = (name: string, client: Layer.Layer<SqlClient.SqlClient, unknown>) =>
  layer(upgradedFrom0001(client), { timeout: "60 seconds" })(`0002_rules_in_core (${name})`, (it) => {
    it.effect("upgrades a database of 0001: e-mail addresses trimmed and lower-cased, nothing lost", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        expect(yield* Upgrade).toEqual([[2, "rules_in_core"], [3, "folded_titles"], [4, "operator_administration"], [5, "oauth"], [6, "events"], [7, "webhooks"], [8, "backlog"], [9, "attachments"], [10, "context"], [11, "rate_limits"], [12, "sign_in_attempts"], [13, "partner_apps"], [14, "partner_events"], [15, "partner_oauth"], [16, "partner_rate_limits"], [17, "partner_domain_verifications"], [18, "partner_idp_configs"], [19, "partner_sso_sessions"], [20, "partner_toolkits"], [21, "partner_workflow_runs"]])
        expect(yield* countRows).toEqual(legacyCounts)
        // 0004 indexes the operator's lists and the columns that point at a user (in place of users_workspace_idx).
        const indexes = yield* sql<{ readonly indexname: string }>`SELECT indexname FROM pg_indexes
          WHERE schemaname = current_schema() AND indexname LIKE ANY(ARRAY['users_%', 'workspaces_%', 'credentials_%',
            'meetings_owner%', 'action_items_assignee%', 'talking_points_%']) ORDER BY indexname`
        expect(indexes.map((row) => row.indexname)).toEqual([
          "action_items_assignee_idx",
          "credentials_pkey",
          "credentials_token_hash_key",
          "credentials_user_created_idx",
          "credentials_workspace_created_idx",
          "meetings_owner_idx",
          "talking_points_pkey",
          "talking_points_subject_idx",
          "users_created_idx",
          "users_email_key",
          "users_pkey",
          "users_workspace_created_idx",
          "workspaces_created_idx",
          "workspaces_pkey"
        ])
        // 0003 keeps each title folded as core folds it, and title search finds the legacy meeting by it.
        expect(yield* sql`SELECT title_folded FROM meetings WHERE id = ${legacy.meeting}`).toEqual([
          { title_folded: foldCase("ΟΔΟΣ Legacy Meeting") }
        ])
        const found = yield* (yield* MeetingStore).list(
          legacy.workspace,
          MeetingFilter.TitleContains({ text: "οδοσ legacy" }),
          "created_desc",
          { limit: 10, offset: 0 }
        )
        expect(found.items.map((meeting) => meeting.id)).toEqual([legacy.meeting])
        expect(yield* sql`SELECT id, email FROM users WHERE workspace_id = ${legacy.workspace} ORDER BY email`).toEqual([
          { id: legacy.ann, email: "ann.mixed@example.com" },
          { id: legacy.bob, email: "bob@example.org" },
          { id: legacy.carol, email: "carol@example.net" }
        ])
        expect(yield* sql`SELECT id, guest_email FROM participants WHERE meeting_id = ${legacy.meeting} ORDER BY created_at`)
          .toEqual([{ id: legacy.ownerRow, guest_email: null }, { id: legacy.guestRow, guest_email: "guest.person@example.com" }])

        // Every row reads back through the ports, as the new rules compare them.
        const users = yield* UserStore
        const ann = new User({
          id: legacy.ann,
          workspace_id: legacy.workspace,
          email: Email.make("ann.mixed@example.com"),
          name: "Legacy user",
          role: "MEMBER",
          password_hash: null,
          created_at: T0,
          updated_at: T0
        })
        expect(yield* users.findByEmail(Email.make("ann.mixed@example.com"))).toEqual(Option.some(ann))
        expect(Option.map(yield* users.findByEmail(Email.make("bob@example.org")), (u) => u.id)).toEqual(Option.some(legacy.bob))
        expect(Option.map(yield* users.findByEmail(Email.make("carol@example.net")), (u) => u.id)).toEqual(Option.some(legacy.carol))
        expect(yield* (yield* CredentialStore).findByHashWithOwner(legacy.tokenHash)).toEqual(Option.some({
          credential: new Credential({
            id: legacy.credential,
            workspace_id: legacy.workspace,
            user_id: legacy.ann,
            kind: "personal_access_token",
            name: "laptop",
            scopes: ["meetings:read", "meetings:write"],
            token_hash: legacy.tokenHash,
            client_id: null,
            expires_at: null,
            revoked_at: null,
            created_at: T0
          }),
          owner: Option.some(ann)
        }))

        const meetings = yield* MeetingStore
        expect(Option.map(yield* meetings.get(legacy.workspace, legacy.meeting), (m) => m.owner_user_id)).toEqual(Option.some(legacy.ann))
        const guest = new ParticipantRow({
          id: legacy.guestRow,
          workspace_id: legacy.workspace,
          meeting_id: legacy.meeting,
          user_id: null,
          guest_email: Email.make("guest.person@example.com"),
          role: "VIEWER",
          is_attended: true,
          created_at: minutes(1),
          updated_at: T0
        })
        const participants = yield* meetings.listParticipants(legacy.workspace, legacy.meeting)
        expect(participants.map((p) => p.id)).toEqual([legacy.ownerRow, legacy.guestRow])
        expect(participants[1]).toEqual(guest)
        expect(yield* meetings.transcript(legacy.workspace, legacy.meeting)).toEqual([
          new TranscriptSegment({ meeting_id: legacy.meeting, offset_ms: 0, speaker: "Ann", text: "Hello", created_at: T0 }),
          new TranscriptSegment({ meeting_id: legacy.meeting, offset_ms: 1500, speaker: "Guest", text: "Hi", created_at: T0 })
        ])
        // The guest index now compares the stored (normalised) address: the same guest is not added twice.
        const again = new ParticipantRow({ ...guest, id: ParticipantId.make(randomUUID()), created_at: minutes(5) })
        expect(yield* meetings.addParticipants([again])).toEqual([guest])

        const agenda = yield* AgendaItemStore
        expect(Option.map(yield* agenda.get(legacy.workspace, legacy.agendaItem), (row) => [row.sequence, row.presenters]))
          .toEqual(Option.some(["2.5", [legacy.bob]]))
        expect(new Map(yield* agenda.talkingPoints([legacy.agendaItem], legacy.ann))).toEqual(new Map([[legacy.agendaItem, ["first", "second"]]]))
        expect(Option.map(yield* (yield* ActionItemStore).get(legacy.workspace, legacy.actionItem), (item) => item.agenda_item_id))
          .toEqual(Option.some(legacy.agendaItem))
        const claim = yield* (yield* IdempotencyStore).begin(
          new IdempotencyRecord({ scope: legacy.credential, key: "legacy-key", fingerprint: "g", response: null, created_at: T0, expires_at: minutes(5) }),
          T0
        )
        expect(claim).toEqual({
          _tag: "Found",
          record: new IdempotencyRecord({
            scope: legacy.credential,
            key: "legacy-key",
            fingerprint: "f",
            response: new StoredResponse({ status: 201, body: "{}" }),
            created_at: T0,
            expires_at: minutes(24 * 60)
          })
        })

        // The address index is plain equality on the normalised form: Ann's address is taken, in any case.
        const clash = new User({ ...ann, id: UserId.make(randomUUID()) })
        const refused = yield* Effect.either(users.insert(clash))
        expect(Either.isLeft(refused) && refused.left._tag).toBe("DuplicateKey")
      }))

    it.effect("deleting a meeting that still has agenda items fails when the unit commits", () =>
      Effect.gen(function*() {
        const ws = yield* newWorkspace
        const meeting = yield* newMeeting(ws.id)
        const item = yield* newAgendaItem(meeting)
        const meetings = yield* MeetingStore
        const { exit, inside } = yield* inUnit(meetings.delete(ws.id, meeting.id))
        // The statement ran (the key is deferred); the commit refused.
        expect(inside).toEqual(Option.some(true))
        expect(foreignKeyViolation(exit)).toEqual(["agenda_items_meeting_id_fkey"])
        expect(yield* meetings.get(ws.id, meeting.id)).toEqual(Option.some(meeting))
        expect(yield* (yield* AgendaItemStore).get(ws.id, item.id)).toEqual(Option.some(item))
        // Outside a unit the statement commits on its own, and fails the same way.
        expect(foreignKeyViolation(yield* Effect.exit(meetings.delete(ws.id, meeting.id)))).toEqual(["agenda_items_meeting_id_fkey"])
        expect(yield* meetings.get(ws.id, meeting.id)).toEqual(Option.some(meeting))
      }))

    it.effect("deleting a meeting that still has action items fails when the unit commits", () =>
      Effect.gen(function*() {
        const ws = yield* newWorkspace
        const meeting = yield* newMeeting(ws.id)
        const action = yield* newActionItem(meeting, null)
        const meetings = yield* MeetingStore
        const { exit, inside } = yield* inUnit(meetings.delete(ws.id, meeting.id))
        expect(inside).toEqual(Option.some(true))
        expect(foreignKeyViolation(exit)).toEqual(["action_items_meeting_id_fkey"])
        expect(yield* meetings.get(ws.id, meeting.id)).toEqual(Option.some(meeting))
        expect(yield* (yield* ActionItemStore).get(ws.id, action.id)).toEqual(Option.some(action))
      }))

    it.effect("deleting an agenda item an action item still points at fails when the unit commits", () =>
      Effect.gen(function*() {
        const ws = yield* newWorkspace
        const meeting = yield* newMeeting(ws.id)
        const item = yield* newAgendaItem(meeting)
        const action = yield* newActionItem(meeting, item.id)
        const agenda = yield* AgendaItemStore
        const { exit, inside } = yield* inUnit(agenda.delete(ws.id, item.id))
        expect(inside).toEqual(Option.some(true))
        expect(foreignKeyViolation(exit)).toEqual(["action_items_agenda_item_id_fkey"])
        expect(yield* agenda.get(ws.id, item.id)).toEqual(Option.some(item))
        expect(yield* (yield* ActionItemStore).get(ws.id, action.id)).toEqual(Option.some(action))
      }))

    it.effect("the cascades core runs (contents first, then the parent) commit", () =>
      Effect.gen(function*() {
        const ws = yield* newWorkspace
        const meetings = yield* MeetingStore
        const agenda = yield* AgendaItemStore
        const actions = yield* ActionItemStore
        const meeting = yield* newMeeting(ws.id)
        const item = yield* newAgendaItem(meeting)
        const kept = yield* newAgendaItem(meeting)
        const pointing = yield* newActionItem(meeting, item.id)
        yield* newActionItem(meeting, null)

        const detach = yield* inUnit(Effect.zipRight(actions.detachAgendaItem(ws.id, item.id), agenda.delete(ws.id, item.id)))
        expect(Exit.isSuccess(detach.exit)).toBe(true)
        expect(Option.map(yield* actions.get(ws.id, pointing.id), (a) => a.agenda_item_id)).toEqual(Option.some(null))

        const remove = yield* inUnit(Effect.gen(function*() {
          yield* actions.deleteByMeeting(ws.id, meeting.id)
          yield* agenda.deleteByMeeting(ws.id, meeting.id)
          return yield* meetings.delete(ws.id, meeting.id)
        }))
        expect(remove.inside).toEqual(Option.some(true))
        expect(Exit.isSuccess(remove.exit)).toBe(true)
        expect(Option.isNone(yield* meetings.get(ws.id, meeting.id))).toBe(true)
        expect(Option.isNone(yield* agenda.get(ws.id, kept.id))).toBe(true)
      }))
  })

upgradeSuite("PostgreSQL", Layer.unwrapScoped(Effect.map(serverDatabase, (url) => PgClient.layer({ url }))))
upgradeSuite("PGlite", Layer.unwrapScoped(Effect.map(pgliteDataDir, (dataDir) => PgliteClient.layer({ dataDir }))))

// --- 0005_oauth: the authorization server's tables, and the foreign keys core's cascades must satisfy ------------

const newUser = (workspaceId: WorkspaceId) =>
  Effect.gen(function*() {
    const user = new User({
      id: UserId.make(randomUUID()),
      workspace_id: workspaceId,
      email: Email.make(`oauth-${randomUUID()}@example.com`),
      name: "Signed in",
      role: "MEMBER",
      password_hash: null,
      created_at: T0,
      updated_at: T0
    })
    yield* (yield* UserStore).insert(user)
    return user
  })

const newGrant = (user: User) =>
  Effect.gen(function*() {
    const grant = new Grant({
      id: GrantId.make(randomUUID()),
      workspace_id: user.workspace_id,
      user_id: user.id,
      client_id: "convene-cli",
      scopes: ["meetings:read"],
      openid: false,
      nonce: null,
      created_at: T0,
      revoked_at: null
    })
    yield* (yield* OAuthStore).insertGrant(grant)
    return grant
  })

/** What a user may hold in the new tables, each written alone. */
const holdings = {
  session: (user: User) =>
    Effect.flatMap(SessionStore, (sessions) =>
      sessions.insert(
        new Session({
          id: SessionId.make(randomUUID()),
          token_hash: randomUUID(),
          user_id: user.id,
          workspace_id: user.workspace_id,
          created_at: T0,
          expires_at: minutes(60),
          revoked_at: null
        })
      )),
  code: (user: User) =>
    Effect.flatMap(OAuthStore, (oauth) =>
      oauth.insertCode(
        new AuthorizationCode({
          code_hash: randomUUID(),
          grant_id: GrantId.make(randomUUID()),
          client_id: "convene-cli",
          redirect_uri: "http://127.0.0.1:1234/cb",
          user_id: user.id,
          workspace_id: user.workspace_id,
          scopes: [],
          openid: false,
          code_challenge: "challenge",
          nonce: null,
          created_at: T0,
          expires_at: minutes(1),
          consumed_at: null
        })
      )),
  grant: (user: User) => Effect.asVoid(newGrant(user))
}

/** Runs `work` in a unit of work; answers how the unit ended. */
const unitExit = <A, E, R>(work: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Transactor, ({ withTransaction }) => Effect.exit(withTransaction(work)))

const oauthSuite = (name: string, adapter: Layer.Layer<StorePortsOfAdapter | SqlClient.SqlClient, unknown>) =>
  layer(adapter, { timeout: "60 seconds" })(`0005_oauth (${name})`, (it) => {
    it.effect("creates the tables with their keys and indexes", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const indexes = yield* sql<{ readonly indexname: string }>`SELECT indexname FROM pg_indexes
          WHERE schemaname = current_schema() AND tablename = ANY(${[
            "oauth_clients",
            "authorization_codes",
            "grants",
            "grant_credentials",
            "signing_keys",
            "sessions",
            "sign_in_failures"
          ]}::text[]) ORDER BY indexname`
        expect(indexes.map((row) => row.indexname)).toEqual([
          "authorization_codes_client_idx",
          "authorization_codes_expires_idx",
          "authorization_codes_pkey",
          "authorization_codes_user_idx",
          "authorization_codes_workspace_idx",
          "grant_credentials_grant_idx",
          "grant_credentials_pkey",
          "grants_client_idx",
          "grants_pkey",
          "grants_user_idx",
          "grants_workspace_idx",
          "oauth_clients_pkey",
          "sessions_expires_idx",
          "sessions_pkey",
          "sessions_revoked_idx",
          "sessions_token_hash_key",
          "sessions_user_idx",
          "sessions_workspace_idx",
          "sign_in_failures_at_idx",
          "sign_in_failures_attempt_idx",
          "sign_in_failures_key_at_idx",
          "sign_in_failures_pkey",
          "signing_keys_active_key",
          "signing_keys_pkey"
        ])
      }))

    it.effect("deleting a user who still has a session, a code or a grant fails when the unit commits", () =>
      Effect.gen(function*() {
        const users = yield* UserStore
        const ws = yield* newWorkspace
        const expected = { session: "sessions_user_id_fkey", code: "authorization_codes_user_id_fkey", grant: "grants_user_id_fkey" }
        for (const [kind, hold] of Object.entries(holdings)) {
          const user = yield* newUser(ws.id)
          yield* hold(user)
          expect(foreignKeyViolation(yield* unitExit(users.delete(user.id)))).toEqual([expected[kind as keyof typeof expected]])
          expect(yield* users.get(user.id)).toEqual(Option.some(user))
        }
      }))

    it.effect("deleting a credential still recorded under a grant fails when the unit commits; with the grant it commits", () =>
      Effect.gen(function*() {
        const credentials = yield* CredentialStore
        const oauth = yield* OAuthStore
        const ws = yield* newWorkspace
        const user = yield* newUser(ws.id)
        const grant = yield* newGrant(user)
        const credential = new Credential({
          id: CredentialId.make(randomUUID()),
          workspace_id: ws.id,
          user_id: user.id,
          kind: "short_lived",
          name: null,
          scopes: ["meetings:read"],
          token_hash: randomUUID(),
          client_id: "convene-cli",
          expires_at: minutes(60),
          revoked_at: null,
          created_at: T0
        })
        yield* credentials.insert(credential)
        yield* oauth.addGrantCredential(grant.id, credential.id)

        expect(foreignKeyViolation(yield* unitExit(credentials.deleteByUser(user.id))))
          .toEqual(["grant_credentials_credential_id_fkey"])
        expect(yield* oauth.grantOf(credential.id)).toEqual(Option.some(grant.id))

        const exit = yield* unitExit(Effect.zipRight(credentials.deleteByUser(user.id), oauth.deleteByUser(user.id)))
        expect(Exit.isSuccess(exit)).toBe(true)
        expect(yield* credentials.get(ws.id, credential.id)).toEqual(Option.none())
        expect(yield* oauth.grantOf(credential.id)).toEqual(Option.none())
      }))

    it.effect("a grant's grant-credential rows go with it (ON DELETE CASCADE)", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const oauth = yield* OAuthStore
        const ws = yield* newWorkspace
        const user = yield* newUser(ws.id)
        const grant = yield* newGrant(user)
        const credentialId = CredentialId.make(randomUUID())
        yield* (yield* CredentialStore).insert(new Credential({
          id: credentialId,
          workspace_id: ws.id,
          user_id: user.id,
          kind: "refresh_token",
          name: null,
          scopes: [],
          token_hash: randomUUID(),
          client_id: "convene-cli",
          expires_at: null,
          revoked_at: null,
          created_at: T0
        }))
        yield* oauth.addGrantCredential(grant.id, credentialId)
        yield* sql`DELETE FROM grants WHERE id = ${grant.id}`
        expect(yield* sql`SELECT * FROM grant_credentials WHERE grant_id = ${grant.id}`).toEqual([])
      }))
  })

type StorePortsOfAdapter = Layer.Layer.Success<typeof storeLayer>

oauthSuite("PostgreSQL", Layer.unwrapScoped(Effect.map(serverDatabase, (url) => layerPg({ url }))))
oauthSuite("PGlite", Layer.unwrapScoped(Effect.map(pgliteDataDir, (dataDir) => layerPglite({ dataDir }))))

/** A verifying endpoint of the workspace, made at `T0` by `createdBy`. */
const newEndpoint = (workspaceId: WorkspaceId, createdBy: UserId | null) =>
  Effect.gen(function*() {
    const endpoint = EndpointStates.created({
      id: WebhookEndpointId.make(randomUUID()),
      workspace_id: workspaceId,
      url: "https://hooks.example.com/receive",
      subscribed_events: ["meeting.created"],
      created_by: createdBy,
      sealed_signing_secret: "sealed",
      sealed_verification_token: "sealed"
    }, T0)
    expect(yield* (yield* WebhookStore).insertEndpoint(endpoint, undefined)).toBe(true)
    return endpoint
  })

const webhooksSuite = (name: string, adapter: Layer.Layer<StorePortsOfAdapter | SqlClient.SqlClient, unknown>) =>
  layer(adapter, { timeout: "60 seconds" })(`0007_webhooks (${name})`, (it) => {
    it.effect("creates the tables with their keys and the indexes the claims and lists use", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const indexes = yield* sql<{ readonly indexname: string }>`SELECT indexname FROM pg_indexes
          WHERE schemaname = current_schema()
            AND tablename = ANY(${["webhook_endpoints", "deliveries", "delivery_attempts"]}::text[])
          ORDER BY indexname`
        expect(indexes.map((row) => row.indexname)).toEqual([
          "deliveries_addressee_idx",
          "deliveries_due_idx",
          "deliveries_finished_created_idx",
          "deliveries_pkey",
          "deliveries_workspace_idx",
          "delivery_attempts_pkey",
          "webhook_endpoints_created_by_idx",
          "webhook_endpoints_pkey",
          "webhook_endpoints_subscribers_idx",
          "webhook_endpoints_verifying_idx",
          "webhook_endpoints_workspace_created_idx"
        ])
      }))

    it.effect("deleting an endpoint's creator fails when the unit commits, unless the endpoint lets go of them first", () =>
      Effect.gen(function*() {
        const users = yield* UserStore
        const webhooks = yield* WebhookStore
        const ws = yield* newWorkspace
        const user = yield* newUser(ws.id)
        const endpoint = yield* newEndpoint(ws.id, user.id)
        expect(foreignKeyViolation(yield* unitExit(users.delete(user.id)))).toEqual(["webhook_endpoints_created_by_fkey"])
        expect(Exit.isSuccess(yield* unitExit(Effect.zipRight(webhooks.detachCreator(user.id), users.delete(user.id))))).toBe(true)
        expect(Option.map(yield* webhooks.getEndpoint(ws.id, endpoint.id), (row) => row.created_by)).toEqual(Option.some(null))
      }))

    it.effect("deleting a workspace that still has endpoints or deliveries fails when the unit commits", () =>
      Effect.gen(function*() {
        const workspaces = yield* WorkspaceStore
        const webhooks = yield* WebhookStore
        const ws = yield* newWorkspace
        const endpoint = yield* newEndpoint(ws.id, null)
        expect(foreignKeyViolation(yield* unitExit(workspaces.delete(ws.id)))).toEqual(["webhook_endpoints_workspace_id_fkey"])
        const delivery = new Delivery({
          id: DeliveryId.make(randomUUID()),
          workspace_id: ws.id,
          addressee_kind: "workspace_endpoint",
          addressee_id: endpoint.id,
          event_id: EventId.make(randomUUID()),
          event_type: "meeting.created",
          occurred_at: T0,
          body: "{}",
          idempotency_key: "k",
          state: "pending",
          attempt_count: 0,
          next_attempt_at: T0,
          claimed_until: null,
          created_at: T0,
          updated_at: T0
        })
        yield* webhooks.enqueue([delivery])
        const sql = yield* SqlClient.SqlClient
        yield* sql`DELETE FROM webhook_endpoints WHERE id = ${endpoint.id}`
        expect(foreignKeyViolation(yield* unitExit(workspaces.delete(ws.id)))).toEqual(["deliveries_workspace_id_fkey"])
        // A delivery's attempts go with it (ON DELETE CASCADE).
        yield* webhooks.recordAttempt(delivery, Option.some(new DeliveryAttempt({
          delivery_id: delivery.id,
          number: 1,
          at: T0,
          status_code: 500,
          latency_ms: 3,
          error: null
        })))
        expect(Exit.isSuccess(yield* unitExit(Effect.zipRight(webhooks.deleteByWorkspace(ws.id), workspaces.delete(ws.id))))).toBe(true)
        expect(yield* sql`SELECT * FROM delivery_attempts WHERE delivery_id = ${delivery.id}`).toEqual([])
      }))
  })

webhooksSuite("PostgreSQL", Layer.unwrapScoped(Effect.map(serverDatabase, (url) => layerPg({ url }))))
webhooksSuite("PGlite", Layer.unwrapScoped(Effect.map(pgliteDataDir, (dataDir) => layerPglite({ dataDir }))))

/** An active partner app with fresh unique slug and client id. */
const newPartnerApp = Effect.gen(function*() {
  const app = new PartnerApp({
    id: PartnerAppId.make(randomUUID()),
    name: "Acme Notes",
    slug: `acme-${randomUUID()}`,
    status: "active",
    webhook_url: null,
    co_brand_name: null,
    co_brand_logo_url: null,
    client_id: `cvp_${randomUUID()}`,
    redirect_uris: ["https://acme.example/cb"],
    api_key_hash: "a".repeat(64),
    client_secret_hash: "b".repeat(64),
    sealed_webhook_secret: null,
    created_at: T0,
    updated_at: T0
  })
  yield* (yield* PartnerStore).insert(app)
  return app
})

const partnerAppsSuite = (name: string, adapter: Layer.Layer<StorePortsOfAdapter | SqlClient.SqlClient, unknown>) =>
  layer(adapter, { timeout: "60 seconds" })(`0013_partner_apps (${name})`, (it) => {
    it.effect("creates the tables with their keys, the unique slug and client id, and the indexes the lists use", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const indexes = yield* sql<{ readonly indexname: string }>`SELECT indexname FROM pg_indexes
          WHERE schemaname = current_schema() AND tablename = ANY(${["partner_apps", "partner_app_workspaces"]}::text[])
          ORDER BY indexname`
        expect(indexes.map((row) => row.indexname)).toEqual([
          "partner_app_workspaces_connected_idx",
          "partner_app_workspaces_pkey",
          "partner_app_workspaces_workspace_idx",
          "partner_apps_client_id_key",
          "partner_apps_created_idx",
          "partner_apps_pkey",
          "partner_apps_slug_key"
        ])
      }))

    it.effect("deleting a workspace that is still connected to a partner app fails when the unit commits; with its connections it commits", () =>
      Effect.gen(function*() {
        const workspaces = yield* WorkspaceStore
        const partners = yield* PartnerStore
        const ws = yield* newWorkspace
        const app = yield* newPartnerApp
        yield* partners.connect({ appId: app.id, workspaceId: ws.id, at: T0 })
        expect(foreignKeyViolation(yield* unitExit(workspaces.delete(ws.id)))).toEqual(["partner_app_workspaces_workspace_id_fkey"])
        expect(Exit.isSuccess(yield* unitExit(Effect.zipRight(partners.deleteByWorkspace(ws.id), workspaces.delete(ws.id))))).toBe(true)
        expect((yield* partners.listWorkspaces(app.id, { limit: 20, offset: 0 })).total).toBe(0)
      }))

    it.effect("a connection to an app that does not exist fails when the unit commits", () =>
      Effect.gen(function*() {
        const partners = yield* PartnerStore
        const ws = yield* newWorkspace
        const exit = yield* unitExit(partners.connect({ appId: PartnerAppId.make(randomUUID()), workspaceId: ws.id, at: T0 }))
        expect(foreignKeyViolation(exit)).toEqual(["partner_app_workspaces_partner_app_id_fkey"])
      }))
  })

partnerAppsSuite("PostgreSQL", Layer.unwrapScoped(Effect.map(serverDatabase, (url) => layerPg({ url }))))
partnerAppsSuite("PGlite", Layer.unwrapScoped(Effect.map(pgliteDataDir, (dataDir) => layerPglite({ dataDir }))))

/** An automation of the app with one action. */
const newAutomation = (appId: PartnerAppId) =>
  new Automation({
    id: AutomationId.make(randomUUID()),
    partner_app_id: appId,
    name: "Tell the CRM",
    description: null,
    trigger_type: "meeting_ended",
    actions: [new AutomationAction({ id: AutomationActionId.make(randomUUID()), type: "webhook", webhook_url: "https://crm.example.com/a" })],
    enabled: true,
    created_at: T0
  })

const partnerEventsSuite = (name: string, adapter: Layer.Layer<StorePortsOfAdapter | SqlClient.SqlClient, unknown>) =>
  layer(adapter, { timeout: "60 seconds" })(`0014_partner_events (${name})`, (it) => {
    it.effect("adds the apps' sealed webhook secret (null for the apps made before) and the automation tables with their indexes", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [column] = yield* sql<{ readonly is_nullable: string; readonly data_type: string }>`SELECT is_nullable, data_type
          FROM information_schema.columns
          WHERE table_schema = current_schema() AND table_name = 'partner_apps' AND column_name = 'sealed_webhook_secret'`
        expect(column).toEqual({ is_nullable: "YES", data_type: "text" })
        const indexes = yield* sql<{ readonly indexname: string }>`SELECT indexname FROM pg_indexes
          WHERE schemaname = current_schema() AND tablename = ANY(${["partner_automations", "partner_automation_actions"]}::text[])
          ORDER BY indexname`
        expect(indexes.map((row) => row.indexname)).toEqual([
          "partner_automation_actions_automation_id_position_key",
          "partner_automation_actions_pkey",
          "partner_automations_app_created_idx",
          "partner_automations_app_trigger_idx",
          "partner_automations_pkey"
        ])
        const app = yield* newPartnerApp
        const [stored] = yield* sql<{ readonly sealed_webhook_secret: string | null }>`SELECT sealed_webhook_secret FROM partner_apps
          WHERE id = ${app.id}`
        expect(stored).toEqual({ sealed_webhook_secret: null })
      }))

    it.effect("an automation of an app that does not exist fails when the unit commits, its actions with it", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const automations = yield* AutomationStore
        const orphan = newAutomation(PartnerAppId.make(randomUUID()))
        expect(foreignKeyViolation(yield* unitExit(automations.insert(orphan)))).toEqual(["partner_automations_partner_app_id_fkey"])
        expect(yield* sql`SELECT id FROM partner_automation_actions WHERE automation_id = ${orphan.id}`).toEqual([])
        const exit = yield* unitExit(sql`INSERT INTO partner_automation_actions (id, automation_id, position, type, webhook_url)
          VALUES (${randomUUID()}, ${randomUUID()}, 0, 'webhook', 'https://crm.example.com/b')`)
        expect(foreignKeyViolation(exit)).toEqual(["partner_automation_actions_automation_id_fkey"])
        const app = yield* newPartnerApp
        const kept = newAutomation(app.id)
        expect(Exit.isSuccess(yield* unitExit(automations.insert(kept)))).toBe(true)
        expect(yield* automations.getByAction(kept.actions[0]!.id)).toEqual(Option.some(kept))
      }))
  })

partnerEventsSuite("PostgreSQL", Layer.unwrapScoped(Effect.map(serverDatabase, (url) => layerPg({ url }))))
partnerEventsSuite("PGlite", Layer.unwrapScoped(Effect.map(pgliteDataDir, (dataDir) => layerPglite({ dataDir }))))
