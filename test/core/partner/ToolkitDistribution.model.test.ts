/**
 * Toolkit versions, publish and installations against a simple model (fast-check commands, on the memory store): for
 * any sequence of toolkit creations (installing themselves on new workspaces or not), new versions, publishes in each
 * mode, opt-outs and opt-ins, new connections and runs of the distribution, each publish's counts and every toolkit's
 * installations (workspace, version, status) are the model's. Keys are each toolkit's own, so no installation fails
 * here (failures are Toolkits.test.ts's).
 */
import {
  CreatePartnerApp,
  CreateToolkit,
  CreateToolkitVersion,
  CreateWorkspace,
  type PartnerApp,
  PartnerApps,
  PartnerStore,
  PublishToolkitVersion,
  type ToolkitId,
  Toolkits,
  type ToolkitVersionId,
  type WorkspaceId,
  Workspaces
} from "@convene/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc, ManagedRuntime, Option } from "effect"
import { ToolkitsLive } from "./toolkit-fixtures.js"


type Mode = "none" | "normal" | "force"
type Status = "pending" | "installed" | "failed" | "outdated"

interface ModelInstallation {
  version: number
  inUse: number | null
  status: Status
}

interface ModelToolkit {
  readonly autoInstall: boolean
  versions: number
  published: number | null
  readonly installations: Map<number, ModelInstallation>
}

interface Model {
  readonly toolkits: Array<ModelToolkit>
  /** Connected workspaces, by index; the opted-out ones. */
  workspaces: number
  readonly optedOut: Set<number>
}

interface Real {
  readonly run: <A, E>(effect: Effect.Effect<A, E, Toolkits | PartnerApps | Workspaces>) => Promise<A>
  readonly app: PartnerApp
  readonly toolkits: Array<{ readonly id: ToolkitId; readonly versions: Array<ToolkitVersionId> }>
  readonly workspaces: Array<WorkspaceId>
}

/** Every toolkit's installations, real and modelled, as comparable rows. */
const check = async (model: Model, real: Real) => {
  for (const [index, toolkit] of model.toolkits.entries()) {
    const { id, versions } = real.toolkits[index]!
    const listed = await real.run(Effect.flatMap(Toolkits, (toolkits) => toolkits.installations(real.app, id)))
    const actual = listed.items
      .map((item) => ({ workspace: real.workspaces.indexOf(item.workspace_id), version: versions.indexOf(item.version_id) + 1, status: item.status }))
      .sort((a, b) => a.workspace - b.workspace)
    const expected = [...toolkit.installations].map(([workspace, installation]) => ({
      workspace,
      version: installation.status === "outdated" ? installation.inUse! : installation.version,
      status: installation.status
    })).sort((a, b) => a.workspace - b.workspace)
    expect(actual).toEqual(expected)
  }
}

class Create implements fc.AsyncCommand<Model, Real> {
  constructor(readonly autoInstall: boolean) {}
  check = () => true
  async run(model: Model, real: Real) {
    const index = model.toolkits.length
    const manifest = { schema_version: 1, name: `Kit ${index}`, next_steps: [{ key: `t${index}-v1`, title: "Step" }] }
    const autoInstall = this.autoInstall
    const toolkit = await real.run(Effect.gen(function*() {
      const toolkits = yield* Toolkits
      const created = yield* toolkits.create(real.app, new CreateToolkit({ manifest }))
      return yield* toolkits.patch(real.app, created.id, { auto_install_on_new_workspaces: autoInstall })
    }))
    real.toolkits.push({ id: toolkit.id, versions: [toolkit.latest_version_id] })
    model.toolkits.push({ autoInstall: this.autoInstall, versions: 1, published: null, installations: new Map() })
    await check(model, real)
  }
  toString = () => `Create(${this.autoInstall})`
}

class Version implements fc.AsyncCommand<Model, Real> {
  constructor(readonly pick: number) {}
  check = (model: Readonly<Model>) => model.toolkits.length > 0
  async run(model: Model, real: Real) {
    const index = this.pick % model.toolkits.length
    const toolkit = model.toolkits[index]!
    const number = toolkit.versions + 1
    // A key of the toolkit's own for each version: the older keys are dropped, so force is needed once installed.
    const manifest = { schema_version: 1, name: `Kit ${index}`, next_steps: [{ key: `t${index}-v${number}`, title: "Step" }] }
    const version = await real.run(Effect.flatMap(Toolkits, (toolkits) =>
      toolkits.createVersion(real.app, real.toolkits[index]!.id, new CreateToolkitVersion({ manifest, force: true }))))
    expect(version.number).toBe(number)
    real.toolkits[index]!.versions.push(version.id)
    toolkit.versions = number
    await check(model, real)
  }
  toString = () => `Version(${this.pick})`
}

