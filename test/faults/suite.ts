/**
 * Every multi-write operation of the core must be one unit of work: a fault after any of its writes leaves the
 * store exactly as it was. `suite(name, store)` runs, on one store, each operation below
 * - once without a fault (the positive control: it makes exactly the writes listed, which is where the k of the
 *   fault cases come from, and changes exactly the rows listed), and
 * - once per k from 1 to (its number of writes − 1), dying right after its k-th write (FaultyStore), then
 *   compares a snapshot of the whole store with the one taken before (Snapshot): nothing may be left.
 *
 * The operation runs through the real core services (Convene.layer) over FaultyStore over the store; what a
 * case needs first is made through the same services, unarmed. Time is the TestClock's, moved on by a minute
 * between the setup and the operation so that even a rewrite of a row with the same values shows.
 */
import {
  ActionItems,
  AgendaItems,
  AssignBacklogItem,
  BacklogItems,
  builtInTemplates,
  ContextItemId,
  ContextItemRow,
  ContextStore,
  Convene,
  CreateActionItem,
  CreateAgendaItem,
  CreateBacklogItem,
  CreateMeeting,
  Idempotency,
  type IdempotentRequest,
  type MeetingId,
  Meetings,
  type Principal,
  Sequence,
  type StorePorts,
  StoredResponse,
  TranscriptLine,
  UpdateAgendaItem,
  UpdateBacklogItem,
  Users,
  Workspaces
} from "@convene/core"
import { NodeCrypto } from "@convene/node"
import { expect, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option, TestClock } from "effect"
import { principalFor } from "../core/fixtures.js"
import { furnishedWorkspace, seedSubscribedEndpoint } from "../core/furnished.js"
import * as FaultyStore from "./FaultyStore.js"
import { counts, diff, type Snapshot, StoreSnapshot } from "./Snapshot.js"

type Changes = Record<string, { readonly added: number; readonly removed: number }>

interface Operation {
  readonly name: string
  /** The writes the operation makes, in order, as read from its code in packages/core/src. */
  readonly writes: ReadonlyArray<string>
  /**
   * The rows a successful run adds and removes, per table. The memory store's indexes count as tables of their own
   * ("users (by email)"); on the SQL stores, which keep no such table, they are left out of the comparison.
   */
  readonly changes: Changes
  /** What a fault after write k is allowed to leave (nothing, unless said here). */
  readonly leftAfterFault?: (k: number) => Changes
  /** Makes what the operation needs (no fault armed yet; rows of its own may go straight to the store) and answers the operation. */
  readonly prepare: Effect.Effect<Effect.Effect<unknown, unknown, Convene.Services>, never, Convene.Services | StorePorts>
}

const standUp = builtInTemplates.find((template) => template.name === "Stand-up")!
const retrospective = builtInTemplates.find((template) => template.name === "Retrospective")!

const meetingOf = (principal: Principal, fields: Partial<CreateMeeting> = {}) =>
  Effect.flatMap(Meetings, (meetings) => meetings.create(principal, CreateMeeting.make({ title: "Weekly sync", ...fields })))

const agendaItemOf = (principal: Principal, meetingId: MeetingId, fields: Partial<CreateAgendaItem> = {}) =>
  Effect.flatMap(AgendaItems, (items) =>
    items.create(principal, CreateAgendaItem.make({ meeting_id: meetingId, title: "Status", ...fields })))

const added = (n: number) => ({ added: n, removed: 0 })
const removed = (n: number) => ({ added: 0, removed: n })
const changed = (n: number) => ({ added: n, removed: n })

