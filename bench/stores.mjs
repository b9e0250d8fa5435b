// The store work every peer server does (bare node:http, Fastify, Express), shared so that they differ only in their
// HTTP layer: authenticate by the SHA-256 of the bearer token, read a meeting, list meetings with their total, and
// create an action item under an idempotency key (claimed first, completed in the item's transaction).
//
// `seed` (written by bench/run.mjs) holds the token, its workspace and user, and the meetings that Convene created, so
// the memory store answers the same bodies. The SQL stores read Convene's tables: `target` is the PGlite data directory
// or the PostgreSQL URL.
import { createHash, randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"

export const sha256 = (s) => createHash("sha256").update(s).digest("hex")

/** The bodies the servers answer with besides the resources, byte for byte the same everywhere. */
export const bodies = {
  unauthorized: "{\"code\":\"unauthorized\"}",
  invalidToken: "{\"code\":\"invalid_token\"}",
  notFound: "{\"code\":\"not_found\"}",
  keyReuse: "{\"code\":\"idempotency_key_reuse\"}",
  internal: (error) => JSON.stringify({ code: "internal_server_error", detail: String(error) })
}

/** `?limit=` as Convene reads it: 20 by default, clamped to 1..100. */
export const pageLimit = (raw) => Math.min(Math.max(Number(raw ?? 20) || 20, 1), 100)

/** A meeting id in a path: anything else is 404, as in Convene. */
export const isMeetingId = (s) => /^[0-9a-f-]{36}$/.test(s)

/**
 * What an idempotency key is bound to: the request line and the parsed body (the frameworks hand over the parsed
 * body, so every server fingerprints that, re-serialized, rather than the raw bytes).
 */
export const fingerprint = (url, body) => sha256(`POST ${url}\n${JSON.stringify(body)}`)

const meetingColumns =
  "id, workspace_id, title, status, start_time, end_time, is_instant, detail_level, template_id, owner_user_id, created_at, updated_at"
const actionColumns =
  "id, workspace_id, meeting_id, agenda_item_id, assigned_to_user_id, title, description, due_date, status, is_completed, completed_at, created_at, updated_at"

const iso = (v) => (v === null || v === undefined ? null : v instanceof Date ? v.toISOString() : new Date(v).toISOString())
const meetingJson = (r) => ({
  id: r.id,
  workspace_id: r.workspace_id,
  title: r.title,
  status: r.status,
  start_time: iso(r.start_time),
  end_time: iso(r.end_time),
  is_instant: r.is_instant,
  detail_level: r.detail_level,
  template_id: r.template_id,
  owner_user_id: r.owner_user_id,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at)
})

const memoryStore = (seed) => {
  const credentials = new Map([[sha256(seed.token), { workspace_id: seed.workspaceId, user_id: seed.userId, expires_at: null, revoked_at: null }]])
  const meetings = new Map(seed.meetings.map((m) => [m.id, m]))
  const ordered = [...seed.meetings].sort((a, b) => (a.created_at < b.created_at ? 1 : -1))
  const actions = new Map()
  const keys = new Map()
  return {
    authenticate: async (hash) => credentials.get(hash),
    meeting: async (ws, id) => {
      const m = meetings.get(id)
      return m && m.workspace_id === ws ? m : undefined
    },
    meetings: async (ws, limit) => {
      const rows = ordered.filter((m) => m.workspace_id === ws)
      return { items: rows.slice(0, limit), total: rows.length }
    },
    createAction: async (principal, key, print, body) => {
      const existing = keys.get(key)
      if (existing) return existing.fingerprint === print ? { replay: existing.body } : { reuse: true }
      const now = new Date().toISOString()
      const item = {
        id: randomUUID(), workspace_id: principal.workspace_id, meeting_id: body.meeting_id, agenda_item_id: null,
        assigned_to_user_id: null, title: body.title, description: null, due_date: null, status: "needs_review",
        is_completed: false, completed_at: null, created_at: now, updated_at: now
      }
      actions.set(item.id, item)
      const text = JSON.stringify(item)
      keys.set(key, { fingerprint: print, body: text })
      return { created: text }
    }
  }
}

/** PGlite: one session, its queries serialized like Convene's PGlite client. */
const pgliteSession = async (dataDir) => {
  const { PGlite } = await import("@electric-sql/pglite")
  const db = await PGlite.create({ dataDir })
  let chain = Promise.resolve()
  const serialize = (f) => {
    const run = chain.then(f, f)
    chain = run.then(() => undefined, () => undefined)
    return run
  }
  return {
    query: (text, params) => serialize(() => db.query(text, params).then((r) => r.rows)),
    transaction: (f) => serialize(() => db.transaction((tx) => f((text, params) => tx.query(text, params).then((r) => r.rows))))
  }
}

