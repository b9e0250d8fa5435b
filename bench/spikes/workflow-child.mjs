/**
 * One process of the workflow spike (see workflow-engine.mjs): a runner of the ClusterWorkflowEngine over PostgreSQL
 * (SingleRunner: SQL message storage, SQL runner storage, shard locks as advisory locks), with the spike's workflow
 * registered. What it does is its first argument:
 * - `start <runIds>`: starts runs (discard: the call returns once the start message is stored) and keeps running.
 * - `work`: runs whatever its shards hold, until killed or until SPIKE_WORK_MS has passed (then it exits cleanly).
 * - `resolve <runIds>`: completes each run's human review (a DurableDeferred) and waits for the runs' results
 *   (SPIKE_CLIENT_ONLY=1: as a client only, leaving the work to the runners).
 * - `send <runIds>`: starts runs as a client only (no runner address: it holds no shard) and exits.
 * <runIds> is a comma-separated list. Other settings: SPIKE_DATABASE_URL, or SPIKE_PGLITE_DIR for PGlite;
 * SPIKE_SLOW_DELIVER=1 makes the deliver step sleep five minutes after its first row (to be killed there).
 * Every activity writes a row in spike_effects (run_id, step, pid) so the parent can count how often each ran.
 * Lines on stdout are JSON.
 */
import { readFileSync } from "node:fs"
import {
  Activity, ClusterWorkflowEngine, DurableDeferred, Duration, Effect, Exit, Layer, Logger, LogLevel, Option, PgClient,
  Redacted, RunnerAddress, Schema, SingleRunner, SqlClient, Workflow
} from "./workflow-modules.mjs"

const [mode, runIdList = ""] = process.argv.slice(2)
const runIds = runIdList.split(",")
const clientOnly = mode === "send" || process.env.SPIKE_CLIENT_ONLY === "1"
const url = process.env.SPIKE_DATABASE_URL
const slowDeliver = process.env.SPIKE_SLOW_DELIVER === "1"
const bootedAt = performance.now()
const say = (event, fields = {}) =>
  process.stdout.write(JSON.stringify({ event, pid: process.pid, ms: Math.round(performance.now() - bootedAt), ...fields }) + "\n")

const Review = DurableDeferred.make("review", { success: Schema.Struct({ approved: Schema.Boolean, by: Schema.String }) })

const SpikeRun = Workflow.make({
  name: "SpikeRun",
  payload: { runId: Schema.String },
  success: Schema.String,
  idempotencyKey: ({ runId }) => runId
})

