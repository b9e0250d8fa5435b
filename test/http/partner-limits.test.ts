/**
 * The partner API's budgets per client address (partner-api.md "Limits", issue 12) on real sockets: applied by path
 * prefix before routing (/v1/partner/user, /v1/partner/admin, /oauth2, /v1/partner/sso/info; a 404 counts), the
 * documented numbers with the default configuration, 429 with Retry-After and `{error, error_description, code,
 * request_id}`, each part and each client counted apart, the client address behind trusted proxies
 * (CONVENE_TRUSTED_PROXIES, X-Forwarded-For walked from the right), and one budget for two hosts on one PostgreSQL.
 */
import { defaultPartnerBudgets, defaultPolicy, type PartnerBudgets } from "@convene/core"
import { describeConfigError, hostConfig } from "@convene/http"
import * as StorePg from "@convene/store-pg"
import { ConfigProvider, Effect, Either, Exit, Redacted, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { clientAddress, clientKey, parseTrustedProxies } from "../../packages/http/src/http/PartnerLimits.js"
import { serverDatabase } from "../../packages/store-pg/test/fixtures.js"
import { pgliteMigratedDataDir } from "../support/pglite.js"
import { type ServerProcess, startServerProcess } from "../support/process.js"
import { client, type Client, type RunningServer, startServer } from "../support/server.js"
import { operator, type Response, sleep } from "./fixtures.js"

const minute = 60_000

/**
 * Budgets are counted in fixed windows aligned to the clock: a test that spends one starts early enough in a window
 * to finish inside it (it waits for the next window when fewer than `margin` milliseconds are left), and answers
 * when that window ends.
 */
const startOfWindow = async (windowMs: number, margin = 8_000) => {
  const left = windowMs - (Date.now() % windowMs)
  if (left < margin) await sleep(left + 50)
  const now = Date.now()
  return now - (now % windowMs) + windowMs
}

/** The documented 429: `{error, error_description, code, request_id}`, Retry-After the seconds left in the window. */
const expectRefusal = (response: Response, windowEnd: number, sentAt: number) => {
  expect(response.status).toBe(429)
  expect(response.headers.get("content-type") ?? "").toContain("application/json")
  expect(Object.keys(response.body).sort()).toEqual(["code", "error", "error_description", "request_id"])
  expect(response.body).toMatchObject({ error: "rate_limit_exceeded", code: "rate_limit_exceeded" })
  expect(response.body.error_description).toMatch(/^rate limit of \d+ requests (a minute|per 5 minutes) exceeded; retry after \d+ seconds$/)
  expect(response.body.request_id).toBe(response.headers.get("x-request-id"))
  const retryAfter = Number(response.headers.get("retry-after"))
  // Between the seconds left when the request was sent and when its answer came.
  expect(retryAfter).toBeGreaterThanOrEqual(Math.max(1, Math.ceil((windowEnd - Date.now()) / 1000)))
  expect(retryAfter).toBeLessThanOrEqual(Math.ceil((windowEnd - sentAt) / 1000))
}

/** Sends `count` requests one after the other and answers their statuses. */
const statusesOf = async (count: number, send: (i: number) => Promise<Response>) => {
  const statuses: Array<number> = []
  for (let i = 0; i < count; i++) statuses.push((await send(i)).status)
  return statuses
}

const notRefused = (statuses: ReadonlyArray<number>) => statuses.every((status) => status !== 429)

let next = 0
/** A client address no other test counts against (documentation ranges, RFC 5737). */
const freshAddress = () => {
  next++
  return `${next % 2 === 0 ? "203.0.113" : "198.51.100"}.${Math.floor(next / 2) % 250 + 1}`
}

/** A client behind the test's trusted proxy (the server's socket peer, 127.0.0.1), as X-Forwarded-For says. */
const from = (url: string, forwardedFor: string) => {
  const api = client(url)
  const headers = { "x-forwarded-for": forwardedFor }
  return {
    get: (path: string, more: Record<string, string> = {}) => api.get(path, { ...headers, ...more }),
    post: (path: string, body?: unknown) => api.post(path, body, headers),
    call: (method: string, path: string) => api.call(method, path, undefined, headers)
  }
}

const fiveMinutes = 5 * minute

describe.each([
  ["memory", undefined],
  ["PGlite", "pglite"]
] as const)("the default budgets (%s store)", (_, store) => {
  let server: RunningServer
  let scope: Scope.CloseableScope | undefined
  beforeAll(async () => {
    scope = Effect.runSync(Scope.make())
    const dataDir = store === "pglite" ? await Effect.runPromise(Scope.extend(pgliteMigratedDataDir, scope)) : undefined
    server = await startServer(dataDir === undefined ? {} : { store: StorePg.layerPglite({ dataDir }) })
  })
  afterAll(async () => {
    await server?.close()
    if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  it("refuses the 31st request a minute from one address to /v1/partner/sso/info/{slug}", async () => {
    expect(defaultPartnerBudgets.sso_info).toEqual({ limit: 30, windowMs: minute })
    const end = await startOfWindow(minute)
    const api = client(server.url)
    const statuses = await statusesOf(30, (i) => api.get(`/v1/partner/sso/info/app-${i}`))
    expect(notRefused(statuses)).toBe(true)
    const sentAt = Date.now()
    expectRefusal(await api.get("/v1/partner/sso/info/app-0"), end, sentAt)
  })

  it("refuses the 101st request in 5 minutes from one address to /oauth2/*, whatever the path under it", async () => {
    const end = await startOfWindow(fiveMinutes, 15_000)
    const api = client(server.url)
    const paths = ["/oauth2/authorize?response_type=code&client_id=x", "/oauth2/token", "/oauth2/no-such-endpoint", "/oauth2"]
    const statuses = await statusesOf(100, (i) => (i % 4 === 1 ? api.post(paths[1]!, "grant_type=x") : api.get(paths[i % 4]!)))
    expect(notRefused(statuses)).toBe(true)
    const sentAt = Date.now()
    const refused = await api.post("/oauth2/token", "grant_type=authorization_code")
    expectRefusal(refused, end, sentAt)
    expect(refused.body.error_description).toContain("rate limit of 100 requests per 5 minutes exceeded")
  }, 60_000)
})

/** Small budgets, as an embedding host may set them (HostConfig.rateLimits.partner). */
const small: PartnerBudgets = {
  partner_user: { limit: 4, windowMs: fiveMinutes },
  partner_admin: { limit: 3, windowMs: fiveMinutes },
  oauth: { limit: 2, windowMs: fiveMinutes },
  sso_info: { limit: 3, windowMs: minute }
}

describe("budgets by path prefix, before routing", () => {
  let server: RunningServer
  beforeAll(async () => {
    server = await startServer({ rateLimits: { ...defaultPolicy, partner: small }, trustedProxies: ["127.0.0.1"] })
  })
  afterAll(async () => {
    await server?.close()
  })

  it.each([
    ["GET", "/v1/partner/user/meetings", small.partner_user],
    ["POST", "/v1/partner/user/no/such/route", small.partner_user],
    ["GET", "/v1/partner/user", small.partner_user],
    ["GET", "/v1/partner/admin/app", small.partner_admin],
    ["DELETE", "/v1/partner/admin/workspaces", small.partner_admin],
    ["GET", "/oauth2/authorize", small.oauth],
    ["POST", "/oauth2/token", small.oauth],
    ["GET", "/oauth2/token/", small.oauth],
    ["GET", "/v1/partner/sso/info/acme", small.sso_info]
  ])("%s %s takes a unit of its part's budget, whatever it answers, and is refused past it", async (method, path, budget) => {
    const end = await startOfWindow(budget.windowMs)
    const caller = from(server.url, freshAddress())
    const statuses = await statusesOf(budget.limit, () => caller.call(method, path))
    expect(notRefused(statuses)).toBe(true)
    const sentAt = Date.now()
    expectRefusal(await caller.call(method, path), end, sentAt)
    // Every method and every path of the part, from the same client, is refused now.
    expect((await caller.call("OPTIONS", path)).status).toBe(429)
  })

  it("refuses before authentication: an app's valid credentials get 429 past the budget, not their answer", async () => {
    await startOfWindow(fiveMinutes)
    const app = (await operator(server.url).post("/operator/v1/partner-apps", { name: "Limited" })).body
    const caller = from(server.url, freshAddress())
    const credentials = { "x-api-key": app.api_key, "x-client-id": app.client_id }
    const statuses = await statusesOf(4, () => caller.get("/v1/partner/admin/app", credentials))
    expect(statuses).toEqual([200, 200, 200, 429])
  })

  it("counts each part and each client apart", async () => {
    await startOfWindow(fiveMinutes)
    const [one, two] = [freshAddress(), freshAddress()]
    const first = from(server.url, one)
    expect(await statusesOf(4, () => first.get("/v1/partner/admin/app"))).toEqual([401, 401, 401, 429])
    // The same client's other parts, and another client's admin budget, are whole.
    expect((await first.get("/v1/partner/user/meetings")).status).not.toBe(429)
    expect((await first.post("/oauth2/token")).status).not.toBe(429)
    expect((await first.get("/v1/partner/sso/info/acme")).status).not.toBe(429)
    expect((await from(server.url, two).get("/v1/partner/admin/app")).status).toBe(401)
  })

  it("leaves every other path out, the first-party API and the rest of /v1/partner included", async () => {
    await startOfWindow(fiveMinutes)
    const caller = from(server.url, freshAddress())
    for (const [path, budget] of [
      ["/v1/partner/admin/app", small.partner_admin],
      ["/v1/partner/user/meetings", small.partner_user],
      ["/oauth2/token", small.oauth],
      ["/v1/partner/sso/info/acme", small.sso_info]
    ] as const) {
      expect((await statusesOf(budget.limit + 1, () => caller.get(path))).at(-1)).toBe(429)
    }
    const others = ["/v1/partner/users", "/v1/partner/administrator", "/oauth2x/token", "/v1/partner/sso/initiate?slug=acme", "/v1/partner/sso/information", "/v1/meetings", "/v1/oauth/token", "/healthz", "/v1/partner"]
    for (const path of others) expect({ path, status: (await caller.get(path)).status }).not.toMatchObject({ status: 429 })
  })
})

describe("the client address", () => {
  describe("behind trusted proxies (127.0.0.1 and 10.0.0.0/8)", () => {
    let server: RunningServer
    beforeAll(async () => {
      server = await startServer({ rateLimits: { ...defaultPolicy, partner: small }, trustedProxies: ["::ffff:127.0.0.1", "10.0.0.0/8"] })
    })
    afterAll(async () => {
      await server?.close()
    })

    /** Whether the next request with `forwardedFor` is refused (after `spent` requests of another header). */
    const refusedAfter = async (spent: ReadonlyArray<string>, forwardedFor: string) => {
      for (const header of spent) expect((await from(server.url, header).post("/oauth2/token")).status).not.toBe(429)
      return (await from(server.url, forwardedFor).post("/oauth2/token")).status === 429
    }

    it("is the right-most address a trusted proxy did not send: a spoofed left-most entry changes nothing", async () => {
      await startOfWindow(fiveMinutes)
      const address = freshAddress()
      expect(await refusedAfter([`1.1.1.1, ${address}`, address], `2.2.2.2, 3.3.3.3, ${address}`)).toBe(true)
      expect(await refusedAfter([], freshAddress())).toBe(false)
    })

    it("skips trusted hops from the right, whatever their number", async () => {
      await startOfWindow(fiveMinutes)
      const address = freshAddress()
      expect(await refusedAfter([`${address}, 10.1.2.3`, `9.9.9.9, ${address}, 10.0.0.7, 10.200.0.1`], address)).toBe(true)
    })

    it("stops at the last trusted hop at an entry that is not an address", async () => {
      await startOfWindow(fiveMinutes)
      // Counted as 10.9.9.9, the hop that sent the malformed entry (as is a header of trusted hops only: the left-most).
      expect(await refusedAfter(["203.0.113.200, not-an-ip, 10.9.9.9", "10.9.9.9"], "198.51.100.200, , 10.9.9.9")).toBe(true)
      expect(await refusedAfter([], "203.0.113.200")).toBe(false)
    })

    it("counts IPv4-mapped IPv6 entries as their IPv4 address and an IPv6 client by its /64", async () => {
      await startOfWindow(fiveMinutes)
      expect(await refusedAfter(["::ffff:198.51.100.250", "198.51.100.250:4711"], "[::ffff:c633:64fa]:443")).toBe(true)
      expect(await refusedAfter(["2001:db8:1:2::1", "[2001:db8:1:2:ffff::9]:8443"], "2001:db8:1:2::abcd")).toBe(true)
      expect(await refusedAfter([], "2001:db8:1:3::1")).toBe(false)
    })
  })

  describe("without trusted proxies", () => {
    let server: RunningServer
    beforeAll(async () => {
      server = await startServer({ rateLimits: { ...defaultPolicy, partner: small } })
    })
    afterAll(async () => {
      await server?.close()
    })

    it("is the socket's peer: X-Forwarded-For is ignored", async () => {
      await startOfWindow(fiveMinutes)
      const statuses = await statusesOf(3, () => from(server.url, freshAddress()).post("/oauth2/token"))
      expect(statuses.map((status) => status === 429)).toEqual([false, false, true])
    })
  })

  const trusted = (list: ReadonlyArray<string>) => Either.getOrThrow(parseTrustedProxies(list))
  const resolve = (list: ReadonlyArray<string>, peer: string | undefined, forwardedFor?: string) =>
    clientKey(clientAddress(trusted(list), peer, forwardedFor))

  it.each([
    [[], "203.0.113.5", "1.2.3.4", "203.0.113.5"],
    [["10.0.0.0/8"], "10.0.0.1", undefined, "10.0.0.1"],
    [["10.0.0.0/8"], "10.0.0.1", "", "10.0.0.1"],
    [["10.0.0.0/8"], "::ffff:10.0.0.1", "203.0.113.5", "203.0.113.5"],
    [["::ffff:10.0.0.0/104"], "10.2.0.1", "203.0.113.5", "203.0.113.5"],
    [["10.0.0.0/8"], "11.0.0.1", "203.0.113.5", "11.0.0.1"],
    [["10.0.0.0/8"], "10.0.0.1", "203.0.113.5, 10.0.0.2, 10.0.0.3", "203.0.113.5"],
    [["10.0.0.0/8"], "10.0.0.1", "10.0.0.5, 10.0.0.2", "10.0.0.5"],
    [["10.0.0.0/8"], "10.0.0.1", "203.0.113.5, 203.0.113.6", "203.0.113.6"],
    [["10.0.0.0/8"], "10.0.0.1", "203.0.113.5, 010.0.0.2", "10.0.0.1"],
    [["10.0.0.0/8"], "10.0.0.1", "203.0.113.5, 10.0.0.9, 127.1", "10.0.0.1"],
    [["10.0.0.0/8"], "10.0.0.1", "203.0.113.5,10.0.0.9,", "10.0.0.1"],
    [["10.0.0.0/8"], "10.0.0.1", "unknown, 10.0.0.9", "10.0.0.9"],
    [["fd00::/8"], "fd00::1", "2001:db8:aa:bb:cc::1", "2001:db8:aa:bb::/64"],
    [["fd00::/8"], "fd00::1", "[2001:DB8::1]:443", "2001:db8::/64"],
    [["::1"], "::1", "203.0.113.5:51234", "203.0.113.5"],
    [["0.0.0.0/0", "::/0"], "10.0.0.1", "203.0.113.5, 2001:db8::1", "203.0.113.5"],
    [[], undefined, "203.0.113.5", "unknown"]
  ] as const)("with trusted %j, peer %j and X-Forwarded-For %j, is %j", (list, peer, forwardedFor, expected) => {
    expect(resolve(list, peer, forwardedFor)).toBe(expected)
  })

  const read = (value: string | undefined) =>
    Effect.runSync(Effect.either(Effect.withConfigProvider(
      hostConfig,
      ConfigProvider.fromMap(new Map(value === undefined ? [] : [["CONVENE_TRUSTED_PROXIES", value]]))
    ))).pipe(Either.map((config) => config.trustedProxies), Either.mapLeft(describeConfigError))

  it("reads CONVENE_TRUSTED_PROXIES: none by default, IPv4 and IPv6 addresses and ranges", () => {
    expect(read(undefined)).toEqual(Either.right([]))
    expect(read("")).toEqual(Either.right([]))
    expect(read(" 10.0.0.0/8, 192.168.1.10 ,fd00::/8,::1, ::ffff:172.16.0.0/108 ")).toEqual(
      Either.right(["10.0.0.0/8", "192.168.1.10", "fd00::/8", "::1", "::ffff:172.16.0.0/108"])
    )
  })

  it.each(["10.0.0.0/33", "10.1", "0x0a.0.0.1", "proxy.internal", "10.0.0.1/8/1", "::1/129", "::ffff:10.0.0.0/95", "10.0.0.0/-1", "10.0.0.0/"])(
    "refuses %j in CONVENE_TRUSTED_PROXIES, naming the variable and the entry",
    (entry) => {
      const result = read(`127.0.0.1, ${entry}`)
      expect(result).toEqual(Either.left(
        "CONVENE_TRUSTED_PROXIES: expected a comma list of IP addresses and CIDR ranges, IPv4 or IPv6 (for example " +
          `10.0.0.0/8,192.168.1.10,fd00::/8), not ${JSON.stringify(entry)}`
      ))
    }
  )

  it("stops the server at start on a CONVENE_TRUSTED_PROXIES that does not parse, with exit code 1", async () => {
    const started = await startServerProcess({ CONVENE_STORE: "memory", CONVENE_TRUSTED_PROXIES: "10.0.0.0/8,10.0.0.300" }).then(
      async (process) => {
        await process.stop()
        return "started"
      },
      (error: Error) => error.message
    )
    expect(started).toContain("the server exited with 1")
    expect(started).toContain('Convene cannot start: CONVENE_TRUSTED_PROXIES: expected a comma list of IP addresses and CIDR ranges')
    expect(started).toContain('not "10.0.0.300"')
  })
})

describe("two server processes on one PostgreSQL, default configuration", () => {
  const scope = Effect.runSync(Scope.make())
  let processes: ReadonlyArray<ServerProcess> = []
  /** Process one or two, taking turns. */
  const host = (i: number): Client => client(processes[i % 2]!.url)
  beforeAll(async () => {
    const url = await Effect.runPromise(Scope.extend(serverDatabase, scope))
    // No CONVENE_TRUSTED_PROXIES, partner-api.md's budgets.
    const env = { DATABASE_URL: Redacted.value(url) }
    processes = [await startServerProcess(env), await startServerProcess(env)]
  })
  afterAll(async () => {
    await Promise.all(processes.map((process) => process.stop()))
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  it("enforce the 30 a minute of SSO info together: requests alternating between them, the 31st is refused", async () => {
    const end = await startOfWindow(minute)
    const statuses = await statusesOf(30, (i) => host(i).get(`/v1/partner/sso/info/app-${i}`))
    expect(notRefused(statuses)).toBe(true)
    const sentAt = Date.now()
    expectRefusal(await host(0).get("/v1/partner/sso/info/app-30"), end, sentAt)
    expectRefusal(await host(1).get("/v1/partner/sso/info/app-31"), end, sentAt)
  })

  it("enforce the 100 per 5 minutes of /oauth2 together: requests alternating between them, the 101st is refused", async () => {
    const end = await startOfWindow(fiveMinutes, 15_000)
    const statuses = await statusesOf(100, (i) => host(i).post("/oauth2/token", "grant_type=x"))
    expect(notRefused(statuses)).toBe(true)
    const sentAt = Date.now()
    expectRefusal(await host(1).post("/oauth2/token", "grant_type=x"), end, sentAt)
  }, 60_000)
})

describe("on PostgreSQL, budgets of different window lengths", () => {
  const scope = Effect.runSync(Scope.make())
  const sevenSeconds = 7_000
  let server: RunningServer
  beforeAll(async () => {
    const url = await Effect.runPromise(Scope.extend(serverDatabase, scope))
    server = await startServer({
      store: StorePg.layerPg({ url }),
      rateLimits: {
        ...defaultPolicy,
        partner: { ...defaultPartnerBudgets, oauth: { limit: 3, windowMs: fiveMinutes }, sso_info: { limit: 100, windowMs: sevenSeconds } }
      }
    })
  })
  afterAll(async () => {
    await server?.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  it("keep counting a five-minute window when windows of other budgets start and end inside it", async () => {
    await startOfWindow(fiveMinutes, 30_000)
    const api = client(server.url)
    expect(await statusesOf(2, () => api.post("/oauth2/token"))).not.toContain(429)
    // The first request of a new seven-second window of SSO info, which drops the counters of the windows that ended.
    await sleep(sevenSeconds - (Date.now() % sevenSeconds) + 50)
    expect((await api.get("/v1/partner/sso/info/acme")).status).not.toBe(429)
    const [third, fourth] = await statusesOf(2, () => api.post("/oauth2/token"))
    expect(third).not.toBe(429)
    expect(fourth).toBe(429)
  }, 75_000)
})
