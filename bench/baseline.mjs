// The bare node:http baseline: the same work as Convene for the benchmarked endpoints, with nothing else.
// For each request: parse the bearer token, hash it and look the hash up, check expiry/revocation, read
// (or write) the rows, write the JSON. No framework, no schemas, no tracing, no error envelope beyond a status.
//
//   node bench/baseline.mjs <memory|pglite|pg> <port> <seed.json> [dataDir | databaseUrl]
//
// `seed.json` (written by bench/run.mjs) holds the token, its workspace and user, and the meetings that
// Convene created, so the memory baseline answers the same bodies. The SQL baselines read Convene's tables.
import { createHash, randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import { createServer } from "node:http"

const [mode, port, seedFile, target] = process.argv.slice(2)
const seed = JSON.parse(readFileSync(seedFile, "utf8"))
const sha256 = (s) => createHash("sha256").update(s).digest("hex")

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

/** A store is three operations: authenticate(hash), meeting(ws, id), meetings(ws, limit), createAction(...). */
const makeStore = async () => {
  if (mode === "memory") {
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
      createAction: async (principal, key, fingerprint, body) => {
        const existing = keys.get(key)
        if (existing) return existing.fingerprint === fingerprint ? { replay: existing.body } : { reuse: true }
        const now = new Date().toISOString()
        const item = {
          id: randomUUID(), workspace_id: principal.workspace_id, meeting_id: body.meeting_id, agenda_item_id: null,
          assigned_to_user_id: null, title: body.title, description: null, due_date: null, status: "needs_review",
          is_completed: false, completed_at: null, created_at: now, updated_at: now
        }
        actions.set(item.id, item)
        const text = JSON.stringify(item)
        keys.set(key, { fingerprint, body: text })
        return { created: text }
      }
    }
  }

  let query, transaction
  if (mode === "pglite") {
    const { PGlite } = await import("@electric-sql/pglite")
    const db = await PGlite.create({ dataDir: target })
    // One session, serialized like Convene's PGlite client.
    let chain = Promise.resolve()
    const serialize = (f) => {
      const run = chain.then(f, f)
      chain = run.then(() => undefined, () => undefined)
      return run
    }
    query = (text, params) => serialize(() => db.query(text, params).then((r) => r.rows))
    transaction = (f) => serialize(() => db.transaction((tx) => f((text, params) => tx.query(text, params).then((r) => r.rows))))
  } else {
    const { default: pg } = await import("pg")
    const pool = new pg.Pool({ connectionString: target, max: 10 })
    query = (text, params) => pool.query(text, params).then((r) => r.rows)
    transaction = async (f) => {
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
  return {
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
    createAction: async (principal, key, fingerprint, body) => {
      const now = new Date()
      const claimed = await query(
        `INSERT INTO idempotency_records (scope, key, fingerprint, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING key`,
        [principal.credential, key, fingerprint, now, new Date(now.getTime() + 300_000)]
      )
      if (claimed.length === 0) {
        const [row] = await query("SELECT fingerprint, response_body FROM idempotency_records WHERE scope = $1 AND key = $2", [principal.credential, key])
        return row.fingerprint === fingerprint ? { replay: row.response_body } : { reuse: true }
      }
      return transaction(async (q) => {
        const [meeting] = await q("SELECT id FROM meetings WHERE workspace_id = $1 AND id = $2", [principal.workspace_id, body.meeting_id])
        if (!meeting) return { missing: true }
        const id = randomUUID()
        const [row] = await q(
          `INSERT INTO action_items (id, workspace_id, meeting_id, title, status, is_completed, created_at, updated_at)
           VALUES ($1, $2, $3, $4, 'needs_review', false, $5, $5) RETURNING ${actionColumns}`,
          [id, principal.workspace_id, body.meeting_id, body.title, now]
        )
        const text = JSON.stringify({
          ...row, due_date: row.due_date, completed_at: iso(row.completed_at), created_at: iso(row.created_at), updated_at: iso(row.updated_at)
        })
        await q(
          `UPDATE idempotency_records SET response_status = 201, response_body = $3, expires_at = $4 WHERE scope = $1 AND key = $2`,
          [principal.credential, key, text, new Date(now.getTime() + 86_400_000)]
        )
        return { created: text }
      })
    }
  }
}

const store = await makeStore()

const send = (res, status, body, headers = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers })
  res.end(body)
}

const readBody = (req) =>
  new Promise((resolve, reject) => {
    let data = ""
    req.setEncoding("utf8")
    req.on("data", (chunk) => (data += chunk))
    req.on("end", () => resolve(data))
    req.on("error", reject)
  })

createServer(async (req, res) => {
  try {
    const match = /^Bearer +(\S+)$/i.exec(req.headers.authorization ?? "")
    if (!match) return send(res, 401, "{\"code\":\"unauthorized\"}")
    const hash = sha256(match[1])
    const credential = await store.authenticate(hash)
    if (!credential || credential.revoked_at || (credential.expires_at && new Date(credential.expires_at) <= new Date())) {
      return send(res, 401, "{\"code\":\"invalid_token\"}")
    }
    const principal = { workspace_id: credential.workspace_id, credential: hash.slice(0, 36) }
    const url = new URL(req.url, "http://x")
    if (req.method === "GET" && url.pathname === "/v1/meetings") {
      const limit = Math.min(Math.max(Number(url.searchParams.get("limit") ?? 20) || 20, 1), 100)
      const page = await store.meetings(principal.workspace_id, limit)
      return send(res, 200, JSON.stringify({ items: page.items, total: page.total, limit, offset: 0 }))
    }
    const meetingPath = /^\/v1\/meetings\/([0-9a-f-]{36})$/.exec(url.pathname)
    if (req.method === "GET" && meetingPath) {
      const meeting = await store.meeting(principal.workspace_id, meetingPath[1])
      return meeting ? send(res, 200, JSON.stringify(meeting)) : send(res, 404, "{\"code\":\"not_found\"}")
    }
    if (req.method === "POST" && url.pathname === "/v1/action-items") {
      const text = await readBody(req)
      const body = JSON.parse(text)
      const key = req.headers["idempotency-key"]
      const outcome = await store.createAction(principal, key, sha256(`POST ${req.url}\n${text}`), body)
      if (outcome.created) return send(res, 201, outcome.created)
      if (outcome.replay) return send(res, 201, outcome.replay, { "idempotent-replayed": "true" })
      if (outcome.reuse) return send(res, 422, "{\"code\":\"idempotency_key_reuse\"}")
      return send(res, 404, "{\"code\":\"not_found\"}")
    }
    send(res, 404, "{\"code\":\"not_found\"}")
  } catch (error) {
    send(res, 500, JSON.stringify({ code: "internal_server_error", detail: String(error) }))
  }
}).listen(Number(port), "127.0.0.1", () => console.log(`baseline ${mode} listening on ${port}`))
