/** Meetings: create, read, change, end and delete them; contacts, transcript export and templates. */
import { Context, DateTime, Effect, Layer, Schema } from "effect"
import { requireScope } from "../identity/Access.js"
import type { Principal } from "../identity/Identity.js"
import { UserStore } from "../identity/IdentityStore.js"
import { Events } from "../events/Events.js"
import { Crypto } from "../ports/Crypto.js"
import { Transactor } from "../ports/Transactor.js"
import { Conflict, NotFound, PlanRequired, ValidationError } from "../shared/Errors.js"
import { MeetingId, ParticipantId, TemplateId } from "../shared/Ids.js"
import { clamp, type PageRequest, sliceOf, toList } from "../shared/Pagination.js"
import { LongText, requestBody, Text, Title } from "../shared/Text.js"
import { monthKey, now, Timestamp } from "../shared/Time.js"
import { trusted } from "../shared/Trusted.js"
import { monthlyMeetingAllowance } from "../workspaces/Plans.js"
import { DetailLevel } from "../workspaces/Workspace.js"
import { Workspaces } from "../workspaces/Workspaces.js"
import { WorkspaceStore } from "../workspaces/WorkspaceStore.js"
import { Contact, Meeting, MeetingStatus, meetingTransitions, ParticipantRow, TranscriptSegment } from "./Meeting.js"
import { MeetingAccess } from "./MeetingAccess.js"
import { MeetingContents } from "./MeetingContents.js"
import { and, MeetingFilter, upcoming as upcomingAt } from "./MeetingFilter.js"
import { MeetingStore, type MeetingOrder } from "./MeetingStore.js"
import { templateCatalog } from "./Templates.js"
import { fn } from "../shared/Span.js"
import type { ToolkitStore } from "../partner/toolkits/ToolkitStore.js"

export const MeetingTitle = Title(500)

/** A search text: trimmed, at most 500 characters; empty means no text filter. */
export const SearchText = Schema.compose(Text, Schema.Trim).pipe(
  Schema.maxLength(500, { message: () => "must be at most 500 characters" })
)

export class CreateMeeting extends Schema.Class<CreateMeeting>("CreateMeeting")({
  title: MeetingTitle,
  start_time: Schema.optional(Schema.NullOr(Timestamp)),
  end_time: Schema.optional(Schema.NullOr(Timestamp)),
  is_instant: Schema.optional(Schema.Boolean),
  detail_level: Schema.optional(DetailLevel),
  template_id: Schema.optional(Schema.NullOr(TemplateId))
}, requestBody) {}

export class UpdateMeeting extends Schema.Class<UpdateMeeting>("UpdateMeeting")({
  title: Schema.optional(MeetingTitle),
  start_time: Schema.optional(Schema.NullOr(Timestamp)),
  end_time: Schema.optional(Schema.NullOr(Timestamp)),
  status: Schema.optional(MeetingStatus),
  detail_level: Schema.optional(DetailLevel)
}, requestBody) {}

export interface MeetingSearch {
  /** Title contains, case-insensitively (decode it with SearchText). */
  readonly q?: string | undefined
  readonly status?: MeetingStatus | undefined
  readonly start_after?: DateTime.Utc | undefined
  readonly start_before?: DateTime.Utc | undefined
}

export class TranscriptLine extends Schema.Class<TranscriptLine>("TranscriptLine")({
  offset_ms: Schema.NonNegativeInt,
  speaker: Title(200),
  text: LongText(20_000)
}, requestBody) {}

/** An end before the start is refused, naming `blame`: the field the request set that made it so. */
const checkTimes = (start: DateTime.Utc | null, end: DateTime.Utc | null, blame: "start_time" | "end_time") => {
  if (start === null || end === null || !DateTime.lessThan(end, start)) return Effect.void
  return Effect.fail(
    blame === "start_time"
      ? ValidationError.of("start_time", `must not be after the meeting's end_time (${DateTime.formatIso(end)})`)
      : ValidationError.of("end_time", `must not be before the meeting's start_time (${DateTime.formatIso(start)})`)
  )
}

const transitionRefused = (from: MeetingStatus, to: MeetingStatus) => {
  const allowed = meetingTransitions[from]
  return new Conflict({
    message: allowed.length === 0
      ? `the meeting is ${from}, which is final: it cannot go to ${to}`
      : `a meeting cannot go from ${from} to ${to}; from ${from} it can go to ${allowed.join(" or ")}`
  })
}

