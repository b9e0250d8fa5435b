/** Meetings: create, read, change, end and delete them; contacts, transcript export and templates. */
import { Context, DateTime, Effect, Layer, Schema } from "effect"
import { AgendaItemRow, normalizeSequence } from "../agenda/AgendaItem.js"
import { AgendaItemStore } from "../agenda/AgendaItemStore.js"
import { requireScope } from "../identity/Access.js"
import type { Principal } from "../identity/Identity.js"
import { UserStore } from "../identity/IdentityStore.js"
import { Crypto } from "../shared/Crypto.js"
import { Conflict, NotFound, PlanRequired, ValidationError } from "../shared/Errors.js"
import { AgendaItemId, MeetingId, ParticipantId, TemplateId } from "../shared/Ids.js"
import { clamp, type PageRequest, sliceOf, toList } from "../shared/Pagination.js"
import { LongText, Title } from "../shared/Text.js"
import { monthKey, now, Timestamp } from "../shared/Time.js"
import { Transactor } from "../shared/Transactor.js"
import { trusted } from "../shared/Trusted.js"
import { monthlyMeetingAllowance } from "../workspaces/Plans.js"
import { DetailLevel } from "../workspaces/Workspace.js"
import { Workspaces } from "../workspaces/Workspaces.js"
import { WorkspaceStore } from "../workspaces/WorkspaceStore.js"
import { Contact, Meeting, MeetingStatus, meetingTransitions, ParticipantRow, TranscriptSegment } from "./Meeting.js"
import { MeetingAccess } from "./MeetingAccess.js"
import { type MeetingFilter, MeetingStore } from "./MeetingStore.js"
import { builtInTemplates, findTemplate } from "./Templates.js"

export const MeetingTitle = Title(500)

export class CreateMeeting extends Schema.Class<CreateMeeting>("CreateMeeting")({
  title: MeetingTitle,
  start_time: Schema.optional(Schema.NullOr(Timestamp)),
  end_time: Schema.optional(Schema.NullOr(Timestamp)),
  is_instant: Schema.optional(Schema.Boolean),
  detail_level: Schema.optional(DetailLevel),
  template_id: Schema.optional(Schema.NullOr(TemplateId))
}) {}

export class UpdateMeeting extends Schema.Class<UpdateMeeting>("UpdateMeeting")({
  title: Schema.optional(MeetingTitle),
  start_time: Schema.optional(Schema.NullOr(Timestamp)),
  end_time: Schema.optional(Schema.NullOr(Timestamp)),
  status: Schema.optional(MeetingStatus),
  detail_level: Schema.optional(DetailLevel)
}) {}

export interface MeetingSearch {
  readonly q?: string | undefined
  readonly status?: MeetingStatus | undefined
  readonly start_after?: DateTime.Utc | undefined
  readonly start_before?: DateTime.Utc | undefined
}

export class TranscriptLine extends Schema.Class<TranscriptLine>("TranscriptLine")({
  offset_ms: Schema.NonNegativeInt,
  speaker: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  text: LongText(20_000)
}) {}

const checkTimes = (start: DateTime.Utc | null, end: DateTime.Utc | null) =>
  start !== null && end !== null && DateTime.lessThan(end, start)
    ? Effect.fail(ValidationError.of("end_time", "must not be before start_time"))
    : Effect.void

const clock = (ms: number) => {
  const total = Math.floor(ms / 1000)
  const pad = (n: number) => String(n).padStart(2, "0")
  return `${pad(Math.floor(total / 3600))}:${pad(Math.floor((total % 3600) / 60))}:${pad(total % 60)}`
}

