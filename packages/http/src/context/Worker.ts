/**
 * A context worker's program, a child process of the server (started by ContextWorkers.ts, from the compiled
 * `dist/context/Worker.js`): core's `prepare` for each upload it is sent, reading PDF and DOCX files with
 * NodeTextExtractor. It ends with its server: when the IPC channel closes (the server exited, however it ended, even
 * killed) there is nobody left to answer.
 */
import { prepare } from "@convene/core"
import { NodeTextExtractor } from "@convene/node"
import * as WorkerRunner from "@effect/platform/WorkerRunner"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeWorkerRunner from "@effect/platform-node/NodeWorkerRunner"
import { Layer } from "effect"
import { PrepareContext } from "./Protocol.js"

const Runner = WorkerRunner.layerSerialized(PrepareContext, {
  PrepareContext: ({ source }) => prepare(source)
}).pipe(Layer.provide([NodeWorkerRunner.layer, NodeTextExtractor.layer]))

process.on("disconnect", () => process.exit(0))

NodeRuntime.runMain(WorkerRunner.launch(Runner))
