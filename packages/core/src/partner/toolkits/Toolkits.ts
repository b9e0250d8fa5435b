/**
 * A partner app's toolkits (decisions.md "Toolkit", "Publish"): made from a manifest, versioned, published and
 * distributed to the workspaces they are installed in, where their next steps and action buttons show in the partner
 * user context.
 *
 * Decisions where the documents are silent (repeated in the API's descriptions and the README):
 * - A toolkit's `name` and `description` are its first manifest's; a new version's manifest sets them again, and PUT
 *   changes them alone (`{name?, description?}`, never a version's manifest: versions are kept as made).
 *   `auto_propagate` and `auto_install_on_new_workspaces` start false.
 * - DELETE removes the toolkit with its versions and installations: its next steps and action buttons leave every
 *   workspace at once.
 * - Conflicts compare qualified keys (`next_steps.follow-up`, `action_buttons.crm`, `meeting_templates.kickoff`,
 *   `workflow_templates.deal`): a new version conflicts when it drops a key of the version installed in a workspace
 *   (`removed_while_installed`), or takes a key that another toolkit installed in a workspace of this one holds
 *   (`held_by_another_toolkit`). `force: true` creates it anyway; the distribution then installs it all the same,
 *   except where another toolkit holds a key (that installation fails with the reason).
 * - Publishing makes the version the toolkit's published one (`published_version_id`; an older version may be
 *   published again, to roll back); a version once published stays `published`. Without `propagation`, the mode is
 *   `normal` when the toolkit's `auto_propagate` is true and `none` otherwise.
 * - The workspaces a publish reaches: those with an installation of the toolkit, and, when
 *   `auto_install_on_new_workspaces` is true, the workspaces connected to the app without one (their first install).
 *   `none` queues nothing; `normal` queues those that did not opt out of automatic toolkit updates (the others are
 *   counted in `workspaces_skipped_opted_out`); `force` queues every one. An installation on an older version that
 *   is not queued is `outdated`. A workspace newly connected to the app gets the first install of each published
 *   toolkit with `auto_install_on_new_workspaces` (`queueFirstInstalls`, in the connection's unit of work).
 * - A queued installation is `pending` until the worker (`installPending`, run in the background by the host) takes
 *   it: `installed` when the workspace is still connected to the app and no other toolkit installed there holds one of
 *   the version's keys, else `failed` with the reason; publishing again retries it. The version installed before
 *   stays in use while the new one is pending or failed.
 */
import { Context, type DateTime, Effect, Either, Layer, Option, Schema } from "effect"
import { Crypto } from "../../ports/Crypto.js"
import { Transactor } from "../../ports/Transactor.js"
import type { WorkspaceId } from "../../shared/Ids.js"
import { clamp, type PageRequest, toList } from "../../shared/Pagination.js"
import { fn } from "../../shared/Span.js"
import { LongText, requestBody, Title } from "../../shared/Text.js"
import { now } from "../../shared/Time.js"
import { trusted } from "../../shared/Trusted.js"
import type { PartnerApp, PartnerAppId } from "../PartnerApp.js"
import { PartnerStore } from "../PartnerStore.js"
import { decodeManifest, Manifest, manifestKeys } from "./Manifest.js"
import {
  Toolkit,
  type ToolkitId,
  ToolkitId as ToolkitIdSchema,
  ToolkitInstallation,
  ToolkitInstallationView,
  ToolkitVersion,
  type ToolkitVersionId,
  ToolkitVersionId as ToolkitVersionIdSchema
} from "./Toolkit.js"
import { ToolkitStore } from "./ToolkitStore.js"

/** A toolkit request the rules refuse: a manifest or field (400), or a toolkit or version the app does not have (404). */
export class ToolkitRefused extends Schema.TaggedError<ToolkitRefused>()("ToolkitRefused", {
  code: Schema.Literal("invalid_request_body", "not_found"),
  message: Schema.String
}) {}

/** One conflict of a new version (decisions.md). */
export class ToolkitConflict extends Schema.Class<ToolkitConflict>("ToolkitConflict")({
  key: Schema.String.annotations({ description: "the qualified key: next_steps.<key>, action_buttons.<key>, ..." }),
  reason: Schema.Literal("removed_while_installed", "held_by_another_toolkit")
}) {}

