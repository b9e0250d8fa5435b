/**
 * The partner user context's own rules (partner-api.md "User context", decisions.md), beside the first-party
 * services it reuses with the token's principal (meetings, agenda items, backlog items, attachments): the meeting
 * list item, the agenda of one meeting (an item addressed through another meeting is 404), the transcript in SRT
 * behind the ELITE plan, and the next steps and action buttons of the toolkits installed in the meeting's workspace
 * (of the calling app's toolkits, each in the version its installation has in use), and the trigger of a button.
 *
 * Decisions where the documents are silent (the trigger):
 * - A button is triggered through the meeting of the workspace it is installed in: its id must be one of the calling
 *   app's buttons there (`<toolkit_id>:<key>`, as listed); any other id, another app's button included, is 404, as is
 *   a meeting the user does not see. Scope meetings:write.
 * - The answer is 202 `{invocation_id}` (a fresh UUID). In the same unit of work the app's webhook URL is sent
 *   `action_button.triggered` in the partner envelope (workspace_id the meeting's) with data `{invocation_id,
 *   button_id, meeting_id, user_id, occurred_at}`, signed like every partner webhook. As for the other partner events,
 *   nothing is enqueued (and the answer is still 202) when the app has no webhook URL or secret, or its webhook filter
 *   leaves `action_button.triggered` out (PartnerEvents.tellApp).
 * - The route is idempotent: a retry with the same Idempotency-Key replays the first answer (the same invocation_id)
 *   and enqueues nothing again.
 */
import { Context, DateTime, Effect, Layer, Schema, Struct } from "effect"
import { EventId } from "../events/Event.js"
import { requireScope } from "../identity/Access.js"
import type { Principal } from "../identity/Identity.js"
import { NotFound, orNotFound, PlanRequired } from "../shared/Errors.js"
import type { AgendaItemId, MeetingId } from "../shared/Ids.js"
import { clamp, type PageRequest, sliceOf, toList } from "../shared/Pagination.js"
import { now, Timestamp } from "../shared/Time.js"
import { Crypto } from "../ports/Crypto.js"
import { Transactor } from "../ports/Transactor.js"
import { WebhookStore } from "../webhooks/WebhookStore.js"
import { trusted } from "../shared/Trusted.js"
import { fn } from "../shared/Span.js"
import { AgendaItems } from "../agenda/AgendaItems.js"
import { CreateAgendaItem, type UpdateAgendaItem } from "../agenda/AgendaItems.js"
import { requestBody } from "../shared/Text.js"
import { MeetingStatus } from "../meetings/Meeting.js"
import { MeetingAccess } from "../meetings/MeetingAccess.js"
import { Meetings } from "../meetings/Meetings.js"
import { MeetingStore } from "../meetings/MeetingStore.js"
import { atLeast } from "../workspaces/Plans.js"
import { WorkspaceStore } from "../workspaces/WorkspaceStore.js"
import type { PartnerApp, PartnerAppId } from "./PartnerApp.js"
import { tellApp } from "./PartnerEvents.js"
import { type Installed, Toolkits } from "./toolkits/Toolkits.js"
import { MeetingId as MeetingIdSchema } from "../shared/Ids.js"

/** A meeting as the partner's list shows it (partner-api.md: id, title, scheduled_start, scheduled_end, status). */
export class PartnerMeeting extends Schema.Class<PartnerMeeting>("PartnerMeeting")({
  id: MeetingIdSchema,
  title: Schema.String,
  scheduled_start: Schema.NullOr(Timestamp).annotations({ description: "the meeting's start_time" }),
  scheduled_end: Schema.NullOr(Timestamp).annotations({ description: "the meeting's end_time" }),
  status: MeetingStatus
}) {}

/** POST /v1/partner/user/meetings/{id}/agenda-items: the first-party create request, the meeting in the path. */
export class CreatePartnerAgendaItem extends Schema.Class<CreatePartnerAgendaItem>("CreatePartnerAgendaItem")(
  Struct.omit(CreateAgendaItem.fields, "meeting_id"),
  requestBody
) {}

/** A next step of an installed toolkit (decisions.md). */
export class NextStep extends Schema.Class<NextStep>("NextStep")({
  key: Schema.String,
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  toolkit_id: Schema.String
}) {}

/** An action button of an installed toolkit (decisions.md). */
export class ActionButton extends Schema.Class<ActionButton>("ActionButton")({
  id: Schema.String,
  key: Schema.String,
  label: Schema.String,
  url: Schema.String,
  toolkit_id: Schema.String
}) {}

