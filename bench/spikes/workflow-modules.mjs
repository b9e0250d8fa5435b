/**
 * The packages the workflow spike needs, loaded from where pnpm put them: @effect/workflow and @effect/cluster are
 * installed only as peers of @effect/platform-node, so no workspace package can name them. Each is found through the
 * real path of a package that depends on it (pnpm links a package's dependencies beside it) and imported by the ESM
 * entry of its package.json, so that every one of them shares the one `effect` instance.
 */
import { readFileSync, realpathSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = fileURLToPath(new URL("../..", import.meta.url))

/** The directory of `name` linked beside the package at `from` (a real path). */
const beside = (from, name) => realpathSync(join(dirname(from), name.split("/").length > 1 ? name.split("/")[1] : name))
const besideScoped = (from, name) => realpathSync(join(dirname(dirname(from)), name))

const platformNode = realpathSync(join(root, "test/node_modules/@effect/platform-node"))
const cluster = beside(platformNode, "@effect/cluster")
const workflow = beside(cluster, "@effect/workflow")
const sqlPg = realpathSync(join(root, "packages/store-pg/node_modules/@effect/sql-pg"))
const sql = beside(sqlPg, "@effect/sql")
const effect = besideScoped(cluster, "effect")

const esm = (dir) => {
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"))
  const entry = manifest.exports["."].import ?? manifest.exports["."].default
  return import(pathToFileURL(join(dir, typeof entry === "string" ? entry : entry.default)).href)
}

export const versions = Object.fromEntries(
  [["@effect/workflow", workflow], ["@effect/cluster", cluster], ["@effect/sql", sql], ["@effect/sql-pg", sqlPg], ["effect", effect]]
    .map(([name, dir]) => [name, JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).version])
)

export const { Effect, Layer, Schema, Redacted, Duration, Exit, Option, Logger, LogLevel } = await esm(effect)
export const { Workflow, Activity, DurableDeferred, WorkflowEngine } = await esm(workflow)
export const { SingleRunner, ClusterWorkflowEngine, RunnerAddress, ShardingConfig, SqlMessageStorage } = await esm(cluster)
export const { SqlClient } = await esm(sql)
export const { PgClient } = await esm(sqlPg)
