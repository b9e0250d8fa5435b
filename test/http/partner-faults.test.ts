/**
 * The two codes of the partner document that a well-behaved store never produces on its own (issue 12), reached
 * deterministically on a real socket with partner access tokens of the real OAuth flow:
 *
 * - 409 `idempotency_conflict`: a second request with the Idempotency-Key of one still in flight. The first request
 *   is held by the store: the idempotency store's `begin` claims its key and then waits on a gate the test opens,
 *   telling the test when it got there. The first request is then in flight (its key claimed, its answer not
 *   recorded), and the test sends the second without any race to win.
 *   It is held there, right after the claim and before its unit of work, rather than inside the handler's own
 *   writes: the in-memory store runs one transaction at a time under one lock (Memory.withTransaction) which every
 *   write outside a transaction also takes, the claim of the second request among them. Held inside its
 *   transaction, the first request would hold the second's claim back until it finished, and the second would be
 *   a replay, not a conflict.
 * - 500 `internal_server_error`: a store call that dies with a defect whose text names SQL, a file path and a class,
 *   on a user route (a read and a keyed write) and on an admin route; the answer is the partner envelope
 *   `{error, code, request_id}` with none of that text, and the server goes on serving (the failed keyed write
 *   released its key).
 *
 * The store is the in-memory one with the ports these tests steer wrapped (as test/http/defects.test.ts does for
 * the first-party envelope); unarmed, every call passes straight through. The server is built as
 * test/http/oauth/support.ts builds its own (its base URL is its real port, which the OAuth issuer must name), on
 * this store.
 */
import { HttpServer } from "@effect/platform"
import { IdempotencyStore, MeetingStore, PartnerStore, type StorePorts } from "@convene/core"
import { ConveneWith, defaultLimits, type HostConfig } from "@convene/http"
import * as StoreMemory from "@convene/store-memory"
import { Effect, Layer, Logger, ManagedRuntime, Option, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, type Client, OPERATOR_TOKEN } from "../support/server.js"
import { type App, partnerFlow } from "./oauth/partner-support.js"
import { freePort, newUser, type PasswordUser } from "./oauth/support.js"

const USER = "/v1/partner/user"
const ENVELOPE_KEYS = ["code", "error", "request_id"]

// ------------------------------------------------------------------------------------------------ the store

/** A promise with its resolver, so a store call can wait on the test and the test on a store call. */
const signal = () => {
  let resolve!: () => void
  const promise = new Promise<void>((done) => {
    resolve = done
  })
  return { promise, resolve }
}

/** The request held after claiming its key: `reached` when the claim is made, and held until `release`. */
interface Hold {
  readonly key: string
  readonly reached: ReturnType<typeof signal>
  readonly gate: ReturnType<typeof signal>
}

/** What the wrapped ports do now; everything unset passes through. */
const control: {
  hold: Hold | undefined
  /** The meeting whose reads die. */
  failingMeeting: string | undefined
  /** The partner app whose connected workspaces cannot be read. */
  failingApp: string | undefined
} = { hold: undefined, failingMeeting: undefined, failingApp: undefined }

/** The text of the defects: what a driver's error could carry, none of which may reach a client. */
const FAKE_SQL = "SELECT m.id, m.title FROM meetings m WHERE m.workspace_id = $1 AND m.id = $2"
const FAKE_PATH = "/srv/convene/packages/store-pg/src/x.ts:41:7"

class ConveneDriverMeltdown extends Error {
  constructor(query: string) {
    super(`relation "meetings" is corrupt while running ${query} (at ${FAKE_PATH})`)
    this.name = "ConveneDriverMeltdown"
  }
}

/** What the answer of a 500 must never show: the defect's text, its class, a stack line. */
const expectNoInternals = (text: string) => {
  for (const leak of [FAKE_SQL, "SELECT", "FROM meetings", "/srv/convene", "x.ts", "ConveneDriverMeltdown", "corrupt", "store-pg"]) {
    expect(text, `the answer shows ${leak}`).not.toContain(leak)
  }
  expect(text).not.toMatch(/\bat .+:\d+:\d+/)
  expect(text).not.toContain("stack")
  expect(text).not.toContain("partner-faults")
}

const defect = () => Effect.die(new ConveneDriverMeltdown(FAKE_SQL))