class Publish implements fc.AsyncCommand<Model, Real> {
  constructor(readonly pick: number, readonly version: number, readonly mode: Mode) {}
  check = (model: Readonly<Model>) => model.toolkits.length > 0
  async run(model: Model, real: Real) {
    const index = this.pick % model.toolkits.length
    const toolkit = model.toolkits[index]!
    const number = (this.version % toolkit.versions) + 1
    const { id, versions } = real.toolkits[index]!
    const published = await real.run(Effect.flatMap(Toolkits, (toolkits) =>
      toolkits.publish(real.app, id, versions[number - 1]!, new PublishToolkitVersion({ propagation: this.mode }))))
    toolkit.published = number
    let queued = 0
    let skipped = 0
    const fresh = toolkit.autoInstall
      ? Array.from({ length: model.workspaces }, (_, w) => w).filter((w) => !toolkit.installations.has(w))
      : []
    for (const workspace of [...toolkit.installations.keys(), ...fresh]) {
      const current = toolkit.installations.get(workspace)
      const optedOut = this.mode === "normal" && model.optedOut.has(workspace)
      if (this.mode === "force" || (this.mode === "normal" && !optedOut)) {
        queued++
        toolkit.installations.set(workspace, { version: number, inUse: current?.inUse ?? null, status: "pending" })
        continue
      }
      if (optedOut) skipped++
      if (current !== undefined && current.inUse !== null && current.inUse !== number && current.status === "installed") {
        current.status = "outdated"
      }
    }
    expect(published.propagation).toEqual({ mode: this.mode, workspaces_queued: queued, workspaces_skipped_opted_out: skipped })
    await check(model, real)
  }
  toString = () => `Publish(${this.pick}, ${this.version}, ${this.mode})`
}

class OptOut implements fc.AsyncCommand<Model, Real> {
  constructor(readonly pick: number, readonly out: boolean) {}
  check = (model: Readonly<Model>) => model.workspaces > 0
  async run(model: Model, real: Real) {
    const workspace = this.pick % model.workspaces
    await real.run(Effect.flatMap(Toolkits, (toolkits) => toolkits.setAutoUpdates(real.workspaces[workspace]!, !this.out)))
    if (this.out) model.optedOut.add(workspace)
    else model.optedOut.delete(workspace)
    await check(model, real)
  }
  toString = () => `OptOut(${this.pick}, ${this.out})`
}

class Connect implements fc.AsyncCommand<Model, Real> {
  check = () => true
  async run(model: Model, real: Real) {
    const workspace = await real.run(Effect.gen(function*() {
      const created = yield* (yield* Workspaces).create(new CreateWorkspace({ name: "Client", plan: "PRO" }))
      yield* (yield* PartnerApps).connectWorkspace(real.app.id, created.id)
      return created.id
    }))
    real.workspaces.push(workspace)
    const index = model.workspaces++
    for (const toolkit of model.toolkits) {
      if (toolkit.autoInstall && toolkit.published !== null) {
        toolkit.installations.set(index, { version: toolkit.published, inUse: null, status: "pending" })
      }
    }
    await check(model, real)
  }
  toString = () => "Connect"
}

class Distribute implements fc.AsyncCommand<Model, Real> {
  check = () => true
  async run(model: Model, real: Real) {
    await real.run(Effect.flatMap(Toolkits, (toolkits) => toolkits.installPending(1_000)))
    for (const toolkit of model.toolkits) {
      for (const installation of toolkit.installations.values()) {
        if (installation.status === "pending") Object.assign(installation, { inUse: installation.version, status: "installed" })
      }
    }
    await check(model, real)
  }
  toString = () => "Distribute"
}

const commands = [
  fc.boolean().map((autoInstall) => new Create(autoInstall)),
  fc.constant(new Create(true)),
  fc.nat(20).map((pick) => new Version(pick)),
  fc.tuple(fc.nat(20), fc.nat(20), fc.constantFrom<Mode>("none", "normal", "force")).map(([pick, version, mode]) =>
    new Publish(pick, version, mode)
  ),
  fc.tuple(fc.nat(20), fc.boolean()).map(([pick, out]) => new OptOut(pick, out)),
  fc.constant(new Connect()),
  fc.constant(new Distribute()),
  fc.constant(new Distribute())
]

describe("toolkit distribution (model-based)", () => {
  it("publish counts and installations match the model under any sequence of creations, versions, publishes, opt-outs, connections and distributions", async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 40, size: "large" }), async (sequence) => {
        const runtime = ManagedRuntime.make(ToolkitsLive)
        try {
          const app = await runtime.runPromise(Effect.gen(function*() {
            const created = yield* (yield* PartnerApps).create(CreatePartnerApp.make({ name: "Model app" }))
            return Option.getOrThrow(yield* (yield* PartnerStore).get(created.id))
          }))
          const real: Real = { run: (effect) => runtime.runPromise(effect), app, toolkits: [], workspaces: [] }
          const model: Model = { toolkits: [], workspaces: 0, optedOut: new Set() }
          // Two workspaces connected from the start, so that short sequences reach installations.
          for (const connect of [new Connect(), new Connect()]) await connect.run(model, real)
          await fc.asyncModelRun(() => ({ model, real }), sequence)
        } finally {
          await runtime.dispose()
        }
      }),
      { numRuns: 200 }
    )
  }, 60_000)
})
