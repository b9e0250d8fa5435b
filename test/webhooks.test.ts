/**
 * Workspace webhooks end to end, as an operator runs them: the compiled server in its own process on a real
 * PostgreSQL server, trusting the test's certificate authority through NODE_EXTRA_CA_CERTS, allowed to call
 * 127.0.0.1 through CONVENE_OUTBOUND_ALLOW_HOSTS, delivering to HTTPS receivers in this process that verify each
 * signature with `@octokit/webhooks-methods` (the same `sha256=<hex>` scheme), and mailing through an SMTP server
 * in this process (`smtp-server`, each mail parsed back with `mailparser`). Also: the challenge and its echo,
 * redirects never followed, a failing receiver's retries and the delivery log, three exhausted deliveries in a row
 * disabling the endpoint and mailing its creator, re-enabling it, the input rules, and a server killed between the
 * change and its delivery delivering it after its restart.
 */
import type { StorePorts } from "@convene/core"
import * as StorePg from "@convene/store-pg"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { verify } from "@octokit/webhooks-methods"
import { Context, Effect, Exit, Layer, Redacted, Scope } from "effect"
import { simpleParser } from "mailparser"
import { serverDatabase } from "../packages/store-pg/test/fixtures.js"
import { type ServerProcess, startServerProcess } from "./support/process.js"
import { header, type Received, type Receiver, startReceiver, waitFor } from "./support/receiver.js"
import { client, OPERATOR_TOKEN, provision } from "./support/server.js"
import { startSmtp, type TestSmtp } from "./support/smtp.js"
import { makeTestTls, type TestTls } from "./support/tls.js"

const scope = Effect.runSync(Scope.make())

let tls: TestTls
let receiver: Receiver
let receiverUrl: string
let received: Array<Received>
/** The paths under /fail that answer 200 again: their receiver was repaired. */
const repaired = new Set<string>()

let smtp: TestSmtp
const MAIL_FROM = "Convene Webhooks <webhooks@convene.test>"

/**
 * @effect/sql's SqlClient, as store-pg's layers provide it (the test package does not depend on @effect/sql itself:
 * the tag is rebuilt from its key, as in test/faults/Snapshot.ts). Here it reaches into the server's database only
 * to move the clock of a delivery (`dueNow`).
 */
type SqlClient = Exclude<Layer.Layer.Success<ReturnType<typeof StorePg.layerPglite>>, StorePorts>
const SqlClient = Context.GenericTag<SqlClient>("@effect/sql/SqlClient")
let sql: SqlClient

let databaseUrl: string
let server: ServerProcess
const serverEnv = () => ({
  DATABASE_URL: databaseUrl,
  NODE_EXTRA_CA_CERTS: tls.caFile,
  CONVENE_OUTBOUND_ALLOW_HOSTS: "127.0.0.1",
  CONVENE_SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
  CONVENE_MAIL_FROM: MAIL_FROM
})

beforeAll(async () => {
  tls = await makeTestTls()
  receiver = await startReceiver(tls, ({ body, path }, response) => {
    // Challenges are echoed; besides, `/redirect` answers 302 to /ok, `/fail` and the paths under it 500 (until
    // repaired), any other 200.
    const envelope = JSON.parse(body) as { event_type: string; data: { verification_token?: string } }
    if (path === "/redirect") {
      response.writeHead(302, { location: `${receiverUrl}/ok` }).end()
    } else if (envelope.event_type === "webhook.verification") {
      response.writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ verification_token: envelope.data.verification_token }))
    } else if (path.startsWith("/fail") && !repaired.has(path)) {
      response.writeHead(500).end("down for maintenance")
    } else {
      response.writeHead(200).end("ok")
    }
  })
  receiverUrl = receiver.url
  received = receiver.received
  smtp = await startSmtp()
  databaseUrl = Redacted.value(await Effect.runPromise(Scope.extend(serverDatabase, scope)))
  const database = StorePg.clientPg({ url: Redacted.make(databaseUrl), maxConnections: 1, applicationName: "webhooks-test" })
  sql = Context.get(await Effect.runPromise(Scope.extend(Layer.build(database), scope)), SqlClient)
  server = await startServerProcess(serverEnv())
}, 120_000)

afterAll(async () => {
  await server?.stop()
  await receiver?.close()
  await smtp?.close()
  await tls?.cleanup()
  await Effect.runPromise(Scope.close(scope, Exit.void))
}, 60_000)