/** A new version refused for its conflicts (409 unless `force: true`). */
export class ToolkitVersionConflicts extends Schema.TaggedError<ToolkitVersionConflicts>()("ToolkitVersionConflicts", {
  conflicts: Schema.Array(ToolkitConflict),
  message: Schema.String
}) {}

/**
 * A manifest as a request carries it: any JSON object, which the core decodes (the path of its first problem is the
 * answer's) once it knows the toolkit exists.
 */
const ManifestObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  description: "a toolkit manifest, version 1"
})

/** POST /toolkits. */
export class CreateToolkit extends Schema.Class<CreateToolkit>("CreateToolkit")({
  manifest: ManifestObject
}, requestBody) {}

/** POST /toolkits/{id}/versions. */
export class CreateToolkitVersion extends Schema.Class<CreateToolkitVersion>("CreateToolkitVersion")({
  manifest: ManifestObject,
  force: Schema.optional(Schema.Boolean).annotations({ description: "true: create the version despite its conflicts" })
}, requestBody) {}

/** PUT /toolkits/{id}. */
export class UpdateToolkit extends Schema.Class<UpdateToolkit>("UpdateToolkit")({
  name: Schema.optional(Title(200)),
  description: Schema.optional(Schema.NullOr(LongText(2000)))
}, requestBody) {}

/** PATCH /toolkits/{id}. */
export class PatchToolkit extends Schema.Class<PatchToolkit>("PatchToolkit")({
  auto_propagate: Schema.optional(Schema.Boolean),
  auto_install_on_new_workspaces: Schema.optional(Schema.Boolean)
}, requestBody) {}

export const Propagation = Schema.Literal("none", "normal", "force")
export type Propagation = typeof Propagation.Type

/** POST /toolkits/{id}/versions/{vid}/publish. */
export class PublishToolkitVersion extends Schema.Class<PublishToolkitVersion>("PublishToolkitVersion")({
  propagation: Schema.optional(Propagation)
}, requestBody) {}

/** POST /toolkits/export. */
export class ExportToolkits extends Schema.Class<ExportToolkits>("ExportToolkits")({
  toolkit_ids: Schema.optional(Schema.Array(ToolkitIdSchema))
}, requestBody) {}

export class PublishResult extends Schema.Class<PublishResult>("ToolkitPublished")({
  version: ToolkitVersion,
  propagation: Schema.Struct({
    mode: Propagation,
    workspaces_queued: Schema.Int,
    workspaces_skipped_opted_out: Schema.Int
  })
}) {}

export class InstallationSummary extends Schema.Class<InstallationSummary>("ToolkitInstallationSummary")({
  installed: Schema.Int,
  pending: Schema.Int,
  failed: Schema.Int,
  outdated: Schema.Int
}) {}

export class InstallationList extends Schema.Class<InstallationList>("ToolkitInstallationList")({
  items: Schema.Array(ToolkitInstallationView),
  total: Schema.Int,
  summary: InstallationSummary
}) {}

export class ExportedToolkit extends Schema.Class<ExportedToolkit>("ExportedToolkit")({
  id: ToolkitIdSchema,
  manifest: Manifest
}) {}

export class ExportedToolkits extends Schema.Class<ExportedToolkits>("ExportedToolkits")({
  toolkits: Schema.Array(ExportedToolkit)
}) {}

/** What a workspace has of installed toolkits: their versions' manifests, by toolkit, in toolkit id order. */
export interface Installed {
  readonly toolkit_id: ToolkitId
  readonly manifest: Manifest
}

/** The keys a toolkit installed in a workspace holds. */
interface Holder {
  readonly toolkit_id: ToolkitId
  readonly keys: ReadonlySet<string>
}

const notFound = (what: string) => new ToolkitRefused({ code: "not_found", message: `${what} not found` })

const invalid = (problem: string) => new ToolkitRefused({ code: "invalid_request_body", message: problem })

/** The manifest of a body's `manifest` field, or the refusal naming its first problem. */
const manifestOf = (input: unknown) =>
  Either.match(decodeManifest(input), {
    onLeft: (problem) => Effect.fail(invalid(problem)),
    onRight: Effect.succeed
  })

