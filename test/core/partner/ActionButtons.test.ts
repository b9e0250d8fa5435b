/**
 * The action button trigger (PartnerUserContext.trigger) through the real services on the memory store, with the
 * scripted Outbound of the webhook tests and the real DeliveryWorker: a fresh invocation id, `action_button.triggered`
 * enqueued in the trigger's unit of work and sent signed to the app's webhook URL with `{invocation_id, button_id,
 * meeting_id, user_id, occurred_at}`; nothing sent (still answered) for an app without a webhook URL or whose filter
 * leaves the type out; 404 for an unknown id, another app's button or a meeting the user does not see; the scope.
 */
import {
  Convene,
  CreateMeeting,
  CreatePartnerApp,
  CreateToolkit,
  DeliveryWorker,
  MeetingAccess,
  Meetings,
  type PartnerApp,
  PartnerApps,
  PartnerStore,
  PartnerUserContext,
  PublishToolkitVersion,
  Toolkits,
  UpdatePartnerApp,
  WebhookStore,
  type WorkspaceId
} from "@convene/core"
import { describe, expect, it } from "@effect/vitest"
import { verify } from "@octokit/webhooks-methods"
import { DateTime, Effect, Layer, Option } from "effect"
import { principalFor } from "../fixtures.js"
import { freshUrl, takeRequests, WebhooksLive, type WebhooksServices } from "../webhooks/fixtures.js"

/** The webhook services, the partner room and the user context on one fresh store. */
const Live = PartnerUserContext.layer.pipe(
  Layer.provide(MeetingAccess.layer),
  Layer.provideMerge(Convene.partnerLayer),
  Layer.provideMerge(WebhooksLive)
)
type Services = Layer.Layer.Success<typeof Live> | WebhooksServices

/** A test on a store of its own (the worker claims across the whole store). */
const test = <E>(name: string, body: () => Effect.Effect<void, E, Services>) => it.effect(name, () => Effect.provide(body(), Live))

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const runOnce = Effect.flatMap(DeliveryWorker, (worker) => worker.runOnce({ limit: 1000 }))

/** A user's workspace with a meeting, and a partner app connected to it (fields: its webhook settings). */
const setup = (fields: Partial<CreatePartnerApp> = {}) =>
  Effect.gen(function*() {
    const { principal, user, workspace } = yield* principalFor({ kind: "personal_access_token" })
    const meeting = yield* (yield* Meetings).create(principal, CreateMeeting.make({ title: "Deal review" }))
    const created = yield* appIn(workspace.id, fields)
    return { principal, user, workspace, meeting, ...created }
  })

const appIn = (workspaceId: WorkspaceId, fields: Partial<CreatePartnerApp> = {}) =>
  Effect.gen(function*() {
    const apps = yield* PartnerApps
    const created = yield* apps.create(CreatePartnerApp.make({ name: `Acme ${crypto.randomUUID().slice(0, 6)}`, webhook_url: freshUrl(), ...fields }))
    yield* apps.connectWorkspace(created.id, workspaceId)
    return { created, app: yield* appOf(created.id) }
  })

const appOf = (id: PartnerApp["id"]) => Effect.map(Effect.flatMap(PartnerStore, (store) => store.get(id)), Option.getOrThrow)

/** A toolkit of the app with the buttons `keys`, installed in its connected workspaces. */
const installButtons = (app: PartnerApp, keys: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const toolkits = yield* Toolkits
    const toolkit = yield* toolkits.create(app, new CreateToolkit({
      manifest: { schema_version: 1, name: "CRM kit", action_buttons: keys.map((key) => ({ key, label: key, url: `https://${key}.example.com` })) }
    }))
    yield* toolkits.patch(app, toolkit.id, { auto_install_on_new_workspaces: true })
    yield* toolkits.publish(app, toolkit.id, toolkit.latest_version_id, new PublishToolkitVersion({ propagation: "force" }))
    yield* toolkits.installPending()
    return toolkit
  })

/** The deliveries enqueued for the app and not sent yet (claimed from the outbox: the worker then leaves them be). */
const pendingFor = (app: PartnerApp) =>
  Effect.gen(function*() {
    const later = DateTime.add(yield* DateTime.now, { hours: 1 })
    const claimed = yield* (yield* WebhookStore).claimDue({ now: later, leaseUntil: later, limit: 1000 })
    return claimed.filter((delivery) => delivery.addressee_id === app.id)
  })