/** The transcript export needs this plan or higher (decisions.md: ELITE or ENTERPRISE). */
export const transcriptExportFrom = "ELITE" as const

const two = (n: number) => String(n).padStart(2, "0")

/** `hh:mm:ss,mmm`, SRT's time. */
const srtTime = (ms: number) =>
  `${two(Math.floor(ms / 3_600_000))}:${two(Math.floor(ms / 60_000) % 60)}:${two(Math.floor(ms / 1000) % 60)},${
    String(ms % 1000).padStart(3, "0")
  }`

/** How long the last cue is shown (nothing follows it to end it). */
export const lastCueMs = 5_000

/**
 * The transcript as SubRip: one cue per segment, numbered from 1, starting at its offset and ending where the next
 * segment starts (the last after `lastCueMs`; a cue is never shorter than 1 ms), the text `Speaker: text` with line
 * breaks kept inside the cue (blank lines, which would end it, are dropped). CRLF line ends, as most players
 * expect; empty when there is no segment.
 */
export const toSrt = (segments: ReadonlyArray<{ readonly offset_ms: number; readonly speaker: string; readonly text: string }>) =>
  segments.map((segment, index) => {
    const next = segments[index + 1]
    const end = Math.max(segment.offset_ms + 1, next === undefined ? segment.offset_ms + lastCueMs : next.offset_ms)
    const text = `${segment.speaker}: ${segment.text}`.split(/\r\n|\r|\n/).filter((line) => line.trim() !== "").join("\r\n")
    return `${index + 1}\r\n${srtTime(segment.offset_ms)} --> ${srtTime(end)}\r\n${text}\r\n`
  }).join("\r\n")

