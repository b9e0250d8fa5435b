/**
 * The script of PGlite's worker thread (see `PgliteClient`, `thread: "worker"`): opens PGlite on the data directory
 * the main thread names (and has locked), then answers each request with PGlite's result or error.
 *
 * One message per call, `{ id, op, sql, params?, rowMode?, session? }`, answered by `{ id, ok: true, result }` or
 * `{ id, ok: false, error }`; the first message, id 0, tells whether PGlite opened. Results cross as a structured
 * clone (Date, Uint8Array, bigint, arrays, parsed jsonb stay what they are); an error crosses as its own properties
 * (PostgreSQL's `code`, `constraint`, `detail`…) with its name, message and stack, for the main thread to rebuild.
 *
 * The worker decides the order PGlite's one session runs the statements in, so that the main thread never holds the
 * session across a round trip. A statement without `session` stands alone (autocommit), and those are run one after
 * another in the order they came, as soon as the previous one ends: the main thread may send many at once. A
 * transaction is a numbered `session`: its first statement (BEGIN) makes it the session's holder, and from then on
 * only its own statements run, the others waiting in order, until the main thread sends `release` for it (after its
 * COMMIT or ROLLBACK). The main thread's semaphore did this before, but it kept PGlite idle from each answer until
 * the main thread's event loop got round to reading it and sending the next statement (docs/benchmarks.md).
 *
 * The module does nothing unless it is the entry of a worker started with `workerData.pgliteWorker`.
 */
import { PGlite } from "@electric-sql/pglite"
import { isMainThread, type MessagePort, parentPort, workerData } from "node:worker_threads"

export type Request =
  | {
    readonly id: number
    readonly op: "query"
    readonly sql: string
    readonly params: ReadonlyArray<unknown>
    readonly rowMode?: "array"
    /** The transaction the statement belongs to; none for a statement of its own. */
    readonly session?: number
  }
  | { readonly id: number; readonly op: "exec"; readonly sql: string; readonly session?: number }
  /** The transaction `session` has ended (its COMMIT or ROLLBACK has run): the others' statements may run again. */
  | { readonly id: number; readonly op: "release"; readonly session: number }
  /**
   * Withdraws request `target` if it has not started: it is then answered with a `StatementWithdrawn` error. One that
   * has started is answered when it ends, as any other. Not answered itself.
   */
  | { readonly op: "cancel"; readonly target: number }
  | { readonly id: number; readonly op: "close" }

/** A request the worker queues (a release or a cancel is acted on as it comes). */
type Queued = Exclude<Request, { readonly op: "release" | "cancel" }>

export type Reply =
  | { readonly id: number; readonly ok: true; readonly result?: unknown }
  | { readonly id: number; readonly ok: false; readonly error: SerializedError }

/**
 * An error as it crosses: its own enumerable properties that a structured clone can carry (`fields`), and its name,
 * message and stack.
 */
export interface SerializedError {
  readonly name: string
  readonly message: string
  readonly stack?: string
  readonly fields: Readonly<Record<string, unknown>>
}

/** The id of the worker's first message: PGlite is open, or could not be opened. */
export const READY = 0

/** What the main thread gives the worker. */
export interface WorkerData {
  readonly pgliteWorker: true
  /** An absolute path, locked by the main thread. */
  readonly dataDir: string
  /** How PGlite starts PostgreSQL (its command line). */
  readonly startParams: ReadonlyArray<string>
}

const isWorkerData = (data: unknown): data is WorkerData =>
  typeof data === "object" && data !== null && (data as { pgliteWorker?: unknown }).pgliteWorker === true

const cloneable = (value: unknown): boolean => {
  if (typeof value === "function" || typeof value === "symbol") return false
  if (typeof value !== "object" || value === null) return true
  try {
    structuredClone(value)
    return true
  } catch {
    return false
  }
}

const serializeError = (error: unknown): SerializedError => {
  if (!(error instanceof Error)) return { name: "Error", message: String(error), fields: {} }
  const fields: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(error)) {
    if (cloneable(value)) fields[key] = value
  }
  return { name: error.name, message: error.message, ...(error.stack === undefined ? {} : { stack: error.stack }), fields }
}

/** The statements that end a transaction (not a savepoint's ROLLBACK TO, nor RELEASE). */
const endsTransaction = /^\s*(COMMIT|ROLLBACK|END|ABORT)\s*;?\s*$/i

const serve = async (port: MessagePort, data: WorkerData) => {
  let db: PGlite
  try {
    db = await PGlite.create({ dataDir: data.dataDir, startParams: [...data.startParams] })
  } catch (error) {
    port.postMessage({ id: READY, ok: false, error: serializeError(error) } satisfies Reply)
    return
  }
  const answer = (id: number, run: () => Promise<unknown>) =>
    run().then(
      (result) => port.postMessage({ id, ok: true, result } satisfies Reply),
      (error: unknown) => port.postMessage({ id, ok: false, error: serializeError(error) } satisfies Reply)
    )

  /** The transaction holding the session, if any. */
  let holder: number | undefined
  /** The requests not run yet, in the order they came. */
  const queue: Array<Queued> = []
  let running = false

  const sessionOf = (request: Queued) =>
    request.op === "close" ? undefined : request.session

  /** The next request that may run: the first, or while a transaction holds the session, the first of its own. */
  const next = () => {
    const index = holder === undefined ? (queue.length > 0 ? 0 : -1) : queue.findIndex((r) => sessionOf(r) === holder)
    return index === -1 ? undefined : queue.splice(index, 1)[0]
  }

  const run = (request: Queued): Promise<unknown> => {
    switch (request.op) {
      case "query":
        return answer(request.id, () =>
          db.query(
            request.sql,
            request.params as Array<unknown>,
            request.rowMode === undefined ? undefined : { rowMode: request.rowMode }
          ))
      case "exec":
        return answer(request.id, () => db.exec(request.sql))
      case "close":
        // Answered, the port closes and the thread ends (the main thread terminates it too).
        return answer(request.id, () => db.close()).finally(() => port.close())
    }
  }

  const pump = () => {
    if (running) return
    const request = next()
    if (request === undefined) return
    const session = sessionOf(request)
    if (session !== undefined && holder === undefined) holder = session
    running = true
    void run(request).finally(() => {
      running = false
      // PostgreSQL ends the transaction on COMMIT or ROLLBACK, whatever their outcome: the others' statements need
      // not wait for the release to cross the thread.
      if (session !== undefined && request.op !== "close" && endsTransaction.test(request.sql)) holder = undefined
      pump()
    })
  }

  port.on("message", (request: Request) => {
    // A release comes only once every statement of its transaction has been answered: it runs at once.
    if (request.op === "release") {
      if (holder === request.session) holder = undefined
      port.postMessage({ id: request.id, ok: true } satisfies Reply)
    } else if (request.op === "cancel") {
      const index = queue.findIndex((queued) => queued.id === request.target)
      if (index !== -1) {
        queue.splice(index, 1)
        const error = { name: "StatementWithdrawn", message: "the statement was withdrawn before it ran", fields: {} }
        port.postMessage({ id: request.target, ok: false, error } satisfies Reply)
      }
    } else {
      queue.push(request)
    }
    pump()
  })
  port.postMessage({ id: READY, ok: true } satisfies Reply)
}

if (!isMainThread && parentPort !== null && isWorkerData(workerData)) void serve(parentPort, workerData)