const controlledStore: Layer.Layer<StorePorts> = Layer.mergeAll(
  Layer.effect(
    IdempotencyStore,
    Effect.map(IdempotencyStore, (store) =>
      IdempotencyStore.of({
        ...store,
        begin: (pending, now) =>
          Effect.tap(store.begin(pending, now), (result) => {
            const hold = control.hold
            if (hold === undefined || result._tag !== "Started" || pending.key !== hold.key) return Effect.void
            // Once: the requests after this one find the claim and are not held.
            control.hold = undefined
            hold.reached.resolve()
            return Effect.promise(() => hold.gate.promise)
          })
      }))
  ),
  Layer.effect(
    MeetingStore,
    Effect.map(MeetingStore, (store) =>
      MeetingStore.of({
        ...store,
        get: (workspaceId, id) => (id === control.failingMeeting ? defect() : store.get(workspaceId, id))
      }))
  ),
  Layer.effect(
    PartnerStore,
    Effect.map(PartnerStore, (store) =>
      PartnerStore.of({
        ...store,
        listWorkspaces: (appId, page) => (appId === control.failingApp ? defect() : store.listWorkspaces(appId, page))
      }))
  )
).pipe(Layer.provideMerge(StoreMemory.layer))

// ----------------------------------------------------------------------------------------------- the server

let url = ""
let close: () => Promise<void> = async () => {}

const server = {
  get url() {
    return url
  }
}
const flow = partnerFlow(server)

let app: App
let user: PasswordUser
let partner: Client
/** The user's first-party client (meetings are made there: the partner user context makes none). */
let api: Client

beforeAll(async () => {
  const port = await freePort()
  url = `http://127.0.0.1:${port}`
  const config: HostConfig = {
    port,
    host: "127.0.0.1",
    baseUrl: url,
    operatorToken: Option.some(Redacted.make(OPERATOR_TOKEN)),
    accessLog: false,
    tracing: false,
    limits: defaultLimits,
    identity: { authUrl: url, browserSignIn: true, secretKey: Option.none() }
  }
  const runtime = ManagedRuntime.make(ConveneWith(config, controlledStore).pipe(Layer.provide(Logger.remove(Logger.defaultLogger))))
  close = () => runtime.dispose()
  const listening = await runtime.runPromise(HttpServer.HttpServer)
  if (listening.address._tag !== "TcpAddress" || listening.address.port !== port) throw new Error("the server did not bind the reserved port")

  app = await flow.createApp()
  user = await newUser(url, { role: "ADMIN", plan: "PRO" })
  const tokens = await flow.tokensFor(user, app)
  partner = client(url, tokens.access_token)
  const issued = await client(url, OPERATOR_TOKEN).post(`/operator/v1/users/${user.userId}/tokens`, {
    kind: "personal_access_token",
    scopes: ["meetings:read", "meetings:write"],
    expiry_days: 30
  })
  if (issued.status !== 201) throw new Error(`token issue failed: ${issued.status} ${issued.text}`)
  api = client(url, issued.body.token)
})

afterAll(async () => {
  // Nothing may stay held when the server closes.
  control.hold?.gate.resolve()
  control.hold = undefined
  control.failingMeeting = undefined
  control.failingApp = undefined
  await close()
})

type Answer = Awaited<ReturnType<Client["get"]>>

/** The partner envelope, exactly: the status and code, `{error, code, request_id}` and nothing else (no `message`). */
const expectPartnerError = (answer: Answer, status: number, code: string) => {
  expect({ status: answer.status, code: answer.body?.code }, answer.text).toEqual({ status, code })
  expect(answer.headers.get("content-type") ?? "").toContain("application/json")
  expect(Object.keys(answer.body).sort()).toEqual(ENVELOPE_KEYS)
  expect(answer.body).not.toHaveProperty("message")
  expect(typeof answer.body.error).toBe("string")
  expect(answer.body.error.length).toBeGreaterThan(0)
  const requestId = answer.headers.get("x-request-id")
  expect(requestId).toBeTruthy()
  expect(answer.body.request_id).toBe(requestId)
}

const createMeeting = async () => {
  const created = await api.post("/v1/meetings", { title: `Faults ${crypto.randomUUID().slice(0, 8)}` })
  if (created.status !== 201) throw new Error(`meeting creation failed: ${created.status} ${created.text}`)
  return created.body as { readonly id: string }
}