const record = (runId, step, note = null) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO spike_effects (run_id, step, note, pid) VALUES (${runId}, ${step}, ${note}, ${process.pid})`).pipe(
    Effect.tap(() => say("effect", { step })),
    Effect.orDie
  )

const SpikeRunLive = SpikeRun.toLayer(Effect.fnUntraced(function*({ runId }) {
  yield* Activity.make({
    name: "prepare",
    execute: Effect.flatMap(Activity.idempotencyKey("prepare"), (key) => record(runId, "prepare", key))
  })
  yield* Activity.make({
    name: "deliver",
    execute: Effect.gen(function*() {
      // The key a webhook step would send as its Idempotency-Key: the same on every attempt of this step.
      const key = yield* Activity.idempotencyKey("deliver")
      yield* record(runId, "deliver-started", key)
      if (slowDeliver) yield* Effect.sleep(Duration.minutes(5))
      yield* record(runId, "deliver-done", key)
    })
  })
  say("waiting-for-review", { runId })
  const review = yield* DurableDeferred.await(Review)
  return yield* Activity.make({
    name: "finish",
    success: Schema.String,
    execute: Effect.as(record(runId, "finish"), `approved=${review.approved} by=${review.by}`)
  })
}))

const pgliteDir = process.env.SPIKE_PGLITE_DIR

/**
 * On PGlite (SPIKE_PGLITE_DIR): Convene's PgliteClient from packages/store-pg/dist, the cluster's tables created from
 * cluster-tables.sql (its own migration hangs there), and spike_effects created here (no other process can open the
 * directory while this one holds it).
 */
const PgliteLive = Layer.unwrapEffect(Effect.promise(async () => {
  const { layer } = await import("../../packages/store-pg/dist/PgliteClient.js")
  const ddl = readFileSync(new URL("./cluster-tables.sql", import.meta.url), "utf8")
  const prepare = Layer.effectDiscard(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [{ exists }] = yield* sql`SELECT to_regclass('cluster_messages') IS NOT NULL AS exists`
    if (!exists && process.env.SPIKE_PGLITE_CLUSTER_MIGRATION !== "1") yield* sql.unsafe(ddl).unprepared
    if (!exists) {
      yield* sql`CREATE TABLE spike_effects (id serial PRIMARY KEY, run_id text, step text, note text, pid int, at timestamptz DEFAULT now())`
    }
  }).pipe(Effect.orDie))
  return Layer.provideMerge(prepare, layer({ dataDir: pgliteDir }))
}))

const PgLive = pgliteDir ? PgliteLive : PgClient.layer({ url: Redacted.make(url), maxConnections: 4 })

const shardingConfig = {
  // Polling faster than the defaults (10 s for messages), so the spike does not wait on timers.
  entityMessagePollInterval: Duration.millis(250),
  entityReplyPollInterval: Duration.millis(100),
  refreshAssignmentsInterval: Duration.millis(500),
  shardLockRefreshInterval: Duration.seconds(1),
  shardLockExpiration: Duration.seconds(5),
  shardsPerGroup: Number(process.env.SPIKE_SHARDS ?? 30),
  // A client only (no runner address) stores messages for the runners and polls for replies; it holds no shard.
  ...(clientOnly ? { runnerAddress: Option.none() } : {}),
  ...(process.env.SPIKE_RUNNER_PORT ? { runnerAddress: Option.some(RunnerAddress.make("localhost", Number(process.env.SPIKE_RUNNER_PORT))) } : {})
}

export const EngineLive = ClusterWorkflowEngine.layer.pipe(
  // On PGlite the SQL runner storage never starts (its shard-lock connection, reserved for the layer's lifetime, holds
  // the one session): the runner is kept in memory there, which a single process allows.
  Layer.provideMerge(SingleRunner.layer({
    shardingConfig,
    runnerStorage: pgliteDir && process.env.SPIKE_PGLITE_RUNNER_STORAGE !== "sql" ? "memory" : "sql"
  }))
)

const AppLive = SpikeRunLive.pipe(Layer.provideMerge(EngineLive), Layer.provide(PgLive))

const token = (runId) => DurableDeferred.tokenFromPayload(Review, { workflow: SpikeRun, payload: { runId } })

const startAll = Effect.forEach(runIds, (runId) =>
  Effect.tap(SpikeRun.execute({ runId }, { discard: true }), (executionId) => say("started", { runId, executionId })))

const programs = {
  start: Effect.gen(function*() {
    say("ready")
    yield* startAll
    return yield* Effect.never
  }),
  send: Effect.gen(function*() {
    say("ready")
    yield* startAll
  }),
  work: Effect.gen(function*() {
    say("ready")
    yield* Effect.sleep(Duration.millis(Number(process.env.SPIKE_WORK_MS ?? 600_000)))
  }),
  resolve: Effect.gen(function*() {
    say("ready")
    yield* Effect.forEach(runIds, (runId) =>
      Effect.gen(function*() {
        const value = { approved: true, by: "reviewer@example.com" }
        yield* DurableDeferred.succeed(Review, { token: yield* token(runId), value })
        say("resolved", { runId })
        const executionId = yield* SpikeRun.executionId({ runId })
        for (;;) {
          const result = yield* SpikeRun.poll(executionId)
          if (result !== undefined && result._tag === "Complete") {
            const exit = Exit.isSuccess(result.exit) ? result.exit.value : String(result.exit.cause)
            return say("result", { runId, exit })
          }
          yield* Effect.sleep(Duration.millis(100))
        }
      }), { concurrency: "unbounded" })
  })
}

const program = programs[mode]
if (program === undefined) throw new Error(`unknown mode ${mode}`)
Effect.runPromise(
  program.pipe(
    Effect.provide(AppLive),
    Logger.withMinimumLogLevel(process.env.SPIKE_LOG === "debug" ? LogLevel.Debug : LogLevel.Warning)
  )
).then(
  () => say("exited-program"),
  (error) => {
    say("failed", { error: String(error) })
    process.exitCode = 1
  }
)