const make = Effect.gen(function*() {
  const store = yield* MeetingStore
  const agenda = yield* AgendaItemStore
  const users = yield* UserStore
  const workspaceStore = yield* WorkspaceStore
  const workspaces = yield* Workspaces
  const access = yield* MeetingAccess
  const transactor = yield* Transactor
  const crypto = yield* Crypto

  const listWith = (principal: Principal, filter: MeetingFilter, order: "created_desc" | "start_asc", request: PageRequest) =>
    Effect.gen(function*() {
      yield* requireScope(principal, "meetings:read")
      const page = clamp(request)
      const slice = yield* store.list(principal.workspace_id, { ...filter, visibleTo: access.visibleTo(principal) }, order, page)
      return toList(slice, page)
    })

  const list = Effect.fn("Meetings.list")(function*(
    principal: Principal,
    filter: { readonly status?: MeetingStatus | undefined },
    page: PageRequest
  ) {
    return yield* listWith(principal, { statuses: filter.status ? [filter.status] : undefined }, "created_desc", page)
  })

  const search = Effect.fn("Meetings.search")(function*(principal: Principal, query: MeetingSearch, page: PageRequest) {
    const q = query.q?.trim()
    return yield* listWith(principal, {
      titleContains: q === undefined || q.length === 0 ? undefined : q,
      statuses: query.status ? [query.status] : undefined,
      startFrom: query.start_after,
      startBefore: query.start_before
    }, "created_desc", page)
  })

  /** Scheduled or running meetings that are not over yet, soonest first. */
  const upcoming = Effect.fn("Meetings.upcoming")(function*(principal: Principal, page: PageRequest) {
    return yield* listWith(principal, { statuses: ["scheduled", "in_progress"], notOverAt: yield* now }, "start_asc", page)
  })

  const get = Effect.fn("Meetings.get")(function*(principal: Principal, id: MeetingId) {
    yield* requireScope(principal, "meetings:read")
    return yield* access.readable(principal, id)
  })

  /**
   * Creates the meeting, its owner participant (the caller, when the caller is a user) and the template's
   * agenda, in one transaction that also takes one unit of the plan's monthly meeting allowance.
   */
  const create = Effect.fn("Meetings.create")(function*(principal: Principal, input: CreateMeeting) {
    yield* requireScope(principal, "meetings:write")
    const workspace = yield* workspaces.get(principal.workspace_id)
    const templateId = input.template_id ?? workspace.default_template_id
    const template = templateId === null ? undefined : findTemplate(templateId)
    if (templateId !== null && template === undefined) {
      return yield* Effect.fail(NotFound.of("meeting template", templateId))
    }
    const at = yield* now
    const instant = input.is_instant === true
    const start = instant ? at : input.start_time ?? null
    const end = input.end_time ?? null
    yield* checkTimes(start, end)
    const meeting = new Meeting({
      id: MeetingId.make(yield* crypto.randomUUID),
      workspace_id: workspace.id,
      title: input.title,
      status: instant ? "in_progress" : "scheduled",
      start_time: start,
      end_time: end,
      is_instant: instant,
      detail_level: input.detail_level ?? template?.detail_level ?? workspace.default_detail_level,
      template_id: templateId,
      owner_user_id: principal.user_id,
      created_at: at,
      updated_at: at
    })
    const allowance = monthlyMeetingAllowance(workspace.plan)
    const items = yield* Effect.forEach(template?.agenda_items ?? [], (item, index) =>
      Effect.map(crypto.randomUUID, (id) =>
        new AgendaItemRow({
          id: AgendaItemId.make(id),
          workspace_id: workspace.id,
          meeting_id: meeting.id,
          title: item.title,
          description: item.description,
          item_type: item.item_type,
          sequence: normalizeSequence(String(index + 1)),
          presenters: [],
          created_at: at,
          updated_at: at
        })))
    const owner = principal.user_id === null ? undefined : new ParticipantRow({
      id: ParticipantId.make(yield* crypto.randomUUID),
      workspace_id: workspace.id,
      meeting_id: meeting.id,
      user_id: principal.user_id,
      guest_email: null,
      role: "OWNER",
      is_attended: false,
      created_at: at,
      updated_at: at
    })
    yield* transactor.withTransaction(Effect.gen(function*() {
      if (allowance !== undefined) {
        const granted = yield* workspaceStore.consume({
          workspaceId: workspace.id,
          counter: "meetings",
          period: monthKey(at),
          limit: allowance
        })
        if (!granted) {
          return yield* Effect.fail(
            new PlanRequired({
              feature: "meetings_per_month",
              current_plan: workspace.plan,
              required_plan: "PRO",
              message: `the ${workspace.plan} plan allows ${allowance} meetings a month; upgrade for more`
            })
          )
        }
      }
      yield* store.insert(meeting)
      if (owner !== undefined) yield* store.addParticipants([owner])
      yield* Effect.forEach(items, agenda.insert, { discard: true })
    }))
    return meeting
  })

  const update = Effect.fn("Meetings.update")(function*(principal: Principal, id: MeetingId, input: UpdateMeeting) {
    yield* requireScope(principal, "meetings:write")
    const current = yield* access.writable(principal, id)
    const at = yield* now
    const status = input.status ?? current.status
    if (status !== current.status && !meetingTransitions[current.status].includes(status)) {
      return yield* Effect.fail(new Conflict({ message: `a meeting cannot go from ${current.status} to ${status}` }))
    }
    let start = input.start_time === undefined ? current.start_time : input.start_time
    let end = input.end_time === undefined ? current.end_time : input.end_time
    // Starting a meeting without a start time starts it now; ending one without an end time ends it now.
    if (status === "in_progress" && current.status !== "in_progress" && start === null) start = at
    if (status === "ended" && current.status !== "ended" && end === null) end = at
    yield* checkTimes(start, end)
    const next = new Meeting({
      ...current,
      title: input.title ?? current.title,
      detail_level: input.detail_level ?? current.detail_level,
      status,
      start_time: start,
      end_time: end,
      updated_at: at
    })
    yield* store.update(next)
    return next
  })

  /** Deletes the meeting with its participants, transcript, agenda items and action items. */
  const remove = Effect.fn("Meetings.delete")(function*(principal: Principal, id: MeetingId) {
    yield* requireScope(principal, "meetings:write")
    yield* access.writable(principal, id, { ownerOnly: true })
    yield* store.delete(principal.workspace_id, id)
  })

  /** The people on the meeting, by e-mail: users with their current name, guests by address. */
  const contacts = Effect.fn("Meetings.contacts")(function*(principal: Principal, id: MeetingId, request: PageRequest) {
    yield* requireScope(principal, "meetings:read")
    yield* access.readable(principal, id)
    const rows = yield* store.listParticipants(principal.workspace_id, id)
    const people = yield* users.getMany(principal.workspace_id, rows.flatMap((r) => (r.user_id === null ? [] : [r.user_id])))
    const byId = new Map(people.map((u) => [u.id, u]))
    const seen = new Set<string>()
    const contacts: Array<Contact> = []
    for (const row of rows) {
      const user = row.user_id === null ? undefined : byId.get(row.user_id)
      const email = user?.email ?? row.guest_email
      if (email === null || seen.has(email)) continue
      seen.add(email)
      contacts.push(
        new Contact({ user_id: row.user_id, name: user?.name ?? email, email, is_guest: row.user_id === null }, trusted)
      )
    }
    const page = clamp(request)
    return toList(sliceOf(contacts, page), page)
  })

  /** Adds spoken segments to the transcript (for hosts that record meetings). */
  const appendTranscript = Effect.fn("Meetings.appendTranscript")(function*(
    principal: Principal,
    id: MeetingId,
    lines: ReadonlyArray<TranscriptLine>
  ) {
    yield* requireScope(principal, "meetings:write")
    yield* access.writable(principal, id)
    const at = yield* now
    yield* store.appendTranscript(
      principal.workspace_id,
      lines.map((line) => new TranscriptSegment({ meeting_id: id, ...line, created_at: at }))
    )
  })

  /** The transcript as plain text, one `[hh:mm:ss] Speaker: text` line per segment; empty when there is none. */
  const exportTranscript = Effect.fn("Meetings.exportTranscript")(function*(principal: Principal, id: MeetingId) {
    yield* requireScope(principal, "meetings:read")
    yield* access.readable(principal, id)
    const segments = yield* store.transcript(principal.workspace_id, id)
    return segments.map((s) => `[${clock(s.offset_ms)}] ${s.speaker}: ${s.text}\n`).join("")
  })

  const templates = Effect.fn("Meetings.templates")(function*(principal: Principal, request: PageRequest) {
    yield* requireScope(principal, "meetings:read")
    const page = clamp(request)
    return toList(sliceOf(builtInTemplates, page), page)
  })

  return {
    list,
    search,
    upcoming,
    get,
    create,
    update,
    delete: remove,
    contacts,
    appendTranscript,
    exportTranscript,
    templates
  } as const
})

export class Meetings extends Context.Tag("@convene/core/Meetings")<Meetings, Effect.Effect.Success<typeof make>>() {
  static readonly layer: Layer.Layer<
    Meetings,
    never,
    MeetingStore | AgendaItemStore | UserStore | WorkspaceStore | Workspaces | MeetingAccess | Transactor | Crypto
  > = Layer.effect(Meetings, make)
}