/**
 * The times a change leaves a meeting with. Times the request gives win; the rest records what happened:
 * - starting it (to in_progress) sets start_time to now, and a planned end_time moves with it, keeping the
 *   planned length (an end planned without a start that has already passed is dropped);
 * - ending it (to ended) sets end_time to now, and a start_time that is unset or later than that end becomes
 *   the end too (a meeting ended before its planned start took place at that instant);
 * - other changes (cancel, restore, title) leave the times as they are.
 */
export const timesAfter = (
  current: Meeting,
  status: MeetingStatus,
  input: { readonly start_time?: DateTime.Utc | null | undefined; readonly end_time?: DateTime.Utc | null | undefined },
  at: DateTime.Utc
): { readonly start_time: DateTime.Utc | null; readonly end_time: DateTime.Utc | null } => {
  const starting = status === "in_progress" && current.status !== "in_progress"
  const ending = status === "ended" && current.status !== "ended"
  let start = input.start_time !== undefined ? input.start_time : starting ? at : current.start_time
  let end = input.end_time !== undefined ? input.end_time : current.end_time
  if (
    starting && input.end_time === undefined && start !== null && current.start_time !== null &&
    current.end_time !== null
  ) {
    end = DateTime.addDuration(start, DateTime.distanceDuration(current.start_time, current.end_time))
  }
  if (starting && input.end_time === undefined && start !== null && end !== null && DateTime.lessThan(end, start)) {
    end = null
  }
  if (ending) {
    if (input.end_time === undefined) end = at
    if (input.start_time === undefined && end !== null && (start === null || DateTime.lessThan(end, start))) start = end
  }
  return { start_time: start, end_time: end }
}

const clock = (ms: number) => {
  const total = Math.floor(ms / 1000)
  const pad = (n: number) => String(n).padStart(2, "0")
  return `${pad(Math.floor(total / 3600))}:${pad(Math.floor((total % 3600) / 60))}:${pad(total % 60)}`
}