const deliveredTo = (path: string, type: string, id?: string) =>
  received.filter((message) =>
    message.path === path && header(message, "x-svc-event-type") === type &&
    (id === undefined || (JSON.parse(message.body) as { data: { id?: string } }).data.id === id)
  )

/** An ENTERPRISE workspace (no endpoint cap) with an admin. */
const workspace = () => provision(server.url, { plan: "ENTERPRISE", role: "ADMIN" })
type Api = Awaited<ReturnType<typeof workspace>>["api"]

const createEndpoint = async (api: Api, path: string, events = ["meeting.created"]) => {
  const created = await api.post("/v1/workspace/webhooks", { url: `${receiverUrl}${path}`, subscribed_events: events })
  expect(created.status).toBe(201)
  return created.body as { signing_secret: string; verification_token: string; webhook: { id: string } }
}

const endpointOf = async (api: Api, id: string) => {
  const list = await api.get("/v1/workspace/webhooks?limit=100")
  return (list.body.items as Array<Record<string, unknown>>).find((endpoint) => endpoint.id === id)
}

const verified = (api: Api, id: string) =>
  waitFor(async () => (await endpointOf(api, id))?.verification_state === "verified" ? true : undefined, "verified")

/** A delivery as the delivery log shows it. */
interface Logged {
  readonly id: string
  readonly event_id: string
  readonly idempotency_key: string
  readonly state: "pending" | "delivered" | "failed"
  readonly attempt_count: number
  readonly next_attempt_at: string | null
  readonly attempts: ReadonlyArray<{
    readonly number: number
    readonly at: string
    readonly status_code: number | null
    readonly latency_ms: number
    readonly error: string | null
  }>
}

/** The endpoint's delivery log, once `ready` holds of it. */
const logOnce = (api: Api, id: string, ready: (log: ReadonlyArray<Logged>) => boolean, what: string) =>
  waitFor(async () => {
    const page = await api.get(`/v1/workspace/webhooks/${id}/deliveries?limit=100`)
    const log = page.body.items as ReadonlyArray<Logged>
    return ready(log) ? log : undefined
  }, what)

/** The logged delivery `id`, once `ready` holds of it. */
const loggedOnce = async (api: Api, endpointId: string, id: string, ready: (delivery: Logged) => boolean, what: string) => {
  const log = await logOnce(api, endpointId, (entries) => entries.some((delivery) => delivery.id === id && ready(delivery)), what)
  return log.find((delivery) => delivery.id === id)!
}

/** How long after its latest attempt a pending delivery's next one is due, in milliseconds. */
const waitAfterLatest = (delivery: Logged) =>
  Date.parse(delivery.next_attempt_at!) - Date.parse(delivery.attempts[delivery.attempts.length - 1]!.at)

/**
 * The clock moving for these deliveries: their next attempt, due 1 or 4 minutes after the last, is made due now.
 * The server's worker sends a pending delivery once its stored `next_attempt_at` has passed on the server's own
 * clock, which a test cannot move in another process, and the product rightly has no setting to shorten the
 * backoff; pulling the stored due time back to now() is, for the worker, exactly those minutes having passed. Only
 * deliveries still pending after `attemptsMade` attempts are moved, all of them or the test fails.
 */
const dueNow = async (ids: ReadonlyArray<string>, attemptsMade: number) => {
  const moved = await Effect.runPromise(sql<{ readonly id: string }>`
    UPDATE deliveries SET next_attempt_at = now()
    WHERE ${sql.in("id", ids)} AND state = 'pending' AND attempt_count = ${attemptsMade}
    RETURNING id`)
  expect(moved.map((row) => row.id).sort()).toEqual([...ids].sort())
}

const newMeeting = async (api: Api, title: string) => {
  const meeting = await api.post("/v1/meetings", { title, start_time: "2026-12-01T09:00:00Z" })
  expect(meeting.status).toBe(201)
  return meeting.body.id as string
}

