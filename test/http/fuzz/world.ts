/**
 * The data the fuzzer aims at: a provisioned workspace with known resources (meetings, participants, agenda
 * and action items, tokens), the credentials that reach it (or must not), the pools of ids a generator draws
 * path parameters and body references from, and a snapshot of everything readable through the API.
 *
 * The partner user context's access tokens come from the real partner OAuth flow over HTTP (sign-in at /signin with a
 * password, GET /oauth2/authorize, the consent form approved, the code exchanged at /oauth2/token with HTTP Basic), as
 * a partner app's server and a user's browser run it.
 */
import { client, type Client, OPERATOR_TOKEN } from "../../support/server.js"
import { createActionItem, createAgendaItem, createMeeting, workspace } from "../fixtures.js"
import { CookieJar, hiddenField, newUser, type PasswordUser } from "../oauth/support.js"

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
  /**
   * A partner access token (svc_pua_v1_) of that app for an OWNER of the workspace, with meetings:read meetings:write
   * action-items:read action-items:write: the user context's rightful caller.
   */
  | "partnerUser"
  /** The same user's partner access token with meetings:read only (every write is 403 insufficient_scope). */
  | "partnerReader"
  /** A partner access token of a MEMBER of the workspace who is a VIEWER of the scheduled meeting (its writes: 403 forbidden). */
  | "partnerViewer"
  /** A partner access token of the other workspace's OWNER (every id of this one is 404 to it). */
  | "partnerStranger"
  /** A partner access token of the same OWNER for another app, which the operator then suspended (403 partner_app_inactive). */
  | "partnerSuspended"

/** A pre-signed download URL of an attachment (GET /v1/partner/files/...), as its parts. */
export interface FileLink {
  readonly params: { readonly workspace_id: string; readonly meeting_id: string; readonly attachment_id: string }
  /** `expires`, `kid` and `signature`, in the order of the URL. */
  readonly query: ReadonlyArray<readonly [string, string]>
}

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
    /** Agenda items by meeting (`{item_id}` values follow their meeting's `{id}`). */
    readonly agendaItemsByMeeting: Readonly<Record<string, ReadonlyArray<string>>>
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
    /** Domains whose verification that partner app started (`{domain}` of /v1/partner/admin/idp/domains). */
    readonly domains: ReadonlyArray<string>
    /**
     * The pre-signed download URLs of the workspace's attachments, minted at provisioning through the user context
     * (valid 15 minutes: `refreshFileLinks` mints them again in place).
     */
    readonly fileLinks: Array<FileLink>
    /** The meeting the `partnerViewer` only views. */
    readonly viewedMeeting: string
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

// ---------------------------------------------------------------------------------------------------------
// The partner OAuth flow

/** Where the worlds' partner apps send their users back (never followed: the code is read from Location). */
const PARTNER_REDIRECT_URI = "https://partner.example/cb"

/** The scopes of the user context's rightful token. */
export const PARTNER_USER_SCOPES = "meetings:read meetings:write action-items:read action-items:write partner-api/workflows:read partner-api/workflows:write"

interface PartnerAppCredentials {
  readonly client_id: string
  readonly client_secret: string
}

/**
 * A browser's request to the server: the jar's cookies sent and kept, no redirect followed. No Origin header: the
 * fuzz server's base URL leaves its port out (test/support/server.ts), so the origin a browser would send is not the
 * pages' own; a form post without one is judged by its CSRF field alone.
 */
const browse = async (url: string, jar: CookieJar, path: string, form?: Record<string, string>) => {
  const cookie = jar.header()
  const response = await fetch(url + path, {
    method: form === undefined ? "GET" : "POST",
    redirect: "manual",
    headers: {
      accept: "text/html",
      ...(cookie === "" ? {} : { cookie }),
      ...(form === undefined ? {} : { "content-type": "application/x-www-form-urlencoded" })
    },
    ...(form === undefined ? {} : { body: new URLSearchParams(form).toString() })
  })
  jar.absorb(response)
  return { status: response.status, text: await response.text(), location: response.headers.get("location") }
}

/** A browser signed in as `user` at /signin (the jar holds the session). */
const signedIn = async (url: string, user: PasswordUser): Promise<CookieJar> => {
  const jar = new CookieJar()
  const page = await browse(url, jar, "/signin")
  if (page.status !== 200) throw new Error(`GET /signin: expected 200, got ${page.status}`)
  const answer = await browse(url, jar, "/signin", {
    csrf: hiddenField(page.text, "csrf"),
    continue: hiddenField(page.text, "continue"),
    email: user.email,
    password: user.password
  })
  if (answer.status !== 302 && answer.status !== 303) throw new Error(`POST /signin: expected a redirect, got ${answer.status} ${answer.text.slice(0, 300)}`)
  return jar
}

