/**
 * Partner webhooks and automations through the real services (ActionItems, Meetings, the event fan-out, PartnerApps,
 * Automations, DeliveryWorker) on the memory store, with the scripted Outbound of the webhook tests: which changes tell
 * a partner app what (a user's completion, a completion reconciled from a to-do provider, any other change), the body,
 * the headers and the signature by the app's own secret, each automation trigger, the retries with the attempt's
 * timestamp, the outbox written in the change's unit of work, suspension and secret rotation, and the automation
 * rules. The time rules run on the TestClock.
 */
import {
  ActionItems,
  type ActionItemId,
  Automations,
  Convene,
  CreateActionItem,
  CreateAutomation,
  CreateMeeting,
  CreatePartnerApp,
  CreateWebhook,
  DeliveryWorker,
  type DomainEvent,
  EventLog,
  Events,
  Meetings,
  PartnerApp,
  PartnerAppId,
  PartnerApps,
  PartnerStore,
  type Plan,
  Scopes,
  Transactor,
  trusted,
  UpdateActionItem,
  UpdateMeeting,
  UpdatePartnerApp,
  WebhookStore,
  Webhooks
} from "@convene/core"
import { addEqualityTesters, describe, expect, it } from "@effect/vitest"
import { verify } from "@octokit/webhooks-methods"
import { DateTime, type Duration, Effect, Layer, Option, Ref, TestClock } from "effect"
import { principalFor } from "./fixtures.js"
import {
  always,
  answerWith,
  echoing,
  freshUrl,
  hmac,
  ScriptedOutbound,
  takeRequests,
  WebhooksLive,
  type WebhooksServices
} from "./webhooks/fixtures.js"

/** The webhook services and the partner room on one fresh store. */
const PartnerEventsLive = Convene.partnerLayer.pipe(Layer.provideMerge(WebhooksLive))
type Services = Layer.Layer.Success<typeof PartnerEventsLive> | WebhooksServices

/** A test on a store of its own (the worker claims across the whole store). */
const test = <E>(name: string, body: () => Effect.Effect<void, E, Services>) =>
  it.effect(name, () => Effect.provide(body(), PartnerEventsLive))

addEqualityTesters()

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const owner = (plan: Plan = "PRO") => principalFor({ plan, role: "OWNER", scopes: Scopes, kind: "personal_access_token" })

const runOnce = Effect.flatMap(DeliveryWorker, (worker) => worker.runOnce({ limit: 1000 }))

/** A partner app with a webhook URL of its own, connected to the workspace. */
const connectedApp = (workspaceId: Effect.Effect.Success<ReturnType<typeof owner>>["workspace"]["id"], fields: Partial<CreatePartnerApp> = {}) =>
  Effect.gen(function*() {
    const apps = yield* PartnerApps
    const created = yield* apps.create(CreatePartnerApp.make({ name: "Acme Tasks", webhook_url: freshUrl(), ...fields }))
    yield* apps.connectWorkspace(created.id, workspaceId)
    return created
  })

interface Sent {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  // The parsed body, each test reading the fields it asserts.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly json: any
}

/** The requests made so far (to `url`, when given), parsed; they are forgotten. */
const sent = (url?: string) =>
  Effect.map(takeRequests(url), (requests): ReadonlyArray<Sent> =>
    requests.map((request) => ({ url: request.url, headers: request.headers, body: request.body, json: JSON.parse(request.body) })))

const byType = (requests: ReadonlyArray<Sent>) =>
  Object.fromEntries(requests.map((request) => [request.headers["X-Svc-Event-Type"], request]))

/** A meeting of the principal with one action item (accepted, so that it may be completed). */
const meetingWithItem = (principal: Effect.Effect.Success<ReturnType<typeof owner>>["principal"]) =>
  Effect.gen(function*() {
    const meeting = yield* (yield* Meetings).create(principal, CreateMeeting.make({ title: "Planning" }))
    const item = yield* (yield* ActionItems).create(
      principal,
      CreateActionItem.make({ meeting_id: meeting.id, title: "Send the notes", status: "accepted" })
    )
    return { meeting, item }
  })

const complete = (principal: Effect.Effect.Success<ReturnType<typeof owner>>["principal"], id: ActionItemId) =>
  Effect.flatMap(ActionItems, (items) => items.update(principal, id, UpdateActionItem.make({ status: "completed" })))

