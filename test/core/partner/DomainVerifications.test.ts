/**
 * Domain verification's rules (DomainVerifications) on the memory store with the TestClock, and the transitions that
 * must happen once on PostgreSQL: every row of the partner document's state table (start, rotation, verified,
 * token_mismatch, token_expired by the sweep and by a check, re-validation, revocation only after the whole window),
 * temporary DNS failures that change and send nothing, exact domain matching and ownership, the events through the
 * outbox (sent by the real worker to the scripted Outbound, signed) with the webhook filter, and racing sweeps.
 *
 * DNS is a scripted DnsResolver here (the records of each name, or a temporary failure); the real resolver against a
 * real DNS server is test/http/partner-domains.test.ts's.
 */
import {
  challengeRecordName,
  Convene,
  CreatePartnerApp,
  DeliveryWorker,
  DnsResolver,
  DnsTemporaryFailure,
  DomainVerification,
  DomainVerificationStore,
  DomainVerifications,
  EmailDomain,
  type PartnerAppId,
  PartnerApps,
  revocationWindow,
  type StorePorts,
  trusted,
  UpdatePartnerApp
} from "@convene/core"
import * as StoreMemory from "@convene/store-memory"
import * as StorePg from "@convene/store-pg"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { verify } from "@octokit/webhooks-methods"
import { Context, DateTime, Deferred, Duration, Effect, Exit, Layer, Option, Ref, Scope, Schema, TestClock, type TestServices } from "effect"
import { serverDatabase } from "../../../packages/store-pg/test/fixtures.js"
import { freshUrl, takeRequests, webhooksOver } from "../webhooks/fixtures.js"

/** What the scripted resolver answers for a name: its TXT values, or a temporary failure. */
type Zone = ReadonlyMap<string, ReadonlyArray<string> | "SERVFAIL">

class ScriptedDns extends Context.Tag("test/ScriptedDns")<ScriptedDns, {
  readonly zone: Ref.Ref<Zone>
  /** Called on every lookup before it answers (a test holds lookups back to make two sweeps meet). */
  readonly gate: Ref.Ref<Effect.Effect<void>>
  readonly lookups: Ref.Ref<number>
}>() {}

const dnsLayer: Layer.Layer<DnsResolver | ScriptedDns> = Layer.effectContext(Effect.gen(function*() {
  const zone = yield* Ref.make<Zone>(new Map())
  const gate = yield* Ref.make<Effect.Effect<void>>(Effect.void)
  const lookups = yield* Ref.make(0)
  const resolver = DnsResolver.of({
    resolveTxt: (name) =>
      Effect.gen(function*() {
        yield* Ref.update(lookups, (n) => n + 1)
        yield* Effect.flatten(Ref.get(gate))
        const found = (yield* Ref.get(zone)).get(name) ?? []
        if (found === "SERVFAIL") return yield* Effect.fail(new DnsTemporaryFailure({ message: "the DNS lookup failed temporarily (ESERVFAIL)" }))
        return found
      })
  })
  return Context.make(DnsResolver, resolver).pipe(Context.add(ScriptedDns, { zone, gate, lookups }))
}))

/** Publishes `values` at the challenge name of `domain` (an empty list: no record; "SERVFAIL": the server fails). */
const publish = (domain: string, values: ReadonlyArray<string> | "SERVFAIL") =>
  Effect.flatMap(ScriptedDns, (dns) => Ref.update(dns.zone, (zone) => new Map([...zone, [challengeRecordName(domain), values]])))

/** The partner room and the domain verifications over the webhook services on `store`. */
const servicesOver = (store: Layer.Layer<StorePorts>) =>
  Layer.mergeAll(Convene.partnerLayer, Convene.domainVerificationsLayer).pipe(
    Layer.provideMerge(dnsLayer),
    Layer.provideMerge(webhooksOver(store))
  )

/** On a fresh memory store. */
const MemoryLive = servicesOver(StoreMemory.layer)

const test = <E>(
  name: string,
  body: () => Effect.Effect<void, E, Layer.Layer.Success<typeof MemoryLive> | TestServices.TestServices>
) => it.effect(name, () => Effect.provide(body(), MemoryLive))

const domain = Schema.decodeSync(EmailDomain)

