/**
 * The data the fuzzer aims at: a provisioned workspace with known resources (meetings, participants, agenda
 * and action items, tokens), the credentials that reach it (or must not), the pools of ids a generator draws
 * path parameters and body references from, and a snapshot of everything readable through the API.
 */
import { client, type Client, OPERATOR_TOKEN } from "../../support/server.js"
import { createActionItem, createAgendaItem, createMeeting, workspace } from "../fixtures.js"

export type CredentialName =
  /** The workspace's OWNER, a personal access token with every scope. */
  | "owner"
  /** A workspace API key of the same workspace. */
  | "apiKey"
  /** A MEMBER whose token only reads (meetings:read, action-items:read). */
  | "reader"
  /** The OWNER of another workspace (every id of this one must be invisible to it). */
  | "stranger"
  | "operator"
  /** The API key of a partner app the workspace is connected to (sent as X-API-Key, with `partnerClientId`). */
  | "partner"

export interface World {
  readonly url: string
  readonly workspaceId: string
  readonly credentials: Readonly<Record<CredentialName, string>>
  /** A token of the owner that was revoked. */
  readonly revoked: string
  /** The X-Client-ID of the partner app whose key is `credentials.partner`. */
  readonly partnerClientId: string
  /** Pools of existing ids by kind. */
  readonly ids: {
    readonly meetings: ReadonlyArray<string>
    readonly agendaItems: ReadonlyArray<string>
    readonly actionItems: ReadonlyArray<string>
    /** Open backlog items of the workspace (one more was assigned and one deleted: they are in the history only). */
    readonly backlogItems: ReadonlyArray<string>
    /** Attachments by meeting (`{attachment_id}` values follow their meeting's `{id}`). */
    readonly attachments: Readonly<Record<string, ReadonlyArray<string>>>
    /** Context items by meeting (a document, notes, and a WebVTT transcript). */
    readonly contextItems: Readonly<Record<string, ReadonlyArray<string>>>
    /** Events of the owner's calendar (an event's id is its meeting's: the owner takes part in every meeting above). */
    readonly calendarEvents: ReadonlyArray<string>
    /** Users of the workspace. */
    readonly users: ReadonlyArray<string>
    /** `{userId}` path values of a meeting's participants (user ids and guest participant ids), by meeting. */
    readonly participants: Readonly<Record<string, ReadonlyArray<string>>>
    readonly tokens: ReadonlyArray<string>
    readonly workspaces: ReadonlyArray<string>
    readonly templates: ReadonlyArray<string>
    /** A workspace API key of the workspace that no request authenticates with (what its DELETE aims at). */
    readonly apiKeys: ReadonlyArray<string>
    /** The partner app the workspace is connected to. */
    readonly partnerApps: ReadonlyArray<string>
    /** The workspace's webhook endpoint (to a public address this machine cannot reach: it stays verifying). */
    readonly webhooks: ReadonlyArray<string>
    /**
     * What the operator's DELETEs aim at: a workspace of their own with a user, a token and an API key, so that
     * deleting or revoking them leaves the world above intact for the requests after.
     */
    readonly disposable: {
      readonly workspaces: ReadonlyArray<string>
      readonly users: ReadonlyArray<string>
      readonly tokens: ReadonlyArray<string>
    }
  }
}

const expectStatus = async (response: Promise<Awaited<ReturnType<Client["get"]>>>, status: number, what: string) => {
  const answer = await response
  if (answer.status !== status) throw new Error(`${what}: expected ${status}, got ${answer.status} ${answer.text}`)
  return answer.body
}

/**
 * A PRO workspace with an owner, a reader, an API key and a spare one; three meetings (scheduled with times, instant,
 * cancelled), participants (a workspace user and a guest), agenda items with talking points and presenters,
 * action items (one tied to an agenda item, one completed), backlog items (two open, one assigned, one deleted),
 * attachments and context items on every meeting (a WebVTT transcript among them) and a second token of the owner. And the owner of
 * another workspace with a meeting of their own.
 */