describe("a verified endpoint", () => {
  it("is challenged at once, verified by the echo, then gets each subscribed event signed, with every header", async () => {
    const admin = await workspace()
    const created = await createEndpoint(admin.api, "/ok", ["meeting.created", "meeting.updated"])
    expect(created.signing_secret).toMatch(/^whsec_/)
    expect(created.verification_token).toMatch(/^whvt_/)
    expect(created.webhook).toMatchObject({ status: "pending", verification_state: "verifying", consecutive_failure_count: 0 })
    expect(JSON.stringify(created.webhook)).not.toContain(created.signing_secret)

    const challenge = await waitFor(
      () => received.find((message) => JSON.parse(message.body).data?.endpoint_id === created.webhook.id),
      "the challenge"
    )
    expect(JSON.parse(challenge.body)).toMatchObject({
      event_type: "webhook.verification",
      workspace_id: admin.workspaceId,
      data: { verification_token: created.verification_token, endpoint_id: created.webhook.id }
    })
    expect(await verify(created.signing_secret, challenge.body, header(challenge, "x-svc-signature")!)).toBe(true)
    const verified = await waitFor(async () => {
      const endpoint = await endpointOf(admin.api, created.webhook.id)
      return endpoint?.verification_state === "verified" ? endpoint : undefined
    }, "the endpoint to be verified")
    expect(verified).toMatchObject({ status: "verified", verification_attempt_count: 1 })
    expect(JSON.stringify(verified)).not.toContain(created.verification_token)

    const meeting = await admin.api.post("/v1/meetings", { title: "Webhooked", start_time: "2026-12-01T09:00:00Z" })
    expect(meeting.status).toBe(201)
    const [delivery] = await waitFor(() => {
      const found = deliveredTo("/ok", "meeting.created", meeting.body.id)
      return found.length > 0 ? found : undefined
    }, "the delivery")
    const body = JSON.parse(delivery!.body) as Record<string, unknown>
    expect(body).toEqual({
      event_type: "meeting.created",
      event_id: expect.any(String),
      timestamp: expect.any(String),
      workspace_id: admin.workspaceId,
      actor_user_id: admin.userId,
      data: expect.objectContaining({ id: meeting.body.id, title: "Webhooked" })
    })
    expect(await verify(created.signing_secret, delivery!.body, header(delivery!, "x-svc-signature")!)).toBe(true)
    expect(await verify("whsec_another", delivery!.body, header(delivery!, "x-svc-signature")!)).toBe(false)
    expect(header(delivery!, "content-type")).toBe("application/json")
    expect(header(delivery!, "user-agent")).toBe("Svc-Webhook/1.0")
    expect(header(delivery!, "x-svc-event-type")).toBe("meeting.created")
    expect(header(delivery!, "x-svc-event-id")).toBe(body.event_id)
    expect(header(delivery!, "x-svc-timestamp")).toBe(String(Math.floor(Date.parse(String(body.timestamp)) / 1000)))
    expect(header(delivery!, "x-svc-idempotency-key")!.length).toBeLessThanOrEqual(64)
    expect(header(delivery!, "x-svc-delivery-id")).toMatch(/^[0-9a-f-]{36}$/)
    expect(header(delivery!, "x-svc-retry-count")).toBeUndefined()
    // Not subscribed: nothing is sent for it.
    await admin.api.post("/v1/action-items", { meeting_id: meeting.body.id, title: "Not subscribed", due_date: "2026-12-24" })

    const log = await waitFor(async () => {
      const page = await admin.api.get(`/v1/workspace/webhooks/${created.webhook.id}/deliveries`)
      const items = page.body.items as Array<Record<string, unknown>>
      return items.some((item) => item.state === "delivered" && item.event_id === body.event_id) ? items : undefined
    }, "the delivery log")
    const entry = log.find((item) => item.event_id === body.event_id)!
    expect(entry).toMatchObject({ event_type: "meeting.created", attempt_count: 1, id: header(delivery!, "x-svc-delivery-id") })
    expect(entry.attempts).toEqual([
      { number: 1, at: expect.any(String), status_code: 200, latency_ms: expect.any(Number), error: null }
    ])
    expect(deliveredTo("/ok", "action_item.created")).toEqual([])

    // Rotating the secret: the old one no longer signs.
    const rotated = await admin.api.post(`/v1/workspace/webhooks/${created.webhook.id}/rotate-secret`)
    expect(rotated.status).toBe(200)
    expect(rotated.body.signing_secret).not.toBe(created.signing_secret)
    await admin.api.patch(`/v1/meetings/${meeting.body.id}`, { title: "Webhooked, renamed" })
    const [updated] = await waitFor(() => {
      const found = deliveredTo("/ok", "meeting.updated", meeting.body.id)
      return found.length > 0 ? found : undefined
    }, "the update's delivery")
    expect(await verify(rotated.body.signing_secret, updated!.body, header(updated!, "x-svc-signature")!)).toBe(true)
    expect(await verify(created.signing_secret, updated!.body, header(updated!, "x-svc-signature")!)).toBe(false)

    // Redelivery: a new delivery id, the same event and idempotency key.
    const again = await admin.api.post(`/v1/workspace/webhooks/${created.webhook.id}/deliveries/${entry.id}/redeliver`)
    expect(again.status).toBe(201)
    const copies = await waitFor(() => {
      const found = deliveredTo("/ok", "meeting.created", meeting.body.id)
      return found.length === 2 ? found : undefined
    }, "the redelivery")
    expect(header(copies[1]!, "x-svc-event-id")).toBe(header(copies[0]!, "x-svc-event-id"))
    expect(header(copies[1]!, "x-svc-idempotency-key")).toBe(header(copies[0]!, "x-svc-idempotency-key"))
    expect(header(copies[1]!, "x-svc-delivery-id")).not.toBe(header(copies[0]!, "x-svc-delivery-id"))

    // Resend on a verified endpoint, re-enable on one that is not disabled.
    const resend = await admin.api.post(`/v1/workspace/webhooks/${created.webhook.id}/resend-verification`)
    expect(resend.status).toBe(409)
    expect(resend.body).toMatchObject({ code: "endpoint_not_pending" })
    const reEnable = await admin.api.post(`/v1/workspace/webhooks/${created.webhook.id}/re-enable`)
    expect(reEnable.status).toBe(409)
    expect(reEnable.body).toMatchObject({ code: "conflict" })

    // Deleted: nothing more is sent, it leaves the list, deleting again is harmless.
    expect((await admin.api.delete(`/v1/workspace/webhooks/${created.webhook.id}`)).status).toBe(204)
    expect((await admin.api.delete(`/v1/workspace/webhooks/${created.webhook.id}`)).status).toBe(204)
    expect(await endpointOf(admin.api, created.webhook.id)).toBeUndefined()
    const after = await admin.api.post("/v1/meetings", { title: "After the delete", start_time: "2026-12-01T09:00:00Z" })
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    expect(deliveredTo("/ok", "meeting.created", after.body.id)).toEqual([])
  }, 90_000)
})

