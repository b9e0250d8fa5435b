/**
 * The @effect/workflow spike (issue 14, docs/workflow-engine-evaluation.md): `pnpm spike:workflow`.
 *
 * Runs the spike's workflow (prepare → deliver → human review as a DurableDeferred → finish, see workflow-child.mjs)
 * on the ClusterWorkflowEngine in child processes, and checks:
 * 1. PostgreSQL (a fresh database on 127.0.0.1:5432, dropped at the end): a runner killed with SIGKILL in the middle of
 *    the deliver step; another process resumes the run; completed steps do not run again, the interrupted one does
 *    with the same idempotency key; the run then waits for its review with no process running at all; a third
 *    process resolves the review and the run completes; a second resolution changes nothing.
 * 2. Several processes sharing the database: two runners and a client-only process that starts six runs; one runner
 *    killed; the other finishes every run.
 * 3. PGlite (Convene's embedded store): the cluster's own migration and its SQL runner storage there (both expected
 *    to hang), then the same kill-and-resume with the runner kept in memory.
 * Prints one line per check and a JSON summary; exits 1 if a check fails.
 */
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { versions } from "./workflow-modules.mjs"

const child = fileURLToPath(new URL("./workflow-child.mjs", import.meta.url))
const server = process.env.SPIKE_PG_URL ?? "postgres://postgres@127.0.0.1:5432"
const database = `spike_${randomBytes(6).toString("hex")}`
const databaseUrl = `${server}/${database}`
const results = []
const measures = {}
const children = new Set()

