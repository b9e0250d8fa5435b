/**
 * Rate limits (decisions.md): X-RateLimit-Limit, -Remaining and -Reset on every response of the bearer API, the
 * plan's budget per credential per minute, 429 `rate_limit_exceeded` with the compact body and Retry-After, a
 * budget per client address for requests without a valid credential, CONVENE_RATE_LIMITS, and one budget for
 * several server processes sharing one PostgreSQL.
 */
import { defaultPolicy } from "@convene/core"
import { describeConfigError, hostConfig } from "@convene/http"
import { ConfigProvider, Effect, Either, Exit, Redacted, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { serverDatabase } from "../../packages/store-pg/test/fixtures.js"
import { startServerProcess } from "../support/process.js"
import { client, OPERATOR_TOKEN, type RunningServer, startServer } from "../support/server.js"
import { member, type Response, sleep, useServer, workspace } from "./fixtures.js"

const server = useServer()

/**
 * Budgets are counted in windows of one clock minute: a test that spends a whole budget starts early enough in a
 * window to finish inside it (it waits for the next window when fewer than 8 seconds are left).
 */
const startOfWindow = async () => {
  const left = 60_000 - (Date.now() % 60_000)
  if (left < 8_000) await sleep(left + 50)
}

const headersOf = (response: Response) => ({
  limit: Number(response.headers.get("x-ratelimit-limit")),
  remaining: Number(response.headers.get("x-ratelimit-remaining")),
  reset: Number(response.headers.get("x-ratelimit-reset"))
})

/** The documented 429: compact body `{code, message, request_id}` without `error`, Retry-After within the window. */
const expectRefusal = (response: Response) => {
  expect(response.status).toBe(429)
  expect(Object.keys(response.body).sort()).toEqual(["code", "message", "request_id"])
  expect(response.body.code).toBe("rate_limit_exceeded")
  expect(response.body.request_id).toBe(response.headers.get("x-request-id"))
  const retryAfter = Number(response.headers.get("retry-after"))
  expect(retryAfter).toBeGreaterThanOrEqual(1)
  expect(retryAfter).toBeLessThanOrEqual(60)
  expect(headersOf(response).remaining).toBe(0)
}

describe("rate limits (decisions.md)", () => {
  it("sends X-RateLimit-Limit, -Remaining and -Reset with the plan's budget on /v1 responses", async () => {
    await startOfWindow()
    const { api } = await member(server.url, { plan: "PRO" })
    const first = await api.get("/v1/meetings")
    const second = await api.get(`/v1/meetings/${crypto.randomUUID()}`)
    const invalid = await api.post("/v1/meetings", { title: 42 })
    expect([first.status, second.status, invalid.status]).toEqual([200, 404, 400])
    expect(headersOf(first).limit).toBe(300)
    expect(headersOf(first).remaining).toBe(299)
    // Every answer takes its unit, errors included.
    expect(headersOf(second).remaining).toBe(298)
    expect(headersOf(invalid).remaining).toBe(297)
    // Reset: the end of the current minute, in seconds since the epoch.
    const reset = headersOf(first).reset
    expect(reset % 60).toBe(0)
    expect(reset * 1000).toBeGreaterThan(Date.now())
    expect(reset * 1000 - Date.now()).toBeLessThanOrEqual(60_000)
  })

  it("answers 429 rate_limit_exceeded with Retry-After once a FREE credential spends its 60 requests a minute", async () => {
    await startOfWindow()
    const ws = await workspace(server.url, "FREE")
    const user = await ws.addUser()
    const statuses: Array<number> = []
    let last = await user.api.get("/v1/meeting-templates")
    statuses.push(last.status)
    for (let i = 0; i < 60; i++) {
      last = await user.api.get("/v1/meeting-templates")
      statuses.push(last.status)
    }
    expect(statuses.slice(0, 60).every((s) => s === 200)).toBe(true)
    expect(headersOf(last).limit).toBe(60)
    expectRefusal(last)
    // Refused requests change nothing: a refused create creates no meeting.
    const refusedCreate = await user.api.post("/v1/meetings", { title: "Refused" })
    expectRefusal(refusedCreate)
    // Another credential has its own budget (and sees that the refused create created nothing).
    const key = await ws.addApiKey()
    const fresh = await key.api.get("/v1/meetings")
    expect(fresh.status).toBe(200)
    expect(fresh.body.items).toEqual([])
    expect(headersOf(fresh)).toMatchObject({ limit: 60, remaining: 59 })
  })

  it("gives a workspace API key the plan's budget too, and a plan change reaches the budget within seconds", async () => {
    const ws = await workspace(server.url, "PRO")
    const key = await ws.addApiKey()
    expect(headersOf(await key.api.get("/v1/meetings")).limit).toBe(300)
    const changed = await client(server.url, OPERATOR_TOKEN).patch(`/operator/v1/workspaces/${ws.workspaceId}`, { plan: "ENTERPRISE" })
    expect(changed.status).toBe(200)
    // The plan is remembered for up to 5 seconds per process.
    const deadline = Date.now() + 7_000
    let limit = 0
    while (Date.now() < deadline && limit !== 1200) {
      limit = headersOf(await key.api.get("/v1/meetings")).limit
      if (limit !== 1200) await sleep(250)
    }
    expect(limit).toBe(1200)
  })

  it("counts a replay of an idempotent request like any request, with the headers on the replay", async () => {
    await startOfWindow()
    const { api } = await member(server.url, { plan: "PRO" })
    const key = { "idempotency-key": `rate-${crypto.randomUUID()}` }
    const first = await api.post("/v1/meetings", { title: "Counted" }, key)
    const replay = await api.post("/v1/meetings", { title: "Counted" }, key)
    expect([first.status, replay.status]).toEqual([201, 201])
    expect(replay.headers.get("idempotent-replayed")).toBe("true")
    expect([headersOf(first).remaining, headersOf(replay).remaining]).toEqual([299, 298])
  })

  it("leaves the operator API, health checks and documents out of the budgets", async () => {
    const op = client(server.url, OPERATOR_TOKEN)
    for (const response of [await op.get("/operator/v1/workspaces"), await client(server.url).get("/healthz")]) {
      expect(response.status).toBe(200)
      expect(response.headers.get("x-ratelimit-limit")).toBeNull()
    }
  })
})

describe("requests without a valid credential", () => {
  let limited: RunningServer
  beforeAll(async () => {
    limited = await startServer({
      rateLimits: { perPlan: { FREE: 60, PRO: 300, ELITE: 600, ENTERPRISE: 1200 }, anonymous: 5, windowMs: 60_000 }
    })
  })
  afterAll(async () => {
    await limited.close()
  })

  it("are counted per client address: 401 within the budget, then 429 whatever the token", async () => {
    await startOfWindow()
    const anonymous = client(limited.url)
    const guessing = client(limited.url, "svc_pat_" + "A".repeat(43))
    const answers = [
      await anonymous.get("/v1/meetings"),
      await guessing.get("/v1/meetings"),
      await anonymous.get("/v1/action-items"),
      await guessing.get("/v1/me"),
      await anonymous.get("/v1/meetings")
    ]
    expect(answers.map((r) => r.status)).toEqual([401, 401, 401, 401, 401])
    expect(answers.map((r) => headersOf(r).remaining)).toEqual([4, 3, 2, 1, 0])
    expect(headersOf(answers[0]!).limit).toBe(5)
    expectRefusal(await guessing.get("/v1/meetings"))
    // A valid credential from the same address has its own budget.
    const { api } = await member(limited.url)
    expect((await api.get("/v1/meetings")).status).toBe(200)
  })
})

describe("CONVENE_RATE_LIMITS=off", () => {
  let open: RunningServer
  beforeAll(async () => {
    open = await startServer({ rateLimits: "off" })
  })
  afterAll(async () => {
    await open.close()
  })

  it("counts nothing and sends no X-RateLimit headers", async () => {
    const ws = await workspace(open.url, "FREE")
    const user = await ws.addUser()
    const answers = await Promise.all(Array.from({ length: 70 }, () => user.api.get("/v1/meeting-templates")))
    expect(answers.every((r) => r.status === 200)).toBe(true)
    expect(answers[0]!.headers.get("x-ratelimit-limit")).toBeNull()
  })
})

describe("several server processes sharing one PostgreSQL", () => {
  it("enforce one budget per credential, configured with CONVENE_RATE_LIMITS", async () => {
    const scope = Effect.runSync(Scope.make())
    const url = await Effect.runPromise(Scope.extend(serverDatabase, scope))
    const env = { DATABASE_URL: Redacted.value(url), CONVENE_RATE_LIMITS: "FREE=10, ANONYMOUS=50" }
    // Started side by side: under a loaded machine one start took most of the default 30 s test timeout.
    const starting = [startServerProcess(env), startServerProcess(env)]
    const [first, second] = await Promise.all(starting).catch(async (error: unknown) => {
      await Promise.allSettled(starting.map((server) => server.then((started) => started.stop())))
      throw error
    })
    try {
      await startOfWindow()
      const ws = await workspace(first.url, "FREE")
      const user = await ws.addUser()
      const servers = [client(first.url, user.token), client(second.url, user.token)]
      const statuses: Array<number> = []
      const remaining: Array<number> = []
      for (let i = 0; i < 11; i++) {
        const response = await servers[i % 2]!.get("/v1/meetings")
        statuses.push(response.status)
        remaining.push(headersOf(response).remaining)
      }
      // Ten requests between the two processes spend the one budget of 10; the eleventh is refused.
      expect(statuses).toEqual([...Array<number>(10).fill(200), 429])
      expect(remaining).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0])
      expect(headersOf(await client(second.url).get("/v1/meetings")).limit).toBe(50)
    } finally {
      await Promise.all([first.stop(), second.stop()])
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }, 90_000)
})