/** A partner app with a webhook URL (and the filter, when given); answers it with its webhook secret. */
const newApp = (fields: Partial<CreatePartnerApp> = {}) =>
  Effect.gen(function*() {
    const url = freshUrl()
    const created = yield* (yield* PartnerApps).create(CreatePartnerApp.make({ name: "Acme SSO", webhook_url: url, ...fields }))
    return { id: created.id, url, secret: created.webhook_secret }
  })

const verifications = DomainVerifications

/** Sends what the outbox holds (the real worker) and answers the bodies the app's URL received, parsed. */
const delivered = (app: { readonly url: string; readonly secret: string }) =>
  Effect.gen(function*() {
    yield* (yield* DeliveryWorker).runOnce({ limit: 1000 })
    const requests = yield* takeRequests(app.url)
    for (const request of requests) {
      expect(yield* Effect.promise(() => verify(app.secret, request.body, request.headers["X-Svc-Signature"] ?? ""))).toBe(true)
    }
    return requests.map((request) => ({ type: request.headers["X-Svc-Event-Type"], body: JSON.parse(request.body) }))
  })

const sweep = Effect.flatMap(verifications, (service) => service.sweep())

const hours = (n: number) => TestClock.adjust(Duration.hours(n))

/** Starts a verification of `name` for `appId` and publishes its challenge; answers the challenge. */
const published = (appId: PartnerAppId, name: string) =>
  Effect.gen(function*() {
    const { verification } = yield* (yield* verifications).verify(appId, domain(name))
    yield* publish(name, ["v=spf1 -all", verification.txt_record_value])
    return verification.txt_record_value
  })

