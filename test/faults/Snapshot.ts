/**
 * Everything a store holds, to compare before and after an operation.
 *
 * A snapshot is, per table, the sorted rows of the whole store, each row in canonical JSON (keys sorted,
 * timestamps as ISO strings). Each fault suite shares one store (one database) between its cases
 * and gives each case its own workspace; the cases run one after another and nothing else writes to
 * that store, so a snapshot of the whole store, compared as "rows added and rows removed" per table, sees
 * exactly what one operation did. A changed row reads as one row removed and one added.
 *
 * - On PostgreSQL and PGlite (`sqlLayer`) every base table of the schema is read through the SqlClient, each
 *   row whole (`to_jsonb`), each table ordered: tables added by later migrations are covered without a change
 *   here.
 * - On the memory store (`memoryLayer`) the one state value behind the ports is read, and each of its
 *   collections is laid out as the table PostgreSQL keeps the same rows in (so that the expected changes of a
 *   case are written once for every store). The layout is exhaustive over the state's fields: a field added to
 *   the state fails to type-check here until it is laid out.
 */
import type { StorePorts } from "@convene/core"
import type { layerPglite } from "@convene/store-pg"
import { eventsIn, Memory } from "@convene/store-memory"
import { Context, DateTime, Effect, HashMap, Layer, Record } from "effect"

/** Table name to its rows (canonical JSON), sorted. */
export type Snapshot = ReadonlyMap<string, ReadonlyArray<string>>

/** What changed in one table. */
export interface TableChange {
  readonly added: ReadonlyArray<string>
  readonly removed: ReadonlyArray<string>
}

export class StoreSnapshot extends Context.Tag("test/faults/StoreSnapshot")<StoreSnapshot, {
  /** Everything the store holds now (what was committed: read outside any unit of work). */
  readonly take: Effect.Effect<Snapshot>
}>() {}

/** A value as plain JSON data: DateTimes and Dates as ISO strings, bigints as strings, object keys sorted. */
const plain = (value: unknown): unknown => {
  if (DateTime.isDateTime(value)) return DateTime.formatIso(DateTime.toUtc(value))
  if (value instanceof Date) return value.toISOString()
  if (typeof value === "bigint") return value.toString()
  if (Array.isArray(value)) return value.map(plain)
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, member]) => [key, plain(member)])
    )
  }
  return value
}

const canonical = (row: unknown): string => JSON.stringify(plain(row))

const snapshotOf = (rows: Iterable<readonly [table: string, row: unknown]>): Snapshot => {
  const tables = new Map<string, Array<string>>()
  for (const [table, row] of rows) {
    const list = tables.get(table) ?? []
    list.push(canonical(row))
    tables.set(table, list)
  }
  return new Map([...tables].map(([table, list]) => [table, list.sort()]))
}

/** Per table, the rows `after` has and `before` lacks (added) and the reverse (removed); unchanged tables are left out. */
export const diff = (before: Snapshot, after: Snapshot): Record<string, TableChange> => {
  const changes: Record<string, TableChange> = {}
  for (const table of new Set([...before.keys(), ...after.keys()])) {
    const remaining = new Map<string, number>()
    for (const row of before.get(table) ?? []) remaining.set(row, (remaining.get(row) ?? 0) + 1)
    const added: Array<string> = []
    for (const row of after.get(table) ?? []) {
      const left = remaining.get(row) ?? 0
      if (left > 0) remaining.set(row, left - 1)
      else added.push(row)
    }
    const removed = [...remaining].flatMap(([row, count]) => Array.from({ length: count }, () => row))
    if (added.length > 0 || removed.length > 0) changes[table] = { added, removed }
  }
  return changes
}

/** `diff` as counts: per changed table, how many rows were added and removed. */
export const counts = (changes: Record<string, TableChange>): Record<string, { readonly added: number; readonly removed: number }> =>
  Object.fromEntries(
    Object.entries(changes).map(([table, change]) => [table, { added: change.added.length, removed: change.removed.length }])
  )

// ---- PostgreSQL and PGlite ----