/** The body a partner app is sent for `event`, told as `type` with `data`. */
const envelopeOf = (event: DomainEvent, type: string, appId: PartnerAppId, data: Record<string, unknown>) => ({
  event_id: event.id,
  event_type: type,
  occurred_at: DateTime.formatIso(event.occurred_at),
  partner_app_id: appId,
  workspace_id: event.workspace_id,
  data
})

/** Checks what every partner delivery carries: the signature by `secret` (verified as a receiver does), the headers. */
const expectSigned = (request: Sent, secret: string, at: DateTime.Utc) =>
  Effect.promise(async () => {
    expect(request.headers["Content-Type"]).toBe("application/json")
    expect(request.headers["X-Svc-Signature"]).toBe(`sha256=${hmac(secret, request.body)}`)
    expect(await verify(secret, request.body, request.headers["X-Svc-Signature"]!)).toBe(true)
    expect(await verify(`${secret}x`, request.body, request.headers["X-Svc-Signature"]!)).toBe(false)
    expect(request.headers["X-Svc-Timestamp"]).toBe(String(Math.floor(DateTime.toEpochMillis(at) / 1000)))
    expect(request.headers["X-Svc-Event-ID"]).toBe(request.json.event_id)
    expect(request.headers["User-Agent"]).toBe("Svc-Webhook/1.0")
  })