const make = Effect.gen(function*() {
  const store = yield* MeetingStore
  const contents = yield* MeetingContents
  const users = yield* UserStore
  const workspaceStore = yield* WorkspaceStore
  const workspaces = yield* Workspaces
  const access = yield* MeetingAccess
  const transactor = yield* Transactor
  const crypto = yield* Crypto
  const events = yield* Events
  const catalog = yield* templateCatalog
  const recordMeeting = events.recordOf(Meeting)

  /** A page of the meetings the caller can see among those `filter` passes. */
  const listWith = (principal: Principal, filter: MeetingFilter, order: MeetingOrder, request: PageRequest) =>
    Effect.gen(function*() {
      yield* requireScope(principal, "meetings:read")
      const page = clamp(request)
      const slice = yield* store.list(principal.workspace_id, and(access.visibleTo(principal), filter), order, page)
      return toList(slice, page)
    })

  const statusIs = (status: MeetingStatus | undefined) =>
    status === undefined ? MeetingFilter.All() : MeetingFilter.StatusIn({ statuses: [status] })

  const list = fn("Meetings.list")(function*(
    principal: Principal,
    filter: { readonly status?: MeetingStatus | undefined },
    page: PageRequest
  ) {
    return yield* listWith(principal, statusIs(filter.status), "created_desc", page)
  })

  const search = fn("Meetings.search")(function*(principal: Principal, query: MeetingSearch, page: PageRequest) {
    const q = query.q?.trim() ?? ""
    return yield* listWith(
      principal,
      and(
        q.length === 0 ? MeetingFilter.All() : MeetingFilter.TitleContains({ text: q }),
        statusIs(query.status),
        query.start_after === undefined
          ? MeetingFilter.All()
          : MeetingFilter.AtOrAfter({ field: "start_time", at: query.start_after }),
        query.start_before === undefined
          ? MeetingFilter.All()
          : MeetingFilter.Before({ field: "start_time", at: query.start_before })
      ),
      "created_desc",
      page
    )
  })

  /** Scheduled or running meetings that are not over yet (MeetingFilter.upcoming), soonest first. */
  const upcoming = fn("Meetings.upcoming")(function*(principal: Principal, page: PageRequest) {
    return yield* listWith(principal, upcomingAt(yield* now), "start_asc", page)
  })

  const get = fn("Meetings.get")(function*(principal: Principal, id: MeetingId) {
    yield* requireScope(principal, "meetings:read")
    return yield* access.readable(principal, id)
  })

  /**
   * Creates the meeting, its owner participant (the caller, when the caller is a user) and the template's
   * agenda, in one transaction that also takes one unit of the plan's monthly meeting allowance.
   */
  const create = fn("Meetings.create")(function*(principal: Principal, input: CreateMeeting) {
    yield* requireScope(principal, "meetings:write")
    const workspace = yield* workspaces.get(principal.workspace_id)
    const named = input.template_id ?? null
    const wanted = named ?? workspace.default_template_id
    const template = wanted === null ? undefined : yield* catalog.find(workspace.id, wanted)
    // A template named by the request must exist; a default that is gone (its toolkit's installed version no longer
    // has it) is passed over: the meeting starts with no template.
    if (named !== null && template === undefined) return yield* Effect.fail(NotFound.of("meeting template", named))
    const templateId = template === undefined ? null : template.id
    const at = yield* now
    const instant = input.is_instant === true
    if (instant && input.start_time !== undefined && input.start_time !== null) {
      return yield* Effect.fail(ValidationError.of("start_time", "an instant meeting starts now; give start_time or is_instant, not both"))
    }
    const start = instant ? at : input.start_time ?? null
    const end = input.end_time ?? null
    yield* checkTimes(start, end, "end_time")
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
    // Held against the workspace's deletion, which may have begun since it was read above.
    yield* workspaces.within(workspace.id, Effect.gen(function*() {
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
      if (template !== undefined) yield* contents.seed(meeting, template.agenda_items)
      yield* recordMeeting(principal, "meeting.created", meeting)
    }))
    return meeting
  })

  const update = fn("Meetings.update")(function*(principal: Principal, id: MeetingId, input: UpdateMeeting) {
    yield* requireScope(principal, "meetings:write")
    const current = yield* access.writable(principal, id)
    const at = yield* now
    const status = input.status ?? current.status
    if (status !== current.status && !meetingTransitions[current.status].includes(status)) {
      return yield* Effect.fail(transitionRefused(current.status, status))
    }
    const times = timesAfter(current, status, input, at)
    // The end is blamed unless the request moved only the start.
    const blame = input.start_time !== undefined && input.end_time === undefined ? "start_time" : "end_time"
    yield* checkTimes(times.start_time, times.end_time, blame)
    const next = new Meeting({
      ...current,
      title: input.title ?? current.title,
      detail_level: input.detail_level ?? current.detail_level,
      status,
      ...times,
      updated_at: at
    })
    // Ending a meeting is meeting.ended; every other change meeting.updated (one event per change).
    const ended = status === "ended" && current.status !== "ended"
    yield* transactor.withTransaction(Effect.zipRight(
      store.update(next),
      recordMeeting(principal, ended ? "meeting.ended" : "meeting.updated", next)
    ))
    return next
  })

  /** Deletes the meeting with its participants and transcript, and everything other rooms keep on it. */
  const remove = fn("Meetings.delete")(function*(principal: Principal, id: MeetingId) {
    yield* requireScope(principal, "meetings:write")
    yield* access.writable(principal, id, { ownerOnly: true })
    yield* transactor.withTransaction(Effect.gen(function*() {
      yield* contents.deleteAll(principal.workspace_id, id)
      yield* store.delete(principal.workspace_id, id)
      yield* events.record(principal, "meeting.deleted", { id, workspace_id: principal.workspace_id })
    }))
  })

  /** The people on the meeting, by e-mail: users with their current name, guests by address. */
  const contacts = fn("Meetings.contacts")(function*(principal: Principal, id: MeetingId, request: PageRequest) {
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
  const appendTranscript = fn("Meetings.appendTranscript")(function*(
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
  const exportTranscript = fn("Meetings.exportTranscript")(function*(principal: Principal, id: MeetingId) {
    yield* requireScope(principal, "meetings:read")
    yield* access.readable(principal, id)
    const segments = yield* store.transcript(principal.workspace_id, id)
    return segments.map((s) => `[${clock(s.offset_ms)}] ${s.speaker}: ${s.text}\n`).join("")
  })

  const templates = fn("Meetings.templates")(function*(principal: Principal, request: PageRequest) {
    yield* requireScope(principal, "meetings:read")
    const page = clamp(request)
    return toList(sliceOf(yield* catalog.list(principal.workspace_id), page), page)
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
    | MeetingStore
    | MeetingContents
    | UserStore
    | WorkspaceStore
    | Workspaces
    | MeetingAccess
    | ToolkitStore
    | Transactor
    | Crypto
    | Events
  > = Layer.effect(Meetings, make)
}

