/**
 * Domain verification end to end, on real sockets, on each store (memory, PGlite, the PostgreSQL server): the server's
 * resolver (NodeDnsResolver) asks a real authoritative DNS server on loopback (dns2, UDP on an ephemeral port) whose
 * records the test changes between checks, SERVFAIL and a server that never answers included; the domain events reach
 * an HTTPS receiver in this process, which checks every signature with `@octokit/webhooks-methods`. The server's clock
 * is moved on (days at a time) and its sweep runs every 100 ms, so the 7-day expiry and the 72-hour revocation window
 * are the server's own rules. A server process started with CONVENE_DNS_SERVERS (and one refusing a bad value) checks
 * the environment's wiring.
 */
import { describeConfigError, hostConfig } from "@convene/http"
import { verify } from "@octokit/webhooks-methods"
import dns2 from "dns2"
import { ConfigProvider, Duration, Effect, Either, Exit, Layer, Option, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServerProcess } from "../support/process.js"
import { header, type Received, type Receiver, startReceiver, waitFor } from "../support/receiver.js"
import { client, type Client, OPERATOR_TOKEN, type RunningServer, startServer } from "../support/server.js"
import { MovableClock } from "../support/clock.js"
import { makeTestTls, type TestTls } from "../support/tls.js"
import { everyStore } from "../support/stores.js"
import { expectPartnerError } from "./fixtures.js"

/** What the DNS server answers for a name: TXT records (each a list of chunks), SERVFAIL, REFUSED, or nothing at all. */
type Answer = ReadonlyArray<ReadonlyArray<string>> | "SERVFAIL" | "REFUSED" | "silent"

/** The response codes the server answers with (RFC 1035 4.1.1; dns2's types leave its RCODE table out). */
const rcode = { SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const

/** The authoritative zone the test edits; a name not in it is NXDOMAIN. */
const zone = new Map<string, Answer>()
let dnsServer: ReturnType<typeof dns2.createServer>
let dnsAddress: string

let tls: TestTls
let receiver: Receiver

beforeAll(async () => {
  dnsServer = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = dns2.Packet.createResponseFromRequest(request)
      const question = request.questions[0]
      const name = question?.name.toLowerCase() ?? ""
      const answer = zone.get(name)
      if (answer === "silent") return
      if (answer === undefined) response.header.rcode = rcode.NXDOMAIN
      else if (answer === "SERVFAIL") response.header.rcode = rcode.SERVFAIL
      else if (answer === "REFUSED") response.header.rcode = rcode.REFUSED
      else if (question !== undefined && question.type === dns2.Packet.TYPE.TXT) {
        for (const chunks of answer) response.answers.push(dns2.Packet.createResourceFromQuestion(question, { ttl: 1, data: [...chunks] }))
      }
      void send(response)
    }
  })
  const addresses = await dnsServer.listen({ udp: { port: 0, address: "127.0.0.1" } })
  dnsAddress = `127.0.0.1:${addresses.udp!.port}`
  tls = await makeTestTls()
  receiver = await startReceiver(tls, (_, response) => response.writeHead(200).end("ok"))
}, 60_000)

afterAll(async () => {
  await receiver?.close()
  await tls?.cleanup()
  await dnsServer?.close()
})

const recordName = (domain: string) => `_convene-challenge.${domain}`

/** Publishes TXT records at the challenge name of `domain` (each a list of chunks), or makes its server misbehave. */
const publish = (domain: string, answer: Answer) => zone.set(recordName(domain), answer)

/** A received body, parsed: each test reads the fields it asserts. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const jsonOf = (message: Received): any => JSON.parse(message.body)

const at = (path: string) => receiver.received.filter((message) => message.path === path)

/** The partner envelope `{error, code, request_id}` with the status and code, and nothing else. */
const RECORD_KEYS = ["domain", "expires_at", "last_checked_at", "status", "txt_record_name", "txt_record_value", "verified_at"]

const stores = everyStore

