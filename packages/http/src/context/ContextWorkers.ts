/**
 * The ContextPreparation port on worker processes: each upload's text is prepared (core's `prepare`: extraction,
 * normalisation, PII scrubbing) by one of a pool of child processes running Worker.ts, so the seconds of CPU a large
 * upload costs (about 4 s for 5 MiB of text dense with personal data) are not spent on the thread that serves every
 * other request. Built on @effect/platform's Worker pool (requests and answers as schemas, Protocol.ts, over the
 * IPC channel with structured clone); an upload waits for a free worker when all are busy. Workers start on demand
 * (the first upload after a start waits for one, about a second) and end after an hour without work.
 *
 * Processes rather than worker threads: a document whose reading needs more memory than a worker's heap cap
 * (`defaultMaxHeapMb`) ends that worker's process, never the server's (the upload answers 500; the pool starts a new
 * worker for the next one). A worker thread shares the server's process, and V8 can abort the whole process when a
 * thread's capped heap fills within one collection (seen with 120 MiB of DOCX XML on a 128 MiB cap). The extractors
 * keep their own bounds well inside the cap besides (NodeTextExtractor: 16 MiB of DOCX XML, ~800 MB to read).
 */
import { ContextPreparation } from "@convene/core"
import * as Worker from "@effect/platform/Worker"
import * as NodeWorker from "@effect/platform-node/NodeWorker"
import { Duration, Effect, Layer, Scope } from "effect"
import * as ChildProcess from "node:child_process"
import { fileURLToPath } from "node:url"
import { PrepareContext } from "./Protocol.js"

/** The most heap one worker may use unless told otherwise (1 GiB): a 25 MiB PDF read by PDF.js stays well under it. */
export const defaultMaxHeapMb = 1024

/**
 * The worker's compiled program: beside this module in `dist`; when this module runs from its TypeScript source
 * (the tests run the sources), the one the build put in `dist` (a worker runs plain Node, JavaScript only). A worker
 * gets none of the server's Node options (`execArgv` is set), so under the test runner it resolves the packages to
 * their compiled code too.
 */
const fromSource = import.meta.url.endsWith(".ts")
const entry = fromSource ? new URL("../../dist/context/Worker.js", import.meta.url) : new URL("./Worker.js", import.meta.url)

/**
 * The longest an upload's preparation may take, waiting for a worker included (2 minutes; 5 MiB of text dense with
 * personal data takes about 4 s): past it the upload fails (500) rather than holding its request for ever, say
 * when no worker can start.
 */
export const preparationTimeout = Duration.minutes(2)

/** How long a worker without work lives on. */
export const idleLifetime = Duration.hours(1)

/** ContextPreparation on up to `size` worker processes (at least 1), each with at most `maxHeapMb` of heap. */
export const layer = (
  { maxHeapMb = defaultMaxHeapMb, size }: { readonly size: number; readonly maxHeapMb?: number }
): Layer.Layer<ContextPreparation> =>
  Layer.scoped(
    ContextPreparation,
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      const spawner = yield* Layer.build(NodeWorker.layer(() =>
        ChildProcess.fork(fileURLToPath(entry), [], {
          execArgv: [`--max-old-space-size=${maxHeapMb}`],
          serialization: "advanced",
          stdio: ["ignore", "inherit", "inherit", "ipc"]
        })
      ))
      // The pool is made by the first upload, not with the server: the platform's pool starts a worker as it is made
      // (to report a worker that cannot start), and a server that never prepares context should start none (a worker
      // costs ~1-2 s of CPU to load and ~60 MB to keep). Workers end after an hour without work.
      const pool = yield* Effect.cached(
        Worker.makePoolSerialized<PrepareContext>({
          minSize: 0,
          maxSize: size,
          concurrency: 1,
          timeToLive: idleLifetime
        }).pipe(Effect.provide(spawner), Scope.extend(scope))
      )
      return ContextPreparation.of({
        prepare: (source) =>
          Effect.flatMap(pool, (workers) => workers.executeEffect(new PrepareContext({ source }))).pipe(
            Effect.timeout(preparationTimeout),
            // A worker that ended (its heap cap reached) or could not start, an answer that does not decode or one
            // that never came is the server's fault.
            Effect.catchTags({ WorkerError: Effect.die, ParseError: Effect.die, TimeoutException: Effect.die }),
            Effect.withSpan("ContextPreparation.prepare", { attributes: { bytes: source.bytes.length } })
          )
      })
    })
  )
