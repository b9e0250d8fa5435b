/**
 * `convene migrate [--check]` on the store the environment names: a fresh embedded database (CONVENE_DATA_DIR),
 * a scratch database on the PostgreSQL server at 127.0.0.1:5432 (or DATABASE_URL), and the cases that have
 * nothing to migrate or cannot reach their database.
 */
import { Effect, Exit, Redacted, Scope } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { pgliteTemplate, serverDatabase } from "../../packages/store-pg/test/fixtures.js"
import { freePort } from "../support/process.js"
import { convene } from "./support.js"

const migrations = [
  "0001_init",
  "0002_rules_in_core",
  "0003_folded_titles",
  "0004_operator_administration",
  "0005_oauth",
  "0006_events",
  "0007_webhooks",
  "0008_backlog",
  "0009_attachments",
  "0010_context",
  "0011_rate_limits",
  "0012_sign_in_attempts",
  "0013_partner_apps",
  "0014_partner_events",
  "0015_partner_oauth",
  "0016_partner_rate_limits",
  "0017_partner_domain_verifications",
  "0018_partner_idp_configs",
  "0019_partner_sso_sessions",
  "0020_partner_toolkits",
  "0021_partner_workflow_runs"
]

const scope = Effect.runSync(Scope.make())
const scratch = Fs.mkdtempSync(Path.join(Os.tmpdir(), "convene-cli-migrate-"))

afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  Fs.rmSync(scratch, { recursive: true, force: true })
})

/** `--check` exits 1 listing every migration, `migrate` applies them, then `--check` exits 0. */
const checkApplyCheck = async (env: Record<string, string>, where: string) => {
  const before = await convene(["migrate", "--check"], { env })
  expect(before.code).toBe(1)
  expect(before.stdout).toBe(`${migrations.length} migrations pending on ${where}:\n${migrations.map((m) => `  ${m}\n`).join("")}`)
  expect(before.stderr).toBe(`${migrations.length} migrations pending: run \`convene migrate\` to apply them\n`)

  const applied = await convene(["migrate"], { env })
  expect(applied).toMatchObject({ code: 0, stderr: "" })
  expect(applied.stdout).toBe(`Applied ${migrations.length} migrations on ${where}:\n${migrations.map((m) => `  ${m}\n`).join("")}`)

  const after = await convene(["migrate", "--check"], { env })
  expect(after).toMatchObject({ code: 0, stderr: "", stdout: `No migrations pending on ${where}: the schema is up to date.\n` })
}

describe("convene migrate", () => {
  it("on a fresh embedded database: --check lists what is pending (exit 1), migrate applies it, --check then exits 0", async () => {
    // A directory with no database yet: --check says so and creates nothing.
    const missing = Path.join(scratch, "not-yet")
    const empty = await convene(["migrate", "--check"], { env: { CONVENE_DATA_DIR: missing } })
    expect(empty.code).toBe(1)
    expect(empty.stdout).toContain(`${migrations.length} migrations pending on embedded PostgreSQL in ${missing} (no database there yet):\n  0001_init\n`)
    expect(Fs.existsSync(missing)).toBe(false)

    // A freshly created cluster (a copy of the test template: creating one takes seconds) without any migration.
    const dataDir = Path.join(scratch, "pglite")
    Fs.cpSync(await Effect.runPromise(pgliteTemplate), dataDir, { recursive: true })
    await checkApplyCheck({ CONVENE_DATA_DIR: dataDir }, `embedded PostgreSQL in ${dataDir}`)
    expect(Fs.existsSync(Path.join(dataDir, "convene.lock"))).toBe(false)
  }, 120_000)

  it("on a fresh PostgreSQL database: the same, and running it once more changes nothing", async () => {
    const url = Redacted.value(await Effect.runPromise(Scope.extend(serverDatabase, scope)))
    const parsed = new URL(url)
    await checkApplyCheck({ DATABASE_URL: url }, `PostgreSQL ${parsed.host}${parsed.pathname}`)
    // Once more changes nothing.
    const again = await convene(["migrate"], { env: { DATABASE_URL: url } })
    expect(again).toMatchObject({ code: 0, stdout: `No migrations to apply on PostgreSQL ${parsed.host}${parsed.pathname}: the schema is up to date.\n` })
  }, 120_000)

  it("has nothing to do in memory; a PostgreSQL server that is not there is exit 3, a bad setting exit 2", async () => {
    const closed = await freePort()
    const [memory, down, badStore] = await Promise.all([
      convene(["migrate"], { env: { CONVENE_STORE: "memory" } }),
      convene(["migrate", "--check"], { env: { DATABASE_URL: `postgres://postgres:secret-password@127.0.0.1:${closed}/convene` } }),
      convene(["migrate"], { env: { CONVENE_STORE: "sqlite" } })
    ])
    expect(memory).toMatchObject({
      code: 0,
      stdout: "CONVENE_STORE=memory keeps everything in memory: there is no schema to migrate.\n",
      stderr: ""
    })
    expect(down).toMatchObject({ code: 3, stdout: "", stderr: `error: cannot reach PostgreSQL at 127.0.0.1:${closed}/convene: connection refused\n` })
    expect(down.stderr).not.toContain("secret-password")
    expect(badStore.code).toBe(2)
    expect(badStore.stderr).toContain("CONVENE_STORE")
  }, 60_000)
})
