/**
 * Partner workflow templates and runs end to end (issue 14), on real sockets, on the in-memory store and on a
 * PostgreSQL server. A partner app whose webhook URL is an HTTPS receiver in this process (the server may call
 * 127.0.0.1 and trusts the test's certificate authority) has a toolkit with two workflow templates (task → approval →
 * webhook, and a lone webhook step whose URL answers 500), published and installed in the workspaces its users'
 * consents connect; the users' tokens come from the real partner OAuth flow (sign-in and consent). Every request the
 * receiver gets is checked as a receiver does (the signature with @octokit/webhooks-methods and the app's webhook
 * secret, de-duplicated on event_id). Covered: the admin templates, a run through a task and an approval to its
 * webhook step and completion with each event to its addressee, a rejected run, a cancelled run, a dry run with
 * readiness issues, the refusals (plan, scope, bodies, ids, another workspace's or app's run, idempotent create,
 * methods), what an attacker sends (10k role mappings, a huge comment), and a webhook step failing three times (the
 * server's clock moved on past its 1 and 4 minute retries).
 */
import { verify } from "@octokit/webhooks-methods"
import { Duration, Effect, Exit, Layer, Option, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MovableClock } from "../support/clock.js"
import { header, type Received, type Receiver, startReceiver, waitFor } from "../support/receiver.js"
import { client, type Client } from "../support/server.js"
import { memoryStore, postgresStore } from "../support/stores.js"
import { makeTestTls, type TestTls } from "../support/tls.js"
import { eventually, expectPartnerError, type PartnerAdmin, partnerAdminOf, TIMESTAMP, UUID } from "./fixtures.js"
import { type App, partnerFlow } from "./oauth/partner-support.js"
import { newUser, type OAuthServer, type PasswordUser, startOAuthServer } from "./oauth/support.js"

const TOOLKITS = "/v1/partner/admin/toolkits"
const TEMPLATES = "/v1/partner/admin/workflow-templates"
const RUNS = "/v1/partner/user/workflow-runs"
const WORKFLOW_SCOPES = "openid profile meetings:read partner-api/workflows:read partner-api/workflows:write"
const TEMPLATE_KEYS = ["description", "id", "key", "name", "roles", "steps", "toolkit_id"]
const RUN_KEYS = [
  "created_at",
  "created_by_user_id",
  "dry_run",
  "failure",
  "id",
  "readiness_issues",
  "role_mappings",
  "status",
  "steps",
  "template_id",
  "updated_at"
]

let tls: TestTls
let receiver: Receiver

beforeAll(async () => {
  tls = await makeTestTls()
  // A step URL under /failing answers 500; everything else 200.
  receiver = await startReceiver(tls, (message, response) => response.writeHead(message.path.includes("/failing") ? 500 : 200).end("ok"))
}, 60_000)

afterAll(async () => {
  await receiver?.close()
  await tls?.cleanup()
})

