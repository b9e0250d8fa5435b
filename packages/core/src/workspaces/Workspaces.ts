/** Provisioning of workspaces (the operator API) and reading them. */
import { Context, Effect, Layer, Schema } from "effect"
import { Crypto } from "../ports/Crypto.js"
import { orNotFound } from "../shared/Errors.js"
import { WorkspaceId } from "../shared/Ids.js"
import { now } from "../shared/Time.js"
import { Plan, Workspace, WorkspaceName } from "./Workspace.js"
import { WorkspaceStore } from "./WorkspaceStore.js"
import { requestBody } from "../shared/Text.js"

export class CreateWorkspace extends Schema.Class<CreateWorkspace>("CreateWorkspace")({
  name: WorkspaceName,
  plan: Plan
}, requestBody) {}

export class UpdateWorkspace extends Schema.Class<UpdateWorkspace>("UpdateWorkspace")({
  name: Schema.optional(WorkspaceName),
  plan: Schema.optional(Plan)
}, requestBody) {}

const make = Effect.gen(function*() {
  const store = yield* WorkspaceStore
  const crypto = yield* Crypto

  const get = Effect.fn("Workspaces.get")(function*(id: WorkspaceId) {
    return yield* store.get(id).pipe(orNotFound("workspace", id))
  })

  const create = Effect.fn("Workspaces.create")(function*(input: CreateWorkspace) {
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

  const update = Effect.fn("Workspaces.update")(function*(id: WorkspaceId, input: UpdateWorkspace) {
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

  return { get, create, update } as const
})

export class Workspaces extends Context.Tag("@convene/core/Workspaces")<
  Workspaces,
  Effect.Effect.Success<typeof make>
>() {
  static readonly layer: Layer.Layer<Workspaces, never, WorkspaceStore | Crypto> = Layer.effect(Workspaces, make)
}