describe("receivers that do not answer as they should", () => {
  it("a redirect is not followed and verifies nothing; resend-verification says so within the request", async () => {
    const admin = await workspace()
    const created = await createEndpoint(admin.api, "/redirect")
    await waitFor(() => received.find((message) => message.path === "/redirect" && JSON.parse(message.body).data?.endpoint_id === created.webhook.id), "the challenge")
    const resent = await admin.api.post(`/v1/workspace/webhooks/${created.webhook.id}/resend-verification`)
    expect(resent.status).toBe(200)
    expect(resent.body).toMatchObject({ status: "pending", verification_state: "verifying", verification_attempt_count: 1 })
    await new Promise((resolve) => setTimeout(resolve, 500))
    const followed = received.filter((message) => message.path === "/ok" && JSON.parse(message.body).data?.endpoint_id === created.webhook.id)
    expect(followed).toEqual([])
  })
})

describe("a receiver that keeps failing", () => {
  it("gets the first attempt and two retries, 1 and 4 minutes apart, each signed and alike but for X-Svc-Retry-Count; then the delivery is failed", async () => {
    const path = "/fail-retries"
    const admin = await workspace()
    const created = await createEndpoint(admin.api, path)
    await verified(admin.api, created.webhook.id)
    const meeting = await newMeeting(admin.api, "To a receiver that keeps failing")

    const [first] = await logOnce(admin.api, created.webhook.id, (log) => log.length === 1 && log[0]!.attempt_count === 1, "the first attempt")
    expect(first).toMatchObject({ state: "pending", attempts: [{ number: 1, status_code: 500, error: null }] })
    expect(waitAfterLatest(first!)).toBe(60_000)
    // A failed attempt is not yet a failure of the endpoint: only an exhausted delivery counts.
    expect(await endpointOf(admin.api, created.webhook.id)).toMatchObject({ verification_state: "verified", consecutive_failure_count: 0 })
    await dueNow([first!.id], 1)
    const second = await loggedOnce(admin.api, created.webhook.id, first!.id, (delivery) => delivery.attempt_count === 2, "the first retry")
    expect(second).toMatchObject({ state: "pending", attempts: [{ number: 1 }, { number: 2, status_code: 500, error: null }] })
    expect(waitAfterLatest(second)).toBe(240_000)
    await dueNow([first!.id], 2)
    const last = await loggedOnce(admin.api, created.webhook.id, first!.id, (delivery) => delivery.state === "failed", "the delivery to fail")
    expect(last).toMatchObject({ attempt_count: 3, next_attempt_at: null, event_id: first!.event_id, idempotency_key: first!.idempotency_key })
    expect(last.attempts).toEqual([1, 2, 3].map((number) => ({
      number,
      at: expect.any(String),
      status_code: 500,
      latency_ms: expect.any(Number),
      error: null
    })))

    // The receiver saw the three attempts (each before its answer was logged): the same bytes, event, delivery and
    // idempotency key, each signature verifying. X-Svc-Retry-Count is the attempt number, as the document defines
    // it ("only on retried deliveries; the attempt number"): none on the first, then 2 and 3.
    const attempts = deliveredTo(path, "meeting.created", meeting)
    expect(attempts).toHaveLength(3)
    expect(attempts.map((attempt) => header(attempt, "x-svc-retry-count"))).toEqual([undefined, "2", "3"])
    for (const attempt of attempts) {
      expect(attempt.body).toBe(attempts[0]!.body)
      expect(JSON.parse(attempt.body)).toMatchObject({ event_id: last.event_id, data: { id: meeting } })
      expect(header(attempt, "x-svc-event-id")).toBe(last.event_id)
      expect(header(attempt, "x-svc-delivery-id")).toBe(last.id)
      expect(header(attempt, "x-svc-idempotency-key")).toBe(last.idempotency_key)
      expect(await verify(created.signing_secret, attempt.body, header(attempt, "x-svc-signature")!)).toBe(true)
    }
    // One delivery exhausted is one failure of the endpoint, which stays verified.
    expect(await endpointOf(admin.api, created.webhook.id)).toMatchObject({
      status: "verified",
      verification_state: "verified",
      consecutive_failure_count: 1
    })
  }, 60_000)

  it("is disabled after 3 exhausted deliveries in a row, its creator mailed; it gets nothing until re-enabled, then gets events again", async () => {
    const path = "/fail-disabled"
    const url = `${receiverUrl}${path}`
    const admin = await workspace()
    const created = await createEndpoint(admin.api, path)
    // Subscribed to the same events: shows that the events after the disabling did go out, to it.
    const witness = await createEndpoint(admin.api, "/witness")
    await verified(admin.api, created.webhook.id)
    await verified(admin.api, witness.webhook.id)
    const id = created.webhook.id

    // Three events, three deliveries, each through its three attempts: a clock move per round of attempts.
    const failing = [await newMeeting(admin.api, "Fails 1"), await newMeeting(admin.api, "Fails 2"), await newMeeting(admin.api, "Fails 3")]
    const rounds = await logOnce(admin.api, id, (log) => log.length === 3 && log.every((delivery) => delivery.attempt_count === 1), "three first attempts")
    const exhausting = rounds.map((delivery) => delivery.id)
    await dueNow(exhausting, 1)
    await logOnce(admin.api, id, (log) => log.length === 3 && log.every((delivery) => delivery.attempt_count === 2), "three first retries")
    // A fourth event, whose first attempt fails before the endpoint is disabled: its retry comes after.
    const inFlight = await newMeeting(admin.api, "In flight")
    const [fourth] = await logOnce(admin.api, id, (log) => log.length === 4 && log[0]!.attempt_count === 1, "the fourth event's first attempt")
    expect(exhausting).not.toContain(fourth!.id)
    await dueNow(exhausting, 2)
    const exhausted = await logOnce(
      admin.api,
      id,
      (log) => log.filter((delivery) => delivery.state === "failed").length === 3,
      "three exhausted deliveries"
    )
    expect(exhausted.filter((delivery) => exhausting.includes(delivery.id)).map((delivery) => delivery.attempts.map((attempt) => attempt.status_code)))
      .toEqual([[500, 500, 500], [500, 500, 500], [500, 500, 500]])
    for (const meeting of failing) expect(deliveredTo(path, "meeting.created", meeting)).toHaveLength(3)

    // Disabled (it did prove it owns its URL: status stays verified).
    expect(await endpointOf(admin.api, id)).toMatchObject({ status: "verified", verification_state: "disabled", consecutive_failure_count: 3 })
    expect(await endpointOf(admin.api, witness.webhook.id)).toMatchObject({ verification_state: "verified" })

    // The creator is told, from CONVENE_MAIL_FROM: which endpoint and how to re-enable it, and no secret.
    const mail = await waitFor(() => smtp.mails.find((sent) => sent.envelopeTo.includes(admin.email)), "the mail to the endpoint's creator")
    expect(mail.envelopeTo).toEqual([admin.email])
    expect(mail.envelopeFrom).toBe("webhooks@convene.test")
    const parsed = await simpleParser(mail.raw)
    expect(parsed.from?.value).toEqual([{ name: "Convene Webhooks", address: "webhooks@convene.test" }])
    expect(parsed.subject).toContain(url)
    expect(parsed.text).toContain(url)
    expect(parsed.text).toContain(`POST /v1/workspace/webhooks/${id}/re-enable`)
    for (const secret of [created.signing_secret, created.verification_token, admin.token]) {
      expect(mail.raw.toString("utf8")).not.toContain(secret)
      expect(`${parsed.subject}\n${parsed.text}`).not.toContain(secret)
    }

    // The fourth event's retry is not sent: the delivery is failed, its attempt saying why, without a status.
    await dueNow([fourth!.id], 1)
    const givenUp = await loggedOnce(admin.api, id, fourth!.id, (delivery) => delivery.state === "failed", "the fourth delivery to be given up")
    expect(givenUp.attempts).toEqual([
      { number: 1, at: expect.any(String), status_code: 500, latency_ms: expect.any(Number), error: null },
      { number: 2, at: expect.any(String), status_code: null, latency_ms: 0, error: expect.stringContaining("disabled") }
    ])
    expect(deliveredTo(path, "meeting.created", inFlight)).toHaveLength(1)

    // An event after the disabling goes to the witness, and not to the disabled endpoint: no delivery is even
    // enqueued for it (the outbox is written with the change, so the log is complete once the 201 is back).
    const afterDisabling = await newMeeting(admin.api, "After the disabling")
    const [toWitness] = await waitFor(() => {
      const found = deliveredTo("/witness", "meeting.created", afterDisabling)
      return found.length > 0 ? found : undefined
    }, "the witness's delivery")
    const eventAfter = header(toWitness!, "x-svc-event-id")
    const whileDisabled = await logOnce(admin.api, id, () => true, "the delivery log")
    expect(whileDisabled).toHaveLength(4)
    expect(whileDisabled.map((delivery) => delivery.event_id)).not.toContain(eventAfter)
    expect(deliveredTo(path, "meeting.created", afterDisabling)).toEqual([])

    // Repaired and re-enabled: verified with no failures counted, and the next event is delivered.
    repaired.add(path)
    const reEnabled = await admin.api.post(`/v1/workspace/webhooks/${id}/re-enable`)
    expect(reEnabled.status).toBe(200)
    expect(reEnabled.body).toMatchObject({ id, status: "verified", verification_state: "verified", consecutive_failure_count: 0 })
    expect(await endpointOf(admin.api, id)).toMatchObject({ status: "verified", verification_state: "verified", consecutive_failure_count: 0 })
    const afterReEnable = await newMeeting(admin.api, "After the re-enable")
    const [delivered] = await waitFor(() => {
      const found = deliveredTo(path, "meeting.created", afterReEnable)
      return found.length > 0 ? found : undefined
    }, "the delivery after the re-enable")
    expect(await verify(created.signing_secret, delivered!.body, header(delivered!, "x-svc-signature")!)).toBe(true)
    expect(header(delivered!, "x-svc-retry-count")).toBeUndefined()
    const ok = await loggedOnce(
      admin.api,
      id,
      header(delivered!, "x-svc-delivery-id")!,
      (delivery) => delivery.state === "delivered",
      "the delivery after the re-enable to be logged"
    )
    expect(ok.attempts).toEqual([{ number: 1, at: expect.any(String), status_code: 200, latency_ms: expect.any(Number), error: null }])
    // What failed meanwhile is not resent by itself (redelivery from the log is for that), and one mail was sent.
    expect(deliveredTo(path, "meeting.created", inFlight)).toHaveLength(1)
    expect(deliveredTo(path, "meeting.created", afterDisabling)).toEqual([])
    expect(smtp.mails.filter((sent) => sent.envelopeTo.includes(admin.email))).toHaveLength(1)
  }, 90_000)
})

