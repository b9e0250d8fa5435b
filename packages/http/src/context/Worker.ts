/**
 * A context worker thread's program (started by ContextWorkers.ts, from the compiled `dist/context/Worker.js`):
 * core's `prepare` for each upload it is sent, reading PDF and DOCX files with NodeTextExtractor.
 */
import { prepare } from "@convene/core"
import { NodeTextExtractor } from "@convene/node"
import { WorkerRunner } from "@effect/platform"
import { NodeRuntime, NodeWorkerRunner } from "@effect/platform-node"
import { Layer } from "effect"
import { PrepareContext } from "./Protocol.js"

const Runner = WorkerRunner.layerSerialized(PrepareContext, {
  PrepareContext: ({ source }) => prepare(source)
}).pipe(Layer.provide([NodeWorkerRunner.layer, NodeTextExtractor.layer]))

NodeRuntime.runMain(WorkerRunner.launch(Runner))