/**
 * @effect/sql's SqlClient, as the store-pg layers provide it. The test package does not depend on @effect/sql
 * itself, so the tag is rebuilt from @effect/sql's key, with the very service type store-pg's layer outputs.
 */
type SqlClient = Exclude<Layer.Layer.Success<ReturnType<typeof layerPglite>>, StorePorts>
const SqlClient = Context.GenericTag<SqlClient>("@effect/sql/SqlClient")

/**
 * Every base table of the current schema, read in one statement: each row as `to_jsonb` of the whole row,
 * each table ordered by its rows. The list of tables is read once, on the first snapshot (the schema does not
 * change while the suites run; the migrations are done before the store's layer is up).
 */
export const sqlLayer: Layer.Layer<StoreSnapshot, never, SqlClient> = Layer.effect(
  StoreSnapshot,
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const tables = yield* Effect.cached(Effect.map(
      sql<{ readonly table_name: string }>`
        SELECT table_name FROM information_schema.tables
        WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
        ORDER BY table_name`,
      (rows) => rows.map((row) => row.table_name)
    ))
    return StoreSnapshot.of({
      take: Effect.gen(function*() {
        const names = yield* tables
        const rows = yield* sql<{ readonly table_name: string; readonly row: string }>`${
          sql.join(" UNION ALL ", false)(
            names.map((name) =>
              sql`(SELECT ${name}::text AS table_name, to_jsonb(t)::text AS row FROM ${sql(name)} t ORDER BY 2)`
            )
          )
        } ORDER BY 1, 2`
        return snapshotOf(rows.map((row): readonly [string, unknown] => [row.table_name, JSON.parse(row.row)]))
      }).pipe(Effect.orDie)
    })
  }).pipe(Effect.orDie)
)

// ---- memory ----

type State = Effect.Effect.Success<Context.Tag.Service<typeof Memory>["read"]>

/** The rows of a map kept per workspace. */
const perWorkspace = <K, V>(table: HashMap.HashMap<unknown, HashMap.HashMap<K, V>>): Array<V> =>
  [...HashMap.values(table)].flatMap((rows) => [...HashMap.values(rows)])