describe("PartnerUserContext.trigger", () => {
  test("answers a fresh invocation id and sends action_button.triggered, signed, with the data fields", () =>
    Effect.gen(function*() {
      const { app, created, meeting, principal, user, workspace } = yield* setup()
      const toolkit = yield* installButtons(app, ["crm"])
      const context = yield* PartnerUserContext
      const buttonId = `${toolkit.id}:crm`
      const answer = yield* context.trigger(principal, app, meeting.id, buttonId)
      expect(Object.keys(answer)).toEqual(["invocation_id"])
      expect(answer.invocation_id).toMatch(UUID)
      yield* runOnce
      const requests = yield* takeRequests(app.webhook_url!)
      expect(requests).toHaveLength(1)
      const body = JSON.parse(requests[0]!.body)
      expect(body).toEqual({
        event_id: expect.stringMatching(UUID),
        event_type: "action_button.triggered",
        occurred_at: body.occurred_at,
        partner_app_id: app.id,
        workspace_id: workspace.id,
        data: { invocation_id: answer.invocation_id, button_id: buttonId, meeting_id: meeting.id, user_id: user.id, occurred_at: body.occurred_at }
      })
      expect(requests[0]!.headers["X-Svc-Event-Type"]).toBe("action_button.triggered")
      expect(yield* Effect.promise(() => verify(created.webhook_secret, requests[0]!.body, requests[0]!.headers["X-Svc-Signature"]!))).toBe(true)

      const again = yield* context.trigger(principal, app, meeting.id, buttonId)
      expect(again.invocation_id).not.toBe(answer.invocation_id)
    }))

  test("an app without a webhook URL, or whose filter leaves the type out, is answered and sent nothing", () =>
    Effect.gen(function*() {
      const { app, meeting, principal } = yield* setup({ webhook_url: null })
      const toolkit = yield* installButtons(app, ["crm"])
      const context = yield* PartnerUserContext
      expect((yield* context.trigger(principal, app, meeting.id, `${toolkit.id}:crm`)).invocation_id).toMatch(UUID)
      expect(yield* pendingFor(app)).toEqual([])

      const filtered = yield* appIn(meeting.workspace_id)
      yield* (yield* PartnerApps).update(filtered.app.id, UpdatePartnerApp.make({ webhook_events: ["action_item.updated"] }))
      const filteredApp = yield* appOf(filtered.app.id)
      const other = yield* installButtons(filteredApp, ["ticket"])
      expect((yield* context.trigger(principal, filteredApp, meeting.id, `${other.id}:ticket`)).invocation_id).toMatch(UUID)
      expect(yield* pendingFor(filteredApp)).toEqual([])

      // Subscribed again: enqueued.
      yield* (yield* PartnerApps).update(filtered.app.id, UpdatePartnerApp.make({ webhook_events: ["action_button.triggered"] }))
      const subscribed = yield* appOf(filtered.app.id)
      yield* context.trigger(principal, subscribed, meeting.id, `${other.id}:ticket`)
      expect((yield* pendingFor(subscribed)).map((delivery) => delivery.event_type)).toEqual(["action_button.triggered"])
    }))

  test("404 for an unknown id, another app's button and another workspace's meeting; the scope meetings:write", () =>
    Effect.gen(function*() {
      const { app, meeting, principal, workspace } = yield* setup()
      const toolkit = yield* installButtons(app, ["crm"])
      const second = yield* appIn(workspace.id)
      const secondToolkit = yield* installButtons(second.app, ["ticket"])
      const context = yield* PartnerUserContext
      const refusal = (effect: Effect.Effect<unknown, unknown>) => Effect.map(Effect.flip(effect), (error) => (error as { _tag: string })._tag)
      expect(yield* refusal(context.trigger(principal, app, meeting.id, `${toolkit.id}:nope`))).toBe("NotFound")
      expect(yield* refusal(context.trigger(principal, app, meeting.id, "crm"))).toBe("NotFound")
      expect(yield* refusal(context.trigger(principal, app, meeting.id, `${secondToolkit.id}:ticket`))).toBe("NotFound")
      expect(yield* refusal(context.trigger(principal, second.app, meeting.id, `${toolkit.id}:crm`))).toBe("NotFound")
      const stranger = yield* principalFor({ kind: "personal_access_token" })
      expect(yield* refusal(context.trigger(stranger.principal, app, meeting.id, `${toolkit.id}:crm`))).toBe("NotFound")
      const readOnly = yield* principalFor({ workspaceId: workspace.id, scopes: ["meetings:read"], kind: "personal_access_token" })
      expect(yield* refusal(context.trigger(readOnly.principal, app, meeting.id, `${toolkit.id}:crm`))).toBe("InsufficientScope")
      expect(yield* pendingFor(app)).toEqual([])
      expect(yield* pendingFor(second.app)).toEqual([])
    }))
})
