/**
 * GET /v1/user/events over a real socket: the frames decisions.md fixes, read raw and with the `eventsource`
 * client; resuming with Last-Event-ID; who sees which events; the per-credential cap; keep-alive comments; the
 * stream ending when the client goes away (its slot and the open-streams gauge given back) and when the server
 * shuts down.
 */
import { EventSource } from "eventsource"
import { type IncomingMessage, request as httpRequest } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, OPERATOR_TOKEN, provision, type RunningServer, startServer } from "../support/server.js"

let server: RunningServer

beforeAll(async () => {
  server = await startServer({ limits: { streamsPerCredential: 2, eventPollMs: 100, streamKeepAliveMs: 300 } })
}, 60_000)
afterAll(() => server?.close())

const meeting = (title: string) => ({ title, start_time: "2026-12-01T09:00:00Z" })

/** A raw stream: its response and everything read from it so far. */
const openRaw = async (url: string, token: string, headers: Record<string, string> = {}) => {
  const controller = new AbortController()
  const response = await fetch(`${url}/v1/user/events`, {
    headers: { authorization: `Bearer ${token}`, ...headers },
    signal: controller.signal
  })
  let text = ""
  let ended = false
  /** The body ended as a response ends (not cut off with its connection). */
  let endedCleanly = false
  const reading = (async () => {
    if (response.body === null) return
    const decoder = new TextDecoder()
    try {
      for await (const chunk of response.body) text += decoder.decode(chunk as Uint8Array, { stream: true })
      endedCleanly = true
    } catch {
      // aborted by the test, or the connection was cut
    }
    ended = true
  })()
  return {
    response,
    text: () => text,
    ended: () => ended,
    endedCleanly: () => endedCleanly,
    /** The event frames read so far, parsed. */
    frames: () =>
      text.split("\n\n").filter((block) => block.startsWith("id: ")).map((block) => {
        const lines = block.split("\n")
        return {
          lines,
          id: lines[0]!.slice(4),
          event: lines[1]!.slice(7),
          data: JSON.parse(lines[2]!.slice(6)) as Record<string, unknown>
        }
      }),
    close: async () => {
      controller.abort()
      await reading
    },
    reading
  }
}

const waitFor = async (condition: () => boolean | Promise<boolean>, what: string, ms = 10_000) => {
  const deadline = Date.now() + ms
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** An EventSource with the bearer token (the `eventsource` package takes headers through its fetch). */
const eventSource = (url: string, token: string, lastEventId?: string) =>
  new EventSource(`${url}/v1/user/events`, {
    fetch: (input, init) =>
      fetch(input, {
        ...init,
        headers: {
          ...init.headers,
          authorization: `Bearer ${token}`,
          ...(lastEventId === undefined ? {} : { "last-event-id": lastEventId })
        }
      })
  })

const collect = (source: EventSource, types: ReadonlyArray<string>) => {
  const received: Array<{ type: string; id: string; data: Record<string, unknown> }> = []
  for (const type of types) {
    source.addEventListener(type, (event) => {
      received.push({ type, id: event.lastEventId, data: JSON.parse(event.data) as Record<string, unknown> })
    })
  }
  return received
}

/** The open-streams gauge of this process (every test server in it counts), from /metrics. */
const openStreamsGauge = async (url: string) => {
  const text = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } }).then((r) => r.text())
  const line = text.split("\n").find((candidate) => /^convene_event_streams_open[{ ]/.test(candidate))
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1))
}

/** A stream opened with node:http, resolved once its head has arrived (nothing of its body read). */
const openHead = (url: string, token: string) =>
  new Promise<IncomingMessage>((resolve, reject) => {
    const request = httpRequest(`${url}/v1/user/events`, { headers: { authorization: `Bearer ${token}` } }, resolve)
    request.on("error", reject)
    request.end()
  })