describe("partner webhooks: action items", () => {
  test("a user's completion sends action_item.completed with completed_by_user_id and action_item.updated, signed by the app's secret", () =>
    Effect.gen(function*() {
      const { principal, user, workspace } = yield* owner()
      const app = yield* connectedApp(workspace.id)
      const { item } = yield* meetingWithItem(principal)
      yield* runOnce
      // action_item.created is no partner webhook.
      expect(yield* sent(app.webhook_url!)).toEqual([])

      yield* TestClock.adjust("10 minutes")
      const completed = yield* complete(principal, item.id)
      const [event] = (yield* (yield* EventLog).after(workspace.id, 0, 100)).filter((logged) => logged.event.type === "action_item.completed")
      yield* TestClock.adjust("3 seconds")
      yield* runOnce
      const requests = yield* sent()
      expect(requests.map((request) => request.url)).toEqual([app.webhook_url, app.webhook_url])
      const { "action_item.completed": done, "action_item.updated": updated } = byType(requests)
      expect(done!.json).toEqual(
        envelopeOf(event!.event, "action_item.completed", app.id, { ...event!.event.data, completed_by_user_id: user.id })
      )
      expect(done!.json.workspace_id).toBe(workspace.id)
      expect(Object.keys(done!.json)).toEqual(["event_id", "event_type", "occurred_at", "partner_app_id", "workspace_id", "data"])
      expect(done!.json.data).toMatchObject({ id: completed.id, status: "completed", is_completed: true })
      // The same change as a current-state notification: its own event id, the same for every app, no actor.
      expect(updated!.json).toEqual({ ...done!.json, event_id: updated!.json.event_id, event_type: "action_item.updated", data: event!.event.data })
      expect(updated!.json.event_id).toMatch(UUID)
      expect(updated!.json.event_id).not.toBe(event!.event.id)
      // X-Svc-Timestamp is the attempt's instant (3 seconds after the change), not the event's.
      const at = yield* DateTime.now
      for (const request of [done!, updated!]) yield* expectSigned(request, app.webhook_secret, at)
      expect(done!.headers["X-Svc-Event-Type"]).toBe("action_item.completed")
    }))

  test("every app connected to the workspace is told, each with its own secret; an unconnected, suspended or URL-less app is not", () =>
    Effect.gen(function*() {
      const { principal, workspace } = yield* owner()
      const other = yield* owner()
      const first = yield* connectedApp(workspace.id)
      const second = yield* connectedApp(workspace.id)
      const suspended = yield* connectedApp(workspace.id)
      yield* (yield* PartnerApps).update(suspended.id, UpdatePartnerApp.make({ status: "suspended" }))
      const urlless = yield* connectedApp(workspace.id, { webhook_url: null })
      expect(urlless.webhook_enabled).toBe(false)
      // Connected to another workspace only.
      yield* connectedApp(other.workspace.id)
      const { item } = yield* meetingWithItem(principal)
      yield* (yield* ActionItems).update(principal, item.id, UpdateActionItem.make({ title: "Send the minutes" }))
      yield* runOnce
      const requests = yield* sent()
      expect(requests.map((request) => request.url).sort()).toEqual([first.webhook_url, second.webhook_url].sort())
      const [toFirst] = requests.filter((request) => request.url === first.webhook_url)
      const [toSecond] = requests.filter((request) => request.url === second.webhook_url)
      // One event, the same id for both apps, each signed with its own secret.
      expect(toFirst!.json.event_id).toBe(toSecond!.json.event_id)
      expect(toFirst!.json.partner_app_id).toBe(first.id)
      expect(toSecond!.json.partner_app_id).toBe(second.id)
      const at = yield* DateTime.now
      yield* expectSigned(toFirst!, first.webhook_secret, at)
      yield* expectSigned(toSecond!, second.webhook_secret, at)
      expect(toFirst!.json).toMatchObject({ event_type: "action_item.updated", data: { id: item.id, title: "Send the minutes" } })
      expect(toFirst!.json.data).not.toHaveProperty("completed_by_user_id")
    }))

  test("a completion reconciled from a to-do provider sends only action_item.updated, marked with the provider; the workspace's own webhook sees a completion by nobody", () =>
    Effect.gen(function*() {
      const { principal, workspace } = yield* owner()
      const app = yield* connectedApp(workspace.id)
      const endpointUrl = freshUrl()
      yield* (yield* Webhooks).create(
        principal,
        CreateWebhook.make({ url: endpointUrl, subscribed_events: ["action_item.completed"] })
      )
      yield* answerWith(echoing())
      yield* (yield* DeliveryWorker).runChallenges({ limit: 100 })
      yield* answerWith(always(200))
      const { item } = yield* meetingWithItem(principal)
      yield* runOnce
      yield* sent()

      const items = yield* ActionItems
      const reconciled = yield* items.reconcileCompletion(workspace.id, item.id, "Todoist")
      expect(reconciled).toMatchObject({ status: "completed", is_completed: true })
      expect(Option.isSome(Option.fromNullable(reconciled.completed_at))).toBe(true)
      yield* runOnce
      const [toApp, ...more] = yield* sent(app.webhook_url!)
      expect(more).toEqual([])
      const [event] = (yield* (yield* EventLog).after(workspace.id, 0, 100)).filter((logged) => logged.event.type === "action_item.completed")
      expect(event!.event.actor_user_id).toBe(null)
      expect(toApp!.json).toEqual(
        envelopeOf(event!.event, "action_item.updated", app.id, { ...event!.event.data, reconciled_from: "Todoist" })
      )
      yield* expectSigned(toApp!, app.webhook_secret, yield* DateTime.now)
      const [toEndpoint] = yield* sent(endpointUrl)
      expect(toEndpoint!.json).toMatchObject({ event_type: "action_item.completed", actor_user_id: "", data: { id: item.id } })

      // Reported again: nothing changes and nobody is told twice.
      expect(yield* items.reconcileCompletion(workspace.id, item.id, "Todoist")).toEqual(reconciled)
      yield* runOnce
      expect(yield* sent()).toEqual([])
    }))

  test("reconcileCompletion follows the status machine and finds only the workspace's items", () =>
    Effect.gen(function*() {
      const { principal, workspace } = yield* owner()
      const other = yield* owner()
      const items = yield* ActionItems
      const meeting = yield* (yield* Meetings).create(principal, CreateMeeting.make({ title: "Review" }))
      const fresh = yield* items.create(principal, CreateActionItem.make({ meeting_id: meeting.id, title: "Needs review" }))
      expect((yield* Effect.flip(items.reconcileCompletion(workspace.id, fresh.id, "Todoist")))._tag).toBe("Conflict")
      expect((yield* Effect.flip(items.reconcileCompletion(other.workspace.id, fresh.id, "Todoist")))._tag).toBe("NotFound")
      const invalid = yield* Effect.flip(items.reconcileCompletion(workspace.id, fresh.id, "  "))
      expect(invalid).toMatchObject({ _tag: "ValidationError", field: "provider" })
      expect((yield* items.get(principal, fresh.id)).status).toBe("needs_review")
    }))

  test("the deliveries are written in the change's unit of work: a change that rolls back tells nobody", () =>
    Effect.gen(function*() {
      const { principal, workspace } = yield* owner()
      const app = yield* connectedApp(workspace.id)
      const { item } = yield* meetingWithItem(principal)
      const events = yield* Events
      const transactor = yield* Transactor
      const failed = yield* Effect.flip(transactor.withTransaction(
        Effect.zipRight(events.record(principal, "action_item.completed", { id: item.id }), Effect.fail("rolled back"))
      ))
      expect(failed).toBe("rolled back")
      const outbox = yield* WebhookStore
      expect((yield* outbox.listDeliveries({ kind: "partner_app", id: app.id }, { limit: 100, offset: 0 })).total).toBe(0)
      yield* events.record(principal, "action_item.completed", { id: item.id })
      expect((yield* outbox.listDeliveries({ kind: "partner_app", id: app.id }, { limit: 100, offset: 0 })).total).toBe(2)
    }))
})

