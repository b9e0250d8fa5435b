/**
 * @convene/client against the real server on a real socket, over the global fetch, the way a program that
 * installed it from npm uses it (test/packaging runs the same against the packed tarballs).
 */
import { ConveneClient, makeClient, makeOperatorClient } from "../src/index.js"
import { CalendarEventId, CreateMeeting, CreateUser, CreateWorkspace, Email, IssueToken, MeetingId } from "@convene/core"
import { FetchHttpClient } from "@effect/platform"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Layer, Redacted } from "effect"
import { OPERATOR_TOKEN, type RunningServer, startServer } from "../../../test/support/server.js"

let server: RunningServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

/** A PRO workspace with an OWNER and a personal access token for them, through the operator client. */
const provision = Effect.gen(function*() {
  // A trailing slash on the base URL is dropped: the server matches paths exactly.
  const operator = makeOperatorClient({ baseUrl: `${server.url}/`, token: Redacted.make(OPERATOR_TOKEN) })
  const workspace = yield* operator.operator.createWorkspace({ payload: CreateWorkspace.make({ name: "Client", plan: "PRO" }) })
  const user = yield* operator.operator.createUser({
    path: { id: workspace.id },
    payload: CreateUser.make({ email: Email.make(`client-${crypto.randomUUID()}@example.com`), name: "Cli", role: "OWNER" })
  })
  const issued = yield* operator.operator.issueToken({
    path: { id: user.id },
    payload: IssueToken.make({ kind: "personal_access_token", scopes: ["meetings:read", "meetings:write", "calendar:read"], expiry_days: 30 })
  })
  return { user, token: issued.token }
})

describe("@convene/client", () => {
  it.effect("makeClient: creates and lists meetings with a bearer token, over fetch", () =>
    Effect.gen(function*() {
      const { token, user } = yield* provision
      const convene = makeClient({ baseUrl: server.url, token })
      const start = DateTime.unsafeMake("2030-05-01T09:00:00Z")
      const created = yield* convene.meetings.create({
        payload: CreateMeeting.make({ title: "From the client", start_time: start }),
        headers: { "idempotency-key": "client-test" }
      })
      expect(created.owner_user_id).toBe(user.id)
      const list = yield* convene.meetings.list({ urlParams: {} })
      expect(list.items.map((m) => m.title)).toEqual(["From the client"])
      // Failures decode into the core's domain errors.
      const missing = yield* Effect.flip(convene.meetings.get({ path: { id: MeetingId.make(crypto.randomUUID()) } }))
      expect(missing._tag).toBe("NotFound")
    }))

  it.effect("calendar: lists the events of a window and gets one, decoded into CalendarEvent", () =>
    Effect.gen(function*() {
      const { token } = yield* provision
      const convene = makeClient({ baseUrl: server.url, token })
      const start = DateTime.unsafeMake("2030-05-01T09:00:00Z")
      const created = yield* convene.meetings.create({ payload: CreateMeeting.make({ title: "On the calendar", start_time: start }), headers: {} })
      const window = { start_date: DateTime.unsafeMake("2030-05-01T00:00:00Z"), end_date: DateTime.unsafeMake("2030-05-02T00:00:00Z") }
      const page = yield* convene.calendar.listEvents({ urlParams: { ...window, direction: "desc" } })
      expect(page).toMatchObject({ total: 1, limit: 25, offset: 0 })
      const event = yield* convene.calendar.getEvent({ path: { id: CalendarEventId.make(created.id) } })
      expect(page.items).toEqual([event])
      expect(event).toMatchObject({ id: created.id, meeting_id: created.id, title: "On the calendar", status: "scheduled", end_time: null })
      expect(DateTime.toEpochMillis(event.start_time)).toBe(DateTime.toEpochMillis(start))
    }))

  it.effect("sends the token it was given: another token is 401, decoded as Unauthenticated", () =>
    Effect.gen(function*() {
      const convene = makeClient({ baseUrl: server.url, token: "svc_pat_not-a-real-token" })
      const failure = yield* Effect.flip(convene.meetings.list({ urlParams: {} }))
      expect(failure._tag).toBe("Unauthenticated")
    }))

  it.effect("uses the fetch it is given", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const convene = makeClient({
        baseUrl: server.url,
        token: "unused",
        fetch: (input, init) => {
          seen.push(String(input))
          return globalThis.fetch(input, init)
        }
      })
      const health = yield* convene.health.health()
      expect(health).toEqual({ status: "ok" })
      expect(seen).toEqual([`${server.url}/healthz`])
    }))

  it.effect("ConveneClient.layer: the client as a service over the HttpClient in context", () =>
    Effect.gen(function*() {
      const { token } = yield* provision
      const meetings = yield* Effect.gen(function*() {
        const convene = yield* ConveneClient
        yield* convene.meetings.create({ payload: CreateMeeting.make({ title: "Through a layer", is_instant: true }), headers: {} })
        return yield* convene.meetings.list({ urlParams: { status: "in_progress" } })
      }).pipe(
        Effect.provide(ConveneClient.layer({ baseUrl: server.url, token }).pipe(Layer.provide(FetchHttpClient.layer)))
      )
      expect(meetings.total).toBe(1)
    }))
})