describe.each(stores)("domain verification ($name)", (store) => {
  const clock = new MovableClock()
  const scope = Effect.runSync(Scope.make())
  let server: RunningServer
  let operator: Client
  /** Domains and paths of this store's run (the DNS server and the receiver are shared). */
  const tag = store.name.toLowerCase()
  const hookPath = `/${tag}/hooks`
  let app: { id: string; api_key: string; client_id: string; webhook_secret: string }
  let other: { id: string; api_key: string; client_id: string; webhook_secret: string }
  /** The admin API as `app` (or as `other`). */
  let admin: Client
  let otherAdmin: Client

  const newApp = async (path: string) => {
    const created = await operator.post("/operator/v1/partner-apps", { name: `Acme ${tag}`, webhook_url: receiver.url + path })
    expect(created.status).toBe(201)
    return created.body as typeof app
  }
  const adminOf = (credentials: typeof app) => {
    const base = client(server.url)
    const headers = { "x-api-key": credentials.api_key, "x-client-id": credentials.client_id }
    return {
      ...base,
      get: (path: string) => base.get(path, headers),
      post: (path: string, body?: unknown) => base.post(path, body, headers)
    } as Client
  }

  /**
   * The events `path` received so far, each checked as a receiver does (signature, headers, body), and de-duplicated
   * on event_id as the document tells receivers to (a delivery in flight while the clock jumps days ahead outlives its
   * claim and may be sent again).
   */
  const eventsAt = async (path: string, secret: string) => {
    const seen = new Set<string>()
    const messages = at(path).filter((message) => {
      const id = jsonOf(message).event_id as string
      return seen.has(id) ? false : (seen.add(id), true)
    })
    for (const message of messages) {
      expect(await verify(secret, message.body, header(message, "x-svc-signature") ?? "")).toBe(true)
      const body = jsonOf(message)
      expect(header(message, "x-svc-event-type")).toBe(body.event_type)
      expect(header(message, "x-svc-event-id")).toBe(body.event_id)
      expect(Object.keys(body).sort()).toEqual(["data", "event_id", "event_type", "occurred_at", "partner_app_id", "workspace_id"])
      expect(body.workspace_id).toBeNull()
      expect(Object.keys(body.data).sort()).toEqual(["domain", "occurred_at", "status"])
      expect(message.body).not.toContain("convene-verification=")
    }
    return messages.map((message) => {
      const body = jsonOf(message)
      return [body.event_type, body.data.domain, body.data.status] as const
    })
  }
  /** Waits until `path` received `count` distinct events, and answers them all. */
  const eventsWhen = async (path: string, secret: string, count: number) => {
    await waitFor(async () => ((await eventsAt(path, secret)).length >= count ? true : undefined), `${count} event(s) at ${path}`)
    return eventsAt(path, secret)
  }

  /** Moves the server's clock on, and gives its sweep (every 100 ms) time to run. */
  const after = async (hours: number) => {
    clock.offset += Duration.toMillis(Duration.hours(hours))
    await new Promise((resolve) => setTimeout(resolve, 300))
  }

  /** Waits until a sweep re-validated `domain` since the clock last moved. */
  const revalidated = (api: Client, domain: string) => {
    const since = clock.unsafeCurrentTimeMillis() - 60_000
    return waitFor(async () => {
      const checked = (await api.get(`/v1/partner/admin/idp/domains/${domain}`)).body.last_checked_at
      return checked !== null && Date.parse(checked) >= since ? true : undefined
    }, `a re-validation of ${domain}`)
  }

  beforeAll(async () => {
    const ports = await Effect.runPromise(Scope.extend(Layer.build(store.layer(scope)), scope))
    server = await startServer({
      store: Layer.succeedContext(ports),
      clock,
      outbound: { allowHosts: ["127.0.0.1"], ca: [tls.caPem], smtpUrl: Option.none(), mailFrom: Option.none() },
      dns: { servers: [dnsAddress], timeoutMs: 300, tries: 1, sweepIntervalMs: 100 }
    })
    operator = client(server.url, OPERATOR_TOKEN)
    app = await newApp(hookPath)
    other = await newApp(`${hookPath}/other`)
    admin = adminOf(app)
    otherAdmin = adminOf(other)
  }, 120_000)

  afterAll(async () => {
    await server?.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }, 60_000)

  it("verify, rotate, token_mismatch, temporary failures (SERVFAIL, REFUSED, no answer), then verified: each answer and event", async () => {
    const domain = `${tag}.example.com`
    const started = await admin.post(`/v1/partner/admin/idp/domains/${domain.toUpperCase()}/verify`)
    expect(started.status).toBe(201)
    expect(Object.keys(started.body).sort()).toEqual(RECORD_KEYS)
    expect(started.body).toMatchObject({
      domain,
      status: "pending",
      txt_record_name: recordName(domain),
      verified_at: null,
      last_checked_at: null
    })
    expect(Date.parse(started.body.expires_at) - clock.unsafeCurrentTimeMillis()).toBeGreaterThan(Duration.toMillis(Duration.days(7)) - 60_000)

    const rotated = await admin.post(`/v1/partner/admin/idp/domains/${domain}/verify`)
    expect(rotated.status).toBe(200)
    expect(rotated.body.txt_record_value).not.toBe(started.body.txt_record_value)
    const challenge: string = rotated.body.txt_record_value
    expect((await admin.get(`/v1/partner/admin/idp/domains/${domain}`)).body).toEqual(rotated.body)

    // NXDOMAIN, then another value (the old challenge): token_mismatch, each with its failed event.
    const none = await admin.post(`/v1/partner/admin/idp/domains/${domain}/check`)
    expect(none.status).toBe(200)
    expect(none.body).toMatchObject({ status: "pending", check: { result: "token_mismatch" } })
    expect(none.body.last_checked_at).not.toBeNull()
    publish(domain, [[started.body.txt_record_value]])
    expect((await admin.post(`/v1/partner/admin/idp/domains/${domain}/check`)).body.check.result).toBe("token_mismatch")
    expect(await eventsWhen(hookPath, app.webhook_secret, 2)).toEqual([
      ["partner.idp.domain_verification_failed", domain, "pending"],
      ["partner.idp.domain_verification_failed", domain, "pending"]
    ])

    // Temporary failures: 503, nothing changed, nothing sent.
    const before = (await admin.get(`/v1/partner/admin/idp/domains/${domain}`)).body
    for (const failure of ["SERVFAIL", "REFUSED", "silent"] as const) {
      publish(domain, failure)
      const answer = await admin.post(`/v1/partner/admin/idp/domains/${domain}/check`)
      expectPartnerError(answer, 503, "dns_temporary_failure", recordName(domain))
      expect(answer.body.error).toContain("nothing changed")
    }
    expect((await admin.get(`/v1/partner/admin/idp/domains/${domain}`)).body).toEqual(before)

    // The challenge published in two chunks beside another record: verified.
    publish(domain, [["v=spf1 -all"], [challenge.slice(0, 30), challenge.slice(30)]])
    const verified = await admin.post(`/v1/partner/admin/idp/domains/${domain}/check`)
    expect(verified.status).toBe(200)
    expect(verified.body).toMatchObject({ domain, status: "verified", check: { result: "verified" } })
    expect(verified.body.verified_at).not.toBeNull()
    expect(await eventsWhen(hookPath, app.webhook_secret, 3)).toEqual([
      ["partner.idp.domain_verification_failed", domain, "pending"],
      ["partner.idp.domain_verification_failed", domain, "pending"],
      ["partner.idp.domain_verified", domain, "verified"]
    ])
    const [event] = at(hookPath).slice(-1).map(jsonOf)
    expect(event).toMatchObject({ partner_app_id: app.id, data: { occurred_at: verified.body.verified_at } })

    // Verify again: nothing changes. Another app: 409, neither start nor completion; a subdomain is its own.
    expect((await admin.post(`/v1/partner/admin/idp/domains/${domain}/verify`)).body).toMatchObject({ status: "verified", txt_record_value: challenge })
    expectPartnerError(await otherAdmin.post(`/v1/partner/admin/idp/domains/${domain}/verify`), 409, "domain_already_claimed", domain)
    const sub = await otherAdmin.post(`/v1/partner/admin/idp/domains/eu.${domain}/verify`)
    expect(sub.status).toBe(201)
    expectPartnerError(await admin.get(`/v1/partner/admin/idp/domains/eu.${domain}`), 404, "not_found", `eu.${domain}`)
  })

  it("answers every bad request in the partner envelope: unknown domain 404, invalid domain 400 naming it, generic domain 400, no credentials 401", async () => {
    expectPartnerError(await admin.get(`/v1/partner/admin/idp/domains/never-${tag}.example`), 404, "not_found")
    expectPartnerError(await admin.post(`/v1/partner/admin/idp/domains/never-${tag}.example/check`), 404, "not_found")
    for (const bad of ["localhost", "1.2.3.4", "a..b.example", "-bad.example", "under_score.example", `${"a".repeat(64)}.example`]) {
      const answer = await admin.post(`/v1/partner/admin/idp/domains/${encodeURIComponent(bad)}/verify`)
      expectPartnerError(answer, 400, "invalid_request", "domain: must be a domain name")
    }
    for (const generic of ["gmail.com", "Outlook.com"]) {
      expectPartnerError(await admin.post(`/v1/partner/admin/idp/domains/${generic}/verify`), 400, "domain_is_generic", "generic e-mail domain")
    }
    expectPartnerError(await admin.get("/v1/partner/admin/idp/domains/gmail.com"), 404, "not_found")
    expectPartnerError(await client(server.url).post(`/v1/partner/admin/idp/domains/x-${tag}.example/verify`), 401, "missing_api_key")
  })

  it("the sweep expires a challenge after 7 days and revokes a verified domain only after 72 hours without its proof", async () => {
    const late = `late-${tag}.example.org`
    const lost = `lost-${tag}.example.org`
    const path = `${hookPath}/sweep`
    const sweeper = await newApp(path)
    const sweeperAdmin = adminOf(sweeper)
    await sweeperAdmin.post(`/v1/partner/admin/idp/domains/${late}/verify`)
    const challenge = (await sweeperAdmin.post(`/v1/partner/admin/idp/domains/${lost}/verify`)).body.txt_record_value
    publish(lost, [[challenge]])
    expect((await sweeperAdmin.post(`/v1/partner/admin/idp/domains/${lost}/check`)).body.status).toBe("verified")

    await after(24 * 7 - 1)
    expect((await sweeperAdmin.get(`/v1/partner/admin/idp/domains/${late}`)).body.status).toBe("pending")
    await after(1)
    await waitFor(async () => ((await sweeperAdmin.get(`/v1/partner/admin/idp/domains/${late}`)).body.status === "expired" ? true : undefined), "expiry")
    expect((await sweeperAdmin.post(`/v1/partner/admin/idp/domains/${late}/check`)).body.check.result).toBe("token_expired")

    // The re-validations found the proof meanwhile. A DNS outage of days does not count against the domain.
    publish(lost, "SERVFAIL")
    await after(24 * 5)
    expect((await sweeperAdmin.get(`/v1/partner/admin/idp/domains/${lost}`)).body.status).toBe("verified")
    // Now the proof is gone (NXDOMAIN): a check finds it missing, the sweeps 24 and 48 hours later too, and the one
    // 72 hours after the first revokes.
    zone.delete(recordName(lost))
    expect((await sweeperAdmin.post(`/v1/partner/admin/idp/domains/${lost}/check`)).body.check.result).toBe("proof_missing")
    for (let day = 1; day <= 2; day++) {
      await after(24)
      await revalidated(sweeperAdmin, lost)
      expect((await sweeperAdmin.get(`/v1/partner/admin/idp/domains/${lost}`)).body.status).toBe("verified")
    }
    await after(24)
    await waitFor(async () => ((await sweeperAdmin.get(`/v1/partner/admin/idp/domains/${lost}`)).body.status === "revoked" ? true : undefined), "revocation")
    expect(await eventsWhen(path, sweeper.webhook_secret, 3)).toEqual([
      ["partner.idp.domain_verified", lost, "verified"],
      ["partner.idp.domain_verification_failed", late, "expired"],
      ["partner.idp.domain_revoked", lost, "revoked"]
    ])
    // Revoked: another app may now start and complete its own verification.
    const claimed = await otherAdmin.post(`/v1/partner/admin/idp/domains/${lost}/verify`)
    expect(claimed.status).toBe(201)
  })

  it("honours the app's webhook filter, set by the operator and shown in the app's views", async () => {
    const path = `${hookPath}/filtered`
    const filtered = await newApp(path)
    const patched = await operator.patch(`/operator/v1/partner-apps/${filtered.id}`, { webhook_events: ["partner.idp.domain_verified"] })
    expect(patched.status).toBe(200)
    expect(patched.body.webhook_events).toEqual(["partner.idp.domain_verified"])
    expect((await operator.patch(`/operator/v1/partner-apps/${filtered.id}`, { webhook_events: ["nope"] })).status).toBe(400)
    const filteredAdmin = adminOf(filtered)
    expect((await filteredAdmin.get("/v1/partner/admin/app")).body.webhook_events).toEqual(["partner.idp.domain_verified"])
    const domain = `filtered-${tag}.example.net`
    const challenge = (await filteredAdmin.post(`/v1/partner/admin/idp/domains/${domain}/verify`)).body.txt_record_value
    expect((await filteredAdmin.post(`/v1/partner/admin/idp/domains/${domain}/check`)).body.check.result).toBe("token_mismatch")
    publish(domain, [[challenge]])
    expect((await filteredAdmin.post(`/v1/partner/admin/idp/domains/${domain}/check`)).body.status).toBe("verified")
    expect(await eventsWhen(path, filtered.webhook_secret, 1)).toEqual([["partner.idp.domain_verified", domain, "verified"]])
  })
})