describe("partner webhooks: delivery", () => {
  test("a failing receiver gets 3 attempts, 1 and 4 minutes apart, each with the same body and the attempt's timestamp; then it is failed", () =>
    Effect.gen(function*() {
      const { principal, workspace } = yield* owner()
      const app = yield* connectedApp(workspace.id)
      const { item } = yield* meetingWithItem(principal)
      yield* answerWith(always(503))
      yield* complete(principal, item.id)
      /** The completions the worker sends once the clock moved by `by`. */
      const sentAfter = (by: Duration.DurationInput) =>
        Effect.gen(function*() {
          yield* TestClock.adjust(by)
          yield* runOnce
          return (yield* sent()).filter((request) => request.json.event_type === "action_item.completed")
        })
      const attempts: Array<Sent> = [...(yield* sentAfter(0))]
      // Each retry comes exactly when due: not a second before.
      expect(yield* sentAfter("59 seconds")).toEqual([])
      attempts.push(...(yield* sentAfter("1 second")))
      expect(yield* sentAfter("3 minutes")).toEqual([])
      attempts.push(...(yield* sentAfter("1 minute")))
      expect(yield* sentAfter("1 hour")).toEqual([])

      expect(attempts).toHaveLength(3)
      expect(new Set(attempts.map((attempt) => attempt.body)).size).toBe(1)
      expect(attempts.map((attempt) => Number(attempt.headers["X-Svc-Timestamp"]))).toEqual([0, 60, 300])
      for (const attempt of attempts) expect(attempt.headers["X-Svc-Signature"]).toBe(`sha256=${hmac(app.webhook_secret, attempt.body)}`)
      const log = yield* (yield* WebhookStore).listDeliveries({ kind: "partner_app", id: app.id }, { limit: 10, offset: 0 })
      expect(log.items.map((record) => [record.delivery.event_type, record.delivery.state, record.attempts.map((a) => a.status_code)]).sort())
        .toEqual([["action_item.completed", "failed", [503, 503, 503]], ["action_item.updated", "failed", [503, 503, 503]]])
      // Failures change nothing of the app.
      expect((yield* (yield* PartnerApps).get(app.id)).status).toBe("active")
    }))

  test("a delivery whose app was suspended, or lost its URL, meanwhile is not sent; a new secret signs what is sent after, retries included", () =>
    Effect.gen(function*() {
      const { principal, workspace } = yield* owner()
      const apps = yield* PartnerApps
      const suspended = yield* connectedApp(workspace.id)
      const cleared = yield* connectedApp(workspace.id)
      const rotated = yield* connectedApp(workspace.id)
      const { item } = yield* meetingWithItem(principal)
      yield* answerWith(always(500))
      yield* (yield* ActionItems).update(principal, item.id, UpdateActionItem.make({ title: "Changed" }))
      yield* runOnce
      const first = yield* sent(rotated.webhook_url!)
      expect(first).toHaveLength(1)
      yield* sent()

      yield* apps.update(suspended.id, UpdatePartnerApp.make({ status: "suspended" }))
      yield* apps.update(cleared.id, UpdatePartnerApp.make({ webhook_url: null }))
      const renewed = yield* apps.rotateWebhookSecret(rotated.id)
      expect(renewed.webhook_secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)
      expect(renewed.webhook_secret).not.toBe(rotated.webhook_secret)
      expect(renewed).toMatchObject({ id: rotated.id, webhook_enabled: true })
      yield* answerWith(always(200))
      yield* TestClock.adjust("1 minute")
      yield* runOnce
      const [retry, ...others] = yield* sent()
      expect(others).toEqual([])
      expect(retry!.url).toBe(rotated.webhook_url)
      expect(retry!.body).toBe(first[0]!.body)
      yield* expectSigned(retry!, renewed.webhook_secret, yield* DateTime.now)
      const outbox = yield* WebhookStore
      for (const [app, why] of [[suspended, "not sent: the partner app is suspended"], [cleared, "not sent: the partner app has no webhook URL"]] as const) {
        const [record] = (yield* outbox.listDeliveries({ kind: "partner_app", id: app.id }, { limit: 10, offset: 0 })).items
        expect(record!.delivery.state).toBe("failed")
        expect(record!.attempts.map((attempt) => [attempt.status_code, attempt.error])).toEqual([[500, null], [null, why]])
      }
    }))

  test("an app made before webhook secrets existed is told nothing and shows webhooks off, until the operator makes its secret", () =>
    Effect.gen(function*() {
      const { principal, workspace } = yield* owner()
      const apps = yield* PartnerApps
      const store = yield* PartnerStore
      const template = yield* connectedApp(workspace.id)
      const stored = Option.getOrThrow(yield* store.get(template.id))
      const old = new PartnerApp({
        ...stored,
        id: PartnerAppId.make(crypto.randomUUID()),
        slug: `old-${crypto.randomUUID().slice(0, 8)}`,
        client_id: `cvp_${crypto.randomUUID()}`,
        webhook_url: freshUrl(),
        sealed_webhook_secret: null
      }, trusted)
      yield* store.insert(old)
      yield* apps.connectWorkspace(old.id, workspace.id)
      expect(yield* apps.get(old.id)).toMatchObject({ webhook_enabled: false, webhook_url: old.webhook_url })
      const { item } = yield* meetingWithItem(principal)
      yield* (yield* ActionItems).update(principal, item.id, UpdateActionItem.make({ title: "Before" }))
      yield* runOnce
      expect(yield* sent(old.webhook_url!)).toEqual([])

      const made = yield* apps.rotateWebhookSecret(old.id)
      expect(made.webhook_enabled).toBe(true)
      yield* (yield* ActionItems).update(principal, item.id, UpdateActionItem.make({ title: "After" }))
      yield* runOnce
      const [told] = yield* sent(old.webhook_url!)
      expect(told!.json.data.title).toBe("After")
      yield* expectSigned(told!, made.webhook_secret, yield* DateTime.now)
      expect((yield* Effect.flip(apps.rotateWebhookSecret(PartnerAppId.make(crypto.randomUUID()))))._tag).toBe("NotFound")
    }))
})

