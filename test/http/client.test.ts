/**
 * The contract as a typed client sees it: HttpApiClient.make(Api) against the server in process
 * (NodeHttpServer.layerTest). Successes decode into the domain's records and failures into the domain's
 * errors, through the same wire schemas the server encodes with.
 */
import { CreateMeeting, CreateUser, CreateWorkspace, Email, IssueToken, MeetingId, WorkspaceId } from "@convene/core"
import { Api, CoreLive, defaultLimits, type HostConfig, ServeLive } from "@convene/http"
import { NodeCrypto } from "@convene/node"
import * as StoreMemory from "@convene/store-memory"
import { HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, layer } from "@effect/vitest"
import { DateTime, Effect, Layer, Option, Redacted } from "effect"

const config: HostConfig = {
  port: 0,
  host: "127.0.0.1",
  baseUrl: "http://127.0.0.1",
  operatorToken: Option.some(Redacted.make("client-test-operator-token-0123456789")),
  accessLog: false,
  tracing: false,
  limits: defaultLimits
}

const InProcess = ServeLive(config).pipe(
  Layer.provide(CoreLive(config)),
  Layer.provide(Layer.merge(StoreMemory.layer, NodeCrypto.layer)),
  Layer.provideMerge(NodeHttpServer.layerTest)
)

/** A typed client that sends `token` as the bearer. */
const clientWith = (token: string) =>
  HttpApiClient.make(Api, { transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(token)) })

describe("HttpApiClient against the contract", () => {
  // Real time: the server's own loops (the webhook worker, event stream pollers) sleep, and must wake.
  layer(InProcess, { excludeTestServices: true })((it) => {
    it.effect("provisions, creates and reads back typed records", () =>
      Effect.gen(function*() {
        const operator = yield* clientWith("client-test-operator-token-0123456789")
        const workspace = yield* operator.operator.createWorkspace({ payload: CreateWorkspace.make({ name: "Typed", plan: "PRO" }) })
        const user = yield* operator.operator.createUser({
          path: { id: workspace.id },
          payload: CreateUser.make({ email: Email.make(`typed-${crypto.randomUUID()}@example.com`), name: "Ty", role: "MEMBER" })
        })
        const issued = yield* operator.operator.issueToken({
          path: { id: user.id },
          payload: IssueToken.make({ kind: "short_lived", scopes: ["meetings:read", "meetings:write"], expiry_hours: 1 })
        })
        const api = yield* clientWith(issued.token)
        const start = DateTime.unsafeMake("2030-05-01T09:00:00Z")
        const created = yield* api.meetings.create({
          payload: CreateMeeting.make({ title: "Typed meeting", start_time: start }),
          headers: {}
        })
        expect(created.owner_user_id).toBe(user.id)
        const read = yield* api.meetings.get({ path: { id: created.id } })
        expect(read.title).toBe("Typed meeting")
        expect(DateTime.Equivalence(read.start_time!, start)).toBe(true)
        const list = yield* api.meetings.list({ urlParams: { limit: 5 } })
        expect(list).toMatchObject({ total: 1, limit: 5, offset: 0 })
      }))

    it.effect("decodes failures into the domain's errors", () =>
      Effect.gen(function*() {
        const anonymous = yield* clientWith("svc_pat_v1_" + "A".repeat(43))
        const unauthenticated = yield* Effect.flip(anonymous.meetings.list({ urlParams: {} }))
        expect(unauthenticated._tag).toBe("Unauthenticated")

        const operator = yield* clientWith("client-test-operator-token-0123456789")
        const missing = yield* Effect.flip(
          operator.operator.createUser({
            path: { id: WorkspaceId.make(crypto.randomUUID()) },
            payload: CreateUser.make({ email: Email.make("nobody@example.com"), name: "No", role: "MEMBER" })
          })
        )
        expect(missing._tag).toBe("NotFound")

        const free = yield* operator.operator.createWorkspace({ payload: CreateWorkspace.make({ name: "Free", plan: "FREE" }) })
        const user = yield* operator.operator.createUser({
          path: { id: free.id },
          payload: CreateUser.make({ email: Email.make(`free-${crypto.randomUUID()}@example.com`), name: "Fr", role: "MEMBER" })
        })
        const gate = yield* Effect.flip(
          operator.operator.issueToken({
            path: { id: user.id },
            payload: IssueToken.make({ kind: "personal_access_token", scopes: ["meetings:read"], expiry_days: 30 })
          })
        )
        expect(gate).toMatchObject({ _tag: "PlanRequired", current_plan: "FREE", required_plan: "PRO" })

        const issued = yield* operator.operator.issueToken({
          path: { id: user.id },
          payload: IssueToken.make({ kind: "short_lived", scopes: ["meetings:read"], expiry_hours: 1 })
        })
        const reader = yield* clientWith(issued.token)
        const forbidden = yield* Effect.flip(
          reader.meetings.create({ payload: CreateMeeting.make({ title: "nope" }), headers: {} })
        )
        expect(forbidden._tag).toBe("InsufficientScope")
        const notFound = yield* Effect.flip(reader.meetings.get({ path: { id: MeetingId.make(crypto.randomUUID()) } }))
        expect(notFound._tag).toBe("NotFound")
      }))
  })
})
