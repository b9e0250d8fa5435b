/**
 * Partner webhooks and automations end to end, on real sockets, on each store (memory, PGlite, the PostgreSQL server):
 * the server in this process trusts the test's certificate authority (its outbound `ca`) and may call 127.0.0.1
 * (its outbound allow list), and delivers to an HTTPS receiver in this process, which checks every signature with
 * `@octokit/webhooks-methods` (GitHub's `sha256=<hex>` scheme) and the app's webhook secret.
 *
 * What is exercised: the operator's app with its webhook secret shown once (and in no other answer, nor any log line),
 * its rotation (the operator API), automations made through the admin API (with its validation errors in the partner
 * envelope), a user's completion (`action_item.completed` with `completed_by_user_id` and `action_item.updated`), a
 * completion an embedding host reconciled from a to-do provider through the core's ActionItems.reconcileCompletion
 * in the server's own runtime (`action_item.updated` only), each automation trigger, and a failing receiver's
 * retries 1 and 4 minutes later (the server's clock is moved on: the waits are its rules, not the test's).
 */
import { ActionItemId, ActionItems, type StorePorts, WebhookStore, type WorkspaceId } from "@convene/core"
import { verify } from "@octokit/webhooks-methods"
import { type Context, Duration, Effect, Exit, Layer, Option, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { header, type Received, type Receiver, startReceiver, waitFor } from "../support/receiver.js"
import { client, type Client, OPERATOR_TOKEN, type RunningServer, startServer } from "../support/server.js"
import { MovableClock } from "../support/clock.js"
import { makeTestTls, type TestTls } from "../support/tls.js"
import { everyStore } from "../support/stores.js"
import { expectPartnerError, UUID } from "./fixtures.js"

let tls: TestTls
let receiver: Receiver
let receiverUrl: string
/** The paths under /fail that answer 200 again: their receiver was repaired. */
const repaired = new Set<string>()

beforeAll(async () => {
  tls = await makeTestTls()
  receiver = await startReceiver(tls, ({ path }, response) => {
    if (path.startsWith("/fail") && !repaired.has(path)) response.writeHead(500).end("down for maintenance")
    else response.writeHead(200).end("ok")
  })
  receiverUrl = receiver.url
}, 60_000)

afterAll(async () => {
  await receiver?.close()
  await tls?.cleanup()
})

/** A received body, parsed: each test reads the fields it asserts. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const jsonOf = (message: Received): any => JSON.parse(message.body)

const at = (path: string, type?: string) =>
  receiver.received.filter((message) => message.path === path && (type === undefined || header(message, "x-svc-event-type") === type))

/** Waits until `path` received `count` messages (of `type`), and answers them. */
const receivedAt = (path: string, count: number, type?: string) =>
  waitFor(() => (at(path, type).length >= count ? at(path, type) : undefined), `${count} message(s) at ${path} ${type ?? ""}`)

/** Checks what every partner delivery carries, the signature first, as a receiver does. */
const expectSigned = async (message: Received, secret: string, others: ReadonlyArray<string> = []) => {
  const signature = header(message, "x-svc-signature") ?? ""
  expect(signature).toMatch(/^sha256=[0-9a-f]{64}$/)
  expect(await verify(secret, message.body, signature)).toBe(true)
  for (const other of others) expect(await verify(other, message.body, signature)).toBe(false)
  expect(header(message, "content-type")).toBe("application/json")
  expect(header(message, "x-svc-timestamp")).toMatch(/^\d+$/)
  expect(header(message, "x-svc-event-id")).toBe(jsonOf(message).event_id)
}

/** The partner envelope `{error, code, request_id}` with the status and code, and nothing else. */
const stores = everyStore

describe.each(stores)("partner webhooks and automations ($name)", (store) => {
  const clock = new MovableClock()
  const logLines: Array<string> = []
  const scope = Effect.runSync(Scope.make())
  let server: RunningServer
  /** The store the server runs on, built here: the test reads the outbox through its port. */
  let ports: Context.Context<StorePorts>
  let operator: Client
  /** Paths of this store's run (the receiver is shared). */
  const prefix = `/${store.name.toLowerCase()}`

  beforeAll(async () => {
    ports = await Effect.runPromise(Scope.extend(Layer.build(store.layer(scope)), scope))
    server = await startServer({
      store: Layer.succeedContext(ports),
      clock,
      logLines,
      outbound: { allowHosts: ["127.0.0.1"], ca: [tls.caPem], smtpUrl: Option.none(), mailFrom: Option.none() }
    })
    operator = client(server.url, OPERATOR_TOKEN)
  }, 120_000)

  afterAll(async () => {
    await server?.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }, 60_000)

  /** A partner app (webhooks to `hookPath`) connected to a new ENTERPRISE workspace with an OWNER. */
  const setUp = async (hookPath: string) => {
    const app = await operator.post("/operator/v1/partner-apps", { name: "Acme Tasks", webhook_url: `${receiverUrl}${hookPath}` })
    expect(app.status).toBe(201)
    const workspace = await operator.post("/operator/v1/workspaces", { name: "Connected", plan: "ENTERPRISE" })
    const user = await operator.post(`/operator/v1/workspaces/${workspace.body.id}/users`, {
      email: `owner-${crypto.randomUUID()}@example.com`,
      name: "Owner",
      role: "OWNER"
    })
    const token = await operator.post(`/operator/v1/users/${user.body.id}/tokens`, {
      kind: "personal_access_token",
      scopes: ["meetings:read", "meetings:write", "action-items:read", "action-items:write"],
      expiry_days: 30
    })
    expect((await operator.post(`/operator/v1/partner-apps/${app.body.id}/workspaces`, { workspace_id: workspace.body.id })).status).toBe(201)
    const adminHeaders = { "x-api-key": app.body.api_key as string, "x-client-id": app.body.client_id as string }
    return {
      app: app.body as { id: string; webhook_secret: string; api_key: string; client_secret: string; webhook_enabled: boolean },
      workspaceId: workspace.body.id as WorkspaceId,
      userId: user.body.id as string,
      api: client(server.url, token.body.token),
      admin: {
        get: (path: string) => client(server.url).get(path, adminHeaders),
        post: (path: string, body: unknown, headers: Record<string, string> = {}) =>
          client(server.url).post(path, body, { ...adminHeaders, ...headers })
      }
    }
  }

  /** The app's deliveries in the outbox, newest first, with their attempts. */
  const deliveriesOf = (appId: string) =>
    Effect.runPromise(Effect.provide(
      Effect.flatMap(WebhookStore, (outbox) => outbox.listDeliveries({ kind: "partner_app", id: appId }, { limit: 100, offset: 0 })),
      ports
    ))

  const newItem = async (api: Client, meetingId: string, title: string) => {
    const item = await api.post("/v1/action-items", { meeting_id: meetingId, title, status: "accepted" })
    expect(item.status).toBe(201)
    return item.body.id as string
  }

  it("a user's completion and a provider's reconciled completion, and an automation for each trigger, are sent signed with the app's secret", async () => {
    const { admin, api, app, userId, workspaceId } = await setUp(`${prefix}/app`)
    expect(app.webhook_secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)
    expect(app.webhook_enabled).toBe(true)
    const urls = (trigger: string) => [1, 2].map((n) => `${prefix}/auto/${trigger}/${n}`)
    const automations: Record<string, string> = {}
    for (const trigger of ["action_item_created", "action_item_completed", "meeting_ended"]) {
      const created = await admin.post("/v1/partner/admin/automations", {
        name: `On ${trigger}`,
        description: null,
        trigger_type: trigger,
        actions: urls(trigger).map((path) => ({ type: "webhook", webhook_url: `${receiverUrl}${path}` }))
      })
      expect(created.status).toBe(201)
      expect(Object.keys(created.body).sort()).toEqual(["actions", "created_at", "description", "enabled", "id", "name", "trigger_type"])
      expect(created.body).toMatchObject({ name: `On ${trigger}`, description: null, trigger_type: trigger, enabled: true })
      expect(created.body.actions).toEqual(urls(trigger).map((path) => ({ type: "webhook", webhook_url: `${receiverUrl}${path}` })))
      automations[trigger] = created.body.id
    }
    const listed = await admin.get("/v1/partner/admin/automations")
    expect(listed.status).toBe(200)
    expect(listed.body).toMatchObject({ total: 3, limit: 20, offset: 0 })
    const items = listed.body.items as Array<{ id: string; created_at: string }>
    expect(items.map((item) => item.id).sort()).toEqual(Object.values(automations).sort())
    // Newest first (created_at desc, then id desc).
    for (let index = 1; index < items.length; index++) {
      const [newer, older] = [items[index - 1]!, items[index]!]
      expect(newer.created_at > older.created_at || (newer.created_at === older.created_at && newer.id > older.id)).toBe(true)
    }
    const page = await admin.get("/v1/partner/admin/automations?limit=1&offset=1")
    expect(page.body).toEqual({ items: [items[1]], total: 3, limit: 1, offset: 1 })

    // action_item_created: each action of its automation, with the event.
    const meeting = await api.post("/v1/meetings", { title: "Planning" })
    const first = await newItem(api, meeting.body.id, "Send the notes")
    for (const path of urls("action_item_created")) {
      const [call] = await receivedAt(path, 1)
      await expectSigned(call!, app.webhook_secret)
      expect(Object.keys(jsonOf(call!))).toEqual(["automation_id", "trigger_type", "event_id", "occurred_at", "workspace_id", "data"])
      expect(jsonOf(call!)).toMatchObject({
        automation_id: automations.action_item_created,
        trigger_type: "action_item_created",
        workspace_id: workspaceId,
        data: { id: first, title: "Send the notes", status: "accepted" }
      })
      expect(jsonOf(call!).event_id).toMatch(UUID)
      expect(header(call!, "x-svc-event-type")).toBe("action_item_created")
    }

    // A user's completion: action_item.completed (with completed_by_user_id) and action_item.updated, and the automation.
    expect((await api.patch(`/v1/action-items/${first}`, { status: "completed" })).status).toBe(200)
    const [completed] = await receivedAt(`${prefix}/app`, 1, "action_item.completed")
    const [updated] = await receivedAt(`${prefix}/app`, 1, "action_item.updated")
    for (const message of [completed!, updated!]) await expectSigned(message, app.webhook_secret, [app.api_key, app.client_secret])
    expect(Object.keys(jsonOf(completed!))).toEqual(["event_id", "event_type", "occurred_at", "partner_app_id", "workspace_id", "data"])
    expect(jsonOf(completed!)).toMatchObject({
      event_type: "action_item.completed",
      partner_app_id: app.id,
      workspace_id: workspaceId,
      data: { id: first, status: "completed", is_completed: true, completed_by_user_id: userId }
    })
    expect(jsonOf(updated!)).toMatchObject({ event_type: "action_item.updated", data: { id: first, status: "completed" } })
    expect(jsonOf(updated!).data).not.toHaveProperty("completed_by_user_id")
    expect(jsonOf(updated!).event_id).not.toBe(jsonOf(completed!).event_id)
    for (const path of urls("action_item_completed")) {
      const [call] = await receivedAt(path, 1)
      await expectSigned(call!, app.webhook_secret)
      expect(jsonOf(call!)).toMatchObject({
        automation_id: automations.action_item_completed,
        trigger_type: "action_item_completed",
        event_id: jsonOf(completed!).event_id,
        data: { id: first, completed_by_user_id: userId }
      })
    }

    // A completion reconciled from a to-do provider by the embedding host: action_item.updated only, and no automation.
    const second = await newItem(api, meeting.body.id, "Book the room")
    await Promise.all(urls("action_item_created").map((path) => receivedAt(path, 2)))
    const reconciled = await server.run(Effect.flatMap(ActionItems, (items) =>
      items.reconcileCompletion(workspaceId, ActionItemId.make(second), "Todoist")))
    expect(reconciled).toMatchObject({ id: second, status: "completed", is_completed: true })
    // The outbox, written with the change: one delivery to the app, none to the completion automation's actions.
    const outbox = await deliveriesOf(app.id)
    const forSecond = outbox.items.filter((record) => JSON.parse(record.delivery.body).data.id === second)
    expect(forSecond.map((record) => record.delivery.event_type)).toEqual(["action_item.updated"])
    const [told] = await waitFor(
      () => {
        const found = at(`${prefix}/app`, "action_item.updated").filter((message) => jsonOf(message).data.id === second)
        return found.length > 0 ? found : undefined
      },
      "the reconciled completion"
    )
    await expectSigned(told!, app.webhook_secret)
    expect(jsonOf(told!)).toMatchObject({
      event_type: "action_item.updated",
      event_id: forSecond[0]!.delivery.event_id,
      data: { id: second, status: "completed", reconciled_from: "Todoist" }
    })
    expect(at(`${prefix}/app`, "action_item.completed").filter((message) => jsonOf(message).data.id === second)).toEqual([])
    for (const path of urls("action_item_completed")) expect(at(path)).toHaveLength(1)

    // meeting_ended.
    expect((await api.patch(`/v1/meetings/${meeting.body.id}`, { status: "ended" })).status).toBe(200)
    for (const path of urls("meeting_ended")) {
      const [call] = await receivedAt(path, 1)
      await expectSigned(call!, app.webhook_secret)
      expect(jsonOf(call!)).toMatchObject({
        automation_id: automations.meeting_ended,
        trigger_type: "meeting_ended",
        data: { id: meeting.body.id, status: "ended" }
      })
    }
    // Each trigger called its own actions and no others.
    expect(urls("meeting_ended").map((path) => at(path).length)).toEqual([1, 1])
  })

  it("a failing receiver gets the same delivery again 1 and 4 minutes later, each signed; a new secret signs the retries", async () => {
    const path = `/fail${prefix}/app`
    const { api, app } = await setUp(path)
    const meeting = await api.post("/v1/meetings", { title: "Retries" })
    const item = await newItem(api, meeting.body.id, "Flaky")
    expect((await api.patch(`/v1/action-items/${item}`, { title: "Flaky, renamed" })).status).toBe(200)
    const deliveryOf = () => deliveriesOf(app.id).then((log) => log.items[0])
    /** Waits until the delivery's attempts are written (nothing is in flight then), and answers it. */
    const attempted = (count: number) =>
      waitFor(async () => {
        const record = await deliveryOf()
        // The delivery and its attempts are read by two statements: both must show the attempt.
        return record !== undefined && record.delivery.attempt_count === count && record.attempts.length === count
          ? record
          : undefined
      }, `attempt ${count}`)

    const [firstAttempt] = await receivedAt(path, 1)
    const one = await attempted(1)
    expect(one.delivery).toMatchObject({ state: "pending", attempt_count: 1 })
    expect(one.attempts.map((attempt) => attempt.status_code)).toEqual([500])
    await expectSigned(firstAttempt!, app.webhook_secret)

    clock.offset += Duration.toMillis("1 minute")
    const [, secondAttempt] = await receivedAt(path, 2)
    await attempted(2)
    await expectSigned(secondAttempt!, app.webhook_secret)
    expect(secondAttempt!.body).toBe(firstAttempt!.body)
    expect(Number(header(secondAttempt!, "x-svc-timestamp")) - Number(header(firstAttempt!, "x-svc-timestamp"))).toBeGreaterThanOrEqual(60)

    // The operator replaces the secret; the receiver is repaired; the last attempt is signed with the new secret.
    const rotated = await operator.post(`/operator/v1/partner-apps/${app.id}/webhook-secret`)
    expect(rotated.status).toBe(200)
    expect(rotated.body).toMatchObject({ id: app.id, webhook_enabled: true })
    expect(rotated.body.webhook_secret).toMatch(/^whsec_/)
    expect(rotated.body.webhook_secret).not.toBe(app.webhook_secret)
    repaired.add(path)
    clock.offset += Duration.toMillis("4 minutes")
    const [, , thirdAttempt] = await receivedAt(path, 3)
    const three = await attempted(3)
    expect(three.delivery).toMatchObject({ state: "delivered", attempt_count: 3, id: one.delivery.id })
    expect(three.attempts.map((attempt) => attempt.status_code)).toEqual([500, 500, 200])
    expect(thirdAttempt!.body).toBe(firstAttempt!.body)
    await expectSigned(thirdAttempt!, rotated.body.webhook_secret, [app.webhook_secret])
    expect(Number(header(thirdAttempt!, "x-svc-timestamp")) - Number(header(secondAttempt!, "x-svc-timestamp"))).toBeGreaterThanOrEqual(240)
    expect(at(path)).toHaveLength(3)
  })

  it("the webhook secret is shown in the create and rotate answers only, never in another answer or a log line", async () => {
    const { admin, app } = await setUp(`${prefix}/secret`)
    const rotated = await operator.post(`/operator/v1/partner-apps/${app.id}/webhook-secret`)
    const answers = [
      await operator.get(`/operator/v1/partner-apps/${app.id}`),
      await operator.get("/operator/v1/partner-apps?limit=100"),
      await operator.patch(`/operator/v1/partner-apps/${app.id}`, { name: "Renamed" }),
      await admin.get("/v1/partner/admin/app")
    ]
    for (const answer of answers) {
      expect(answer.status).toBe(200)
      for (const secret of [app.webhook_secret, rotated.body.webhook_secret]) expect(answer.text).not.toContain(secret)
    }
    expect(answers[0]!.body.webhook_enabled).toBe(true)
    expect(logLines.length).toBeGreaterThan(0)
    for (const line of logLines) {
      for (const secret of [app.webhook_secret, rotated.body.webhook_secret]) expect(line).not.toContain(secret)
    }
    expect((await operator.post(`/operator/v1/partner-apps/${crypto.randomUUID()}/webhook-secret`)).status).toBe(404)
  })

  it("refuses a bad automation in the partner envelope, naming what is wrong, and creates nothing", async () => {
    const { admin } = await setUp(`${prefix}/invalid`)
    const good = { name: "Good", trigger_type: "meeting_ended", actions: [{ type: "webhook", webhook_url: `${receiverUrl}/ok` }] }
    const post = (body: unknown) => admin.post("/v1/partner/admin/automations", body)
    expectPartnerError(await post({ ...good, trigger_type: "meeting_started" }), 400, "invalid_request", "trigger_type")
    expectPartnerError(await post({ ...good, name: "" }), 400, "invalid_request", "name")
    expectPartnerError(await post({ ...good, actions: [] }), 400, "invalid_request", "actions")
    expectPartnerError(await post({ ...good, actions: Array.from({ length: 11 }, () => good.actions[0]) }), 400, "invalid_request", "actions")
    expectPartnerError(await post({ ...good, actions: [{ type: "email", webhook_url: `${receiverUrl}/x` }] }), 400, "invalid_request", "type")
    expectPartnerError(await post({ ...good, actions: [{ type: "webhook", webhook_url: "http://93.184.215.14/x" }] }), 400, "invalid_request", "actions[0].webhook_url")
    // The outbound rules: a private address is refused (127.0.0.1 alone is allowed here).
    expectPartnerError(await post({ ...good, actions: [good.actions[0], { type: "webhook", webhook_url: "https://10.1.2.3/x" }] }), 400, "invalid_request", "actions[1].webhook_url")
    expectPartnerError(await post({ ...good, colour: "blue" }), 400, "invalid_request", "colour")
    expectPartnerError(await post({ ...good, actions: [{ ...good.actions[0], secret: "x" }] }), 400, "invalid_request", "secret")
    expectPartnerError(await post({ ...good, enabled: "yes" }), 400, "invalid_request", "enabled")
    expectPartnerError(await post("{not json"), 400, "invalid_request")
    const noKey = await client(server.url).post("/v1/partner/admin/automations", good)
    expectPartnerError(noKey, 401, "missing_api_key")
    expectPartnerError(await admin.get("/v1/partner/admin/automations?limit=x"), 400, "invalid_request", "limit")
    expect((await admin.get("/v1/partner/admin/automations")).body).toEqual({ items: [], total: 0, limit: 20, offset: 0 })
    const created = await post({ ...good, enabled: false, description: "Off for now" })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ enabled: false, description: "Off for now" })
  })
})
