/**
 * A workspace with something of every kind in it, made through the real services, and a way to see every row
 * the store holds that names given ids: for the operator's deletes (a deleted user or workspace must leave no
 * row behind that names it, on any table).
 */
import {
  ActionItems,
  AddParticipants,
  AgendaItems,
  Convene,
  CreateActionItem,
  CreateAgendaItem,
  CreateApiKey,
  CreateMeeting,
  EndpointStates,
  Idempotency,
  Meetings,
  ParticipantEntry,
  Participants,
  type Plan,
  StoredResponse,
  TemplateId,
  Tokens,
  TranscriptLine,
  UpdateAgendaItem,
  type UserId,
  WebhookEndpointId,
  WebhookStore,
  type WorkspaceId
} from "@convene/core"
import { NodeCrypto } from "@convene/node"
import * as StoreMemory from "@convene/store-memory"
import { DateTime, Effect, Layer, Option } from "effect"
import { memoryLayer, StoreSnapshot } from "../faults/Snapshot.js"
import { principalFor } from "./fixtures.js"

/** The core on the in-memory store, with the store's snapshots (StoreSnapshot) and ports exposed. */
export const CoreWithSnapshots = Convene.layer.pipe(
  Layer.provideMerge(memoryLayer.pipe(Layer.provideMerge(Layer.merge(StoreMemory.layer, StoreMemory.Memory.layer)))),
  Layer.provideMerge(NodeCrypto.layer)
)

/**
 * Every row the store holds that names one of `ids`, as `table: row`. The event log and the outbox's deliveries
 * are left out: they are the history of what happened (who did what, to what) and the very bytes told about it,
 * kept for their retention (7 days) whoever is deleted since, so that webhook deliveries and resumed streams stay
 * consistent; a deleted user's id ages out with them. (A deleted workspace's deliveries go with it: the fault
 * suite counts them.)
 */
export const rowsNaming = (ids: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const snapshot = yield* (yield* StoreSnapshot).take
    return [...snapshot].filter(([table]) => table !== "events" && table !== "deliveries").flatMap(([table, rows]) =>
      rows.filter((row) => ids.some((id) => row.includes(id))).map((row) => `${table}: ${row}`)
    )
  })

/**
 * A verified webhook endpoint of the workspace subscribed to `events`, created by `createdBy`, stored directly (its
 * secrets are placeholders: Convene.layer alone sends nothing; it only enqueues deliveries for it).
 */
export const seedSubscribedEndpoint = (
  workspaceId: WorkspaceId,
  createdBy: UserId | null,
  events: ReadonlyArray<"meeting.created" | "action_item.created">
) =>
  Effect.gen(function*() {
    const at = DateTime.unsafeMake(0)
    const created = EndpointStates.created({
      id: WebhookEndpointId.make(crypto.randomUUID()),
      workspace_id: workspaceId,
      url: `https://hooks.example.com/${crypto.randomUUID()}`,
      subscribed_events: events,
      created_by: createdBy,
      sealed_signing_secret: "sealed-secret",
      sealed_verification_token: "sealed-token"
    }, at)
    const verified = Option.getOrThrow(EndpointStates.challengeAnswered(created, at, true))
    yield* (yield* WebhookStore).insertEndpoint(verified, undefined)
    return verified
  })

const retrospective = TemplateId.make("6a1f3c1e-0b6e-4a53-9d1e-1c5d8f0a0003")

/**
 * A workspace with an OWNER and a MEMBER (each with a token), an API key, and two meetings: the member's (from a
 * template, with the owner as EDITOR, an agenda item both present with talking points of both, action items
 * assigned to each, a transcript line) and the owner's (with the member as VIEWER); an idempotency record of the
 * member's token; a verified webhook endpoint the member created, subscribed to meeting.created and
 * action_item.created, with the 4 deliveries the setup's events enqueued for it. On FREE the meetings also take
 * units of the monthly allowance.
 */
export const furnishedWorkspace = (plan: Plan = "PRO") =>
  Effect.gen(function*() {
    const owner = yield* principalFor({ plan, role: "OWNER" })
    const workspace = owner.workspace
    const member = yield* principalFor({ workspaceId: workspace.id, role: "MEMBER" })
    const apiKey = yield* (yield* Tokens).issueApiKey(workspace.id, CreateApiKey.make({ name: "CI" }))
    const endpoint = yield* seedSubscribedEndpoint(workspace.id, member.user.id, ["meeting.created", "action_item.created"])
    const meetings = yield* Meetings
    const agenda = yield* AgendaItems
    const actions = yield* ActionItems

    const membersMeeting = yield* meetings.create(member.principal, CreateMeeting.make({ title: "Retro", template_id: retrospective }))
    yield* meetings.appendTranscript(member.principal, membersMeeting.id, [
      TranscriptLine.make({ offset_ms: 0, speaker: "Ann", text: "Hello" })
    ])
    const participants = yield* Participants
    yield* participants.add(
      member.principal,
      membersMeeting.id,
      AddParticipants.make({ participants: [ParticipantEntry.make({ role: "EDITOR", user_id: owner.user.id })] })
    )
    const item = yield* agenda.create(
      member.principal,
      CreateAgendaItem.make({
        meeting_id: membersMeeting.id,
        title: "Both present",
        presenters: [member.user.id, owner.user.id],
        talking_points: ["the member's"]
      })
    )
    yield* agenda.update(owner.principal, item.id, UpdateAgendaItem.make({ talking_points: ["the owner's"] }))
    const membersTask = yield* actions.create(
      member.principal,
      CreateActionItem.make({ meeting_id: membersMeeting.id, title: "Mine", assigned_to_user_id: member.user.id, agenda_item_id: item.id })
    )
    const ownersTask = yield* actions.create(
      member.principal,
      CreateActionItem.make({ meeting_id: membersMeeting.id, title: "Yours", assigned_to_user_id: owner.user.id })
    )
    const ownersMeeting = yield* meetings.create(owner.principal, CreateMeeting.make({ title: "Planning" }))
    yield* participants.add(
      owner.principal,
      ownersMeeting.id,
      AddParticipants.make({ participants: [ParticipantEntry.make({ role: "VIEWER", user_id: member.user.id })] })
    )
    yield* (yield* Idempotency).run(
      { scope: member.principal.credential_id, key: "first", method: "POST", path: "/v1/meetings", query: [], body: { title: "x" } },
      Effect.succeed(new StoredResponse({ status: 201, body: "{}" }))
    )
    return { workspace, owner, member, apiKey, endpoint, membersMeeting, ownersMeeting, item, membersTask, ownersTask }
  }).pipe(Effect.orDie)