/**
 * An access token of `app` for the user signed in to `jar`, through the authorization code flow: GET
 * /oauth2/authorize, the consent page approved (which connects the user's workspace to the app), and the code
 * exchanged at /oauth2/token with HTTP Basic.
 */
const partnerToken = async (url: string, jar: CookieJar, app: PartnerAppCredentials, scope: string): Promise<string> => {
  const state = crypto.randomUUID()
  const query = new URLSearchParams({ response_type: "code", client_id: app.client_id, redirect_uri: PARTNER_REDIRECT_URI, scope, state })
  let answer = await browse(url, jar, `/oauth2/authorize?${query.toString()}`)
  if (answer.status === 200) {
    answer = await browse(url, jar, "/oauth2/authorize", {
      csrf: hiddenField(answer.text, "csrf"),
      request: hiddenField(answer.text, "request"),
      decision: "approve"
    })
  }
  if (answer.location === null || !answer.location.startsWith(PARTNER_REDIRECT_URI)) {
    throw new Error(`partner authorization: expected a redirect to ${PARTNER_REDIRECT_URI}, got ${answer.status} ${answer.location ?? answer.text.slice(0, 300)}`)
  }
  const code = new URL(answer.location).searchParams.get("code")
  if (code === null) throw new Error(`partner authorization: no code in ${answer.location}`)
  const response = await fetch(`${url}/oauth2/token`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      authorization: `Basic ${Buffer.from(`${encodeURIComponent(app.client_id)}:${encodeURIComponent(app.client_secret)}`).toString("base64")}`
    },
    body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: PARTNER_REDIRECT_URI }).toString()
  })
  const text = await response.text()
  if (response.status !== 200) throw new Error(`POST /oauth2/token: expected 200, got ${response.status} ${text}`)
  const token = (JSON.parse(text) as { access_token?: unknown }).access_token
  if (typeof token !== "string" || !token.startsWith("svc_pua_v1_")) throw new Error(`POST /oauth2/token: no partner access token in ${text}`)
  return token
}

/** A partner app made by the operator, with the worlds' redirect URI. */
const createPartnerApp = async (url: string, name: string) =>
  expectStatus(
    client(url, OPERATOR_TOKEN).post("/operator/v1/partner-apps", { name, redirect_uris: [PARTNER_REDIRECT_URI] }),
    201,
    "create a partner app"
  )