const make = Effect.gen(function*() {
  const meetings = yield* Meetings
  const agenda = yield* AgendaItems
  const access = yield* MeetingAccess
  const store = yield* MeetingStore
  const workspaces = yield* WorkspaceStore
  const toolkits = yield* Toolkits
  const transactor = yield* Transactor
  const outbox = yield* WebhookStore
  const crypto = yield* Crypto

  /** The meetings the user sees, newest first, as list items. */
  const listMeetings = fn("PartnerUserContext.listMeetings")(function*(principal: Principal, page: PageRequest) {
    const listed = yield* meetings.list(principal, {}, page)
    return {
      ...listed,
      items: listed.items.map((meeting) =>
        new PartnerMeeting({
          id: meeting.id,
          title: meeting.title,
          scheduled_start: meeting.start_time,
          scheduled_end: meeting.end_time,
          status: meeting.status
        })
      )
    }
  })

  /** The agenda of the meeting (404 when the user does not see it), in `sequence` order. */
  const listAgenda = fn("PartnerUserContext.listAgenda")(function*(principal: Principal, meetingId: MeetingId, page: PageRequest) {
    return yield* agenda.list(principal, { meeting_id: meetingId }, page)
  })

  /** Adds an item to the meeting (appended when `sequence` is left out). */
  const createAgendaItem = fn("PartnerUserContext.createAgendaItem")(function*(
    principal: Principal,
    meetingId: MeetingId,
    input: CreatePartnerAgendaItem
  ) {
    return yield* agenda.create(principal, new CreateAgendaItem({ ...input, meeting_id: meetingId }, { disableValidation: true }))
  })

  /** Changes an item of the meeting; an item of another meeting is 404 (as is one the user does not see). */
  const updateAgendaItem = fn("PartnerUserContext.updateAgendaItem")(function*(
    principal: Principal,
    meetingId: MeetingId,
    id: AgendaItemId,
    input: UpdateAgendaItem
  ) {
    const item = yield* agenda.get(principal, id)
    if (item.meeting_id !== meetingId) return yield* Effect.fail(NotFound.of("agenda item", id))
    return yield* agenda.update(principal, id, input)
  })

  /** The transcript in SRT; the workspace's plan must be ELITE or higher (402 otherwise). */
  const exportTranscript = fn("PartnerUserContext.exportTranscript")(function*(principal: Principal, meetingId: MeetingId) {
    yield* requireScope(principal, "meetings:read")
    const meeting = yield* access.readable(principal, meetingId)
    const workspace = yield* workspaces.get(principal.workspace_id).pipe(orNotFound("workspace", principal.workspace_id))
    if (!atLeast(workspace.plan, transcriptExportFrom)) {
      return yield* Effect.fail(
        new PlanRequired({
          feature: "transcript_export",
          current_plan: workspace.plan,
          required_plan: transcriptExportFrom,
          message: `transcript export needs the ${transcriptExportFrom} plan or higher`
        })
      )
    }
    return toSrt(yield* store.transcript(principal.workspace_id, meeting.id))
  })

  /**
   * What `pick` takes from each of the app's toolkits installed in the meeting's workspace, by toolkit id, in manifest
   * order, as a page (another app's toolkits are that app's business: its titles and URLs are not shown to this one).
   */
  const fromInstalledToolkits = <A>(
    principal: Principal,
    appId: PartnerAppId,
    meetingId: MeetingId,
    request: PageRequest,
    pick: (installed: Installed) => ReadonlyArray<A>
  ) =>
    Effect.gen(function*() {
      yield* requireScope(principal, "meetings:read")
      const meeting = yield* access.readable(principal, meetingId)
      const items = (yield* toolkits.installedIn(meeting.workspace_id, appId)).flatMap(pick)
      const page = clamp(request)
      return toList(sliceOf(items, page), page)
    })

  /** The next steps of the app's installed toolkits (fromInstalledToolkits). */
  const nextSteps = fn("PartnerUserContext.nextSteps")(function*(
    principal: Principal,
    appId: PartnerAppId,
    meetingId: MeetingId,
    request: PageRequest
  ) {
    return yield* fromInstalledToolkits(principal, appId, meetingId, request, ({ manifest, toolkit_id }) =>
      (manifest.next_steps ?? []).map((step) =>
        new NextStep({ key: step.key, title: step.title, description: step.description ?? null, toolkit_id }, trusted)
      ))
  })

  /**
   * The action buttons of the app's installed toolkits (fromInstalledToolkits); a button's id is `<toolkit_id>:<key>`,
   * the same in every version of the toolkit.
   */
  const actionButtons = fn("PartnerUserContext.actionButtons")(function*(
    principal: Principal,
    appId: PartnerAppId,
    meetingId: MeetingId,
    request: PageRequest
  ) {
    return yield* fromInstalledToolkits(principal, appId, meetingId, request, ({ manifest, toolkit_id }) =>
      (manifest.action_buttons ?? []).map((button) =>
        new ActionButton({ id: `${toolkit_id}:${button.key}`, key: button.key, label: button.label, url: button.url, toolkit_id }, trusted)
      ))
  })

  /**
   * Triggers the action button `buttonId` (`<toolkit_id>:<key>`) of the app's toolkits installed in the meeting's
   * workspace (404 for any other id, another app's buttons included): a fresh invocation id, and
   * `action_button.triggered` enqueued for the app's webhook URL in one unit of work (see the module's decisions).
   */
  const trigger = fn("PartnerUserContext.trigger")(function*(
    principal: Principal,
    app: PartnerApp,
    meetingId: MeetingId,
    buttonId: string
  ) {
    yield* requireScope(principal, "meetings:write")
    const meeting = yield* access.readable(principal, meetingId)
    const buttons = (yield* toolkits.installedIn(meeting.workspace_id, app.id)).flatMap(({ manifest, toolkit_id }) =>
      (manifest.action_buttons ?? []).map((button) => `${toolkit_id}:${button.key}`)
    )
    if (!buttons.includes(buttonId)) return yield* Effect.fail(NotFound.of("action button", buttonId))
    const invocationId = yield* crypto.randomUUID
    const eventId = EventId.make(yield* crypto.randomUUID)
    const at = yield* now
    yield* transactor.withTransaction(
      tellApp(app, {
        type: "action_button.triggered",
        id: eventId,
        workspaceId: meeting.workspace_id,
        occurredAt: at,
        data: {
          invocation_id: invocationId,
          button_id: buttonId,
          meeting_id: meeting.id,
          user_id: principal.user_id,
          occurred_at: DateTime.formatIso(at)
        }
      })
    ).pipe(Effect.provideService(WebhookStore, outbox), Effect.provideService(Crypto, crypto))
    return { invocation_id: invocationId } as const
  })

  return { listMeetings, listAgenda, createAgendaItem, updateAgendaItem, exportTranscript, nextSteps, actionButtons, trigger } as const
})

export class PartnerUserContext extends Context.Tag("@convene/core/PartnerUserContext")<
  PartnerUserContext,
  Effect.Effect.Success<typeof make>
>() {
  static readonly layer: Layer.Layer<
    PartnerUserContext,
    never,
    Meetings | AgendaItems | MeetingAccess | MeetingStore | WorkspaceStore | Toolkits | Transactor | WebhookStore | Crypto
  > =
    Layer.effect(PartnerUserContext, make)
}