export const provisionWorld = async (url: string, label: string): Promise<World> => {
  const ws = await workspace(url, "PRO")
  const owner = await ws.addUser({ role: "OWNER", name: `${label} Owner` })
  const reader = await ws.addUser({ role: "MEMBER", name: `${label} Reader`, scopes: ["meetings:read", "action-items:read"] })
  const editor = await ws.addUser({ role: "MEMBER", name: `${label} Editor` })
  const apiKey = await ws.addApiKey()
  const spareKey = await ws.addApiKey()
  const api = owner.api

  const scheduled = await createMeeting(api, {
    title: `${label} planning`,
    start_time: "2031-03-04T09:00:00Z",
    end_time: "2031-03-04T10:00:00Z",
    detail_level: "detailed"
  })
  const instant = await createMeeting(api, { title: `${label} stand-up`, is_instant: true })
  const cancelled = await createMeeting(api, { title: `${label} retro`, start_time: "2031-05-01T15:00:00Z" })
  await expectStatus(api.patch(`/v1/meetings/${cancelled.id}`, { status: "cancelled" }), 200, "cancel a meeting")
  const added = await expectStatus(
    api.post(`/v1/meetings/${scheduled.id}/participants`, {
      participants: [
        { user_id: reader.userId, role: "VIEWER" },
        { user_id: editor.userId, role: "EDITOR" },
        { guest_email: `guest-${label.toLowerCase()}@example.com`, role: "VIEWER" }
      ]
    }),
    201,
    "add participants"
  )
  const guest = (added.participants as ReadonlyArray<{ id: string; user_id: string | null }>).find((p) => p.user_id === null)
  const topic = await createAgendaItem(api, scheduled.id, {
    title: "Budget",
    description: "Numbers for Q3",
    item_type: "DISCUSSION",
    talking_points: ["one", "two"],
    presenters: [owner.userId, editor.userId]
  })
  const question = await createAgendaItem(api, scheduled.id, { title: "Open questions", item_type: "QUESTIONS_TO_ANSWER", sequence: "7.5" })
  const standupTopic = await createAgendaItem(api, instant.id, { title: "Blockers" })
  const followUp = await createActionItem(api, scheduled.id, {
    title: "Send the numbers",
    description: "to finance",
    due_date: "2031-03-10",
    assigned_to_user_id: editor.userId,
    agenda_item_id: topic.id
  })
  const done = await createActionItem(api, instant.id, { title: "Book a room", status: "completed" })
  const review = await createActionItem(api, scheduled.id, { title: "Review the draft" })
  const pricing = await expectStatus(
    api.post("/v1/backlog-items", {
      title: "Pricing",
      description: "What we charge",
      talking_points: ["cheaper"],
      presenters: [owner.userId, editor.userId]
    }),
    201,
    "create a backlog item"
  )
  const hiring = await expectStatus(api.post("/v1/backlog-items", { title: "Hiring" }), 201, "create a backlog item")
  const moved = await expectStatus(api.post("/v1/backlog-items", { title: "Moved" }), 201, "create a backlog item")
  await expectStatus(
    api.post(`/v1/backlog-items/${moved.id}/assign`, { destination_meeting_id: scheduled.id }),
    200,
    "assign a backlog item"
  )
  const dropped = await expectStatus(api.post("/v1/backlog-items", { title: "Dropped" }), 201, "create a backlog item")
  await expectStatus(api.delete(`/v1/backlog-items/${dropped.id}`), 204, "delete a backlog item")
  // Uploads: multipart/form-data with the file in `file` (and the context's `kind`).
  const upload = async (path: string, file: { readonly name: string; readonly type: string; readonly text: string }, kind?: string) => {
    const form = new FormData()
    if (kind !== undefined) form.append("kind", kind)
    form.append("file", new Blob([file.text], { type: file.type }), file.name)
    const response = await fetch(`${url}${path}`, { method: "POST", headers: { authorization: `Bearer ${owner.token}` }, body: form })
    const text = await response.text()
    if (response.status !== 201) throw new Error(`upload to ${path}: expected 201, got ${response.status} ${text}`)
    return (JSON.parse(text) as { id: string }).id
  }
  const attachments = {
    [scheduled.id]: [
      await upload(`/v1/meetings/${scheduled.id}/attachments`, { name: "budget.csv", type: "text/csv", text: "q,amount\nQ3,42\n" }),
      await upload(`/v1/meetings/${scheduled.id}/attachments`, { name: "slides.bin", type: "application/octet-stream", text: "\u0000\u0001binary" })
    ],
    [instant.id]: [await upload(`/v1/meetings/${instant.id}/attachments`, { name: "photo.png", type: "image/png", text: "\u0089PNG" })],
    [cancelled.id]: [await upload(`/v1/meetings/${cancelled.id}/attachments`, { name: "minutes.txt", type: "text/plain", text: "Cancelled" })]
  }
  const contextItems = {
    [scheduled.id]: [
      await upload(`/v1/meetings/${scheduled.id}/context`, { name: "brief.md", type: "text/markdown", text: "# Brief\nCall ann@example.com\n" }),
      await upload(`/v1/meetings/${scheduled.id}/context`, { name: "notes.txt", type: "text/plain", text: "Notes from Monday" }, "notes"),
      await upload(
        `/v1/meetings/${scheduled.id}/context`,
        { name: "call.vtt", type: "text/vtt", text: "WEBVTT\n\n00:00:01.000 --> 00:00:03.000\n<v Ann>Hello all\n" },
        "transcript"
      )
    ],
    [instant.id]: [await upload(`/v1/meetings/${instant.id}/context`, { name: "agenda.txt", type: "text/plain", text: "Blockers first" })],
    [cancelled.id]: [await upload(`/v1/meetings/${cancelled.id}/context`, { name: "why.txt", type: "text/plain", text: "Nobody came" })]
  }
  const cli = await expectStatus(api.post("/v1/user/tokens", { name: "cli", scopes: ["meetings:read"], expiry_days: 30 }), 201, "issue a token")
  const revoked = await expectStatus(api.post("/v1/user/tokens", { name: "old", scopes: ["meetings:read"], expiry_days: 30 }), 201, "issue a token")
  await expectStatus(api.delete(`/v1/user/tokens/${revoked.id}`), 204, "revoke a token")

  const other = await workspace(url, "PRO")
  const stranger = await other.addUser({ role: "OWNER", name: `${label} Stranger` })
  await createMeeting(stranger.api, { title: `${label} elsewhere` })

  const templates = await expectStatus(api.get("/v1/meeting-templates?limit=100"), 200, "list templates")
  const webhook = await expectStatus(
    api.post("/v1/workspace/webhooks", { url: "https://93.184.216.34/convene-fuzz", subscribed_events: ["meeting.created"] }),
    201,
    "create a webhook endpoint"
  )

  const operatorApi = client(url, OPERATOR_TOKEN)
  const partner = await expectStatus(
    operatorApi.post("/operator/v1/partner-apps", { name: `${label} Partner`, redirect_uris: ["https://partner.example/cb"] }),
    201,
    "create a partner app"
  )
  await expectStatus(
    operatorApi.post(`/operator/v1/partner-apps/${partner.id}/workspaces`, { workspace_id: ws.workspaceId }),
    201,
    "connect the workspace to the partner app"
  )

  const throwaway = await workspace(url, "PRO")
  const doomed = await throwaway.addUser({ role: "OWNER", name: `${label} Doomed` })
  const doomedKey = await throwaway.addApiKey()

  return {
    url,
    workspaceId: ws.workspaceId,
    credentials: {
      owner: owner.token,
      apiKey: apiKey.key,
      reader: reader.token,
      stranger: stranger.token,
      operator: OPERATOR_TOKEN,
      partner: partner.api_key as string
    },
    revoked: revoked.token as string,
    partnerClientId: partner.client_id as string,
    ids: {
      meetings: [scheduled.id, instant.id, cancelled.id],
      agendaItems: [topic.id, question.id, standupTopic.id],
      actionItems: [followUp.id, done.id, review.id],
      backlogItems: [pricing.id, hiring.id],
      attachments,
      contextItems,
      // Each of the three has a start time (the instant one starts now); the cancelled one stays on the calendar.
      calendarEvents: [scheduled.id, instant.id, cancelled.id],
      users: [owner.userId, reader.userId, editor.userId],
      participants: {
        [scheduled.id]: [owner.userId, reader.userId, editor.userId, ...(guest === undefined ? [] : [guest.id])],
        [instant.id]: [owner.userId],
        [cancelled.id]: [owner.userId]
      },
      tokens: [owner.tokenId, cli.id as string, reader.tokenId],
      workspaces: [ws.workspaceId],
      templates: (templates.items as ReadonlyArray<{ id: string }>).map((t) => t.id),
      webhooks: [webhook.webhook.id as string],
      partnerApps: [partner.id as string],
      apiKeys: [spareKey.id],
      disposable: {
        workspaces: [throwaway.workspaceId],
        users: [doomed.userId],
        tokens: [doomed.tokenId, doomedKey.id]
      }
    }
  }
}