/** Each collection of the state as the rows of the PostgreSQL table that keeps them (indexes under their own names). */
const memoryTables: { readonly [K in keyof State]: (value: State[K]) => Array<readonly [string, unknown]> } = {
  workspaces: (table) => [...HashMap.values(table)].map((row) => ["workspaces", row]),
  usage: (table) => [...table].map(([key, used]) => ["workspace_usage", { key, used }]),
  users: (table) => [...HashMap.values(table)].map((row) => ["users", row]),
  userEmails: (table) => [...table].map(([email, id]) => ["users (by email)", { email, id }]),
  credentials: (table) => [...HashMap.values(table)].map((row) => ["credentials", row]),
  tokenHashes: (table) => [...table].map(([hash, id]) => ["credentials (by token hash)", { hash, id }]),
  meetings: (table) =>
    perWorkspace(table).flatMap((entry) => [
      ["meetings", entry.meeting] as const,
      ...entry.participants.map((row) => ["participants", row] as const),
      ...entry.transcript.map((row, index) => ["transcript_segments", { index, ...row }] as const)
    ]),
  agendaItems: (table) => perWorkspace(table).map((row) => ["agenda_items", row]),
  talkingPoints: (table) =>
    [...table].flatMap(([agenda_item_id, bySubject]) =>
      [...bySubject].map(([subject, points]) => ["talking_points", { agenda_item_id, subject, points }] as const)
    ),
  actionItems: (table) => perWorkspace(table).map((row) => ["action_items", row]),
  backlogItems: (table) => perWorkspace(table).map((row) => ["backlog_items", row]),
  backlogTalkingPoints: (table) =>
    [...table].flatMap(([backlog_item_id, bySubject]) =>
      [...bySubject].map(([subject, points]) => ["backlog_talking_points", { backlog_item_id, subject, points }] as const)
    ),
  contextItems: (table) => perWorkspace(table).map(({ row, text }) => ["context_items", { ...row, text }]),
  attachments: (table) => perWorkspace(table).map((row) => ["attachments", row]),
  idempotency: (table) => [...HashMap.values(table)].map((row) => ["idempotency_records", row]),
  oauthClients: (table) => [...HashMap.values(table)].map((row) => ["oauth_clients", row]),
  authorizationCodes: (table) => [...HashMap.values(table)].map((row) => ["authorization_codes", row]),
  grants: (table) => [...HashMap.values(table)].map((row) => ["grants", row]),
  grantCredentials: (table) =>
    [...table].flatMap(([grant_id, ids]) =>
      ids.map((credential_id, index) => ["grant_credentials", { grant_id, credential_id, index }] as const)
    ),
  credentialGrants: (table) =>
    [...table].map(([credential_id, grant_id]) => ["grant_credentials (by credential)", { credential_id, grant_id }]),
  signingKeys: (table) => [...HashMap.values(table)].map((row) => ["signing_keys", row]),
  sessions: (table) => [...HashMap.values(table)].map((row) => ["sessions", row]),
  sessionHashes: (table) => [...table].map(([hash, id]) => ["sessions (by token hash)", { hash, id }]),
  signInFailures: (table) =>
    [...table].flatMap(([key, attempts]) => attempts.map(({ at, attempt }) => ["sign_in_failures", { key, at, attempt }] as const)),
  events: (table) =>
    [...HashMap.values(table)].flatMap((run) =>
      eventsIn(run).map(({ event, position }) => ["events", { position, ...event }] as const)
    ),
  // The identity sequence behind `position` on PostgreSQL: not a table there, nor a row here.
  eventPosition: () => [],
  webhookEndpoints: (table) => perWorkspace(table).map((row) => ["webhook_endpoints", row]),
  deliveries: (table) => [...HashMap.values(table)].map((row) => ["deliveries", row]),
  deliveryAttempts: (table) => [...HashMap.values(table)].flatMap((attempts) => attempts.map((row) => ["delivery_attempts", row] as const)),
  partnerApps: (table) => [...HashMap.values(table)].map((row) => ["partner_apps", row]),
  partnerConnections: (table) => [...HashMap.values(table)].map((row) => ["partner_app_workspaces", row]),
  automations: (table) =>
    [...HashMap.values(table)].flatMap(({ actions, ...automation }) => [
      ["partner_automations", automation] as const,
      ...actions.map((action, position) =>
        ["partner_automation_actions", { id: action.id, automation_id: automation.id, position, type: action.type, webhook_url: action.webhook_url }] as const
      )
    ]),
  domainVerifications: (table) => [...HashMap.values(table)].map((row) => ["partner_domain_verifications", row]),
  idpConfigs: (table) => [...HashMap.values(table)].map((row) => ["partner_idp_configs", row]),
  ssoSessions: (table) => [...HashMap.values(table)].map((row) => ["partner_sso_sessions", row]),
  toolkits: (table) => [...HashMap.values(table)].map((row) => ["partner_toolkits", row]),
  toolkitVersions: (table) => [...HashMap.values(table)].map((row) => ["partner_toolkit_versions", row]),
  toolkitInstallations: (table) => [...HashMap.values(table)].map((row) => ["partner_toolkit_installations", row]),
  toolkitOptOuts: (table) => [...HashMap.keys(table)].map((workspace_id) => ["workspace_toolkit_opt_outs", { workspace_id }]),
  workflowRuns: (table) => [...HashMap.values(table)].map((row) => ["workflow_runs", row]),
  workflowTasks: (table) => [...HashMap.values(table)].map((row) => ["workflow_tasks", row])
}

const layOut = <K extends keyof State>(state: State, key: K) => memoryTables[key](state[key])

/** The memory store's committed state, laid out as tables. */
export const memoryLayer: Layer.Layer<StoreSnapshot, never, Memory> = Layer.effect(
  StoreSnapshot,
  Effect.map(Memory, (memory) =>
    StoreSnapshot.of({
      take: Effect.map(memory.read, (state) =>
        snapshotOf(Record.keys(memoryTables).flatMap((key) => layOut(state, key))))
    })))