/** PostgreSQL: a pool of 10 connections. */
const pgSession = async (url) => {
  const { default: pg } = await import("pg")
  const pool = new pg.Pool({ connectionString: url, max: 10 })
  return {
    query: (text, params) => pool.query(text, params).then((r) => r.rows),
    transaction: async (f) => {
      const client = await pool.connect()
      try {
        await client.query("BEGIN")
        const out = await f((text, params) => client.query(text, params).then((r) => r.rows))
        await client.query("COMMIT")
        return out
      } catch (error) {
        await client.query("ROLLBACK")
        throw error
      } finally {
        client.release()
      }
    }
  }
}

const sqlStore = ({ query, transaction }) => ({
  authenticate: async (hash) =>
    (await query("SELECT workspace_id, user_id, expires_at, revoked_at FROM credentials WHERE token_hash = $1", [hash]))[0],
  meeting: async (ws, id) =>
    (await query(`SELECT ${meetingColumns} FROM meetings WHERE workspace_id = $1 AND id = $2`, [ws, id])).map(meetingJson)[0],
  meetings: async (ws, limit) => {
    const [rows, count] = await Promise.all([
      query(`SELECT ${meetingColumns} FROM meetings WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`, [ws, limit]),
      query("SELECT count(*)::int AS n FROM meetings WHERE workspace_id = $1", [ws])
    ])
    return { items: rows.map(meetingJson), total: count[0].n }
  },
  createAction: async (principal, key, print, body) => {
    const now = new Date()
    const claimed = await query(
      `INSERT INTO idempotency_records (scope, key, fingerprint, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING key`,
      [principal.credential, key, print, now, new Date(now.getTime() + 300_000)]
    )
    if (claimed.length === 0) {
      const [row] = await query("SELECT fingerprint, response_body FROM idempotency_records WHERE scope = $1 AND key = $2", [principal.credential, key])
      return row.fingerprint === print ? { replay: row.response_body } : { reuse: true }
    }
    return transaction(async (q) => {
      const [meeting] = await q("SELECT id FROM meetings WHERE workspace_id = $1 AND id = $2", [principal.workspace_id, body.meeting_id])
      if (!meeting) return { missing: true }
      const [row] = await q(
        `INSERT INTO action_items (id, workspace_id, meeting_id, title, status, is_completed, created_at, updated_at)
         VALUES ($1, $2, $3, $4, 'needs_review', false, $5, $5) RETURNING ${actionColumns}`,
        [randomUUID(), principal.workspace_id, body.meeting_id, body.title, now]
      )
      const text = JSON.stringify({
        ...row, completed_at: iso(row.completed_at), created_at: iso(row.created_at), updated_at: iso(row.updated_at)
      })
      await q(
        "UPDATE idempotency_records SET response_status = 201, response_body = $3, expires_at = $4 WHERE scope = $1 AND key = $2",
        [principal.credential, key, text, new Date(now.getTime() + 86_400_000)]
      )
      return { created: text }
    })
  }
})

/**
 * A store is four operations: authenticate(hash), meeting(ws, id), meetings(ws, limit) → {items, total}, and
 * createAction(principal, key, fingerprint, body) → {created} | {replay} | {reuse} | {missing}, with JSON text for
 * the created or replayed item.
 */
export const makeStore = async (mode, seed, target) => {
  if (mode === "memory") return memoryStore(seed)
  if (mode === "pglite") return sqlStore(await pgliteSession(target))
  if (mode === "pg") return sqlStore(await pgSession(target))
  throw new Error(`unknown store: ${mode}`)
}

/**
 * The principal behind an `Authorization` header, or the error body for a 401: the token's SHA-256 looked up, its
 * expiry and revocation checked. The idempotency scope is the hash's first 36 characters.
 */
export const authenticate = async (store, header) => {
  const match = /^Bearer +(\S+)$/i.exec(header ?? "")
  if (!match) return { error: bodies.unauthorized }
  const hash = sha256(match[1])
  const credential = await store.authenticate(hash)
  if (!credential || credential.revoked_at || (credential.expires_at && new Date(credential.expires_at) <= new Date())) {
    return { error: bodies.invalidToken }
  }
  return { principal: { workspace_id: credential.workspace_id, credential: hash.slice(0, 36) } }
}

/** The command line every peer server takes: `<memory|pglite|pg> <port> <seed.json> [dataDir | databaseUrl]`. */
export const fromArgs = async (argv) => {
  const [mode, port, seedFile, target] = argv
  const store = await makeStore(mode, JSON.parse(readFileSync(seedFile, "utf8")), target)
  return { mode, port: Number(port), store }
}