describe("domain verification (memory store, TestClock)", () => {
  test("verify issues a unique challenge at _convene-challenge.<domain>, pending for 7 days; a check with it published verifies", () =>
    Effect.gen(function*() {
      const app = yield* newApp()
      const service = yield* verifications
      const started = yield* service.verify(app.id, domain("Example.COM"))
      expect(started.created).toBe(true)
      const record = started.verification
      expect(record).toMatchObject({
        domain: "example.com",
        status: "pending",
        txt_record_name: "_convene-challenge.example.com",
        verified_at: null,
        last_checked_at: null
      })
      expect(record.txt_record_value).toMatch(/^convene-verification=[A-Za-z0-9_-]{43}$/)
      expect(DateTime.distance(yield* DateTime.now, record.expires_at)).toBe(Duration.toMillis(Duration.days(7)))
      const other = yield* service.verify((yield* newApp()).id, domain("example.com"))
      expect(other.verification.txt_record_value).not.toBe(record.txt_record_value)

      yield* hours(1)
      yield* publish("example.com", ["unrelated", record.txt_record_value])
      const checked = yield* service.check(app.id, domain("example.com"))
      expect(checked.check.result).toBe("verified")
      expect(checked.status).toBe("verified")
      expect(checked.verified_at).toEqual(yield* DateTime.now)
      expect(checked.last_checked_at).toEqual(yield* DateTime.now)
      expect(yield* service.status(app.id, domain("example.com"))).toMatchObject({ status: "verified" })
      expect(yield* (yield* DomainVerificationStore).verifiedOwner("example.com")).toEqual(Option.some(app.id))

      const [event] = yield* delivered(app)
      expect(event!.type).toBe("partner.idp.domain_verified")
      expect(event!.body).toEqual({
        event_id: expect.any(String),
        event_type: "partner.idp.domain_verified",
        occurred_at: DateTime.formatIso(yield* DateTime.now),
        partner_app_id: app.id,
        workspace_id: null,
        data: { domain: "example.com", status: "verified", occurred_at: DateTime.formatIso(yield* DateTime.now) }
      })
      expect(JSON.stringify(event!.body)).not.toContain(record.txt_record_value)
    }))

  test("a check that finds no matching value is token_mismatch: still pending, one failed event per check", () =>
    Effect.gen(function*() {
      const app = yield* newApp()
      const service = yield* verifications
      const { verification } = yield* service.verify(app.id, domain("acme.io"))
      const first = yield* service.check(app.id, domain("acme.io"))
      expect(first.check.result).toBe("token_mismatch")
      expect(first.status).toBe("pending")
      expect(first.last_checked_at).toEqual(yield* DateTime.now)
      yield* publish("acme.io", ["convene-verification=somebody-else", verification.txt_record_value.slice(0, -1)])
      expect((yield* service.check(app.id, domain("acme.io"))).check.result).toBe("token_mismatch")
      const events = yield* delivered(app)
      expect(events.map((event) => [event.type, event.body.data.status])).toEqual([
        ["partner.idp.domain_verification_failed", "pending"],
        ["partner.idp.domain_verification_failed", "pending"]
      ])
      expect(Object.keys(events[0]!.body.data).sort()).toEqual(["domain", "occurred_at", "status"])
    }))

  test("re-calling verify rotates the challenge and restarts the 7 days; the old value no longer verifies", () =>
    Effect.gen(function*() {
      const app = yield* newApp()
      const service = yield* verifications
      const old = yield* published(app.id, "rotate.example")
      yield* hours(24 * 6)
      const rotated = yield* service.verify(app.id, domain("rotate.example"))
      expect(rotated.created).toBe(false)
      expect(rotated.verification.txt_record_value).not.toBe(old)
      expect(rotated.verification.expires_at).toEqual(DateTime.add(yield* DateTime.now, { days: 7 }))
      expect((yield* service.check(app.id, domain("rotate.example"))).check.result).toBe("token_mismatch")
      // Past the first challenge's 7 days, the rotated one is still pending.
      yield* hours(48)
      expect(yield* sweep).toMatchObject({ expired: 0 })
      yield* publish("rotate.example", [rotated.verification.txt_record_value])
      expect((yield* service.check(app.id, domain("rotate.example"))).status).toBe("verified")
    }))

  test("the sweep expires a challenge unclaimed for 7 days (token_expired), once; a check then answers token_expired without a lookup", () =>
    Effect.gen(function*() {
      const app = yield* newApp()
      const service = yield* verifications
      yield* service.verify(app.id, domain("slow.example"))
      yield* hours(24 * 7 - 1)
      expect(yield* sweep).toMatchObject({ expired: 0 })
      expect((yield* service.status(app.id, domain("slow.example"))).status).toBe("pending")
      yield* hours(1)
      expect(yield* sweep).toMatchObject({ expired: 1 })
      expect(yield* sweep).toMatchObject({ expired: 0 })
      expect((yield* service.status(app.id, domain("slow.example"))).status).toBe("expired")
      const lookups = yield* Effect.flatMap(ScriptedDns, (dns) => Ref.get(dns.lookups))
      const checked = yield* service.check(app.id, domain("slow.example"))
      expect(checked.check.result).toBe("token_expired")
      expect(yield* Effect.flatMap(ScriptedDns, (dns) => Ref.get(dns.lookups))).toBe(lookups)
      const events = yield* delivered(app)
      expect(events.map((event) => [event.type, event.body.data.status])).toEqual([
        ["partner.idp.domain_verification_failed", "expired"]
      ])
      // Starting again after expiry: a new pending challenge.
      const again = yield* service.verify(app.id, domain("slow.example"))
      expect(again).toMatchObject({ created: false, verification: { status: "pending" } })
    }))

  test("a check past expires_at expires the challenge itself (token_expired, the failed event), before any sweep", () =>
    Effect.gen(function*() {
      const app = yield* newApp()
      const service = yield* verifications
      yield* published(app.id, "late.example")
      yield* hours(24 * 7)
      const checked = yield* service.check(app.id, domain("late.example"))
      expect(checked).toMatchObject({ status: "expired", check: { result: "token_expired" } })
      expect(yield* sweep).toMatchObject({ expired: 0 })
      expect((yield* delivered(app)).map((event) => event.body.data.status)).toEqual(["expired"])
    }))

  test("temporary DNS failures change nothing and send nothing: on a check (DomainCheckUnavailable) and in the sweep", () =>
    Effect.gen(function*() {
      const app = yield* newApp()
      const service = yield* verifications
      yield* service.verify(app.id, domain("flaky.example"))
      yield* publish("flaky.example", "SERVFAIL")
      const before = yield* service.status(app.id, domain("flaky.example"))
      const failed = yield* Effect.flip(service.check(app.id, domain("flaky.example")))
      expect(failed._tag).toBe("DomainCheckUnavailable")
      expect(failed.message).toContain("ESERVFAIL")
      expect(yield* service.status(app.id, domain("flaky.example"))).toEqual(before)

      // A verified domain whose DNS fails for days is never revoked for it.
      const challenge = yield* published(app.id, "steady.example")
      expect((yield* service.check(app.id, domain("steady.example"))).status).toBe("verified")
      yield* delivered(app)
      yield* publish("steady.example", "SERVFAIL")
      for (let day = 1; day <= 6; day++) {
        yield* hours(day === 1 ? 24 : 23)
        expect(yield* sweep).toMatchObject({ revoked: 0, temporaryFailures: 1 })
        // Tried: not looked up again at every sweep, only a re-validation interval later.
        yield* hours(1)
        expect(yield* sweep).toMatchObject({ revalidated: 0, temporaryFailures: 0 })
      }
      expect((yield* service.status(app.id, domain("steady.example"))).status).toBe("verified")
      expect(yield* delivered(app)).toEqual([])
      yield* publish("steady.example", [challenge])
      yield* hours(24)
      expect(yield* sweep).toMatchObject({ revalidated: 1, temporaryFailures: 0 })
    }))

  test("re-validation every 24 hours; revoked only when the proof is absent at lookups 72 hours apart, once", () =>
    Effect.gen(function*() {
      const app = yield* newApp()
      const service = yield* verifications
      const challenge = yield* published(app.id, "lost.example")
      yield* service.check(app.id, domain("lost.example"))
      yield* delivered(app)
      yield* hours(23)
      expect(yield* sweep).toMatchObject({ revalidated: 0 })
      yield* hours(1)
      expect(yield* sweep).toMatchObject({ revalidated: 1 })
      const verifiedAt = (yield* service.status(app.id, domain("lost.example"))).verified_at

      // The proof disappears: three more daily lookups find it absent, the fourth (72 h after the first) revokes.
      yield* publish("lost.example", [])
      for (let day = 1; day <= 3; day++) {
        yield* hours(24)
        expect(yield* sweep).toMatchObject({ revoked: 0 })
        expect((yield* service.status(app.id, domain("lost.example"))).status).toBe("verified")
      }
      // The proof comes back in between: the count starts over.
      yield* publish("lost.example", [challenge])
      yield* hours(24)
      yield* sweep
      yield* publish("lost.example", ["someone-else"])
      for (let day = 1; day <= 3; day++) {
        yield* hours(24)
        expect(yield* sweep).toMatchObject({ revoked: 0 })
      }
      const checked = yield* service.check(app.id, domain("lost.example"))
      expect(checked.check.result).toBe("proof_missing")
      yield* hours(24)
      expect(Duration.toHours(revocationWindow)).toBe(72)
      expect(yield* sweep).toMatchObject({ revoked: 1 })
      expect(yield* sweep).toMatchObject({ revoked: 0 })
      const revoked = yield* service.status(app.id, domain("lost.example"))
      expect(revoked).toMatchObject({ status: "revoked", verified_at: verifiedAt })
      expect((yield* service.check(app.id, domain("lost.example"))).check.result).toBe("revoked")
      expect((yield* delivered(app)).map((event) => [event.type, event.body.data.status])).toEqual([
        ["partner.idp.domain_revoked", "revoked"]
      ])
      expect(yield* (yield* DomainVerificationStore).verifiedOwner("lost.example")).toEqual(Option.none())
    }))

  test("verify on the app's own verified domain changes nothing", () =>
    Effect.gen(function*() {
      const app = yield* newApp()
      const service = yield* verifications
      yield* published(app.id, "mine.example")
      const verified = yield* service.check(app.id, domain("mine.example"))
      const again = yield* service.verify(app.id, domain("mine.example"))
      expect(again.created).toBe(false)
      expect(again.verification).toMatchObject({ status: "verified", txt_record_value: verified.txt_record_value })
    }))

  test("verification belongs to the app that completed it; domains match exactly, subdomains verify on their own", () =>
    Effect.gen(function*() {
      const first = yield* newApp()
      const second = yield* newApp()
      const service = yield* verifications
      const secondChallenge = (yield* service.verify(second.id, domain("shared.example"))).verification.txt_record_value
      const firstChallenge = yield* published(first.id, "shared.example")
      yield* publish("shared.example", [firstChallenge, secondChallenge])
      expect((yield* service.check(first.id, domain("shared.example"))).status).toBe("verified")
      // The second app published its own value too, but the domain is the first's.
      const refused = yield* Effect.flip(service.check(second.id, domain("shared.example")))
      expect(refused).toMatchObject({ _tag: "DomainVerifiedByAnotherApp", message: "the domain shared.example is verified by another partner app" })
      expect((yield* service.status(second.id, domain("shared.example"))).status).toBe("pending")
      expect((yield* Effect.flip(service.verify(second.id, domain("shared.example"))))._tag).toBe("DomainVerifiedByAnotherApp")
      expect((yield* Effect.flip(service.verify((yield* newApp()).id, domain("shared.example"))))._tag).toBe(
        "DomainVerifiedByAnotherApp"
      )

      // A subdomain (and a parent) is another domain: free for the second app, and not verified by the first's proof.
      const sub = yield* published(second.id, "eu.shared.example")
      expect((yield* service.check(second.id, domain("eu.shared.example"))).status).toBe("verified")
      expect(sub).not.toBe(firstChallenge)
      expect((yield* Effect.flip(service.status(first.id, domain("eu.shared.example"))))._tag).toBe("DomainVerificationNotFound")

      // Once the first app's verification is revoked, the second may complete its own.
      yield* publish("shared.example", [secondChallenge])
      for (let day = 1; day <= 4; day++) {
        yield* hours(24)
        yield* sweep
      }
      expect((yield* service.status(first.id, domain("shared.example"))).status).toBe("revoked")
      yield* service.verify(second.id, domain("shared.example"))
      const fresh = (yield* service.status(second.id, domain("shared.example"))).txt_record_value
      yield* publish("shared.example", [fresh])
      expect((yield* service.check(second.id, domain("shared.example"))).status).toBe("verified")
    }))

  test("events go to the app without any connected workspace, only while it can be told, and its webhook filter is honoured", () =>
    Effect.gen(function*() {
      const apps = yield* PartnerApps
      const service = yield* verifications
      const filtered = yield* newApp({ webhook_events: ["partner.idp.domain_revoked", "action_item.updated"] })
      yield* published(filtered.id, "filtered.example")
      yield* service.check(filtered.id, domain("filtered.example"))
      expect(yield* delivered(filtered)).toEqual([])

      const suspended = yield* newApp()
      yield* published(suspended.id, "quiet.example")
      yield* apps.update(suspended.id, UpdatePartnerApp.make({ status: "suspended" }))
      expect((yield* service.check(suspended.id, domain("quiet.example"))).status).toBe("verified")
      expect(yield* delivered(suspended)).toEqual([])

      // The filter cleared: every type again; an empty list: nothing.
      yield* apps.update(filtered.id, UpdatePartnerApp.make({ webhook_events: null }))
      yield* service.verify(filtered.id, domain("other.example"))
      yield* service.check(filtered.id, domain("other.example"))
      expect((yield* delivered(filtered)).map((event) => event.type)).toEqual(["partner.idp.domain_verification_failed"])
      const view = yield* apps.update(filtered.id, UpdatePartnerApp.make({ webhook_events: [] }))
      expect(view.webhook_events).toEqual([])
      yield* service.check(filtered.id, domain("other.example"))
      expect(yield* delivered(filtered)).toEqual([])
    }))

  test("racing sweeps over one due domain make its transition and send its event once (memory)", () =>
    Effect.gen(function*() {
      const app = yield* newApp()
      const service = yield* verifications
      yield* published(app.id, "race.example")
      yield* service.check(app.id, domain("race.example"))
      yield* service.verify(app.id, domain("race-expiry.example"))
      yield* delivered(app)
      yield* publish("race.example", [])
      const reports = []
      for (let day = 1; day <= 4; day++) {
        yield* hours(24)
        reports.push(...(yield* Effect.all([service.sweep(), service.sweep(), service.sweep()], { concurrency: "unbounded" })))
      }
      expect(reports.reduce((sum, report) => sum + report.revoked, 0)).toBe(1)
      expect(reports.reduce((sum, report) => sum + report.expired, 0)).toBe(0)
      yield* hours(24 * 3)
      const expiries = yield* Effect.all([service.sweep(), service.sweep()], { concurrency: "unbounded" })
      expect(expiries.reduce((sum, report) => sum + report.expired, 0)).toBe(1)
      expect((yield* delivered(app)).map((event) => event.body.data.status).sort()).toEqual(["expired", "revoked"])
    }))
})