/** The parts of a pre-signed download URL (absolute under the server's base URL, which may name no port). */
const fileLinkOf = (downloadUrl: string): FileLink => {
  const link = new URL(downloadUrl)
  const [workspaceId = "", meetingId = "", attachmentId = ""] = link.pathname.replace(/^\/v1\/partner\/files\//, "").split("/")
  return {
    params: { workspace_id: workspaceId, meeting_id: meetingId, attachment_id: attachmentId },
    query: [...link.searchParams.entries()].map(([name, value]) => [name, encodeURIComponent(value)] as const)
  }
}

/**
 * Mints the pre-signed download URLs of the world's attachments afresh (they are valid 15 minutes), in place. Those of
 * meetings and attachments valid-ish requests deleted are gone: when nothing is left, the old URLs stay (404 now).
 */
export const refreshFileLinks = async (world: World): Promise<void> => {
  const partner = client(world.url, world.credentials.partnerUser)
  const listed = await Promise.all(world.ids.meetings.map((meeting) => partner.get(`/v1/partner/user/meetings/${meeting}/attachments?limit=100`)))
  const links = listed.flatMap((answer) =>
    answer.status === 200 ? (answer.body.items as ReadonlyArray<{ download_url: string }>).map((item) => fileLinkOf(item.download_url)) : []
  )
  if (links.length > 0) world.ids.fileLinks.splice(0, world.ids.fileLinks.length, ...links)
  else if (world.ids.fileLinks.length === 0) throw new Error("no pre-signed download URL: the world has no attachment the partner user sees")
}

/**
 * A PRO workspace with an owner, a reader, an API key and a spare one; three meetings (scheduled with times, instant,
 * cancelled), participants (a workspace user and a guest), agenda items with talking points and presenters,
 * action items (one tied to an agenda item, one completed), backlog items (two open, one assigned, one deleted),
 * attachments and context items on every meeting (a WebVTT transcript among them) and a second token of the owner. And the owner of
 * another workspace with a meeting of their own. A partner app the workspace is connected to, with the user context's
 * tokens (see CredentialName: an OWNER's with the four scopes and with meetings:read only, a VIEWER's, the other
 * workspace's OWNER's, and one of a second app that is suspended) and the pre-signed URLs of the attachments.
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
  const partner = await createPartnerApp(url, `${label} Partner`)
  const domain = `fuzz-${crypto.randomUUID().slice(0, 8)}.example`
  await expectStatus(
    client(url).post(`/v1/partner/admin/idp/domains/${domain}/verify`, undefined, {
      "x-api-key": partner.api_key as string,
      "x-client-id": partner.client_id as string
    }),
    201,
    "start a domain verification"
  )
  await expectStatus(
    operatorApi.post(`/operator/v1/partner-apps/${partner.id}/workspaces`, { workspace_id: ws.workspaceId }),
    201,
    "connect the workspace to the partner app"
  )

  // The partner user context: users with a password approve the app (the stranger's approval connects the other
  // workspace too); the OWNER also approves a second app, which the operator then suspends.
  const [partnerOwner, viewer, strangerOwner, suspendedApp] = await Promise.all([
    newUser(url, { role: "OWNER", workspaceId: ws.workspaceId }),
    newUser(url, { role: "MEMBER", workspaceId: ws.workspaceId }),
    newUser(url, { role: "OWNER", workspaceId: other.workspaceId }),
    createPartnerApp(url, `${label} Suspended partner`)
  ])
  await expectStatus(
    api.post(`/v1/meetings/${scheduled.id}/participants`, { participants: [{ user_id: viewer.userId, role: "VIEWER" }] }),
    201,
    "add the partner viewer"
  )
  const [ownerJar, viewerJar, strangerJar] = await Promise.all([signedIn(url, partnerOwner), signedIn(url, viewer), signedIn(url, strangerOwner)])
  const [partnerUser, partnerReader, partnerSuspended, partnerViewer, partnerStranger] = await Promise.all([
    partnerToken(url, ownerJar, partner, PARTNER_USER_SCOPES),
    partnerToken(url, ownerJar, partner, "meetings:read"),
    partnerToken(url, ownerJar, suspendedApp, PARTNER_USER_SCOPES),
    partnerToken(url, viewerJar, partner, PARTNER_USER_SCOPES),
    partnerToken(url, strangerJar, partner, PARTNER_USER_SCOPES)
  ])
  await expectStatus(operatorApi.patch(`/operator/v1/partner-apps/${suspendedApp.id}`, { status: "suspended" }), 200, "suspend a partner app")

  const throwaway = await workspace(url, "PRO")
  const doomed = await throwaway.addUser({ role: "OWNER", name: `${label} Doomed` })
  const doomedKey = await throwaway.addApiKey()

  const world: World = {
    url,
    workspaceId: ws.workspaceId,
    credentials: {
      owner: owner.token,
      apiKey: apiKey.key,
      reader: reader.token,
      stranger: stranger.token,
      operator: OPERATOR_TOKEN,
      partner: partner.api_key as string,
      partnerUser,
      partnerReader,
      partnerViewer,
      partnerStranger,
      partnerSuspended
    },
    revoked: revoked.token as string,
    partnerClientId: partner.client_id as string,
    ids: {
      meetings: [scheduled.id, instant.id, cancelled.id],
      agendaItems: [topic.id, question.id, standupTopic.id],
      agendaItemsByMeeting: { [scheduled.id]: [topic.id, question.id], [instant.id]: [standupTopic.id] },
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
      domains: [domain],
      fileLinks: [],
      viewedMeeting: scheduled.id,
      apiKeys: [spareKey.id],
      disposable: {
        workspaces: [throwaway.workspaceId],
        users: [doomed.userId],
        tokens: [doomed.tokenId, doomedKey.id]
      }
    }
  }
  await refreshFileLinks(world)
  return world
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
  const automations = await client(world.url).get("/v1/partner/admin/automations?limit=100", partnerHeaders)
  out["partner GET /v1/partner/admin/automations?limit=100"] = {
    status: automations.status,
    body: automations.status === 200 ? automations.body : automations.body?.code
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
    // What only the partner user sees: their own talking points (private to each user) on agenda and backlog items.
    read("partnerUser", "/v1/partner/user/backlog-items?limit=100"),
    ...[...meetingIds].map((id) => read("partnerUser", `/v1/partner/user/meetings/${id}/agenda-items?limit=100`)),
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