describe("CONVENE_DNS_SERVERS", () => {
  const read = (value: string | undefined) =>
    Effect.runSync(Effect.either(Effect.withConfigProvider(
      hostConfig,
      ConfigProvider.fromMap(new Map(value === undefined ? [] : [["CONVENE_DNS_SERVERS", value]]))
    ))).pipe(Either.map((config) => config.dns?.servers), Either.mapLeft(describeConfigError))

  it("reads a comma list of IPv4 and IPv6 addresses with optional ports; unset or empty: the system's resolver", () => {
    expect(read(undefined)).toEqual(Either.right([]))
    expect(read(" ")).toEqual(Either.right([]))
    expect(read(" 10.0.0.53, 127.0.0.1:5353 ,::1, [fd00::53]:53")).toEqual(
      Either.right(["10.0.0.53", "127.0.0.1:5353", "::1", "[fd00::53]:53"])
    )
  })

  it.each(["dns.example.com", "10.0.0.300", "10.0.0.53:0", "10.0.0.53:65536", "fd00::53:53:x", "[10.0.0.53]:53", "[fd00::53]:", "10.0.0.53:"])(
    "refuses %j, naming the variable and the entry",
    (entry) => {
      expect(read(`127.0.0.1, ${entry}`)).toEqual(Either.left(
        "CONVENE_DNS_SERVERS: expected a comma list of IP addresses with an optional port (for example " +
          `10.0.0.53,127.0.0.1:5353,[fd00::53]:53), not ${JSON.stringify(entry)}`
      ))
    }
  )
})