/** A received body, parsed: each test reads the fields it asserts. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const jsonOf = (message: Received): any => JSON.parse(message.body)

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe.each([memoryStore, postgresStore])("partner workflows ($name)", (store) => {
  const tag = store.name.toLowerCase()
  const paths = { events: `/${tag}/events`, step: `/${tag}/step`, failing: `/${tag}/failing`, other: `/${tag}/other-events` }
  const clock = new MovableClock()
  const scope = Effect.runSync(Scope.make())
  const where = { url: "" }
  const flow = partnerFlow(where)
  let server: OAuthServer
  let app: App & { webhook_secret: string }
  let admin: PartnerAdmin
  let toolkit: { id: string; latest_version_id: string }
  /** The ELITE workspace's creator (ADMIN) and approver (MEMBER); an ELITE user of another workspace; a PRO user. */
  let owner: PasswordUser
  let approver: PasswordUser
  let outsider: PasswordUser
  let ownerToken: string
  let ownerApi: Client
  let approverApi: Client
  let outsiderApi: Client
  let dealId: string
  let pingId: string

  const manifest = () => ({
    schema_version: 1,
    name: "Deals",
    workflow_templates: [
      {
        key: "deal",
        name: "Deal review",
        description: "Review a deal",
        roles: ["owner", "approver"],
        steps: [
          { key: "draft", type: "task", title: "Draft the deal", role: "owner" },
          { key: "approve", type: "approval", title: "Approve it", role: "approver" },
          { key: "notify", type: "webhook", title: "Tell the CRM", url: `${receiver.url}${paths.step}` }
        ]
      },
      {
        key: "ping",
        name: "Ping",
        roles: ["owner"],
        steps: [{ key: "call", type: "webhook", title: "Call out", url: `${receiver.url}${paths.failing}` }]
      }
    ]
  })

  /** The user's partner client, through a real sign-in and consent (which connects the user's workspace to `to`). */
  const partnerOf = async (user: PasswordUser, to: App = app, scope = WORKFLOW_SCOPES) =>
    client(server.url, (await flow.tokensFor(user, to, scope)).access_token)

  /** Waits until the toolkit is installed (nothing pending) in `count` workspaces. */
  const installedIn = async (count: number) => {
    const settled = await eventually(
      () => admin.get(`${TOOLKITS}/${toolkit.id}/installations`),
      (answer) => answer.body.summary?.pending === 0 && answer.body.summary?.installed === count
    )
    expect(settled.body.summary).toEqual({ installed: count, pending: 0, failed: 0, outdated: 0 })
  }

  /** Every request `path` received, each checked as a receiver checks it, de-duplicated on event_id. */
  const receivedAt = async (path: string) => {
    const seen = new Set<string>()
    const messages = receiver.received.filter((message) => message.path === path).filter((message) => {
      const id = jsonOf(message).event_id as string
      return seen.has(id) ? false : (seen.add(id), true)
    })
    for (const message of messages) {
      const signature = header(message, "x-svc-signature") ?? ""
      expect(await verify(app.webhook_secret, message.body, signature), message.body).toBe(true)
      const body = jsonOf(message)
      expect(Object.keys(body)).toEqual(["event_id", "event_type", "occurred_at", "partner_app_id", "workspace_id", "data"])
      expect(header(message, "x-svc-event-type")).toBe(body.event_type)
      expect(header(message, "x-svc-event-id")).toBe(body.event_id)
      expect(body.partner_app_id).toBe(app.id)
    }
    return messages
  }

  /** The workflow events of `runId` the app's webhook URL received, as [type, data]. */
  const eventsOf = async (runId: string) =>
    (await receivedAt(paths.events))
      .map(jsonOf)
      .filter((body) => body.event_type.startsWith("workflow.") && body.data.run_id === runId)
      .map((body) => [body.event_type as string, body.data] as const)

  /** Waits until `runId` has `count` events, and answers them. */
  const eventsWhen = async (runId: string, count: number) => {
    await waitFor(async () => ((await eventsOf(runId)).length >= count ? true : undefined), `${count} events of run ${runId}`)
    return eventsOf(runId)
  }

  /** The webhook step calls of `runId` at `path`. */
  const stepCallsOf = async (path: string, runId: string) =>
    (await receivedAt(path)).filter((message) => jsonOf(message).data.run_id === runId)

  const createRun = (api: Client, body: unknown, headers?: Record<string, string>) => api.post(RUNS, body, headers)
  const dealMappings = () => ({ owner: owner.userId, approver: approver.userId })
  const getRun = (api: Client, id: string) => api.get(`${RUNS}/${id}`)
  const resolve = (api: Client, run: { id: string; steps: ReadonlyArray<{ task_id: string | null }> }, step: number, body: unknown) =>
    api.post(`${RUNS}/${run.id}/tasks/${run.steps[step]!.task_id}/resolve`, body)

  beforeAll(async () => {
    const ports = await Effect.runPromise(Scope.extend(Layer.build(store.layer(scope)), scope))
    server = await startOAuthServer({
      store: Layer.succeedContext(ports),
      clock,
      outbound: { allowHosts: ["127.0.0.1"], ca: [tls.caPem], smtpUrl: Option.none(), mailFrom: Option.none() }
    })
    where.url = server.url
    app = await flow.createApp({ webhook_url: `${receiver.url}${paths.events}` }) as typeof app
    expect(app.webhook_secret).toEqual(expect.any(String))
    admin = partnerAdminOf(server.url, app)
    const created = await admin.post(TOOLKITS, { manifest: manifest() })
    expect(created.status, created.text).toBe(201)
    toolkit = created.body
    expect((await admin.patch(`${TOOLKITS}/${toolkit.id}`, { auto_install_on_new_workspaces: true })).status).toBe(200)
    const published = await admin.post(`${TOOLKITS}/${toolkit.id}/versions/${toolkit.latest_version_id}/publish`, {})
    expect(published.status, published.text).toBe(200)

    owner = await newUser(server.url, { role: "ADMIN", plan: "ELITE" })
    approver = await newUser(server.url, { role: "MEMBER", workspaceId: owner.workspaceId })
    outsider = await newUser(server.url, { role: "ADMIN", plan: "ELITE" })
    // The consents connect the two workspaces to the app, which queues the toolkit's first installs there.
    ownerToken = (await flow.tokensFor(owner, app, WORKFLOW_SCOPES)).access_token
    ownerApi = client(server.url, ownerToken)
    approverApi = await partnerOf(approver)
    outsiderApi = await partnerOf(outsider)
    await installedIn(2)
    const templates = (await admin.get(TEMPLATES)).body.items as Array<{ id: string; key: string }>
    dealId = templates.find((template) => template.key === "deal")!.id
    pingId = templates.find((template) => template.key === "ping")!.id
  }, 120_000)

  afterAll(async () => {
    await server?.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }, 60_000)

  it("admin templates: list and get in the template shape, ids stable across versions; an unknown id 404", async () => {
    const listed = await admin.get(TEMPLATES)
    expect(listed.status, listed.text).toBe(200)
    expect(listed.body).toMatchObject({ total: 2, limit: 20, offset: 0 })
    const [deal, ping] = listed.body.items
    for (const template of listed.body.items) {
      expect(Object.keys(template).sort()).toEqual(TEMPLATE_KEYS)
      expect(template.id).toMatch(UUID)
    }
    expect(deal).toEqual({ id: dealId, toolkit_id: toolkit.id, ...manifest().workflow_templates[0] })
    expect(ping).toEqual({ id: pingId, toolkit_id: toolkit.id, description: null, ...manifest().workflow_templates[1] })
    const one = await admin.get(`${TEMPLATES}/${dealId}`)
    expect(one.status).toBe(200)
    expect(one.body).toEqual(deal)
    expect((await admin.get(`${TEMPLATES}?limit=1&offset=1`)).body).toMatchObject({ items: [ping], total: 2, limit: 1, offset: 1 })

    // A new draft version changes nothing yet; the ids stay those the toolkit and keys derive.
    const draft = await admin.post(`${TOOLKITS}/${toolkit.id}/versions`, { manifest: { ...manifest(), name: "Deals v2" } })
    expect(draft.status, draft.text).toBe(201)
    expect((await admin.get(TEMPLATES)).body.items.map((template: { id: string }) => template.id)).toEqual([dealId, pingId])

    expectPartnerError(await admin.get(`${TEMPLATES}/${crypto.randomUUID()}`), 404, "not_found")
    expectPartnerError(await admin.get(`${TEMPLATES}/not-a-uuid`), 400, "invalid_request", "id")
    // Another app sees none of them.
    const other = partnerAdminOf(server.url, await flow.createApp())
    expect((await other.get(TEMPLATES)).body).toMatchObject({ items: [], total: 0 })
    expectPartnerError(await other.get(`${TEMPLATES}/${dealId}`), 404, "not_found")
  })

  it("a run from creation through the task and the approval to its webhook step and completion, every event signed", async () => {
    const created = await createRun(ownerApi, { template_id: dealId, role_mappings: dealMappings() })
    expect(created.status, created.text).toBe(201)
    const run = created.body
    expect(Object.keys(run).sort()).toEqual(RUN_KEYS)
    expect(run).toMatchObject({
      template_id: dealId,
      status: "awaiting_review",
      dry_run: false,
      role_mappings: dealMappings(),
      readiness_issues: [],
      failure: null,
      created_by_user_id: owner.userId
    })
    expect(run.id).toMatch(UUID)
    expect(run.created_at).toMatch(TIMESTAMP)
    expect(run.steps.map((step: { key: string; type: string; status: string }) => [step.key, step.type, step.status])).toEqual([
      ["draft", "task", "awaiting_review"],
      ["approve", "approval", "pending"],
      ["notify", "webhook", "pending"]
    ])
    expect(run.steps[0]).toMatchObject({ title: "Draft the deal", assignee_user_id: owner.userId, completed_at: null })
    expect(run.steps[0].task_id).toMatch(UUID)
    expect(run.steps[0].started_at).toMatch(TIMESTAMP)
    expect(run.steps[1]).toMatchObject({ assignee_user_id: null, task_id: null, started_at: null })
    expect((await getRun(ownerApi, run.id)).body).toEqual(run)
    // Any user of the workspace reads the app's runs there.
    expect((await getRun(approverApi, run.id)).body).toEqual(run)

    // Only the assignee resolves the task.
    expectPartnerError(await resolve(approverApi, run, 0, { decision: "approve" }), 403, "forbidden")
    const drafted = await resolve(ownerApi, run, 0, { decision: "approve", comment: "drafted" })
    expect(drafted.status, drafted.text).toBe(200)
    expect(drafted.body.status).toBe("awaiting_review")
    expect(drafted.body.steps[0]).toMatchObject({ status: "completed", completed_at: expect.stringMatching(TIMESTAMP) })
    expect(drafted.body.steps[1]).toMatchObject({ status: "awaiting_review", assignee_user_id: approver.userId })
    expect(drafted.body.steps[1].task_id).toMatch(UUID)
    expectPartnerError(await resolve(ownerApi, drafted.body, 1, { decision: "approve" }), 403, "forbidden")
    const approved = await resolve(approverApi, drafted.body, 1, { decision: "approve" })
    expect(approved.status, approved.text).toBe(200)
    expect(approved.body.status).toBe("running")
    expect(approved.body.steps.map((step: { status: string }) => step.status)).toEqual(["completed", "completed", "running"])

    // The webhook step's URL gets one signed POST carrying Idempotency-Key; its 200 completes the run.
    const [call] = await waitFor(async () => {
      const calls = await stepCallsOf(paths.step, run.id)
      return calls.length > 0 ? calls : undefined
    }, "the webhook step's call")
    const body = jsonOf(call!)
    expect(body).toMatchObject({ event_type: "workflow.step.webhook", partner_app_id: app.id, workspace_id: owner.workspaceId })
    expect(body.data).toEqual({
      run_id: run.id,
      template_id: dealId,
      step_key: "notify",
      step_title: "Tell the CRM",
      role_mappings: dealMappings(),
      created_by_user_id: owner.userId
    })
    expect(header(call!, "idempotency-key")).toEqual(expect.stringMatching(/.+/))
    expect(header(call!, "x-svc-delivery-id")).toMatch(UUID)
    expect(header(call!, "content-type")).toContain("application/json")
    const completed = await eventually(() => getRun(ownerApi, run.id), (answer) => answer.body.status === "completed")
    expect(completed.body.status).toBe("completed")
    expect(completed.body.steps.map((step: { status: string }) => step.status)).toEqual(["completed", "completed", "completed"])
    expect(completed.body.failure).toBeNull()

    const events = await eventsWhen(run.id, 9)
    const told = events.map(([type, data]) => [type, data.user_id, data.step_key ?? null])
    expect([...told].sort()).toEqual([
      ["workflow.run.completed", owner.userId, null],
      ["workflow.run.started", owner.userId, null],
      ["workflow.step.completed", owner.userId, "approve"],
      ["workflow.step.completed", owner.userId, "draft"],
      ["workflow.step.completed", owner.userId, "notify"],
      ["workflow.task.created", approver.userId, "approve"],
      ["workflow.task.created", owner.userId, "draft"],
      ["workflow.task.resolved", approver.userId, "approve"],
      ["workflow.task.resolved", owner.userId, "draft"]
    ].sort())
    for (const [, data] of events) expect(data).toMatchObject({ run_id: run.id, template_id: dealId })
    const of = (type: string, step?: string) => events.find(([t, data]) => t === type && (step === undefined || data.step_key === step))![1]
    expect(of("workflow.task.created", "approve")).toMatchObject({ task_id: drafted.body.steps[1].task_id, assignee_user_id: approver.userId })
    expect(of("workflow.task.resolved", "draft")).toMatchObject({ task_id: run.steps[0].task_id, decision: "approve", comment: "drafted" })
    expect(of("workflow.task.resolved", "approve")).toMatchObject({ decision: "approve", comment: null })
    expect(of("workflow.step.completed", "notify")).toMatchObject({ step_type: "webhook" })
    expect(of("workflow.run.completed").status).toBe("completed")
    // The step was called once (its 200 is final).
    expect(await stepCallsOf(paths.step, run.id)).toHaveLength(1)

    const listed = await ownerApi.get(`${RUNS}?status=completed`)
    expect(listed.status).toBe(200)
    expect(listed.body.items.map((item: { id: string }) => item.id)).toContain(run.id)
    expect(listed.body.items.every((item: { status: string }) => item.status === "completed")).toBe(true)
    expect(listed.body.items.find((item: { id: string }) => item.id === run.id)).toEqual(completed.body)
    expect((await ownerApi.get(`${RUNS}?status=rejected`)).body.items.map((item: { id: string }) => item.id)).not.toContain(run.id)
    expectPartnerError(await resolve(ownerApi, run, 0, { decision: "approve" }), 409, "conflict")
    expectPartnerError(await resolve(approverApi, drafted.body, 1, { decision: "reject" }), 409, "conflict")
  })

  it("a rejected run: later steps skipped, task.resolved (reject) and run.failed with status rejected; the step never called", async () => {
    const run = (await createRun(ownerApi, { template_id: dealId, role_mappings: dealMappings() })).body
    const drafted = (await resolve(ownerApi, run, 0, { decision: "approve" })).body
    const rejected = await resolve(approverApi, drafted, 1, { decision: "reject", comment: "too cheap" })
    expect(rejected.status, rejected.text).toBe(200)
    expect(rejected.body).toMatchObject({ status: "rejected", failure: null })
    expect(rejected.body.steps.map((step: { status: string }) => step.status)).toEqual(["completed", "rejected", "skipped"])
    expect((await getRun(ownerApi, run.id)).body).toEqual(rejected.body)
    expect((await ownerApi.get(`${RUNS}?status=rejected`)).body.items.map((item: { id: string }) => item.id)).toContain(run.id)

    const events = await eventsWhen(run.id, 7)
    expect(events.map(([type]) => type).sort()).toEqual([
      "workflow.run.failed",
      "workflow.run.started",
      "workflow.step.completed",
      "workflow.task.created",
      "workflow.task.created",
      "workflow.task.resolved",
      "workflow.task.resolved"
    ])
    const resolvedReject = events.find(([type, data]) => type === "workflow.task.resolved" && data.decision === "reject")
    expect(resolvedReject?.[1]).toMatchObject({ user_id: approver.userId, step_key: "approve", comment: "too cheap" })
    const failed = events.find(([type]) => type === "workflow.run.failed")![1]
    expect(failed).toMatchObject({ status: "rejected", user_id: owner.userId })
    expect(await stepCallsOf(paths.step, run.id)).toHaveLength(0)
    expectPartnerError(await resolve(approverApi, drafted, 1, { decision: "approve" }), 409, "conflict")
  })

  it("its creator cancels a run awaiting review: cancelled, the rest skipped, run.failed with status cancelled", async () => {
    const run = (await createRun(ownerApi, { template_id: dealId, role_mappings: dealMappings() })).body
    const drafted = (await resolve(ownerApi, run, 0, { decision: "approve" })).body
    expectPartnerError(await approverApi.post(`${RUNS}/${run.id}/cancel`), 403, "forbidden")
    expectPartnerError(await outsiderApi.post(`${RUNS}/${run.id}/cancel`), 404, "not_found")
    const cancelled = await ownerApi.post(`${RUNS}/${run.id}/cancel`)
    expect(cancelled.status, cancelled.text).toBe(200)
    expect(cancelled.body).toMatchObject({ id: run.id, status: "cancelled", failure: null })
    expect(cancelled.body.steps.map((step: { status: string }) => step.status)).toEqual(["completed", "skipped", "skipped"])
    expect((await getRun(ownerApi, run.id)).body).toEqual(cancelled.body)
    expectPartnerError(await ownerApi.post(`${RUNS}/${run.id}/cancel`), 409, "conflict")
    expectPartnerError(await resolve(approverApi, drafted, 1, { decision: "approve" }), 409, "conflict")
    const events = await eventsWhen(run.id, 6)
    expect(events.find(([type]) => type === "workflow.run.failed")?.[1]).toMatchObject({ status: "cancelled", user_id: owner.userId })
    expect(await stepCallsOf(paths.step, run.id)).toHaveLength(0)
  })

  it("a dry run answers its readiness issues and stores and sends nothing; the same run for real is 400 with them", async () => {
    const body = { template_id: dealId, role_mappings: { owner: owner.userId, ghost: outsider.userId }, dry_run: true }
    const dry = await createRun(outsiderApi, body)
    expect(dry.status, dry.text).toBe(200)
    expect(Object.keys(dry.body).sort()).toEqual(RUN_KEYS)
    expect(dry.body).toMatchObject({ dry_run: true, status: "pending", template_id: dealId, created_by_user_id: outsider.userId })
    expect(dry.body.steps.map((step: { status: string }) => step.status)).toEqual(["pending", "pending", "pending"])
    expect(dry.body.readiness_issues.map((issue: { code: string; role?: string }) => [issue.code, issue.role])).toEqual([
      ["missing_role_mapping", "approver"],
      ["unknown_role", "ghost"],
      ["user_not_in_workspace", "owner"]
    ])
    for (const issue of dry.body.readiness_issues) expect(issue.message).toEqual(expect.stringMatching(/.+/))
    expectPartnerError(await getRun(outsiderApi, dry.body.id), 404, "not_found")
    expect((await outsiderApi.get(RUNS)).body).toMatchObject({ items: [], total: 0 })

    const real = await createRun(outsiderApi, { ...body, dry_run: false })
    expect(real.status, real.text).toBe(400)
    expect(Object.keys(real.body).sort()).toEqual(["code", "error", "readiness_issues", "request_id"])
    expect(real.body.code).toBe("invalid_request")
    expect(real.body.readiness_issues).toEqual(dry.body.readiness_issues)
    const { dry_run: _dry, ...withoutFlag } = body
    expect((await createRun(outsiderApi, withoutFlag)).body.readiness_issues).toEqual(dry.body.readiness_issues)
    expect((await outsiderApi.get(RUNS)).body.total).toBe(0)
    // Nothing was told about it (the event poll runs every second).
    await pause(1_500)
    expect(await eventsOf(dry.body.id)).toEqual([])
  })

  it("refusals: plan, scope, template, bodies, ids, other workspaces and apps, idempotent create, methods", async () => {
    const run = (await createRun(ownerApi, { template_id: dealId, role_mappings: dealMappings() })).body

    // A PRO workspace: 402 before anything else of the body.
    const pro = await newUser(server.url, { role: "ADMIN", plan: "PRO" })
    const proApi = await partnerOf(pro)
    const gated = await createRun(proApi, { template_id: crypto.randomUUID(), dry_run: true })
    expect(gated.status, gated.text).toBe(402)
    expect(gated.body).toMatchObject({ code: "plan_required", feature: "workflow_templates", current_plan: "PRO", required_plan: "ELITE" })
    expect(gated.body.request_id).toBe(gated.headers.get("x-request-id"))

    // A token without partner-api/workflows:write reads and does not write.
    const reader = await partnerOf(owner, app, "openid meetings:read partner-api/workflows:read")
    expect((await getRun(reader, run.id)).status).toBe(200)
    expectPartnerError(await createRun(reader, { template_id: dealId, role_mappings: dealMappings() }), 403, "insufficient_scope")
    expectPartnerError(await resolve(reader, run, 0, { decision: "approve" }), 403, "insufficient_scope")
    const noRead = await partnerOf(owner, app, "openid meetings:read")
    expectPartnerError(await noRead.get(RUNS), 403, "insufficient_scope")
    expectPartnerError(await getRun(noRead, run.id), 403, "insufficient_scope")

    expectPartnerError(await createRun(ownerApi, { template_id: crypto.randomUUID(), role_mappings: dealMappings() }), 404, "not_found")
    // Bad bodies: 400 `invalid_request` naming the field, never 500.
    const badCreates: ReadonlyArray<readonly [unknown, string]> = [
      [{ template_id: dealId, role_mappings: { owner: "not-a-uuid" } }, "role_mappings.owner: must be a UUID"],
      [{ template_id: dealId, role_mappings: { owner: 7 } }, "role_mappings.owner: must be a string"],
      [{ template_id: dealId, role_mappings: dealMappings(), colour: "red" }, "colour: is not a field"],
      [{ template_id: "not-a-uuid" }, "template_id: must be a UUID"],
      [{ template_id: dealId, dry_run: "yes" }, "dry_run: must be true or false"],
      [{}, "template_id: is required"],
      [[], "must be a JSON object"],
      ["not json", "not valid JSON"],
      ["{\"template_id\":", "not valid JSON"]
    ]
    for (const [bad, naming] of badCreates) expectPartnerError(await createRun(ownerApi, bad), 400, "invalid_request", naming)
    const badResolves: ReadonlyArray<readonly [unknown, string]> = [
      [{ decision: "maybe" }, "decision: must be one of"],
      [{}, "decision: is required"],
      [{ decision: "approve", extra: 1 }, "extra: is not a field"],
      [{ decision: "approve", comment: 5 }, "comment: must be a string"],
      ["not json", "not valid JSON"]
    ]
    for (const [bad, naming] of badResolves) expectPartnerError(await resolve(ownerApi, run, 0, bad), 400, "invalid_request", naming)
    const long = await resolve(ownerApi, run, 0, { decision: "approve", comment: "x".repeat(2001) })
    expect(long.status, long.text).toBe(400)
    expect(long.body.error).toContain("comment")
    // The task is still open after all that.
    expect((await getRun(ownerApi, run.id)).body.steps[0].status).toBe("awaiting_review")

    // Bad path ids: 400; unknown ones, another run's task, another workspace's or app's run: 404.
    expectPartnerError(await ownerApi.get(`${RUNS}/not-a-uuid`), 400, "invalid_request", "id")
    expectPartnerError(await ownerApi.post(`${RUNS}/${run.id}/tasks/not-a-uuid/resolve`, { decision: "approve" }), 400, "invalid_request", "task_id")
    expectPartnerError(await ownerApi.get(`${RUNS}?status=bogus`), 400, "invalid_request", "status")
    expectPartnerError(await getRun(ownerApi, crypto.randomUUID()), 404, "not_found")
    expectPartnerError(await ownerApi.post(`${RUNS}/${run.id}/tasks/${crypto.randomUUID()}/resolve`, { decision: "approve" }), 404, "not_found")
    const second = (await createRun(ownerApi, { template_id: dealId, role_mappings: dealMappings() })).body
    expectPartnerError(await ownerApi.post(`${RUNS}/${run.id}/tasks/${second.steps[0].task_id}/resolve`, { decision: "approve" }), 404, "not_found")
    expectPartnerError(await getRun(outsiderApi, run.id), 404, "not_found")
    expectPartnerError(await resolve(outsiderApi, run, 0, { decision: "approve" }), 404, "not_found")
    expect((await outsiderApi.get(RUNS)).body.items.map((item: { id: string }) => item.id)).not.toContain(run.id)
    const otherApp = await flow.createApp({ webhook_url: `${receiver.url}${paths.other}` })
    const viaOther = await partnerOf(owner, otherApp)
    expectPartnerError(await getRun(viaOther, run.id), 404, "not_found")
    expectPartnerError(await resolve(viaOther, run, 0, { decision: "approve" }), 404, "not_found")
    expect((await viaOther.get(RUNS)).body).toMatchObject({ items: [], total: 0 })
    expectPartnerError(await createRun(viaOther, { template_id: dealId, role_mappings: dealMappings() }), 404, "not_found")
    expect((await getRun(ownerApi, run.id)).body.steps[0].status).toBe("awaiting_review")

    // Idempotency-Key replays the same run, which is made once.
    const before = (await ownerApi.get(RUNS)).body.total as number
    const key = { "idempotency-key": crypto.randomUUID() }
    const first = await createRun(ownerApi, { template_id: dealId, role_mappings: dealMappings() }, key)
    expect(first.status, first.text).toBe(201)
    expect(first.headers.get("idempotent-replayed")).toBeNull()
    const again = await createRun(ownerApi, { template_id: dealId, role_mappings: dealMappings() }, key)
    expect(again.status).toBe(201)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.body).toEqual(first.body)
    expect((await ownerApi.get(RUNS)).body.total).toBe(before + 1)
    const reused = await createRun(ownerApi, { template_id: dealId, role_mappings: { owner: owner.userId, approver: owner.userId } }, key)
    expectPartnerError(reused, 422, "idempotency_key_reuse")
    expect((await ownerApi.get(RUNS)).body.total).toBe(before + 1)

    // Methods the routes do not have.
    for (const [method, path, allow] of [["DELETE", `${RUNS}/${run.id}`, "GET"], ["PUT", RUNS, "GET, POST"], ["PATCH", TEMPLATES, "GET"]] as const) {
      const answer = await ownerApi.call(method, path, {})
      expect(answer.status, `${method} ${path}: ${answer.text}`).toBe(405)
      expect(answer.headers.get("allow")).toBe(allow)
    }
    const head = await fetch(`${server.url}${RUNS}/${run.id}`, { method: "HEAD", headers: { authorization: `Bearer ${ownerToken}` } })
    expect(head.status).toBe(200)
    expect(await head.text()).toBe("")
  })

  it("as an attacker: 10k role mappings, a long role, a huge comment, no 500 and the server still answers", async () => {
    const many = Object.fromEntries(Array.from({ length: 10_000 }, (_, index) => [`role${index}`, crypto.randomUUID()]))
    // At most as many mappings as a template may have roles (20): more is refused before anything is looked up.
    const answer = await createRun(ownerApi, { template_id: dealId, role_mappings: { ...dealMappings(), ...many }, dry_run: true })
    expectPartnerError(answer, 400, "invalid_request", "role_mappings")
    const twenty = Object.fromEntries(Array.from({ length: 18 }, (_, index) => [`role${index}`, crypto.randomUUID()]))
    const dry = await createRun(ownerApi, { template_id: dealId, role_mappings: { ...dealMappings(), ...twenty }, dry_run: true })
    expect(dry.status, dry.text.slice(0, 300)).toBe(200)
    expect(dry.body.readiness_issues.filter((issue: { code: string }) => issue.code === "unknown_role")).toHaveLength(18)
    const longRole = await createRun(ownerApi, { template_id: dealId, role_mappings: { ["r".repeat(101)]: owner.userId }, dry_run: true })
    expectPartnerError(longRole, 400, "invalid_request", "role_mappings")
    const huge = await ownerApi.post(`${RUNS}/${crypto.randomUUID()}/tasks/${crypto.randomUUID()}/resolve`, {
      decision: "approve",
      comment: "x".repeat(2_000_000)
    })
    expect(huge.status, huge.text).toBe(413)
    expect(huge.body.code).toBe("payload_too_large")
    expect((await ownerApi.get(RUNS)).status).toBe(200)
  })

  it("a webhook step answered 500 three times (retries 1 and 4 minutes apart on the server's clock) fails the run", async () => {
    const created = await createRun(ownerApi, { template_id: pingId, role_mappings: { owner: owner.userId } })
    expect(created.status, created.text).toBe(201)
    const run = created.body
    expect(run).toMatchObject({ status: "running" })
    expect(run.steps[0]).toMatchObject({ key: "call", type: "webhook", status: "running", assignee_user_id: null, task_id: null })
    const calls = (count: number) =>
      waitFor(async () => {
        const found = await stepCallsOf(paths.failing, run.id)
        return found.length >= count ? found : undefined
      }, `${count} call(s) of the failing step`)
    // Each attempt is a new request of the same delivery: not de-duplicated on event_id, so count them raw.
    const raw = () => receiver.received.filter((message) => message.path === paths.failing && jsonOf(message).data.run_id === run.id)
    await calls(1)
    expect((await getRun(ownerApi, run.id)).body.status).toBe("running")
    clock.offset += Duration.toMillis(Duration.minutes(1)) + 1_000
    await waitFor(() => (raw().length >= 2 ? true : undefined), "the second attempt")
    expect((await getRun(ownerApi, run.id)).body.status).toBe("running")
    clock.offset += Duration.toMillis(Duration.minutes(4)) + 1_000
    await waitFor(() => (raw().length >= 3 ? true : undefined), "the third attempt")
    const failed = await eventually(() => getRun(ownerApi, run.id), (answer) => answer.body.status === "failed")
    expect(failed.body).toMatchObject({ status: "failed", failure: { code: "step_delivery_failed", step_key: "call" } })
    expect(failed.body.steps[0].status).toBe("failed")
    const attempts = raw()
    expect(attempts).toHaveLength(3)
    const keys = new Set(attempts.map((message) => header(message, "idempotency-key")))
    expect(keys.size).toBe(1)
    for (const message of attempts) expect(await verify(app.webhook_secret, message.body, header(message, "x-svc-signature") ?? "")).toBe(true)

    const events = await eventsWhen(run.id, 2)
    expect(events.map(([type]) => type).sort()).toEqual(["workflow.run.failed", "workflow.run.started"])
    expect(events.find(([type]) => type === "workflow.run.failed")![1]).toMatchObject({
      status: "failed",
      user_id: owner.userId,
      failure: { code: "step_delivery_failed", step_key: "call" }
    })
  }, 60_000)
})