/**
 * What the API lets the workspace's credentials (and the stranger) read of what a request could change: the
 * lists, every resource by id, the participants, attachments, context items and transcript of every meeting (a
 * context upload of kind `transcript` writes it), the tokens and their introspection. (Left out as derived:
 * upcoming, contacts.) Two equal snapshots mean nothing visible changed.
 */
export const snapshot = async (world: World): Promise<Record<string, unknown>> => {
  const out: Record<string, unknown> = {}
  const read = async (who: CredentialName, path: string) => {
    const response = await client(world.url, world.credentials[who]).get(path)
    out[`${who} GET ${path}`] = { status: response.status, body: response.status === 200 ? response.body : response.body?.code }
    return response
  }
  const meetings = await read("owner", "/v1/meetings?limit=100")
  // The endpoints without what the challenge worker changes as it tries the unreachable receiver.
  const webhooks = await client(world.url, world.credentials.owner).get("/v1/workspace/webhooks?limit=100")
  out["owner GET /v1/workspace/webhooks?limit=100"] = {
    status: webhooks.status,
    body: ((webhooks.body?.items ?? []) as ReadonlyArray<Record<string, unknown>>).map((endpoint) => ({
      id: endpoint.id,
      url: endpoint.url,
      subscribed_events: endpoint.subscribed_events,
      status: endpoint.status,
      consecutive_failure_count: endpoint.consecutive_failure_count
    }))
  }
  // The partner app, as the operator and the app itself read it.
  const partnerHeaders = { "x-api-key": world.credentials.partner, "x-client-id": world.partnerClientId }
  for (const path of ["/v1/partner/admin/app", "/v1/partner/admin/workspaces?limit=100"]) {
    const response = await client(world.url).get(path, partnerHeaders)
    out[`partner GET ${path}`] = { status: response.status, body: response.status === 200 ? response.body : response.body?.code }
  }
  for (const id of world.ids.partnerApps) {
    const response = await client(world.url, world.credentials.operator).get(`/operator/v1/partner-apps/${id}`)
    out[`operator GET /operator/v1/partner-apps/${id}`] = { status: response.status, body: response.body }
  }
  const meetingIds = new Set<string>([...world.ids.meetings, ...((meetings.body?.items ?? []) as ReadonlyArray<{ id: string }>).map((m) => m.id)])
  await Promise.all([
    read("owner", "/v1/agenda-items?limit=100"),
    read("owner", "/v1/action-items?limit=100"),
    read("owner", "/v1/backlog-items?limit=100"),
    read("owner", "/v1/backlog-items/history?limit=100"),
    read("owner", "/v1/user/tokens?limit=100"),
    read("owner", "/v1/auth/introspect"),
    read("owner", "/v1/me"),
    read("owner", "/v1/workspace"),
    read("owner", "/v1/workspace/members?limit=100"),
    read("owner", "/v1/workspace/api-keys?limit=100"),
    read("reader", "/v1/user/tokens?limit=100"),
    read("reader", "/v1/auth/introspect"),
    read("stranger", "/v1/meetings?limit=100"),
    ...[...meetingIds].flatMap((id) => [read("owner", `/v1/meetings/${id}`), read("owner", `/v1/meetings/${id}/participants?limit=100`)]),
    ...world.ids.agendaItems.map((id) => read("owner", `/v1/agenda-items/${id}`)),
    ...world.ids.actionItems.map((id) => read("owner", `/v1/action-items/${id}`)),
    ...world.ids.backlogItems.map((id) => read("owner", `/v1/backlog-items/${id}`)),
    ...[...meetingIds].flatMap((id) => [
      read("owner", `/v1/meetings/${id}/attachments?limit=100`),
      read("owner", `/v1/meetings/${id}/context?limit=100`),
      read("owner", `/v1/meetings/${id}/transcript/export`)
    ]),
    ...Object.entries(world.ids.attachments).flatMap(([meeting, ids]) =>
      ids.map((id) => read("owner", `/v1/meetings/${meeting}/attachments/${id}`))),
    ...Object.entries(world.ids.contextItems).flatMap(([meeting, ids]) =>
      ids.map((id) => read("owner", `/v1/meetings/${meeting}/context/${id}`)))
  ])
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

/** The entries two snapshots disagree on. */
export const differences = (before: Record<string, unknown>, after: Record<string, unknown>): Array<string> => {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)])
  const out: Array<string> = []
  for (const key of keys) {
    const a = JSON.stringify(before[key])
    const b = JSON.stringify(after[key])
    if (a === b) continue
    // Shown around the first character where they differ.
    const left = a ?? "(absent)"
    const right = b ?? "(absent)"
    let at = 0
    while (at < left.length && at < right.length && left[at] === right[at]) at++
    const from = Math.max(0, at - 120)
    const show = (text: string) => `${from > 0 ? "…" : ""}${text.slice(from, at + 200)}${text.length > at + 200 ? "…" : ""}`
    out.push(`${key}:\n    before ${show(left)}\n    after  ${show(right)}`)
  }
  return out
}
