/**
 * Provisioning of workspaces (the operator API) and reading them: create, change, list and describe them with
 * their counts, and delete one with everything in it.
 */
import { Context, Effect, Layer, Schema } from "effect"
import { Crypto } from "../ports/Crypto.js"
import { Transactor } from "../ports/Transactor.js"
import { NotFound, orNotFound } from "../shared/Errors.js"
import { type TemplateId, WorkspaceId } from "../shared/Ids.js"
import { clamp, type PageRequest, toList } from "../shared/Pagination.js"
import { requestBody } from "../shared/Text.js"
import { now } from "../shared/Time.js"
import { trusted } from "../shared/Trusted.js"
import { type DetailLevel, Plan, Workspace, WorkspaceCounts, WorkspaceName, WorkspaceOverview } from "./Workspace.js"
import { WorkspaceContents } from "./WorkspaceContents.js"
import { WorkspaceStore } from "./WorkspaceStore.js"
import { fn } from "../shared/Span.js"

export class CreateWorkspace extends Schema.Class<CreateWorkspace>("CreateWorkspace")({
  name: WorkspaceName,
  plan: Plan
}, requestBody) {}

export class UpdateWorkspace extends Schema.Class<UpdateWorkspace>("UpdateWorkspace")({
  name: Schema.optional(WorkspaceName),
  plan: Schema.optional(Plan)
}, requestBody) {}

const noCounts = new WorkspaceCounts({ users: 0, meetings: 0, tokens: 0, api_keys: 0 }, trusted)

const make = Effect.gen(function*() {
  const store = yield* WorkspaceStore
  const contents = yield* WorkspaceContents
  const transactor = yield* Transactor
  const crypto = yield* Crypto

  const get = fn("Workspaces.get")(function*(id: WorkspaceId) {
    return yield* store.get(id).pipe(orNotFound("workspace", id))
  })

  /** The workspaces with their counts, taken now. */
  const withCounts = (workspaces: ReadonlyArray<Workspace>) =>
    Effect.gen(function*() {
      const counts = yield* contents.counts(workspaces.map((workspace) => workspace.id), yield* now)
      return workspaces.map((workspace) =>
        new WorkspaceOverview({ ...workspace, counts: counts.get(workspace.id) ?? noCounts }, trusted)
      )
    })

  /** A page of every workspace of the installation with its counts, newest first. */
  const list = fn("Workspaces.list")(function*(request: PageRequest) {
    const page = clamp(request)
    const slice = yield* store.list(page)
    return toList({ items: yield* withCounts(slice.items), total: slice.total }, page)
  })

  /** The workspace with its counts. */
  const overview = fn("Workspaces.overview")(function*(id: WorkspaceId) {
    const [described] = yield* withCounts([yield* get(id)])
    return described!
  })

  const create = fn("Workspaces.create")(function*(input: CreateWorkspace) {
    const at = yield* now
    const workspace = new Workspace({
      id: WorkspaceId.make(yield* crypto.randomUUID),
      name: input.name,
      plan: input.plan,
      default_detail_level: "standard",
      default_template_id: null,
      created_at: at,
      updated_at: at
    })
    yield* store.insert(workspace)
    return workspace
  })

  const update = fn("Workspaces.update")(function*(id: WorkspaceId, input: UpdateWorkspace) {
    const current = yield* get(id)
    const next = new Workspace({
      ...current,
      name: input.name ?? current.name,
      plan: input.plan ?? current.plan,
      updated_at: yield* now
    })
    yield* store.update(next)
    return next
  })

  /**
   * Changes the workspace's own settings (its administrators' PATCH /v1/workspace): the name and the defaults a new
   * meeting takes when its request gives none. What `input` leaves out is kept; a `default_template_id` of null
   * clears it. Which templates exist is the meetings room's rule: the caller checks the id first.
   */
  const updateSettings = fn("Workspaces.updateSettings")(function*(id: WorkspaceId, input: {
    readonly name?: string | undefined
    readonly default_detail_level?: DetailLevel | undefined
    readonly default_template_id?: TemplateId | null | undefined
  }) {
    const current = yield* get(id)
    const next = new Workspace({
      ...current,
      name: input.name ?? current.name,
      default_detail_level: input.default_detail_level ?? current.default_detail_level,
      default_template_id: input.default_template_id === undefined ? current.default_template_id : input.default_template_id,
      updated_at: yield* now
    })
    yield* store.update(next)
    return next
  })

  /**
   * Deletes the workspace with everything in it (users, their tokens, API keys, meetings with everything on
   * them, idempotency records, usage counters), in one transaction: every credential of it stops working at once.
   * The transaction locks the workspace first, so it waits for the creations that share it (see `within`) and the
   * ones that come later find it gone; nothing is written into it while it goes. Of two deletions at once, the
   * second finds nothing left and answers NotFound.
   */
  const remove = fn("Workspaces.delete")(function*(id: WorkspaceId) {
    yield* get(id)
    yield* transactor.withTransaction(Effect.gen(function*() {
      yield* store.lock(id)
      yield* contents.deleteAll(id)
      if (!(yield* store.delete(id))) return yield* Effect.fail(NotFound.of("workspace", id))
    }))
  })

  /**
   * Runs `effect`, which writes into the workspace, in one transaction that shares the workspace with other such
   * writes and holds it against its deletion (WorkspaceStore.share): NotFound when the workspace is gone, even
   * when a deletion committed after the caller last read it. Without it a row written while the workspace is
   * deleted would be left behind, or break the deletion.
   */
  const within = <A, E, R>(id: WorkspaceId, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | NotFound, R> =>
    transactor.withTransaction(Effect.gen(function*() {
      if (!(yield* store.share(id))) return yield* Effect.fail(NotFound.of("workspace", id))
      return yield* effect
    }))

  return { get, list, overview, create, update, updateSettings, delete: remove, within } as const
})

export class Workspaces extends Context.Tag("@convene/core/Workspaces")<
  Workspaces,
  Effect.Effect.Success<typeof make>
>() {
  static readonly layer: Layer.Layer<Workspaces, never, WorkspaceStore | WorkspaceContents | Transactor | Crypto> = Layer
    .effect(Workspaces, make)
}