/**
 * What a new connection of the workspace to the app does (decisions.md: "New connected workspaces get toolkits whose
 * auto_install_on_new_workspaces is true"): queues the first install of each such toolkit of the app that has a
 * published version and no installation in the workspace, whatever the workspace's opt-out (which is of updates).
 * Runs in the connection's unit of work.
 */
export const queueFirstInstalls = (appId: PartnerApp["id"], workspaceId: WorkspaceId, at: DateTime.Utc) =>
  Effect.gen(function*() {
    const store = yield* ToolkitStore
    const installed = new Set<string>((yield* store.installationsIn(workspaceId)).map((installation) => installation.toolkit_id))
    for (const toolkit of yield* store.toolkitsOf(appId)) {
      if (!toolkit.auto_install_on_new_workspaces || toolkit.published_version_id === null || installed.has(toolkit.id)) continue
      yield* store.putInstallation(
        new ToolkitInstallation({
          workspace_id: workspaceId,
          toolkit_id: toolkit.id,
          version_id: toolkit.published_version_id,
          installed_version_id: null,
          status: "pending",
          reason: null,
          updated_at: at
        }, trusted)
      )
    }
  })

/** How many workspaces one page of connections reads while a publish walks them. */
const connectionsPage = 100

/** How many pending installations the worker takes in one unit of work. */
export const installBatch = 50

