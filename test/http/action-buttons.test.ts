/**
 * Triggering a toolkit's action button end to end (POST /v1/partner/user/meetings/{id}/action-buttons/{button_id}/trigger)
 * on real sockets: a partner app with a webhook URL at an HTTPS receiver in this process (the server trusts the test's
 * certificate authority and may call 127.0.0.1), a toolkit with a button published and installed by the server's
 * background distribution, the user's access token from the real partner OAuth flow. The trigger answers 202
 * `{invocation_id}` and the receiver gets `action_button.triggered` with the data fields, signed with the app's
 * webhook secret (checked with @octokit/webhooks-methods); an unknown button, another app's button and a meeting of
 * another workspace are 404, a token without meetings:write 403, and a retry with the same Idempotency-Key replays
 * the same invocation_id and sends nothing again.
 */
import { verify } from "@octokit/webhooks-methods"
import { Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { header, type Received, type Receiver, startReceiver, waitFor } from "../support/receiver.js"
import { client, type Client, OPERATOR_TOKEN } from "../support/server.js"
import { makeTestTls, type TestTls } from "../support/tls.js"
import { eventually, expectPartnerError, type PartnerAdmin, partnerAdminOf, sleep, TIMESTAMP, UUID } from "./fixtures.js"
import { type App, partnerFlow } from "./oauth/partner-support.js"
import { newUser, type PasswordUser, useOAuthServer } from "./oauth/support.js"

const TOOLKITS = "/v1/partner/admin/toolkits"

let tls: TestTls
let receiver: Receiver

beforeAll(async () => {
  tls = await makeTestTls()
  receiver = await startReceiver(tls, (_message, response) => response.writeHead(200).end("ok"))
}, 60_000)

afterAll(async () => {
  await receiver?.close()
  await tls?.cleanup()
})

// Registered after the receiver's hook, so started after it: the outbound settings are read when it starts.
const server = useOAuthServer({
  get outbound() {
    return { allowHosts: ["127.0.0.1"], ca: [tls.caPem], smtpUrl: Option.none(), mailFrom: Option.none() }
  }
})
const flow = partnerFlow(server)

/** A received body, parsed: each test reads the fields it asserts. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const jsonOf = (message: Received): any => JSON.parse(message.body)

const at = (path: string) => receiver.received.filter((message) => message.path === path)

/** A partner app with its webhook URL at a path of its own on the receiver, and its admin client. */
const newApp = async (): Promise<{ app: App & { webhook_secret: string }; path: string; admin: PartnerAdmin }> => {
  const path = `/hooks/${crypto.randomUUID()}`
  const app = await flow.createApp({ webhook_url: `${receiver.url}${path}` }) as App & { webhook_secret: string }
  return { app, path, admin: partnerAdminOf(server.url, app) }
}

/** A toolkit of the app with the buttons `keys`, installed in the workspaces connected to it. */
const installButtons = async (admin: PartnerAdmin, keys: ReadonlyArray<string>) => {
  const created = await admin.post(TOOLKITS, {
    manifest: {
      schema_version: 1,
      name: "CRM kit",
      action_buttons: keys.map((key) => ({ key, label: `Open ${key}`, url: `https://${key}.example.com/open` }))
    }
  })
  expect(created.status, created.text).toBe(201)
  const toolkit = created.body
  expect((await admin.patch(`${TOOLKITS}/${toolkit.id}`, { auto_install_on_new_workspaces: true })).status).toBe(200)
  const published = await admin.post(`${TOOLKITS}/${toolkit.id}/versions/${toolkit.latest_version_id}/publish`, { propagation: "force" })
  expect(published.status, published.text).toBe(200)
  const settled = await eventually(
    () => admin.get(`${TOOLKITS}/${toolkit.id}/installations`),
    (answer) => answer.body.summary?.pending === 0
  )
  expect(settled.body.summary.installed).toBeGreaterThan(0)
  return toolkit as { readonly id: string }
}

/** A first-party client of the user (to create meetings). */
const firstPartyOf = async (user: PasswordUser): Promise<Client> => {
  const issued = await client(server.url, OPERATOR_TOKEN).post(`/operator/v1/users/${user.userId}/tokens`, {
    kind: "personal_access_token",
    scopes: ["meetings:read", "meetings:write"],
    expiry_days: 30
  })
  expect(issued.status, issued.text).toBe(201)
  return client(server.url, issued.body.token)
}

const triggerPath = (meetingId: string, buttonId: string) =>
  `/v1/partner/user/meetings/${meetingId}/action-buttons/${encodeURIComponent(buttonId)}/trigger`

describe("POST /v1/partner/user/meetings/{id}/action-buttons/{button_id}/trigger", () => {
  let user: PasswordUser
  let meetingId: string
  let first: Awaited<ReturnType<typeof newApp>>
  let partner: Client
  let toolkitId: string

  beforeAll(async () => {
    user = await newUser(server.url, { role: "ADMIN", plan: "PRO" })
    first = await newApp()
    // The consent connects the user's workspace to the app.
    partner = client(server.url, (await flow.tokensFor(user, first.app)).access_token)
    toolkitId = (await installButtons(first.admin, ["crm", "quote"])).id
    const meeting = await (await firstPartyOf(user)).post("/v1/meetings", { title: "Deal review" })
    expect(meeting.status, meeting.text).toBe(201)
    meetingId = meeting.body.id
  }, 60_000)

  it("answers 202 {invocation_id}; the app's webhook URL receives action_button.triggered, signed with its secret", async () => {
    const buttonId = `${toolkitId}:crm`
    const listed = await partner.get(`/v1/partner/user/meetings/${meetingId}/action-buttons`)
    expect(listed.body.items.map((button: { id: string }) => button.id)).toEqual([buttonId, `${toolkitId}:quote`])

    const answer = await partner.post(triggerPath(meetingId, buttonId))
    expect(answer.status, answer.text).toBe(202)
    expect(Object.keys(answer.body)).toEqual(["invocation_id"])
    expect(answer.body.invocation_id).toMatch(UUID)

    const [message] = await waitFor(() => (at(first.path).length > 0 ? at(first.path) : undefined), "the webhook")
    const body = jsonOf(message!)
    expect(Object.keys(body)).toEqual(["event_id", "event_type", "occurred_at", "partner_app_id", "workspace_id", "data"])
    expect(body).toMatchObject({ event_type: "action_button.triggered", partner_app_id: first.app.id, workspace_id: user.workspaceId })
    expect(body.event_id).toMatch(UUID)
    expect(body.data).toEqual({
      invocation_id: answer.body.invocation_id,
      button_id: buttonId,
      meeting_id: meetingId,
      user_id: user.userId,
      occurred_at: body.occurred_at
    })
    expect(body.occurred_at).toMatch(TIMESTAMP)
    expect(header(message!, "x-svc-event-type")).toBe("action_button.triggered")
    expect(header(message!, "x-svc-event-id")).toBe(body.event_id)
    const signature = header(message!, "x-svc-signature") ?? ""
    expect(signature).toMatch(/^sha256=[0-9a-f]{64}$/)
    expect(await verify(first.app.webhook_secret, message!.body, signature)).toBe(true)
    expect(await verify(`${first.app.webhook_secret}x`, message!.body, signature)).toBe(false)

    // Each trigger is an invocation of its own.
    const again = await partner.post(triggerPath(meetingId, buttonId))
    expect(again.status).toBe(202)
    expect(again.body.invocation_id).not.toBe(answer.body.invocation_id)
    await waitFor(() => (at(first.path).length >= 2 ? true : undefined), "the second webhook")
    expect(jsonOf(at(first.path)[1]!).data.invocation_id).toBe(again.body.invocation_id)
  })

  it("a retry with the same Idempotency-Key replays the same invocation_id and sends nothing again", async () => {
    const buttonId = `${toolkitId}:quote`
    const key = crypto.randomUUID()
    const sent = () => at(first.path).filter((message) => jsonOf(message).data.button_id === buttonId)
    const answer = await partner.post(triggerPath(meetingId, buttonId), undefined, { "idempotency-key": key })
    expect(answer.status, answer.text).toBe(202)
    await waitFor(() => (sent().length > 0 ? true : undefined), "the webhook")
    const replay = await partner.post(triggerPath(meetingId, buttonId), undefined, { "idempotency-key": key })
    expect(replay.status).toBe(202)
    expect(replay.headers.get("idempotent-replayed")).toBe("true")
    expect(replay.body).toEqual(answer.body)
    // The worker runs every second: two more seconds and still the one delivery.
    await sleep(2_500)
    expect(sent().map((message) => jsonOf(message).data.invocation_id)).toEqual([answer.body.invocation_id])
  })

  it("an unknown button, another app's button and another workspace's meeting are 404; nothing is sent", async () => {
    const before = receiver.received.length
    expectPartnerError(await partner.post(triggerPath(meetingId, `${toolkitId}:nope`)), 404, "not_found")
    expectPartnerError(await partner.post(triggerPath(meetingId, "crm")), 404, "not_found")

    // A second app of the same user, with a toolkit of its own installed in the same workspace (a key no other
    // toolkit installed there holds).
    const second = await newApp()
    const secondPartner = client(server.url, (await flow.tokensFor(user, second.app)).access_token)
    const secondToolkit = await installButtons(second.admin, ["ticket"])
    // Each app triggers its own buttons only.
    expectPartnerError(await partner.post(triggerPath(meetingId, `${secondToolkit.id}:ticket`)), 404, "not_found")
    expectPartnerError(await secondPartner.post(triggerPath(meetingId, `${toolkitId}:crm`)), 404, "not_found")

    // A meeting of another workspace (connected to the app too).
    const stranger = await newUser(server.url, { role: "ADMIN", plan: "PRO" })
    await flow.tokensFor(stranger, first.app)
    const elsewhere = await (await firstPartyOf(stranger)).post("/v1/meetings", { title: "Elsewhere" })
    expectPartnerError(await partner.post(triggerPath(elsewhere.body.id, `${toolkitId}:crm`)), 404, "not_found")

    await sleep(1_500)
    expect(receiver.received.slice(before).filter((message) => message.path === first.path || message.path === second.path)).toEqual([])

    // The second app's own button works, and only its receiver hears of it.
    const own = await secondPartner.post(triggerPath(meetingId, `${secondToolkit.id}:ticket`))
    expect(own.status, own.text).toBe(202)
    const [message] = await waitFor(() => (at(second.path).length > 0 ? at(second.path) : undefined), "the second app's webhook")
    expect(jsonOf(message!).data.invocation_id).toBe(own.body.invocation_id)
    expect(await verify(second.app.webhook_secret, message!.body, header(message!, "x-svc-signature") ?? "")).toBe(true)
  })

  it("a token without meetings:write is 403 insufficient_scope", async () => {
    const readOnly = client(server.url, (await flow.tokensFor(user, first.app, "openid profile meetings:read")).access_token)
    expectPartnerError(await readOnly.post(triggerPath(meetingId, `${toolkitId}:crm`)), 403, "insufficient_scope")
  })
})