describe("the input rules", () => {
  it("refuses what the documents refuse, in the envelope", async () => {
    // On FREE a user's token holds no workspace scope; the workspace's API key has them all, and meets the plan gate.
    const free = await provision(server.url, { plan: "FREE", role: "ADMIN" })
    const freeKey = await client(server.url, OPERATOR_TOKEN).post(`/operator/v1/workspaces/${free.workspaceId}/api-keys`, { name: "ops" })
    const onFree = await client(server.url, freeKey.body.key).post("/v1/workspace/webhooks", {
      url: `${receiverUrl}/ok`,
      subscribed_events: ["meeting.created"]
    })
    expect(onFree.status).toBe(402)
    expect(onFree.body).toMatchObject({ feature: "webhooks", current_plan: "FREE", required_plan: "PRO" })
    const pro = await provision(server.url, { plan: "PRO", role: "ADMIN" })
    expect((await pro.api.post("/v1/workspace/webhooks", { url: `${receiverUrl}/ok`, subscribed_events: ["meeting.created"] })).status).toBe(201)
    const second = await pro.api.post("/v1/workspace/webhooks", { url: `${receiverUrl}/ok`, subscribed_events: ["meeting.created"] })
    expect(second.status).toBe(409)
    expect(second.body).toMatchObject({ code: "endpoint_cap_exceeded" })
    const admin = await workspace()
    for (const [body, words] of [
      [{ url: "http://127.0.0.1/ok", subscribed_events: ["meeting.created"] }, "https"],
      [{ url: "https://10.0.0.7/hook", subscribed_events: ["meeting.created"] }, "10.0.0.7"],
      [{ url: "https://localhost:1/hook", subscribed_events: ["meeting.created"] }, "localhost"],
      [{ url: `${receiverUrl}/ok`, subscribed_events: [] }, "subscribed_events"],
      [{ url: `${receiverUrl}/ok`, subscribed_events: ["webhook.verification"] }, "subscribed_events"],
      [{ url: `${receiverUrl}/ok`, subscribed_events: ["meeting.exploded"] }, "subscribed_events"]
    ] as const) {
      const refused = await admin.api.post("/v1/workspace/webhooks", body)
      expect(refused.status, JSON.stringify(body)).toBe(400)
      expect(refused.body.code).toBe("validation_error")
      expect(String(refused.body.error)).toContain(words)
    }
    const member = await provision(server.url, { workspaceId: admin.workspaceId, role: "MEMBER" })
    expect((await member.api.get("/v1/workspace/webhooks")).status).toBe(403)
    const key = await client(server.url, OPERATOR_TOKEN).post(`/operator/v1/workspaces/${admin.workspaceId}/api-keys`, { name: "ops" })
    expect((await client(server.url, key.body.key).get("/v1/workspace/webhooks")).status).toBe(200)
  })
})