/** A verified record of `appId` whose proof has been missing since 73 hours ago and that was last checked 25 hours ago. */
const losing = (appId: PartnerAppId, name: string, at: DateTime.Utc) =>
  new DomainVerification({
    partner_app_id: appId,
    domain: domain(name),
    status: "verified",
    challenge: `convene-verification=${crypto.randomUUID()}`,
    issued_at: DateTime.subtract(at, { days: 10 }),
    expires_at: DateTime.subtract(at, { days: 3 }),
    verified_at: DateTime.subtract(at, { days: 9 }),
    last_checked_at: DateTime.subtract(at, { hours: 25 }),
    last_proven_at: DateTime.subtract(at, { days: 4 }),
    proof_missing_since: DateTime.subtract(at, { hours: 73 }),
    created_at: DateTime.subtract(at, { days: 10 }),
    updated_at: DateTime.subtract(at, { hours: 25 })
  }, trusted)

describe("racing sweeps on PostgreSQL (units of work deciding about one domain in separate transactions)", () => {
  const scope = Effect.runSync(Scope.make())
  let ports: Context.Context<StorePorts>
  beforeAll(async () => {
    const url = await Effect.runPromise(Scope.extend(serverDatabase, scope))
    ports = await Effect.runPromise(Scope.extend(Layer.build(StorePg.layerPg({ url })), scope))
  }, 60_000)
  afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

  it.live("four sweeps meeting at the DNS lookup revoke each domain and enqueue its event exactly once", () =>
    Effect.gen(function*() {
      const app = yield* newApp()
      const records = yield* DomainVerificationStore
      const at = yield* DateTime.now
      yield* records.put(losing(app.id, "pg-race.example", at))
      yield* records.put(losing(app.id, "pg-other.example", at))
      // Every lookup waits until four are waiting: the sweeps then decide at once, each in its own transaction.
      const dns = yield* ScriptedDns
      const arrived = yield* Ref.make(0)
      const open = yield* Deferred.make<void>()
      yield* Ref.set(
        dns.gate,
        Effect.flatMap(Ref.updateAndGet(arrived, (n) => n + 1), (n) => n >= 4 ? Deferred.succeed(open, undefined) : Effect.void).pipe(
          Effect.zipRight(Deferred.await(open))
        )
      )
      const service = yield* DomainVerifications
      const reports = yield* Effect.all([service.sweep(), service.sweep(), service.sweep(), service.sweep()], {
        concurrency: "unbounded"
      })
      expect(reports.reduce((sum, report) => sum + report.revoked, 0)).toBe(2)
      expect(Option.map(yield* records.get(app.id, "pg-race.example"), (record) => record.status)).toEqual(Option.some("revoked"))
      const events = yield* delivered(app)
      expect(events.map((event) => [event.type, event.body.data.domain]).sort()).toEqual([
        ["partner.idp.domain_revoked", "pg-other.example"],
        ["partner.idp.domain_revoked", "pg-race.example"]
      ])
    }).pipe(Effect.provide(servicesOver(Layer.succeedContext(ports)))), 60_000)

  it.live("racing checks of two apps that both published their challenge verify the domain for one of them only", () =>
    Effect.gen(function*() {
      const service = yield* DomainVerifications
      const first = yield* newApp()
      const second = yield* newApp()
      const a = (yield* service.verify(first.id, domain("pg-claim.example"))).verification.txt_record_value
      const b = (yield* service.verify(second.id, domain("pg-claim.example"))).verification.txt_record_value
      yield* publish("pg-claim.example", [a, b])
      const outcomes = yield* Effect.all(
        [service.check(first.id, domain("pg-claim.example")), service.check(second.id, domain("pg-claim.example"))].map(Effect.either),
        { concurrency: "unbounded" }
      )
      expect(outcomes.filter((outcome) => outcome._tag === "Right").length).toBe(1)
      expect(outcomes.filter((outcome) => outcome._tag === "Left").map((outcome) => outcome._tag === "Left" && outcome.left._tag)).toEqual([
        "DomainVerifiedByAnotherApp"
      ])
      expect(Option.isSome(yield* (yield* DomainVerificationStore).verifiedOwner("pg-claim.example"))).toBe(true)
    }).pipe(Effect.provide(servicesOver(Layer.succeedContext(ports)))), 60_000)
})
