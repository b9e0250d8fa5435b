/** ToolkitStore in memory: partner apps' toolkits, their versions and installations, in the one state value. */
import { Pagination, type ToolkitInstallation, ToolkitStore } from "@convene/core"
import { DateTime, Effect, HashMap, Layer, Option } from "effect"
import { Memory, newestFirst, oldestFirst } from "./Memory.js"

const installationKey = (installation: Pick<ToolkitInstallation, "workspace_id" | "toolkit_id">) =>
  JSON.stringify([installation.workspace_id, installation.toolkit_id])

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

export const layer: Layer.Layer<ToolkitStore, never, Memory> = Layer.effect(
  ToolkitStore,
  Effect.gen(function*() {
    const memory = yield* Memory

    const getToolkit: ToolkitStore["Type"]["getToolkit"] = Effect.fnUntraced(function*(appId, id) {
      return HashMap.get((yield* memory.read).toolkits, id).pipe(Option.filter((toolkit) => toolkit.partner_app_id === appId))
    })

    return ToolkitStore.of({
      insertToolkit: (toolkit) =>
        memory.modify((state) => [undefined, { ...state, toolkits: HashMap.set(state.toolkits, toolkit.id, toolkit) }]),

      updateToolkit: (toolkit) =>
        memory.modify((state) =>
          HashMap.has(state.toolkits, toolkit.id)
            ? [undefined, { ...state, toolkits: HashMap.set(state.toolkits, toolkit.id, toolkit) }]
            : [undefined, state]
        ),

      getToolkit,
      // The memory store runs one unit of work at a time: reading is holding.
      getToolkitForUpdate: getToolkit,

      listToolkits: Effect.fnUntraced(function*(appId, page) {
        const rows = HashMap.toValues((yield* memory.read).toolkits).filter((toolkit) => toolkit.partner_app_id === appId)
        return Pagination.sliceOf(rows.sort(newestFirst), page)
      }),

      toolkitsOf: Effect.fnUntraced(function*(appId, ids) {
        const wanted = ids === undefined ? undefined : new Set<string>(ids)
        return HashMap.toValues((yield* memory.read).toolkits)
          .filter((toolkit) => toolkit.partner_app_id === appId && (wanted === undefined || wanted.has(toolkit.id)))
          .sort(oldestFirst)
      }),

      deleteToolkit: (id) =>
        memory.modify((state) => [undefined, {
          ...state,
          toolkits: HashMap.remove(state.toolkits, id),
          toolkitVersions: HashMap.filter(state.toolkitVersions, (version) => version.toolkit_id !== id),
          toolkitInstallations: HashMap.filter(state.toolkitInstallations, (installation) => installation.toolkit_id !== id)
        }]),

      insertVersion: (version) =>
        memory.modify((state) => [undefined, { ...state, toolkitVersions: HashMap.set(state.toolkitVersions, version.id, version) }]),

      updateVersion: (version) =>
        memory.modify((state) =>
          HashMap.has(state.toolkitVersions, version.id)
            ? [undefined, { ...state, toolkitVersions: HashMap.set(state.toolkitVersions, version.id, version) }]
            : [undefined, state]
        ),

      getVersion: Effect.fnUntraced(function*(toolkitId, id) {
        return HashMap.get((yield* memory.read).toolkitVersions, id).pipe(Option.filter((version) => version.toolkit_id === toolkitId))
      }),

      versionsOf: Effect.fnUntraced(function*(ids) {
        const versions = (yield* memory.read).toolkitVersions
        return ids.flatMap((id) => Option.toArray(HashMap.get(versions, id)))
      }),

      listVersions: Effect.fnUntraced(function*(toolkitId, page) {
        const rows = HashMap.toValues((yield* memory.read).toolkitVersions).filter((version) => version.toolkit_id === toolkitId)
        return Pagination.sliceOf(rows.sort((a, b) => b.number - a.number), page)
      }),

      putInstallation: (installation) =>
        memory.modify((state) => [undefined, {
          ...state,
          toolkitInstallations: HashMap.set(state.toolkitInstallations, installationKey(installation), installation)
        }]),

      installationsOf: Effect.fnUntraced(function*(toolkitId) {
        return HashMap.toValues((yield* memory.read).toolkitInstallations)
          .filter((installation) => installation.toolkit_id === toolkitId)
          .sort((a, b) => byText(a.workspace_id, b.workspace_id))
      }),

      installationsIn: Effect.fnUntraced(function*(workspaceId) {
        return HashMap.toValues((yield* memory.read).toolkitInstallations)
          .filter((installation) => installation.workspace_id === workspaceId)
          .sort((a, b) => byText(a.toolkit_id, b.toolkit_id))
      }),

      // Units of work run one at a time on the store's one permit: holding is reading.
      claimPending: Effect.fnUntraced(function*(limit) {
        return HashMap.toValues((yield* memory.read).toolkitInstallations)
          .filter((installation) => installation.status === "pending")
          .sort((a, b) =>
            DateTime.Order(a.updated_at, b.updated_at) || byText(a.workspace_id, b.workspace_id) ||
            byText(a.toolkit_id, b.toolkit_id)
          )
          .slice(0, limit)
      }),

      autoUpdates: Effect.fnUntraced(function*(workspaceId) {
        return !HashMap.has((yield* memory.read).toolkitOptOuts, workspaceId)
      }),

      setAutoUpdates: (workspaceId, enabled) =>
        memory.modify((state) => [undefined, {
          ...state,
          toolkitOptOuts: enabled ? HashMap.remove(state.toolkitOptOuts, workspaceId) : HashMap.set(state.toolkitOptOuts, workspaceId, true)
        }]),

      deleteByWorkspace: (workspaceId) =>
        memory.modify((state) => [undefined, {
          ...state,
          toolkitInstallations: HashMap.filter(state.toolkitInstallations, (installation) => installation.workspace_id !== workspaceId),
          toolkitOptOuts: HashMap.remove(state.toolkitOptOuts, workspaceId)
        }])
    })
  })
)