describe("durability", () => {
  it("an event committed just before the process is killed is delivered after the restart", async () => {
    const admin = await workspace()
    const created = await createEndpoint(admin.api, "/ok")
    await verified(admin.api, created.webhook.id)
    const port = new URL(server.url).port
    // Kill right after the 201: the worker, which looks every 250 ms, has most likely not sent it yet. Should it
    // have, or have claimed it (then the delivery waits for its 5-minute lease to pass), the attempt proves nothing
    // and another is made.
    for (let attempt = 0; attempt < 5; attempt++) {
      const meeting = await admin.api.post("/v1/meetings", { title: `Killed ${attempt}`, start_time: "2026-12-01T09:00:00Z" })
      expect(meeting.status).toBe(201)
      await server.kill()
      const before = deliveredTo("/ok", "meeting.created", meeting.body.id).length
      const [{ claimed }] = await Effect.runPromise(sql<{ claimed: number }>`
        SELECT count(*)::int AS claimed FROM deliveries
        WHERE event_type = 'meeting.created' AND claimed_until IS NOT NULL AND position(${meeting.body.id} in body) > 0`)
      server = await startServerProcess({ ...serverEnv(), PORT: port })
      if (before > 0 || claimed > 0) continue
      await waitFor(() => deliveredTo("/ok", "meeting.created", meeting.body.id).length === 1 ? true : undefined, "the delivery after the restart")
      return
    }
    throw new Error("the worker delivered before every kill; the premise of the test never held")
  }, 120_000)
})