describe("partner automations", () => {
  const automate = (
    app: { readonly id: PartnerAppId },
    trigger: CreateAutomation["trigger_type"],
    fields: Partial<CreateAutomation> = {}
  ) =>
    Effect.gen(function*() {
      const stored = Option.getOrThrow(yield* (yield* PartnerStore).get(app.id))
      const urls = [freshUrl(), freshUrl()]
      const automation = yield* (yield* Automations).create(
        stored,
        CreateAutomation.make({
          name: `On ${trigger}`,
          trigger_type: trigger,
          actions: urls.map((webhook_url) => ({ type: "webhook" as const, webhook_url })),
          ...fields
        })
      )
      return { automation, urls }
    })

  test("each trigger calls every action of the app's enabled automations with it, signed by the app's secret", () =>
    Effect.gen(function*() {
      const { principal, user, workspace } = yield* owner()
      const app = yield* connectedApp(workspace.id, { webhook_url: null })
      const created = yield* automate(app, "action_item_created")
      const completed = yield* automate(app, "action_item_completed")
      const ended = yield* automate(app, "meeting_ended")
      // Disabled: never called (the calls below are exactly the enabled automations').
      yield* automate(app, "action_item_created", { enabled: false })
      const log = yield* EventLog
      const eventOf = (type: string) =>
        Effect.map(log.after(workspace.id, 0, 100), (events) => events.filter((logged) => logged.event.type === type).at(-1)!.event)

      const { item, meeting } = yield* meetingWithItem(principal)
      yield* runOnce
      const onCreate = yield* sent()
      expect(onCreate.map((request) => request.url).sort()).toEqual([...created.urls].sort())
      const createdEvent = yield* eventOf("action_item.created")
      for (const request of onCreate) {
        expect(request.json).toEqual({
          automation_id: created.automation.id,
          trigger_type: "action_item_created",
          event_id: createdEvent.id,
          occurred_at: DateTime.formatIso(createdEvent.occurred_at),
          workspace_id: workspace.id,
          data: createdEvent.data
        })
        expect(Object.keys(request.json)).toEqual(["automation_id", "trigger_type", "event_id", "occurred_at", "workspace_id", "data"])
        expect(request.headers["X-Svc-Event-Type"]).toBe("action_item_created")
        yield* expectSigned(request, app.webhook_secret, yield* DateTime.now)
      }

      yield* complete(principal, item.id)
      yield* runOnce
      const onComplete = yield* sent()
      expect(onComplete.map((request) => request.url).sort()).toEqual([...completed.urls].sort())
      expect(onComplete[0]!.json).toMatchObject({
        automation_id: completed.automation.id,
        trigger_type: "action_item_completed",
        data: { id: item.id, status: "completed", completed_by_user_id: user.id }
      })

      // A completion reconciled from a provider fires no automation.
      const second = yield* (yield* ActionItems).create(principal, CreateActionItem.make({ meeting_id: meeting.id, title: "Two", status: "in_progress" }))
      yield* runOnce
      yield* sent()
      yield* (yield* ActionItems).reconcileCompletion(workspace.id, second.id, "Things")
      yield* runOnce
      expect(yield* sent()).toEqual([])

      yield* (yield* Meetings).update(principal, meeting.id, UpdateMeeting.make({ status: "ended" }))
      yield* runOnce
      const onEnd = yield* sent()
      expect(onEnd.map((request) => request.url).sort()).toEqual([...ended.urls].sort())
      const endedEvent = yield* eventOf("meeting.ended")
      expect(onEnd[0]!.json).toMatchObject({ trigger_type: "meeting_ended", event_id: endedEvent.id, data: { id: meeting.id, status: "ended" } })
    }))

  test("automations fire only in workspaces connected to their app, and not for a suspended app", () =>
    Effect.gen(function*() {
      const mine = yield* owner()
      const other = yield* owner()
      const app = yield* connectedApp(mine.workspace.id)
      const { urls } = yield* automate(app, "action_item_created")
      yield* meetingWithItem(other.principal)
      yield* runOnce
      expect(yield* sent()).toEqual([])
      yield* (yield* PartnerApps).update(app.id, UpdatePartnerApp.make({ status: "suspended" }))
      yield* meetingWithItem(mine.principal)
      yield* runOnce
      expect(yield* sent()).toEqual([])
      yield* (yield* PartnerApps).update(app.id, UpdatePartnerApp.make({ status: "active" }))
      yield* meetingWithItem(mine.principal)
      yield* runOnce
      expect((yield* sent()).map((request) => request.url).sort()).toEqual([...urls].sort())
    }))

  test("create checks each action URL with the outbound rules, naming it; list is the app's own, newest first", () =>
    Effect.gen(function*() {
      const { workspace } = yield* owner()
      const app = yield* connectedApp(workspace.id)
      const other = yield* connectedApp(workspace.id)
      const automations = yield* Automations
      const stored = Option.getOrThrow(yield* (yield* PartnerStore).get(app.id))
      yield* Ref.set((yield* ScriptedOutbound).refused, new Set(["internal.example"]))
      const bad = (webhook_url: string) =>
        automations.create(
          stored,
          CreateAutomation.make({
            name: "Bad",
            trigger_type: "meeting_ended",
            actions: [{ type: "webhook", webhook_url: freshUrl() }, { type: "webhook", webhook_url }]
          })
        )
      expect(yield* Effect.flip(bad("http://hooks.example.com/x"))).toMatchObject({
        _tag: "ValidationError",
        field: "actions[1].webhook_url"
      })
      expect(yield* Effect.flip(bad("https://user:pw@hooks.example.com/x"))).toMatchObject({ field: "actions[1].webhook_url" })
      const inward = yield* Effect.flip(bad("https://internal.example/x"))
      expect(inward).toMatchObject({ field: "actions[1].webhook_url" })
      expect(inward.message).toContain("internal.example")
      expect((yield* automations.list(stored, {})).total).toBe(0)

      const first = yield* automate(app, "meeting_ended", { description: "Tell the CRM" })
      yield* TestClock.adjust("1 second")
      const second = yield* automate(app, "action_item_created")
      yield* automate(other, "action_item_created")
      const listed = yield* automations.list(stored, { limit: 10 })
      expect(listed).toMatchObject({ total: 2, limit: 10, offset: 0 })
      expect(listed.items.map((automation) => automation.id)).toEqual([second.automation.id, first.automation.id])
      expect(listed.items[1]).toEqual(first.automation)
      expect(first.automation).toMatchObject({
        name: "On meeting_ended",
        description: "Tell the CRM",
        trigger_type: "meeting_ended",
        enabled: true,
        actions: first.urls.map((webhook_url) => ({ type: "webhook", webhook_url }))
      })
      expect(Object.keys(first.automation.actions[0]!)).toEqual(["type", "webhook_url"])
    }))
})
