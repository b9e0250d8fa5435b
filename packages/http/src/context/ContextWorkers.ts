/**
 * The ContextPreparation port on worker threads: each upload's text is prepared (core's `prepare`: extraction,
 * normalisation, PII scrubbing) by one of a pool of threads running Worker.ts, so the seconds of CPU a large upload
 * costs (about 4 s for 5 MiB of text dense with personal data) are not spent on the thread that serves every other
 * request. Built on @effect/platform's Worker pool (requests and answers as schemas, Protocol.ts); an upload waits
 * for a free thread when all are busy. Threads start on demand (the first upload after a start waits for one, about
 * a second) and end after an hour without work.
 *
 * Each thread's heap is capped (`defaultMaxHeapMb`): a document that needs more usually ends its thread, not the
 * server (the upload answers 500; the pool starts a new thread for the next one). Usually: V8 can still abort the
 * whole process when a heap fills within one collection (seen with 120 MiB of DOCX XML on a 128 MiB cap), so the
 * extractors keep their own bounds well inside the cap (NodeTextExtractor: 16 MiB of DOCX XML, ~800 MB to read).
 */
import { ContextPreparation } from "@convene/core"
import { Worker } from "@effect/platform"
import { NodeWorker } from "@effect/platform-node"
import { Duration, Effect, Layer } from "effect"
import * as WorkerThreads from "node:worker_threads"
import { PrepareContext } from "./Protocol.js"

/** The most heap one thread may use unless told otherwise (1 GiB): a 25 MiB PDF read by PDF.js stays well under it. */
export const defaultMaxHeapMb = 1024

/**
 * The worker's compiled program: beside this module in `dist`; when this module runs from its TypeScript source
 * (the tests run the sources), the one the build put in `dist` (worker threads run JavaScript only), without the
 * test runner's Node options (which would resolve the packages to their sources too).
 */
const fromSource = import.meta.url.endsWith(".ts")
const entry = fromSource ? new URL("../../dist/context/Worker.js", import.meta.url) : new URL("./Worker.js", import.meta.url)

/**
 * The longest an upload's preparation may take, waiting for a thread included (2 minutes; 5 MiB of text dense with
 * personal data takes about 4 s): past it the upload fails (500) rather than holding its request for ever, say
 * when no thread can start.
 */
export const preparationTimeout = Duration.minutes(2)

/** How long a thread without work lives on. */
export const idleLifetime = Duration.hours(1)

/** ContextPreparation on up to `size` worker threads (at least 1), each with at most `maxHeapMb` of heap. */
export const layer = (
  { maxHeapMb = defaultMaxHeapMb, size }: { readonly size: number; readonly maxHeapMb?: number }
): Layer.Layer<ContextPreparation> =>
  Layer.scoped(
    ContextPreparation,
    Effect.gen(function*() {
      // Threads start when uploads need them (a server that never prepares context starts none: a thread costs
      // ~1-2 s of CPU to load and ~40 MB to keep) and end after an hour without work.
      const pool = yield* Worker.makePoolSerialized<PrepareContext>({
        minSize: 0,
        maxSize: size,
        concurrency: 1,
        timeToLive: idleLifetime
      })
      return ContextPreparation.of({
        prepare: (source) =>
          pool.executeEffect(new PrepareContext({ source })).pipe(
            Effect.timeout(preparationTimeout),
            // A thread that ended (its heap cap reached), an answer that does not decode or one that never came is
            // the server's fault.
            Effect.catchTags({ WorkerError: Effect.die, ParseError: Effect.die, TimeoutException: Effect.die }),
            Effect.withSpan("ContextPreparation.prepare", { attributes: { bytes: source.bytes.length } })
          )
      })
    })
  ).pipe(
    Layer.orDie,
    Layer.provide(NodeWorker.layer(() =>
      new WorkerThreads.Worker(entry, {
        resourceLimits: { maxOldGenerationSizeMb: maxHeapMb },
        ...(fromSource ? { execArgv: [] } : {})
      })
    ))
  )