const operations: ReadonlyArray<Operation> = [
  {
    name: "Meetings.create (FREE plan, Stand-up template)",
    writes: [
      "WorkspaceStore.consume",
      "MeetingStore.insert",
      "MeetingStore.addParticipants",
      ...standUp.agenda_items.map(() => "AgendaItemStore.insert"),
      "EventLog.append"
    ],
    // The monthly counter goes from 1 to 2: a fault must give the unit back.
    changes: {
      workspace_usage: changed(1),
      meetings: added(1),
      participants: added(1),
      agenda_items: added(standUp.agenda_items.length),
      events: added(1)
    },
    prepare: Effect.gen(function*() {
      const { principal } = yield* principalFor({ plan: "FREE" })
      yield* meetingOf(principal, { title: "Takes the first unit of the month" })
      const meetings = yield* Meetings
      return meetings.create(principal, CreateMeeting.make({ title: "Daily", template_id: standUp.id }))
    }).pipe(Effect.orDie)
  },
  {
    name: "Meetings.create with a subscribed webhook endpoint (the delivery is enqueued in the same unit of work)",
    writes: ["MeetingStore.insert", "MeetingStore.addParticipants", "EventLog.append", "WebhookStore.enqueue"],
    changes: { meetings: added(1), participants: added(1), events: added(1), deliveries: added(1) },
    prepare: Effect.gen(function*() {
      const { principal, workspace } = yield* principalFor()
      yield* seedSubscribedEndpoint(workspace.id, null, ["meeting.created"])
      const meetings = yield* Meetings
      return meetings.create(principal, CreateMeeting.make({ title: "Told" }))
    }).pipe(Effect.orDie)
  },
  {
    name: "Meetings.delete (with agenda, talking points, action item, transcript, context)",
    writes: [
      "ActionItemStore.deleteByMeeting",
      "AgendaItemStore.deleteByMeeting",
      "ContextStore.deleteByMeeting",
      "AttachmentStore.deleteByMeeting",
      "MeetingStore.delete",
      "EventLog.append"
    ],
    changes: {
      events: added(1),
      context_items: removed(1),
      action_items: removed(1),
      agenda_items: removed(standUp.agenda_items.length + 1),
      talking_points: removed(1),
      meetings: removed(1),
      participants: removed(1),
      transcript_segments: removed(1)
    },
    prepare: Effect.gen(function*() {
      const { principal } = yield* principalFor()
      const meeting = yield* meetingOf(principal, { template_id: standUp.id })
      const item = yield* agendaItemOf(principal, meeting.id, { talking_points: ["Mine"] })
      const actions = yield* ActionItems
      yield* actions.create(principal, CreateActionItem.make({ meeting_id: meeting.id, title: "Follow up", agenda_item_id: item.id }))
      const meetings = yield* Meetings
      yield* meetings.appendTranscript(principal, meeting.id, [
        TranscriptLine.make({ offset_ms: 0, speaker: "Ann", text: "Hello" })
      ])
      yield* (yield* ContextStore).insert(
        ContextItemRow.make({
          id: ContextItemId.make(crypto.randomUUID()),
          workspace_id: meeting.workspace_id,
          meeting_id: meeting.id,
          kind: "notes",
          file_name: "notes.md",
          content_type: "text/markdown",
          size: 6,
          created_at: meeting.created_at
        }),
        "Notes\n"
      )
      return meetings.delete(principal, meeting.id)
    }).pipe(Effect.orDie)
  },
  {
    name: "AgendaItems.create with talking points",
    writes: ["AgendaItemStore.insert", "AgendaItemStore.setTalkingPoints", "EventLog.append"],
    changes: { agenda_items: added(1), talking_points: added(1), events: added(1) },
    prepare: Effect.gen(function*() {
      const { principal } = yield* principalFor()
      const meeting = yield* meetingOf(principal)
      return agendaItemOf(principal, meeting.id, { talking_points: ["One", "Two"] })
    }).pipe(Effect.orDie)
  },
  {
    name: "AgendaItems.create that renumbers (last sequence 999999999999)",
    // Both items move (5 → 1, 999999999999 → 2), then the new one goes in as 3.
    writes: ["AgendaItemStore.update", "AgendaItemStore.update", "AgendaItemStore.insert", "EventLog.append"],
    changes: { agenda_items: { added: 3, removed: 2 }, events: added(1) },
    prepare: Effect.gen(function*() {
      const { principal } = yield* principalFor()
      const meeting = yield* meetingOf(principal)
      yield* agendaItemOf(principal, meeting.id, { title: "First", sequence: Sequence.make("5") })
      yield* agendaItemOf(principal, meeting.id, { title: "Last", sequence: Sequence.make("999999999999") })
      return agendaItemOf(principal, meeting.id, { title: "Appended" })
    }).pipe(Effect.orDie)
  },
  {
    name: "AgendaItems.update with talking points",
    writes: ["AgendaItemStore.update", "AgendaItemStore.setTalkingPoints", "EventLog.append"],
    changes: { agenda_items: changed(1), talking_points: changed(1), events: added(1) },
    prepare: Effect.gen(function*() {
      const { principal } = yield* principalFor()
      const meeting = yield* meetingOf(principal)
      const item = yield* agendaItemOf(principal, meeting.id, { talking_points: ["Old"] })
      const items = yield* AgendaItems
      return items.update(principal, item.id, UpdateAgendaItem.make({ title: "Renamed", talking_points: ["New"] }))
    }).pipe(Effect.orDie)
  },
  {
    name: "AgendaItems.delete of an item an action item points at",
    writes: ["ActionItemStore.detachAgendaItem", "AgendaItemStore.delete", "EventLog.append"],
    changes: { action_items: changed(1), agenda_items: removed(1), talking_points: removed(1), events: added(1) },
    prepare: Effect.gen(function*() {
      const { principal } = yield* principalFor()
      const meeting = yield* meetingOf(principal)
      const item = yield* agendaItemOf(principal, meeting.id, { talking_points: ["Mine"] })
      const actions = yield* ActionItems
      yield* actions.create(principal, CreateActionItem.make({ meeting_id: meeting.id, title: "Follow up", agenda_item_id: item.id }))
      const items = yield* AgendaItems
      return items.delete(principal, item.id)
    }).pipe(Effect.orDie)
  },
  {
    name: "Users.delete (a member who owns a meeting, takes part in another, presents, has talking points, an assignment, a token and an idempotency record)",
    writes: [
      "MeetingStore.removeUserParticipants",
      "MeetingStore.detachOwner",
      "AgendaItemStore.removePresenter",
      "AgendaItemStore.deleteTalkingPointsOf",
      "BacklogItemStore.removePresenter",
      "BacklogItemStore.deleteTalkingPointsOf",
      "ActionItemStore.unassignUser",
      "SessionStore.deleteByUser",
      "OAuthStore.deleteByUser",
      "WebhookStore.detachCreator",
      "CredentialStore.deleteByUser",
      "IdempotencyStore.deleteByScopes",
      "UserStore.delete"
    ],
    changes: {
      participants: removed(2),
      meetings: changed(1),
      agenda_items: changed(1),
      talking_points: removed(1),
      action_items: changed(1),
      credentials: removed(1),
      "credentials (by token hash)": removed(1),
      idempotency_records: removed(1),
      users: removed(1),
      "users (by email)": removed(1),
      // The endpoint the member created stays, without a creator.
      webhook_endpoints: changed(1)
    },
    prepare: Effect.gen(function*() {
      const { member } = yield* furnishedWorkspace()
      const users = yield* Users
      return users.delete(member.user.id)
    })
  },
  {
    name: "Workspaces.delete (FREE, with everything in it)",
    writes: [
      "ActionItemStore.deleteByWorkspace",
      "AgendaItemStore.deleteByWorkspace",
      "ContextStore.deleteByWorkspace",
      "AttachmentStore.deleteByWorkspace",
      "MeetingStore.deleteByWorkspace",
      "BacklogItemStore.deleteByWorkspace",
      "EventLog.deleteByWorkspace",
      "WebhookStore.deleteByWorkspace",
      "WorkflowRunStore.deleteByWorkspace",
      "ToolkitStore.deleteByWorkspace",
      "PartnerStore.deleteByWorkspace",
      "SessionStore.deleteByWorkspace",
      "OAuthStore.deleteByWorkspace",
      "CredentialStore.deleteByWorkspace",
      "IdempotencyStore.deleteByScopes",
      "UserStore.deleteByWorkspace",
      "WorkspaceStore.delete"
    ],
    changes: {
      action_items: removed(2),
      agenda_items: removed(retrospective.agenda_items.length + 1),
      talking_points: removed(2),
      meetings: removed(2),
      participants: removed(4),
      transcript_segments: removed(1),
      credentials: removed(3),
      "credentials (by token hash)": removed(3),
      idempotency_records: removed(1),
      users: removed(2),
      "users (by email)": removed(2),
      workspace_usage: removed(1),
      workspaces: removed(1),
      // The events the furnished workspace's setup recorded, and the deliveries they enqueued for its endpoint
      // (2 meetings and 2 action items created).
      events: removed(8),
      webhook_endpoints: removed(1),
      deliveries: removed(4)
    },
    prepare: Effect.gen(function*() {
      const { workspace } = yield* furnishedWorkspace("FREE")
      const workspaces = yield* Workspaces
      return workspaces.delete(workspace.id)
    })
  },
  {
    name: "BacklogItems.assign (an item with the caller's and a colleague's talking points)",
    writes: [
      "BacklogItemStore.update",
      "AgendaItemStore.insert",
      "AgendaItemStore.setTalkingPoints",
      "EventLog.append",
      "AgendaItemStore.setTalkingPoints",
      "EventLog.append"
    ],
    changes: { backlog_items: changed(1), agenda_items: added(1), talking_points: added(2), events: added(2) },
    prepare: Effect.gen(function*() {
      const { principal } = yield* principalFor()
      const colleague = yield* principalFor({ workspaceId: principal.workspace_id })
      const meeting = yield* meetingOf(principal)
      const backlog = yield* BacklogItems
      const item = yield* backlog.create(principal, CreateBacklogItem.make({ title: "Pricing", talking_points: ["Mine"] }))
      yield* backlog.update(colleague.principal, item.id, UpdateBacklogItem.make({ talking_points: ["Theirs"] }))
      return backlog.assign(principal, item.id, AssignBacklogItem.make({ destination_meeting_id: meeting.id }))
    }).pipe(Effect.orDie)
  },
  {
    name: "Idempotency.run of a work that writes twice (two agenda items)",
    writes: [
      "IdempotencyStore.begin",
      "AgendaItemStore.insert",
      "EventLog.append",
      "AgendaItemStore.insert",
      "EventLog.append",
      "IdempotencyStore.complete"
    ],
    changes: { idempotency_records: added(1), agenda_items: added(2), events: added(2) },
    // The claim is taken on its own, before the unit of work, so that a racing duplicate sees it (see
    // Idempotency.ts): a fault right after it leaves the claim pending until its window passes (tested below).
    // From the second write on, the work and the stored response go together, and the key is released.
    leftAfterFault: (k) => (k === 1 ? { idempotency_records: added(1) } : {}),
    prepare: Effect.gen(function*() {
      const { principal } = yield* principalFor()
      const meeting = yield* meetingOf(principal)
      return idempotentWork(principal, meeting.id, `key-${crypto.randomUUID()}`)
    }).pipe(Effect.orDie)
  }
]