describe("CONVENE_RATE_LIMITS", () => {
  const read = (value: string | undefined) =>
    Effect.runSync(Effect.either(Effect.withConfigProvider(
      hostConfig,
      ConfigProvider.fromMap(new Map(value === undefined ? [] : [["CONVENE_RATE_LIMITS", value]]))
    ))).pipe(Either.map((config) => config.rateLimits), Either.mapLeft(describeConfigError))

  it("defaults to decisions.md's budgets, turns off with `off`, and overrides the budgets it names", () => {
    expect(read(undefined)).toEqual(Either.right(defaultPolicy))
    expect(read("OFF")).toEqual(Either.right("off"))
    expect(read(" free = 120 , ANONYMOUS=600")).toEqual(Either.right({
      ...defaultPolicy,
      perPlan: { ...defaultPolicy.perPlan, FREE: 120 },
      anonymous: 600
    }))
  })

  it.each(["FREE", "FREE=0", "FREE=-5", "GOLD=10", "FREE=ten", "FREE=1e3", "FREE=1000000000"])("refuses %j, naming the variable", (value) => {
    const result = read(value)
    expect(Either.isLeft(result)).toBe(true)
    expect(Either.getLeft(result).pipe((left) => left._tag === "Some" ? left.value : "")).toContain("CONVENE_RATE_LIMITS")
  })
})
