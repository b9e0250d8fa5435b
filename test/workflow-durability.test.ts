/**
 * A partner workflow run survives its server's SIGKILL (issue 14): the real server process, with a run whose webhook
 * step's first call failed, is killed while the retry is due, and a new process on the same data makes the retry
 * (the same Idempotency-Key and body) and moves the run to its human review; killed again while the review waits
 * (nothing of the run is in any process then), a third process takes the reviewer's approval and completes the run.
 * Every event reaches a real HTTPS receiver, signed (checked with @octokit/webhooks-methods) and de-duplicated on
 * `event_id` as the partner document tells receivers to. On the embedded store (PGlite) and on the PostgreSQL server,
 * both at once (each waits a minute for the retry).
 */
import { verify } from "@octokit/webhooks-methods"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Redacted, Scope } from "effect"
import { serverDatabase } from "../packages/store-pg/test/fixtures.js"
import { partnerAdminOf } from "./http/fixtures.js"
import { partnerFlow } from "./http/oauth/partner-support.js"
import { newUser } from "./http/oauth/support.js"
import { pgliteMigratedDataDir } from "./support/pglite.js"
import { freePort, type ServerProcess, startServerProcess } from "./support/process.js"
import { header, type Received, startReceiver, waitFor } from "./support/receiver.js"
import { client, OPERATOR_TOKEN } from "./support/server.js"
import { makeTestTls } from "./support/tls.js"

const scope = Effect.runSync(Scope.make())
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)), 60_000)
const inScope = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.runPromise(Scope.extend(effect, scope))

const scopes = "openid meetings:read partner-api/workflows:read partner-api/workflows:write"

/** Waits until the server process has written at least these counts of delivery attempts, by outcome. */
const attemptsWritten = (url: string, least: Record<string, number>) =>
  waitFor(async () => {
    const scraped = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } }).then((r) => r.text())
    const count = (outcome: string) => {
      const line = scraped.split("\n").find((line) =>
        line.startsWith("convene_webhook_delivery_attempts_total{") && line.includes(`outcome="${outcome}"`)
      )
      return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1))
    }
    return Object.entries(least).every(([outcome, n]) => count(outcome) >= n) ? true : undefined
  }, `delivery attempts written: ${JSON.stringify(least)}`, 30_000)