describe("GET /v1/user/events", () => {
  it("streams each change as a frame id / event / data (the webhook envelope), after a keep-alive comment", async () => {
    const admin = await provision(server.url, { role: "ADMIN" })
    const stream = await openRaw(server.url, admin.token)
    try {
      expect(stream.response.status).toBe(200)
      expect(stream.response.headers.get("content-type")).toMatch(/^text\/event-stream/)
      expect(stream.response.headers.get("cache-control")).toBe("no-store")
      expect(stream.response.headers.get("x-accel-buffering")).toBe("no")
      // The head the stream writes itself carries what the rings around the API add to every answer.
      expect(stream.response.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
      await waitFor(() => stream.text().length > 0, "the first bytes")
      expect(stream.text().startsWith(": keep-alive\n\n")).toBe(true)

      const created = await admin.api.post("/v1/meetings", meeting("Streamed"))
      expect(created.status).toBe(201)
      await waitFor(() => stream.frames().length === 1, "the meeting.created frame")
      const [frame] = stream.frames()
      expect(frame!.lines).toHaveLength(3)
      expect(frame!.event).toBe("meeting.created")
      expect(frame!.data).toEqual({
        event_type: "meeting.created",
        event_id: frame!.id,
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
        workspace_id: admin.workspaceId,
        actor_user_id: admin.userId,
        data: expect.objectContaining({ id: created.body.id, title: "Streamed" })
      })
    } finally {
      await stream.close()
    }
  })

  it("sends `: keep-alive` comments at the configured interval while nothing happens", async () => {
    const admin = await provision(server.url, { role: "ADMIN" })
    const stream = await openRaw(server.url, admin.token)
    try {
      await waitFor(() => stream.text().split(": keep-alive\n\n").length - 1 >= 3, "three keep-alive comments", 5_000)
      expect(stream.text().replaceAll(": keep-alive\n\n", "")).toBe("")
    } finally {
      await stream.close()
    }
  })

  it("is read by the eventsource client, which resumes after the Last-Event-ID it sends, without loss or repeats", async () => {
    const admin = await provision(server.url, { role: "ADMIN" })
    const first = eventSource(server.url, admin.token)
    const seen = collect(first, ["meeting.created", "meeting.updated"])
    try {
      await waitFor(() => first.readyState === EventSource.OPEN, "the stream to open")
      const one = await admin.api.post("/v1/meetings", meeting("One"))
      await waitFor(() => seen.length === 1, "the first event")
      expect(seen[0]).toMatchObject({ type: "meeting.created", data: { data: { id: one.body.id } } })
    } finally {
      first.close()
    }
    // While no stream is open: three more changes.
    const two = await admin.api.post("/v1/meetings", meeting("Two"))
    await admin.api.patch(`/v1/meetings/${two.body.id}`, { title: "Two, renamed" })
    const three = await admin.api.post("/v1/meetings", meeting("Three"))

    const resumed = eventSource(server.url, admin.token, seen[0]!.id)
    const later = collect(resumed, ["meeting.created", "meeting.updated"])
    try {
      await waitFor(() => later.length === 3, "the three missed events")
      expect(later.map((event) => [event.type, (event.data.data as { id: string }).id])).toEqual([
        ["meeting.created", two.body.id],
        ["meeting.updated", two.body.id],
        ["meeting.created", three.body.id]
      ])
      // And then live, once.
      const four = await admin.api.post("/v1/meetings", meeting("Four"))
      await waitFor(() => later.length === 4, "the live event")
      expect((later[3]!.data.data as { id: string }).id).toBe(four.body.id)
      await new Promise((resolve) => setTimeout(resolve, 400))
      expect(later).toHaveLength(4)
      expect(new Set(later.map((event) => event.id)).size).toBe(4)
    } finally {
      resumed.close()
    }
  })

  it("starts at the newest event for a Last-Event-ID the log does not hold (unknown, malformed, another workspace's)", async () => {
    const admin = await provision(server.url, { role: "ADMIN" })
    const other = await provision(server.url, { role: "ADMIN" })
    await admin.api.post("/v1/meetings", meeting("Before"))
    const elsewhere = await openRaw(server.url, other.token)
    await other.api.post("/v1/meetings", meeting("Other workspace"))
    await waitFor(() => elsewhere.frames().length === 1, "the other workspace's event")
    await elsewhere.close()
    for (const id of [crypto.randomUUID(), "not-an-id", "x".repeat(2000), elsewhere.frames()[0]!.id]) {
      const stream = await openRaw(server.url, admin.token, { "last-event-id": id })
      try {
        expect(stream.response.status).toBe(200)
        const after = await admin.api.post("/v1/meetings", meeting("After"))
        await waitFor(() => stream.frames().length >= 1, "the new event")
        await new Promise((resolve) => setTimeout(resolve, 300))
        expect(stream.frames().map((frame) => (frame.data.data as { id: string }).id)).toEqual([after.body.id])
      } finally {
        await stream.close()
      }
    }
  })

  it("carries every actor's events with workspace:read; without it only system events and the caller's own", async () => {
    const admin = await provision(server.url, { role: "ADMIN" })
    const member = await provision(server.url, { workspaceId: admin.workspaceId, role: "MEMBER" })
    const key = await client(server.url, OPERATOR_TOKEN).post(`/operator/v1/workspaces/${admin.workspaceId}/api-keys`, { name: "sync" })
    const system = client(server.url, key.body.key)
    const adminStream = await openRaw(server.url, admin.token)
    const memberStream = await openRaw(server.url, member.token)
    try {
      const byAdmin = await admin.api.post("/v1/meetings", meeting("By the admin"))
      const byMember = await member.api.post("/v1/meetings", meeting("By the member"))
      const bySystem = await system.post("/v1/meetings", meeting("By an API key"))
      expect([byAdmin.status, byMember.status, bySystem.status]).toEqual([201, 201, 201])
      await waitFor(() => adminStream.frames().length === 3, "three events for the admin")
      await waitFor(() => memberStream.frames().length === 2, "two events for the member")
      await new Promise((resolve) => setTimeout(resolve, 300))
      const ids = (stream: typeof adminStream) => stream.frames().map((frame) => (frame.data.data as { id: string }).id)
      expect(ids(adminStream)).toEqual([byAdmin.body.id, byMember.body.id, bySystem.body.id])
      expect(ids(memberStream)).toEqual([byMember.body.id, bySystem.body.id])
      expect(memberStream.frames()[1]!.data.actor_user_id).toBe("")
    } finally {
      await adminStream.close()
      await memberStream.close()
    }
  })

  it("needs one of the four read scopes (403), and a valid token (401)", async () => {
    const writer = await provision(server.url, { role: "ADMIN", scopes: ["meetings:write", "workspace:write"] })
    const refused = await writer.api.get("/v1/user/events")
    expect(refused.status).toBe(403)
    expect(refused.body).toMatchObject({ code: "insufficient_scope" })
    expect(refused.body.error).toContain("meetings:read")
    for (const scope of ["meetings:read", "action-items:read", "calendar:read", "workspace:read"]) {
      const reader = await provision(server.url, { role: "ADMIN", scopes: [scope] })
      const stream = await openRaw(server.url, reader.token)
      expect(stream.response.status).toBe(200)
      await stream.close()
    }
    const anonymous = await client(server.url).get("/v1/user/events")
    expect(anonymous.status).toBe(401)
    expect(anonymous.body).toMatchObject({ code: "unauthorized" })
  })

  it("refuses one stream more than the per-credential cap with 429 too_many_requests, until one closes", async () => {
    const admin = await provision(server.url, { role: "ADMIN" })
    const other = await provision(server.url, { workspaceId: admin.workspaceId, role: "ADMIN" })
    const open = [await openRaw(server.url, admin.token), await openRaw(server.url, admin.token)]
    try {
      expect(open.map((stream) => stream.response.status)).toEqual([200, 200])
      const third = await admin.api.get("/v1/user/events")
      expect(third.status).toBe(429)
      expect(third.headers.get("retry-after")).toBe("5")
      expect(third.body).toMatchObject({ code: "too_many_requests", request_id: expect.any(String) })
      expect(third.body.error).toContain("2 open event streams")
      // Another credential is not held back.
      const theirs = await openRaw(server.url, other.token)
      expect(theirs.response.status).toBe(200)
      await theirs.close()
      // The client going away gives the slot back.
      await open.pop()!.close()
      await waitFor(async () => {
        const again = await openRaw(server.url, admin.token)
        if (again.response.status === 200) {
          open.push(again)
          return true
        }
        await again.close()
        return false
      }, "a freed slot")
    } finally {
      for (const stream of open) await stream.close()
    }
  })

  it("gives the slot back and lowers the open-streams gauge when the client goes away right after the head", async () => {
    const admin = await provision(server.url, { role: "ADMIN" })
    // Streams of earlier tests may still be closing: start from a steady gauge.
    let before = await openStreamsGauge(server.url)
    await waitFor(async () => {
      const now = await openStreamsGauge(server.url)
      const steady = now === before
      before = now
      return steady
    }, "a steady gauge")
    for (let round = 0; round < 3; round++) {
      const heads = [await openHead(server.url, admin.token), await openHead(server.url, admin.token)]
      expect(heads.map((head) => head.statusCode)).toEqual([200, 200])
      expect(heads[0]!.headers["content-type"]).toMatch(/^text\/event-stream/)
      await waitFor(async () => (await openStreamsGauge(server.url)) === before + 2, "the gauge to count both streams")
      const third = await admin.api.get("/v1/user/events")
      expect(third.status).toBe(429)
      // The client goes away without reading a byte of the body: the connection is cut.
      for (const head of heads) head.destroy()
      await waitFor(async () => (await openStreamsGauge(server.url)) === before, "the gauge to go back down")
    }
    // Both slots are free again.
    const again = [await openRaw(server.url, admin.token), await openRaw(server.url, admin.token)]
    try {
      expect(again.map((stream) => stream.response.status)).toEqual([200, 200])
    } finally {
      for (const stream of again) await stream.close()
    }
  })

  it("ends when the server shuts down, at once rather than after the drain time", async () => {
    // A drain time of 30 s: a stream that waited for it would end long after the 15 s allowed below.
    const own = await startServer({ limits: { eventPollMs: 100, shutdownTimeoutMs: 30_000 } })
    const admin = await provision(own.url, { role: "ADMIN" })
    const stream = await openRaw(own.url, admin.token)
    await waitFor(() => stream.text().length > 0, "the stream to open")
    const started = Date.now()
    await own.close()
    await waitFor(() => stream.ended(), "the stream to end", 15_000)
    expect(Date.now() - started).toBeLessThan(15_000)
    // Ended by the server as a response ends, not cut off when the connections were closed at the drain's end.
    expect(stream.endedCleanly()).toBe(true)
  })
})