/**
 * A request under an Idempotency-Key whose work writes twice, each write a unit of its own (two agenda items):
 * only the Idempotency service's transaction makes them, and the stored response, one.
 */
const idempotentWork = (principal: Principal, meetingId: MeetingId, key: string) =>
  Effect.gen(function*() {
    const idempotency = yield* Idempotency
    const titles = ["Opening", "Closing"]
    const request: IdempotentRequest = {
      scope: principal.credential_id,
      key,
      method: "POST",
      path: `/v1/meetings/${meetingId}/agenda`,
      query: [],
      body: { titles }
    }
    return yield* idempotency.run(
      request,
      Effect.map(
        Effect.forEach(titles, (title) => agendaItemOf(principal, meetingId, { title })),
        (items) => new StoredResponse({ status: 201, body: JSON.stringify(items.map((item) => item.id)) })
      )
    )
  })

/** The expected changes without the memory store's index tables when the store keeps none (the SQL stores). */
const onThisStore = (changes: Changes, before: Snapshot, after: Snapshot): Changes =>
  Object.fromEntries(
    Object.entries(changes).filter(([table]) => !table.includes(" (by ") || before.has(table) || after.has(table))
  )

/** The defect an exit died with, if it died. */
const defectOf = (exit: Exit.Exit<unknown, unknown>): Option.Option<unknown> =>
  Exit.isFailure(exit) ? Cause.dieOption(exit.cause) : Option.none()

