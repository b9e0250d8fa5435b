/**
 * Convene's core embedded in a plain program: provision a workspace, mint a token, authenticate it, and run
 * a meeting's agenda and action items — the same rules the HTTP server applies, without any HTTP.
 */
import {
  ActionItems,
  AgendaItems,
  Authentication,
  Convene,
  CreateActionItem,
  CreateAgendaItem,
  CreateMeeting,
  CreateUser,
  CreateWorkspace,
  IssueToken,
  Meetings,
  Sequence,
  Tokens,
  UpdateActionItem,
  UpdateMeeting,
  Users,
  Workspaces
} from "@convene/core"
import { NodeCrypto } from "@convene/node"
import * as StoreMemory from "@convene/store-memory"
import { Effect, Layer, Redacted, Schema } from "effect"

/** The core on the in-memory store with node:crypto: everything an embedding host provides. */
export const EmbeddedLive = Convene.layer.pipe(Layer.provide(Layer.merge(StoreMemory.layer, NodeCrypto.layer)))

export const program = Effect.gen(function*() {
  const workspace = yield* (yield* Workspaces).create(CreateWorkspace.make({ name: "Embedded team", plan: "PRO" }))
  // Input from outside (a form, a queue message) is decoded through the core's schemas, which apply the rules:
  // the e-mail address is kept trimmed and lower-cased.
  const input = yield* Schema.decodeUnknown(CreateUser)({ email: " Lead@Example.com", name: "Lead", role: "OWNER" })
  const user = yield* (yield* Users).create(workspace.id, input)
  const issued = yield* (yield* Tokens).issue(
    user.id,
    IssueToken.make({ kind: "short_lived", scopes: ["meetings:read", "meetings:write", "action-items:write", "action-items:read"], expiry_hours: 1 })
  )
  const principal = yield* (yield* Authentication).authenticate(Redacted.make(issued.token))

  const meetings = yield* Meetings
  const meeting = yield* meetings.create(principal, CreateMeeting.make({ title: "Planning", is_instant: true }))
  const agenda = yield* AgendaItems
  yield* agenda.create(principal, CreateAgendaItem.make({ meeting_id: meeting.id, title: "Goals" }))
  yield* agenda.create(principal, CreateAgendaItem.make({ meeting_id: meeting.id, title: "Warm-up", sequence: Sequence.make("0.5") }))
  const actions = yield* ActionItems
  const action = yield* actions.create(principal, CreateActionItem.make({ meeting_id: meeting.id, title: "Write the plan", status: "accepted" }))
  const done = yield* actions.update(principal, action.id, UpdateActionItem.make({ status: "completed" }))
  const ended = yield* meetings.update(principal, meeting.id, UpdateMeeting.make({ status: "ended" }))
  const items = yield* agenda.list(principal, { meeting_id: meeting.id }, {})
  // An ended meeting takes no new agenda items: the core says so, whoever embeds it.
  const refused = yield* Effect.flip(agenda.create(principal, CreateAgendaItem.make({ meeting_id: meeting.id, title: "Late" })))

  return {
    meeting: ended.status,
    agenda: items.items.map((item) => `${item.sequence} ${item.title}`),
    action: { status: done.status, is_completed: done.is_completed },
    late_agenda_item: refused._tag
  }
})