/** The whole story on the store `storeEnv` names; answers what it saw, for the test to assert. */
const story = async (storeEnv: Record<string, string>) => {
  const tls = await makeTestTls()
  let stepCalls = 0
  const receiver = await startReceiver(tls, (message, response) => {
    // The step's first call fails: its retry is due a minute later, on the server's own schedule.
    if (message.path === "/step" && ++stepCalls === 1) response.writeHead(503).end("busy")
    else response.writeHead(200).end("ok")
  })
  const port = await freePort()
  const env = {
    ...storeEnv,
    PORT: String(port),
    CONVENE_BASE_URL: `http://127.0.0.1:${port}`,
    CONVENE_OUTBOUND_ALLOW_HOSTS: "127.0.0.1",
    NODE_EXTRA_CA_CERTS: tls.caFile
  }
  let server: ServerProcess = await startServerProcess(env)
  try {
    const url = server.url
    const flow = partnerFlow({ url })
    // The operator's answer shows the webhook secret this once.
    const app = await flow.createApp({ webhook_url: `${receiver.url}/events` }) as Awaited<ReturnType<typeof flow.createApp>> & {
      readonly webhook_secret: string
    }
    const admin = partnerAdminOf(url, app)
    const owner = await newUser(url, { plan: "ELITE" })
    const reviewer = await newUser(url, { workspaceId: owner.workspaceId })
    const toolkit = (await admin.post("/v1/partner/admin/toolkits", {
      manifest: {
        schema_version: 1,
        name: "Deals",
        workflow_templates: [{
          key: "deal",
          name: "Deal review",
          roles: ["reviewer"],
          steps: [
            { key: "notify", type: "webhook", title: "Tell the CRM", url: `${receiver.url}/step` },
            { key: "approve", type: "approval", title: "Approve", role: "reviewer" }
          ]
        }]
      }
    })).body
    expect((await admin.patch(`/v1/partner/admin/toolkits/${toolkit.id}`, { auto_install_on_new_workspaces: true })).status).toBe(200)
    const published = await admin.post(`/v1/partner/admin/toolkits/${toolkit.id}/versions/${toolkit.latest_version_id}/publish`, {})
    expect(published.status, published.text).toBe(200)
    // The consents connect the workspace, which queues the toolkit's first install.
    const ownerToken = (await flow.tokensFor(owner, app, scopes)).access_token
    const reviewerToken = (await flow.tokensFor(reviewer, app, scopes)).access_token
    await waitFor(async () => {
      const installations = await admin.get(`/v1/partner/admin/toolkits/${toolkit.id}/installations`)
      return installations.body.summary?.installed === 1 ? true : undefined
    }, "the toolkit's installation")
    const template = (await admin.get("/v1/partner/admin/workflow-templates")).body.items[0]

    const created = await client(url, ownerToken).post("/v1/partner/user/workflow-runs", {
      template_id: template.id,
      role_mappings: { reviewer: reviewer.userId }
    })
    expect(created.status, created.text).toBe(201)
    const runPath = `/v1/partner/user/workflow-runs/${created.body.id}`
    expect(created.body.status).toBe("running")

    // Killed once the step's first call failed and the run's first event was delivered, both written (the process's
    // own counts of attempts say so; killed before a write, a delivery waits for its 5-minute lease, the outbox's rule
    // for a process that died mid-call): the retry is the outbox's, due in a minute.
    const first = await waitFor(() => receiver.received.find((message) => message.path === "/step"), "the step's first call")
    await attemptsWritten(url, { retry_scheduled: 1, delivered: 1 })
    await server.kill()
    server = await startServerProcess(env)
    const retry = await waitFor(() => receiver.received.filter((message) => message.path === "/step")[1], "the step's retry", 150_000)
    const awaiting = await waitFor(async () => {
      const run = await client(url, ownerToken).get(runPath)
      return run.body.status === "awaiting_review" ? run.body : undefined
    }, "the run at its review")

    // Killed while the review waits, once this process wrote its deliveries (the retry, step.completed,
    // task.created): nothing of the run is held anywhere but in the store.
    await attemptsWritten(url, { delivered: 3 })
    await server.kill()
    server = await startServerProcess(env)
    const taskId = awaiting.steps[1].task_id
    const approved = await client(url, reviewerToken).post(`${runPath}/tasks/${taskId}/resolve`, { decision: "approve" })
    expect(approved.status, approved.text).toBe(200)
    expect(approved.body.status).toBe("completed")

    const events = await waitFor(() => {
      const unique = new Map<string, Received>()
      for (const message of receiver.received.filter((message) => message.path === "/events")) {
        unique.set(JSON.parse(message.body).event_id, message)
      }
      return unique.size >= 6 ? [...unique.values()] : undefined
    }, "the run's events", 60_000)
    for (const message of [...events, first, retry]) {
      expect(await verify(app.webhook_secret, message.body, header(message, "x-svc-signature")!)).toBe(true)
    }
    return {
      first,
      retry,
      stepCalls: receiver.received.filter((message) => message.path === "/step").length,
      final: (await client(url, ownerToken).get(runPath)).body,
      events: events.map((message) => JSON.parse(message.body)),
      owner: owner.userId,
      reviewer: reviewer.userId
    }
  } finally {
    await server.stop()
    await receiver.close()
  }
}

describe("durability: a workflow run survives SIGKILL of its server", () => {
  it("on the embedded store and on the PostgreSQL server: the retry made by the next process, the review taken by a third", async () => {
    const [dataDir, url] = await Promise.all([inScope(pgliteMigratedDataDir), inScope(serverDatabase)])
    const stories = await Promise.all([story({ CONVENE_DATA_DIR: dataDir }), story({ DATABASE_URL: Redacted.value(url) })])
    for (const seen of stories) {
      expect(header(seen.retry, "idempotency-key")).toBe(header(seen.first, "idempotency-key"))
      expect(header(seen.retry, "idempotency-key")).toMatch(/^[0-9a-f]{64}$/)
      expect(seen.retry.body).toBe(seen.first.body)
      expect(seen.stepCalls).toBe(2)
      expect(seen.final.status).toBe("completed")
      expect(seen.final.steps.map((step: { status: string }) => step.status)).toEqual(["completed", "completed"])
      const told = seen.events.map((event) => [event.event_type, event.data.user_id, event.data.step_key ?? null]).sort()
      expect(told).toEqual([
        ["workflow.run.completed", seen.owner, null],
        ["workflow.run.started", seen.owner, null],
        ["workflow.step.completed", seen.owner, "approve"],
        ["workflow.step.completed", seen.owner, "notify"],
        ["workflow.task.created", seen.reviewer, "approve"],
        ["workflow.task.resolved", seen.reviewer, "approve"]
      ].sort())
    }
  }, 300_000)
})