const outcome = (exit: Exit.Exit<unknown, unknown>): string => (Exit.isSuccess(exit) ? "success" : Cause.pretty(exit.cause))

/** Runs `prepare`, moves the clock on, and answers the operation with the snapshot taken just before it. */
const setUp = (operation: Operation) =>
  Effect.gen(function*() {
    const run = yield* operation.prepare
    yield* TestClock.adjust("1 minute")
    const snapshots = yield* StoreSnapshot
    return { run, snapshots, before: yield* snapshots.take }
  })

export const suite = (name: string, store: Layer.Layer<StorePorts | StoreSnapshot, unknown>) => {
  const core = Convene.layer.pipe(
    Layer.provide(FaultyStore.layer),
    Layer.provideMerge(store),
    Layer.provideMerge(NodeCrypto.layer)
  )

  layer(core)(`Faults in units of work (${name})`, (it) => {
    for (const operation of operations) {
      const n = operation.writes.length

      it.effect(`${operation.name}: without a fault, makes its ${n} writes and they all stay`, () =>
        Effect.gen(function*() {
          const { before, run, snapshots } = yield* setUp(operation)
          const { exit, writes } = yield* FaultyStore.record(run)
          expect(outcome(exit)).toBe("success")
          expect(writes).toEqual(operation.writes)
          const after = yield* snapshots.take
          expect(counts(diff(before, after))).toEqual(onThisStore(operation.changes, before, after))
        }))

      for (let k = 1; k < n; k++) {
        const method = operation.writes[k - 1]!
        const allowed = operation.leftAfterFault?.(k) ?? {}
        const left = Object.keys(allowed).length === 0
          ? "nothing behind"
          : `only ${Object.entries(allowed).map(([table, change]) => `${table} +${change.added} -${change.removed}`).join(", ")}`
        it.effect(`${operation.name}: a fault after write ${k} of ${n} (${method}) leaves ${left}`, () =>
          Effect.gen(function*() {
            const { before, run, snapshots } = yield* setUp(operation)
            const { exit, writes } = yield* FaultyStore.record(run, { dieAfter: k })
            expect(defectOf(exit)).toEqual(Option.some(new FaultyStore.InjectedFault({ write: k, method })))
            expect(writes.slice(0, k)).toEqual(operation.writes.slice(0, k))
            const changes = diff(before, yield* snapshots.take)
            // With nothing allowed, the rows themselves are compared, so that a failure shows what was left.
            if (Object.keys(allowed).length === 0) expect(changes).toEqual({})
            else expect(counts(changes)).toEqual(allowed)
          }))
      }
    }

    it.effect("Idempotency.run: after a fault right after the claim, the key is busy until the pending window passes, then free", () =>
      Effect.gen(function*() {
        const { principal } = yield* principalFor()
        const meeting = yield* meetingOf(principal)
        const work = idempotentWork(principal, meeting.id, `key-${crypto.randomUUID()}`)
        const snapshots = yield* StoreSnapshot
        const before = yield* snapshots.take
        const { exit } = yield* FaultyStore.record(work, { dieAfter: 1 })
        expect(Option.isSome(defectOf(exit))).toBe(true)
        const retry = yield* Effect.flip(work)
        expect(retry._tag).toBe("IdempotencyConflict")
        yield* TestClock.adjust("5 minutes")
        expect((yield* work).replayed).toBe(false)
        // The expired claim was taken over: one record (completed now), and the work done once.
        expect(counts(diff(before, yield* snapshots.take))).toEqual({
          idempotency_records: added(1),
          agenda_items: added(2),
          events: added(2)
        })
      }))
  })
}