const make = Effect.gen(function*() {
  const store = yield* ToolkitStore
  const partners = yield* PartnerStore
  const crypto = yield* Crypto
  const transactor = yield* Transactor

  const found = (read: Effect.Effect<Option.Option<Toolkit>>) =>
    Effect.flatMap(read, Option.match({ onNone: () => Effect.fail(notFound("toolkit")), onSome: Effect.succeed }))

  const toolkitOf = (app: PartnerApp, id: ToolkitId) => found(store.getToolkit(app.id, id))

  /**
   * The toolkit held for the unit of work (ToolkitStore.getToolkitForUpdate): every change of a toolkit reads it so,
   * so that two of them (two versions, two publishes, a PUT and a PATCH) are made one after the other.
   */
  const lockedToolkitOf = (app: PartnerApp, id: ToolkitId) => found(store.getToolkitForUpdate(app.id, id))

  const versionOf = (toolkit: Toolkit, id: ToolkitVersionId) =>
    Effect.flatMap(store.getVersion(toolkit.id, id), Option.match({ onNone: () => Effect.fail(notFound("version")), onSome: Effect.succeed }))

  /** The keys each toolkit installed in the workspace holds (by the version in use), but `except`'s. */
  const holdersIn = (workspaceId: WorkspaceId, except: ToolkitId) =>
    Effect.gen(function*() {
      const others = (yield* store.installationsIn(workspaceId)).filter((installation) =>
        installation.toolkit_id !== except && installation.installed_version_id !== null
      )
      const versions = yield* store.versionsOf(others.flatMap((installation) => installation.installed_version_id ?? []))
      return versions.map((version): Holder => ({ toolkit_id: version.toolkit_id, keys: new Set(manifestKeys(version.manifest)) }))
    })

  /** The conflicts of `manifest` as the next version of `toolkit` (decisions.md), each key once, in key order. */
  const conflictsOf = (toolkit: Toolkit, manifest: Manifest) =>
    Effect.gen(function*() {
      const keys = new Set(manifestKeys(manifest))
      const found = new Map<string, ToolkitConflict["reason"]>()
      const installations = yield* store.installationsOf(toolkit.id)
      const inUse = yield* store.versionsOf([...new Set(installations.flatMap((installation) => installation.installed_version_id ?? []))])
      for (const version of inUse) {
        for (const key of manifestKeys(version.manifest)) if (!keys.has(key)) found.set(key, "removed_while_installed")
      }
      for (const installation of installations) {
        for (const holder of yield* holdersIn(installation.workspace_id, toolkit.id)) {
          for (const key of keys) if (holder.keys.has(key) && !found.has(key)) found.set(key, "held_by_another_toolkit")
        }
      }
      return [...found].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, reason]) => new ToolkitConflict({ key, reason }))
    })

  const create = fn("Toolkits.create")(function*(app: PartnerApp, input: CreateToolkit) {
    const manifest = yield* manifestOf(input.manifest)
    const at = yield* now
    const versionId = ToolkitVersionIdSchema.make(yield* crypto.randomUUID)
    const toolkit = new Toolkit({
      id: ToolkitIdSchema.make(yield* crypto.randomUUID),
      partner_app_id: app.id,
      name: manifest.name,
      description: manifest.description ?? null,
      auto_propagate: false,
      auto_install_on_new_workspaces: false,
      latest_version_id: versionId,
      published_version_id: null,
      created_at: at,
      updated_at: at
    }, trusted)
    const version = new ToolkitVersion({
      id: versionId,
      toolkit_id: toolkit.id,
      number: 1,
      manifest,
      status: "draft",
      created_at: at,
      published_at: null
    }, trusted)
    yield* transactor.withTransaction(Effect.zipRight(store.insertToolkit(toolkit), store.insertVersion(version)))
    return toolkit.view
  })

  const list = fn("Toolkits.list")(function*(app: PartnerApp, request: PageRequest) {
    const page = clamp(request)
    const slice = yield* store.listToolkits(app.id, page)
    return toList({ items: slice.items.map((toolkit) => toolkit.view), total: slice.total }, page)
  })

  const get = fn("Toolkits.get")(function*(app: PartnerApp, id: ToolkitId) {
    return (yield* toolkitOf(app, id)).view
  })

  const changed = (toolkit: Toolkit, fields: Partial<Toolkit>) =>
    Effect.map(now, (at) => new Toolkit({ ...toolkit, ...fields, updated_at: at }, trusted))

  /** Changes the toolkit's own fields, on what is committed, under its lock. */
  const changeToolkit = (app: PartnerApp, id: ToolkitId, fields: (toolkit: Toolkit) => Partial<Toolkit>) =>
    transactor.withTransaction(Effect.gen(function*() {
      const toolkit = yield* lockedToolkitOf(app, id)
      const next = yield* changed(toolkit, fields(toolkit))
      yield* store.updateToolkit(next)
      return next.view
    }))

  const update = fn("Toolkits.update")(function*(app: PartnerApp, id: ToolkitId, input: UpdateToolkit) {
    return yield* changeToolkit(app, id, (toolkit) => ({
      name: input.name ?? toolkit.name,
      description: input.description === undefined ? toolkit.description : input.description
    }))
  })

  const patch = fn("Toolkits.patch")(function*(app: PartnerApp, id: ToolkitId, input: PatchToolkit) {
    return yield* changeToolkit(app, id, (toolkit) => ({
      auto_propagate: input.auto_propagate ?? toolkit.auto_propagate,
      auto_install_on_new_workspaces: input.auto_install_on_new_workspaces ?? toolkit.auto_install_on_new_workspaces
    }))
  })

  const remove = fn("Toolkits.remove")(function*(app: PartnerApp, id: ToolkitId) {
    yield* toolkitOf(app, id)
    yield* store.deleteToolkit(id)
  })

  /** The manifest export answers: the published version's, else the latest's. */
  const exportedManifest = (toolkit: Toolkit) =>
    Effect.map(versionOf(toolkit, toolkit.published_version_id ?? toolkit.latest_version_id), (version) => version.manifest)

  const exportOne = fn("Toolkits.exportOne")(function*(app: PartnerApp, id: ToolkitId) {
    return yield* exportedManifest(yield* toolkitOf(app, id))
  })

  const exportMany = fn("Toolkits.exportMany")(function*(app: PartnerApp, input: ExportToolkits) {
    const toolkits = yield* store.toolkitsOf(app.id, input.toolkit_ids)
    const missing = (input.toolkit_ids ?? []).find((id) => !toolkits.some((toolkit) => toolkit.id === id))
    if (missing !== undefined) return yield* Effect.fail(notFound(`toolkit ${missing}`))
    const exported = yield* Effect.forEach(toolkits, (toolkit) =>
      Effect.map(exportedManifest(toolkit), (manifest) => new ExportedToolkit({ id: toolkit.id, manifest }, trusted)))
    return new ExportedToolkits({ toolkits: exported }, trusted)
  })

  const listVersions = fn("Toolkits.listVersions")(function*(app: PartnerApp, id: ToolkitId, request: PageRequest) {
    const toolkit = yield* toolkitOf(app, id)
    const page = clamp(request)
    return toList(yield* store.listVersions(toolkit.id, page), page)
  })

  const getVersion = fn("Toolkits.getVersion")(function*(app: PartnerApp, id: ToolkitId, versionId: ToolkitVersionId) {
    return yield* versionOf(yield* toolkitOf(app, id), versionId)
  })

  const createVersion = fn("Toolkits.createVersion")(function*(app: PartnerApp, id: ToolkitId, input: CreateToolkitVersion) {
    return yield* transactor.withTransaction(Effect.gen(function*() {
      // The body first, as every route decodes its body before it looks anything up: a manifest that breaks a rule is
      // 400 for an unknown toolkit too.
      const manifest = yield* manifestOf(input.manifest)
      const toolkit = yield* lockedToolkitOf(app, id)
      const conflicts = yield* conflictsOf(toolkit, manifest)
      if (conflicts.length > 0 && input.force !== true) {
        return yield* Effect.fail(
          new ToolkitVersionConflicts({
            conflicts,
            message: `the version conflicts with installed toolkits (${conflicts.map((conflict) => conflict.key).join(", ")}); send force: true to create it anyway`
          })
        )
      }
      const latest = yield* versionOf(toolkit, toolkit.latest_version_id)
      const at = yield* now
      const version = new ToolkitVersion({
        id: ToolkitVersionIdSchema.make(yield* crypto.randomUUID),
        toolkit_id: toolkit.id,
        number: latest.number + 1,
        manifest,
        status: "draft",
        created_at: at,
        published_at: null
      }, trusted)
      yield* store.insertVersion(version)
      yield* store.updateToolkit(
        new Toolkit({
          ...toolkit,
          name: manifest.name,
          description: manifest.description ?? null,
          latest_version_id: version.id,
          updated_at: at
        }, trusted)
      )
      return version
    }))
  })

  /** Every workspace connected to the app. */
  const connectedWorkspaces = (app: PartnerApp) =>
    Effect.gen(function*() {
      const ids: Array<WorkspaceId> = []
      for (let offset = 0;; offset += connectionsPage) {
        const slice = yield* partners.listWorkspaces(app.id, { limit: connectionsPage, offset })
        ids.push(...slice.items.map((workspace) => workspace.id))
        if (slice.items.length < connectionsPage) return ids
      }
    })

  const publish = fn("Toolkits.publish")(function*(app: PartnerApp, id: ToolkitId, versionId: ToolkitVersionId, input: PublishToolkitVersion) {
    return yield* transactor.withTransaction(Effect.gen(function*() {
      const toolkit = yield* lockedToolkitOf(app, id)
      const version = yield* versionOf(toolkit, versionId)
      const mode = input.propagation ?? (toolkit.auto_propagate ? "normal" : "none")
      const at = yield* now
      const published = new ToolkitVersion({ ...version, status: "published", published_at: version.published_at ?? at }, trusted)
      yield* store.updateVersion(published)
      yield* store.updateToolkit(new Toolkit({ ...toolkit, published_version_id: version.id, updated_at: at }, trusted))

      const installations = yield* store.installationsOf(toolkit.id)
      const fresh = toolkit.auto_install_on_new_workspaces
        ? (yield* connectedWorkspaces(app)).filter((workspaceId) => !installations.some((installation) => installation.workspace_id === workspaceId))
        : []
      const targets = [
        ...installations,
        ...fresh.map((workspaceId) =>
          new ToolkitInstallation({
            workspace_id: workspaceId,
            toolkit_id: toolkit.id,
            version_id: version.id,
            installed_version_id: null,
            status: "pending",
            reason: null,
            updated_at: at
          }, trusted)
        )
      ]
      let queued = 0
      let skipped = 0
      for (const installation of targets) {
        const optedOut = mode === "normal" && !(yield* store.autoUpdates(installation.workspace_id))
        if (mode === "force" || (mode === "normal" && !optedOut)) {
          queued++
          yield* store.putInstallation(
            new ToolkitInstallation({ ...installation, version_id: version.id, status: "pending", reason: null, updated_at: at }, trusted)
          )
          continue
        }
        if (optedOut) skipped++
        // Not queued: a workspace that has another version in use is behind the published one.
        const inUse = installation.installed_version_id
        if (inUse !== null && inUse !== version.id && installation.status === "installed") {
          yield* store.putInstallation(new ToolkitInstallation({ ...installation, status: "outdated", updated_at: at }, trusted))
        }
      }
      return new PublishResult({
        version: published,
        propagation: { mode, workspaces_queued: queued, workspaces_skipped_opted_out: skipped }
      }, trusted)
    }))
  })

  const installations = fn("Toolkits.installations")(function*(app: PartnerApp, id: ToolkitId) {
    const toolkit = yield* toolkitOf(app, id)
    const all = yield* store.installationsOf(toolkit.id)
    const count = (status: ToolkitInstallation["status"]) => all.filter((installation) => installation.status === status).length
    return new InstallationList({
      items: all.map((installation) => installation.view),
      total: all.length,
      summary: new InstallationSummary({
        installed: count("installed"),
        pending: count("pending"),
        failed: count("failed"),
        outdated: count("outdated")
      }, trusted)
    }, trusted)
  })

  /** Why the installation cannot complete, or undefined when it can. */
  const problemOf = (installation: ToolkitInstallation) =>
    Effect.gen(function*() {
      const version = yield* store.versionsOf([installation.version_id])
      const manifest = version[0]?.manifest
      if (manifest === undefined) return "the version no longer exists"
      const apps = yield* partners.connectedApps(installation.workspace_id)
      const owner = yield* Effect.forEach(apps, (app) => Effect.map(store.getToolkit(app.id, installation.toolkit_id), Option.isSome))
      if (!owner.some(Boolean)) return "the workspace is no longer connected to the partner app"
      const keys = manifestKeys(manifest)
      for (const holder of yield* holdersIn(installation.workspace_id, installation.toolkit_id)) {
        const taken = keys.find((key) => holder.keys.has(key))
        if (taken !== undefined) return `the key ${taken} is held by another toolkit installed in the workspace`
      }
      return undefined
    })

  /**
   * Completes up to `limit` pending installations in one unit of work (a concurrent worker takes others): each is
   * `installed` or `failed` with the reason. Answers how many it took, so the host runs it again at once when full.
   */
  const installPending = fn("Toolkits.installPending")(function*(limit: number = installBatch) {
    return yield* transactor.withTransaction(Effect.gen(function*() {
      const pending = yield* store.claimPending(limit)
      const at = yield* now
      for (const installation of pending) {
        const problem = yield* problemOf(installation)
        yield* store.putInstallation(
          new ToolkitInstallation(
            problem === undefined
              ? { ...installation, installed_version_id: installation.version_id, status: "installed", reason: null, updated_at: at }
              : { ...installation, status: "failed", reason: problem, updated_at: at },
            trusted
          )
        )
      }
      return pending.length
    }))
  })

  /** The manifests in use in the workspace (the version each installed toolkit's installation has in use). */
  const installedIn = fn("Toolkits.installedIn")(function*(workspaceId: WorkspaceId, appId: PartnerAppId) {
    const own = new Set((yield* store.toolkitsOf(appId)).map((toolkit) => toolkit.id))
    const installations = (yield* store.installationsIn(workspaceId)).filter((installation) =>
      installation.installed_version_id !== null && own.has(installation.toolkit_id)
    )
    const versions = yield* store.versionsOf(installations.flatMap((installation) => installation.installed_version_id ?? []))
    return installations.flatMap((installation): ReadonlyArray<Installed> => {
      const version = versions.find((candidate) => candidate.id === installation.installed_version_id)
      return version === undefined ? [] : [{ toolkit_id: installation.toolkit_id, manifest: version.manifest }]
    })
  })

  /** Whether the workspace takes automatic toolkit updates, and the change of that setting. */
  const autoUpdates = (workspaceId: WorkspaceId) => store.autoUpdates(workspaceId)
  const setAutoUpdates = (workspaceId: WorkspaceId, enabled: boolean) => store.setAutoUpdates(workspaceId, enabled)

  return {
    create,
    list,
    get,
    update,
    patch,
    remove,
    exportOne,
    exportMany,
    listVersions,
    getVersion,
    createVersion,
    publish,
    installations,
    installPending,
    installedIn,
    autoUpdates,
    setAutoUpdates
  } as const
})

export class Toolkits extends Context.Tag("@convene/core/Toolkits")<Toolkits, Effect.Effect.Success<typeof make>>() {
  static readonly layer: Layer.Layer<Toolkits, never, ToolkitStore | PartnerStore | Crypto | Transactor> = Layer.effect(Toolkits, make)
}
