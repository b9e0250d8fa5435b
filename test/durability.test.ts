/**
 * Nothing a client was told succeeded is lost: the real server process, under concurrent creates, is killed
 * with SIGKILL mid-load and restarted on the same data; every resource answered 2xx is there unchanged and
 * every keyed create still replays. Run on the embedded store (PGlite) and on the PostgreSQL server. Then two
 * server processes on one PostgreSQL server race the same Idempotency-Keys: one resource per key.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Redacted, Scope } from "effect"
import { serverDatabase } from "../packages/store-pg/test/fixtures.js"
import { pgliteMigratedDataDir } from "./support/pglite.js"
import { startServerProcess } from "./support/process.js"
import { client, provision } from "./support/server.js"

const scope = Effect.runSync(Scope.make())
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)), 60_000)
const inScope = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.runPromise(Scope.extend(effect, scope))

interface Answered {
  readonly path: string
  readonly key: string | undefined
  readonly request: unknown
  readonly id: string
  readonly text: string
}

/** Workers creating meetings, action items and agenda items until the server goes away. */
const load = (url: string, token: string, workers: number) => {
  const api = client(url, token)
  const answered: Array<Answered> = []
  let stopped = false
  const create = async (path: string, request: unknown, key?: string) => {
    const response = await api.post(path, request, key === undefined ? {} : { "idempotency-key": key })
    if (response.status >= 200 && response.status < 300) {
      answered.push({ path, key, request, id: response.body.id, text: response.text })
      return response.body.id as string
    }
    throw new Error(`unexpected ${response.status}: ${response.text}`)
  }
  const worker = async (w: number) => {
    for (let i = 0; !stopped; i++) {
      try {
        const meeting = await create("/v1/meetings", { title: `W${w}-${i}`, start_time: "2026-12-01T09:00:00Z" }, `m-${w}-${i}`)
        await create("/v1/action-items", { meeting_id: meeting, title: `A${w}-${i}`, due_date: "2026-12-24" }, i % 2 === 0 ? `a-${w}-${i}` : undefined)
        await create("/v1/agenda-items", { meeting_id: meeting, title: `G${w}-${i}`, talking_points: [`tp ${i}`] })
      } catch (error) {
        if (stopped || String(error).includes("fetch failed")) return
        throw error
      }
    }
  }
  const running = Promise.all(Array.from({ length: workers }, (_, w) => worker(w)))
  return {
    answered,
    finish: async () => {
      stopped = true
      await running
    }
  }
}

const readPath = (answered: Answered) =>
  answered.path === "/v1/meetings" ? `/v1/meetings/${answered.id}` : `${answered.path}/${answered.id}`

const killAndCheck = async (env: Record<string, string>) => {
  const first = await startServerProcess(env)
  const { token } = await provision(first.url, { plan: "ENTERPRISE" })
  const work = load(first.url, token, 8)
  while (work.answered.length < 60) await new Promise((resolve) => setTimeout(resolve, 25))
  await first.kill()
  await work.finish()
  const answered = [...work.answered]
  expect(answered.length).toBeGreaterThanOrEqual(60)

  const second = await startServerProcess(env)
  try {
    const api = client(second.url, token)
    for (const item of answered) {
      const read = await api.get(readPath(item))
      expect(read.status, `${readPath(item)} after the restart`).toBe(200)
      expect(read.body).toEqual(JSON.parse(item.text))
    }
    for (const item of answered.filter((a) => a.key !== undefined)) {
      const replay = await api.post(item.path, item.request, { "idempotency-key": item.key! })
      expect(replay.status).toBe(201)
      expect(replay.headers.get("idempotent-replayed")).toBe("true")
      expect(replay.text).toBe(item.text)
    }
    const meetings = answered.filter((a) => a.path === "/v1/meetings").length
    const listed = await api.get("/v1/meetings?limit=1")
    // Creates that were in flight at the kill may or may not have committed; none that was answered is missing.
    expect(listed.body.total).toBeGreaterThanOrEqual(meetings)
  } finally {
    await second.stop()
  }
  return answered.length
}

describe("durability: SIGKILL mid-load loses nothing that was answered", () => {
  it("on the embedded store (PGlite)", async () => {
    const dataDir = await inScope(pgliteMigratedDataDir)
    await killAndCheck({ CONVENE_DATA_DIR: dataDir })
  }, 300_000)

  it("on the PostgreSQL server", async () => {
    const url = await inScope(serverDatabase)
    await killAndCheck({ DATABASE_URL: Redacted.value(url) })
  }, 300_000)
})

describe("scale-out: two server processes on one PostgreSQL server", () => {
  it("create exactly one resource per Idempotency-Key sent to both at once", async () => {
    const url = Redacted.value(await inScope(serverDatabase))
    const [a, b] = await Promise.all([startServerProcess({ DATABASE_URL: url }), startServerProcess({ DATABASE_URL: url })])
    try {
      const { token } = await provision(a.url, { plan: "PRO" })
      const apis = [client(a.url, token), client(b.url, token)]
      const keys = Array.from({ length: 25 }, (_, i) => `race-${i}`)
      const answers = await Promise.all(
        keys.flatMap((key) =>
          apis.map((api) => api.post("/v1/meetings", { title: `Race ${key}` }, { "idempotency-key": key }))
        )
      )
      for (const answer of answers) expect([201, 409]).toContain(answer.status)
      const created = answers.filter((answer) => answer.status === 201)
      const byKey = new Map<string, Set<string>>()
      created.forEach((answer) => {
        const title = answer.body.title as string
        byKey.set(title, (byKey.get(title) ?? new Set()).add(answer.body.id))
      })
      for (const ids of byKey.values()) expect(ids.size).toBe(1)
      const list = await apis[1]!.get("/v1/meetings?limit=100")
      expect(list.body.total).toBe(keys.length)
      expect(new Set(list.body.items.map((m: { title: string }) => m.title)).size).toBe(keys.length)
    } finally {
      await Promise.all([a.stop(), b.stop()])
    }
  }, 300_000)
})