const backlogTitles = async () => {
  const listed = await partner.get(`${USER}/backlog-items?limit=100`)
  expect(listed.status, listed.text).toBe(200)
  return (listed.body.items as ReadonlyArray<{ readonly title: string }>).map((item) => item.title)
}

// ------------------------------------------------------------------------------------------------ the tests

describe("409 idempotency_conflict on the partner user context", () => {
  it("a repeat of a keyed POST while the first is in flight is 409 with Retry-After; the first then answers 201 and replays", async () => {
    const key = `in-flight-${crypto.randomUUID()}`
    const title = `Held ${crypto.randomUUID().slice(0, 8)}`
    const body = { title, description: "sent twice at once" }
    const headers = { "idempotency-key": key }
    const hold: Hold = { key, reached: signal(), gate: signal() }
    control.hold = hold

    const first = partner.post(`${USER}/backlog-items`, body, headers)
    try {
      // The first request has claimed the key and waits: it is in flight.
      await hold.reached.promise

      const second = await partner.post(`${USER}/backlog-items`, body, headers)
      expectPartnerError(second, 409, "idempotency_conflict")
      expect(second.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/)
      expect(second.headers.get("idempotent-replayed")).toBeNull()
      // The conflict did nothing: the first has not written yet, and the second made nothing of its own.
      expect(await backlogTitles()).not.toContain(title)
    } finally {
      hold.gate.resolve()
    }

    const created = await first
    expect(created.status, created.text).toBe(201)
    expect(created.body).toMatchObject({ title, description: "sent twice at once" })
    expect(created.headers.get("idempotent-replayed")).toBeNull()

    const third = await partner.post(`${USER}/backlog-items`, body, headers)
    expect(third.status, third.text).toBe(201)
    expect(third.headers.get("idempotent-replayed")).toBe("true")
    expect(third.text).toBe(created.text)
    // One item, whatever was sent three times.
    expect((await backlogTitles()).filter((listed) => listed === title)).toHaveLength(1)
  })
})

describe("500 internal_server_error in the partner envelope", () => {
  it("a defect on a user route (a read, and a keyed write) answers 500 without internals; the server goes on and the key is free", async () => {
    const meeting = await createMeeting()
    const key = `defect-${crypto.randomUUID()}`
    const item = { title: "After the fault" }
    control.failingMeeting = meeting.id
    try {
      const read = await partner.get(`${USER}/meetings/${meeting.id}/agenda-items`)
      expectPartnerError(read, 500, "internal_server_error")
      expectNoInternals(read.text)

      const write = await partner.post(`${USER}/meetings/${meeting.id}/agenda-items`, item, { "idempotency-key": key })
      expectPartnerError(write, 500, "internal_server_error")
      expectNoInternals(write.text)
      expect(write.headers.get("idempotent-replayed")).toBeNull()
      expect(write.body.request_id).not.toBe(read.body.request_id)
    } finally {
      control.failingMeeting = undefined
    }

    // The same requests now succeed: nothing was kept of the failed one, and its key was released (not replayed).
    const listed = await partner.get(`${USER}/meetings/${meeting.id}/agenda-items`)
    expect(listed.status, listed.text).toBe(200)
    expect(listed.body.total).toBe(0)
    const created = await partner.post(`${USER}/meetings/${meeting.id}/agenda-items`, item, { "idempotency-key": key })
    expect(created.status, created.text).toBe(201)
    expect(created.headers.get("idempotent-replayed")).toBeNull()
    expect(created.body).toMatchObject({ title: "After the fault", meeting_id: meeting.id })
  })

  it("a defect on an admin route (/v1/partner/admin/workspaces) answers 500 without internals; the server goes on", async () => {
    const headers = { "x-api-key": app.api_key, "x-client-id": app.client_id }
    control.failingApp = app.id
    try {
      const failed = await client(url).get("/v1/partner/admin/workspaces", headers)
      expectPartnerError(failed, 500, "internal_server_error")
      expectNoInternals(failed.text)
    } finally {
      control.failingApp = undefined
    }

    const listed = await client(url).get("/v1/partner/admin/workspaces", headers)
    expect(listed.status, listed.text).toBe(200)
    // The user's consent connected their workspace to the app.
    expect((listed.body.items as ReadonlyArray<{ readonly id: string }>).map((workspace) => workspace.id)).toContain(user.workspaceId)
  })
})