describe("a server process with CONVENE_DNS_SERVERS", () => {
  it("looks the challenge up through the named server", async () => {
    const server = await startServerProcess({ CONVENE_STORE: "memory", CONVENE_DNS_SERVERS: ` ${dnsAddress} ` })
    try {
      const operator = client(server.url, OPERATOR_TOKEN)
      const app = (await operator.post("/operator/v1/partner-apps", { name: "Process app" })).body
      const headers = { "x-api-key": app.api_key, "x-client-id": app.client_id }
      const api = client(server.url)
      const domain = "process.example.com"
      const challenge = (await api.post(`/v1/partner/admin/idp/domains/${domain}/verify`, undefined, headers)).body.txt_record_value
      publish(domain, [[challenge]])
      const checked = await api.post(`/v1/partner/admin/idp/domains/${domain}/check`, undefined, headers)
      expect(checked.body).toMatchObject({ status: "verified", check: { result: "verified" } })
    } finally {
      await server.stop()
    }
  }, 120_000)

  it("stops at start on a CONVENE_DNS_SERVERS that does not parse, naming the variable and the entry", async () => {
    const started = await startServerProcess({ CONVENE_STORE: "memory", CONVENE_DNS_SERVERS: "127.0.0.1:53,dns.example.com" }).then(
      async (process) => {
        await process.stop()
        return "started"
      },
      (error: Error) => error.message
    )
    expect(started).toContain("the server exited with 1")
    expect(started).toContain("CONVENE_DNS_SERVERS: expected a comma list of IP addresses with an optional port")
    expect(started).toContain('not "dns.example.com"')
  }, 120_000)
})