const check = (name, ok, detail = "") => {
  results.push({ name, ok, detail })
  process.stdout.write(`${ok ? "ok  " : "FAIL"} ${name}${detail === "" ? "" : ` — ${detail}`}\n`)
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** A child process of the spike: its JSON events as they come, and ways to wait for one or for its exit. */
const run = (mode, runIds, env = {}) => {
  const spawnedAt = performance.now()
  const proc = spawn(process.execPath, [child, mode, runIds.join(",")], {
    env: { ...process.env, SPIKE_DATABASE_URL: databaseUrl, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.add(proc)
  const events = []
  const waiters = []
  let stderr = ""
  let buffered = ""
  proc.stdout.on("data", (chunk) => {
    buffered += chunk
    for (let newline = buffered.indexOf("\n"); newline >= 0; newline = buffered.indexOf("\n")) {
      const line = buffered.slice(0, newline)
      buffered = buffered.slice(newline + 1)
      const event = { ...JSON.parse(line), at: performance.now() - spawnedAt }
      events.push(event)
      for (const waiter of [...waiters]) if (waiter.test(event)) waiter.resolve(event)
    }
  })
  proc.stderr.on("data", (chunk) => stderr += chunk)
  const exited = new Promise((resolve) =>
    proc.on("exit", (code, signal) => {
      children.delete(proc)
      resolve({ code, signal, at: performance.now() - spawnedAt })
    })
  )
  /** The first event matching `test`, or undefined after `ms`. */
  const waitFor = (test, ms = 15_000) => {
    const seen = events.find(test)
    if (seen) return Promise.resolve(seen)
    return new Promise((resolve) => {
      const waiter = { test, resolve: (event) => { clearTimeout(timer); waiters.splice(waiters.indexOf(waiter), 1); resolve(event) } }
      const timer = setTimeout(() => waiter.resolve(undefined), ms)
      waiters.push(waiter)
    })
  }
  /** The exit, or undefined if the process is still running after `ms`. */
  const exit = (ms = 15_000) => Promise.race([exited, sleep(ms).then(() => undefined)])
  return { proc, events, waitFor, exit, stderr: () => stderr, pid: proc.pid }
}

const killHard = async (handle) => {
  handle.proc.kill("SIGKILL")
  await handle.exit()
}

const is = (event, step) => (e) => e.event === event && (step === undefined || e.step === step || e.runId === step)

const db = new pg.Client({ connectionString: `${server}/postgres` })
await db.connect()
await db.query(`CREATE DATABASE ${database}`)
const spikeDb = new pg.Client({ connectionString: databaseUrl })
await spikeDb.connect()
await spikeDb.query(
  "CREATE TABLE spike_effects (id serial PRIMARY KEY, run_id text, step text, note text, pid int, at timestamptz DEFAULT now())"
)

/** How many times each step ran for `runId`, the pids that ran it and its notes (the idempotency keys). */
const effects = async (runId) => {
  const { rows } = await spikeDb.query("SELECT step, pid, note FROM spike_effects WHERE run_id = $1 ORDER BY id", [runId])
  const by = {}
  for (const row of rows) {
    by[row.step] ??= { count: 0, pids: [], notes: [] }
    by[row.step].count++
    by[row.step].pids.push(row.pid)
    by[row.step].notes.push(row.note)
  }
  return (step) => by[step] ?? { count: 0, pids: [], notes: [] }
}

const waitUntil = async (predicate, ms = 15_000) => {
  const deadline = performance.now() + ms
  while (performance.now() < deadline) {
    if (await predicate()) return true
    await sleep(100)
  }
  return false
}

/**
 * Two runners (env1, env2) and a client-only process that starts `runIds`; once every run waits for its review, the
 * busiest runner is killed and a client-only process resolves every review.
 */
const severalRunners = async (runIds, env1, env2) => {
  const w1 = run("work", [], env1)
  const w2 = run("work", [], env2)
  await Promise.all([w1.waitFor(is("ready")), w2.waitFor(is("ready"))])
  const sender = run("send", runIds)
  const sent = (await sender.exit())?.code === 0
  const like = `${runIds[0][0]}%`
  const delivered = await waitUntil(async () => {
    const { rows } = await spikeDb.query(
      "SELECT count(DISTINCT run_id)::int AS n FROM spike_effects WHERE step = 'deliver-done' AND run_id LIKE $1",
      [like]
    )
    return rows[0].n === runIds.length
  })
  const { rows: byPid } = await spikeDb.query(
    "SELECT pid, count(*)::int AS n FROM spike_effects WHERE run_id LIKE $1 GROUP BY pid ORDER BY n DESC",
    [like]
  )
  const [busy, other] = byPid[0]?.pid === w2.pid ? [w2, w1] : [w1, w2]
  await killHard(busy)
  const killedAt = performance.now()
  const resolver = run("resolve", runIds, { SPIKE_CLIENT_ONLY: "1" })
  const resolved = await Promise.all(runIds.map((runId) => resolver.waitFor(is("result", runId), 20_000)))
  const failoverMs = Math.round(performance.now() - killedAt)
  const finishedCount = resolved.filter((event) => event?.exit === "approved=true by=reviewer@example.com").length
  let exactlyOnce = true
  for (const runId of runIds) {
    const s = await effects(runId)
    exactlyOnce &&= s("prepare").count === 1 && s("deliver-done").count === 1 &&
      (s("finish").count === 0 || (s("finish").count === 1 && s("finish").pids[0] === other.pid))
  }
  await killHard(resolver)
  await killHard(other)
  return {
    sent,
    delivered,
    byPid,
    finished: finishedCount === runIds.length,
    finishedCount,
    failoverMs,
    exactlyOnce,
    detail: resolver.stderr().slice(0, 300)
  }
}

try {
  // --- 1. kill mid-run, resume elsewhere, wait with nothing running, resolve from another process -------------------
  const a = run("start", ["r1"], { SPIKE_SLOW_DELIVER: "1" })
  const aReady = await a.waitFor(is("ready"))
  measures.startupToReadyMs = aReady && Math.round(aReady.at)
  measures.layerBuildMsInProcess = aReady && aReady.ms
  const inDeliver = await a.waitFor(is("effect", "deliver-started"))
  check("A ran prepare and entered deliver", inDeliver !== undefined, a.stderr().slice(0, 300))
  await killHard(a)
  const killedAt = performance.now()

  const b = run("work", [], { SPIKE_WORK_MS: "6000" })
  const bDelivered = await b.waitFor(is("effect", "deliver-done"))
  measures.resumeAfterSigkillMs = bDelivered && Math.round(performance.now() - killedAt)
  check("B, another process, resumed the run after A's SIGKILL", bDelivered !== undefined, b.stderr().slice(0, 300))
  const bWaiting = await b.waitFor(is("waiting-for-review", "r1"))
  check("B reached the human review and suspended the run", bWaiting !== undefined)
  const bExit = await b.exit(15_000)
  measures.gracefulExitAfterProgramMs = bExit && Math.round(bExit.at - (b.events.find(is("exited-program"))?.at ?? 0))
  check("B exits by itself once its program ends (no handle left open)", bExit?.code === 0, JSON.stringify(bExit))

  let steps = await effects("r1")
  check("prepare ran once across the kill", steps("prepare").count === 1, `pids ${steps("prepare").pids}`)
  check(
    "deliver, interrupted by the kill, ran again in B (at least once, not exactly once)",
    steps("deliver-started").count === 2 && steps("deliver-done").count === 1 &&
      steps("deliver-done").pids[0] === b.pid,
    `started by ${steps("deliver-started").pids}, done by ${steps("deliver-done").pids}`
  )
  check(
    "both attempts of deliver had the same idempotency key (Activity.idempotencyKey)",
    new Set(steps("deliver-started").notes).size === 1
  )
  check("finish has not run while the review is pending", steps("finish").count === 0)
  const { rows: pending } = await spikeDb.query(
    "SELECT entity_type, tag, processed, count(*)::int AS n FROM cluster_messages GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
  )
  measures.messagesWhileWaiting = pending
  const { rows: sessions } = await db.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1", [database])
  check("no process is connected while the run waits (nothing held in memory)", sessions[0].n === 1, `${sessions[0].n} sessions, the spike's own included`)

  const c = run("resolve", ["r1"])
  const cResult = await c.waitFor(is("result", "r1"))
  check(
    "C, a third process, resolved the review and the run completed",
    cResult?.exit === "approved=true by=reviewer@example.com",
    JSON.stringify(cResult?.exit ?? c.stderr().slice(0, 300))
  )
  await c.exit()
  const d = run("resolve", ["r1"])
  const dResult = await d.waitFor(is("result", "r1"))
  await d.exit()
  steps = await effects("r1")
  check("a second resolution answers the same result and runs nothing again", dResult?.exit === cResult?.exit && steps("finish").count === 1)

  // --- 2. several processes sharing the database ---------------------------------------------------------------
  // 2a. Runners with the same (default) address: the advisory locks give every shard to one of them.
  const many = ["m1", "m2", "m3", "m4", "m5", "m6"]
  const sharedPids = await severalRunners(many, {}, {})
  measures.stepsByRunnerSameAddress = sharedPids.byPid
  measures.sameAddressFailoverMs = sharedPids.failoverMs
  check("same address: a client-only process (no runner address) starts runs and exits", sharedPids.sent)
  check("same address: two runners on one database ran the six runs up to the review", sharedPids.delivered, JSON.stringify(sharedPids.byPid))
  check("same address: one runner held every shard (active/passive, no load sharing)", sharedPids.byPid.length === 1)
  check(
    "same address: after the busy runner's SIGKILL the other finished every run (resolved from a client-only process)",
    sharedPids.finished && sharedPids.exactlyOnce,
    sharedPids.detail
  )

  // 2b. Runners with addresses of their own (nothing listens on them: SingleRunner has no runner transport, messages
  // go through the tables): the shards are shared out; a killed runner stops heartbeating and, once its row is older
  // than shardLockExpiration (5 s here, 35 s by default), the other takes its shards over.
  const distinct = ["n1", "n2", "n3", "n4", "n5", "n6"]
  const ownPids = await severalRunners(distinct, { SPIKE_RUNNER_PORT: "40101" }, { SPIKE_RUNNER_PORT: "40102" })
  measures.stepsByRunnerOwnAddresses = ownPids.byPid
  check("own addresses: the six runs were shared out between the two runners", ownPids.delivered && ownPids.byPid.length === 2, JSON.stringify(ownPids.byPid))
  measures.ownAddressesFailoverMs = ownPids.failoverMs
  check(
    "own addresses: after one runner's SIGKILL the other took its shards over and finished every run, each step once",
    ownPids.finished && ownPids.exactlyOnce,
    `${ownPids.finishedCount} of 6 finished, ${ownPids.failoverMs} ms after the kill`
  )

  // --- 3. PGlite -------------------------------------------------------------------------------------------------
  const pgliteRoot = mkdtempSync(join(tmpdir(), "spike-pglite-"))
  try {
    const migrating = run("work", [], { SPIKE_PGLITE_DIR: join(pgliteRoot, "own-migration"), SPIKE_PGLITE_CLUSTER_MIGRATION: "1" })
    const migrated = await migrating.waitFor(is("ready"), 15_000)
    check("PGlite: the cluster's own migration never finishes (two statements in one prepared statement)", migrated === undefined)
    await killHard(migrating)

    const sqlRunner = run("work", [], { SPIKE_PGLITE_DIR: join(pgliteRoot, "sql-runner"), SPIKE_PGLITE_RUNNER_STORAGE: "sql" })
    const sqlRunnerReady = await sqlRunner.waitFor(is("ready"), 15_000)
    check("PGlite: the SQL runner storage never starts (its reserved lock connection holds the one session)", sqlRunnerReady === undefined)
    await killHard(sqlRunner)

    const dir = join(pgliteRoot, "memory-runner")
    const p1 = run("start", ["p1"], { SPIKE_PGLITE_DIR: dir, SPIKE_SLOW_DELIVER: "1" })
    const p1Ready = await p1.waitFor(is("ready"), 30_000)
    measures.pgliteStartupToReadyMs = p1Ready && Math.round(p1Ready.at)
    const p1InDeliver = await p1.waitFor(is("effect", "deliver-started"))
    await killHard(p1)
    const p2 = run("resolve", ["p1"], { SPIKE_PGLITE_DIR: dir })
    const p2Result = await p2.waitFor(is("result", "p1"), 20_000)
    const p2Exit = await p2.exit()
    const p2Steps = p2.events.filter(is("effect")).map((e) => e.step)
    check(
      "PGlite, runner in memory, tables created by hand: killed in deliver, resumed and completed by the next process",
      p1InDeliver !== undefined && p2Result?.exit === "approved=true by=reviewer@example.com" && p2Exit?.code === 0 &&
        p2Steps.join(",") === "deliver-started,deliver-done,finish",
      `steps in the second process: ${p2Steps.join(", ")} ${p2.stderr().slice(0, 300)}`
    )
  } finally {
    rmSync(pgliteRoot, { recursive: true, force: true })
  }
} finally {
  for (const proc of children) proc.kill("SIGKILL")
  await spikeDb.end()
  await db.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
  await db.end()
}

const failed = results.filter((result) => !result.ok)
process.stdout.write(JSON.stringify({ versions, measures, passed: results.length - failed.length, failed: failed.length }, null, 2) + "\n")
process.exitCode = failed.length === 0 ? 0 : 1
